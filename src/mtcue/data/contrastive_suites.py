"""The real contrastive suites in the suite format (docs/formats.md, section 8).

- ContraPro (EN-DE) and Lopes et al. (EN-FR): from their converted evaluation sets (section 6: the
  reference, its `contrastive` variants, the previous lines); the reference is candidate 0. The groups
  are from each set's own annotation, as its scorer (ContraPro's evaluate.py, which Lopes et al. reuse)
  reports them: the pronoun pair "src:ref" (`category`), the reference pronoun and the antecedent
  distance 0, 1, 2, 3, >3. Each line records its scorer's rule: `strict` (a tie wrong).
- Voita et al. 2019 (EN-RU; deixis, lexical cohesion, ellipsis inflection, VP ellipsis): the official
  JSON lists (`src`, `dst`: candidates, `true_ind`, `ctx_dist`), each side four Moses-tokenised
  sentences joined by " _eos " (three of context, then the current one). Only the current sentence of a
  candidate differs, so it is the candidate. Each line records its scorer's rule (evaluate_consistency.py's
  argmin): `first_among_tied`.

Official sets are scored as published: their text is only Unicode-normalised (NFC), never passed through
the training data's cleaner (`mtcue.data.clean`), which blanks a line with a music sign, drops bracketed
text and speaker names and so would empty sources or cut the context a model reads (docs/data.md).
"""
from __future__ import annotations

import re
import unicodedata
from pathlib import Path

from mtcue.corpus import META_FIELDS, read_corpus
from mtcue.io import read_json, write_jsonl
from mtcue.study import langs_of
from mtcue.suites import FIRST_AMONG_TIED, STRICT, contrapro_distance

VOITA2019_SETS = {"deixis": "deixis_test", "lex_cohesion": "lex_cohesion_test", "ellipsis_infl": "ellipsis_infl",
                  "ellipsis_vp": "ellipsis_vp"}  # suite voita2019_{key} <- consistency_testsets/{value}.json
EVALSET_PAIRS = {"contrapro": "en-de", "lopes": "en-fr"}  # each set's direction (docs/formats.md, section 6)
VOITA2019_PAIR = "en-ru"
EOS = " _eos "


def from_evalset(name: str, path: str | Path, out: str | Path) -> int:
    """ContraPro's or Lopes et al.'s converted set (results/eval/{name}/{pair}/test.jsonl) as a suite."""
    if name not in EVALSET_PAIRS:
        raise ValueError(f"unknown evaluation set {name!r}: contrapro or lopes")
    pair = EVALSET_PAIRS[name]
    src, tgt = langs_of(pair)  # by name: a set written target-first keeps English the source
    examples = []
    for n, sample in enumerate(read_corpus(path, (src, tgt)), 1):
        where = f"{path}:{n}"  # read_corpus reads every line, so n is the line
        contrastive = sample.get("contrastive")
        if not isinstance(contrastive, list) or not contrastive or not all(isinstance(c, str) and c.strip()
                                                                           for c in contrastive):
            raise ValueError(f"{where}: 'contrastive' must list the contrastive translations (non-empty strings), "
                             f"got {contrastive!r}")
        reference = sample["text"][tgt]
        group = _contrapro_group(sample.get("phenomenon") or {}, where)
        examples.append({"id": sample["id"], "doc_id": sample["doc_id"], "direction": pair,
                         "text": {src: sample["text"][src]}, "previous": {src: sample["previous"][src]},
                         "meta": sample["meta"], "cues": sample.get("cues", []),
                         "candidates": [reference, *contrastive], "correct": 0, "group": group, "rule": STRICT})
    return _write_suite(examples, path, out)


def _contrapro_group(phenomenon: dict, where: str) -> dict:
    """ContraPro's breakdowns of one example (its evaluate.py's): pronoun pair, reference pronoun, distance."""
    if not isinstance(phenomenon, dict):
        raise ValueError(f"{where}: 'phenomenon' must be an object {{src_pronoun, ref_pronoun, ante_distance}}")
    pronouns = [phenomenon.get(k) or "" for k in ("src_pronoun", "ref_pronoun")]
    for key, value in zip(("src_pronoun", "ref_pronoun"), pronouns):
        if not isinstance(value, str):
            raise ValueError(f"{where}: 'phenomenon.{key}' must be a string, got {value!r}")
    distance = phenomenon.get("ante_distance")
    if distance is not None and (not isinstance(distance, int) or isinstance(distance, bool) or distance < 0):
        raise ValueError(f"{where}: 'phenomenon.ante_distance' must be a number of sentences (0, 1, ...) or null, "
                         f"got {distance!r}")
    return {"category": f"{pronouns[0].lower()}:{pronouns[1].lower()}", "pronoun": pronouns[1].lower(),
            **({"distance": contrapro_distance(distance)} if distance is not None else {})}


def published(text: str) -> str:
    """An official set's line as scored: as published, Unicode-normalised (NFC) only."""
    return unicodedata.normalize("NFC", text)


def _write_suite(examples: list[dict], path: str | Path, out: str | Path) -> int:
    if not examples:  # an empty suite would score as no accuracy at all, downstream
        raise ValueError(f"{path}: no examples: the input holds none; is it the right file?")
    return write_jsonl(out, examples)


def _sentences(value: object, where: str) -> int:
    """A count of sentences (Voita et al.'s `ctx_dist`): a whole number, as a JSON number or string; never
    a fraction cut down or a boolean read as 1."""
    if isinstance(value, str) and re.fullmatch(r"\s*[0-9]+\s*", value):  # str.isdigit() admits "²", int() not
        return int(value)
    if isinstance(value, (int, float)) and not isinstance(value, bool) and float(value).is_integer() and value >= 0:
        return int(value)
    raise ValueError(f"{where}: 'ctx_dist' must be a number of sentences, got {value!r}")


def voita2019(json_path: str | Path, suite: str, out: str | Path) -> int:
    """One of Voita et al.'s consistency sets (`suite`: voita2019_deixis, ...) as a suite."""
    key = suite.removeprefix("voita2019_")
    if key not in VOITA2019_SETS:
        raise ValueError(f"unknown Voita et al. 2019 set {suite!r}: " + ", ".join(f"voita2019_{k}" for k in VOITA2019_SETS))
    rows = read_json(json_path)
    if not isinstance(rows, list):
        raise ValueError(f"{json_path}: expected a JSON list of examples (objects with src, dst, true_ind)")
    src = langs_of(VOITA2019_PAIR)[0]
    examples = []
    for i, row in enumerate(rows):
        where = f"{json_path}: entry {i}"
        if not isinstance(row, dict):
            raise ValueError(f"{where}: expected an object with src, dst, true_ind")
        if not isinstance(row.get("src"), str):
            raise ValueError(f"{where}: 'src' must be a string (sentences joined by {EOS.strip()!r})")
        if not isinstance(row.get("dst"), list) or not all(isinstance(d, str) for d in row["dst"]):
            raise ValueError(f"{where}: 'dst' must list the candidates (strings)")
        source = row["src"].split(EOS)
        candidates = [d.split(EOS) for d in row["dst"]]
        if len(source) < 2 or len(candidates) < 2 or any(len(c) != len(source) for c in candidates):
            raise ValueError(f"{where}: 'src' and every 'dst' (at least two) must hold the same number of sentences "
                             f"joined by {EOS.strip()!r}")
        if any(c[:-1] != candidates[0][:-1] for c in candidates):
            raise ValueError(f"{where}: the candidates differ in their context sentences, not only the last")
        true = row.get("true_ind")
        if not isinstance(true, int) or isinstance(true, bool) or not 0 <= true < len(candidates):
            raise ValueError(f"{where}: 'true_ind' must be a candidate's index (0..{len(candidates) - 1}), got "
                             f"{true!r}")
        group = {"set": key}
        if "ctx_dist" in row:
            group["distance"] = _sentences(row["ctx_dist"], where)
        examples.append({"id": f"{suite}.{i:06d}", "doc_id": f"{suite}.{i:06d}", "direction": VOITA2019_PAIR,
                         "text": {src: published(source[-1])},
                         "previous": {src: [published(s) for s in reversed(source[:-1])]},
                         "meta": dict.fromkeys(META_FIELDS), "cues": [],
                         "candidates": [published(c[-1]) for c in candidates], "correct": row["true_ind"],
                         "group": group, "rule": FIRST_AMONG_TIED})
    return _write_suite(examples, json_path, out)
