"""One run's records and the tables and figures it wrote beside them (`Run`), as the README's results read
them: `mtcue readme-results --records results/records` loads one `Run` per folder.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from mtcue.plan import EXPERIMENTS
from mtcue.records import load_records


@dataclass(frozen=True)
class Run:
    """The records of one run of the study (a results/records folder)."""

    where: str
    scores: list[dict]
    comets: list[dict]
    trains: list[dict]
    eamt22: list[dict] = ()
    split: str = "test"
    formality: list[dict] = ()
    translating: frozenset[str] = frozenset()  # the models scored on the test split (Tables 4, Voita et al.'s)
    # the experiments' result CSVs (Experiment.results), each an attribute of the run (`run.table6`)
    frames: Mapping[str, pd.DataFrame | None] = field(default_factory=dict)

    def __getattr__(self, name: str) -> pd.DataFrame | None:
        frames = self.__dict__.get("frames", {})
        if name not in frames:
            raise AttributeError(f"{type(self).__name__} has no attribute or result {name!r}")
        return frames[name]

    @classmethod
    def load(cls, records_dir: str | Path, split: str = "test") -> Run:
        """The records of Tables 3 and 4 (scored on `split`), Table 5 and Figure 4. The ablation models,
        scored on another split (Table 6), and the few-shot variants, which train but are not scored,
        stay out."""
        folder = Path(records_dir)
        if not folder.is_dir():
            raise FileNotFoundError(f"{folder}: no records folder (run the study first)")
        scores, comets, trains, eamt22 = (load_records(folder, kind) for kind in ("score", "comet", "train", "eamt22"))
        scores, comets = ([r for r in records if r["split"] == split] for records in (scores, comets))
        translating = frozenset(r["model"] for r in scores)
        # Tables 3 and 4's models are scored in every direction; Voita et al.'s systems in some only (their table).
        directions = {m: {r["direction"] for r in scores if r["model"] == m} for m in {r["model"] for r in scores}}
        everywhere = max(map(len, directions.values()), default=0)
        scores, comets = ([r for r in records if len(directions.get(r["model"], ())) == everywhere]
                          for records in (scores, comets))
        scored = {(r["direction"], r["model"]) for r in scores}
        formality = [r for r in load_records(folder, "formality")   # Table 5's; Table 6 reads the validation set's
                     if (r["direction"], r["model"]) in scored and r.get("split", "test") == "test"]
        eamt22 = [r for r in eamt22 if r["split"] == "test"]   # Figure 4's; Table 6 reads the validation split's
        frames = {name: _read_csv(path(folder.parent)) for experiment in EXPERIMENTS.values()
                  for name, path in experiment.results.items()}
        run = cls(str(folder), scores, comets, [r for r in trains if (r["direction"], r["model"]) in scored], eamt22,
                  split, formality, translating, frames)
        if not run.scores or not run.trains:
            raise ValueError(f"{folder}: needs score records of the {split} split and train records")
        return run


    @property
    def seed(self) -> str:
        return ", ".join(sorted({str(r["spec"]["seed"]) for r in self.trains}))

    def describe(self, commit: bool = True) -> str:
        """Which run: study, commit (`commit`: the results page names it, the README leaves hashes to that page),
        seed and the records' dates."""
        records = self.scores + self.comets + self.trains
        commits = ", ".join(f"`{c[:12]}{'-dirty' if c.endswith('-dirty') else ''}`"
                            for c in sorted({r["git_commit"] for r in records}))
        created = sorted(r["created"][:10] for r in records if "created" in r)
        dates = created[0] if created[0] == created[-1] else f"{created[0]} to {created[-1]}"
        return (f"study `{', '.join(sorted({r['study'] for r in records}))}`, "
                + (f"commit {commits}, " if commit else "") + f"seed {self.seed}, records of {dates}")


def _read_csv(path: Path) -> pd.DataFrame | None:
    return pd.read_csv(path) if path.is_file() else None
