"""With ``driver.useNvidiaDriverCRD`` the driver version and upgrade policy live on the
NVIDIADriver: the actions patch it (reading its resourceVersion first), and the emulated
operator rolls the nodes to its version."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from gputui.actions.upgrade_limits import SetMaxParallel
from gputui.actions.upgrade_policy import SetDriverVersion
from tests.actions.upgrade.helpers import Cluster, apply, plan_of

SCENARIO = """summary: the driver delegated to an NVIDIADriver
clusterPolicy:
  spec:
    driver: {useNvidiaDriverCRD: true}
nodePools:
  - {name: h100, prefix: gke-test-h100-pool-1a2b, count: 2, gpu: H100-80GB, gpusPerNode: 8}
"""


def _nvidiadriver(cluster: Cluster) -> dict[str, Any]:
    obj: dict[str, Any] = cluster.sim.custom.get_cluster_custom_object(
        "nvidia.com", "v1alpha1", "nvidiadrivers", "default")
    return obj


def test_version_and_policy_go_to_the_owning_nvidiadriver(start_sim: Any, tmp_path: Path) -> None:
    path = tmp_path / "nvd.yaml"
    path.write_text(SCENARIO)
    cluster = Cluster(start_sim(str(path), speed=600), tmp_path)
    cluster.sim.custom.create_cluster_custom_object("nvidia.com", "v1alpha1", "nvidiadrivers", {
        "apiVersion": "nvidia.com/v1alpha1", "kind": "NVIDIADriver",
        "metadata": {"name": "default"},
        "spec": {"default": True, "driverType": "gpu", "version": "570.172.08",
                 "upgradePolicy": {"maxParallelUpgrades": 0, "maxUnavailable": "100%"}}})
    nodes = cluster.sim.operator.world.pool_members["h100"]
    cluster.sim.wait_for(lambda: all(cluster.state(n) == "upgrade-done" for n in nodes), 600,
                         "converged")
    parallel = plan_of(SetMaxParallel(), cluster, params={"value": "2"})
    assert parallel.changes[0].kind == "NVIDIADriver"
    assert parallel.changes[0].body == {"spec": {"upgradePolicy": {"maxParallelUpgrades": 2}}}
    assert apply(SetMaxParallel(), parallel, cluster)[0].ok
    assert _nvidiadriver(cluster)["spec"]["upgradePolicy"]["maxParallelUpgrades"] == 2
    plan = plan_of(SetDriverVersion(), cluster, params={"version": "580.82.07"})
    (change,) = plan.changes
    assert (change.kind, change.name) == ("NVIDIADriver", "default")
    assert change.body == {"spec": {"version": "580.82.07"}}
    assert change.kubectl.startswith("kubectl patch nvidiadrivers.nvidia.com default --type merge")
    assert apply(SetDriverVersion(), plan, cluster)[0].ok
    assert _nvidiadriver(cluster)["spec"]["version"] == "580.82.07"
    assert cluster.policy()["spec"]["driver"].get("version", "570.172.08") == "570.172.08"

    def upgraded() -> bool:
        pods = cluster.sim.core.list_namespaced_pod(
            "gpu-operator", label_selector="app=nvidia-driver-daemonset").items
        return len(pods) == 2 and all("580.82.07" in p.spec.containers[0].image for p in pods) \
            and all(cluster.state(n) == "upgrade-done" for n in nodes)
    cluster.sim.wait_for(upgraded, 7200, "nodes rolled to the NVIDIADriver's version")
