"""The paper's published figures (src/mtcue/paper_figures/, its README says where each comes from) and how
their cells read: the tables set them beside this study's, the cost estimate (context/bench.py) scales by them.
"""
from __future__ import annotations

from importlib import resources

PAPER_FIGURES = resources.files("mtcue") / "paper_figures"
PAPER_DATA_CSV = PAPER_FIGURES / "mtcue_table1_data.csv"


def paper_value(cell: object) -> float:
    """"5.3M" -> 5.3e6 pairs, "45.3%" -> 45.3; missing -> NaN."""
    text = str(cell).strip()
    if not text or text == "nan":
        return float("nan")
    if text.endswith("%"):
        return float(text[:-1])
    return float(text.removesuffix("M")) * (1e6 if text.endswith("M") else 1)
