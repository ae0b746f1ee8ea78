"""A local HTTP server for tests (downloads, OMDb): a handler class and its settings, on a free port."""
import threading
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class QuietHandler(BaseHTTPRequestHandler):
    def log_message(self, *args):  # keep pytest's output clean
        pass


@contextmanager
def serve(handler: type[BaseHTTPRequestHandler], **settings):
    """Yield the running server (its attributes hold `settings`); its URL is `server.url`."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    for key, value in settings.items():
        setattr(server, key, value)
    server.requests = []
    server.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
