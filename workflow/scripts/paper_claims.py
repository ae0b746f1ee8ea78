"""The paper's claims that the rendered results give no verdict of their own (docs/study.md, "The paper's claims on
the demo"; issue 54), each measured with a paired-bootstrap interval over the test lines of a finished demo:

- Table 4: MTCUE against NOVOTNEY-CUE, BLEU, per direction from English (the paper: MTCUE +0.46 on average);
- the phenomena: MTCUE against BASE, pooled accuracy on the context-determined lines, per direction from English;
- Figure 4, zero-shot: MTCUE given the attribute sentences against BASE (the paper: +12.08 mean attribute accuracy).

Table 6's and Figure 4's few-shot claims have their verdicts in the rendered results (docs/results.md). A verdict here:
"reversed" where the interval lies below 0, "not reproduced" where it holds 0, "smaller" where it lies above 0 but
below the paper's figure, else "reproduced". Reads records, the hypotheses and the cleaned corpora only:

    PYTHONPATH=src python workflow/scripts/paper_claims.py --results results --out claims.json
"""
from __future__ import annotations

import argparse
import json
import math
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from mtcue.corpus import marker_tokens, read_corpus
from mtcue.evaluation.score import judge_markers, paired_bootstrap_ci
from mtcue.records import read_record
from mtcue.experiments.fewshot.figure import difference_ci
from mtcue.reporting.kit import BOOTSTRAP

# The paper's figures for its claims (None: the paper gives a direction, not a figure).
PAPER = {"table4": 0.46, "phenomena": None, "zero_shot": 12.08}


def judged_lines(hyps: Sequence[str], labels: Sequence[dict | None]) -> np.ndarray:
    """[lines, 2]: per test line, its correct and its judged phenomena (marker rule of docs/formats.md, section 1)."""
    out = np.zeros((len(hyps), 2))
    for i, (hyp, line_labels) in enumerate(zip(hyps, labels)):
        tokens = marker_tokens(hyp)
        for label in (line_labels or {}).values():
            judged = judge_markers(tokens, label["gold"], label["markers"])
            out[i] += (judged == "correct", judged != "ignored")
    return out


def share(stats: np.ndarray) -> float:
    return stats[0] / stats[1] if stats[1] else math.nan


def verdict(low: float, high: float, paper: float | None) -> str:
    if high < 0:
        return "reversed"
    if low <= 0:
        return "not reproduced"
    return "smaller" if paper is not None and high < paper else "reproduced"


def _claim(name: str, direction: str, ci: dict, paper: float | None, scale: float = 1.0) -> dict:
    low, high = scale * ci["low"], scale * ci["high"]
    return {"claim": name, "direction": direction, "difference": round(scale * ci["difference"], 2),
            "low": round(low, 2), "high": round(high, 2), "paper": paper, "verdict": verdict(low, high, paper)}


def record(results: Path, kind: str, direction: str, model: str, split: str = "test") -> dict:
    return read_record(results / "records" / kind / direction / f"{model}.{split}.json", kind)


def table4_claims(results: Path, directions: Sequence[str]) -> list[dict]:
    out = []
    for d in directions:
        a, b = (np.asarray(record(results, "score", d, m)["segment_stats"], dtype=float) for m in ("mtcue", "novotney_cue"))
        out.append(_claim("Table 4: MTCUE - NOVOTNEY-CUE, BLEU", d, paired_bootstrap_ci(
            a, b, n=BOOTSTRAP.n, seed=BOOTSTRAP.seed, alpha=BOOTSTRAP.alpha), PAPER["table4"]))
    return out


def phenomena_claims(results: Path, directions: Sequence[str]) -> list[dict]:
    out = []
    for d in directions:
        tgt = d.split("-")[1]
        labels = [(s.get("labels") or {}).get(tgt) for s in read_corpus(results / "clean" / d / "test.jsonl")]
        stats = [judged_lines((results / "hyps" / d / f"{m}.test.txt").read_text(encoding="utf-8").splitlines(), labels)
                 for m in ("mtcue", "base")]
        ci = paired_bootstrap_ci(*stats, corpus_score=share, n=BOOTSTRAP.n, seed=BOOTSTRAP.seed, alpha=BOOTSTRAP.alpha)
        out.append(_claim("phenomena: MTCUE - BASE, pooled accuracy (points)", d, ci, PAPER["phenomena"], 100))
    return out


def zero_shot_claims(results: Path, directions: Sequence[str]) -> list[dict]:
    out = []
    for d in directions:
        mtcue, base = (record(results, "eamt22", d, m) for m in ("mtcue", "base"))
        ci = difference_ci([mtcue], [base], BOOTSTRAP)
        out.append(_claim("Figure 4, zero-shot: MTCUE - BASE, mean attribute accuracy (points)", d,
                          {"difference": ci["difference"], "low": ci["ci_low"], "high": ci["ci_high"]}, PAPER["zero_shot"]))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--results", type=Path, default=Path("results"), help="a finished demo's results folder")
    parser.add_argument("--out", type=Path, required=True)
    a = parser.parse_args()
    from_english = sorted(p.name for p in (a.results / "records" / "score").glob("en-*")
                          if (p / "mtcue.test.json").is_file())
    with_eamt22 = sorted(p.name for p in (a.results / "records" / "eamt22").glob("*")
                         if (p / "mtcue.test.json").is_file() and (p / "base.test.json").is_file())
    claims = (table4_claims(a.results, from_english) + phenomena_claims(a.results, from_english)
              + zero_shot_claims(a.results, with_eamt22))
    for c in claims:
        print(f"{c['claim']:70s} {c['direction']}  {c['difference']:+.2f} [{c['low']:+.2f}, {c['high']:+.2f}]"
              f"  paper {c['paper']}  {c['verdict']}", flush=True)
    a.out.write_text(json.dumps(claims, indent=1) + "\n")


if __name__ == "__main__":
    main()
