"""Result records: small JSON files that tables and tracking are built from (docs/formats.md §4)."""

from __future__ import annotations

import hashlib
import json
import subprocess
from collections.abc import Iterable
from datetime import datetime, timezone
from pathlib import Path

from mtcue.io import atomic_write_text, read_json

SCHEMA_VERSION = 1

REQUIRED: dict[str, tuple[str, ...]] = {
    "score": (
        "model", "direction", "split", "bleu", "bleu_signature", "phenomena", "n_segments",
        "hyp_sha256", "config_hash", "git_commit", "study",
    ),
    "comet": (
        "model", "direction", "split", "comet_model", "comet", "unavailable", "n_segments",
        "hyp_sha256", "config_hash", "git_commit", "study",
    ),
    "eamt22": (
        "model", "direction", "split", "detector", "attributes", "accuracy_mean", "bleu", "bleu_signature",
        "supervised_samples", "n_segments", "hyp_sha256", "config_hash", "git_commit", "study",
    ),
    "train": (
        "model", "direction", "study", "params", "epochs", "best_epoch", "best_valid_loss",
        "config_hash", "git_commit",
    ),
    "data": ("pair", "split", "source", "samples", "previous", "meta", "any_context", "config_hash", "git_commit",
             "study"),
    # IWSLT22 zero-shot formality (Table 5, Table 6's zero-shot column): best-prompt formal and informal
    # accuracy (fractions), their mean, and every prompt's counts.
    "formality": ("model", "direction", "formal", "informal", "average", "best_prompt", "prompts", "config_hash",
                  "git_commit", "study"),
    # Voita et al. (2018) Table 7: agreement of VOITA-CONTEXT's context attention with the antecedent of a
    # pronoun, per source pronoun and "all": {"n", "attention", "random", "first", "last"} (fractions).
    "attention": ("model", "direction", "suite", "examples", "pronouns", "config_hash", "git_commit", "study"),
    # The shortening paper's Figure 3: a Latent Grouping / Selecting model's weights of a sentence's pieces in its
    # K groups (mtcue.evaluation.groupings).
    "groupings": ("model", "direction", "suite", "sentence", "pieces", "groups", "used", "weights", "config_hash",
                  "git_commit", "study"),
    # Contrastive suites: accuracy of the summed and per-token scores, overall and per group (docs/formats.md §7).
    "contrastive": ("model", "direction", "suite", "rule", "accuracy", "n", "ties", "mean", "groups",
                    "needs_target_context", "config_hash", "git_commit", "study"),
    # Context usage: CXMI (nats per token) of the reference with vs without the model's context, overall,
    # per phenomenon and per sentence (mtcue.evaluation.context_usage).
    "context_usage": ("model", "direction", "split", "n", "cxmi", "cross_entropy", "phenomena", "sentence_cxmi",
                      "sentence_phenomena", "without_context", "config_hash", "git_commit", "study"),
}
# Nested keys that downstream readers (tracking, tables) rely on.
TRAIN_PARAMS_KEYS = ("total", "trainable")
TRAIN_EPOCH_KEYS = ("epoch", "train_loss", "valid_loss", "wall_s")
# What the tables and tracking compute with, by key, in every kind that requires the key (None: a score
# that could not be made, as an unavailable COMET model's): a record of other types is refused when read,
# naming the key, instead of failing somewhere in a table.
NUMBER, WHOLE = "a number", "a whole number"
NUMBER_OR_NULL, WHOLE_OR_NULL = f"{NUMBER} or null", f"{WHOLE} or null"
TYPES: dict[str, tuple[type, ...] | str] = {
    **dict.fromkeys(("model", "direction", "split", "study", "config_hash", "git_commit", "suite", "pair", "rule",
                     "bleu_signature", "hyp_sha256", "comet_model", "detector"), (str,)),
    **dict.fromkeys(("bleu", "cxmi"), NUMBER),
    **dict.fromkeys(("n_segments", "n", "ties", "samples", "any_context"), WHOLE),
    **dict.fromkeys(("comet", "accuracy", "accuracy_mean", "best_valid_loss", "formal", "informal", "average"),
                    NUMBER_OR_NULL),
    "best_epoch": WHOLE_OR_NULL,
    **dict.fromkeys(("phenomena", "attributes", "params", "mean", "pronouns", "cross_entropy", "previous", "meta"),
                    (dict,)),
    **dict.fromkeys(("epochs", "prompts"), (list,)),
}
TRAIN_TYPES = {"total": WHOLE, "trainable": WHOLE, "epoch": WHOLE, "train_loss": NUMBER_OR_NULL,
               "valid_loss": NUMBER_OR_NULL, "wall_s": NUMBER}


class RecordError(ValueError):
    """A record file is unreadable or lacks a required key."""


def config_hash(obj: object) -> str:
    """First 12 hex chars of the sha256 of canonical JSON (key order does not matter)."""
    canonical = json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:12]


def _git(repo_dir: str | Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(repo_dir), *args], capture_output=True, text=True, check=True
    ).stdout.strip()


def git_commit(repo_dir: str | Path) -> str:
    """HEAD commit, with "-dirty" when tracked files changed; "unknown" outside git or before
    the first commit."""
    try:
        commit = _git(repo_dir, "rev-parse", "HEAD")
        dirty = _git(repo_dir, "status", "--porcelain", "--untracked-files=no")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return f"{commit}-dirty" if dirty else commit


def _is(value: object, kind: tuple[type, ...] | str) -> bool:
    if isinstance(kind, tuple):
        return isinstance(value, kind)
    if value is None:
        return kind.endswith("or null")
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    return kind.startswith("a number") or float(value).is_integer()


def _described(kind: tuple[type, ...] | str) -> str:
    return {str: "a string", dict: "an object", list: "a list"}[kind[0]] if isinstance(kind, tuple) else kind


def _problem(record: dict) -> str | None:
    """The first required key (dotted path for nested ones) the record lacks or holds of another type, else None."""
    keys = [(key, record, key) for key in REQUIRED[record["kind"]]]
    if record["kind"] == "train" and isinstance(record.get("params"), dict) and isinstance(record.get("epochs"), list):
        keys += [(key, record["params"], f"params.{key}") for key in TRAIN_PARAMS_KEYS]
        for i, epoch in enumerate(record["epochs"]):
            if not isinstance(epoch, dict):
                return f"key 'epochs[{i}]' must be an object ({', '.join(TRAIN_EPOCH_KEYS)}), got {epoch!r:.80}"
            keys += [(key, epoch, f"epochs[{i}].{key}") for key in TRAIN_EPOCH_KEYS]
    for key, holder, name in keys:
        if key not in holder:
            return f"lacks required key {name!r} (from an older version? delete it and rerun the step that writes it)"
        kind = TRAIN_TYPES.get(key) if holder is not record else TYPES.get(key)
        if kind is not None and not _is(holder[key], kind):
            return f"key {name!r} must be {_described(kind)}, got {holder[key]!r:.80}"
    return None


def _check(record: dict, where: str) -> None:
    if not isinstance(record.get("kind"), str) or record["kind"] not in REQUIRED:
        raise RecordError(f"{where}: record kind {record.get('kind')!r} is not one of {sorted(REQUIRED)}")
    problem = _problem(record)
    if problem:
        raise RecordError(f"{where}: {record['kind']} record {problem}")


def write_record(path: str | Path, record: dict) -> Path:
    """Validate and atomically write a record, adding schema_version and UTC created time. (The steps'
    `--out` is guarded by outputs.step_outputs: a step replaces only its own earlier record.)"""
    record = {"schema_version": SCHEMA_VERSION,
              "created": datetime.now(timezone.utc).isoformat(timespec="seconds"), **record}
    _check(record, str(path))
    return atomic_write_text(path, _dumps(record))


def _dumps(record: dict) -> str:
    """One top-level key per line with compact values: readable and diffable, while a score
    record's per-segment statistics stay one line instead of one line per number."""
    lines = [f"  {json.dumps(k)}: {json.dumps(v, ensure_ascii=False)}" for k, v in sorted(record.items())]
    return "{\n" + ",\n".join(lines) + "\n}\n"


def read_record(path: str | Path, kind: str | None = None) -> dict:
    """Read and validate a record; with kind, also require that kind."""
    try:
        record = read_json(path)
    except OSError as e:
        raise RecordError(f"{path}: cannot read record: {e}") from None
    except ValueError as e:  # not UTF-8, not JSON: the message names the file and line
        raise RecordError(str(e)) from None
    if not isinstance(record, dict):
        raise RecordError(f"{path}: a record must be a JSON object")
    _check(record, str(path))
    if kind is not None and record["kind"] != kind:
        raise RecordError(f"{path}: expected a {kind} record, found {record['kind']}")
    return record


def load_records(paths_or_dir: str | Path | Iterable[str | Path], kind: str) -> list[dict]:
    """Records of one kind: every *.json of that kind below a directory (others skipped), or
    each of the given paths (which must all be of that kind)."""
    if isinstance(paths_or_dir, (str, Path)) and Path(paths_or_dir).is_dir():
        records = [read_record(p) for p in sorted(Path(paths_or_dir).rglob("*.json"))]
        return [r for r in records if r["kind"] == kind]
    if isinstance(paths_or_dir, (str, Path)):
        paths_or_dir = [paths_or_dir]
    return [read_record(p, kind) for p in paths_or_dir]
