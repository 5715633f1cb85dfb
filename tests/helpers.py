"""Helpers every test area shares, one copy each.

Test modules import what they share from helper modules like this one (or ``tests/ui/
helpers.py``, ``tests/sources/helpers.py``...), never from one another:
``tests/meta/test_test_imports.py`` fails when a module imports from a ``test_*.py``.
"""

from __future__ import annotations

import base64
import socket
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml


def free_port() -> int:
    """A TCP port nothing listens on now (the OS picks it)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def poll(check: Callable[[], object], timeout: float = 60.0, step: float = 0.05) -> bool:
    """Whether ``check()`` held within ``timeout`` seconds, asked every ``step`` seconds (a
    wait on a condition, never a fixed sleep: the bound only stops a hang)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(step)
    return bool(check())


#: ``python -c`` code running ``gputui ARGS`` (``sys.argv[1:]``) that writes ``PEAK <bytes>``
#: as its last line of stderr: the peak resident memory of this program alone. Not
#: ``ru_maxrss``, which Linux keeps across ``exec``: the child started from a pytest worker
#: that once held 700 MB reported those 700 MB as its own. ``VmHWM`` belongs to the memory
#: map, which ``exec`` makes anew.
GPUTUI_WITH_PEAK = (
    "import sys\nfrom gputui.cli import main\n"
    "try:\n    status = main(sys.argv[1:])\nexcept SystemExit as stop:\n"
    "    status = stop.code\n"
    "kb = next(int(l.split()[1]) for l in open('/proc/self/status') if l.startswith('VmHWM'))\n"
    "sys.stderr.write(f'\\nPEAK {kb * 1024}\\n')\n"
    "sys.exit(status)\n")


def peak_of(stderr: str) -> tuple[str, int]:
    """(stderr without the ``PEAK`` line, the peak in bytes) of a run of
    :data:`GPUTUI_WITH_PEAK`."""
    *lines, peak = stderr.strip().splitlines()
    return "\n".join(lines).strip(), int(peak.split()[1])

TOKEN = "planted-Secret-Token-9c2e71"


PASSWORD = "planted-Password-0b3f"


KEY_LINE = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQCplantedKeyLine"


KEY_PEM = f"-----BEGIN PRIVATE KEY-----\n{KEY_LINE}\n-----END PRIVATE KEY-----\n".encode()


KEY_DATA = base64.b64encode(KEY_PEM).decode()


SECRETS = (TOKEN, PASSWORD, KEY_LINE, KEY_DATA[:40],
           base64.b64encode(f"ops:{PASSWORD}".encode()).decode())


def planted(path: Path, server: str, **user: Any) -> Path:
    """A kubeconfig whose user entry holds every kind of secret (``user`` overrides)."""
    entry = {"token": TOKEN, "username": "ops", "password": PASSWORD,
             "client-key-data": KEY_DATA,
             "client-certificate-data": base64.b64encode(b"not a certificate").decode()}
    entry.update(user)
    path.write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config",
        "clusters": [{"name": "c", "cluster": {"server": server}}],
        "users": [{"name": "ops", "user": {k: v for k, v in entry.items() if v is not None}}],
        "contexts": [{"name": "c", "context": {"cluster": "c", "user": "ops"}}],
        "current-context": "c"}))
    return path


def assert_no_secret(*texts: str) -> None:
    for text in texts:
        for secret in SECRETS:
            assert secret not in text, f"{secret!r} leaked into:\n{text}"
