"""Where the paper's public data comes from (config keys corpus.*, evaluation_sets.*) and the local
files it becomes: a URL is downloaded to `results/download/{host}/{path}`, so the same URL is one
file however many steps read it, and OPUS's own layout survives under the OPUS folder. A URL whose
`{host}/{path}` would not stay inside that folder is refused, not normalised (see `url_path`)."""
from __future__ import annotations

import urllib.parse
from pathlib import Path

from mtcue.data.opensubtitles import alignment_name
from mtcue.study import ConfigError

DOWNLOAD_ROOT = "results/download"
# iwslt22_valid: IWSLT22's training data, our validation set (evaluation_sets.iwslt22.valid_pairs).
EVALSETS = {"iwslt22": ("en-de", "en-ru"), "iwslt22_valid": ("en-de",), "eamt22": ("en-pl",), "contrapro": ("en-de",), "lopes": ("en-fr",),
            "voita2019": ("en-ru",)}
EAMT22_SPLITS = {"valid": "dev", "test": "test"}  # our split name -> the official file
LOPES_FILES = ("OpenSubs.current.src", "OpenSubs.current.trg", "OpenSubs.c5.context.src", "OpenSubs.c5.context.trg")


def is_url(source: str) -> bool:
    return "://" in source and not source.startswith("file://")


def url_path(url: str) -> str:
    """`{host}/{path}` of a URL: where it is saved under results/download and read in a mirror.
    Each segment must name an entry inside the one before, so an empty, '.' or '..' segment, a
    backslash or a NUL byte is refused, percent-encoded too (a server decodes `%2e%2e` as `..`)."""
    rest = url.split("://", 1)[1]
    for segment in rest.split("/"):
        decoded = urllib.parse.unquote(segment)
        if not decoded.strip(".") or any(c in decoded for c in "/\\\0"):
            raise ValueError(f"URL {url!r}: its segment {segment!r} would not stay inside {DOWNLOAD_ROOT}/{{host}}/ "
                             "(no empty, '.' or '..' segments, backslashes or encoded '/'); give the file's plain URL")
    return rest


def local(source: str) -> str:
    """The file a source becomes: a URL's download target, or the local path itself."""
    return f"{DOWNLOAD_ROOT}/{url_path(source)}" if is_url(source) else source


def opus_dir(cfg: dict) -> str:
    """The OPUS copy extraction reads: the configured mirror, or where the downloads land."""
    corpus = cfg["corpus"]
    return corpus["mirror"] or local(corpus["opensubtitles"]["url"].rstrip("/")).removesuffix("/xml")


def opus_urls(cfg: dict, pairs: list[str]) -> list[str]:
    """The OPUS files to download for `pairs` (none with a mirror)."""
    if cfg["corpus"]["mirror"]:
        return []
    base = cfg["corpus"]["opensubtitles"]["url"].rstrip("/")
    langs = sorted({lang for pair in pairs for lang in pair.split("-")})
    return [f"{base}/{lang}.zip" for lang in langs] + [f"{base}/{alignment_name(p)}.xml.gz" for p in pairs]


def opus_inputs(cfg: dict, pair: str) -> list[str]:
    """What extracting `pair` reads: the alignment file and each language's documents, zipped or
    unpacked as the mirror holds them (the zipped names when it holds neither, so a dry run names them)."""
    xml = Path(opus_dir(cfg)) / "xml"
    name = alignment_name(pair)
    alignment = next((str(p) for p in (xml / f"{name}.xml.gz", xml / f"{name}.xml") if p.exists()),
                     str(xml / f"{name}.xml.gz"))
    langs = [str(xml / lang) if (xml / lang).is_dir() and not (xml / f"{lang}.zip").exists()
             else str(xml / f"{lang}.zip") for lang in name.split("-")]
    return [alignment, *langs]


def heldout_sources(cfg: dict, pair: str) -> list[str]:
    return list(cfg["corpus"]["splits"]["heldout"].get(pair, []))


def evalset_sources(cfg: dict, name: str, pair: str) -> dict[str, str]:
    """{role: URL or path} of one evaluation set of one pair."""
    sets = cfg["evaluation_sets"]
    if name == "iwslt22":
        from mtcue.data.evalsets import iwslt22_files

        return {f: f"{sets['iwslt22']['url'].rstrip('/')}/{pair}/{f}" for f in iwslt22_files(pair)}
    if name == "iwslt22_valid":
        from mtcue.data.evalsets import iwslt22_valid_files

        return {f: f"{sets['iwslt22']['valid_url'].rstrip('/')}/{pair}/{f}" for f in iwslt22_valid_files(pair)}
    if name == "eamt22":
        return {split: f"{sets['eamt22']['url'].rstrip('/')}/{name}.json" for split, name in EAMT22_SPLITS.items()}
    if name == "contrapro":
        return {"json": sets["contrapro"]["json"], "documents": sets["contrapro"]["documents"]}
    if name == "voita2019":
        from mtcue.data.contrastive_suites import VOITA2019_SETS

        return {f"voita2019_{k}": f"{sets['voita2019']['url'].rstrip('/')}/{f}.json" for k, f in VOITA2019_SETS.items()}
    return {**{f: f"{sets['lopes']['url'].rstrip('/')}/{f}" for f in LOPES_FILES},
            "annotation": sets["lopes"]["annotation"]}


def evalset_pairs(cfg: dict) -> dict[str, list[str]]:
    """{evaluation set: its pairs} this config fetches."""
    chosen = {"iwslt22": "pairs", "iwslt22_valid": "valid_pairs"}
    return {name: list(cfg["evaluation_sets"]["iwslt22"][chosen[name]]) if name in chosen else list(pairs)
            for name, pairs in EVALSETS.items()}


def evalset_targets(cfg: dict, pairs: list[str]) -> list[str]:
    """The converted evaluation sets of the configured pairs (docs/formats.md, section 6)."""
    targets = []
    for name, set_pairs in evalset_pairs(cfg).items():
        for pair in (p for p in set_pairs if p in pairs):
            if name.startswith("iwslt22"):
                targets.append(f"results/eval/{name}/{pair}")
            elif name == "voita2019":  # converted straight to contrastive suites (docs/formats.md, section 8)
                targets += [f"results/eval/contrastive/{pair}/{s}.jsonl" for s in evalset_sources(cfg, name, pair)]
            else:
                splits = tuple(EAMT22_SPLITS) if name == "eamt22" else ("test",)
                targets += [f"results/eval/{name}/{pair}/{split}.jsonl" for split in splits]
    return targets


def all_urls(cfg: dict, pairs: list[str]) -> list[str]:
    """Every URL the opensubtitles data path downloads, each once."""
    urls = opus_urls(cfg, pairs) + [s for p in pairs for s in heldout_sources(cfg, p)]
    urls += [s for name, ps in evalset_pairs(cfg).items() for p in ps for s in evalset_sources(cfg, name, p).values()]
    return [u for u in dict.fromkeys(urls) if is_url(u)]


def configured_urls(cfg: dict) -> dict[str, str]:
    """{config key: URL} of every URL the config names; a folder URL (`*.url`) without its trailing
    '/', as the file URLs are built from it."""
    sets = cfg["evaluation_sets"]
    urls = {"corpus.opensubtitles.url": cfg["corpus"]["opensubtitles"]["url"].rstrip("/")}
    urls |= {f"corpus.splits.heldout.{pair}.{i}": s for pair, listed in cfg["corpus"]["splits"]["heldout"].items()
             for i, s in enumerate(listed)}
    urls |= {f"evaluation_sets.{name}.url": sets[name]["url"].rstrip("/") for name in ("iwslt22", "eamt22", "lopes", "voita2019")}
    urls["evaluation_sets.iwslt22.valid_url"] = sets["iwslt22"]["valid_url"].rstrip("/")
    urls |= {f"evaluation_sets.contrapro.{role}": sets["contrapro"][role] for role in ("json", "documents")}
    urls["evaluation_sets.lopes.annotation"] = sets["lopes"]["annotation"]
    return {key: url for key, url in urls.items() if is_url(url)}


def check_urls(cfg: dict) -> None:
    """A URL is saved under results/download/{host}/{path}: one that would leave it is refused when the
    config is validated (`config.validate`'s checks), before any rule (its download, log or benchmark)
    names a file outside."""
    for key, url in configured_urls(cfg).items():
        try:
            url_path(url)
        except ValueError as err:
            raise ConfigError(f"{key}: {err}") from None


def mirrored(cfg: dict, url: str) -> str:
    """Where a URL is read from: download.mirror/{host}/{path} when a mirror is set, else the URL."""
    mirror = cfg["download"]["mirror"]
    return f"{mirror.rstrip('/')}/{url_path(url)}" if mirror else url
