"""The driver DaemonSet's revisions as a real cluster keeps them.

Pods carry ``controller-revision-hash`` and the ControllerRevision ``<ds>-<hash>`` of the
current template is the newest (highest ``revision``): k8s-operator-libs
``pkg/upgrade/pod_manager.go`` ``GetDaemonsetControllerRevisionHash`` takes the hash from
the newest one. A template seen before (a rollback) reuses its ControllerRevision with a new
number (kubernetes ``pkg/controller/daemon/update.go`` ``constructHistory``). Was: the
rollback left the old revision's number, so the newest revision named the abandoned template.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

ROLLBACK = """summary: a driver version set and taken back before any pod is replaced
clusterPolicy:
  spec:
    driver:
      upgradePolicy: {autoUpgrade: false}
nodePools:
  - {name: h100, prefix: gke-test-h100-pool-1a2b, count: 1, gpu: H100-80GB, gpusPerNode: 8}
timeline:
  - {at: 2m, action: driver-version, version: 580.82.07}
  - {at: 4m, action: driver-version, version: 570.172.08}
"""
DRIVER = "nvidia-driver-daemonset"


def test_a_rollback_makes_the_old_revision_the_newest(start_sim: Any, tmp_path: Path) -> None:
    path = tmp_path / "rollback.yaml"
    path.write_text(ROLLBACK)
    sim = start_sim(str(path), speed=60)
    revisions = lambda: sim.apps.list_namespaced_controller_revision(  # noqa: E731
        "gpu-operator", label_selector=f"app={DRIVER}").items
    pod_hash = lambda: sim.core.list_namespaced_pod(  # noqa: E731
        "gpu-operator", label_selector=f"app={DRIVER}").items[0].metadata.labels[
        "controller-revision-hash"]
    first = pod_hash()
    sim.wait_for(lambda: len(revisions()) == 2 and max(
        revisions(), key=lambda r: r.revision).metadata.name == f"{DRIVER}-{first}", 600,
                 "the first template the newest revision again")
    newest = max(revisions(), key=lambda r: r.revision)
    assert newest.revision == 3 and pod_hash() == first  # the pod was never replaced
