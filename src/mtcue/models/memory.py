"""Memory growth with the number of context sentences (the shortening paper's Figure 4, sequence shortening; the
training step is an extra the shortening paper lacks), measured without data or trained weights.

Each document-level model of a config is built at the config's sizes with random weights (memory
depends on shapes, not on trained values) and run on one fixed generated batch whose context holds
c = 1..N sentences: the peak memory of (a) beam-search decoding (`generation.beam`, every
hypothesis forced to the batch's target length, so that the random model's end-of-sentence
choices cannot change what is measured) and (b) a training step's forward pass, label-smoothed
loss and backward pass (dropout on), each above what was allocated before it: the model's weights
(and, for (b), their gradients; the optimiser's update, constant in c, is left out).

What c context sentences are, by the model's context kind (CONTEXT_KIND):
- "tokens" (CONCAT, VOITA-CONTEXT): c previous sentences, each `<s> line </s>` as the token store
  batches a slot, concatenated into one context sequence. A model whose arch names its number of
  context sentences (`context_sentences`, the sequence-shortening family, which reads slots
  prev1..prevC as [B, C, L], each `line </s>` without the marker: fairseq_args.context_marker) is
  built for c sentences and reads them stacked, [B, c, L]: with
  random weights, the model trained with fewer sentences reading c differs from it only in the
  size of its per-sentence embeddings.
- "vectors" (MTCUE, NOVOTNEY-CUE): c previous-line vectors (doc1..docc) beside doc0 and the
  model's other columns (metadata); document positions for as many slots as the model was trained
  with (a longer context's extra slots get none, as MTCue reads columns beyond its positions).

Peaks: on a GPU `torch.cuda.max_memory_allocated` after a reset; on CPU the allocator's own
allocation and free events, recorded by torch.profiler (profile_memory) and replayed in order.
"""
from __future__ import annotations

import csv
import io
import itertools
import logging
from collections import defaultdict
from collections.abc import Callable, Iterable
from pathlib import Path

import torch
from matplotlib.figure import Figure

from mtcue.plots import MARKERS, grid, model_colours, model_legend
from mtcue.study import display_name

log = logging.getLogger("mtcue")
MIB = 2 ** 20
PHASES = ("decode", "train")
CSV_COLUMNS = ["model", "context_sentences", "phase", "peak_mib"]


def peak_bytes(fn: Callable[[], object], device: torch.device) -> int:
    """The peak of memory allocated while `fn` runs, above what was allocated when it started (bytes)."""
    if device.type == "cuda":
        torch.cuda.synchronize(device)
        torch.cuda.reset_peak_memory_stats(device)
        before = torch.cuda.memory_allocated(device)
        fn()
        torch.cuda.synchronize(device)
        return torch.cuda.max_memory_allocated(device) - before
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        fn()
    # The raw events: the aggregated ones fold each allocation into the operator that made it.
    events = sorted((e.start_ns(), e.nbytes()) for e in prof.profiler.kineto_results.events()
                    if e.name() == "[memory]" and e.device_type() == torch.autograd.DeviceType.CPU)
    held = peak = 0
    for _, nbytes in events:  # an allocation is positive, a free negative
        held += nbytes
        peak = max(peak, held)
    return peak


def _sentences(bsz: int, length: int, n: int, dictionary, gen: torch.Generator, marker: bool) -> list[torch.Tensor]:
    """`n` context sentences as the token store's slot: `<s> words </s>` [bsz, length + 1] with the
    `marker`, else `words </s>` [bsz, length] (a source sentence's length)."""
    d = dictionary
    out = []
    for _ in range(n):
        words = torch.randint(d.nspecial, len(d), (bsz, length - 1), generator=gen)
        first = [torch.full((bsz, 1), d.bos())] if marker else []
        out.append(torch.cat([*first, words, torch.full((bsz, 1), d.eos())], dim=1))
    return out


def make_batch(model, task, kind: str, n_context: int, bsz: int, length: int, gen: torch.Generator,
               doc_columns: int = 0, other_columns: int = 0, stacked: bool = False, marker: bool = True) -> dict:
    """A training sample of `bsz` sentences of `length` pieces (source and target, `</s>` included)
    with `n_context` context sentences, as `model` reads them (see the module's docstring); `stacked`:
    token context as [bsz, n_context, length (+ 1 with the `marker`)] rather than concatenated."""
    d = task.source_dictionary
    words = torch.randint(d.nspecial, len(d), (bsz, length - 1), generator=gen)
    eos = torch.full((bsz, 1), d.eos())
    src = torch.cat([words, eos], dim=1)
    target_words = torch.randint(d.nspecial, len(d), (bsz, length - 1), generator=gen)
    net_input = {"src_tokens": src, "src_lengths": torch.full((bsz,), length),
                 "prev_output_tokens": torch.cat([eos, target_words], dim=1)}
    if kind == "tokens":
        sentences = _sentences(bsz, length, n_context, d, gen, marker)
        context = torch.stack(sentences, dim=1) if stacked else torch.cat(sentences, dim=1)
        net_input.update(context=context, context_padding_mask=context.eq(d.pad()))
    elif kind == "vectors":
        columns = 1 + n_context + other_columns
        net_input["context"] = torch.randn(bsz, columns, task.context_dim, generator=gen)
        net_input["context_padding_mask"] = torch.zeros(bsz, columns, dtype=torch.bool)
        model.encoder.context_encoder.set_doc_columns(min(1 + n_context, doc_columns))
    else:
        raise ValueError(f"context kind {kind!r}: the memory benchmark knows 'tokens' and 'vectors'")
    return {"net_input": net_input, "target": torch.cat([target_words, eos], dim=1)}


def _to(batch: dict, device: torch.device) -> dict:
    return {"net_input": {k: v.to(device) for k, v in batch["net_input"].items()}, "target": batch["target"].to(device)}


def decode_peak(model, batch: dict, beam: int, device: torch.device) -> int:
    """Peak bytes of beam search over `batch`'s sources, every hypothesis `target length` long."""
    from fairseq.sequence_generator import SequenceGenerator

    model.eval()
    length = batch["target"].shape[1]
    generator = SequenceGenerator([model], model.decoder.dictionary, beam_size=beam, max_len_a=0,
                                  max_len_b=length, min_len=length)
    sample = {"net_input": {k: v for k, v in batch["net_input"].items() if k != "prev_output_tokens"}}
    with torch.no_grad():
        return peak_bytes(lambda: generator.generate([model], sample), device)


def train_peak(model, batch: dict, training: dict, device: torch.device) -> int:
    """Peak bytes of a training step's forward and backward pass on `batch`, above the weights and
    their gradients (allocated by an unmeasured pass first, as in any training after its first step).
    What is proportional to the weights whatever the context — gradients, the optimiser's moments
    and update — is left out: at the paper's sizes it hid the growth (MTCUE's step peaked at 502 MiB
    with an Adam update, 441 MiB with new gradients, for every c from 1 to 6)."""
    from mtcue.models.train_cost import training_loss

    model.train()

    def step():
        training_loss(model, batch, training["label_smoothing"]).backward()

    step()
    model.zero_grad(set_to_none=False)  # kept: the measured pass accumulates into them
    return peak_bytes(step, device)


PLAN_KEYS = ("batch", "beam", "curves", "seed", "specs", "vocab_size")


def check_plan(plan, source: str = "--plan") -> None:
    """A plan written by hand (`--plan`) holds what MemoryGrowth.plan writes, and every model a
    curve names has a spec of a known type: else an error naming `source`, before any model is built."""
    from mtcue.models.fairseq_args import FAIRSEQ_ARCH

    for key in PLAN_KEYS:
        if not isinstance(plan, dict) or key not in plan:
            raise ValueError(f"{source}: lacks {key!r} (give what MemoryGrowth.plan writes: "
                             f"{', '.join(PLAN_KEYS)})")
    specs = plan["specs"]
    for label, names in plan["curves"].items():
        for name in names:
            if name not in specs:
                raise ValueError(f"{source}: curve {label!r} names the model {name!r}, which has no spec in the plan "
                                 f"(specs: {', '.join(sorted(specs)) or 'none'})")
            if specs[name].get("type") not in FAIRSEQ_ARCH:
                raise ValueError(f"{source}: the spec of {name!r} has the model type {specs[name].get('type')!r}, not "
                                 f"one of {sorted(FAIRSEQ_ARCH)}")


def measure(plan: dict, device: str | None = None) -> list[dict]:
    """Rows {model, context_sentences, phase, peak_mib} for every curve of `plan` (MemoryGrowth.plan)."""
    from mtcue.models import fairseq_args as fa
    from mtcue.models.params import ENCODER_DIMS, DataFreeTask, build_model, parse_arch_args, torch_device

    check_plan(plan)
    dev = torch_device(device)
    batch_cfg = plan["batch"]
    rows = []
    for label, names in plan["curves"].items():
        for c, name in enumerate(names, 1):
            spec = plan["specs"][name]
            stacked = "context_sentences" in spec["arch"]
            if stacked:
                spec = {**spec, "arch": {**spec["arch"], "context_sentences": c}}
            kind = spec["context"]["kind"]
            columns = spec["context"].get("columns", [])
            doc = sum(col.startswith("doc") for col in columns)
            encoder = spec["context"].get("encoder", "")
            model_type, arch_args = parse_arch_args(fa.arch_args(spec))
            task = DataFreeTask(plan["vocab_size"], ENCODER_DIMS.get(encoder.rsplit("/", 1)[-1], 384),
                                doc, len(columns))
            torch.manual_seed(plan["seed"])
            model = build_model(model_type, {**arch_args, "dropout": spec["training"]["dropout"]}, task).to(dev)
            gen = torch.Generator().manual_seed(plan["seed"])
            batch = _to(make_batch(model, task, kind, c, batch_cfg["sentences"], batch_cfg["length"], gen,
                                   doc, len(columns) - doc, stacked, fa.context_marker(spec["type"])), dev)
            peaks = {"decode": decode_peak(model, batch, plan["beam"], dev),
                     "train": train_peak(model, batch, spec["training"], dev)}
            for phase in PHASES:
                rows.append({"model": label, "context_sentences": c, "phase": phase,
                             "peak_mib": round(peaks[phase] / MIB, 3)})
            log.info("%s, %d context sentences (model %s on %s): decode %.2f MiB, train %.2f MiB", label, c, name,
                     dev, peaks["decode"] / MIB, peaks["train"] / MIB)
            del model
    return rows


def write_csv(rows: list[dict], path: str | Path) -> Path:
    from mtcue.io import atomic_write_text

    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=CSV_COLUMNS, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return atomic_write_text(path, buffer.getvalue())


def read_csv(path: str | Path) -> list[dict]:
    """The rows of a memory-growth CSV; a file with other columns is an error naming it."""
    with open(path, newline="", encoding="utf-8") as f:
        reader = csv.DictReader(f)
        if reader.fieldnames != CSV_COLUMNS:
            raise ValueError(f"{path}: columns {reader.fieldnames}, expected {CSV_COLUMNS}")
        return [{"model": r["model"], "context_sentences": int(r["context_sentences"]), "phase": r["phase"],
                 "peak_mib": float(r["peak_mib"])} for r in reader]


def figure(rows: Iterable[dict]) -> Figure:
    """Peak memory above the weights (MiB) against the number of context sentences, a panel per phase
    (decoding, as Mąka et al.'s Figure 4, then a training step), a line per model;
    rows as `write_csv` writes them."""
    curves: dict[str, dict[str, list[tuple[int, float]]]] = defaultdict(lambda: defaultdict(list))
    for r in rows:
        curves[r["phase"]][display_name(r["model"])].append((int(r["context_sentences"]), float(r["peak_mib"])))
    phases = [p for p in ("decode", "train") if p in curves]
    if not phases:
        raise ValueError("no memory-growth rows to plot")
    names = list(dict.fromkeys(m for p in phases for m in curves[p]))
    colours = model_colours(names)
    markers = dict(zip(names, itertools.cycle(MARKERS)))
    fig, axes = grid(len(phases), ncols=2)
    for ax, phase in zip(axes, phases):
        for name in names:
            xs, ys = zip(*sorted(curves[phase][name]))
            ax.plot(xs, ys, marker=markers[name], ms=4, lw=1.5, color=colours[name], label=name)
        ax.set_title({"decode": "decoding (beam search)", "train": "one training step"}[phase])
        ax.set_xlabel("context sentences")
        ax.set_ylabel("peak memory above weights (MiB)")
        ax.grid(alpha=0.3)
    fig.tight_layout(rect=(0, model_legend(fig, colours, names, markers=markers), 1, 1))
    return fig
