"""Figures read back: every plotted point and bar comes from its record (or the paper's table)."""
import xml.etree.ElementTree as ET

import pytest

from mtcue.cli import main
from mtcue.plots import save_svg
from mtcue.records import write_record
from mtcue.reporting.figures import FIGURES, bleu_gain, phenomena_accuracy, training_curves
from svg_canvas import labels_off_canvas
from test_tables import BAD, GOOD, NEAR, rec, train_rec


def with_losses(record, train, valid, best_epoch):
    epochs = [{"epoch": i + 1, "train_loss": t, "valid_loss": v, "wall_s": 1.0} for i, (t, v) in enumerate(zip(train, valid))]
    return {**record, "epochs": epochs, "best_epoch": best_epoch, "best_valid_loss": valid[best_epoch - 1]}


TRAIN = [
    with_losses(train_rec("base", "en-de", 1, [], 0), [9.0, 7.0, 6.5], [8.0, 6.0, 6.2], 2),
    with_losses(train_rec("mtcue", "en-de", 1, [], 0, init_from="base"), [5.5, 5.0], [5.8, 5.6], 2),
    with_losses(train_rec("base", "de-en", 1, [], 0), [8.0], [7.0], 1),
]


def lines(ax) -> dict[str, tuple[list, list]]:
    return {line.get_label(): (list(line.get_xdata()), list(line.get_ydata())) for line in ax.lines}


def bars(ax) -> dict[str, list[float]]:
    return {c.get_label(): [b.get_height() for b in c] for c in ax.containers}


def test_training_curves_one_panel_per_direction_children_continue_from_the_parents_best_epoch():
    fig = training_curves(TRAIN)
    en_de, de_en = [ax for ax in fig.axes if ax.get_visible()]
    assert (en_de.get_title(), de_en.get_title()) == ("en-de", "de-en")  # the paper's order
    curves = lines(en_de)
    assert curves["BASE train"] == ([1, 2, 3], [9.0, 7.0, 6.5])
    assert curves["BASE valid"] == ([1, 2, 3], [8.0, 6.0, 6.2])
    assert curves["BASE best"] == ([2], [6.0])
    # MTCUE starts from BASE's best checkpoint (epoch 2): its epochs 1-2 are epochs 3-4.
    assert curves["MTCUE valid"] == ([3, 4], [5.8, 5.6]) and curves["MTCUE best"] == ([4], [5.6])
    assert set(lines(de_en)) == {"BASE train", "BASE valid", "BASE best"}
    assert [t.get_text() for t in fig.legends[0].get_texts()] == ["BASE", "MTCUE", "train", "valid", "best valid"]


def counts(correct, incorrect):
    return {"correct": correct, "incorrect": incorrect, "ignored": 0,
            "accuracy": correct / (correct + incorrect) if correct + incorrect else None}


SCORES = [
    {**rec("base", "en-de", BAD, 0.5), "phenomena": {"all": counts(5, 5), "formality": counts(5, 5),
                                                      "speaker_gender": counts(0, 0)}},
    {**rec("mtcue", "en-de", GOOD, 0.9), "phenomena": {"all": counts(9, 1), "formality": counts(8, 0),
                                                        "speaker_gender": counts(1, 1)}},
    {**rec("base", "en-pl", BAD, 0.5), "phenomena": {"all": counts(1, 3), "formality": counts(1, 3)}},
    {**rec("mtcue", "en-pl", NEAR, 0.9), "phenomena": {"all": counts(3, 1), "formality": counts(3, 1)}},
    {**rec("base", "de-en", BAD, None), "phenomena": {}},
    {**rec("mtcue", "de-en", GOOD, None), "phenomena": {}},
]


def test_phenomena_accuracy_bars_are_the_records_accuracies():
    fig = phenomena_accuracy(SCORES)
    panels = {ax.get_title(): ax for ax in fig.axes if ax.get_visible()}
    assert list(panels) == ["all phenomena, pooled", "formality", "speaker gender"]
    pooled = panels["all phenomena, pooled"]
    assert [t.get_text() for t in pooled.get_xticklabels()] == ["en-de", "en-pl"]  # de-en: nothing judged
    assert bars(pooled) == {"BASE": [50.0, 25.0], "MTCUE": [90.0, 75.0]}
    assert bars(panels["formality"]) == {"BASE": [50.0, 25.0], "MTCUE": [100.0, 75.0]}
    speaker = bars(panels["speaker gender"])  # only en-de judged it, and BASE judged nothing: no bar
    assert speaker["MTCUE"] == [50.0] and speaker["BASE"][0] != speaker["BASE"][0]  # NaN


def test_phenomena_accuracy_without_any_labelled_direction_is_an_error():
    with pytest.raises(ValueError, match="judged any phenomenon"):
        phenomena_accuracy(SCORES[-2:])


def test_bleu_gain_this_run_beside_the_paper():
    fig = bleu_gain(SCORES)
    ours, paper = fig.axes
    assert ours.get_ylabel() == paper.get_ylabel() == "BLEU gain over BASE"
    by_cell = {(r["model"], r["direction"]): r["bleu"] for r in SCORES}
    expected = [by_cell[("mtcue", d)] - by_cell[("base", d)] for d in ("en-de", "en-pl", "de-en")]
    assert [t.get_text() for t in ours.get_xticklabels()] == ["en-de", "en-pl", "de-en", "avg"]
    assert bars(ours)["MTCUE"] == pytest.approx([*expected, sum(expected) / 3])
    # The paper's Table 4: MTCUE - BASE = 36.02 - 33.60, 29.36 - 28.08, 40.95 - 39.53.
    assert bars(paper)["MTCUE"] == pytest.approx([2.42, 1.28, 1.42, (2.42 + 1.28 + 1.42) / 3])
    assert paper.get_title() == "MTCue paper, Table 4"


def test_svg_is_written_atomically_and_identically(tmp_path):
    first, second = tmp_path / "a.svg", tmp_path / "b.svg"
    save_svg(training_curves(TRAIN), first)
    save_svg(training_curves(TRAIN), second)
    assert first.read_bytes() == second.read_bytes()
    root = ET.fromstring(first.read_bytes())
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
    assert "en-de" in first.read_text() and "MTCUE" in first.read_text()  # text kept as text
    assert [p.name for p in tmp_path.iterdir()] and not list(tmp_path.glob(".*.tmp"))


def test_cli_draws_every_figure(tmp_path):
    def write_all(records, folder):
        return [str(write_record(tmp_path / folder / f"{i}.json", r)) for i, r in enumerate(records)]

    records = {"train": write_all(TRAIN, "train"), "score": write_all(SCORES, "score")}
    for kind, reads in (("training_curves", "train"), ("phenomena_accuracy", "score"), ("bleu_gain", "score")):
        out = tmp_path / f"{kind}.svg"
        assert main(["figure", "--kind", kind, "--records", *records[reads], "--out", str(out)]) == 0
        assert out.read_text().startswith("<?xml") and labels_off_canvas(out.read_text()) == []
    assert set(FIGURES) == {"training_curves", "phenomena_accuracy", "bleu_gain"}
    # A train record where score records are expected: a clear failure, no figure.
    assert main(["figure", "--kind", "bleu_gain", "--records", *records["train"], "--out", str(tmp_path / "x.svg")]) == 1
    assert not (tmp_path / "x.svg").exists()


def test_every_models_colour_stands_out_on_white():
    """WCAG's contrast ratio against a white page: at least 2:1 for every line and bar colour (Okabe-Ito's
    yellow, MULTI-ENCODER's, was 1.3:1)."""
    from mtcue.plots import MODEL_COLOURS, OTHER_COLOURS

    def luminance(colour):
        channels = [int(colour[i:i + 2], 16) / 255 for i in (1, 3, 5)]
        r, g, b = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
        return 0.2126 * r + 0.7152 * g + 0.0722 * b

    contrast = {c: 1.05 / (luminance(c) + 0.05) for c in (*MODEL_COLOURS.values(), *OTHER_COLOURS)}
    assert min(contrast.values()) >= 2.0, {c: round(r, 2) for c, r in contrast.items() if r < 2.0}
    assert len(set(OTHER_COLOURS)) == len(OTHER_COLOURS) == 10
