"""Downloads against a local server that supports HTTP Range and fails or truncates on demand."""
import hashlib
import json
import socket

import pytest

from local_http import QuietHandler, serve
from mtcue.data.download import DownloadError, Policy, download

PAYLOAD = bytes(range(256)) * 4000  # 1 MB, every byte value
MD5 = hashlib.md5(PAYLOAD).hexdigest()


class Files(QuietHandler):
    """Serves `server.files` {path: bytes}; `server.plan` lists what to do with each request in turn:
    "ok", "truncate" (announce the whole length, send half, hang up), or an HTTP status to fail with."""

    def do_GET(self):
        srv = self.server
        action = srv.plan.pop(0) if srv.plan else "ok"
        srv.requests.append({"path": self.path, "range": self.headers.get("Range"),
                             "if_range": self.headers.get("If-Range")})
        body = srv.files.get(self.path)
        if body is None:
            self.send_error(404, "Not Found")
            return
        if isinstance(action, int):
            self.send_error(action)
            return
        start, wanted = 0, self.headers.get("Range")
        if wanted and srv.ranges:
            start = int(wanted.removeprefix("bytes=").rstrip("-"))
            if start >= len(body):
                self.send_error(416)
                return
        self.send_response(206 if start else 200)
        self.send_header("Content-Length", str(len(body) - start))
        if start:
            self.send_header("Content-Range", f"bytes {start}-{len(body) - 1}/{len(body)}")
        if srv.etag:
            self.send_header("ETag", srv.etag)
        self.end_headers()
        chunk = body[start:]
        self.wfile.write(chunk[: len(chunk) // 2] if action == "truncate" else chunk)


def server(plan=(), etag=f'"{MD5}"', ranges=True, files=None):
    return serve(Files, plan=list(plan), etag=etag, ranges=ranges, files={"/xml/de.zip": PAYLOAD} if files is None else files)


def fetch(srv, tmp_path, retries=3, **kwargs):
    pauses = []
    result = download(f"{srv.url}/xml/de.zip", tmp_path / "de.zip", Policy(retries=retries, backoff_s=1.5,
                                                                            timeout_s=10), sleep=pauses.append)
    return result, pauses


def test_plain_download_is_verified_against_the_etag_md5(tmp_path):
    with server() as srv:
        result, pauses = fetch(srv, tmp_path)
    assert (tmp_path / "de.zip").read_bytes() == PAYLOAD
    assert result == {"source": f"{srv.url}/xml/de.zip", "bytes": len(PAYLOAD), "md5": MD5, "attempts": 1}
    assert pauses == [] and sorted(p.name for p in tmp_path.iterdir()) == ["de.zip"]


def test_a_broken_transfer_resumes_where_it_stopped(tmp_path):
    with server(plan=["truncate"]) as srv:
        result, pauses = fetch(srv, tmp_path)
    assert (tmp_path / "de.zip").read_bytes() == PAYLOAD and result["attempts"] == 2
    assert srv.requests[0]["range"] is None
    assert srv.requests[1] == {"path": "/xml/de.zip", "range": f"bytes={len(PAYLOAD) // 2}-", "if_range": f'"{MD5}"'}
    assert pauses == [1.5]


def test_server_errors_are_retried_with_backoff(tmp_path):
    with server(plan=[503, 502, "truncate", 500]) as srv:
        result, pauses = fetch(srv, tmp_path, retries=4)
    assert (tmp_path / "de.zip").read_bytes() == PAYLOAD and result["attempts"] == 5
    assert pauses == [1.5, 3.0, 6.0, 12.0]


def test_a_server_that_ignores_range_sends_everything_again(tmp_path):
    with server(plan=["truncate"], ranges=False) as srv:
        result, _ = fetch(srv, tmp_path)
    assert (tmp_path / "de.zip").read_bytes() == PAYLOAD and result["md5"] == MD5


def test_a_partial_file_from_an_earlier_run_is_resumed(tmp_path):
    (tmp_path / "de.zip.part").write_bytes(PAYLOAD[:1000])
    (tmp_path / "de.zip.part.json").write_text(json.dumps({"total": len(PAYLOAD), "etag": f'"{MD5}"'}))
    with server() as srv:
        fetch(srv, tmp_path)
    assert [r["range"] for r in srv.requests] == ["bytes=1000-"]
    assert (tmp_path / "de.zip").read_bytes() == PAYLOAD


def test_a_checksum_mismatch_never_becomes_the_file(tmp_path):
    with server(etag='"' + "0" * 32 + '"') as srv, pytest.raises(DownloadError) as err:
        fetch(srv, tmp_path, retries=1)
    assert str(err.value) == (f"{srv.url}/xml/de.zip: failed after 2 attempts (MD5 checksum does not match the "
                              "server's ETag); nothing is kept, the next run starts from the beginning")
    assert not list(tmp_path.iterdir())
    assert [r["range"] for r in srv.requests] == [None, None]  # the bad copy is not resumed


def test_a_multipart_etag_is_no_checksum(tmp_path):
    with server(etag='"3858f62230ac3c915f300c664312c11f-12"') as srv:
        result, _ = fetch(srv, tmp_path)
    assert result["md5"] is None and (tmp_path / "de.zip").read_bytes() == PAYLOAD


def test_not_found_fails_at_once_naming_the_url(tmp_path):
    with server(files={}) as srv, pytest.raises(DownloadError, match=r"/xml/de\.zip: HTTP 404"):
        fetch(srv, tmp_path)
    assert len(srv.requests) == 1 and not list(tmp_path.iterdir())


def test_giving_up_keeps_the_partial_bytes_for_the_next_run(tmp_path):
    with server(plan=["truncate", 503, 503]) as srv, pytest.raises(DownloadError) as err:
        fetch(srv, tmp_path, retries=2)
    assert str(err.value) == (f"{srv.url}/xml/de.zip: failed after 3 attempts (HTTP 503); the {len(PAYLOAD) // 2} "
                              f"bytes that arrived are kept in {tmp_path / 'de.zip.part'} and the next run resumes "
                              "from them")
    assert not (tmp_path / "de.zip").exists()
    assert (tmp_path / "de.zip.part").read_bytes() == PAYLOAD[: len(PAYLOAD) // 2]
    with server() as srv:
        fetch(srv, tmp_path)
    assert srv.requests[0]["range"] == f"bytes={len(PAYLOAD) // 2}-"
    assert (tmp_path / "de.zip").read_bytes() == PAYLOAD


def test_a_server_that_cannot_be_reached_leaves_nothing_to_resume(tmp_path):
    with socket.socket() as closed:  # a port nothing listens on
        closed.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{closed.getsockname()[1]}/xml/de.zip"
    with pytest.raises(DownloadError) as err:
        download(url, tmp_path / "de.zip", Policy(retries=1, timeout_s=10), sleep=lambda s: None)
    message = str(err.value)
    assert message.startswith(f"{url}: failed after 2 attempts (URLError: ") and message.endswith(
        "Connection refused); nothing is kept, the next run starts from the beginning")
    assert not list(tmp_path.iterdir())


class Unsized(QuietHandler):
    """Serves PAYLOAD whole (Range ignored) with no Content-Length: chunked when `server.chunked`, else
    ended by closing the connection; `server.plan` lists "ok" or "cut" (a fifth, then hang up)."""
    protocol_version = "HTTP/1.1"

    def do_GET(self):
        srv = self.server
        body = PAYLOAD[: len(PAYLOAD) // 5] if (srv.plan.pop(0) if srv.plan else "ok") == "cut" else PAYLOAD
        srv.requests.append(self.headers.get("Range"))
        self.send_response(200)
        self.send_header("Transfer-Encoding" if srv.chunked else "Connection", "chunked" if srv.chunked else "close")
        if srv.etag:
            self.send_header("ETag", srv.etag)
        self.end_headers()
        if not srv.chunked:
            self.wfile.write(body)
        else:
            for start in range(0, len(body), 1 << 16):
                piece = body[start:start + (1 << 16)]
                self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
            if body is PAYLOAD:
                self.wfile.write(b"0\r\n\r\n")  # the last chunk: the body is complete
        self.close_connection = True


def unsized(plan=(), chunked=False, etag=None):
    return serve(Unsized, plan=list(plan), chunked=chunked, etag=etag)


def fetch_unsized(srv, tmp_path, retries=3):
    return download(f"{srv.url}/xml/de.zip", tmp_path / "de.zip", Policy(retries=retries, timeout_s=10),
                    sleep=lambda s: None)


def test_a_chunked_body_cut_short_is_retried_not_accepted(tmp_path):
    with unsized(plan=["cut"], chunked=True) as srv:
        result = fetch_unsized(srv, tmp_path)
    assert result == {"source": f"{srv.url}/xml/de.zip", "bytes": len(PAYLOAD), "md5": None, "attempts": 2}
    assert (tmp_path / "de.zip").read_bytes() == PAYLOAD


def test_a_body_of_unknown_size_without_an_md5_cannot_be_accepted(tmp_path):
    with unsized(plan=["cut"]) as srv, pytest.raises(DownloadError) as err:
        fetch_unsized(srv, tmp_path)
    part = tmp_path / "de.zip.part"
    assert str(err.value) == (f"{srv.url}/xml/de.zip: the server announced no size (no Content-Length, not chunked) "
                              f"and publishes no MD5 (ETag), so the {len(PAYLOAD) // 5} bytes that arrived, kept in "
                              f"{part}, cannot be verified as the whole file; put the file in a mirror "
                              "(download.mirror) instead")
    assert not (tmp_path / "de.zip").exists() and part.read_bytes() == PAYLOAD[: len(PAYLOAD) // 5]
    assert len(srv.requests) == 1  # the same server would answer the same way


def test_a_body_of_unknown_size_is_accepted_when_its_md5_matches(tmp_path):
    with unsized(plan=["cut"], etag=f'"{MD5}"') as srv:
        result = fetch_unsized(srv, tmp_path)
    assert result["md5"] == MD5 and result["attempts"] == 2  # the cut copy failed the MD5 check
    assert (tmp_path / "de.zip").read_bytes() == PAYLOAD


def test_a_mirror_path_is_copied(tmp_path):
    (tmp_path / "mirror").mkdir()
    (tmp_path / "mirror" / "blocklist.de").write_text("de/2008/1014051/6733127.xml\n")
    result = download(str(tmp_path / "mirror" / "blocklist.de"), tmp_path / "out" / "blocklist.de")
    assert (tmp_path / "out" / "blocklist.de").read_text() == "de/2008/1014051/6733127.xml\n"
    assert result["bytes"] == 28
    with pytest.raises(DownloadError, match="not found in the mirror"):
        download(str(tmp_path / "mirror" / "absent"), tmp_path / "out" / "absent")


class Trickle(QuietHandler):
    """Announces the whole payload, then sends a byte every 20 ms: each read gets a byte long before any timeout."""

    def do_GET(self):
        import time

        self.server.requests.append(self.path)
        self.send_response(200)
        self.send_header("Content-Length", str(len(PAYLOAD)))
        self.end_headers()
        try:
            for byte in PAYLOAD[:200]:
                self.wfile.write(bytes([byte]))
                self.wfile.flush()
                time.sleep(0.02)
        except OSError:  # the client hung up, as it should
            pass


def test_a_server_trickling_bytes_is_cut_at_the_minimum_rate_not_waited_for(tmp_path):
    import time

    with serve(Trickle) as srv:
        started = time.monotonic()
        with pytest.raises(DownloadError, match=r"failed after 2 attempts \(too slow: \d+ bytes in \d+ s \(less than "
                                                r"1024 bytes/s\)\); the \d+ bytes that arrived are kept"):
            download(f"{srv.url}/x", tmp_path / "x", Policy(retries=1, backoff_s=0, timeout_s=0.5),
                     sleep=lambda s: None)
        took = time.monotonic() - started
    assert len(srv.requests) == 2 and took < 3  # two windows of 0.5 s and change; 200 bytes would take 8 s
    assert not (tmp_path / "x").exists() and 0 < (tmp_path / "x.part").stat().st_size < 200
