"""A loopback HTTP proxy in front of a real Prometheus that rewrites its query answers.

What a broken or hostile proxy in front of Prometheus (or a Prometheus-compatible store)
may send: the real answer's shape with every sample value replaced, e.g. by "abc".
"""

from __future__ import annotations

import json
import threading
import urllib.error
import urllib.request
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self

Rewrite = Callable[[Any], Any]


def values_to(text: str) -> Rewrite:
    """Every sample value of a vector or matrix answer replaced by ``text``."""
    def rewrite(document: Any) -> Any:
        for row in document.get("data", {}).get("result", []):
            if "value" in row:
                row["value"][1] = text
            for point in row.get("values", []):
                point[1] = text
        return document
    return rewrite


class TamperProxy:
    """``with TamperProxy(upstream, values_to("abc")) as proxy: proxy.url``; ``queries``
    counts the answers rewritten."""

    def __init__(self, upstream: str, rewrite: Rewrite) -> None:
        self.upstream = upstream.rstrip("/")
        self.rewrite = rewrite
        self.queries = 0
        self.server: ThreadingHTTPServer | None = None

    def __enter__(self) -> Self:
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                try:
                    with urllib.request.urlopen(owner.upstream + self.path, timeout=10) as up:
                        status, body = up.status, up.read()
                except urllib.error.HTTPError as error:
                    status, body = error.code, error.read()
                if status == 200 and self.path.startswith("/api/v1/query"):
                    owner.queries += 1
                    body = json.dumps(owner.rewrite(json.loads(body))).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: Any) -> None:
                return None

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    @property
    def url(self) -> str:
        assert self.server is not None
        return f"http://127.0.0.1:{self.server.server_port}"

    def __exit__(self, *exc: object) -> None:
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()
