"""A rehearsal of the paper's study (`make rehearsal`, `mtcue rehearsal`; docs/paper-scale.md, "Rehearsal").

The same Snakefile runs with `config/paper.yaml` as it is plus one override (config/rehearsal.yaml
says what it changes: sizes, and offline stand-ins for the paper's encoders and COMET), on miniature
copies of every source the paper's study downloads, in their public formats and layout:
- OPUS OpenSubtitles v2018 (`opus_synth`: language archives shared by the pairs, one alignment per pair),
  the authors' block lists, ContraPro's JSON and its OPUS Moses documents, Lopes et al.'s extracted
  files, annotation and document list, IWSLT22's formality test files and en-de training data (the
  validation set), EAMT22's dev and test JSON and
  Voita et al.'s (2019) four consistency sets, written from the synthetic dialogues (`mtcue.data.synth`);
- OMDb: a local server answering in OMDb's format, under its own key.
The copies form a download mirror (`download.mirror`: `{host}/{path}` of each URL), so the `download`
rule fetches every URL of the paper's DAG from it. The run ends with a summary: jobs planned (dry
run) and executed, every table and figure the workflow reports and whether it was made, what failed
(rule, log, last error line) and the wall time.
"""
from __future__ import annotations

import copy
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time
import urllib.parse
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Iterator

import yaml

from mtcue.config import read_yaml, validate
from mtcue.data import sources
from mtcue.data.opus_synth import film_documents, generate_mirror
from mtcue.io import OWNED_MARKER, OutputFolderError, atomic_directory, atomic_write_text, exclusive, write_lines
from mtcue.study import pair_of

COMET_STAND_IN = "rehearsal-stand-in"  # evaluation.comet.model in the plan: the checkpoint comet_stand_in builds
OMDB_KEY = "rehearsal-stand-in-key"  # the stand-in's own key: a user's OMDb key is never sent to it
PLAN_KEYS = {"sources", "every_model", "config"}
SOURCE_SIZES = {"links": int, "links_per_film": int, "heldout_films": int, "docs": int}


def load_plan(path: str | Path) -> dict:
    """config/rehearsal.yaml: `sources` (sizes of the copies), `every_model` (arch and training keys
    set in each model of the study; an arch key only where the model's arch has it) and `config` (keys
    merged over the study's config)."""
    plan = read_yaml(path)
    if not isinstance(plan, dict) or set(plan) != PLAN_KEYS:
        raise ValueError(f"{path}: expected exactly the keys {', '.join(sorted(PLAN_KEYS))}")
    _mappings(plan, sorted(PLAN_KEYS), path)
    for key, kind in SOURCE_SIZES.items():
        value = plan["sources"].get(key)
        if not isinstance(value, kind) or isinstance(value, bool) or value < 1:
            raise ValueError(f"{path}: sources.{key} must be a positive integer, got {value!r:.60}")
    if set(plan["every_model"]) - {"arch", "training"}:
        raise ValueError(f"{path}: every_model holds only arch and training")
    _mappings(plan["every_model"], plan["every_model"], path, "every_model.")
    return plan


def _mappings(holder: dict, keys, path: str | Path, prefix: str = "") -> None:
    """Each of `keys` of `holder` a mapping (`key: value` lines), else a ValueError naming `path` and the key."""
    for key in keys:
        if not isinstance(holder[key], dict):
            raise ValueError(f"{path}: {prefix}{key} must be a mapping (key: value lines), got {holder[key]!r:.60}")


def _is_study(cfg: object) -> bool:
    """A study's config as `override` and `slice_study` read it, before it is validated with the override."""
    return isinstance(cfg, dict) and isinstance(cfg.get("directions"), list) and isinstance(cfg.get("models"), dict) \
        and all(isinstance(entry, dict) for entry in cfg["models"].values())


def merge(base: dict, over: dict) -> dict:
    """`over` merged into a copy of `base` as Snakemake merges config files (mapping into mapping)."""
    from snakemake.utils import update_config

    merged = copy.deepcopy(base)
    update_config(merged, copy.deepcopy(over))
    return merged


def override(study: dict, plan: dict) -> dict:
    """The one override file given after the study's config: the plan's `config`, and each model of
    the study with `every_model`'s keys."""
    arch, training = plan["every_model"].get("arch", {}), plan["every_model"].get("training", {})
    models = {}
    for name, entry in study["models"].items():
        models[name] = {"arch": {k: v for k, v in arch.items() if k in (entry.get("arch") or {})},
                        "training": dict(training)}
    return _encoders_of(merge(plan["config"], {"models": models}), study["directions"])


def _only(mapping: dict, keys: set[str]) -> dict:
    return {k: v for k, v in mapping.items() if k in keys}


def _encoders_of(cfg: dict, directions: list[str]) -> dict:
    """`cfg` with its per-direction encoders (context's, each model's) of `directions` only: the config
    refuses one of a direction it does not run."""
    context = cfg.get("context", {})
    if "encoder_per_direction" in context:
        context["encoder_per_direction"] = _only(context["encoder_per_direction"], set(directions))
    for entry in cfg.get("models", {}).values():
        if "context_encoder_per_direction" in entry:
            entry["context_encoder_per_direction"] = _only(entry["context_encoder_per_direction"], set(directions))
    return cfg


def slice_study(study: dict, cut: dict, where: str = "slice") -> dict:
    """A slice of the study (e.g. CI's): `cut["directions"]` keeps those of the study's directions (every
    per-direction key and experiment direction of the others left out); each key of
    `cut["experiments"][name]` replaces that key of the study's experiment (fewer models, rows,
    settings). Nothing else changes."""
    if not isinstance(cut, dict):
        raise ValueError(f"{where}: a slice is a mapping of directions and experiments, got {cut!r:.60}")
    other = sorted(str(k) for k in cut if k not in ("directions", "experiments"))
    if other:
        raise ValueError(f"{where}: a slice holds directions and experiments only, not {', '.join(other)}")
    directions, replaced = cut.get("directions") or study["directions"], cut.get("experiments") or {}
    if not isinstance(directions, list) or not all(isinstance(d, str) for d in directions):
        raise ValueError(f"{where}: directions must list the directions kept, e.g. [en-de, en-pl], got "
                         f"{directions!r:.60}")
    if not isinstance(replaced, dict):
        raise ValueError(f"{where}: experiments must be a mapping (experiment: keys replaced), got {replaced!r:.60}")
    _mappings(replaced, replaced, where, "experiments.")
    unknown = [d for d in directions if d not in study["directions"]]
    if unknown:
        raise ValueError(f"{where}: {', '.join(unknown)} not among the study's directions {study['directions']}")
    kept = copy.deepcopy(study)
    kept["directions"] = [d for d in study["directions"] if d in directions]
    _encoders_of(kept, directions)
    experiments = kept.setdefault("experiments", {})
    for experiment in experiments.values():
        if isinstance(experiment, dict) and "directions" in experiment:
            experiment["directions"] = [d for d in experiment["directions"] if d in directions]
        if isinstance(experiment, dict) and "only" in experiment:
            experiment["only"] = {run: [d for d in ds if d in directions] for run, ds in experiment["only"].items()
                                  if any(d in directions for d in ds)}
    for name, keys in replaced.items():
        experiments.setdefault(name, {}).update(copy.deepcopy(keys))
    suites = kept.get("evaluation", {}).get("contrastive", {})
    if "suites" in suites:
        suites["suites"] = _only(suites["suites"], set(directions))
    return kept


# ---- the miniature sources ------------------------------------------------------------------------

def _document(film: int, pair: str, lang: str) -> tuple[str, str]:
    """(OPUS path as the block lists write it, document name as ContraPro and Lopes et al. write it) of
    `lang`'s side of a film opus_synth generated."""
    path = film_documents(film, pair)[lang].removesuffix(".gz")
    _, year, folder, doc = path.removesuffix(".xml").split("/")
    return path, f"{year}_{folder}_{doc}.{lang}"


def _synth(pair: str, split: str, docs: int, seed: int) -> list[dict]:
    from mtcue.data.synth import generate

    return generate(pair, split, docs, seed)


def _variant(text: str, words: tuple[str, ...]) -> str:
    """`text` with its first word replaced by the first of `words` it is not: a contrastive candidate."""
    first, _, rest = text.partition(" ")
    other = next(w for w in words if w.lower() != first.lower())
    return f"{other} {rest}".strip()


def _contrapro(films: list[int], docs: int, seed: int) -> tuple[list[dict], list[tuple[str, list[tuple]]]]:
    """ContraPro's examples (its contrapro.json fields) naming lines of en-de documents of `films`, and
    those documents' Moses lines."""
    lines = [(s["text"]["de"], s["text"]["en"]) for s in _synth("en-de", "test", docs, seed)]
    examples, documents = [], []
    per_doc = max(2, len(lines) // len(films))
    for k, film in enumerate(films):
        name = _document(film, "en-de", "de")[1]
        chunk = lines[k * per_doc:(k + 1) * per_doc]
        if len(chunk) < 2:
            break
        documents.append((name.removesuffix(".de"), chunk))
        for seg in range(2, len(chunk) + 1):
            de, en = chunk[seg - 1]
            examples.append({"document id": name, "segment id": seg, "src segment": en, "ref segment": de,
                             "src pronoun": "it", "ref pronoun": de.split(" ")[0], "ante distance": 1,
                             "errors": [{"type": "pronominal coreference",
                                         "contrastive": _variant(de, ("Er", "Sie", "Es"))}]})
    return examples, documents


def moses_zip(path: str | Path, documents: list[tuple[str, list[tuple[str, str]]]]) -> Path:
    """OpenSubtitles2018 de-en in OPUS's Moses layout: .de/.en lines and .ids naming each line's documents
    (`documents`: (year_folder_file, [(German, English), ...]))."""
    import zipfile

    ids, de, en = [], [], []
    for name, lines in documents:
        year, folder, doc = name.split("_")
        for k, (d, e) in enumerate(lines, 1):
            ids.append(f"de/{year}/{folder}/{doc}.xml.gz\ten/{year}/{folder}/{int(doc) + 1}.xml.gz\t{k}\t{k}")
            de.append(d)
            en.append(e)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w") as archive:
        for suffix, lines in (("ids", ids), ("de", de), ("en", en)):
            archive.writestr(f"OpenSubtitles.de-en.{suffix}", "\n".join(lines) + "\n")
        archive.writestr("README", "OPUS OpenSubtitles v2018 de-en, Moses format (a miniature copy)\n")
    return path


def _lopes(docs: int, seed: int, n_context: int = 5) -> tuple[dict[str, list[str]], list[dict]]:
    """Lopes et al.'s extracted files (reference then contrastive line per example, `n_context` context
    lines each, oldest first) and testset-en-fr.json's annotation, from en-fr dialogues."""
    from mtcue.data.evalsets import LOPES_PRONOUNS

    files = {f: [] for f in sources.LOPES_FILES}
    annotation = []
    for k, sample in enumerate(s for s in _synth("en-fr", "test", docs, seed) if s["previous"]["en"]):
        src, ref = sample["text"]["en"], sample["text"]["fr"]
        contrastive = _variant(ref, ("Il", "Elle"))
        context = {lang: ([""] * n_context + list(reversed(sample["previous"][lang])))[-n_context:]
                   for lang in ("en", "fr")}
        for line in (ref, contrastive):
            files["OpenSubs.current.src"].append(src)
            files["OpenSubs.current.trg"].append(line)
            files["OpenSubs.c5.context.src"] += context["en"]
            files["OpenSubs.c5.context.trg"] += context["fr"]
        annotation.append({"src pronoun": "it", "ref pronoun": LOPES_PRONOUNS[k % len(LOPES_PRONOUNS)],
                           "ante distance": 1,
                           "errors": [{"type": "pronominal coreference", "contrastive": contrastive}]})
    return files, annotation


def _voita2019(docs: int, seed: int) -> list[dict]:
    """One of Voita et al.'s consistency sets: 4 sentences joined by " _eos ", the candidates differing
    in the last one."""
    rows = []
    for k, sample in enumerate(s for s in _synth("en-ru", "test", docs, seed) if len(s["previous"]["en"]) >= 3):
        en = [*reversed(sample["previous"]["en"][:3]), sample["text"]["en"]]
        ru = [*reversed(sample["previous"]["ru"][:3]), sample["text"]["ru"]]
        wrong = [*ru[:3], _variant(ru[3], ("Ты", "Вы"))]
        dst = [" _eos ".join(ru), " _eos ".join(wrong)]
        true = k % 2
        rows.append({"src": " _eos ".join(en), "dst": dst if true == 0 else dst[::-1], "true_ind": true,
                     "ctx_dist": 1 + k % 3})
    return rows


def _eamt22(split: str, docs: int, seed: int) -> list[dict]:
    """EAMT22's rows (data/{dev,test}.json fields) from en-pl lines whose Polish shows an attribute."""
    from mtcue.data.evalsets import EAMT22_SLOTS

    rows = []
    for sample in _synth("en-pl", split, docs, seed):
        labels = sample["labels"].get("pl", {})
        slots = [f"<{prefix}{labels[name]['gold']}>" if name in labels else "" for name, prefix, _ in EAMT22_SLOTS]
        if not any(slots):
            continue
        rows.append({"english": sample["text"]["en"], "polish": sample["text"]["pl"], "context_csv": ",".join(slots),
                     "marking": next(s for s in slots if s), "context_text": ". ".join(sample["cues"]),
                     "context_text_excluding_formality": ". ".join(sample["cues"][:-1]),
                     "formality_text": sample["cues"][-1] if sample["cues"] else ""})
    return rows


def _iwslt22(pair: str, docs: int, seed: int, out_dir: Path, split: str = "test") -> None:
    """IWSLT22's five formality files of `pair` (their test names), from the synthetic `split` dialogues
    (synth.iwslt22)."""
    from mtcue.data.clean import clean_corpus
    from mtcue.data.synth import write_split
    from mtcue.data.synth.iwslt22 import write_iwslt22

    raw, clean = out_dir.parent / f".{pair}.{split}.raw.jsonl", out_dir.parent / f".{pair}.{split}.clean.jsonl"
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    write_split(pair, split, docs, seed, raw)
    clean_corpus(raw, clean, 400)
    write_iwslt22(clean, pair, docs, seed, out_dir, split=split)
    raw.unlink()
    clean.unlink()


def _iwslt22_train(pair: str, docs: int, seed: int, out_dir: Path) -> None:
    """IWSLT22's training data of `pair` (five files per domain, the study's validation set), from the
    synthetic valid dialogues, one seed per domain."""
    from mtcue.data.evalsets import IWSLT22_TRAIN_DOMAINS, iwslt22_files

    out_dir.mkdir(parents=True, exist_ok=True)
    for k, domain in enumerate(IWSLT22_TRAIN_DOMAINS):
        staging = out_dir.parent / f".{pair}.{domain}.iwslt22"
        _iwslt22(pair, docs, seed + 1 + k, staging, split="valid")
        for official, name in zip(iwslt22_files(pair), iwslt22_files(pair, domain)):
            os.replace(staging / official, out_dir / name)
        shutil.rmtree(staging)  # what is left: write_iwslt22's folder marker


def omdb_answers(films: list[int]) -> dict[str, dict]:
    """OMDb's answers for the films (imdb id -> its JSON); every fourth film is unknown to it."""
    genres, ratings = ("Drama", "Comedy, Romance", "Crime, Thriller", "Animation"), ("PG", "R", "N/A", "PG-13")
    return {f"tt{100000 + film:07d}": {"Response": "True", "Title": f"Film {film}", "Year": str(1950 + film % 70),
                                       "Rated": ratings[film % 4], "Genre": genres[film % 4],
                                       "Writer": f"Writer {film % 7}", "Plot": f"A story told in film {film}.",
                                       "Country": "United Kingdom"}
            for film in films if film % 4 != 3}


def build_sources(cfg: dict, sizes: dict, root: str | Path) -> dict:
    """Write the download mirror of every URL `cfg` (the study's validated config) downloads, under
    `root`/mirror; returns {"urls": written URLs, "omdb": the OMDb stand-in's answers}. Copies of the
    same sizes already there are kept, so a second rehearsal reruns no download (nor what follows)."""
    pairs = sorted({pair_of(d) for d in cfg["directions"]})
    seed, docs = cfg["seed"], sizes["docs"]
    wanted = sources.all_urls(cfg, pairs)
    stamp = json.dumps({"sizes": sizes, "seed": seed, "urls": wanted, "evaluation_sets": cfg["evaluation_sets"]},
                       sort_keys=True)
    root = Path(root)
    if (root / "stamp.json").is_file() and (root / "stamp.json").read_text(encoding="utf-8") == stamp:
        return {"urls": wanted, "omdb": json.loads((root / "omdb.json").read_text(encoding="utf-8"))}
    with atomic_directory(root, "rehearsal") as tmp:
        mirror = tmp / "mirror"

        def at(url: str) -> Path:
            path = mirror / sources.url_path(url)
            path.parent.mkdir(parents=True, exist_ok=True)
            return path

        opus = at(cfg["corpus"]["opensubtitles"]["url"].rstrip("/")).parent
        films, heldout = [], {}
        for k, pair in enumerate(pairs):
            written = generate_mirror(opus, pair, sizes["links"], seed + k, sizes["links_per_film"],
                                      first_film=1000 * k, append=True)
            pair_films = list(range(1000 * k, 1000 * k + written["films"]))
            if len(pair_films) < 2 * sizes["heldout_films"]:
                raise ValueError(f"sources: {pair} has {len(pair_films)} films, fewer than twice heldout_films "
                                 f"({sizes['heldout_films']}); raise links or lower links_per_film")
            films += pair_films
            heldout[pair] = pair_films[-sizes["heldout_films"]:]
        sets = cfg["evaluation_sets"]
        contrapro, documents = _contrapro(heldout.get("en-de", [])[:2] or [0], docs, seed)
        write_lines(at(sets["contrapro"]["json"]), [json.dumps(contrapro, ensure_ascii=False, indent=1)])
        moses_zip(at(sets["contrapro"]["documents"]), documents)
        for pair in pairs:
            for url in sources.heldout_sources(cfg, pair):
                if url == sets["contrapro"]["json"] or not sources.is_url(url):
                    continue
                lang = pair.split("-")[1]
                if url.endswith("docids.selected"):  # Lopes et al.: document names
                    names = [_document(f, pair, lang)[1] for f in heldout[pair][:2]]
                else:  # the authors' block lists: OPUS document paths
                    names = [_document(f, pair, lang)[0] for f in heldout[pair]]
                write_lines(at(url), names)
        lopes, annotation = _lopes(docs, seed)
        for name, url in sources.evalset_sources(cfg, "lopes", "en-fr").items():
            if name == "annotation":
                write_lines(at(url), [json.dumps(annotation, ensure_ascii=False)])
            else:
                write_lines(at(url), lopes[name])
        for k, url in enumerate(sources.evalset_sources(cfg, "voita2019", "en-ru").values()):
            write_lines(at(url), [json.dumps(_voita2019(docs, seed + k), ensure_ascii=False)])  # four sets
        for split, url in sources.evalset_sources(cfg, "eamt22", "en-pl").items():
            write_lines(at(url), [json.dumps(_eamt22(split, docs, seed), ensure_ascii=False, indent=4)])
        for pair in sets["iwslt22"]["pairs"]:
            first = next(iter(sources.evalset_sources(cfg, "iwslt22", pair).values()))
            _iwslt22(pair, docs, seed, at(first).parent)
        for pair in sets["iwslt22"]["valid_pairs"]:
            first = next(iter(sources.evalset_sources(cfg, "iwslt22_valid", pair).values()))
            _iwslt22_train(pair, docs, seed, at(first).parent)
        missing = [u for u in wanted if not (mirror / sources.url_path(u)).is_file()]
        if missing:
            raise ValueError(f"sources: no miniature copy of {missing[0]} ({len(missing)} URLs): a source the "
                             "study downloads that mtcue.rehearsal does not write yet")
        answers = omdb_answers(films)
        atomic_write_text(tmp / "omdb.json", json.dumps(answers, indent=1) + "\n")
        atomic_write_text(tmp / "stamp.json", stamp)
    return {"urls": wanted, "omdb": answers}


# ---- OMDb stand-in --------------------------------------------------------------------------------

class OmdbStandIn(BaseHTTPRequestHandler):
    """OMDb's API as the omdb step reads it: 401 for another key, "Incorrect IMDb ID." for an unknown film."""

    key = OMDB_KEY

    def films(self) -> dict[str, dict]:
        return self.server.films

    def answer(self, query: dict[str, str]) -> tuple[int, dict]:
        """(HTTP status, OMDb's JSON) for a request's query."""
        if query.get("apikey") != self.key:
            return 401, {"Response": "False", "Error": "Invalid API key!"}
        return 200, self.films().get(query.get("i"), {"Response": "False", "Error": "Incorrect IMDb ID."})

    def do_GET(self):
        status, answer = self.answer(dict(urllib.parse.parse_qsl(urllib.parse.urlparse(self.path).query)))
        body = json.dumps(answer).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):  # the rehearsal's log is Snakemake's
        pass


@contextmanager
def serve_omdb(films: dict[str, dict]) -> Iterator[str]:
    """Serve the answers on a free local port; yields the API URL."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), OmdbStandIn)
    server.films = films
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


def comet_stand_in(out: str | Path, encoder: str | Path) -> Path:
    """A COMET regression model on the local MiniLM with a small seeded estimator, saved as COMET's
    load_from_checkpoint reads it (`checkpoints/model.ckpt`, `hparams.yaml`): real COMET code, not the
    paper's wmt20-comet-da."""
    from mtcue.evaluation.comet import import_comet

    import_comet()  # first, so that its import is as quiet here as in the pipeline
    import pytorch_lightning as pl
    import torch
    from comet.models import RegressionMetric
    from pytorch_lightning.core.saving import save_hparams_to_yaml

    torch.manual_seed(0)
    model = RegressionMetric(encoder_model="BERT", pretrained_model=str(encoder), hidden_sizes=[16],
                             local_files_only=True)
    out = Path(out)
    (out / "checkpoints").mkdir(parents=True, exist_ok=True)
    torch.save({"state_dict": model.state_dict(), "hyper_parameters": dict(model.hparams),
                "pytorch-lightning_version": pl.__version__, "epoch": 0, "global_step": 0},
               out / "checkpoints" / "model.ckpt")
    save_hparams_to_yaml(out / "hparams.yaml", model.hparams)
    return out


# ---- the run and its summary ----------------------------------------------------------------------

REPORT_ITEM = re.compile(r'report\(\s*"(results/[^"]+)"[^)]*category="(Tables|Figures)"', re.S)


def report_outputs(repo: str | Path) -> list[str]:
    """Every table and figure the workflow reports (`report(...)` in workflow/rules, Tables and Figures)."""
    found = []
    for rules in sorted(Path(repo, "workflow", "rules").glob("*.smk")):
        found += [m.group(1) for m in REPORT_ITEM.finditer(rules.read_text(encoding="utf-8"))]
    return sorted(found)


def job_stats(output: str) -> dict[str, int]:
    """Snakemake's "Job stats" table (the first one) as {rule: jobs}, with "total"."""
    if "Job stats:" not in output:
        return {"total": 0}
    stats = {}
    for line in output.split("Job stats:", 1)[1].splitlines()[3:]:
        parts = line.split()
        if len(parts) != 2 or not parts[1].isdigit():
            break
        stats[parts[0]] = int(parts[1])
    return stats


FINISHED = re.compile(r"^Finished job(?:id:)? (\d+)\.?", re.M)
ERROR = re.compile(r"^Error in rule ([\w.-]+):\n(.*?)(?:\n\n|\Z)", re.M | re.S)


def failures(output: str, workdir: Path) -> list[dict]:
    """Each failed job: rule, log file and the last line of its log that reads as an error."""
    found = []
    for rule, block in ERROR.findall(output):
        log = re.search(r"^\s*log: (\S+)", block, re.M)
        entry = {"rule": rule, "log": log.group(1) if log else None, "error": None}
        if log and (workdir / log.group(1)).is_file():
            lines = [l for l in (workdir / log.group(1)).read_text(errors="replace").splitlines() if l.strip()]
            errors = [l for l in lines if re.search(r"error|failed|Traceback|Exception", l, re.I)]
            entry["error"] = (errors or lines or [None])[-1]
        found.append(entry)
    return found


def last_line(text: str) -> str:
    """The last line of Snakemake's output that says something: why it stopped."""
    return ([line for line in text.splitlines() if line.strip()] or ["no output"])[-1]


def run_failures(output: str, returncode: int, workdir: Path, log: str) -> list[dict]:
    """`failures`; when Snakemake exited non-zero with no failed job (a locked directory, an option it
    refused), one entry with its last line, so that a summary never counts 0 failed of a run that failed."""
    found = failures(output, workdir)
    if returncode != 0 and not found:
        found = [{"rule": None, "log": log, "error": last_line(output)}]
    return found


def snakemake_command(repo: Path, workdir: Path, configfiles: list[Path], targets: list[str], cores: str,
                      profile: str | None, dry_run: bool) -> list[str]:
    # targets first: --configfile and --quiet take every word after them
    command = [str(Path(sys.executable).parent / "snakemake"), *targets, "--snakefile", str(repo / "Snakefile"),
               "--directory", str(workdir), "--configfile", *map(str, configfiles)]
    if dry_run:
        return [*command, "-n"]
    command += ["--keep-going"]
    return command + (["--profile", profile] if profile else ["--cores", cores])


def claim_folder(out: Path) -> None:
    """`out` becomes the rehearsal's own folder: new, empty, or made by an earlier rehearsal (its marker).
    A rerun continues in it; a folder holding anything else (a user's files, the demo's results) is
    refused before anything is written there."""
    if out == Path.cwd().resolve() or out in Path.cwd().resolve().parents:
        raise OutputFolderError(f"{out}: is the working directory or one of its parents; give the rehearsal a "
                                "folder of its own (--out)")
    marker = out / OWNED_MARKER
    if out.is_dir() and any(out.iterdir()):
        try:
            step = json.loads(marker.read_text(encoding="utf-8")).get("step")
        except (OSError, ValueError, AttributeError):
            step = None
        if step != "rehearsal":
            raise OutputFolderError(f"{out}: holds files no rehearsal wrote; nothing was changed: give --out a new "
                                    "or empty folder, or the folder of an earlier rehearsal")
        return
    out.mkdir(parents=True, exist_ok=True)
    atomic_write_text(marker, json.dumps({"step": "rehearsal", "files": []}) + "\n")


def rehearse(repo: str | Path, out: str | Path, study: str | Path, plan_path: str | Path,
             targets: list[str] | None = None, cores: str = "all", profile: str | None = None,
             dry_run: bool = False, slice_file: str | Path | None = None,
             snakemake_args: list[str] | None = None) -> dict:
    """Build the sources, plan (dry run) and run the study's DAG in `out`; write and return the summary.
    `slice_file`: a slice of the study (`slice_study`; the sliced study is written to `out`/study.yaml
    and runs in its place). `snakemake_args`: more options of the run (e.g. the test cluster's
    --slurm-status-command squeue)."""
    repo, out, targets, started = Path(repo).resolve(), Path(out).resolve(), list(targets or []), time.time()
    out.parent.mkdir(parents=True, exist_ok=True)
    # One rehearsal per folder, for the whole run: a second one would truncate the first's log under it and
    # write its summary over the first's. It fails at once, naming the folder, and touches nothing there.
    with exclusive(out):
        claim_folder(out)
        plan = load_plan(plan_path)
        study_cfg = read_yaml(study)
        if not _is_study(study_cfg):
            raise ValueError(f"{study}: a study's config lists its directions and maps its models to their entries, as "
                             "config/paper.yaml does; is it the right file?")
        study_file = Path(study).resolve()
        if slice_file:
            study_cfg = slice_study(study_cfg, read_yaml(slice_file) or {}, str(slice_file))
            study_file = out / "study.yaml"
            out.mkdir(parents=True, exist_ok=True)
            atomic_write_text(study_file, f"# {study} sliced by {slice_file} (mtcue rehearsal)\n" +
                              yaml.safe_dump(study_cfg, sort_keys=False, allow_unicode=True))
        over = override(study_cfg, plan)
        over["download"] = {**over.get("download", {}), "mirror": str(out / "sources" / "mirror")}
        config = validate(merge(study_cfg, over), source=f"{study_file} + {plan_path}")
        built = build_sources(config, plan["sources"], out / "sources")
        if config["evaluation"]["comet"]["model"] == COMET_STAND_IN:
            comet = out / "stand-ins" / "comet"
            if not (comet / "hparams.yaml").is_file():  # seeded, so a rebuild would be the same model
                from mtcue.context.embed import resolve_encoder_path

                comet_stand_in(comet, resolve_encoder_path("all-MiniLM-L6-v2"))
            over["evaluation"]["comet"]["model"] = str(comet)
        summary = {"study": str(study), "override": str(plan_path), "directions": study_cfg["directions"],
                   "slice": slice_file and str(slice_file), "targets": targets or ["all"], "profile": profile,
                   "sources": len(built["urls"])}
        with serve_omdb(built["omdb"]) as url:
            over.setdefault("corpus", {}).setdefault("omdb", {})["api_url"] = url
            override_file = out / "override.yaml"
            atomic_write_text(override_file, "# Written by mtcue rehearsal from " + str(plan_path) + "\n" +
                              yaml.safe_dump(over, sort_keys=False, allow_unicode=True))
            configfiles = [study_file, override_file]
            env = {**os.environ, "OMDB_API_KEY": OMDB_KEY}
            plan_run = subprocess.run(snakemake_command(repo, out, configfiles, targets, cores, None, True),
                                      capture_output=True, text=True, env=env, cwd=repo)
            planned = job_stats(plan_run.stdout)
            outputs = set(re.findall(r"^\s+output: (.+)$", plan_run.stdout, re.M))
            planned_outputs = {p.strip() for line in outputs for p in line.split(",")}
            summary["planned"] = planned.get("total", 0)
            summary["planned_by_rule"] = {k: v for k, v in planned.items() if k != "total"}
            if plan_run.returncode != 0:
                summary["failed"] = [{"rule": None, "log": None,
                                      "error": "dry run: " + last_line(plan_run.stderr + plan_run.stdout)}]
            if dry_run or plan_run.returncode != 0:
                summary |= {"executed": 0, "exit": plan_run.returncode, "dry_run": True}
            else:
                log_path = out / "rehearsal.log"
                with open(log_path, "w", encoding="utf-8") as log:
                    command = snakemake_command(repo, out, configfiles, targets, cores, profile, False)
                    run = subprocess.run(command + list(snakemake_args or []), stdout=log, stderr=subprocess.STDOUT,
                                         text=True, env=env, cwd=repo)
                text = log_path.read_text(encoding="utf-8", errors="replace")
                summary |= {"executed": len(FINISHED.findall(text)), "exit": run.returncode, "dry_run": False,
                            "failed": run_failures(text, run.returncode, out, str(log_path)), "log": str(log_path)}
        summary["tables_and_figures"] = {p: "made" if (out / p).is_file() else "not made" if p in planned_outputs
                                         else "not planned" for p in report_outputs(repo)}
        summary["wall_s"] = round(time.time() - started, 1)
        write_summary(summary, out)
        return summary


def write_summary(summary: dict, out: Path) -> None:
    """summary.json and summary.md in `out`."""
    atomic_write_text(out / "summary.json", json.dumps(summary, indent=1) + "\n")
    made = summary["tables_and_figures"]
    lines = ["# Rehearsal of the paper's study", "",
             f"- study: `{summary['study']}` with `{summary['override']}`"
             + (f" and the slice `{summary['slice']}`" if summary["slice"] else "")
             + f"; targets: {', '.join(summary['targets'])}",
             f"- directions: {', '.join(summary['directions'])}"
             + (f"; profile `{summary['profile']}`" if summary["profile"] else ""),
             f"- sources: {summary['sources']} URLs served from the miniature copies",
             f"- jobs planned (dry run): {summary['planned']}; executed: {summary['executed']}"
             + (" (dry run only)" if summary["dry_run"] else "") + f"; exit {summary['exit']}",
             f"- wall time: {summary['wall_s']:.0f} s",
             f"- tables and figures made: {list(made.values()).count('made')} of {len(made)} (the workflow's report)",
             "", "| table or figure | |", "| --- | --- |", *(f"| {p} | {state} |" for p, state in made.items()), ""]
    if summary.get("failed"):
        lines += ["## Failed jobs", "", "| rule | log | error |", "| --- | --- | --- |",
                  *(f"| {f['rule']} | {f['log']} | {str(f['error']).replace('|', '/')} |" for f in summary["failed"]),
                  ""]
    atomic_write_text(out / "summary.md", "\n".join(lines))
