"""``/openapi/v3``: every served group version has a self-contained document kubectl reads."""

from __future__ import annotations

from typing import Any

from gputui.sim.apiserver.openapi_dsl import REF_PREFIX, refs_in
from gputui.sim.cluster import EmulatedCluster
from gputui.sim.resources import RESOURCE_TYPES
from gputui.sim.version import GIT_VERSION
from tests.apiserver.conftest import http


def _documents(cluster: EmulatedCluster) -> dict[str, dict[str, Any]]:
    status, index = http(cluster, "GET", "/openapi/v3")
    assert status == 200
    out = {}
    for path, entry in index["paths"].items():
        url = entry["serverRelativeURL"]
        assert url.startswith(f"/openapi/v3/{path}?hash=")
        status, document = http(cluster, "GET", url)
        assert status == 200, url
        out[path] = document
    return out


def test_index_lists_exactly_the_served_group_versions(api_only: EmulatedCluster) -> None:
    served = {f"apis/{r.group}/{r.version}" if r.group else f"api/{r.version}"
              for r in RESOURCE_TYPES}
    assert set(_documents(api_only)) == served


def test_every_served_kind_has_a_schema_and_a_path(api_only: EmulatedCluster) -> None:
    documents = _documents(api_only)
    for rtype in RESOURCE_TYPES:
        document = documents[f"apis/{rtype.group}/{rtype.version}" if rtype.group
                             else f"api/{rtype.version}"]
        assert document["info"]["version"] == GIT_VERSION
        gvk = {"group": rtype.group, "version": rtype.version, "kind": rtype.kind}
        kinds = [s for s in document["components"]["schemas"].values()
                 if gvk in s.get("x-kubernetes-group-version-kind", [])]
        assert len(kinds) == 1, rtype.kind
        assert {"apiVersion", "kind", "metadata"} <= set(kinds[0]["properties"])
        tagged = [op["x-kubernetes-group-version-kind"] for ops in document["paths"].values()
                  for op in ops.values()]
        assert gvk in tagged, rtype.kind


def test_every_reference_resolves_inside_its_document(api_only: EmulatedCluster) -> None:
    for path, document in _documents(api_only).items():
        schemas = document["components"]["schemas"]
        for name in refs_in(document):
            assert name in schemas, f"{path}: {REF_PREFIX}{name} dangles"


def _field(document: dict[str, Any], schema: dict[str, Any], *names: str) -> dict[str, Any]:
    """Follow properties (through allOf references) as kubectl explain does."""
    for name in names:
        while "properties" not in schema:
            schema = document["components"]["schemas"][
                schema["allOf"][0]["$ref"][len(REF_PREFIX):]]
        schema = schema["properties"][name]
    return schema


def test_fields_operators_look_up_are_described(api_only: EmulatedCluster) -> None:
    documents = _documents(api_only)
    core = documents["api/v1"]
    node = core["components"]["schemas"]["io.k8s.api.core.v1.Node"]
    unschedulable = _field(core, node, "spec", "unschedulable")
    assert unschedulable["type"] == "boolean" and "cordon" in unschedulable["description"]
    kubelet = _field(core, node, "status", "nodeInfo", "kubeletVersion")
    assert kubelet["type"] == "string"
    nvidia = documents["apis/nvidia.com/v1"]
    policy = nvidia["components"]["schemas"]["com.nvidia.v1.ClusterPolicy"]
    upgrade = _field(nvidia, policy, "spec", "driver", "upgradePolicy")
    assert {"autoUpgrade", "maxParallelUpgrades", "maxUnavailable", "drain", "podDeletion",
            "waitForCompletion"} <= set(upgrade["properties"])
    assert _field(nvidia, upgrade, "drain", "enable")["type"] == "boolean"
    driver = documents["apis/nvidia.com/v1alpha1"]["components"]["schemas"][
        "com.nvidia.v1alpha1.NVIDIADriver"]
    assert set(driver["properties"]["spec"]["properties"]["driverType"]["enum"]) == {
        "gpu", "vgpu", "vgpu-host-manager"}


def test_unknown_group_version_is_404(api_only: EmulatedCluster) -> None:
    status, body = http(api_only, "GET", "/openapi/v3/apis/metrics.k8s.io/v1beta1")
    assert status == 404 and body["reason"] == "NotFound"
