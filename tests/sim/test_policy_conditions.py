"""ClusterPolicy conditions worded as gpu-operator writes them.

``controllers/clusterpolicy_controller.go`` ``Reconcile``: ``SetConditionsReady`` with
``NFDLabelsMissing`` "No NFD labels found", ``NoGPUNodes`` "No GPU node found, watching for
new nodes to join the cluster." or ``Reconciled``; ``SetConditionsError`` with
``OperandNotReady`` and ``clusterPolicyNotReadyMessage``; a ClusterPolicy that is not the
singleton only gets ``SetStatus(Ignored)``, no condition (``internal/conditions/clusterpolicy.go``
writes Ready/Error only through those two calls).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.sim.conftest import Sim


def _conditions(sim: Sim, name: str = "cluster-policy") -> dict[str, tuple[str, str, str]]:
    policy = sim.custom.get_cluster_custom_object("nvidia.com", "v1", "clusterpolicies", name)
    return {c["type"]: (c["status"], c.get("reason", ""), c.get("message", ""))
            for c in (policy.get("status") or {}).get("conditions") or []}


def test_no_nfd_labels(start_sim: Any) -> None:
    sim = start_sim("empty", speed=10)
    sim.wait_for(lambda: _conditions(sim), 60, "status")
    assert _conditions(sim)["Ready"] == ("True", "NFDLabelsMissing", "No NFD labels found")
    assert _conditions(sim)["Error"][:2] == ("False", "Ready")


def test_ready_and_an_ignored_duplicate(start_sim: Any, tmp_path: Path) -> None:
    path = tmp_path / "two.yaml"
    path.write_text("summary: two policies\nextraClusterPolicies: [cluster-policy-2]\n"
                    "nodePools: [{name: l4, prefix: gke-prod-l4-pool-5a0b, count: 1, gpu: L4, "
                    "gpusPerNode: 2}]\n")
    sim = start_sim(str(path), speed=50)
    state = lambda name: (sim.custom.get_cluster_custom_object(
        "nvidia.com", "v1", "clusterpolicies", name).get("status") or {}).get("state")
    sim.wait_for(lambda: state("cluster-policy-2") == "ignored" and state("cluster-policy") == "ready",
                 300, "ready and ignored")
    reconciled = "ClusterPolicy is ready as all resources have been successfully reconciled"
    assert _conditions(sim)["Ready"] == ("True", "Reconciled", reconciled)
    assert _conditions(sim, "cluster-policy-2") == {}
