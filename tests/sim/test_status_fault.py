"""``status:CODE``: the emulated API server answering a chosen status where a real one does
(issue 26): a pod proxy that may not reach the pods (400 "address not allowed"), a dead or
firewalled pod behind it (503), an API that is not served (404)."""

from __future__ import annotations

from pathlib import Path

import pytest

from gputui.sim.apiserver.faults import ApiFault, parse_api_fault
from gputui.sim.cluster import EmulatedCluster
from gputui.sim.scenario import ScenarioError, load_scenario
from gputui.sources.errors import ApiStatusError
from gputui.sources.http import KubeHttp
from gputui.sources.kubeconfig import load_target
from gputui.sources.scrape import proxy_path, scrape_text
from tests.sources.helpers import node, pod


def test_the_item_parses_and_reads_back() -> None:
    fault = parse_api_fault("status:400~/proxy/metrics%50")
    assert fault == ApiFault("status", "400", 50.0, 0.0, None, "/proxy/metrics")
    assert parse_api_fault(fault.text()) == fault
    for bad in ("status", "status:200", "status:teapot"):
        with pytest.raises(ScenarioError):
            load_scenario("empty", faults=bad)


def test_exporter_scrapes_answer_the_status_a_real_pod_proxy_sends(
        api_only: EmulatedCluster, tmp_path: Path) -> None:
    api_only.store.create("nodes", node("gpu-0"))
    api_only.store.create("pods", pod("gpu-operator", "nvidia-dcgm-exporter-a", "gpu-0",
                                      labels={"app": "nvidia-dcgm-exporter"}))
    http = KubeHttp(load_target(str(api_only.write_kubeconfig(tmp_path / "kc"))).configuration)
    try:
        api_only.inject("500")  # a server-wide fault is about the API, not the exporters
        with pytest.raises(ApiStatusError) as raised:  # no exporter runs here: 503 anyway
            http.get_text(proxy_path("gpu-operator", "nvidia-dcgm-exporter-a"),
                          patient=False)
        assert raised.value.code == 503
        api_only.heal()
        for code, says in ((400, "address not allowed"), (504, "i/o timeout")):
            api_only.inject(f"status:{code}~/proxy/metrics")
            with pytest.raises(ApiStatusError) as raised:
                scrape_text(http, "gpu-operator", "nvidia-dcgm-exporter-a")
            assert raised.value.code == code and says in raised.value.detail
            assert http.get("/api/v1/nodes")["items"]  # the API itself answers
            api_only.heal()
        api_only.inject("status:404~/apis/nvidia.com/v1alpha1")
        with pytest.raises(ApiStatusError) as raised:
            http.get("/apis/nvidia.com/v1alpha1")
        assert raised.value.code == 404
    finally:
        http.close()
