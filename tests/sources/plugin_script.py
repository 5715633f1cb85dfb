"""A test exec credential plugin: short-lived tokens, every run recorded.

Written to a test's tmp directory and named in a kubeconfig's ``exec`` entry. Each run
appends one JSON line to ``STATE/runs`` (its number, start and end time, whether it was told
it is interactive, whether its stdin is a terminal) and notes in ``STATE/concurrent`` when
another run held the lock at the same time. It prints ``PLUGIN-STDERR-MARKER`` on stderr
(which must never reach the TUI's screen), fails with exit status 3 while ``STATE/fail``
exists, and issues ``exec-token-<run>`` valid for ``PLUGIN_LIFETIME`` seconds.
"""

from __future__ import annotations

import json
import stat
import sys
from pathlib import Path
from typing import Any

import yaml

SCRIPT = '''\
import datetime, fcntl, json, os, sys, time
state = os.environ["PLUGIN_STATE"]
lifetime = float(os.environ.get("PLUGIN_LIFETIME", "12"))
lock = open(os.path.join(state, "lock"), "w")
try:
    fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
except OSError:
    open(os.path.join(state, "concurrent"), "a").write("x\\n")
    fcntl.flock(lock, fcntl.LOCK_EX)
runs = os.path.join(state, "runs")
number = 1 + (sum(1 for _ in open(runs)) if os.path.exists(runs) else 0)
started = time.time()
info = json.loads(os.environ["KUBERNETES_EXEC_INFO"])
sys.stderr.write("PLUGIN-STDERR-MARKER run %d\\n" % number)
sys.stderr.flush()
time.sleep(0.2)
record = {"run": number, "start": started, "end": time.time(),
          "interactive": info["spec"]["interactive"], "stdin_tty": os.isatty(0)}
open(runs, "a").write(json.dumps(record) + "\\n")
if os.path.exists(os.path.join(state, "fail")):
    sys.stderr.write("login expired: run the SSO login again\\n")
    sys.exit(3)
expires = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(seconds=lifetime)
print(json.dumps({"apiVersion": os.environ.get("PLUGIN_API", "client.authentication.k8s.io/v1"),
                  "kind": "ExecCredential",
                  "status": {"token": "exec-token-%d" % number,
                             "expirationTimestamp": expires.isoformat()}}))
'''

#: every token the plugin can issue in a test's lifetime (the emulated server accepts these)
TOKENS = frozenset(f"exec-token-{n}" for n in range(1, 200))


def write_plugin(directory: Path) -> Path:
    """The plugin as an executable file under ``directory`` (its state dir is beside it)."""
    path = directory / "exec-plugin.py"
    path.write_text(f"#!{sys.executable}\n{SCRIPT}")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    (directory / "plugin-state").mkdir(exist_ok=True)
    return path


def plugin_kubeconfig(path: Path, server: str, plugin: Path, lifetime: float,
                      **exec_extra: Any) -> Path:
    """A kubeconfig whose user runs ``plugin`` (``exec_extra`` overrides the entry)."""
    entry: dict[str, Any] = {
        "apiVersion": "client.authentication.k8s.io/v1", "command": str(plugin),
        "interactiveMode": "IfAvailable",
        "env": [{"name": "PLUGIN_STATE", "value": str(plugin.parent / "plugin-state")},
                {"name": "PLUGIN_LIFETIME", "value": str(lifetime)}]}
    entry.update(exec_extra)
    path.write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config",
        "clusters": [{"name": "c", "cluster": {"server": server}}],
        "users": [{"name": "sso", "user": {"exec": {k: v for k, v in entry.items()
                                                    if v is not None}}}],
        "contexts": [{"name": "c", "context": {"cluster": "c", "user": "sso"}}],
        "current-context": "c"}))
    return path


def runs(plugin: Path) -> list[dict[str, Any]]:
    """The plugin's recorded runs, in order."""
    path = plugin.parent / "plugin-state" / "runs"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def overlapped(plugin: Path) -> bool:
    """Whether two runs ever held the plugin's lock at once."""
    return (plugin.parent / "plugin-state" / "concurrent").exists()
