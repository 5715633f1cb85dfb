"""One cluster version: the API server, its OpenAPI documents and every kubelet agree."""

from __future__ import annotations

import json
import urllib.request
from typing import Any

from gputui.sim.version import GIT_VERSION, MINOR


def _get(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=10) as response:
        return json.loads(response.read())


def test_server_openapi_and_kubelets_report_one_version(start_sim: Any) -> None:
    sim = start_sim("healthy")
    url = sim.cluster.url
    version = _get(url + "/version")
    assert version["gitVersion"] == GIT_VERSION and version["minor"] == str(MINOR)
    for entry in _get(url + "/openapi/v3")["paths"].values():
        assert _get(url + entry["serverRelativeURL"])["info"]["version"] == GIT_VERSION
    nodes = sim.wait_for(lambda: sim.core.list_node().items, 60, "nodes registered")
    assert len(nodes) > 1
    for node in nodes:
        info = node.status.node_info
        assert (info.kubelet_version, info.kube_proxy_version) == (GIT_VERSION, GIT_VERSION)
