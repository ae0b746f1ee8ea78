"""Training cost per model (the paper's Table 3, GPU hours per epoch), measured without data.

Each contextual model of a config is built at the config's sizes (`mtcue.models.params`, the same
fairseq arguments that training uses) and timed over training updates on generated batches: a
forward pass, label-smoothed cross entropy, backward, gradient clipping and an Adam step, in
training mode (dropout on). Every model sees the same batches:

* sentence lengths (SentencePiece pieces, end-of-sentence included) drawn like subtitle lines:
  source 1 + Poisson(mean - 1), capped at `max_len`; the target the source's length plus a shift
  of -2..2 (also capped, at least 1);
* packed the way fairseq's `batch_by_size` packs them: sorted by length, then filled greedily
  while `sentences x longest sentence` (source or target, padding included) stays within
  `max_tokens`;
* context columns as each model reads them: vectors of the store's width (384 for MiniLM, 768 for
  DistilBERT) for MTCUE and NOVOTNEY-CUE, tag ids for TAGGING; every column present.

An update here is one batch (update_freq 1); `fwd_bwd_s` and `step_s` are reported apart, so the
cost of the paper's update (update_freq batches of max_tokens, then one optimiser step) follows.
"""
from __future__ import annotations

import statistics
import time

import numpy as np
import torch

# Table 3 of the paper: GPU hours per epoch.
PAPER_GPU_HOURS = {"tagging": 0.74, "mtcue": 0.81, "novotney_cue": 1.29}
PAPER_RATIOS = {"mtcue/tagging": round(0.81 / 0.74, 2), "novotney_cue/mtcue": round(1.29 / 0.81, 2)}


def sample_lengths(n: int, mean: float, max_len: int, seed: int) -> list[tuple[int, int]]:
    """`n` (source, target) lengths in pieces (see the module's docstring)."""
    rng = np.random.default_rng(seed)
    src = np.minimum(1 + rng.poisson(mean - 1, n), max_len)
    tgt = np.clip(src + rng.integers(-2, 3, n), 1, max_len)
    return [(int(s), int(t)) for s, t in zip(src, tgt)]


def pack(lengths: list[tuple[int, int]], max_tokens: int) -> list[list[tuple[int, int]]]:
    """Batches of (source, target) lengths, fairseq-style: sorted by (longest side, source, target),
    each batch as long as its sentences x its longest sentence stays within `max_tokens`."""
    batches, batch, longest = [], [], 0
    for pair in sorted(lengths, key=lambda p: (max(p), p)):
        if batch and (len(batch) + 1) * max(longest, max(pair)) > max_tokens:
            batches.append(batch)
            batch, longest = [], 0
        if max(pair) > max_tokens:
            raise ValueError(f"a sentence of {max(pair)} pieces does not fit max_tokens {max_tokens}")
        batch.append(pair)
        longest = max(longest, max(pair))
    return batches + ([batch] if batch else [])


def make_batch(pairs: list[tuple[int, int]], task, model_type: str, gen: torch.Generator) -> dict:
    """A training sample for `pairs`: net_input (source left-padded, previous output tokens
    right-padded, as fairseq's LanguagePairDataset collates) and target; context as the model reads
    it (`task.context_kind` set by build_model)."""
    from mtcue.config import store_kind
    from mtcue.models.fairseq_args import context_marker

    d = task.source_dictionary
    pad, eos, bsz = d.pad(), d.eos(), len(pairs)
    src_len, tgt_len = max(s for s, _ in pairs), max(t for _, t in pairs)
    src = torch.full((bsz, src_len), pad)
    target = torch.full((bsz, tgt_len), pad)
    prev = torch.full((bsz, tgt_len), pad)
    for i, (s, t) in enumerate(pairs):
        words = torch.randint(d.nspecial, len(d), (s - 1,), generator=gen)
        src[i, src_len - s:] = torch.cat([words, torch.tensor([eos])])
        words = torch.randint(d.nspecial, len(d), (t - 1,), generator=gen)
        target[i, :t] = torch.cat([words, torch.tensor([eos])])
        prev[i, :t] = torch.cat([torch.tensor([eos]), words])
    net_input = {"src_tokens": src, "src_lengths": torch.tensor([s for s, _ in pairs]), "prev_output_tokens": prev}
    kind = store_kind(model_type) and task.context_kind
    if kind == "vectors":
        net_input["context"] = torch.randn(bsz, task.n_columns, task.context_dim, generator=gen)
    elif kind == "tags":
        net_input["context"] = torch.randint(0, task.n_tags, (bsz, task.n_columns), generator=gen)
    elif kind == "tokens":  # a previous sentence as long as the source, as the token store batches it
        first = [d.bos()] if context_marker(model_type) else []
        context = torch.full((bsz, src_len + len(first)), pad)
        for i, (s, _) in enumerate(pairs):
            words = torch.randint(d.nspecial, len(d), (s - 1,), generator=gen)
            context[i, src_len - s:] = torch.cat([torch.tensor(first, dtype=torch.long), words, torch.tensor([eos])])
        net_input["context"], net_input["context_padding_mask"] = context, context.eq(pad)
        return {"net_input": net_input, "target": target}
    if kind:
        net_input["context_padding_mask"] = torch.zeros(bsz, task.n_columns, dtype=torch.bool)
    return {"net_input": net_input, "target": target}


def padded_tokens(batch: dict) -> int:
    """What fairseq's max_tokens bounds: sentences x the longer side's padded length."""
    n = batch["net_input"]
    return n["src_tokens"].shape[0] * max(n["src_tokens"].shape[1], n["prev_output_tokens"].shape[1])


def _to(batch: dict, device: torch.device) -> dict:
    return {"net_input": {k: v.to(device) for k, v in batch["net_input"].items()}, "target": batch["target"].to(device)}


def training_loss(model, batch: dict, label_smoothing: float) -> torch.Tensor:
    """The study's training loss on `batch` (fairseq's label-smoothed cross-entropy, padding ignored),
    summed, as the training steps that the benchmarks time or measure compute it."""
    from fairseq.criterions.label_smoothed_cross_entropy import label_smoothed_nll_loss

    out = model(**batch["net_input"])
    lprobs = model.get_normalized_probs(out, log_probs=True).view(-1, out[0].size(-1))
    loss, _ = label_smoothed_nll_loss(lprobs, batch["target"].view(-1), label_smoothing,
                                      ignore_index=model.decoder.dictionary.pad(), reduce=True)
    return loss


def time_updates(model, batches: list[dict], training: dict, warmup: int, device: torch.device,
                 fp16: bool = False) -> dict:
    """Seconds per update (forward + loss + backward, then clipping and the Adam step) over
    `batches`, the first `warmup` untimed."""
    model.to(device).train()
    optimiser = torch.optim.AdamW(model.parameters(), lr=training["lr"], betas=(0.9, 0.98), eps=1e-8,
                                  weight_decay=training["weight_decay"])
    sync = torch.cuda.synchronize if device.type == "cuda" else (lambda: None)
    fwd_bwd, step = [], []
    for i, batch in enumerate(batches):
        batch = _to(batch, device)
        sync()
        t0 = time.perf_counter()
        optimiser.zero_grad(set_to_none=True)
        with torch.autocast(device.type, dtype=torch.float16, enabled=fp16):
            loss = training_loss(model, batch, training["label_smoothing"])
        loss.backward()
        sync()
        t1 = time.perf_counter()
        torch.nn.utils.clip_grad_norm_(model.parameters(), training["clip_norm"])
        optimiser.step()
        sync()
        t2 = time.perf_counter()
        if i >= warmup:
            fwd_bwd.append(t1 - t0)
            step.append(t2 - t1)
    total = [a + b for a, b in zip(fwd_bwd, step)]

    def stats(xs):
        return {"mean": statistics.fmean(xs), "sd": statistics.stdev(xs) if len(xs) > 1 else 0.0}

    return {"update_s": stats(total), "fwd_bwd_s": stats(fwd_bwd), "step_s": stats(step), "timed_updates": len(total)}


def ratios(entries: dict) -> dict:
    """MTCUE/TAGGING and NOVOTNEY-CUE/MTCUE of the mean seconds per update, where both are measured
    (each type's model named after it, else its first model), beside the paper's."""
    by_type: dict[str, str] = {}
    for name, e in entries.items():
        if e["type"] not in by_type or name == e["type"]:
            by_type[e["type"]] = name
    out = {}
    for key in PAPER_RATIOS:
        num, den = key.split("/")
        if num in by_type and den in by_type:
            mean = {k: entries[by_type[k]]["update_s"]["mean"] for k in (num, den)}
            out[key] = {"measured": mean[num] / mean[den],
                        "paper": PAPER_RATIOS[key], "models": [by_type[num], by_type[den]]}
    return out


def bench_config(cfg: dict, models: list[str] | None = None, updates: int = 30, warmup: int = 3,
                 max_tokens: int | None = None, mean_len: float = 10.0, max_len: int = 64,
                 vocab_size: int = 32864, n_tags: int = 1000, seed: int = 1, device: str | None = None,
                 profile: int = 0) -> dict:
    """Seconds per training update of each contextual model of `cfg` (or of `models`), in its first
    direction, on the same generated batches of `max_tokens` (the config's training.max_tokens by
    default). `profile` > 0: also each model's top operators by self time (torch.profiler) over
    `profile` more updates (on the first timed batches), after the timing."""
    from mtcue import config as cfgmod

    from mtcue.models.params import torch_device

    dev = torch_device(device)
    names = models or [m for m in cfg["models"] if cfgmod.CONTEXT_KIND[cfg["models"][m]["type"]]]
    max_tokens = max_tokens or cfg["training"]["max_tokens"]
    n_batches = warmup + updates
    # Enough sentences for n_batches full batches of the generated lengths; keep the fullest ones
    # (the last batch of each length is partial), in a fixed shuffled order.
    lengths = sample_lengths(max(64, 2 * n_batches * max_tokens // max(1, int(mean_len))), mean_len, max_len, seed)
    packed = pack(lengths, max_tokens)
    rng = np.random.default_rng(seed)
    order = sorted(range(len(packed)), key=lambda i: -sum(max(p) for p in packed[i]))[:n_batches]
    if len(order) < n_batches:
        raise ValueError(f"only {len(order)} batches of {max_tokens} tokens generated, {n_batches} needed")
    chosen = [packed[i] for i in rng.permutation(order)]

    # On CPU, subnormal floats (tiny gradients and Adam moments of random data) make elementwise
    # kernels up to ~40x slower and the timings erratic; GPUs carry no such penalty. Flush them to
    # zero while timing, as GPU-like arithmetic (docs/benchmarks.md, "Training cost per model").
    flushed = dev.type == "cpu" and torch.set_flush_denormal(True)
    try:
        entries = _bench_models(cfg, names, chosen, warmup, dev, vocab_size, n_tags, seed, profile)
    finally:
        if flushed:
            torch.set_flush_denormal(False)
    return {
        "device": str(dev) if dev.type == "cpu" else torch.cuda.get_device_name(dev),
        "threads": torch.get_num_threads(),
        "flush_denormal": bool(flushed),
        "batches": {"max_tokens": max_tokens, "update_freq": 1, "warmup": warmup, "updates": updates,
                    "lengths": {"mean": mean_len, "max": max_len, "seed": seed}},
        "models": entries,
        "ratios": ratios(entries),
    }


def _bench_models(cfg, names, chosen, warmup, dev, vocab_size, n_tags, seed, profile=0) -> dict:
    from mtcue import config as cfgmod
    from mtcue.models import fairseq_args as fa
    from mtcue.models.params import ENCODER_DIMS, DataFreeTask, build_model, parse_arch_args

    entries = {}
    for name in names:
        spec = cfgmod.model_spec(cfg, name, cfg["directions"][0])
        columns = cfgmod.model_columns(cfg, name)
        encoder = spec.get("context", {}).get("encoder", "")
        model_type, arch_args = parse_arch_args(fa.arch_args(spec))
        task = DataFreeTask(vocab_size, ENCODER_DIMS.get(encoder.rsplit("/", 1)[-1], 384),
                            sum(c.startswith("doc") for c in columns), len(columns), n_tags=n_tags)
        torch.manual_seed(seed)
        model = build_model(model_type, {**arch_args, "dropout": spec["training"]["dropout"]}, task)
        gen = torch.Generator().manual_seed(seed)
        batches = [make_batch(pairs, task, model_type, gen) for pairs in chosen]
        fp16 = dev.type == "cuda" and spec["training"]["fp16"] in ("auto", True)
        timing = time_updates(model, batches, spec["training"], warmup, dev, fp16)
        timed = batches[warmup:]
        entries[name] = {
            "type": spec["type"],
            "parameters": sum(p.numel() for p in model.parameters()),
            "context": {"kind": task.context_kind, "columns": len(columns),
                        **({"width": task.context_dim} if task.context_kind == "vectors" else
                           {"n_tags": n_tags} if task.context_kind == "tags" else {})},
            **timing,
            "sentences_per_update": statistics.fmean(b["target"].shape[0] for b in timed),
            "padded_tokens_per_update": statistics.fmean(padded_tokens(b) for b in timed),
            "target_tokens_per_update": statistics.fmean(int(b["target"].ne(model.decoder.dictionary.pad()).sum())
                                                         for b in timed),
        }
        if profile:
            entries[name]["top_operators"] = top_operators(model, timed[:profile], spec["training"], dev, fp16)
        del model
    return entries


def top_operators(model, batches: list[dict], training: dict, device: torch.device, fp16: bool = False,
                  n: int = 10) -> list[dict]:
    """The `n` operators with the most self time (CPU, or CUDA where the model runs there) over
    updates on `batches`: name, seconds per update and share of all operators' self time."""
    from torch.profiler import ProfilerActivity, profile

    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if device.type == "cuda" else [])
    with profile(activities=activities) as prof:
        time_updates(model, batches, training, 0, device, fp16)
    attr = "self_device_time_total" if device.type == "cuda" else "self_cpu_time_total"
    events = [e for e in prof.key_averages() if getattr(e, attr, 0) > 0]
    total = sum(getattr(e, attr) for e in events)
    events.sort(key=lambda e: -getattr(e, attr))
    return [{"name": e.key, "s_per_update": getattr(e, attr) / 1e6 / len(batches), "share": getattr(e, attr) / total}
            for e in events[:n]]
