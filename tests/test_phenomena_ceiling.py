"""workflow/scripts/phenomena_ceiling.py: which channel a classifier reads, and how the previous lines name a
character's gender (vocatives said to them, `self` lines they spoke), by hand-made dialogues."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "workflow" / "scripts"))
import phenomena_ceiling as ceiling  # noqa: E402

from conftest import make_sample  # noqa: E402


def sample(previous, plot=None):
    return make_sample(0, en="Did you see it?", previous_en=previous, meta={"plot": plot})


def test_each_channel_reads_its_own_column_only():
    s = sample(["Good evening, Mr Novak."], plot="A retired judge")
    assert ceiling.features(s, ("source",)) == ["s:did", "s:you", "s:see", "s:it"]
    assert ceiling.features(s, ("previous",)) == ["p1:good", "p1:evening", "p1:mr", "p1:novak"]
    assert ceiling.features(s, ("metadata",)) == ["m:a", "m:retired", "m:judge"]


def test_a_self_line_names_the_one_who_said_it_a_vocative_the_one_it_was_said_to():
    """Turns alternate: one line back the addressee spoke (to the speaker), two back the speaker (to the
    addressee). "I'm a grown woman." one back: the addressee is a woman; "Thanks, Mrs Smith." one back: the
    speaker is."""
    assert ceiling.named_gender("I'm a grown woman.", 1, "addressee_gender") == "feminine"
    assert ceiling.named_gender("I'm a grown woman.", 1, "speaker_gender") is None
    assert ceiling.named_gender("I'm a grown woman.", 2, "speaker_gender") == "feminine"
    assert ceiling.named_gender("Thanks, Mrs Smith.", 1, "speaker_gender") == "feminine"
    assert ceiling.named_gender("Thanks, Mrs Smith.", 1, "addressee_gender") is None
    assert ceiling.named_gender("Hey, buddy.", 2, "addressee_gender") == "masculine"
    # the nearest line that names the character decides
    test = [(sample(["It's late.", "I'm a lucky man.", "Thanks, Mrs Smith."]), "masculine"),
            (sample(["It's late."]), "feminine")]
    assert ceiling.named_rule(test, "speaker_gender") == (0.5, 1.0)
