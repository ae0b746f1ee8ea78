"""Steps of the models stage: training, translation, parameter counts."""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from mtcue import config as cfgmod
from mtcue.io import atomic_write_text
from mtcue.options import json_option, options, positive_int, with_provenance
from mtcue.experiments.memory_growth.plan import MEMORY_GROWTH
from mtcue.plan.models import model_spec


def spec_from_args(args: argparse.Namespace) -> dict:
    """A model spec from --spec (JSON, as Snakemake passes it) or --config + --model (by hand)."""
    if args.spec:
        return json.loads(args.spec)
    if not (args.config and args.model):
        raise cfgmod.ConfigError("give --spec JSON, or --config FILE with --model NAME")
    return model_spec(cfgmod.load(args.config), args.model, args.direction)


def cmd_train(a):
    from mtcue.models.train import train
    from mtcue.records import write_record

    record = train(spec_from_args(a), a.direction, Path(a.data_bin), Path(a.checkpoint_dir), Path(a.out),
                   Path(a.context_dir) if a.context_dir else None,
                   Path(a.init_checkpoint) if a.init_checkpoint else None, a.threads, gpus=a.gpus,
                   save_interval_updates=a.save_interval_updates, workers=a.workers)
    write_record(a.record, {"kind": "train", **with_provenance(record, a.study)})


def cmd_translate(a):
    from mtcue.corpus import read_corpus
    from mtcue.models.translate import check_split_matches_corpus, translate

    n = sum(1 for _ in read_corpus(a.corpus))
    check_split_matches_corpus(Path(a.data_bin), a.direction, a.split, Path(a.corpus), n)
    translate(spec_from_args(a), a.direction, Path(a.data_bin), Path(a.checkpoint), a.split, n, Path(a.out),
              cfgmod.generation_settings(json_option(a.generation, "--generation")), Path(a.context_dir) if a.context_dir else None, a.threads)


def cmd_translate_text(a):
    from mtcue.io import decode_lines
    from mtcue.models.translate_text import translate_text

    sources = [line.rstrip("\n") for _, line in decode_lines(sys.stdin.buffer, "standard input")]
    hyps = translate_text(_model(a), sources, a.context, a.previous, {"beam": a.beam}, a.threads, a.cue)
    sys.stdout.write("".join(h + "\n" for h in hyps))


def cmd_translate_prompts(a):
    from mtcue.io import read_text
    from mtcue.models.translate_text import translate_prompted

    sources = read_text(a.source).removesuffix("\n").split("\n")
    counts = translate_prompted(_model(a), sources, json_option(a.prompts, "--prompts"), a.out,
                                json_option(a.generation, "--generation"), a.threads)
    print(json.dumps(counts))


def cmd_translate_levels(a):
    from mtcue.io import read_text
    from mtcue.models.translate_text import translate_levels

    sources = read_text(a.source).removesuffix("\n").split("\n")
    print(json.dumps(translate_levels(_model(a), sources, a.levels, a.out, json_option(a.generation, "--generation"),
                                      a.threads)))


def _levels(text: str) -> list[int]:
    """argparse type of --levels: '1,5' -> [1, 5]."""
    levels = [n.strip() for n in text.split(",")]
    if not all(n.isascii() and n.isdigit() and 1 <= int(n) <= 5 for n in levels):
        raise argparse.ArgumentTypeError(f"{text!r}: comma-separated style levels 1..5, e.g. 1,2,3,4,5")
    return [int(n) for n in levels]


def cmd_translate_corpus(a):
    from mtcue.corpus import read_corpus
    from mtcue.io import write_lines
    from mtcue.models.translate_text import translate_corpus

    samples = list(read_corpus(a.corpus))
    if not samples:
        raise ValueError(f"{a.corpus}: no lines to translate")
    hyps = translate_corpus(_model(a), samples, a.columns.split(",") if a.columns else None,
                            json_option(a.generation, "--generation"), a.threads, a.corpus)
    write_lines(a.out, hyps)


def cmd_bench_translate(a):
    from mtcue.models.bench import benchmark_translation

    print(json.dumps(benchmark_translation(a.model_dir, a.corpus, a.split, a.calls), indent=2))


def cmd_count_params(a):
    from mtcue.models.params import count_config

    print(json.dumps(count_config(cfgmod.load(a.config), a.vocab_size, a.n_tags), indent=2))


def cmd_gpu_hours(a):
    from mtcue.plan.gpu_hours import calendar_markdown, gpu_hours_markdown, target_markdown, target_trainings
    from mtcue.plan.models import trained_models
    from mtcue.plan.evaluation import evaluations
    from mtcue.plan.resources import evaluation_hours
    from mtcue.plan.submissions import profile_jobs

    cfg = cfgmod.load(a.config)
    print(target_markdown(cfg, a.target) if a.target else gpu_hours_markdown(cfg), end="")
    if a.gpus:
        trained = target_trainings(cfg, a.target) if a.target else trained_models(cfg)
        steps = evaluations(cfg)
        evaluation = {(d, m): evaluation_hours(cfg, steps.get((d, m)), m, d) for d, m in trained}
        print("\n" + calendar_markdown(cfg, tuple(a.gpus), evaluation, a.jobs or profile_jobs(), a.target), end="")


def cmd_cluster_plan(a):
    from mtcue.plan.submissions import plan_submissions, submissions_markdown, summary_markdown

    extra = a.snakemake[1:] if a.snakemake[:1] == ["--"] else a.snakemake
    subs = plan_submissions([*extra, "--configfile", *a.configfile])
    print((submissions_markdown if a.every else summary_markdown)(subs), end="")


def cmd_bench_train_cost(a):
    from mtcue.models.train_cost import bench_config

    if a.threads:
        import torch

        torch.set_num_threads(a.threads)
    result = bench_config(cfgmod.load(a.config), a.models.split(",") if a.models else None, a.updates, a.warmup,
                          a.max_tokens, a.mean_len, a.max_len, a.vocab_size, a.n_tags, a.seed, a.device,
                          a.profile)
    text = json.dumps(result, indent=2)
    if a.out:
        atomic_write_text(a.out, text + "\n")
    print(text)


def cmd_memory_growth(a):
    import torch

    from mtcue.models.memory import figure, measure, write_csv
    from mtcue.plots import save_svg

    torch.set_num_threads(a.threads)
    plan = json_option(a.plan, "--plan") if a.plan else MEMORY_GROWTH.plan(cfgmod.load(a.config))
    if not plan:
        raise SystemExit("--plan: no curve: nothing to measure" if a.plan else
                         f"{a.config}: experiments.memory_growth.models is empty: nothing to measure")
    rows = measure(plan, a.device)
    write_csv(rows, a.csv)
    save_svg(figure(rows), a.svg)


def _model_option(s) -> None:
    where = s.add_mutually_exclusive_group(required=True)
    where.add_argument("--model-dir", help="a trained model's folder: results/models/{direction}/{model}")
    where.add_argument("--run", metavar="RUN_ID", help="instead, the MLflow run of a trained model (its logged model; "
                       "the store is MLFLOW_TRACKING_URI, else sqlite:///results/mlflow.db of the current folder)")


def _model(a) -> str:
    """What Translator.load reads: the model folder, or the run's "runs:/<run id>"."""
    return f"runs:/{a.run}" if a.run else a.model_dir


def _model_args(s) -> None:
    s.add_argument("--spec", help="model spec as JSON (what Snakemake passes)")
    s.add_argument("--config", help="config file, with --model, instead of --spec")
    s.add_argument("--model", help="model name in the config")
    s.add_argument("--direction", required=True)
    s.add_argument("--data-bin", required=True)
    s.add_argument("--context-dir")
    s.add_argument("--threads", type=positive_int, default=1)


def register(step) -> None:
    s = step("train", cmd_train, "train (or resume) one model with fairseq-train", options("out", "record"))
    _model_args(s)
    s.add_argument("--checkpoint-dir", required=True, help="resumable checkpoints (kept across failures)")
    s.add_argument("--init-checkpoint", help="checkpoint of the model named by init_from")
    s.add_argument("--out", required=True, help="where the best checkpoint is copied")
    s.add_argument("--record", required=True, help="training record (JSON)")
    s.add_argument("--study", required=True)
    s.add_argument("--gpus", type=positive_int, default=1,
                   help="GPUs to train on (more than one: fairseq's data-parallel training on one node)")
    s.add_argument("--workers", type=int, default=0,
                   help="data-loader processes (fairseq's --num-workers), counted in --threads")
    s.add_argument("--save-interval-updates", type=int, default=1000,
                   help="also save checkpoint_last.pt every N updates within an epoch (a killed job loses less)")

    s = step("translate", cmd_translate, "beam-search translation of a split with fairseq-generate", options("out"))
    _model_args(s)
    s.add_argument("--checkpoint", required=True)
    s.add_argument("--split", required=True)
    s.add_argument("--corpus", required=True, help="the cleaned corpus of the split (for the sample count)")
    s.add_argument("--generation", default="{}", help="generation settings (JSON; the schema's defaults otherwise)")
    s.add_argument("--out", required=True)

    s = step("translate-text", cmd_translate_text, "translate sentences (stdin, one per line) with a trained model "
             "and free-text context; translations to stdout")
    _model_option(s)
    s.add_argument("--cue", metavar="TEXT", help="a register or other cue ('Formal conversation'), read as Table 5 "
                   "reads its prompts: the model's whole context (not with --context or --previous)")
    s.add_argument("--context", action="append", default=[], metavar="TEXT",
                   help="a context string (metadata such as 'Drama, Family, Romance'); repeat for several")
    s.add_argument("--previous", action="append", default=[], metavar="TEXT",
                   help="a preceding line, most recent first; repeat for several")
    s.add_argument("--beam", type=positive_int, default=5)
    s.add_argument("--threads", type=positive_int, default=1)

    s = step("translate-prompts", cmd_translate_prompts, "zero-shot prompting: translate a file of sentences "
             "once per prompt, the prompt the only context beside the sentence itself")
    _model_option(s)
    s.add_argument("--source", required=True, help="sentences to translate, one per line")
    s.add_argument("--prompts", required=True, help='JSON {"prompt id": "text", ...}; {} for a model without context')
    s.add_argument("--generation", default="{}", help="generation settings (JSON; the schema's defaults otherwise)")
    s.add_argument("--threads", type=positive_int, default=1)
    s.add_argument("--out", required=True, help="folder of {prompt id}.txt (none.txt for a model without context)")

    s = step("translate-levels", cmd_translate_levels, "supervised style control: a style-control model "
             "translates a file of sentences once per style level")
    _model_option(s)
    s.add_argument("--source", required=True, help="sentences to translate, one per line")
    s.add_argument("--levels", required=True, type=_levels, help="comma-separated levels 1..5, e.g. 1,2,3,4,5")
    s.add_argument("--generation", default="{}", help="generation settings (JSON; the schema's defaults otherwise)")
    s.add_argument("--threads", type=positive_int, default=1)
    s.add_argument("--out", required=True, help="folder of level{N}.txt")

    s = step("translate-corpus", cmd_translate_corpus, "translate a corpus-format file (an evaluation set), "
             "each line with its own context, with a trained model", options("out"))
    _model_option(s)
    s.add_argument("--corpus", required=True, help="corpus-format JSONL (docs/formats.md, section 1)")
    s.add_argument("--columns", help="comma-separated context columns to read instead of the model's own")
    s.add_argument("--generation", default="{}", help="generation settings (JSON; the schema's defaults otherwise)")
    s.add_argument("--threads", type=positive_int, default=1)
    s.add_argument("--out", required=True)

    s = step("bench-translate", cmd_bench_translate, "the Python API against fairseq-generate and translate-text: "
             "load time and sentences/s on a split of the study")
    s.add_argument("--model-dir", required=True, help="a trained model's folder: results/models/{direction}/{model}")
    s.add_argument("--corpus", required=True, help="the cleaned corpus of the split (results/clean/{pair}/{split}.jsonl)")
    s.add_argument("--split", default="test", help="the binarised split of that corpus")
    s.add_argument("--calls", type=positive_int, default=3, help="translate-text calls of one line to time")

    s = step("count-params", cmd_count_params, "count the parameters of every model of a config")
    s.add_argument("--config", required=True)
    s.add_argument("--vocab-size", type=int, default=32864)
    s.add_argument("--n-tags", type=int, default=1000,
                   help="TAGGING's tag vocabulary (data-dependent: see a tag store's manifest)")

    s = step("gpu-hours", cmd_gpu_hours, "what a config's trainings cost on one A100-class GPU, per experiment "
             "(the paper's Table 3 GPU hours per epoch and the config's epochs; docs/paper-scale.md)")
    s.add_argument("--config", required=True)
    s.add_argument("--gpus", type=positive_int, nargs="+",
                   help="also the calendar: the study's projected wall time of its trainings and their evaluations "
                   "on each of these GPU counts")
    s.add_argument("--jobs", type=positive_int,
                   help="jobs at once in the calendar (default: the SLURM profile's `jobs`, slurm/config.yaml here)")
    s.add_argument("--target", nargs="+", metavar="TABLE",
                   help="only what these tables or figures take (e.g. table4_quality, as `snakemake table4_quality` "
                        "trains it: their experiments' models and the parents those start from), beside the whole "
                        "study")

    s = step("cluster-plan", cmd_cluster_plan, "every sbatch submission of a study through the SLURM profile (rule "
             "or group, GPUs, CPUs, memory, minutes, partition), from a dry run, before anything is queued")
    s.add_argument("--configfile", nargs="+", required=True, help="the study's config (and a site file after it)")
    s.add_argument("--every", action="store_true",
                   help="one row per submission (default: the submissions counted by rule or group and request)")
    s.add_argument("snakemake", nargs=argparse.REMAINDER,
                   help="after --: further snakemake arguments (targets, --set-resources, --directory)")

    s = step("memory-growth", cmd_memory_growth, "peak memory of decoding and of a training step above the "
             "weights, per document-level model and number of context sentences (random weights); CSV and SVG",
             options("csv", "svg"))
    plan = s.add_mutually_exclusive_group(required=True)
    plan.add_argument("--plan", help="what to measure, as JSON (MemoryGrowth.plan; what Snakemake passes)")
    plan.add_argument("--config", help="a config file, its experiments.memory_growth")
    s.add_argument("--device", help="cpu or cuda (default: cuda where there is one)")
    s.add_argument("--threads", type=positive_int, default=1)
    s.add_argument("--csv", required=True, help="model, context_sentences, phase, peak_mib")
    s.add_argument("--svg", required=True)

    s = step("bench-train-cost", cmd_bench_train_cost, "seconds per training update of each contextual model of a "
             "config at its sizes, on generated batches (the paper's Table 3 training cost); JSON", options("out"))
    s.add_argument("--config", required=True)
    s.add_argument("--models", help="comma-separated models of the config (default: every contextual model)")
    s.add_argument("--updates", type=positive_int, default=30, help="timed updates per model")
    s.add_argument("--warmup", type=int, default=3, help="untimed updates first")
    s.add_argument("--max-tokens", type=positive_int,
                   help="tokens per batch (default: the config's training.max_tokens)")
    s.add_argument("--mean-len", type=float, default=10.0, help="mean sentence length in pieces")
    s.add_argument("--max-len", type=positive_int, default=64, help="sentence length cap in pieces")
    s.add_argument("--vocab-size", type=int, default=32864)
    s.add_argument("--n-tags", type=int, default=1000, help="TAGGING's tag vocabulary")
    s.add_argument("--seed", type=int, default=1)
    s.add_argument("--device", help="cpu or cuda (default: cuda where there is one)")
    s.add_argument("--threads", type=positive_int, help="torch threads (default: torch's)")
    s.add_argument("--profile", type=int, default=0, metavar="N",
                   help="also profile N further updates per model (torch.profiler): top operators by self time")
    s.add_argument("--out", help="also write the JSON here")
