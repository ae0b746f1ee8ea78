"""Each trained model's evaluation, derived from the registered experiments: the records they read of a (direction,
model) and the translations those records are scored from, i.e. what one `mtcue evaluate` job of that model
writes. Models whose evaluations write the same files (their direction and name aside) share an evaluation
profile; a rule per profile can then list its outputs (`layout` paths with the wildcards' placeholders), which a
rule cannot make depend on a wildcard's value.

A record is named by its kind and what it is of (`("score", "test")`, `("contrastive", "synthetic")`,
`("formality", None)`); a translation by its setting and split (`(None, "test")`: the split as the model reads
it; `("random_context", "test")`: with test-time context; `("formality", None)`: an evaluation set's folder of
translations, one file per prompt or level).
"""
from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from mtcue import layout
from mtcue.experiments.formality.plan import FORMALITY
from mtcue.plan.models import model_entry
from mtcue.plan.registry import EXPERIMENTS
from mtcue.study import is_contextual

# Context at test time only (its training spec says otherwise; the ContextDataset's --random-context): another test
# sentence's line or row, none at all, or labels to be predicted (si_trg_prefix). A score record of such a
# translation is the kind `score_{test_context}`.
TEST_CONTEXT = {"random_context": "shuffle", "no_context": "drop", "predicted_labels": "predict"}
# Records read from a folder of translations (an evaluation set translated once per prompt or level) and the
# settings of those folders, per record kind and what it is of.
FOLDER_TRANSLATIONS = {("formality", None): "formality", ("formality", "valid"): "formality_valid",
                       ("style", None): "style"}
# Record kinds a trained model's evaluation writes (`score_{test_context}` besides); the training record and the
# study's own records (a pair's data, style agreement) are not an evaluation's.
EVALUATION_KINDS = ("score", "comet", "context_usage", "contrastive", "formality", "eamt22", "style", "attention",
                    "groupings", *(f"score_{setting}" for setting in TEST_CONTEXT))

Record = tuple[str, "str | None"]
Translation = tuple["str | None", "str | None"]


@dataclass(frozen=True)
class Evaluation:
    """What one trained model's evaluation writes: its translations, then its records (each sorted)."""
    translations: tuple[Translation, ...]
    records: tuple[Record, ...]

    def outputs(self, direction: str, model: str) -> list[str]:
        """Its files, for a (direction, model) or for their placeholders ("{direction}", "{model}")."""
        return [*(str(translation_path(t, direction, model)) for t in self.translations),
                *(str(layout.record(kind, direction, model, of)) for kind, of in self.records)]

    def folders(self, direction: str, model: str) -> set[str]:
        """Those of its outputs that are folders (an evaluation set's translations, a file per prompt or level)."""
        return {str(translation_path(t, direction, model)) for t in self.translations if t[1] is None}


def translation_path(translation: Translation, direction: str, model: str):
    setting, split = translation
    if split is None:
        return layout.hyps_dir(setting, direction, model)
    return layout.hyps(direction, model, split, setting)


def _parse_record(path: str) -> tuple[str, str, str, str | None] | None:
    """(kind, direction, model, of) of an evaluation record's path; None for any other file."""
    run = layout.record_run(path)
    if run is None:
        return None
    parts = path.replace("\\", "/").split("/")
    kind, name = parts[-3], parts[-1][:-len(".json")]
    if kind not in EVALUATION_KINDS:
        return None
    model, _, of = name.partition(".")
    return kind, run[0], model, of or None


def read_records(cfg: dict) -> Iterator[str]:
    """Every record an experiment's targets, tables or figures read."""
    for experiment in EXPERIMENTS.values():
        yield from experiment.targets(cfg).records
        yield from experiment.reads(cfg)
        yield from experiment.figure_records(cfg)
        for table in experiment.tables:
            for files in table.inputs(cfg).values():
                yield from files


def translations_of(cfg: dict, direction: str, model: str, record: Record) -> list[Translation]:
    """The translations a record is scored from (none for a measure of the model itself: context usage, contrastive
    scores, attention, groupings)."""
    kind, of = record
    if record in FOLDER_TRANSLATIONS:
        # Table 5's best prompt is chosen on the validation set's translations, where there is one
        valid = [("formality_valid", None)] if record == ("formality", None) and FORMALITY.valid_prompts(
            cfg, direction, model) else []
        return [(FOLDER_TRANSLATIONS[record], None), *valid]
    if kind in ("score", "comet"):
        return [(None, of)]
    if kind.startswith("score_"):
        return [(kind[len("score_"):], of)]
    if kind == "eamt22":  # a model without context scores its ordinary translation (the embedded default's data)
        own = is_contextual(model_entry(cfg, model)) or cfg["corpus"]["source"] == "opensubtitles"
        return [("eamt22" if own else None, of)]
    return []


def evaluations(cfg: dict) -> dict[tuple[str, str], Evaluation]:
    """{(direction, model): its evaluation} of every trained model some experiment reads a record of."""
    records: dict[tuple[str, str], set[Record]] = {}
    for path in read_records(cfg):
        parsed = _parse_record(str(path))
        if parsed:
            kind, direction, model, of = parsed
            records.setdefault((direction, model), set()).add((kind, of))

    def order(item):
        return tuple("" if part is None else part for part in item)

    out = {}
    for (direction, model), wanted in records.items():
        translations = {t for r in wanted for t in translations_of(cfg, direction, model, r)}
        out[direction, model] = Evaluation(tuple(sorted(translations, key=order)), tuple(sorted(wanted, key=order)))
    return out


def profiles(cfg: dict) -> dict[Evaluation, list[tuple[str, str]]]:
    """{evaluation: the (direction, model)s that evaluate so}, largest first (then in the order of first
    appearance): the evaluation profiles, a rule each."""
    grouped: dict[Evaluation, list[tuple[str, str]]] = {}
    for run, evaluation in evaluations(cfg).items():
        grouped.setdefault(evaluation, []).append(run)
    return dict(sorted(grouped.items(), key=lambda item: -len(item[1])))
