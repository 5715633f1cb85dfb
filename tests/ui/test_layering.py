"""The UI's side of the layering rules: no kubernetes client, no HTTP, replay stays headless."""

from __future__ import annotations

import subprocess
import sys


def _modules_after(code: str) -> set[str]:
    result = subprocess.run([sys.executable, "-c", code + "\nimport sys\n"
                             "print(','.join(sorted(m.split('.')[0] for m in sys.modules)))"],
                            capture_output=True, text=True, check=True)
    return set(result.stdout.strip().split(","))


def test_ui_imports_no_kubernetes_or_http_client() -> None:
    loaded = _modules_after("import gputui.ui.app, gputui.ui.screens.nodes, "
                            "gputui.ui.screens.findings, gputui.ui.screens.help")
    assert not loaded & {"kubernetes", "urllib3", "requests", "aiohttp"}


def test_replay_source_is_headless() -> None:
    loaded = _modules_after("import gputui.sources.replay")
    assert not loaded & {"textual", "rich"}
