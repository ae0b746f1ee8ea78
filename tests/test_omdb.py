"""OMDb metadata against a local fake OMDb: cache, throttling, "not found", quota, and the key kept secret."""
import json
import logging
import os
import re
import subprocess
import sys
import urllib.parse

import pytest

from local_http import QuietHandler, serve
from mtcue.data.omdb import Client, OmdbError, RequestLimitReached, Settings, fetch_all, metadata
from mtcue.rehearsal.stand_ins import OmdbStandIn

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


class FakeOmdb(OmdbStandIn):
    """OMDb's behaviour: 401 for a wrong key or a spent quota, 200 "Incorrect IMDb ID." when unknown."""

    key = KEY

    def films(self):
        return getattr(self.server, "films", FILMS)

    def answer(self, query):
        srv = self.server
        srv.requests.append(query)
        if query.get("apikey") == KEY and len(srv.requests) > srv.limit:
            return 401, {"Response": "False", "Error": "Request limit reached!"}
        return super().answer(query)


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


def test_metadata_with_the_papers_clean_up_and_prefixes(ids, tmp_path, monkeypatch, caplog):
    monkeypatch.setenv("OMDB_API_KEY", KEY)
    monkeypatch.setattr("mtcue.progress.INTERVAL_S", 0)
    with serve(FakeOmdb, limit=100) as srv, caplog.at_level(logging.INFO, logger="mtcue.progress"):
        summary = run(srv, ids, tmp_path)
    progress = [r.getMessage().split(",")[0] for r in caplog.records if r.name == "mtcue.progress"]
    assert progress == [*(f"OMDb: {n} of 4 films ({25 * n}%)" for n in range(1, 5)), "OMDb: done 4 films in 0 s"]
    got = records(tmp_path)
    assert list(got) == ["tt0000099", "tt0111161", "tt1234567", "tt7654321"]
    assert got["tt0111161"] == {"imdb_id": "tt0111161", "status": "found", "meta": {
        "genre": "Drama", "pg_rating": "PG rating: R", "writers": "Written by: Stephen King, Frank Darabont",
        "year": "Released in 1994", "country": "United States",
        "plot": "Two imprisoned men bond over a number of years."}}
    assert got["tt1234567"]["meta"] == {"genre": None, "pg_rating": None, "writers": None,
                                        "year": "Released in 2009–2013", "country": "Canada, France",
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


ODD_KEY = "k3y S3CRET/9f+2"  # URL-encoded two ways: k3y+S3CRET%2F9f%2B2, k3y%20S3CRET%2F9f%2B2


def key_forms(key=ODD_KEY):
    return [key, urllib.parse.quote_plus(key), urllib.parse.quote(key, safe="")]


class EchoingOmdb(QuietHandler):
    """Repeats each request, key included, in its answer (as error pages and some proxies do). `server.plan`
    lists what each request gets, then "found": "found", "invalid_key", 503 or "not_json" (an HTML page),
    "cut" (an answer shorter than its Content-Length), "cut_401" (an error answer cut short), "list" (a JSON
    list)."""

    def do_GET(self):
        srv = self.server
        action = srv.plan.pop(0) if srv.plan else "found"
        key = dict(urllib.parse.parse_qsl(urllib.parse.urlparse(self.path).query))["apikey"]
        echo = f"{self.path} {key} {urllib.parse.quote(key, safe='')}"
        srv.requests.append(action)
        answers = {"invalid_key": {"Response": "False", "Error": f"Invalid API key! {echo}"}, "list": [echo]}
        found = {"Response": "True", "Genre": "Drama", "Plot": f"You asked {echo}"}
        body = (f"<html>Error: {echo}</html>" if action in (503, "not_json")
                else json.dumps(answers.get(action, found))).encode()
        self.send_response(action if isinstance(action, int) else 401 if action in ("invalid_key", "cut_401") else 200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body[: len(body) // 2] if action in ("cut", "cut_401") else body)


def one_film(tmp_path):
    (tmp_path / "one.txt").write_text("111161\n")
    return [tmp_path / "one.txt"]


def test_an_echoed_key_is_in_no_message_log_or_file(ids, tmp_path, monkeypatch, caplog):
    monkeypatch.setenv("OMDB_API_KEY", ODD_KEY)
    with caplog.at_level(logging.INFO, logger="mtcue"), \
            serve(EchoingOmdb, plan=[503, "found", "not_json", "found", "invalid_key"]) as srv:
        with pytest.raises(OmdbError) as err:
            run(srv, ids, tmp_path)
        summary = run(srv, ids, tmp_path)
    assert str(err.value) == (f"{srv.url}/ rejected the API key in OMDB_API_KEY "
                              "(Invalid API key! /?apikey=***&i=tt1234567 *** ***)")
    assert "OMDb: not JSON: '<html>Error: /?apikey=***&i=tt0111161 *** ***</html>'; trying again" in caplog.text
    assert records(tmp_path)["tt0000099"]["meta"]["plot"] == "You asked /?apikey=***&i=tt0000099 *** ***"
    assert summary["found"] == 4 and srv.requests.count("found") == 4
    files = [p.read_text() for p in tmp_path.rglob("*") if p.is_file()]  # the cache, the output, the summary
    assert len(files) == 8 and not [f for f in key_forms() if f in str(err.value) + caplog.text + "".join(files)]


def test_the_key_never_travels_over_plain_http_but_to_this_machine(ids, tmp_path):
    from mtcue.config import schema

    with pytest.raises(OmdbError, match=r"^http://www\.omdbapi\.com/: the API key would travel unencrypted; use an "
                                        r"https:// URL \(plain http:// only to this machine"):
        fetch_all(ids, tmp_path / "cache", tmp_path / "omdb.jsonl", Settings(api_url="http://www.omdbapi.com/"))
    omdb = schema()["properties"]["corpus"]["properties"]["omdb"]["properties"]
    assert Settings().api_url == omdb["api_url"]["default"] == "https://www.omdbapi.com/"
    assert Client(tmp_path, Settings(api_url="http://localhost:8080/"), KEY).settings.api_url  # a local server


def test_an_answer_cut_short_is_asked_again_then_a_clear_error(tmp_path, monkeypatch, caplog):
    monkeypatch.setenv("OMDB_API_KEY", ODD_KEY)
    with serve(EchoingOmdb, plan=["cut"]) as srv:
        summary = run(srv, one_film(tmp_path), tmp_path)
    assert summary["found"] == 1 and srv.requests == ["cut", "found"]
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="mtcue"), serve(EchoingOmdb, plan=["cut"] * 3) as srv, \
            pytest.raises(OmdbError) as err:
        fetch_all(one_film(tmp_path), tmp_path / "cache2", tmp_path / "omdb2.jsonl",
                  Settings(api_url=srv.url + "/"), sleep=lambda s: None)
    assert re.fullmatch(rf"{re.escape(srv.url)}/ gave no usable answer for tt0111161 in 3 tries "
                        r"\(last: IncompleteRead: IncompleteRead\(\d+ bytes read, \d+ more expected\)\); "
                        "the answers so far are cached, rerun later", str(err.value))
    assert caplog.text.count("OMDb: IncompleteRead") == 2 and not (tmp_path / "cache2").exists()
    with serve(EchoingOmdb, plan=["cut_401"]) as srv:  # the error answer's body cut short: asked again
        summary = run(srv, one_film(tmp_path), tmp_path / "again")
    assert summary["found"] == 1 and srv.requests == ["cut_401", "found"]


def test_a_json_list_is_a_clear_error_naming_the_film(tmp_path, monkeypatch):
    monkeypatch.setenv("OMDB_API_KEY", ODD_KEY)
    with serve(EchoingOmdb, plan=["list"]) as srv, pytest.raises(OmdbError) as err:
        run(srv, one_film(tmp_path), tmp_path)
    assert str(err.value) == (f'{srv.url}/: the answer for tt0111161 is not a JSON object but '
                              '["/?apikey=***&i=tt0111161 *** ***"]')
    assert srv.requests == ["list"] and not (tmp_path / "cache").exists()
