"""The real contrastive suites in the suite format (docs/formats.md, section 8).

- ContraPro (EN-DE) and Lopes et al. (EN-FR): from their converted evaluation sets (section 6: the
  reference, its `contrastive` variants, the previous lines); the reference is candidate 0. ContraPro's
  groups are its own scorer's (evaluate.py): the pronoun pair "src:ref" (`category`), the reference
  pronoun and the antecedent distance 0, 1, 2, 3, >3; Lopes et al.'s the pronoun that tells the reference
  from its variant.
- Voita et al. 2019 (EN-RU; deixis, lexical cohesion, ellipsis inflection, VP ellipsis): the official
  JSON lists (`src`, `dst`: candidates, `true_ind`, `ctx_dist`), each side four Moses-tokenised
  sentences joined by " _eos " (three of context, then the current one). Only the current sentence of a
  candidate differs, so it is the candidate; the sentences are detokenised as the cleaning step does.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

from mtcue.corpus import META_FIELDS, contrapro_distance
from mtcue.data.clean import clean_line
from mtcue.io import read_text, read_text_lines, write_jsonl

VOITA2019_SETS = {"deixis": "deixis_test", "lex_cohesion": "lex_cohesion_test", "ellipsis_infl": "ellipsis_infl",
                  "ellipsis_vp": "ellipsis_vp"}  # suite voita2019_{key} <- consistency_testsets/{value}.json
EOS = " _eos "
_WORD = re.compile(r"\w+")


def _reference_word(reference: str, variants: list[str]) -> str | None:
    """The first word of the reference that no variant has (lower-cased; "est-elle" is two words): the
    pronoun Lopes et al. vary."""
    others = {w for v in variants for w in _WORD.findall(v.lower())}
    return next((w for w in _WORD.findall(reference.lower()) if w not in others), None)


def from_evalset(name: str, path: str | Path, out: str | Path) -> int:
    """ContraPro's or Lopes et al.'s converted set (results/eval/{name}/{pair}/test.jsonl) as a suite."""
    if name not in ("contrapro", "lopes"):
        raise ValueError(f"unknown evaluation set {name!r}: contrapro or lopes")
    examples = []
    for lineno, line in read_text_lines(path):
        sample = json.loads(line)
        where = f"{path}:{lineno}"
        if not sample.get("contrastive"):
            raise ValueError(f"{where}: no 'contrastive' variants (a converted {name} set lists them)")
        src, tgt = sample["text"]  # the corpus format's two languages, source first
        reference = sample["text"][tgt]
        if name == "contrapro":
            ph = sample.get("phenomenon") or {}
            src_pronoun, ref_pronoun = (ph.get(k) or "" for k in ("src_pronoun", "ref_pronoun"))
            group = {"category": f"{src_pronoun.lower()}:{ref_pronoun.lower()}", "pronoun": ref_pronoun.lower(),
                     **({"distance": contrapro_distance(ph["ante_distance"])}
                        if ph.get("ante_distance") is not None else {})}
        else:
            group = {"pronoun": _reference_word(reference, sample["contrastive"]) or "other"}
        examples.append({"id": sample["id"], "doc_id": sample["doc_id"], "text": {src: sample["text"][src]},
                         "previous": {src: sample["previous"][src]}, "meta": sample["meta"],
                         "cues": sample.get("cues", []), "candidates": [reference, *sample["contrastive"]],
                         "correct": 0, "group": group})
    return write_jsonl(out, examples)


def voita2019(json_path: str | Path, suite: str, out: str | Path) -> int:
    """One of Voita et al.'s consistency sets (`suite`: voita2019_deixis, ...) as a suite."""
    key = suite.removeprefix("voita2019_")
    if key not in VOITA2019_SETS:
        raise ValueError(f"unknown Voita et al. 2019 set {suite!r}: " + ", ".join(f"voita2019_{k}" for k in VOITA2019_SETS))
    rows = json.loads(read_text(json_path))
    examples = []
    for i, row in enumerate(rows):
        where = f"{json_path}: entry {i}"
        source = row["src"].split(EOS)
        candidates = [d.split(EOS) for d in row["dst"]]
        if len(source) < 2 or any(len(c) != len(source) for c in candidates):
            raise ValueError(f"{where}: 'src' and every 'dst' must hold the same number of sentences joined by "
                             f"{EOS.strip()!r}")
        if any(c[:-1] != candidates[0][:-1] for c in candidates):
            raise ValueError(f"{where}: the candidates differ in their context sentences, not only the last")
        if not 0 <= row["true_ind"] < len(candidates):
            raise ValueError(f"{where}: true_ind {row['true_ind']} is not a candidate's index")
        group = {"set": key, **({"distance": int(row["ctx_dist"])} if "ctx_dist" in row else {})}
        examples.append({"id": f"{suite}.{i:06d}", "doc_id": f"{suite}.{i:06d}", "text": {"en": clean_line(source[-1], "en")},
                         "previous": {"en": [clean_line(s, "en") for s in reversed(source[:-1])]},
                         "meta": dict.fromkeys(META_FIELDS), "cues": [],
                         "candidates": [clean_line(c[-1], "ru") for c in candidates], "correct": row["true_ind"],
                         "group": group})
    return write_jsonl(out, examples)
