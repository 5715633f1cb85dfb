"""A loopback HTTP proxy that forwards to Prometheus only requests carrying given headers.

Prometheus itself does bearer tokens only behind a proxy (and basic auth needs a bcrypt
hash); real deployments put one in front, so the tests do too.
"""

from __future__ import annotations

import threading
import urllib.error
import urllib.request
from collections.abc import Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self


class AuthProxy:
    """``with AuthProxy(upstream, require={...}) as proxy: proxy.url``."""

    def __init__(self, upstream: str, require: Mapping[str, str]) -> None:
        self.upstream = upstream.rstrip("/")
        self.require = dict(require)
        self.server: ThreadingHTTPServer | None = None

    def __enter__(self) -> Self:
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                if any(self.headers.get(k) != v for k, v in owner.require.items()):
                    self.send_response(401)
                    self.end_headers()
                    self.wfile.write(b"unauthorized\n")
                    return
                try:
                    with urllib.request.urlopen(owner.upstream + self.path, timeout=10) as up:
                        status, body = up.status, up.read()
                except urllib.error.HTTPError as error:
                    status, body = error.code, error.read()
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
