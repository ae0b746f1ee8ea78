"""COMET scoring of detokenised hypotheses with unbabel-comet (reads plain files only).

A model is a local checkpoint (`.../checkpoints/model.ckpt`, or the directory holding
`checkpoints/model.ckpt` and `hparams.yaml`) or a name that unbabel-comet downloads from the
Hugging Face hub (or, for its legacy short names such as wmt20-comet-da, from S3). Offline
without a cache, a hub name fails within milliseconds when the host does not resolve; where
the network silently drops connections instead, the hub client waits for the OS connect
timeout, so set HF_HUB_OFFLINE=1 there (the hub client then only looks in its cache).
"""

from __future__ import annotations

import logging
import warnings
from pathlib import Path

from mtcue import pretrained
from mtcue.evaluation.score import hyp_provenance, read_hyps_and_corpus
from mtcue.outputs import atomic_directory
from mtcue.progress import Progress

CHECKPOINT = Path("checkpoints") / "model.ckpt"


class CometUnavailable(RuntimeError):
    """The COMET model cannot be obtained (no local checkpoint, no hub access)."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


def import_comet():
    """Import unbabel-comet quietly: its torchmetrics 0.10 imports the deprecated pkg_resources
    (a UserWarning on every run), and Lightning logs accelerator banners and tips at INFO on
    every predict call, comet "Encoder model frozen." on every load."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="pkg_resources is deprecated", category=UserWarning)
        import comet
    for name in ("pytorch_lightning", "lightning_fabric", "comet"):
        logging.getLogger(name).setLevel(logging.WARNING)
    return comet


def _unavailable(model: str, why: str) -> CometUnavailable:
    return CometUnavailable(
        f"COMET model {model!r} is unavailable: {why}. It needs a one-time download from the "
        "Hugging Face hub (Unbabel/wmt20-comet-da is ~2.3 GB, plus its encoder's tokenizer): run "
        "this step once with network access, or point evaluation.comet.model at a local "
        "checkpoint (.../checkpoints/model.ckpt or its model directory)"
    )


def resolve_model(model: str) -> Path:
    """The checkpoint file of `model`: its copy in the study's pretrained folder where the workflow set one
    (mtcue.pretrained), else a local checkpoint (file or model directory), else downloaded (or taken from
    the hub cache). Raises CometUnavailable."""
    try:
        fetched = pretrained.resolve(model)
    except pretrained.PretrainedMissing as err:
        raise CometUnavailable(str(err)) from None
    return local_checkpoint(model, fetched) or download(model)


def local_checkpoint(model: str, path: Path | None = None) -> Path | None:
    """The checkpoint file of `model` at `path` (default: `model` as a path; a file or model directory);
    None where `model` is a hub name. Raises CometUnavailable for a local checkpoint that is not there."""
    path = path or Path(model).expanduser()
    if path.is_dir():
        path = path / CHECKPOINT
    if path.is_file():
        return path
    if Path(model).is_absolute() or path.suffix == ".ckpt":
        raise _unavailable(model, f"no checkpoint at {path}")
    return None


def download(model: str, folder: Path | None = None) -> Path:
    """The checkpoint file of hub model `model`, downloaded into `folder` (default: the hub cache) or taken
    from there. Raises CometUnavailable. A hub id (`org/name`) goes to the hub client as unbabel-comet's
    download does first, without importing unbabel-comet (10-30 s on 2 cores) where the hub is out of
    reach; a legacy short name (wmt20-comet-da) goes through unbabel-comet."""
    try:
        if "/" in model:
            from huggingface_hub import snapshot_download

            return Path(snapshot_download(repo_id=model, cache_dir=folder)) / CHECKPOINT
        return Path(import_comet().download_model(model, saving_directory=folder and str(folder)))
    except Exception as err:  # comet turns every hub failure into KeyError("not supported")
        raise _unavailable(model, "it is not in the local hub cache and the download failed") from err


def fetch_model(model: str, dest: Path) -> dict:
    """The COMET model into `dest` (rule pretrained_models): a local checkpoint's model folder copied, a hub
    name downloaded there; then loaded once, so the files of its encoder that it loads from the hub (the
    tokenizer, the configuration) are in the hub cache the jobs read (HF_HUB_CACHE, set by the workflow).
    Its manifest entry ({"path" of the checkpoint under dest's parent, "source"})."""
    try:
        local = local_checkpoint(model)
        if local is not None:  # COMET reads <model folder>/hparams.yaml beside checkpoints/: the folder is copied
            source = local.parents[len(CHECKPOINT.parts) - 1]
            pretrained.copy_model(source, dest)
            checkpoint = dest / local.relative_to(source)
        else:
            source = "huggingface hub"
            with atomic_directory(dest, "fetch-pretrained") as tmp:
                checkpoint = dest / download(model, tmp).relative_to(tmp)
        load_model(str(checkpoint))
    except CometUnavailable as err:
        raise pretrained.PretrainedMissing(err.reason) from None
    return {"path": str(checkpoint.relative_to(dest.parent)), "source": str(source)}


def availability(model: str) -> dict:
    """Whether `model` can be had, decided once per study (rule comet_model) rather than by every
    COMET job: {"comet_model", "checkpoint" (its file, or None), "unavailable" (None, or why)}."""
    try:
        return {"comet_model": model, "checkpoint": str(resolve_model(model)), "unavailable": None}
    except CometUnavailable as err:
        return {"comet_model": model, "checkpoint": None, "unavailable": err.reason}


def load_model(model: str):
    """The COMET model from a local checkpoint, else downloaded (or taken from the hub cache)."""
    path = resolve_model(model)
    try:
        return import_comet().load_from_checkpoint(str(path))
    except OSError as err:  # transformers: the encoder's tokenizer/config is neither cached nor reachable
        raise _unavailable(model, f"loading its encoder failed ({err})") from err


def comet_scores(sources: list[str], hyps: list[str], refs: list[str], model_name_or_path: str,
                 batch_size: int = 16, gpus: int | None = None) -> dict:
    """System score and per-segment scores, both x100 (as the paper reports COMET)."""
    if not len(sources) == len(hyps) == len(refs):
        raise ValueError(f"{len(sources)} sources, {len(hyps)} hypotheses, {len(refs)} references")
    if not hyps:
        raise ValueError("cannot score an empty test set")
    model = load_model(model_name_or_path)
    if gpus is None:
        import torch

        gpus = 1 if torch.cuda.is_available() else 0
    samples = [{"src": s, "mt": h, "ref": r} for s, h, r in zip(sources, hyps, refs)]
    with warnings.catch_warnings(), Progress("COMET", len(samples), "segments") as progress:
        # pytorch-lightning 2.6 with torch >= 2.10 warns about pytree's LeafSpec once per batch.
        warnings.filterwarnings("ignore", message=r"`isinstance\(treespec, LeafSpec\)`", category=FutureWarning)
        # Progress through Lightning's batch-end hook (a no-op in COMET) rather than COMET's bar, which
        # is a bar in a log file too; the batches, so the scores, stay COMET's own.
        model.on_predict_batch_end = lambda outputs, *_: progress.advance(len(outputs["scores"]))
        out = model.predict(samples, batch_size=batch_size, gpus=gpus, progress_bar=False)
    return {"comet": 100 * out.system_score, "segment_scores": [100 * s for s in out.scores]}


def comet_files(hyp_path: str | Path, corpus_jsonl_path: str | Path, direction: str, model: str,
                batch_size: int = 16, required: bool = False, known: dict | None = None) -> dict:
    """COMET of a hypothesis file against the cleaned corpus of its direction: the fields of a
    comet record. With required=False an unavailable model gives comet None and the reason.
    `known`: the model's `availability`, already decided (then an unavailable model costs nothing)."""
    src, tgt = direction.split("-")
    hyps, samples = read_hyps_and_corpus(hyp_path, corpus_jsonl_path, direction)
    result = {"comet": None, "segment_scores": None, "unavailable": None}
    if known is not None and known["comet_model"] != model:
        raise ValueError(f"the availability given is that of COMET model {known['comet_model']!r}, not {model!r}")
    try:
        if known is not None and known["unavailable"]:
            raise CometUnavailable(known["unavailable"])
        result |= comet_scores([s["text"][src] for s in samples], hyps, [s["text"][tgt] for s in samples],
                               known["checkpoint"] if known else model, batch_size)
    except CometUnavailable as err:
        if required:
            raise
        result["unavailable"] = err.reason
    return {
        "comet_model": model,
        **result,
        **hyp_provenance(hyp_path, hyps),
    }
