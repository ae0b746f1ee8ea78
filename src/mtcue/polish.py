"""Which EAMT22 attribute values a Polish sentence shows, from its morphology (Morfeusz 2, offline).

The EAMT22 detector of Vincent et al. (2022b; st-vincent1/eamt22_evaluation, `eamt22_evaluate.py`) is
rule-based over spaCy's Polish morphology, whose model downloads from a hub; Morfeusz 2 (PyPI
`morfeusz2`, with the SGJP dictionary inside the wheel) gives the same grammatical features offline, but
without disambiguation: every reading of a word is returned. A word therefore shows a value only when
all its readings agree (e.g. "ci" is a pronoun, a particle or a determiner: no signal), except for the
formal plural "państwo" (also "the state").

Rules (all on the sentence's own words, and the English source where given; nothing is inferred from
other sentences):
- speaker gender: a first person singular past or conditional form (chciałam / chciałem, zrobiłabym),
  or "jestem" followed by a singular nominative adjective or noun (jestem gotowa / gotowy) or a
  singular instrumental noun not in the official detector's stopword list (jestem lekarzem / lekarką;
  `eamt22_stopwords.txt`, its `data/stopwords.json`);
- addressee, informal: second person forms (verbs in any tense or the imperative, ty/wy, twój/wasz);
  their number gives the addressee's number, a second person singular past form (zrobiłaś / zrobiłeś) or
  "jesteś" + adjective or noun the addressee's gender, a plural past form virile (zrobiliście: masculine,
  as EAMT22 calls a group with at least one man) or not (zrobiłyście: feminine);
- addressee, formal: pan (masculine), pani (feminine), panowie (plural, masculine), państwo (plural,
  mixed: EAMT22's only "mixed"), panie (plural, feminine) in any case, and "pański" (your, to a man);
  pan/pani are not address when the English source names a title (sir, Mr, lady, ...), as officially;
  "proszę" (please) is formal when the English source has no "please"/"ask" (or no source is given),
  but weaker than any informal form.
Each attribute gets at most one value, by the official detector's precedence: the first formal
address decides formality, number and gender at once and no informal form is read after it (a line
with both registers is formal); otherwise the last informal form (or, with none, "proszę") decides;
the speaker's gender is its last form's.
Not covered: gender shown only by a third-person form without pan/pani, subject-less adjectives, the
floating person clitic away from its verb ("Coś zrobił?"), and pan/pani that refer to a third person
("ta pani") are read as address, as in the EAMT22 detector.
"""
from __future__ import annotations

import re
from collections import defaultdict
from functools import lru_cache
from importlib import resources

FEMININE, MASCULINE, MIXED = "feminine", "masculine", "mixed"
SINGULAR, PLURAL = "singular", "plural"
FORMAL, INFORMAL = "formal", "informal"
_MASCULINE_GENDERS = {"m1", "m2", "m3"}
# Formal address nouns: lemma -> the addressee's gender when plural (singular: the noun's own gender).
_ADDRESS = {"pan": MASCULINE, "pani": FEMININE, "państwo:sm1_pt": MIXED}
_COMPLEMENTISERS = {"żeby", "aby", "gdyby", "jakby", "by"}
# The official detector's English checks (eamt22_evaluate.py: check_if_formal, no_title).
_PLEASE = re.compile(r"please|ask")
_TITLE = re.compile(r"lad(ies|y)|gentlem[ea]n|(^| )(sir|mr[ .]|mrs[ .]|ms[ .]|herr)|"
                    r"lord|master|messieurs|dames|monsieur|madam[e ]|ma'am")


@lru_cache(maxsize=1)
def stopwords() -> frozenset[str]:
    """Lemmas of nouns that show no gender of the speaker or addressee after jestem / jesteś (the official
    detector's list, MIT licence, st-vincent1/eamt22_evaluation@7147b40 data/stopwords.json)."""
    return frozenset(resources.files("mtcue").joinpath("eamt22_stopwords.txt").read_text("utf-8").split())


@lru_cache(maxsize=1)
def _analyser():
    try:
        import morfeusz2
    except ImportError:
        raise RuntimeError("the Polish attribute detector needs Morfeusz 2: pip install morfeusz2==1.99.15 "
                           "(envs/requirements.lock; the wheel bundles the SGJP dictionary and works offline)") from None
    return morfeusz2.Morfeusz()


def _gender(field: str) -> str | None:
    genders = set(field.split("."))
    if genders == {"f"}:
        return FEMININE
    if genders <= _MASCULINE_GENDERS:
        return MASCULINE
    return None


def _agreed(values: list) -> object | None:
    """The value every reading gives, else None."""
    return values[0] if values and all(v == values[0] for v in values) and values[0] is not None else None


def _predicate_gender(readings: list[tuple[str, str]]) -> str | None:
    """The gender of a singular nominative adjective or noun, or of a singular instrumental noun outside
    the stopword list (after jestem / jesteś)."""
    genders = []
    for lemma, tag in readings:
        parts = tag.split(":")
        if parts[0] in ("adj", "subst", "ppas", "winien") and "sg" in parts:
            if parts[0] in ("adj", "subst", "ppas"):
                cases = parts[2].split(".")
                instrumental = parts[0] == "subst" and "inst" in cases and lemma.split(":")[0] not in stopwords()
                if "nom" not in cases and not instrumental:
                    continue
            genders.append(_gender(parts[3] if parts[0] != "winien" else parts[2]))
    return _agreed(genders)


def detect(sentence: str, english: str | None = None) -> dict[str, set[str]]:
    """{attribute: {the value the sentence shows}} for speaker_gender, addressee_gender, addressee_number
    and formality (an attribute is absent when nothing shows it), by the official precedence (see the
    module's documentation); `english`: the source sentence, for the official English checks."""
    english = (english or "").lower()
    titled = bool(_TITLE.search(english))
    speaker: list[str] = []
    formal: list[tuple[str, str | None]] = []  # (number, gender) of each formal address, in order
    informal: list[tuple[str | None, str | None]] = []  # (number, gender) of each informal form, in order
    # "proszę" as a word (the official check reads the token, not its lemma)
    please = bool(re.search(r"(?<!\w)proszę(?!\w)", sentence.lower())) and not _PLEASE.search(english)
    spans: dict[tuple[int, int], list[tuple[str, str]]] = defaultdict(list)
    for start, end, (_orth, lemma, tag, _names, _qualifiers) in _analyser().analyse(sentence):
        spans[start, end].append((lemma.lower(), tag))
    ending_at: dict[int, list[tuple[int, list]]] = defaultdict(list)
    for (start, end), readings in spans.items():
        ending_at[end].append((start, readings))

    def addressee(number: str | None, gender: str | None, formality: str) -> None:
        (formal if formality == FORMAL else informal).append((number, gender))

    def past_before(position: int, hops: int = 1) -> str | None:
        """The gender field of the past form that ends at `position` (through a conditional "by"), or
        "" for a complementiser (żeby), None for anything else."""
        for start, readings in ending_at[position]:
            tags = [t.split(":") for _l, t in readings]
            if all(t[0] == "praet" for t in tags):
                return _agreed([t[2] for t in tags])
            if hops and any(lemma.startswith("by") and t.startswith("part") for lemma, t in readings):
                return past_before(start, hops - 1)
            if any(lemma.split(":")[0] in _COMPLEMENTISERS for lemma, _t in readings):
                return ""
        return None

    for (start, end), readings in sorted(spans.items()):
        tags = [t.split(":") for _l, t in readings]
        lemmas = [lemma for lemma, _t in readings]
        kind = _agreed([t[0] for t in tags])
        if kind == "aglt":  # the person clitic of a past or conditional form: chciała|m, zrobił|by|ś
            number, person = tags[0][1], tags[0][2]
            gender_field = past_before(start)
            if gender_field is None:
                continue  # a floating clitic (Coś zrobił?): too ambiguous to read
            if person == "pri" and number == "sg" and gender_field and _gender(gender_field):
                speaker.append(_gender(gender_field))
            elif person == "sec":
                gender = (_gender(gender_field) if number == "sg" else
                          (MASCULINE if gender_field == "m1" else FEMININE if gender_field else None))
                addressee(SINGULAR if number == "sg" else PLURAL, gender or None, INFORMAL)
        elif kind in ("fin", "impt", "ppron12") and _agreed([t[2 if kind != "ppron12" else 4] for t in tags]) == "sec":
            addressee(SINGULAR if _agreed([t[1] for t in tags]) == "sg" else PLURAL, None, INFORMAL)
        elif _agreed([lemma.split(":")[0] for lemma in lemmas]) in ("twój", "wasz"):
            addressee(SINGULAR if lemmas[0].startswith("twój") else PLURAL, None, INFORMAL)
        elif "pański" in {lemma.split(":")[0] for lemma in lemmas}:  # also a rare noun "pańskie": ignored
            addressee(SINGULAR, MASCULINE, FORMAL)
        elif "państwo:sm1_pt" in lemmas or (_agreed(lemmas) in ("pan", "pani") and not titled):
            lemma = "państwo:sm1_pt" if "państwo:sm1_pt" in lemmas else lemmas[0]
            number = _agreed([t[1] for t, lem in zip(tags, lemmas) if lem == lemma])
            if number == "sg" and lemma != "państwo:sm1_pt":
                addressee(SINGULAR, FEMININE if lemma == "pani" else MASCULINE, FORMAL)
            elif number == "pl" or lemma == "państwo:sm1_pt":
                addressee(PLURAL, _ADDRESS[lemma], FORMAL)
        # jestem / jesteś + a predicate adjective or noun: the speaker's or the addressee's gender
        if kind == "fin" and _agreed(lemmas) == "być" and _agreed([t[1] for t in tags]) == "sg":
            person = _agreed([t[2] for t in tags])
            if person in ("pri", "sec"):
                following = [r for (s, _e), r in spans.items() if s == end]
                gender = _agreed([_predicate_gender(r) for r in following]) if following else None
                if gender and person == "pri":
                    speaker.append(gender)
                elif gender:
                    addressee(None, gender, INFORMAL)
    found: dict[str, set[str]] = {}
    if speaker:
        found["speaker_gender"] = {speaker[-1]}
    if formal:
        number, gender = formal[0]
        found.update(formality={FORMAL}, addressee_number={number})
        if gender:
            found["addressee_gender"] = {gender}
    elif informal:
        found["formality"] = {INFORMAL}
        numbers, genders = [n for n, _g in informal if n], [g for _n, g in informal if g]
        found.update(**({"addressee_number": {numbers[-1]}} if numbers else {}),
                     **({"addressee_gender": {genders[-1]}} if genders else {}))
    elif please:
        found["formality"] = {FORMAL}
    return found
