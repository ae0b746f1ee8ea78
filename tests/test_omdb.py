"""OMDb metadata against a local fake OMDb: cache, throttling, "not found", quota, and the key kept secret."""
import json
import os
import subprocess
import sys
import urllib.parse

import pytest

from local_http import QuietHandler, serve
from mtcue.data.omdb import OmdbError, RequestLimitReached, Settings, fetch_all, metadata

KEY = "k3y-S3CRET-9f2"
FILMS = {  # answers in OMDb's format (abridged)
    "tt0111161": {"Title": "The Shawshank Redemption", "Year": "1994", "Rated": "R", "Genre": "Drama",
                  "Writer": "Stephen King, Frank Darabont", "Plot": "Two imprisoned men bond over a number of years.",
                  "Country": "United States", "Response": "True"},
    "tt1234567": {"Title": "Some Episode", "Year": "2009–2013", "Rated": "Not Rated", "Genre": "N/A",
                  "Writer": "N/A", "Plot": "N/A", "Country": "Canada, France", "Response": "True"},
    "tt7654321": {"Title": "Another", "Year": "2001", "Rated": "TV-14", "Genre": "Comedy, Drama",
                  "Writer": "Ann Example", "Plot": "A plot.", "Country": "N/A", "Response": "True"},
}


class FakeOmdb(QuietHandler):
    """OMDb's behaviour: 401 for a wrong key or a spent quota, 200 "Incorrect IMDb ID." when unknown."""

    def do_GET(self):
        srv = self.server
        query = dict(urllib.parse.parse_qsl(urllib.parse.urlparse(self.path).query))
        srv.requests.append(query)
        if query.get("apikey") != KEY:
            self._send(401, {"Response": "False", "Error": "Invalid API key!"})
        elif len(srv.requests) > srv.limit:
            self._send(401, {"Response": "False", "Error": "Request limit reached!"})
        else:
            films = getattr(srv, "films", FILMS)
            self._send(200, films.get(query.get("i"), {"Response": "False", "Error": "Incorrect IMDb ID."}))

    def _send(self, status, answer):
        body = json.dumps(answer).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture
def ids(tmp_path):
    (tmp_path / "en-de.films.txt").write_text("111161\n1234567\n")
    (tmp_path / "en-fr.films.txt").write_text("111161\ntt7654321\n99\n")
    return [tmp_path / "en-de.films.txt", tmp_path / "en-fr.films.txt"]


def run(srv, ids, tmp_path, **kwargs):
    return fetch_all(ids, tmp_path / "cache", tmp_path / "omdb.jsonl", Settings(api_url=srv.url + "/", **kwargs),
                     tmp_path / "summary.json", sleep=lambda s: None)


def records(tmp_path):
    return {r["imdb_id"]: r for r in map(json.loads, (tmp_path / "omdb.jsonl").read_text().splitlines())}


def test_metadata_with_the_papers_clean_up_and_prefixes(ids, tmp_path, monkeypatch):
    monkeypatch.setenv("OMDB_API_KEY", KEY)
    with serve(FakeOmdb, limit=100) as srv:
        summary = run(srv, ids, tmp_path)
    got = records(tmp_path)
    assert list(got) == ["tt0000099", "tt0111161", "tt1234567", "tt7654321"]
    assert got["tt0111161"] == {"imdb_id": "tt0111161", "status": "found", "meta": {
        "genre": "Drama", "pg_rating": "PG rating: R", "writers": "Written by: Stephen King, Frank Darabont",
        "year": "Released in 1994", "country": "Country: United States",
        "plot": "Two imprisoned men bond over a number of years."}}
    assert got["tt1234567"]["meta"] == {"genre": None, "pg_rating": None, "writers": None,
                                        "year": "Released in 2009–2013", "country": "Country: Canada, France",
                                        "plot": None}
    assert got["tt7654321"]["meta"]["pg_rating"] == "PG rating: TV-14" and got["tt7654321"]["meta"]["country"] is None
    assert got["tt0000099"] == {"imdb_id": "tt0000099", "status": "not_found",
                                "meta": dict.fromkeys(["genre", "pg_rating", "writers", "year", "country", "plot"])}
    assert summary == {"api_key": True, "films": 4, "found": 3, "not_found": 1, "no_key": 0, "requests": 4,
                       "api_url": srv.url + "/"}
    assert sorted(q["i"] for q in srv.requests) == list(got)  # each film asked once, by IMDb id


def test_a_rerun_asks_nothing(ids, tmp_path, monkeypatch):
    monkeypatch.setenv("OMDB_API_KEY", KEY)
    with serve(FakeOmdb, limit=100) as srv:
        run(srv, ids, tmp_path)
        first = (tmp_path / "omdb.jsonl").read_text()
        summary = run(srv, ids, tmp_path)
    assert len(srv.requests) == 4 and summary["requests"] == 0  # "not found" is cached too
    assert (tmp_path / "omdb.jsonl").read_text() == first


def test_request_limit_stops_cleanly_and_the_next_run_continues(ids, tmp_path, monkeypatch):
    monkeypatch.setenv("OMDB_API_KEY", KEY)
    with serve(FakeOmdb, limit=2) as srv, pytest.raises(RequestLimitReached, match=r"2 of 4 films are answered"):
        run(srv, ids, tmp_path)
    assert not (tmp_path / "omdb.jsonl").exists() and not (tmp_path / "summary.json").exists()
    with serve(FakeOmdb, limit=100) as srv:  # the quota renewed
        summary = run(srv, ids, tmp_path)
    assert [q["i"] for q in srv.requests] == ["tt1234567", "tt7654321"] and summary["found"] == 3


def test_requests_are_throttled(ids, tmp_path, monkeypatch):
    monkeypatch.setenv("OMDB_API_KEY", KEY)
    now, pauses = [100.0], []

    def sleep(seconds):
        pauses.append(seconds)
        now[0] += seconds

    with serve(FakeOmdb, limit=100) as srv:
        fetch_all(ids, tmp_path / "cache", tmp_path / "omdb.jsonl", Settings(api_url=srv.url + "/", min_interval_s=0.5),
                  sleep=sleep, clock=lambda: now[0])
    assert pauses == [0.5, 0.5, 0.5]  # no time passes on the fake clock: every later request waits


def test_without_a_key_nothing_is_asked_and_metadata_is_empty(ids, tmp_path, monkeypatch):
    monkeypatch.delenv("OMDB_API_KEY", raising=False)
    with serve(FakeOmdb, limit=100) as srv:
        summary = run(srv, ids, tmp_path)
    assert srv.requests == [] and summary["api_key"] is False and summary["no_key"] == 4
    assert all(r["status"] == "no_key" and set(r["meta"].values()) == {None} for r in records(tmp_path).values())


def test_a_wrong_key_is_a_clear_error_without_the_key(ids, tmp_path, monkeypatch):
    monkeypatch.setenv("OMDB_API_KEY", "wrong-" + KEY)
    with serve(FakeOmdb, limit=100) as srv, pytest.raises(OmdbError, match="rejected the API key in OMDB_API_KEY") as err:
        run(srv, ids, tmp_path)
    assert KEY not in str(err.value)


def test_the_key_is_in_no_log_and_no_file(ids, tmp_path):
    with serve(FakeOmdb, limit=3) as srv:  # ends with "Request limit reached!": the error path too
        cmd = [sys.executable, "-m", "mtcue.cli", "omdb", "--ids", *map(str, ids), "--cache", str(tmp_path / "cache"),
               "--out", str(tmp_path / "omdb.jsonl"), "--summary", str(tmp_path / "s.json"), "--api-url", srv.url + "/",
               "--min-interval", "0"]
        env = {**os.environ, "OMDB_API_KEY": KEY}
        limited = subprocess.run(cmd, capture_output=True, text=True, env=env)
        srv.limit = 100
        done = subprocess.run(cmd, capture_output=True, text=True, env=env)
    assert limited.returncode == 1 and "request limit reached" in limited.stderr
    assert done.returncode == 0, done.stderr
    assert all(q["apikey"] == KEY for q in srv.requests)  # it was used ...
    assert KEY not in limited.stderr + limited.stdout + done.stderr + done.stdout  # ... and never shown
    files = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert len(files) > 5 and not [p for p in files if KEY.encode() in p.read_bytes()]


def test_metadata_of_a_not_found_answer_is_empty():
    assert set(metadata({"Response": "False", "Error": "Incorrect IMDb ID."}).values()) == {None}


def test_a_bad_id_line_names_file_and_line(tmp_path):
    (tmp_path / "ids.txt").write_text("111161\nnot-an-id\n")
    with pytest.raises(ValueError, match=r"ids\.txt:2: 'not-an-id'"):
        fetch_all([tmp_path / "ids.txt"], tmp_path / "c", tmp_path / "o.jsonl")


def test_the_key_cannot_be_put_in_a_config(tmp_path):
    from mtcue.config import ConfigError, validate

    raw = {"study": "s", "directions": ["en-de"], "models": {"base": {"type": "base"}},
           "corpus": {"source": "opensubtitles", "omdb": {"api_key": KEY}}}
    with pytest.raises(ConfigError, match="Additional properties are not allowed") as err:
        validate(raw)
    assert "corpus.omdb" in str(err.value)
