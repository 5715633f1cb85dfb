"""A context name holding a character the sanitiser escapes loads like any other (issue 27:
a zero-width space or U+202E pasted from chat into a context name left the TUI at
``policy loading… │ loading nodes…`` forever, every snapshot dropped as another context's),
and the header shows the name escaped, never the raw characters."""

from __future__ import annotations

from pathlib import Path

import yaml

from gputui.session import session_of
from gputui.settings import Settings
from gputui.sim.cluster import EmulatedCluster
from gputui.sources.connect import open_source
from gputui.ui.app import make_app
from tests.actions.conftest import gpu_node
from tests.ui.helpers import header_text, until

HOSTILE = "prod\u200b-gpu\u202e"


def _kubeconfig(path: Path, cluster: EmulatedCluster) -> Path:
    path.write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "current-context": HOSTILE,
        "clusters": [{"name": "c", "cluster": {"server": cluster.url}}],
        "users": [{"name": "operator", "user": {"token": "emulated-placeholder-token"}}],
        "contexts": [{"name": HOSTILE, "context": {"cluster": "c", "user": "operator"}}]},
        allow_unicode=True))
    return path


async def test_a_context_name_with_invisible_characters_loads_and_is_shown_escaped(
        api_only: EmulatedCluster, tmp_path: Path) -> None:
    api_only.store.create("nodes", gpu_node("gpu-1"))
    settings = Settings(kubeconfig=str(_kubeconfig(tmp_path / "kc", api_only)),
                        namespace="gpu-operator", read_only=True,
                        audit_log=str(tmp_path / "audit.jsonl"))
    app = make_app(settings, session_of(settings, open_source(settings, watch_timeout=5)))
    app.min_snapshot_interval = 0.0
    async with app.run_test(size=(120, 30)) as pilot:
        await until(pilot, lambda: set(app.snapshot.nodes) == {"gpu-1"}
                    and not app.snapshot.loading)
        header = header_text(app)
        assert "\u200b" not in header and "\u202e" not in header
        assert "prod\\u200b-gpu\\u202e" in header
        assert app.snapshot.context == "prod\\u200b-gpu\\u202e"
