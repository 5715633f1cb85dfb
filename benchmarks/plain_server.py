#!/usr/bin/env python3
"""A plain JSON Kubernetes API server for benchmarks: every answer serialised on request.

Why: the project's emulated API server keeps each object's JSON encoded once and answers
lists from those bytes, and ``frozen_server.py`` answers from recorded bytes; a real API
server serialises every list page it sends. This one is small and independent of gputui's
code: the stdlib's threading HTTP server, objects held as decoded JSON, each page written
with ``json.dumps`` when it is asked for (compact, UTF-8 as the API server writes it).

It serves what a read-only client lists: ``GET`` of a cluster collection
(``/api/v1/nodes``, ``/apis/apps/v1/daemonsets``), its namespaced form
(``/api/v1/namespaces/NS/pods``), one namespace (``/api/v1/namespaces/kube-system``),
``/version`` and enough discovery to name the collections. Label selectors (``k=v``,
``k==v``, ``k!=v``, ``k``, ``!k``) and field selectors (``path=v``, ``path!=v``) are
matched, filtered lists are kept per selector (the API server's watch cache does as
much), and ``limit``/``continue`` page them. A watch stays silent until its
``timeoutSeconds``. Anything else is a 404 ``Status``.

The objects come from a cluster already running (``dump``: every collection listed once,
written to one JSON file), so the plain server and the emulated one hold the same cluster.

    python benchmarks/plain_server.py dump --kubeconfig KCFG --out /tmp/cluster.json
    python benchmarks/plain_server.py serve --data /tmp/cluster.json --kubeconfig-out KCFG
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

Obj = dict[str, Any]

#: the collections a dump keeps: (path, list kind, api version)
COLLECTIONS = (
    ("/api/v1/nodes", "NodeList", "v1"),
    ("/api/v1/pods", "PodList", "v1"),
    ("/api/v1/events", "EventList", "v1"),
    ("/api/v1/configmaps", "ConfigMapList", "v1"),
    ("/api/v1/namespaces", "NamespaceList", "v1"),
    ("/apis/apps/v1/daemonsets", "DaemonSetList", "apps/v1"),
    ("/apis/nvidia.com/v1/clusterpolicies", "ClusterPolicyList", "nvidia.com/v1"),
    ("/apis/nvidia.com/v1alpha1/nvidiadrivers", "NVIDIADriverList", "nvidia.com/v1alpha1"),
)
RESOURCE_VERSION = "100000"


# -------------------------------------------------------------------------- dump
def dump(args: argparse.Namespace) -> int:
    """List every collection of the cluster the kubeconfig names (plain HTTP, token) once."""
    config = _yaml(Path(args.kubeconfig))
    context = next(c for c in config["contexts"] if c["name"] == config["current-context"])
    server = next(c for c in config["clusters"]
                  if c["name"] == context["context"]["cluster"])["cluster"]["server"]
    user = next(u for u in config["users"] if u["name"] == context["context"]["user"])
    token = user.get("user", {}).get("token", "")
    data: dict[str, Any] = {}
    for path, _, _ in COLLECTIONS:
        request = urllib.request.Request(server + path, headers={
            "Accept": "application/json", "Authorization": f"Bearer {token}"})
        try:
            with urllib.request.urlopen(request, timeout=600) as response:
                data[path] = json.loads(response.read())["items"]
        except urllib.error.HTTPError as error:
            if error.code != 404:
                raise
            continue  # not served there (a CRD not installed): not served here either
        print(f"dumped {path}: {len(data[path])} objects", flush=True)
    out = Path(args.out)
    out.write_text(json.dumps(data, separators=(",", ":"), ensure_ascii=False))
    print(f"wrote {out} ({out.stat().st_size / 1e6:.0f} MB)")
    return 0


def _yaml(path: Path) -> Any:
    import yaml

    return yaml.safe_load(path.read_text())


# ----------------------------------------------------------------------- selectors
def _terms(selector: str) -> list[tuple[str, str, str]]:
    """``a=b,c!=d,e,!f`` as (key, operator, value) terms: ``=``, ``!=``, ``exists``,
    ``absent``."""
    terms = []
    for term in filter(None, (part.strip() for part in selector.split(","))):
        if "!=" in term:
            key, value = term.split("!=", 1)
            terms.append((key.strip(), "!=", value.strip()))
        elif "=" in term:
            key, value = term.replace("==", "=").split("=", 1)
            terms.append((key.strip(), "=", value.strip()))
        elif term.startswith("!"):
            terms.append((term[1:].strip(), "absent", ""))
        else:
            terms.append((term, "exists", ""))
    return terms


def _matches(terms: list[tuple[str, str, str]], value_of: Callable[[str], str | None]) -> bool:
    for key, operator, wanted in terms:
        value = value_of(key)
        if operator == "=" and value != wanted:
            return False
        if operator == "!=" and value == wanted:
            return False
        if operator == "exists" and value is None:
            return False
        if operator == "absent" and value is not None:
            return False
    return True


def _field(obj: Obj, path: str) -> str | None:
    """A dotted field of an object as text (``status.phase``, ``involvedObject.kind``)."""
    value: Any = obj
    for part in path.split("."):
        value = value.get(part) if isinstance(value, dict) else None
    return None if value is None else str(value)


def _fields_of(obj: Obj) -> Callable[[str], str | None]:
    return lambda path: _field(obj, path)


def select(items: list[Obj], namespace: str | None, labels: str, fields: str) -> list[Obj]:
    """The objects of a collection in ``namespace`` matching both selectors."""
    label_terms, field_terms = _terms(labels), _terms(fields)
    found = []
    for obj in items:
        metadata = obj.get("metadata") or {}
        if namespace is not None and metadata.get("namespace") != namespace:
            continue
        object_labels = metadata.get("labels") or {}
        if _matches(label_terms, object_labels.get) and \
                _matches(field_terms, _fields_of(obj)):
            found.append(obj)
    return found


# -------------------------------------------------------------------------- serve
class Cluster:
    """The dumped objects and the filtered lists asked for so far."""

    def __init__(self, data: dict[str, list[Obj]]):
        self.data = data
        self.kinds = {path: (kind, version) for path, kind, version in COLLECTIONS}
        self._selected: dict[tuple[str, str | None, str, str], list[Obj]] = {}
        self._lock = threading.Lock()

    def selected(self, path: str, namespace: str | None, labels: str,
                 fields: str) -> list[Obj]:
        key = (path, namespace, labels, fields)
        with self._lock:
            found = self._selected.get(key)
        if found is None:
            found = select(self.data[path], namespace, labels, fields)
            with self._lock:
                self._selected[key] = found
        return found


def route(path: str) -> tuple[str, str | None, str | None]:
    """(cluster collection path, namespace or None, object name or None) of a request
    path; the collection is "" for a path naming none."""
    parts = [part for part in path.split("/") if part]
    prefix = parts[:2] if parts[:1] == ["api"] else parts[:3]
    rest = parts[len(prefix):]
    base = "/" + "/".join(prefix)
    if rest[:1] == ["namespaces"] and len(rest) == 3:
        return f"{base}/{rest[2]}", rest[1], None
    if rest[:1] == ["namespaces"] and len(rest) == 2:
        return f"{base}/namespaces", None, rest[1]
    if len(rest) == 1:
        return f"{base}/{rest[0]}", None, None
    if len(rest) == 2:
        return f"{base}/{rest[0]}", None, rest[1]
    return "", None, None


def make_handler(cluster: Cluster) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive, as the client pools connections

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib's
            pass

        def do_GET(self) -> None:  # noqa: N802 - the stdlib's name
            url = urlsplit(self.path)
            query = {k: v[-1] for k, v in parse_qs(url.query).items()}
            if query.get("watch") in ("true", "1"):
                time.sleep(min(float(query.get("timeoutSeconds") or 60), 300))
                return self._send(200, {"type": "BOOKMARK", "object": {}})
            if url.path == "/version":
                return self._send(200, {"major": "1", "minor": "31", "gitVersion": "v1.31.0",
                                        "platform": "linux/amd64"})
            answer = self._answer(url.path, query)
            if answer is None:
                return self._send(404, {"kind": "Status", "apiVersion": "v1",
                                        "status": "Failure", "reason": "NotFound",
                                        "code": 404, "message": f"{url.path} not found"})
            return self._send(200, answer)

        def _answer(self, path: str, query: dict[str, str]) -> Obj | None:
            collection, namespace, name = route(path)
            if collection not in cluster.data:
                return _discovery(cluster, path)
            if name is not None:
                return next((o for o in cluster.data[collection]
                             if (o.get("metadata") or {}).get("name") == name), None)
            items = cluster.selected(collection, namespace, query.get("labelSelector", ""),
                                     query.get("fieldSelector", ""))
            return _page(cluster.kinds[collection], items, query)

        def _send(self, code: int, body: Obj) -> None:
            data = json.dumps(body, separators=(",", ":"), ensure_ascii=False).encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            try:
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client went (a watch outlived its app): nothing to tell it

    return Handler


def _page(kind: tuple[str, str], items: list[Obj], query: dict[str, str]) -> Obj:
    """One page of a list: ``continue`` is the offset of the page's first item."""
    start = int(query.get("continue") or 0)
    limit = int(query.get("limit") or 0) or len(items)
    chunk = items[start:start + limit]
    metadata: Obj = {"resourceVersion": RESOURCE_VERSION}
    if start + limit < len(items):
        metadata["continue"] = str(start + limit)
        metadata["remainingItemCount"] = len(items) - start - limit
    return {"kind": kind[0], "apiVersion": kind[1], "metadata": metadata, "items": chunk}


def _discovery(cluster: Cluster, path: str) -> Obj | None:
    """``/api/v1`` or ``/apis/GROUP/VERSION``: the resources served under it."""
    names = [p.rsplit("/", 1)[1] for p in cluster.data if p.rsplit("/", 1)[0] == path]
    if not names:
        return None
    group_version = path.removeprefix("/apis/").removeprefix("/api/")
    return {"kind": "APIResourceList", "groupVersion": group_version,
            "resources": [{"name": name, "namespaced": name not in ("nodes", "namespaces",
                                                                   "clusterpolicies",
                                                                   "nvidiadrivers"),
                           "verbs": ["get", "list", "watch"]} for name in names]}


def write_kubeconfig(path: Path, url: str) -> None:
    """A kubeconfig naming this server (JSON is YAML; plain HTTP on loopback, a token)."""
    path.write_text(json.dumps({
        "apiVersion": "v1", "kind": "Config", "current-context": "plain",
        "clusters": [{"name": "plain", "cluster": {"server": url}}],
        "users": [{"name": "operator", "user": {"token": "plain-token"}}],
        "contexts": [{"name": "plain", "context": {"cluster": "plain", "user": "operator"}}],
    }))


def serve(args: argparse.Namespace) -> int:
    cluster = Cluster(json.loads(Path(args.data).read_text()))
    server = ThreadingHTTPServer(("127.0.0.1", args.port), make_handler(cluster))
    server.daemon_threads = True
    url = f"http://127.0.0.1:{server.server_address[1]}"
    if args.kubeconfig_out:
        write_kubeconfig(Path(args.kubeconfig_out), url)
    print(f"plain_server: serving {args.data} at {url}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    out = sub.add_parser("dump", help="list a running cluster's collections into one file")
    out.add_argument("--kubeconfig", required=True)
    out.add_argument("--out", required=True)
    srv = sub.add_parser("serve", help="serve a dump, serialising every answer")
    srv.add_argument("--data", required=True)
    srv.add_argument("--port", type=int, default=0)
    srv.add_argument("--kubeconfig-out")
    args = parser.parse_args()
    return dump(args) if args.command == "dump" else serve(args)


if __name__ == "__main__":
    sys.exit(main())
