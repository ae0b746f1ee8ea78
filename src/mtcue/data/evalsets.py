"""The paper's evaluation sets, converted to what the evaluation steps read (docs/formats.md, section 6).

- IWSLT22 formality (EN-DE, EN-RU): the official files, checked and kept in their layout
  (`formality-control.test.en-XX.{en,formal.XX,informal.XX,formal.annotated.XX,informal.annotated.XX}`).
- EAMT22 (EN-PL): the official JSON as corpus-format lines with the attribute values, the attribute
  each row tests and its context as cue sentences.
- ContraPro (EN-DE) and Lopes et al. (EN-FR) contrastive pronoun sets: corpus-format lines with the
  reference, the contrastive variants and the previous lines most recent first (the sets list them
  oldest first). ContraPro's documents come from OpenSubtitles2018 de-en in Moses format, as its own
  conversion script reads them; Lopes et al. ship their extracted sentences, and both annotate each
  example (pronouns, antecedent distance) in a JSON of ContraPro's layout.
"""
from __future__ import annotations

import io
import re
import zipfile
from collections import defaultdict
from pathlib import Path

from mtcue.corpus import (
    ADDRESSEE_CUES,
    FEMININE,
    FORMALITY_CUES,
    GROUP,
    MASCULINE,
    MAX_PREVIOUS,
    META_FIELDS,
    SPEAKER_CUES,
)
from mtcue.io import read_json, read_text, write_jsonl
from mtcue.outputs import atomic_directory

IWSLT22_SUFFIXES = ("en", "formal.{t}", "informal.{t}", "formal.annotated.{t}", "informal.annotated.{t}")
FORMALITY_TAG = re.compile(r"\[/?F\]")
# context_csv's slots (EAMT22's SpGender, IlGender, IlNumber, Formality), named as everywhere here.
EAMT22_SLOTS = (("speaker_gender", "sp:", ("feminine", "masculine")),
                ("addressee_gender", "il:", ("feminine", "masculine", "mixed")),
                ("addressee_number", "", ("singular", "plural")),
                ("formality", "", ("formal", "informal")))
# The addressee's attribute sentence by (addressee_number, addressee_gender), in the paper's wording
# (section 3.2: "I am a man", "I'm talking to a group of people", "Formal"; corpus.py). "mixed" is the
# formal "państwo", a virile plural "masculine" (EAMT22's convention). The three combinations the paper's
# wording does not name are ours, in its pattern: a person, a group of women, a group of men.
ADDRESSEE_SENTENCES = {("singular", FEMININE): ADDRESSEE_CUES[FEMININE],
                       ("singular", MASCULINE): ADDRESSEE_CUES[MASCULINE],
                       ("plural", "mixed"): ADDRESSEE_CUES[GROUP], ("plural", None): ADDRESSEE_CUES[GROUP],
                       ("singular", None): "I'm talking to a person",
                       ("plural", FEMININE): "I'm talking to a group of women",
                       ("plural", MASCULINE): "I'm talking to a group of men"}
DOC_KEY = re.compile(r"(\d+)/(\d+)/(\d+)\.xml")


# The official training data's domains: our validation set is both, in this order (docs/deviations.md).
IWSLT22_TRAIN_DOMAINS = ("telephony", "topical-chat")


def iwslt22_files(pair: str, domain: str | None = None) -> list[str]:
    """The five official files of `pair`: the test set's, or (`domain`) the training data's of that domain."""
    tgt = pair.split("-")[1]
    split = f"train.{domain}" if domain else "test"
    return [f"formality-control.{split}.{pair}.{s.format(t=tgt)}" for s in IWSLT22_SUFFIXES]


def iwslt22_valid_files(pair: str) -> list[str]:
    return [name for domain in IWSLT22_TRAIN_DOMAINS for name in iwslt22_files(pair, domain)]


def _lines(path: Path) -> list[str]:
    text = read_text(path)
    return text.removesuffix("\n").split("\n") if text else []


def _iwslt22_lines(source_dir: Path, names: list[str], pair: str) -> list[list[str]]:
    """The lines of five official files (source, plain and annotated references), checked: one line per
    source in every file; an annotated reference is its plain reference with [F]...[/F] around the
    formality-bearing words."""
    missing = [n for n in names if not (source_dir / n).is_file()]
    if missing:
        raise FileNotFoundError(f"{source_dir}: missing {', '.join(missing)} (IWSLT22 formality files)")
    lines = [_lines(source_dir / name) for name in names]
    if len({len(v) for v in lines}) != 1 or not lines[0]:
        raise ValueError(f"{source_dir}: the IWSLT22 files of {pair} differ in length or are empty: "
                         + ", ".join(f"{n} {len(v)}" for n, v in zip(names, lines)))
    for plain, annotated in ((1, 3), (2, 4)):
        for lineno, (ref, ann) in enumerate(zip(lines[plain], lines[annotated]), 1):
            if ann.count("[F]") != ann.count("[/F]") or FORMALITY_TAG.sub("", ann) != ref:
                raise ValueError(f"{source_dir / names[annotated]}:{lineno}: not {names[plain]} line {lineno} with "
                                 "balanced [F]...[/F] marks")
    return lines


def iwslt22(source_dir: str | Path, pair: str, out_dir: str | Path, split: str = "test") -> int:
    """Check the official files of `pair` and write them to `out_dir` under the test set's five names;
    returns the number of sources. `split` test: the test files; valid: the training data of both domains
    (IWSLT22_TRAIN_DOMAINS), one after the other, which IWSLT22 gives for training and development and the
    paper's models never train on."""
    source_dir = Path(source_dir)
    if split not in ("test", "valid"):
        raise ValueError(f"iwslt22: split {split!r} is neither test nor valid")
    domains = IWSLT22_TRAIN_DOMAINS if split == "valid" else (None,)
    parts = [_iwslt22_lines(source_dir, iwslt22_files(pair, domain), pair) for domain in domains]
    with atomic_directory(out_dir, "evalset") as tmp:
        for i, name in enumerate(iwslt22_files(pair)):
            (tmp / name).write_text("".join(line + "\n" for part in parts for line in part[i]), encoding="utf-8")
    return sum(len(part[0]) for part in parts)


def _sample(sample_id: str, doc_id: str, text: dict[str, str], previous: dict[str, list[str]], **extra) -> dict:
    return {"id": sample_id, "doc_id": doc_id, "text": text, "previous": previous,
            "meta": dict.fromkeys(META_FIELDS), "cues": [], **extra}


def _eamt22_attributes(csv: str, where: str) -> dict[str, str | None]:
    slots = csv.split(",")
    if len(slots) != len(EAMT22_SLOTS):
        raise ValueError(f"{where}: context_csv {csv!r} does not have {len(EAMT22_SLOTS)} slots")
    attributes = {}
    for value, (name, prefix, allowed) in zip(slots, EAMT22_SLOTS):
        tag = value.strip("<>").removeprefix(prefix) if value else None
        if tag is not None and (value != f"<{prefix}{tag}>" or tag not in allowed):
            raise ValueError(f"{where}: {value!r} is not a value of {name} ({', '.join(allowed)})")
        attributes[name] = tag
    return attributes


def attribute_sentences(attributes: dict[str, str | None]) -> list[str]:
    """The paper's attribute sentences for a combination of values (section 3.2), one per attribute known:
    speaker ("I am a man"), addressee ("I'm talking to a group of people", named when its number is
    known) and register ("Formal"), in that order. Both the annotated training lines and the official
    test rows read these, so a model is tested in the wording it was trained on."""
    sentences = []
    if attributes.get("speaker_gender"):
        sentences.append(SPEAKER_CUES[attributes["speaker_gender"]])
    if attributes.get("addressee_number"):
        sentences.append(ADDRESSEE_SENTENCES[attributes["addressee_number"], attributes.get("addressee_gender")])
    if attributes.get("formality"):
        sentences.append(FORMALITY_CUES[attributes["formality"]])
    return sentences


def official_target(row: dict, where: str) -> tuple[str, str]:
    """(attribute, value) that an official EAMT22 row tests: the one of its `context_csv` values that its
    `marking` names."""
    attributes = _eamt22_attributes(row["context_csv"], where)
    tested = [name for name, prefix, _ in EAMT22_SLOTS if row["marking"] == f"<{prefix}{attributes[name]}>"]
    if not tested:
        raise ValueError(f"{where}: marking {row['marking']!r} is none of its attributes {attributes}")
    return tested[0], attributes[tested[0]]


def checked_entries(entries: object, path: str | Path, what: str, fields: tuple[str, ...]) -> list[dict]:
    """`entries`, an official set's JSON read from `path`, when it is a list of objects, each with `fields` as
    strings: else a ValueError naming the file, the entry and the field."""
    if not isinstance(entries, list):
        raise ValueError(f"{path}: expected a JSON list of {what} (objects with {', '.join(fields)}); is it the "
                         "right file?")
    for i, entry in enumerate(entries):
        if not isinstance(entry, dict):
            raise ValueError(f"{path}: entry {i}: expected an object with {', '.join(fields)}")
        wrong = [f for f in fields if not isinstance(entry.get(f), str)]
        if wrong:
            raise ValueError(f"{path}: entry {i}: '{wrong[0]}' must be a string, got {entry.get(wrong[0])!r:.80} "
                             f"({what} have {', '.join(fields)})")
    return entries


EAMT22_FIELDS = ("english", "polish", "context_csv", "marking")  # what a row is read from


def eamt22(json_path: str | Path, split: str, out: str | Path) -> int:
    """EAMT22 rows as corpus-format lines. Of the official fields, a row is read from `english` (source),
    `polish` (reference), `context_csv` (the attribute values, given to the model as the paper's
    attribute sentences) and `marking` (the attribute the row tests); EAMT22's own context wordings
    (`context_text`, `context_text_excluding_formality`, `formality_text`) are not read."""
    rows = checked_entries(read_json(json_path), json_path, "EAMT22 rows", EAMT22_FIELDS)
    samples = []
    for i, row in enumerate(rows):
        where = f"{json_path}: entry {i}"
        attributes = _eamt22_attributes(row["context_csv"], where)
        attribute, value = official_target(row, where)
        samples.append({**_sample(f"eamt22.{split}.{i:06d}", f"eamt22.{split}", {"en": row["english"], "pl": row["polish"]},
                                  {"en": [], "pl": []}),
                        "cues": attribute_sentences(attributes), "attributes": attributes,
                        "target": {"attribute": attribute, "value": value}})
    return write_jsonl(out, samples)


def _previous(lines: list[str]) -> list[str]:
    """Context lines given oldest first -> most recent first, empty ones kept (the antecedent may lie beyond
    one, as in contrapro) but those older than every non-empty one: the padding before a document's start."""
    previous = [line.strip() for line in reversed(lines)][:MAX_PREVIOUS]
    while previous and not previous[-1]:
        previous.pop()
    return previous


# Lopes et al.'s set: 14,000 examples, 3,500 for each French pronoun of the reference (their paper, section 4).
LOPES_PRONOUNS = ("il", "elle", "ils", "elles")
LOPES_PER_PRONOUN = 3500


def lopes(current_src: str | Path, current_trg: str | Path, context_src: str | Path, context_trg: str | Path,
          annotation: str | Path, out: str | Path, n_context: int = 5) -> int:
    """Lopes et al.'s extracted EN-FR set: two current lines per example (the reference, then the
    contrastive translation) and `n_context` context lines per current line, oldest first; with each
    example's annotation from the set's own JSON (testset-en-fr.json, ContraPro's layout, in the order of
    the extracted lines, as the set's evaluate.py reads it): the pronouns and the antecedent distance."""
    src, trg = _lines(Path(current_src)), _lines(Path(current_trg))
    csrc, ctrg = _lines(Path(context_src)), _lines(Path(context_trg))
    if len(src) != len(trg) or len(src) % 2 or len(csrc) != len(ctrg) or len(csrc) != n_context * len(src):
        raise ValueError(f"{current_src}: {len(src)} source, {len(trg)} target lines and {len(csrc)}/{len(ctrg)} "
                         f"context lines; expected pairs of lines and {n_context} context lines per line")
    entries = read_json(annotation)
    if not isinstance(entries, list) or len(entries) != len(src) // 2:
        raise ValueError(f"{annotation}: expected a JSON list of {len(src) // 2} examples, one per pair of lines of "
                         f"{current_trg}; got {len(entries) if isinstance(entries, list) else type(entries).__name__}")
    samples, counts = [], defaultdict(int)
    for k in range(0, len(src), 2):
        if src[k] != src[k + 1]:
            raise ValueError(f"{current_src}:{k + 2}: the contrastive example's source differs from line {k + 1}")
        entry, where = entries[k // 2], f"{annotation}: entry {k // 2}"
        errors = entry.get("errors") if isinstance(entry, dict) else None
        if not errors or not isinstance(errors[0], dict) or " ".join(str(errors[0].get("contrastive")).split()) \
                != " ".join(trg[k + 1].split()):
            raise ValueError(f"{where}: its contrastive translation is not line {k + 2} of {current_trg}: the "
                             "annotation and the extracted lines must be the same set, in the same order")
        pronoun = str(entry.get("ref pronoun", "")).lower()
        if pronoun not in LOPES_PRONOUNS:
            raise ValueError(f"{where}: 'ref pronoun' {entry.get('ref pronoun')!r} is none of "
                             f"{', '.join(LOPES_PRONOUNS)}")
        counts[pronoun] += 1
        distance = entry.get("ante distance")
        block = slice(k * n_context, (k + 1) * n_context)
        samples.append(_sample(f"lopes.{k // 2:06d}", f"lopes.{k // 2:06d}", {"en": src[k], "fr": trg[k]},
                               {"en": _previous(csrc[block]), "fr": _previous(ctrg[block])},
                               contrastive=[trg[k + 1]],
                               phenomenon={"src_pronoun": entry.get("src pronoun"), "ref_pronoun": entry["ref pronoun"],
                                           # -1: no antecedent distance annotated
                                           "ante_distance": distance if isinstance(distance, int) and distance >= 0
                                           else None}))
    if len(samples) == len(LOPES_PRONOUNS) * LOPES_PER_PRONOUN and set(counts.values()) != {LOPES_PER_PRONOUN}:
        raise ValueError(f"{annotation}: the complete set holds {LOPES_PER_PRONOUN} examples of each pronoun, this one "
                         f"{dict(counts)}: is it Lopes et al.'s testset-en-fr.json?")
    return write_jsonl(out, samples)


def _moses_members(archive: zipfile.ZipFile, pair: str) -> dict[str, str]:
    l1, l2 = sorted(pair.split("-"))
    members = {}
    for suffix in ("ids", l1, l2):
        found = [n for n in archive.namelist() if n.endswith(f".{l1}-{l2}.{suffix}")]
        if len(found) != 1:
            raise ValueError(f"{archive.filename}: expected one member *.{l1}-{l2}.{suffix}, found {found}")
        members[suffix] = found[0]
    return members


def contrapro(json_path: str | Path, moses_zip: str | Path, out: str | Path,
              metadata: dict[str, dict] | None = None, max_mismatch: float = 0.01) -> dict:
    """ContraPro as corpus-format lines. Its "document id" names a document of OpenSubtitles2018
    de-en (year_imdb_file.de) and its "segment id" the line in it (from 1), as ContraPro's
    json2text_and_context.pl reads them from the Moses files and their .ids; the up to MAX_PREVIOUS lines
    before it are its context, empty ones included, as that script gives them."""
    examples = checked_entries(read_json(json_path), json_path, "ContraPro examples", ("document id",))
    for i, ex in enumerate(examples):
        seg, errors = ex.get("segment id"), ex.get("errors")
        if isinstance(seg, bool) or not isinstance(seg, (int, str)) or not str(seg).isdigit():
            raise ValueError(f"{json_path}: entry {i}: 'segment id' must be a line number (1, 2, ...), got {seg!r:.80}")
        if not isinstance(errors, list) or not all(isinstance(e, dict) and isinstance(e.get("contrastive"), str)
                                                   for e in errors):
            raise ValueError(f"{json_path}: entry {i}: 'errors' must list objects with 'contrastive' (a translation)")
    needed: dict[str, set[int]] = defaultdict(set)
    for ex in examples:
        seg = int(ex["segment id"])
        needed[ex["document id"].rsplit(".", 1)[0]].update(range(max(1, seg - MAX_PREVIOUS), seg + 1))
    found: dict[tuple[str, int], tuple[str, str]] = {}
    counters: dict[str, int] = defaultdict(int)
    with zipfile.ZipFile(moses_zip) as archive:
        members = _moses_members(archive, "en-de")
        with archive.open(members["ids"]) as ids, archive.open(members["en"]) as en, archive.open(members["de"]) as de:
            for ids_line, en_line, de_line in zip(*(io.TextIOWrapper(h, encoding="utf-8") for h in (ids, en, de))):
                match = DOC_KEY.search(ids_line)
                if not match:
                    continue
                doc = "_".join(match.groups())
                if doc in needed:
                    counters[doc] += 1
                    if counters[doc] in needed[doc]:
                        found[(doc, counters[doc])] = (en_line.strip(), de_line.strip())
    samples, mismatches, missing = [], 0, []
    for i, ex in enumerate(examples):
        doc, seg = ex["document id"].rsplit(".", 1)[0], int(ex["segment id"])
        if (doc, seg) not in found:
            missing.append(ex["document id"])
            continue
        en, de = found[(doc, seg)]
        expected = ex.get("source", ex.get("src segment"))
        mismatches += expected is not None and " ".join(expected.split()) != " ".join(en.split())
        # The lines before it in the document, most recent first, each side's empty lines kept: ContraPro's
        # conversion_scripts/json2text_and_context.pl prints them as they are, and the antecedent may lie beyond
        # one. An empty line is no sentence to the models, as the script's empty lines before a document's start.
        context = [found[(doc, seg - j)] for j in range(1, min(seg, MAX_PREVIOUS + 1))]
        film = f"tt{int(doc.split('_')[1]):07d}"
        sample = _sample(f"contrapro.{i:06d}", doc, {"en": en, "de": de},
                         {"en": [c[0] for c in context], "de": [c[1] for c in context]},
                         imdb_id=film, contrastive=[e["contrastive"] for e in ex["errors"]],
                         phenomenon={"src_pronoun": ex.get("src pronoun"), "ref_pronoun": ex.get("ref pronoun"),
                                     "ante_distance": ex.get("ante distance")})
        if metadata and film in metadata:
            sample["meta"] = metadata[film]
        samples.append(sample)
    if missing:
        raise ValueError(f"{moses_zip}: {len(missing)} ContraPro examples name documents or lines it lacks "
                         f"(first: {missing[0]}); is it OpenSubtitles v2018 de-en?")
    if mismatches > max_mismatch * len(examples):
        raise ValueError(f"{moses_zip}: {mismatches} of {len(examples)} ContraPro sources differ from the "
                         "document line they name; the documents do not match the test set")
    write_jsonl(out, samples)
    return {"examples": len(samples), "source_mismatches": mismatches}
