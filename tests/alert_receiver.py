"""A tiny Alertmanager stand-in for the tests: a real HTTP server on 127.0.0.1 that remembers
every POST to /api/v2/alerts (and can refuse the next ones, like an Alertmanager that is down)."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class Receiver:
    def __init__(self):
        self.posts: list[tuple[float, list]] = []
        self.refused: list[list] = []
        self.refuse = 0
        """How many of the next POSTs get a 503."""
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802 - http.server's name
                body = self.rfile.read(int(self.headers["Content-Length"]))
                if self.path != "/api/v2/alerts":
                    self.send_response(404)
                elif receiver.refuse > 0:
                    receiver.refuse -= 1
                    receiver.refused.append(json.loads(body))
                    self.send_response(503)
                else:
                    receiver.posts.append((time.time(), json.loads(body)))
                    self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def alerts(self) -> list[tuple[float, dict]]:
        return [(when, alert) for when, batch in self.posts for alert in batch]

    def close(self):
        self.server.shutdown()
        self.server.server_close()
