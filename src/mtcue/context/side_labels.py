"""Hoang et al.'s side information as discrete labels (docs/formats.md, section 2): a bag of labels per
sample from the metadata the study already has, each label one column of a tag store (`mtcue tags
--columns` with these column names), so the vocabulary is built from the training split exactly as
TAGGING's (context/tags.py).

The labels: each genre of the comma-separated genre list (up to MAX_GENRES; Hoang et al.'s TED keywords are
such a bag too), the PG rating, the country, and the release year's decade (a year alone is too sparse
to be a topic; the decade is the coarsest bucket that still says something about the film's era).
"""
from __future__ import annotations

import re

from mtcue.study import GENRE_COLUMNS, SIDE_COLUMNS
_YEAR = re.compile(r"\b(1[89]\d\d|20\d\d)\b")


def is_side_column(column: str) -> bool:
    return column in SIDE_COLUMNS


def side_label(meta: dict, column: str) -> str | None:
    """The label of a sample's metadata in side-information `column`; None where the metadata has none.
    Labels carry their field's name, so the same word in two fields gives two labels."""
    if column in GENRE_COLUMNS:
        genres = [g.strip() for g in (meta.get("genre") or "").split(",") if g.strip()]
        slot = GENRE_COLUMNS.index(column)
        return f"genre: {genres[slot]}" if slot < len(genres) else None
    if column == "si_pg_rating":
        rating = meta.get("pg_rating")
        return rating if not rating or rating.startswith("PG rating") else f"PG rating: {rating}"
    if column == "si_country":
        return f"country: {meta['country']}" if meta.get("country") else None
    if column == "si_decade":
        year = _YEAR.search(meta.get("year") or "")
        return f"decade: {year.group(1)[:3]}0s" if year else None
    raise ValueError(f"unknown side-information column {column!r} (known: {', '.join(SIDE_COLUMNS)})")
