"""Downloads that resume, verify and retry, and never leave a partial file under the final name.

Bytes go to `{dest}.part` (kept between attempts and runs, so a broken transfer resumes with an
HTTP Range request); the file is renamed to `dest` only once its size matches what the server
announced and, where the server publishes one, its MD5 checksum matches: the object store that
serves OPUS (Ceph/S3) sends the MD5 of a file uploaded in one part as its ETag (a multi-part
ETag, `md5-N`, is not a checksum of the file and is not checked). `If-Range` makes the server send
the whole file again when it changed since the partial download. A `source` that is a local path
(a mirror) is copied instead.

Without an announced size (no Content-Length or Content-Range total), only a body whose end is
marked is complete for sure: a chunked one (http.client raises IncompleteRead unless the last,
empty chunk arrived). A body that simply ends when the server closes the connection may have been
cut short, and nothing tells: it is accepted only when the server's MD5 (ETag) matches it, else the
download fails, keeping the .part file, and asks for the file in a mirror (download.mirror).
"""
from __future__ import annotations

import hashlib
import http.client
import json
import logging
import os
import re
import shutil
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

log = logging.getLogger("mtcue")

CHUNK = 1 << 20
PLAIN_MD5 = re.compile(r'^"?([0-9a-f]{32})"?$')
CONTENT_RANGE = re.compile(r"^bytes (\d+)-(\d+)/(\d+|\*)$")
RETRYABLE_STATUS = {408, 425, 429, 500, 502, 503, 504}


class DownloadError(RuntimeError):
    """A download failed for good; the message names the URL and what to do."""


class _Retry(Exception):
    """A transient failure: try again after a pause."""


@dataclass(frozen=True)
class Policy:
    retries: int = 5          # attempts after the first
    backoff_s: float = 2.0    # pause before retry k is backoff_s * 2**k
    timeout_s: float = 60.0   # a connection's wait for any byte, and the window of min_rate
    min_rate: float = 1024.0  # bytes/s over each timeout_s of a transfer, else it is cut and retried (as curl's
    # --speed-limit): the socket timeout alone waits for one byte, so a server trickling bytes would never end


def _is_local(source: str) -> bool:
    return "://" not in source or source.startswith("file://")


def _copy(source: str, dest: Path) -> dict:
    path = Path(source.removeprefix("file://"))
    if not path.is_file():
        raise DownloadError(f"{path}: not found in the mirror (download.mirror); put the file there or unset the mirror")
    part = dest.with_name(dest.name + ".part")
    dest.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(path, part)
    os.replace(part, dest)
    return {"source": str(path), "bytes": dest.stat().st_size, "md5": None, "attempts": 1}


def download(source: str, dest: str | Path, policy: Policy = Policy(),
             sleep: Callable[[float], None] = time.sleep) -> dict:
    """Fetch `source` (URL or local path) to `dest`. Returns what was verified."""
    dest = Path(dest)
    if _is_local(source):
        return _copy(source, dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    part = dest.with_name(dest.name + ".part")
    state_file = dest.with_name(dest.name + ".part.json")
    last_error = "no attempt"
    for attempt in range(policy.retries + 1):
        if attempt:
            pause = policy.backoff_s * 2 ** (attempt - 1)
            log.warning("%s: attempt %d of %d failed (%s); retrying in %.0f s", source, attempt,
                        policy.retries + 1, last_error, pause)
            sleep(pause)
        try:
            state = _transfer(source, part, state_file, policy.timeout_s, policy.min_rate)
        except _Retry as err:
            last_error = str(err)
            continue
        md5 = _verify(source, part, state)
        if md5 is False:
            part.unlink()
            state_file.unlink(missing_ok=True)
            last_error = "MD5 checksum does not match the server's ETag"
            continue
        os.replace(part, dest)
        state_file.unlink(missing_ok=True)
        return {"source": source, "bytes": state["total"], "md5": md5, "attempts": attempt + 1}
    kept = part.stat().st_size if part.exists() else 0  # a copy that failed its MD5 check is deleted
    raise DownloadError(f"{source}: failed after {policy.retries + 1} attempts ({last_error}); "
                        + (f"the {kept} bytes that arrived are kept in {part} and the next run resumes from them"
                           if kept else "nothing is kept, the next run starts from the beginning"))


def _transfer(url: str, part: Path, state_file: Path, timeout: float, min_rate: float) -> dict:
    """Append the missing bytes of `url` to `part`; returns {"total", "etag"} once complete. A transfer that
    brings fewer than `min_rate` bytes/s over any `timeout` seconds is cut (_Retry resumes it)."""
    state = json.loads(state_file.read_text()) if state_file.exists() and part.exists() else {}
    offset = part.stat().st_size if state else 0
    headers = {"User-Agent": "mtcue-pipeline"}
    if offset:
        headers["Range"] = f"bytes={offset}-"
        if state.get("etag"):
            headers["If-Range"] = state["etag"]
    request = urllib.request.Request(url, headers=headers)
    try:
        response = urllib.request.urlopen(request, timeout=timeout)
    except urllib.error.HTTPError as err:
        if err.code == 416 and offset and offset == state.get("total"):
            return state  # everything had arrived before the last interruption
        if err.code == 416:
            part.unlink(missing_ok=True)
            state_file.unlink(missing_ok=True)
            raise _Retry("the server refused to resume the partial file; starting again") from None
        if err.code in RETRYABLE_STATUS:
            raise _Retry(f"HTTP {err.code}") from None
        raise DownloadError(f"{url}: HTTP {err.code} {err.reason}; check the URL in the config") from None
    except (urllib.error.URLError, OSError, http.client.HTTPException) as err:
        raise _Retry(f"{type(err).__name__}: {getattr(err, 'reason', err)}") from None
    with response:
        chunked = response.chunked
        if response.status == 206:
            match = CONTENT_RANGE.match(response.headers.get("Content-Range", ""))
            if not match or int(match.group(1)) != offset:
                part.unlink(missing_ok=True)
                state_file.unlink(missing_ok=True)
                raise _Retry(f"unexpected Content-Range {response.headers.get('Content-Range')!r}; starting again")
            total = int(match.group(3)) if match.group(3) != "*" else None
            mode = "ab"
        else:  # 200: the whole file (a server that ignores Range, or a file that changed)
            offset, mode = 0, "wb"
            length = response.headers.get("Content-Length")
            total = int(length) if length is not None else None
        state = {"total": total, "etag": response.headers.get("ETag")}
        state_file.write_text(json.dumps(state))
        try:
            with open(part, mode) as out:
                window, got = time.monotonic(), 0
                while chunk := response.read1(CHUNK):  # what has arrived: read() would wait for a whole CHUNK
                    out.write(chunk)
                    got += len(chunk)
                    if (elapsed := time.monotonic() - window) >= timeout:
                        if got < min_rate * elapsed:
                            raise _Retry(f"too slow: {got} bytes in {elapsed:.0f} s (less than {min_rate:.0f} "
                                         "bytes/s)")
                        window, got = time.monotonic(), 0
        except (OSError, http.client.HTTPException) as err:
            raise _Retry(f"connection lost after {part.stat().st_size} bytes ({type(err).__name__})") from None
    size = part.stat().st_size
    if total is None and not chunked:  # may be cut short: _verify accepts it only with a matching MD5
        return {**state, "total": size, "unverified": True}
    if total is None:  # its last chunk arrived: what arrived is all there is
        state["total"] = size
        state_file.write_text(json.dumps(state))
    elif size != total:
        raise _Retry(f"incomplete: {size} of {total} bytes")
    return state


def _verify(url: str, part: Path, state: dict) -> str | bool | None:
    """The verified MD5, None when the server published none, False when it does not match. Raises
    DownloadError for a transfer of unknown size that no MD5 can verify."""
    match = PLAIN_MD5.match(state.get("etag") or "")
    if not match and state.get("unverified"):
        raise DownloadError(f"{url}: the server announced no size (no Content-Length, not chunked) and publishes no "
                            f"MD5 (ETag), so the {state['total']} bytes that arrived, kept in {part}, cannot be "
                            "verified as the whole file; put the file in a mirror (download.mirror) instead")
    if not match:
        log.info("%s: %d bytes as announced; the server publishes no MD5 (ETag %s)", url, state["total"],
                 state.get("etag"))
        return None
    digest = hashlib.md5()
    with open(part, "rb") as handle:
        while chunk := handle.read(CHUNK):
            digest.update(chunk)
    return digest.hexdigest() if digest.hexdigest() == match.group(1) else False
