"""A closed client sends nothing: the app is leaving, and no request may reach the server."""

from __future__ import annotations

from pathlib import Path

import pytest

from gputui.sim.cluster import EmulatedCluster
from gputui.sources.errors import UnreachableError
from gputui.sources.http import KubeHttp
from gputui.sources.kubeconfig import load_target


def test_a_closed_client_sends_no_request(request_log: list[tuple[str, str]],
                                          api_only: EmulatedCluster, tmp_path: Path) -> None:
    target = load_target(str(api_only.write_kubeconfig(tmp_path / "kubeconfig")))
    http = KubeHttp(target.configuration)
    assert "items" in http.get("/api/v1/nodes")
    seen = len(request_log)
    http.close()
    with pytest.raises(UnreachableError, match="closed"):
        http.get("/api/v1/nodes")
    with pytest.raises(UnreachableError):
        http.watch("/api/v1/nodes", {}, 30, lambda line: line)
    assert len(request_log) == seen
