"""The synthetic test split as an IWSLT22 formality test set, in the official layout (the embedded
default's Table 5 is scored by the official rule on it, as the paper's is on the real set).

For each line of the cleaned test corpus, in order: the English source, a formal and an informal
reference (the same line rendered in each register) and both annotated with `[F]...[/F]` around the
words that show the register (the line's formality markers; punctuation stays outside the tags, as
in the official files). A line that shows no formality has its translation as both references and no
annotation, so the official rule labels every hypothesis of it NEUTRAL and leaves it out.

The prompts are never in any training context (`reserved`), so prompting is zero-shot.
"""
from __future__ import annotations

from pathlib import Path

from mtcue.corpus import read_corpus, split_punctuation
from mtcue.data.clean import clean_line
from mtcue.data.evalsets import iwslt22_files
from mtcue.data.synth.generator import contrasts
from mtcue.io import write_lines
from mtcue.outputs import atomic_directory


def annotate(reference: str, markers: list[str]) -> str:
    """`reference` with [F]...[/F] around each whitespace token whose word (punctuation stripped, as
    markers are matched) is a marker."""
    out = []
    for token in reference.split(" "):
        lead, word, trail = split_punctuation(token)
        out.append(f"{lead}[F]{word}[/F]{trail}" if word in markers else token)
    return " ".join(out)


def write_iwslt22(corpus: str | Path, pair: str, n_docs: int, seed: int, out_dir: str | Path,
                  split: str = "test") -> dict:
    """The five official files of `pair` (official names, whatever the split) from the cleaned corpus
    that `generate(pair, split, n_docs, seed)` produced; returns the counts of lines and of lines that
    show formality."""
    tgt = pair.split("-")[1]
    registers = contrasts(pair, split, n_docs, seed, "formality")
    columns: list[list[str]] = [[] for _ in range(5)]
    shown = 0
    for sample in read_corpus(corpus):
        text = sample["text"][tgt]
        formality = ((sample.get("labels") or {}).get(tgt) or {}).get("formality")
        if formality is None:
            refs = {"formal": text, "informal": text}
            annotated = refs
        else:
            if sample["id"] not in registers:
                raise ValueError(f"{corpus}: sample {sample['id']} is not a line of the synthetic {split} split of "
                                 f"{pair} with {n_docs} documents and seed {seed}; regenerate the corpus")
            refs = {r: clean_line(t, tgt) for r, t in registers[sample["id"]].items()}
            if refs[formality["gold"]] != text:
                raise ValueError(f"{corpus}: sample {sample['id']} rendered in its own register is {refs[formality['gold']]!r}, "
                                 f"not its translation {text!r}")
            annotated = {r: annotate(refs[r], formality["markers"][r]) for r in refs}
            shown += 1
        for column, value in zip(columns, (sample["text"]["en"], refs["formal"], refs["informal"],
                                           annotated["formal"], annotated["informal"])):
            column.append(value)
    with atomic_directory(out_dir, "iwslt22-synth") as tmp:
        for name, lines in zip(iwslt22_files(pair), columns):
            write_lines(Path(tmp) / name, lines)
    return {"lines": len(columns[0]), "with_formality": shown}
