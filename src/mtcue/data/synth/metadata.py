"""Film metadata as the context encoder reads it, with the paper's share of missing fields.

Genre and plot lean towards the scene's register (court dramas and royal biographies are
formal, teen comedies and stoner road trips are not), each agreeing with it only most of the
time; the PG rating leans weakly; writers, year and country carry no signal. No field mentions
a zero-shot prompt of the paper (`reserved`): such a genre list is drawn again. Which fields
are present follows MTCue's Table 1 per language pair: a film is either found in OMDb (all
its fields likely present) or not (all missing), as the table's near-equal shares show.
"""
from __future__ import annotations

import csv
import io
import random
from functools import lru_cache
from importlib import resources

from mtcue.data.synth.english import FIRST_NAMES, SURNAMES
from mtcue.data.synth.reserved import mentions_reserved
from mtcue.data.synth.situation import FEMININE, FORMAL, INFORMAL, MASCULINE, lean

FIELDS = ("genre", "pg_rating", "writers", "year", "country", "plot")
GENRE_AGREES = 0.85   # P(genre leans towards the scene's register)
PLOT_AGREES = 0.85
RATING_AGREES = 0.65

LEANING_GENRES = {FORMAL: ("History", "Biography", "War", "Crime", "Drama"),
                  INFORMAL: ("Comedy", "Animation", "Adventure", "Music", "Sport", "Family")}
OTHER_GENRES = ("Romance", "Thriller", "Mystery", "Drama", "Action", "Fantasy", "Comedy")
RATINGS = {FORMAL: ("PG", "PG-13", "TV-PG", "TV-14", "G", "Approved"),
           INFORMAL: ("R", "TV-MA", "PG-13", "R", "NC-17", "TV-14")}
COUNTRIES = (("United States", 8), ("United Kingdom", 4), ("Canada", 2), ("Germany", 1),
             ("France", 1), ("Poland", 1), ("Australia", 1), ("Ireland", 1))

# Plot = protagonist + event + setting. Protagonists: (text, plural?); events: (sg, pl).
PLOT_PROTAGONISTS = {
    FORMAL: (("A young clerk", False), ("A retired judge", False), ("An ambitious barrister", False),
             ("A widowed duchess", False), ("A loyal butler", False), ("A Victorian governess", False),
             ("A junior diplomat", False), ("A respected surgeon", False), ("An elderly count", False),
             ("A royal adviser", False), ("A newly appointed ambassador", False),
             ("Two rival lawyers", True), ("The heirs of a banking dynasty", True)),
    INFORMAL: (("Two slackers", True), ("A group of high school friends", True),
               ("A clumsy pizza delivery guy", False), ("A stoner and his best friend", True),
               ("Three college roommates", True), ("A teenage skater", False),
               ("A washed-up rock band", False), ("Two best buddies", True),
               ("A party-loving surfer", False), ("A bunch of summer camp kids", True)),
}
PLOT_EVENTS = {
    FORMAL: (("uncovers a conspiracy", "uncover a conspiracy"),
             ("is drawn into a scandal", "are drawn into a scandal"),
             ("must defend an unpopular client", "must defend an unpopular client"),
             ("struggles to keep a family secret", "struggle to keep a family secret"),
             ("faces a difficult choice", "face a difficult choice"),
             ("investigates a poisoning", "investigate a poisoning"),
             ("negotiates a fragile peace", "negotiate a fragile peace"),
             ("tries to save the family estate", "try to save the family estate")),
    INFORMAL: (("goes on a wild road trip", "go on a wild road trip"),
               ("throws the party of the year", "throw the party of the year"),
               ("tries to get a stolen van back", "try to get a stolen van back"),
               ("gets into big trouble", "get into big trouble"),
               ("plans an epic prank", "plan an epic prank"),
               ("chases a missing dog", "chase a missing dog"),
               ("tries to win a battle of the bands", "try to win a battle of the bands"),
               ("hunts for a lost skateboard", "hunt for a lost skateboard")),
}
PLOT_SETTINGS = {
    FORMAL: ("at the royal court", "in nineteenth-century Vienna",
             "during a sensational murder trial", "in a grand country house",
             "at the embassy in Paris", "during the last days of the empire",
             "in a London courtroom", "at the palace", "in the House of Lords",
             "during the coronation"),
    INFORMAL: ("across the desert", "before graduation", "in a small beach town", "on spring break",
               "over one crazy weekend", "at a music festival", "in the suburbs", "after prom"),
}


@lru_cache(maxsize=None)
def present_shares(pair: str) -> dict[str, float]:
    """Share of samples with each field, from the paper's Table 1 (packaged CSV)."""
    text = (resources.files("mtcue") / "paper_figures" / "mtcue_table1_data.csv").read_text()
    rows = {row["field"]: row for row in csv.DictReader(io.StringIO(text))}
    return {field: float(rows[field][pair].rstrip("%")) / 100 for field in FIELDS}


def _genre(rng: random.Random, register: str) -> str:
    while True:
        genres = {rng.choice(LEANING_GENRES[lean(rng, register, GENRE_AGREES)])}
        for _ in range(rng.randint(0, 2)):
            genres.add(rng.choice(OTHER_GENRES))
        genre = ", ".join(sorted(genres))  # IMDb lists genres alphabetically
        if not mentions_reserved([genre]):
            return genre


def _plot(rng: random.Random, register: str) -> str:
    leaning = lean(rng, register, PLOT_AGREES)
    protagonist, plural = rng.choice(PLOT_PROTAGONISTS[leaning])
    event = rng.choice(PLOT_EVENTS[leaning])[plural]
    return f"{protagonist} {event} {rng.choice(PLOT_SETTINGS[leaning])}."


def _writer(rng: random.Random) -> str:
    return f"{rng.choice(FIRST_NAMES[rng.choice((FEMININE, MASCULINE))])} {rng.choice(SURNAMES)}"


def _country(rng: random.Random) -> str:
    names, weights = zip(*COUNTRIES)
    countries = rng.choices(names, weights)
    if rng.random() < 0.2:
        countries += [c for c in rng.choices(names, weights) if c not in countries]
    return ", ".join(countries)


def sample_metadata(rng: random.Random, pair: str, register: str) -> dict[str, str | None]:
    """The six fields for one document, each a string (prefixed where the paper prefixes) or None."""
    shares = present_shares(pair)
    found = max(shares.values())  # share of films found in OMDb at all
    values = {
        "genre": _genre(rng, register),
        "pg_rating": f"PG rating: {rng.choice(RATINGS[lean(rng, register, RATING_AGREES)])}",
        "writers": "Written by: " + ", ".join(_writer(rng) for _ in range(rng.choice((1, 1, 2)))),
        "year": f"Released in {rng.randint(1955, 2018)}",
        "country": _country(rng),
        "plot": _plot(rng, register),
    }
    if rng.random() >= found:
        return {field: None for field in FIELDS}
    return {field: values[field] if rng.random() < shares[field] / found else None
            for field in FIELDS}
