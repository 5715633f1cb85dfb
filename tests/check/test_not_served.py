"""A CRD that is not installed is not-served, not forbidden, even when the server answers
403 (issue 26): on a real kube-apiserver authorization runs before routing, so a viewer
asking for ``nvidiadrivers`` where no NVIDIADriver CRD exists gets 403, and gputui said
"cannot read nvidiadrivers (403)" with a ``partial:`` line. Discovery tells them apart.

The emulated server plays that server: ``forbid:nvidiadrivers`` answers the list 403, and
``status:404~/apis/nvidia.com/v1alpha1`` makes the group version unserved in discovery.
"""

from __future__ import annotations

import json
import subprocess
import threading
from collections.abc import Callable
from pathlib import Path

from gputui.domain.model import ClusterSnapshot
from gputui.settings import Settings
from gputui.sim.cluster import EmulatedCluster
from gputui.sources.connect import open_source
from gputui.sources.discovery import served
from gputui.sources.http import KubeHttp
from gputui.sources.kubeconfig import load_target
from tests.sources.helpers import cluster_policy, node

Run = Callable[..., subprocess.CompletedProcess[str]]
NS = "gpu-operator"
NO_CRD = "forbid:nvidiadrivers,status:404~/apis/nvidia.com/v1alpha1"


def _cluster(api_only: EmulatedCluster, tmp_path: Path) -> Path:
    api_only.store.create("nodes", node("gpu-0"))
    api_only.store.create("clusterpolicies.nvidia.com", cluster_policy(NS))
    return api_only.write_kubeconfig(tmp_path / "kc")


def test_check_reports_a_missing_crd_behind_a_403_as_not_served(
        gputui: Run, api_only: EmulatedCluster, tmp_path: Path) -> None:
    path = _cluster(api_only, tmp_path)
    api_only.inject(NO_CRD)
    args = ("check", "--kubeconfig", str(path), "--namespace", NS)
    report = json.loads(gputui(*args, "--json").stdout)
    assert "nvidiadrivers" not in {gap["resource"] for gap in report["unreadable"]}
    text = gputui(*args).stdout
    assert "nvidiadrivers" not in text and "partial:" not in text, text
    api_only.heal()
    api_only.inject("forbid:nvidiadrivers")  # served, and refused: forbidden it is
    report = json.loads(gputui(*args, "--json").stdout)
    assert {"resource": "nvidiadrivers", "reason": "forbidden"}.items() <= next(
        g for g in report["unreadable"] if g["resource"] == "nvidiadrivers").items()


def test_the_live_source_reports_it_not_served_too(api_only: EmulatedCluster,
                                                   tmp_path: Path) -> None:
    path = _cluster(api_only, tmp_path)
    api_only.inject(NO_CRD)
    source = open_source(Settings(kubeconfig=str(path), namespace=NS), watch_timeout=5)
    got: list[ClusterSnapshot] = []
    ready = threading.Event()

    def on_snapshot(snapshot: ClusterSnapshot) -> None:
        got.append(snapshot)
        if snapshot.nodes and not snapshot.loading and "nvidiadrivers" in snapshot.unreadable:
            ready.set()

    source.start(on_snapshot, lambda status: None)
    try:
        assert ready.wait(60), got[-1:] and got[-1].unreadable
        snapshot = got[-1]
        assert snapshot.unreadable["nvidiadrivers"] == "not-served"
        assert "nvidiadrivers" not in snapshot.forbidden
        assert not [gap for gap in snapshot.gaps if gap.resource == "nvidiadrivers"]
    finally:
        source.stop()


def test_served_reads_discovery(api_only: EmulatedCluster, tmp_path: Path) -> None:
    http = KubeHttp(load_target(str(_cluster(api_only, tmp_path))).configuration)
    try:
        assert served(http, "/apis/nvidia.com/v1alpha1/nvidiadrivers") is True
        assert served(http, "/api/v1/namespaces/x/pods") is True
        assert served(http, "/apis/nvidia.com/v1/teapots") is False
        assert served(http, "/apis/example.com/v1/things") is False
        assert served(http, "/version") is None  # names no collection: cannot tell
    finally:
        http.close()
