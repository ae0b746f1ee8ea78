"""Film metadata from OMDb (paper, section 3.1): six fields per IMDb id, in the corpus's `meta` form.

The API key is read from the environment variable OMDB_API_KEY only; it goes into the request, over
https, and nowhere else (no log line, file, config or MLflow parameter holds it): a server may echo
the request, so the key, as written and URL-encoded, is replaced by *** in every answer, message
and log line. Every answer, "not found" included, is cached on disk as OMDb sent it (but for the
key), so a rerun or a resumed job asks nothing twice.
Requests are throttled; a server error, an answer cut short or one that is not JSON is asked again
(3 tries), and a JSON answer that is not an object is an error. "Request limit reached!" (a free key
allows 1,000 a day) stops the step cleanly: what was fetched stays cached, no output is written, and
the next run continues. Without a key nothing is asked: films answered in an earlier run keep their
metadata, the others have none.
"""
from __future__ import annotations

import http.client
import json
import logging
import os
import re
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable

from mtcue.corpus import META_FIELDS
from mtcue.io import atomic_write_text, read_text, write_jsonl
from mtcue.progress import track

log = logging.getLogger("mtcue")

KEY_VARIABLE = "OMDB_API_KEY"
# OMDb field -> (corpus meta field, prefix that says what the value is; paper, section 3.1).
FIELDS = {
    "Genre": ("genre", ""),
    "Rated": ("pg_rating", "PG rating: "),
    "Writer": ("writers", "Written by: "),
    "Year": ("year", "Released in "),
    "Country": ("country", ""),   # no prefix: neither Table 2 nor the public code has one
    "Plot": ("plot", ""),
}
assert sorted(f for f, _ in FIELDS.values()) == sorted(META_FIELDS)
MISSING = {"", "n/a", "not rated", "unrated", "none"}
NOT_FOUND = {"incorrect imdb id.", "movie not found!", "series or episode not found!"}
LIMIT = "request limit reached!"
ID_LINE = re.compile(r"^(?:tt)?(\d+)$")
TRANSIENT_TRIES = 3
# The key travels in the request's URL: plain http only to this machine (e.g. the tests' local OMDb).
LOOPBACK = {"localhost", "127.0.0.1", "::1"}


class OmdbError(RuntimeError):
    """OMDb cannot be used (bad key, unreachable); the message never contains the key."""


class RequestLimitReached(OmdbError):
    """The key's daily quota is spent: rerun later, cached answers are kept."""


@dataclass(frozen=True)
class Settings:
    api_url: str = "https://www.omdbapi.com/"
    min_interval_s: float = 0.2
    timeout_s: float = 30.0


def metadata(answer: dict) -> dict[str, str | None]:
    """The six corpus fields of an OMDb answer: non-values ("N/A", "Not Rated", ...) are missing;
    rating, year, writers and country get the paper's disambiguating prefixes."""
    meta = dict.fromkeys(META_FIELDS)
    if answer.get("Response") != "True":
        return meta
    for omdb_field, (field, prefix) in FIELDS.items():
        value = " ".join(str(answer.get(omdb_field) or "").split())
        if value.lower() not in MISSING:
            meta[field] = prefix + value
    return meta


def read_ids(paths: Iterable[str | Path]) -> list[str]:
    """IMDb ids ("tt0111161") from files of OPUS folder names ("111161") or IMDb ids, deduplicated."""
    ids = set()
    for path in paths:
        for lineno, line in enumerate(read_text(path).splitlines(), 1):
            line = line.strip()
            if not line:
                continue
            match = ID_LINE.match(line)
            if not match:
                raise ValueError(f"{path}:{lineno}: {line!r} is neither an OPUS folder name nor an IMDb id")
            ids.add(f"tt{int(match.group(1)):07d}")
    return sorted(ids)


class Client:
    """One OMDb client: throttled requests, answers cached under `cache/{last two digits}/{id}.json`."""

    def __init__(self, cache: str | Path, settings: Settings, key: str | None,
                 sleep: Callable[[float], None] = time.sleep, clock: Callable[[], float] = time.monotonic):
        url = urllib.parse.urlsplit(settings.api_url)
        if url.scheme != "https" and not (url.scheme == "http" and url.hostname in LOOPBACK):
            raise OmdbError(f"{settings.api_url}: the API key would travel unencrypted; use an https:// URL "
                            "(plain http:// only to this machine: localhost, 127.0.0.1, ::1)")
        self.cache, self.settings, self._key = Path(cache), settings, key
        self.sleep, self.clock = sleep, clock
        self.requests = 0
        self._last: float | None = None

    def cached(self, imdb: str) -> dict | None:
        path = self._path(imdb)
        return json.loads(path.read_text(encoding="utf-8")) if path.exists() else None

    def _path(self, imdb: str) -> Path:
        return self.cache / imdb[-2:] / f"{imdb}.json"

    def fetch(self, imdb: str) -> dict:
        """OMDb's answer for `imdb`, from the cache or asked (and cached). Raises RequestLimitReached."""
        answer = self.cached(imdb)
        if answer is not None:
            return answer
        answer = self._ask(imdb)
        atomic_write_text(self._path(imdb), json.dumps(answer, ensure_ascii=False) + "\n")
        return answer

    def _redact(self, text: str) -> str:
        """`text` with the key, as written and URL-encoded, replaced by ***."""
        if self._key:
            for form in (self._key, urllib.parse.quote_plus(self._key), urllib.parse.quote(self._key, safe="")):
                text = text.replace(form, "***")
        return text

    def _ask(self, imdb: str) -> dict:
        query = urllib.parse.urlencode({"apikey": self._key, "i": imdb})
        last = ""
        for attempt in range(TRANSIENT_TRIES):
            if attempt:
                self._pause(attempt - 1, last)
            self._throttle()
            self.requests += 1
            try:
                with urllib.request.urlopen(f"{self.settings.api_url}?{query}", timeout=self.settings.timeout_s) as r:
                    body = r.read()
            except urllib.error.HTTPError as err:  # OMDb answers 401 for a bad key and a spent quota
                if err.code >= 500:
                    last = f"HTTP {err.code}"
                    continue
                try:
                    body = err.read()
                except (OSError, http.client.HTTPException) as cut:  # an error answer cut short
                    last = f"HTTP {err.code}, {type(cut).__name__}"
                    continue
            except (urllib.error.URLError, OSError, http.client.HTTPException) as err:  # IncompleteRead: cut short
                last = f"{type(err).__name__}: {err}"
                continue
            try:
                answer = json.loads(body)
            except (json.JSONDecodeError, UnicodeDecodeError):  # cut short by a closed connection, or an error page
                last = f"not JSON: {self._redact(body.decode('utf-8', 'replace'))[:80]!r}"
                continue
            # The key out of the answer before it is cached or shown: a server may echo the request.
            return self._checked(imdb, json.loads(self._redact(json.dumps(answer, ensure_ascii=False))))
        raise OmdbError(self._redact(f"{self.settings.api_url} gave no usable answer for {imdb} in {TRANSIENT_TRIES} "
                                     f"tries (last: {last}); the answers so far are cached, rerun later"))

    def _checked(self, imdb: str, answer) -> dict:
        if not isinstance(answer, dict):
            raise OmdbError(f"{self.settings.api_url}: the answer for {imdb} is not a JSON object but "
                            f"{json.dumps(answer, ensure_ascii=False)[:80]}")
        error = str(answer.get("Error", "")).strip().lower()
        if answer.get("Response") == "True" or error in NOT_FOUND:
            return answer
        if error == LIMIT:
            raise RequestLimitReached(imdb)
        if "api key" in error:
            raise OmdbError(f"{self.settings.api_url} rejected the API key in {KEY_VARIABLE} ({answer.get('Error')})")
        raise OmdbError(f"{self.settings.api_url}: unexpected answer for {imdb}: {answer.get('Error')!r}")

    def _pause(self, attempt: int, why: str) -> None:
        log.warning("OMDb: %s; trying again", self._redact(why))
        self.sleep(self.settings.min_interval_s * 10 * 2 ** attempt)

    def _throttle(self) -> None:
        now = self.clock()
        if self._last is not None and now - self._last < self.settings.min_interval_s:
            self.sleep(self.settings.min_interval_s - (now - self._last))
        self._last = self.clock()


def fetch_all(id_files: Iterable[str | Path], cache: str | Path, out: str | Path, settings: Settings = Settings(),
              summary_out: str | Path | None = None, sleep: Callable[[float], None] = time.sleep,
              clock: Callable[[], float] = time.monotonic) -> dict:
    """Metadata of every film in `id_files` to `out` (JSONL: imdb_id, status, meta); returns the counts."""
    ids = read_ids(id_files)
    key = os.environ.get(KEY_VARIABLE) or None
    client = Client(cache, settings, key, sleep, clock)
    records, counts = [], {"found": 0, "not_found": 0, "no_key": 0}
    try:
        for imdb in track(ids, "OMDb", unit="films"):
            answer = client.fetch(imdb) if key else client.cached(imdb)
            status = "no_key" if answer is None else "found" if answer.get("Response") == "True" else "not_found"
            counts[status] += 1
            records.append({"imdb_id": imdb, "status": status, "meta": metadata(answer or {})})
    except RequestLimitReached:
        cached = sum(client.cached(i) is not None for i in ids)
        raise RequestLimitReached(
            f"OMDb request limit reached after {client.requests} requests in this run; {cached} of {len(ids)} films "
            f"are answered in {cache}. Run the step again when the quota renews (a free key allows 1,000 requests "
            "a day): cached films are not asked again") from None
    if not key:
        log.warning("%s is not set: OMDb was not asked; %d of %d films have metadata from earlier answers in %s, "
                    "the others none (see docs/data.md, 'Film metadata')", KEY_VARIABLE, counts["found"], len(ids), cache)
    write_jsonl(out, records)
    summary = {"api_key": bool(key), "films": len(ids), **counts, "requests": client.requests,
               "api_url": settings.api_url}
    if summary_out:
        atomic_write_text(summary_out, json.dumps(summary, indent=2) + "\n")
    return summary


def load_metadata(path: str | Path) -> dict[str, dict]:
    """{imdb_id: meta} of the films found, from fetch_all's output."""
    found = {}
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        if record["status"] == "found":
            found[record["imdb_id"]] = record["meta"]
    return found
