"""Sampling of documents (scenes of a film): who talks to whom, in which register, saying what.

A document is a dialogue between two characters who speak in turn; in some documents the
first of them addresses a group (a lecture, a team, friends at a party). The register is a
property of the document (the scene); the metadata a property of the film, shared by its
scenes, as OpenSubtitles' metadata is per film while the register changes from scene to scene
(a court drama has its courtroom and its kitchen). A film leans towards one register and most of
its scenes are in it (SCENE_FOLLOWS_FILM). The main context (metadata, previous lines) reveals
the register and the characters' genders through imperfect channels:
  - metadata: genre and plot lean towards the film's register (metadata.py), so towards the
    scene's only through the film: a weaker channel than the scene's own lines, as in the
    paper's Table 6, where metadata alone gives IWSLT22 68.8 and previous lines alone 89.7;
  - previous lines: polite or slangy wordings; vocatives that name, title or call the
    addressee ("Thanks, Mr Novak.", "Hey, Anna.", "I forgot, buddy."), so that the line
    before names the current speaker and the one before that the addressee; and `self`
    lines in which a speaker says what they are ("I'm not a little girl anymore."), so
    that the line before shows the addressee and the one before that the speaker;
The EAMT22-style attribute sentences (`cues`) are exact, not a channel: the generator knows
every line's situation, so every line is annotated (generator.py).
Lines whose translation shows the register or the addressee (second person, imperatives)
seldom carry a vocative, and `self` lines are never labelled, so a source sentence alone
keeps its own label hidden.
Time gaps cut the previous-line context (as the extraction of real subtitles does); a
scene after a gap often opens with a greeting.
"""
from __future__ import annotations

import random
import re
from dataclasses import dataclass

from mtcue.data.synth.english import (
    FIRST_NAMES,
    FRAMES,
    SLOT_VALUES,
    SURNAMES,
    VERB_OBJECTS,
    Frame,
)
from mtcue.data.synth.metadata import sample_metadata
from mtcue.data.synth.situation import (
    FEMININE,
    FORMAL,
    GROUP,
    INFORMAL,
    MASCULINE,
    Situation,
    lean,
)
from mtcue.study import LINES_PER_DOCUMENT

# A film's scenes: SCENES_PER_FILM consecutive documents of a split (far fewer than a real film's,
# so that the demo's 400 training documents still come from 100 films with their own metadata);
# P(a scene is in the film's register). A stated assumption (no subtitles here to measure it on),
# fixed before any result of it was seen: a film spends about 7 scenes in 10 in its register.
SCENES_PER_FILM = 4
SCENE_FOLLOWS_FILM = 0.7
GROUP_SHARE = 0.15          # documents whose first character addresses a group
STYLE_AGREES = 0.88         # P(a line's English style matches the register)
VOCATIVE_AGREES = 0.9       # P(a vocative's style matches the register)
# P(a line without a vocative slot ends with one: "I was tired, Anna."), by kind; at most
# TAIL_ADDRESSED for lines that speak of the listener (imperatives, "you"), whose
# translation shows the register or the listener's gender, so that their English seldom
# gives that away; high for the others, so that the next lines learn who is who.
TAIL_VOCATIVE = {"address": 0.06, "speaker": 0.6, "neutral": 0.6, "styled": 0.4, "self": 0.25}
TAIL_ADDRESSED = 0.06
# P(time gap before a line) by the length of the current context block: short exchanges
# break off often, long ones go on. Tuned to the paper's Table 1, where previous lines
# n-1 .. n-5 exist for about 62, 44, 34, 26 and 20% of the samples.
GAP_AFTER = {1: 0.5, 2: 0.35}
GAP_LATER = 0.1

# Kinds of line (english.py) at the start of a block, in reply to it, and further on: an
# exchange often opens with greetings that name both characters. `others` lines (an object with a
# third person: two-noun antecedents for Voita et al.'s Table 7) took most of `neutral`'s weight,
# which, like them, shows little, so the labelled shares barely moved.
OPENING_KINDS = {"greeting": 0.35, "styled": 0.12, "address": 0.33, "speaker": 0.12, "neutral": 0.02,
                 "others": 0.03, "self": 0.06}
REPLY_KINDS = {"greeting": 0.3, "styled": 0.12, "address": 0.33, "speaker": 0.17, "neutral": 0.01,
               "others": 0.03, "self": 0.1}
ONGOING_KINDS = {"address": 0.45, "speaker": 0.2, "neutral": 0.01, "others": 0.03, "greeting": 0.12,
                 "styled": 0.17, "self": 0.09}
GROUP_KIND_WEIGHT = 0.15    # added for lines said to a group
# Anaphoric pronouns: a line may say "it" for the object (slot `obj`) of a line 1 to ANAPHOR_REACH
# lines back in its block, when no other object was named since: the pronoun's gender in the
# target is then decided by that line only. The weight is added to the line's kinds when so.
ANAPHOR_REACH = 3
ANAPHOR_WEIGHT = 0.8


def _speaks_of_the_listener(frame: Frame) -> bool:
    """Second-person English ("you", "your", "yourself") or an address line (imperatives)."""
    return frame.kind == "address" or any(
        re.search(r"\b[Yy]ou|\{yourself\}", pattern) for pattern, _ in frame.english)


ADDRESSED = frozenset(f for f, frame in FRAMES.items() if _speaks_of_the_listener(frame))


def _wordings_by_kind_and_style() -> dict[tuple[str, str], list[tuple[str, str]]]:
    """(kind, style) -> [(frame id, English pattern)] of wordings with that style or none."""
    table: dict[tuple[str, str], list[tuple[str, str]]] = {}
    for style in (FORMAL, INFORMAL):
        for frame_id, frame in FRAMES.items():
            for pattern, wording_style in frame.english:
                if wording_style in (None, style):
                    table.setdefault((frame.kind, style), []).append((frame_id, pattern))
    return table


WORDINGS = _wordings_by_kind_and_style()


@dataclass(frozen=True)
class Character:
    gender: str
    first_name: str
    surname: str
    title: str  # vocative key prefix: "mr", "mrs" or "ms"


@dataclass(frozen=True)
class Line:
    frame: str
    english: str                # the English pattern of the chosen wording
    slots: dict[str, str]
    situation: Situation
    starts_block: bool          # no previous-line context reaches across this line
    antecedent: int | None = None  # anaphor lines: the index of the line naming the object


@dataclass(frozen=True)
class Film:
    register: str               # the register most of its scenes are in
    meta: dict[str, str | None]


@dataclass(frozen=True)
class Document:
    register: str
    meta: dict[str, str | None]
    lines: tuple[Line, ...]


def _character(rng: random.Random) -> Character:
    gender = rng.choice((FEMININE, MASCULINE))
    title = "mr" if gender == MASCULINE else rng.choice(("mrs", "ms"))
    return Character(gender, rng.choice(FIRST_NAMES[gender]), rng.choice(SURNAMES), title)


def vocative_key(rng: random.Random, style: str, addressee: Character | None) -> str:
    """How a speaker in `style` calls the addressee (None: a group)."""
    if addressee is None:
        return "ladies" if style == FORMAL else "guys"
    if style == FORMAL:
        word = "sir" if addressee.gender == MASCULINE else "madam"
        kind = rng.choice((addressee.title, addressee.title, word))
    elif addressee.gender == MASCULINE:
        kind = rng.choice(("name", "man", "dude", "buddy"))
    else:
        kind = rng.choice(("name", "girl", "lady"))
    if kind == "name":
        return f"name:{addressee.first_name}"
    return f"{kind}:{addressee.surname}" if kind in ("mr", "mrs", "ms") else kind


def _slots(rng: random.Random, frame_id: str, register: str, situation: Situation,
           addressee: Character | None) -> dict:
    frame = FRAMES[frame_id]
    slots: dict[str, str] = {}
    for kind in frame.slots:
        if kind == "self":
            slots[kind] = situation.speaker
        elif kind == "voc":
            slots[kind] = vocative_key(rng, lean(rng, register, VOCATIVE_AGREES), addressee)
        elif kind == "obj" and "verb" in slots:
            slots[kind] = rng.choice(VERB_OBJECTS.get(slots["verb"], SLOT_VALUES["obj"]))
        else:
            slots[kind] = rng.choice(SLOT_VALUES[kind])
    tail = TAIL_VOCATIVE.get(frame.kind, 0)
    if frame_id in ADDRESSED:
        tail = min(tail, TAIL_ADDRESSED)
    if rng.random() < tail:
        slots["tail"] = vocative_key(rng, lean(rng, register, VOCATIVE_AGREES), addressee)
    return slots


def _line(rng: random.Random, register: str, situation: Situation,
          addressee: Character | None, block: int, mention: tuple[int, str] | None = None) -> Line:
    """The `block`-th line (from 1) of a context block; `mention`: (line index, object) that an
    anaphor line may refer to."""
    weights = dict({1: OPENING_KINDS, 2: REPLY_KINDS}.get(block, ONGOING_KINDS))
    if situation.plural:
        weights["group"] = GROUP_KIND_WEIGHT
    if mention is not None:
        weights["anaphor"] = ANAPHOR_WEIGHT
    kind = rng.choices(list(weights), list(weights.values()))[0]
    if kind == "anaphor":
        frame_id, pattern = rng.choice(WORDINGS[kind, register])
        slots = {"verb": "find", "obj": mention[1]} if "verb" in FRAMES[frame_id].slots else {"obj": mention[1]}
        return Line(frame_id, pattern, slots, situation, False, mention[0])
    # The wording's style is drawn first, then a wording that has it or no style at all,
    # so that frames with only polite (or only slangy) English keep their signal.
    style = lean(rng, register, STYLE_AGREES)
    frame_id, pattern = rng.choice(WORDINGS[kind, style])
    slots = _slots(rng, frame_id, register, situation, addressee)
    return Line(frame_id, pattern, slots, situation, block == 1)


def sample_film(rng: random.Random, pair: str) -> Film:
    register = rng.choice((FORMAL, INFORMAL))
    return Film(register, sample_metadata(rng, pair, register))


def sample_document(rng: random.Random, film: Film) -> Document:
    """One scene of `film`: its register drawn from the film's, its metadata the film's."""
    register = lean(rng, film.register, SCENE_FOLLOWS_FILM)
    first, second = _character(rng), _character(rng)
    to_group = rng.random() < GROUP_SHARE
    lines: list[Line] = []
    block = 0
    mention: tuple[int, str] | None = None  # the last object named: (line index, slot value)
    for i in range(rng.randint(*LINES_PER_DOCUMENT)):
        speaker, other = (first, second) if i % 2 == 0 else (second, first)
        addressee = None if to_group and speaker is first else other
        situation = Situation(register, speaker.gender,
                              GROUP if addressee is None else addressee.gender)
        opening = i == 0 or rng.random() < GAP_AFTER.get(block, GAP_LATER)
        block = 1 if opening else block + 1
        # within the block (so in the line's context) and within reach
        reachable = mention is not None and i - mention[0] <= min(ANAPHOR_REACH, block - 1)
        line = _line(rng, register, situation, addressee, block, mention if reachable else None)
        if line.antecedent is None and "obj" in line.slots:
            mention = (i, line.slots["obj"])
        lines.append(line)
    return Document(register, dict(film.meta), tuple(lines))
