"""Steps of the evaluation stage: BLEU and phenomena, COMET."""
from __future__ import annotations

import json
import logging
import re
from pathlib import Path

from mtcue.options import options, positive_int, with_provenance
from mtcue.pretrained import MANIFEST

log = logging.getLogger("mtcue")


def cmd_score(a):
    from mtcue.evaluation.score import score_files
    from mtcue.records import write_record

    scores = score_files(a.hyps, a.corpus, a.direction)
    record = {"kind": "score", "model": a.model, "direction": a.direction, "split": a.split,
              "config_hash": a.config_hash, **scores}
    write_record(a.out, with_provenance(record, a.study))
    log.info("%s %s %s: BLEU %.2f", a.direction, a.model, a.split, scores["bleu"])


def cmd_attention_agreement(a):
    from mtcue.evaluation.attention import measure, read_suite
    from mtcue.models.translator import Translator
    from mtcue.records import write_record
    from mtcue.study import langs_of

    translator = Translator.load(a.model_dir, device="cpu")
    if translator.model.spec["type"] != "voita_context":
        raise ValueError(f"{a.model_dir}: a '{translator.model.spec['type']}' model has no context attention to "
                         "analyse (voita_context only)")
    src = langs_of(translator.direction)[0]
    suite, pieces, attend = read_suite(a.suite), translator.pieces, translator.context_attention
    # Table 7 (context lines with more than one noun) and, under "table6", Table 6 (every context line)
    result = {**measure(suite, src, pieces, attend), "table6": measure(suite, src, pieces, attend, min_nouns=1)}
    record = {"kind": "attention", "model": a.model, "direction": translator.direction, "suite": a.suite,
              "config_hash": a.config_hash, **result}
    write_record(a.out, with_provenance(record, a.study))
    log.info("%s %s: attention agreement %s over %d examples", translator.direction, a.model,
             result["pronouns"].get("all", {}).get("attention"), result["examples"])


def cmd_groupings(a):
    from mtcue.evaluation.groupings import measure
    from mtcue.models.translator import Translator
    from mtcue.records import write_record
    from mtcue.study import langs_of
    from mtcue.suites import check_direction, read_suite

    examples = read_suite(a.suite)
    translator = Translator.load(a.model_dir, device="cpu")
    check_direction(examples, translator.direction, a.suite)
    result = measure(examples, langs_of(translator.direction)[0], translator.pieces, translator.groupings, a.suite)
    record = {"kind": "groupings", "model": a.model, "direction": translator.direction, "suite": a.suite,
              "config_hash": a.config_hash, **result}
    write_record(a.out, with_provenance(record, a.study))
    log.info("%s %s: %d of %d groups used on %r", translator.direction, a.model, result["used"], result["groups"],
             result["sentence"])


def cmd_comet(a):
    from mtcue.evaluation.comet import comet_files
    from mtcue.records import write_record

    known = json.loads(Path(a.availability).read_text()) if a.availability else None
    # CometUnavailable is a RuntimeError: with --required, main() reports its reason and exits 1.
    scores = comet_files(a.hyps, a.corpus, a.direction, a.comet_model, a.batch_size, a.required, known)
    record = {"kind": "comet", "model": a.model, "direction": a.direction, "split": a.split,
              "config_hash": a.config_hash, **scores}
    write_record(a.out, with_provenance(record, a.study))
    if scores["comet"] is None:
        log.warning("%s %s %s: no COMET score: %s", a.direction, a.model, a.split, scores["unavailable"])
    else:
        log.info("%s %s %s: COMET %.2f", a.direction, a.model, a.split, scores["comet"])


def cmd_comet_model(a):
    from mtcue.evaluation.comet import CometUnavailable, availability
    from mtcue.io import atomic_write_text

    known = availability(a.comet_model)
    if known["unavailable"] and a.required:
        raise CometUnavailable(known["unavailable"])
    atomic_write_text(a.out, json.dumps(known, indent=2) + "\n")
    log.info("COMET model %s: %s", a.comet_model, known["unavailable"] or f"checkpoint {known['checkpoint']}")


def cmd_fetch_pretrained(a):
    from mtcue.evaluation.comet import fetch_model
    from mtcue.pretrained import fetch

    manifest = fetch(a.folder, a.encoder, fetch_model, a.comet_model, a.comet_required)
    for name, entry in sorted(manifest.items()):
        log.info("%s: %s", name, entry.get("unavailable") or f"{Path(a.folder) / entry['path']} (from {entry['source']})")


def cmd_score_eamt22(a):
    from mtcue.evaluation.eamt22 import score_eamt22
    from mtcue.records import write_record

    scores = score_eamt22(a.hyps, a.corpus, a.direction, a.detector)
    spec = json.loads(a.spec) if a.spec else {}
    # The x-axis of Figure 4: annotated training lines, from the few-shot store's manifest (0: zero-shot).
    supervised = 0
    if a.fewshot_store:
        supervised = json.loads((Path(a.fewshot_store) / "manifest.json").read_text())["masked"]["supervised"]["train"]
    record = {"kind": "eamt22", "model": a.model, "direction": a.direction, "split": a.split,
              "config_hash": a.config_hash, "fewshot": spec.get("fewshot"),
              "context_columns": spec.get("context", {}).get("columns", []), "supervised_samples": supervised,
              **scores}
    write_record(a.out, with_provenance(record, a.study))
    mean = scores["accuracy_mean"]
    log.info("%s %s EAMT22: mean accuracy %s, BLEU %.2f", a.direction, a.model,
             "n/a" if mean is None else f"{100 * mean:.1f}", scores["bleu"])


def cmd_score_formality(a):
    from mtcue.evaluation.formality import (
        FormalityTestSet,
        prompt_kind,
        score_formality,
        score_standalone,
        score_style,
        training_context_words,
    )
    from mtcue.records import write_record

    if a.hyp:  # the official scorer's use: one file, JSON on stdout
        if a.hyps or a.corpus or a.references or not (a.formal_ref and a.informal_ref):
            raise SystemExit("score-formality --hyp H needs --formal-ref F --informal-ref I (and none of --hyps, "
                             "--corpus, --references, which score a model's prompted translations into a record)")
        print(json.dumps(score_standalone(a.hyp, a.formal_ref, a.informal_ref, a.no_spaces), indent=2))
        return
    missing = [f"--{k.replace('_', '-')}" for k in ("hyps", "direction", "model", "study", "config_hash", "out")
               if not getattr(a, k)]
    if missing or not (a.corpus or a.references):
        raise SystemExit(f"score-formality: missing {' '.join(missing) or '--corpus or --references'} (or score "
                         "one file: --hyp H --formal-ref F --informal-ref I)")
    if bool(a.valid_hyps) != bool(a.valid_references):
        raise SystemExit("score-formality: --valid-hyps and --valid-references go together")

    def pairs(items: list[str]) -> dict[str, str]:
        return dict(item.split("=", 1) for item in items)

    def references(items: list[str]) -> FormalityTestSet:
        refs = pairs(items)
        return FormalityTestSet.from_references(refs["formal"], refs["informal"], a.no_spaces)

    test_set = references(a.references) if a.references else FormalityTestSet.from_corpus(a.corpus, a.direction)
    if a.style_levels:
        levels = {}
        for level_id, path in pairs(a.hyps).items():
            if not re.fullmatch(r"level[1-5]", level_id):
                raise SystemExit(f"score-formality --style-levels: --hyps {level_id}=...: ids are level1..level5")
            levels[int(level_id[5:])] = path
        if not a.meaning_references:
            raise SystemExit("score-formality --style-levels: give --meaning-references (the plain references, "
                             "e.g. formality-control.test.en-de.formal.de and .informal.de)")
        record = {"kind": "formality", "model": a.model, "direction": a.direction, "split": a.split,
                  "config_hash": a.config_hash, **score_style(levels, test_set, a.meaning_references)}
        write_record(a.out, with_provenance(record, a.study))
        return
    prompts = json.loads(a.prompts)
    vocabulary = training_context_words(a.train_corpus, a.direction) if a.train_corpus else None
    kinds = {p["id"]: prompt_kind(p["text"], vocabulary) for p in prompts} if vocabulary is not None else None
    valid = (pairs(a.valid_hyps), references(a.valid_references)) if a.valid_hyps else None
    scores = score_formality(pairs(a.hyps), prompts, test_set, valid, kinds)
    record = {"kind": "formality", "model": a.model, "direction": a.direction, "split": a.split,
              "config_hash": a.config_hash, **scores}
    write_record(a.out, with_provenance(record, a.study))
    shown = {k: "n/a" if scores[k] is None else f"{100 * scores[k]:.1f}" for k in ("formal", "informal", "average")}
    log.info("%s %s IWSLT22 formality (best prompt): formal %s, informal %s, average %s", a.direction, a.model,
             shown["formal"], shown["informal"], shown["average"])


def _scoring_args(s) -> None:
    for name in ("--hyps", "--corpus", "--direction", "--model", "--split", "--study", "--config-hash", "--out"):
        s.add_argument(name, required=True)


def cmd_score_contrastive(a):
    from mtcue.evaluation.contrastive import evaluate, needs_target_context
    from mtcue.models.contrastive import score_suite
    from mtcue.records import write_record

    suite = a.suite_name or Path(a.suite).stem
    direction, examples, scores = score_suite(a.model_dir, a.suite, a.batch_size, a.threads)
    result = evaluate(examples, scores, examples[0]["rule"])  # the suite's own: read_suite checked it
    record = {"kind": "contrastive", "model": a.model or Path(a.model_dir).resolve().name, "direction": direction,
              "suite": suite, "needs_target_context": needs_target_context(examples), "config_hash": a.config_hash,
              **result}
    write_record(a.out, with_provenance(record, a.study))
    log.info("%s %s %s: contrastive accuracy %.1f%% of %d (%d ties; per-token mean %.1f%%)", direction,
             record["model"], suite, 100 * result["accuracy"], result["n"], result["ties"],
             100 * result["mean"]["accuracy"])


def cmd_context_usage(a):
    from mtcue.corpus import read_corpus
    from mtcue.evaluation.context_usage import measure_model
    from mtcue.records import write_record

    samples = list(read_corpus(a.corpus))
    direction, result, without = measure_model(a.model_dir, samples, a.batch_size, a.threads)
    record = {"kind": "context_usage", "model": a.model or Path(a.model_dir).resolve().name, "direction": direction,
              "split": a.split, "without_context": without, "config_hash": a.config_hash, **result}
    write_record(a.out, with_provenance(record, a.study))
    log.info("%s %s %s: CXMI %.4f nats/token over %d sentences", direction, record["model"], a.split,
             result["cxmi"], result["n"])


def cmd_evaluate(a):
    from mtcue.evaluation.evaluate import parse_tasks, run

    tasks = parse_tasks(a.tasks)
    code = run(tasks, a.run_step)
    if code:
        raise RuntimeError(f"a task exited with status {code} (its error is above)")


def register(step) -> None:
    s = step("evaluate", cmd_evaluate,
             "a trained model's evaluation in one process: each task an evaluation step's command line (its "
             "translations, their scores, context usage, contrastive scores), run one after another as `mtcue "
             "<step>` runs it; the first to fail stops the rest")
    s.add_argument("--tasks", required=True,
                   help='JSON: the command lines, [["translate", "--spec", ...], ["score", "--hyps", ...], ...]')

    s = step("context-usage", cmd_context_usage,
             "context usage of a trained model (CXMI, Fernandes et al. 2021): cross-entropy of the references "
             "without the model's context minus with it, overall and per phenomenon, into a record", options("out"))
    s.add_argument("--model-dir", required=True, help="a trained model's folder: results/models/{direction}/{model}")
    s.add_argument("--corpus", required=True, help="the cleaned corpus split whose references are scored (JSONL)")
    s.add_argument("--split", required=True, help="the split's name in the record")
    s.add_argument("--out", required=True, help="the record (JSON)")
    s.add_argument("--model", help="the model's name in the record (default: the folder's name)")
    s.add_argument("--batch-size", type=positive_int, default=64, help="sentences per forward pass")
    s.add_argument("--threads", type=positive_int, default=1)
    s.add_argument("--config-hash", default="")
    s.add_argument("--study", default="adhoc")

    s = step("score-contrastive", cmd_score_contrastive,
             "contrastive accuracy of a trained model on a suite (docs/formats.md, section 8): every candidate "
             "force-decoded with the example's context; right by the suite's official rule (ContraPro's: strictly "
             "best; Voita et al.'s: first among the best)", options("out"))
    s.add_argument("--model-dir", required=True, help="a trained model's folder: results/models/{direction}/{model}")
    s.add_argument("--suite", required=True, help="suite JSONL: results/eval/contrastive/{direction}/{suite}.jsonl")
    s.add_argument("--out", required=True, help="the record (JSON)")
    s.add_argument("--model", help="the model's name in the record (default: the folder's name)")
    s.add_argument("--suite-name", help="the suite's name in the record (default: the file's stem)")
    s.add_argument("--batch-size", type=positive_int, default=64, help="candidates per forward pass")
    s.add_argument("--threads", type=positive_int, default=1)
    s.add_argument("--config-hash", default="")
    s.add_argument("--study", default="adhoc")

    s = step("score", cmd_score, "BLEU and phenomenon accuracy of a hypothesis file into a record", options("out"))
    _scoring_args(s)

    s = step("attention-agreement", cmd_attention_agreement,
             "Voita et al. (2018) Table 7: does VOITA-CONTEXT's context attention from a pronoun point at its "
             "antecedent (synthetic contrastive suite), against the first, last and a random noun", options("out"))
    s.add_argument("--model-dir", required=True, help="results/models/{direction}/{model} of a voita_context model")
    s.add_argument("--model", required=True)
    s.add_argument("--suite", required=True, help="contrastive suite JSONL with `anaphor` on pronoun examples")
    s.add_argument("--config-hash", required=True)
    s.add_argument("--study", required=True)
    s.add_argument("--out", required=True)

    s = step("groupings", cmd_groupings,
             "the shortening paper's Figure 3: how a Latent Grouping or Selecting model assigns the pieces of a "
             "sentence a contrastive example refers back into to its K groups", options("out"))
    s.add_argument("--model-dir", required=True, help="results/models/{direction}/{model} of a grouping or "
                                                      "selecting model")
    s.add_argument("--model", required=True)
    s.add_argument("--suite", required=True, help="the direction's contrastive suite (JSONL, docs/formats.md section "
                                                  "8): the sentence is the previous line of its first example "
                                                  "whose antecedent is one line back")
    s.add_argument("--config-hash", required=True)
    s.add_argument("--study", required=True)
    s.add_argument("--out", required=True)

    s = step("score-eamt22", cmd_score_eamt22,
             "EAMT22 attribute accuracy (per attribute and mean) and BLEU of a hypothesis file into a record",
             options("out"))
    _scoring_args(s)
    s.add_argument("--detector", choices=["labels", "polish"], default="labels",
                   help="labels: the corpus's marker words; polish: Morfeusz-2 rules over Polish output")
    s.add_argument("--spec", help="the model spec it was translated with (JSON): few-shot setting, context columns")
    s.add_argument("--fewshot-store", help="a few-shot model's training store (its manifest counts the annotated lines)")

    s = step("score-formality", cmd_score_formality,
             "IWSLT22 formality accuracy: of one file (--hyp, as the official scorer; JSON on stdout) or of a "
             "model's prompted translations (--hyps; best and mean prompt per attribute) into a record",
             options("out"))
    s.add_argument("--hyp", help="one hypothesis file, scored against --formal-ref and --informal-ref")
    s.add_argument("--formal-ref", help="annotated formal references (formal.annotated.XX)")
    s.add_argument("--informal-ref", help="annotated informal references (informal.annotated.XX)")
    s.add_argument("--no-spaces", action="store_true",
                   help="the target language is written without spaces: phrases match as substrings (e.g. Japanese)")
    s.add_argument("--hyps", nargs="+", metavar="PROMPT_ID=PATH",
                   help="one hypothesis file per prompt; a model without context: none=PATH")
    s.add_argument("--prompts", default="[]", help='JSON [{"id", "attribute", "text"}, ...] (Formality.prompts)')
    test_set = s.add_mutually_exclusive_group()
    test_set.add_argument("--corpus", help="test corpus whose lines carry formality labels (the synthetic set)")
    test_set.add_argument("--references", nargs=2, metavar="ATTRIBUTE=PATH",
                          help="the official annotated references: formal=PATH informal=PATH")
    s.add_argument("--valid-hyps", nargs="+", metavar="PROMPT_ID=PATH",
                   help="the prompts' hypotheses on the validation split, where the best prompt is chosen")
    s.add_argument("--valid-references", nargs=2, metavar="ATTRIBUTE=PATH",
                   help="the validation split's annotated references: formal=PATH informal=PATH")
    s.add_argument("--style-levels", action="store_true",
                   help="--hyps are a style-control model's outputs per level (level1=PATH ... level5=PATH): "
                        "formal from level 5, informal from level 1, every level's formal accuracy (supervised)")
    s.add_argument("--meaning-references", nargs="+", metavar="PATH",
                   help="--style-levels: plain references (not annotated); each level's meaning preservation is its "
                        "mean sentence chrF against the best of them (Jeong et al.'s Table 1 semantic score)")
    s.add_argument("--train-corpus", help="the direction's training corpus: each prompt's kind (in_distribution: "
                                          "a content word occurs in a training context; unseen: none does)")
    s.add_argument("--split", default="test", help="the split the test set (--references, --corpus) comes from: "
                                                   "test (Table 5) or valid (Table 6's zero-shot column)")
    for name in ("--direction", "--model", "--study", "--config-hash", "--out"):
        s.add_argument(name)

    s = step("comet", cmd_comet, "COMET (x100) of a hypothesis file into a record", options("out"))
    _scoring_args(s)
    s.add_argument("--comet-model", required=True,
                   help="hub name (e.g. Unbabel/wmt20-comet-da) or local checkpoint (file or model directory)")
    s.add_argument("--batch-size", type=positive_int, default=16)
    s.add_argument("--required", action="store_true",
                   help="fail when the model is unavailable, instead of recording why")
    s.add_argument("--availability", help="the model's availability as `mtcue comet-model` decided it (JSON)")

    s = step("fetch-pretrained", cmd_fetch_pretrained, "fetch every pretrained model of a study (sentence "
             "encoders, COMET) into one folder, its manifest.json listing them; the jobs read them from there",
             lambda a: [Path(a.folder) / MANIFEST])  # never a manifest.json of the user's
    s.add_argument("--folder", required=True, help="the study's pretrained folder (results/pretrained)")
    s.add_argument("--encoder", action="append", default=[],
                   help="a sentence encoder: hub id, local folder, or the bundled all-MiniLM-L6-v2 (repeatable)")
    s.add_argument("--comet-model", help="hub name or local checkpoint (file or model directory)")
    s.add_argument("--comet-required", action="store_true",
                   help="fail when the COMET model cannot be had, instead of listing why")

    s = step("comet-model", cmd_comet_model, "decide once whether the COMET model can be had (download it if "
                                             "needed); the comet steps read the answer", options("out"))
    s.add_argument("--comet-model", required=True, help="hub name or local checkpoint (file or model directory)")
    s.add_argument("--required", action="store_true", help="fail when the model is unavailable")
    s.add_argument("--out", required=True, help="JSON: comet_model, checkpoint, unavailable")
