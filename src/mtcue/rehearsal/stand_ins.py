"""The rehearsal's offline stand-ins: a local server answering in OMDb's format under its own key, and a small
COMET model on the local MiniLM."""
from __future__ import annotations

import json
import threading
import urllib.parse
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Iterator

COMET_STAND_IN = "rehearsal-stand-in"  # evaluation.comet.model in the plan: the checkpoint comet_stand_in builds
OMDB_KEY = "rehearsal-stand-in-key"  # the stand-in's own key: a user's OMDb key is never sent to it


def omdb_answers(films: list[int]) -> dict[str, dict]:
    """OMDb's answers for the films (imdb id -> its JSON); every fourth film is unknown to it."""
    genres, ratings = ("Drama", "Comedy, Romance", "Crime, Thriller", "Animation"), ("PG", "R", "N/A", "PG-13")
    return {f"tt{100000 + film:07d}": {"Response": "True", "Title": f"Film {film}", "Year": str(1950 + film % 70),
                                       "Rated": ratings[film % 4], "Genre": genres[film % 4],
                                       "Writer": f"Writer {film % 7}", "Plot": f"A story told in film {film}.",
                                       "Country": "United Kingdom"}
            for film in films if film % 4 != 3}



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


