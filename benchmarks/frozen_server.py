#!/usr/bin/env python3
"""A Kubernetes API fixture server that answers from pre-serialised responses.

Why: the emulated API server (``gputui sim``) serialises every list page on request, so at
5,000 nodes a benchmark mostly measures the emulator producing JSON, not gputui reading it.
This server answers from bytes recorded once (``sendfile`` from disk), so its own cost is
close to nothing and a benchmark compares gputui against the raw transfer of the same bytes.

``record`` builds a scenario in the emulated cluster, puts a recording proxy in front of it
and runs the clients to be measured through the proxy once (``gputui check --json``, and
kubectl when present), keeping every GET answer by its path and sorted query. ``serve``
answers those requests from the files; a watch is an open stream that stays silent until its
``timeoutSeconds`` (the cluster is frozen), anything not recorded is a 404 ``Status``.

    python benchmarks/frozen_server.py record --scenario scale-5000 --out /tmp/frozen-5000
    python benchmarks/frozen_server.py serve --dir /tmp/frozen-5000 --kubeconfig-out KCFG
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from urllib.parse import urlencode

import yaml
from aiohttp import ClientSession, ClientTimeout, web

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

INDEX = "index.json"


def request_key(path: str, query: list[tuple[str, str]]) -> str:
    """One key per distinct GET: path plus the query in sorted order (clients differ in
    parameter order, never in meaning)."""
    pairs = sorted((k, v) for k, v in query if k != "timeout")
    return path + ("?" + urlencode(pairs) if pairs else "")


def is_watch(query: list[tuple[str, str]]) -> bool:
    return any(k == "watch" and v in ("true", "1") for k, v in query)


def write_kubeconfig(path: Path, url: str) -> Path:
    """A kubeconfig naming this server (plain HTTP on loopback, a dummy token)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config",
        "clusters": [{"name": "frozen", "cluster": {"server": url}}],
        "users": [{"name": "operator", "user": {"token": "frozen-token"}}],
        "contexts": [{"name": "frozen", "context": {"cluster": "frozen", "user": "operator"}}],
        "current-context": "frozen"}, sort_keys=False))
    return path


async def _idle_watch(request: web.Request) -> web.StreamResponse:
    """A watch on a frozen cluster: nothing ever happens, until the client's timeout."""
    response = web.StreamResponse(headers={"Content-Type": "application/json"})
    await response.prepare(request)
    timeout = float(request.query.get("timeoutSeconds") or 300)
    await asyncio.sleep(timeout)
    return response


def _not_recorded(key: str) -> web.Response:
    body = {"kind": "Status", "apiVersion": "v1", "status": "Failure", "code": 404,
            "reason": "NotFound", "message": f"not recorded: {key[:200]}"}
    return web.json_response(body, status=404)


# ------------------------------------------------------------------------ record
class Recorder:
    """A proxy to the emulated cluster that keeps each GET answer as a file."""

    def __init__(self, upstream: str, out: Path):
        self.upstream = upstream
        self.out = out
        self.index: dict[str, dict[str, object]] = {}
        self._session: ClientSession | None = None

    async def handle(self, request: web.Request) -> web.StreamResponse:
        query = list(request.query.items())
        if is_watch(query):
            return await _idle_watch(request)
        key = request_key(request.path, query)
        if self._session is None:
            self._session = ClientSession(timeout=ClientTimeout(total=600))
        headers = {k: v for k, v in request.headers.items()
                   if k.lower() in ("accept", "authorization", "user-agent")}
        async with self._session.get(self.upstream + request.path_qs, headers=headers) as got:
            body = await got.read()
            kind = got.headers.get("Content-Type", "application/json")
        name = hashlib.sha1(key.encode()).hexdigest() + ".body"
        (self.out / name).write_bytes(body)
        self.index[key] = {"file": name, "status": got.status, "type": kind}
        return web.Response(body=body, status=got.status, headers={"Content-Type": kind})


def record(args: argparse.Namespace) -> int:
    from gputui.sim.cluster import EmulatedCluster

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    print(f"building scenario {args.scenario} ...", flush=True)
    cluster = EmulatedCluster(args.scenario).start(timeout=1800)
    recorder = Recorder(cluster.url, out)
    loop = asyncio.new_event_loop()
    app = web.Application()
    app.router.add_route("GET", "/{tail:.*}", recorder.handle)
    runner = web.AppRunner(app, access_log=None, handle_signals=False)
    loop.run_until_complete(runner.setup())
    site = web.TCPSite(runner, "127.0.0.1", 0)
    loop.run_until_complete(site.start())
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    try:
        work = Path(tempfile.mkdtemp(prefix="gputui-record-"))
        kubeconfig = write_kubeconfig(work / "kubeconfig", f"http://127.0.0.1:{port}")
        env = dict(os.environ, KUBECONFIG=str(kubeconfig), XDG_CONFIG_HOME=str(work),
                   PYTHONPATH=str(REPO))
        clients = [[sys.executable, "-m", "gputui", "check", "--json"]]
        if args.kubectl and Path(args.kubectl).exists() and not args.no_kubectl:
            kubectl = [args.kubectl, "--cache-dir", str(work / "kube-cache"),
                       "--request-timeout=0"]
            clients += [kubectl + ["get", "nodes", "-o", "json"],
                        kubectl + ["get", "pods", "-A", "-o", "json"]]
        for argv in clients:
            print("recording:", " ".join(argv[-4:]), flush=True)
            done = subprocess.run(argv, env=env, cwd=REPO, stdout=subprocess.DEVNULL,
                                  stderr=subprocess.PIPE, check=False)
            if done.returncode not in (0, 1):
                print(f"  failed ({done.returncode}): {done.stderr.decode()[-300:]}")
    finally:
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)
        cluster.stop()
    (out / INDEX).write_text(json.dumps(recorder.index, indent=0))
    size = sum((out / e["file"]).stat().st_size for e in recorder.index.values())  # type: ignore[operator]
    print(f"recorded {len(recorder.index)} answers, {size / 1e6:.0f} MB, in {out}")
    return 0


# ------------------------------------------------------------------------- serve
def make_app(folder: Path) -> web.Application:
    """The fixture server's application over a recorded folder."""
    index: dict[str, dict[str, object]] = json.loads((folder / INDEX).read_text())

    async def handle(request: web.Request) -> web.StreamResponse:
        query = list(request.query.items())
        if is_watch(query):
            return await _idle_watch(request)
        key = request_key(request.path, query)
        entry = index.get(key)
        if entry is None:
            return _not_recorded(key)
        return web.FileResponse(folder / str(entry["file"]), status=int(str(entry["status"])),
                                headers={"Content-Type": str(entry["type"])})

    app = web.Application()
    app.router.add_route("GET", "/{tail:.*}", handle)
    return app


def serve(args: argparse.Namespace) -> int:
    folder = Path(args.dir)
    if not (folder / INDEX).exists():
        print(f"frozen_server: {folder} holds no recording (run 'record' first)",
              file=sys.stderr)
        return 2

    async def main() -> None:
        runner = web.AppRunner(make_app(folder), access_log=None)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", args.port)
        await site.start()
        port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        url = f"http://127.0.0.1:{port}"
        if args.kubeconfig_out:
            write_kubeconfig(Path(args.kubeconfig_out), url)
        print(f"frozen_server: serving {folder} at {url}", flush=True)
        await asyncio.Event().wait()

    try:
        asyncio.run(main())
    except KeyboardInterrupt:
        pass
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    rec = sub.add_parser("record", help="build a scenario and record the clients' answers")
    rec.add_argument("--scenario", default="scale-5000")
    rec.add_argument("--out", required=True)
    rec.add_argument("--kubectl", default=str(REPO / ".tools/kubectl/usr/bin/kubectl"))
    rec.add_argument("--no-kubectl", action="store_true",
                     help="record gputui's requests only (kubectl's full pod list of a "
                          "15,000-node cluster needs over 10 GB of memory)")
    srv = sub.add_parser("serve", help="answer from a recording")
    srv.add_argument("--dir", required=True)
    srv.add_argument("--port", type=int, default=0)
    srv.add_argument("--kubeconfig-out")
    args = parser.parse_args()
    return record(args) if args.command == "record" else serve(args)


if __name__ == "__main__":
    raise SystemExit(main())
