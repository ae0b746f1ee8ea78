"""workflow/scripts/paper_claims.py: per-line phenomenon judgements, the verdict's wording, and a claim measured on a
hand-made pair of systems whose difference and interval are known."""
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "workflow" / "scripts"))
import paper_claims as claims  # noqa: E402

from mtcue.evaluation.score import paired_bootstrap_ci  # noqa: E402

FORMALITY = {"formality": {"gold": "formal", "markers": {"formal": ["Sie"], "informal": ["du"]}}}
GENDER = {"speaker_gender": {"gold": "feminine", "markers": {"feminine": ["gotowa"], "masculine": ["gotowy"]}}}


def test_each_line_counts_its_correct_and_judged_phenomena():
    hyps = ["Haben Sie es?", "Hast du es?", "Hast es?", "Jestem gotowa.", "No labels."]
    labels = [FORMALITY, FORMALITY, FORMALITY, {**GENDER, **FORMALITY}, None]
    assert claims.judged_lines(hyps, labels).tolist() == [[1, 1], [0, 1], [0, 0], [1, 1], [0, 0]]


def test_the_verdict_says_where_the_interval_lies():
    assert claims.verdict(-3.0, -0.1, 12.08) == "reversed"
    assert claims.verdict(-1.2, 5.6, 12.08) == "not reproduced"
    assert claims.verdict(0.5, 4.0, 12.08) == "smaller"
    assert claims.verdict(0.5, 14.0, 12.08) == "reproduced"
    assert claims.verdict(0.5, 4.0, None) == "reproduced"  # the paper gives a direction only


def test_a_pooled_accuracy_difference_by_hand():
    """MTCUE right on 6 of 8 judged lines, BASE on 2 of 8 (the same 8 lines judged): +50 points, and every
    resample keeps MTCUE ahead or level, so the interval's low end is at least 0."""
    mtcue = np.array([[1, 1]] * 6 + [[0, 1]] * 2 + [[0, 0]] * 2, dtype=float)
    base = np.array([[1, 1]] * 2 + [[0, 1]] * 6 + [[0, 0]] * 2, dtype=float)
    ci = paired_bootstrap_ci(mtcue, base, corpus_score=claims.share, n=200, seed=1)
    claim = claims._claim("phenomena", "en-de", ci, None, 100)
    assert claim["difference"] == 50.0 and claim["low"] >= 0 and claim["high"] <= 100
    assert claims.share(np.array([0.0, 0.0])) != claims.share(np.array([0.0, 0.0]))  # nothing judged: NaN
