"""The miniature sources of a rehearsal: a copy of every source the study downloads, in its public format and
layout, as a download mirror (`{host}/{path}` of each URL; the package's docstring lists them)."""
from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from mtcue.data import sources
from mtcue.data.opus_synth import film_documents, generate_mirror
from mtcue.io import atomic_write_text, write_lines
from mtcue.outputs import atomic_directory
from mtcue.rehearsal.stand_ins import omdb_answers
from mtcue.study import pair_of


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
