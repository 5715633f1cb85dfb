"""Discovery documents as the kubernetes client and kubectl read them."""

from __future__ import annotations

from kubernetes import client as k8s

from tests.apiserver.conftest import KubectlRun


def test_version_and_groups(api: k8s.ApiClient) -> None:
    version = k8s.VersionApi(api).get_code()
    assert version.major == "1" and version.git_version.startswith("v1.")
    groups = {g.name: g for g in k8s.ApisApi(api).get_api_versions().groups}
    assert set(groups) == {"apps", "policy", "authorization.k8s.io", "authentication.k8s.io",
                           "nvidia.com"}
    assert groups["nvidia.com"].preferred_version.version == "v1"
    assert [v.version for v in groups["nvidia.com"].versions] == ["v1", "v1alpha1"]
    assert k8s.CoreApi(api).get_api_versions().versions == ["v1"]


def test_core_resources_and_subresources(core: k8s.CoreV1Api) -> None:
    resources = {r.name: r for r in core.get_api_resources().resources}
    eviction = resources["pods/eviction"]
    assert (eviction.group, eviction.version, eviction.kind, eviction.verbs) == \
        ("policy", "v1", "Eviction", ["create"])
    assert resources["nodes"].short_names == ["no"] and not resources["nodes"].namespaced
    assert resources["pods"].namespaced and "watch" in resources["pods"].verbs
    for name in ("pods/log", "pods/proxy", "pods/status", "nodes/status"):
        assert name in resources


def test_group_resources(api: k8s.ApiClient) -> None:
    apps = {r.name: r for r in k8s.AppsV1Api(api).get_api_resources().resources}
    assert apps["daemonsets"].short_names == ["ds"] and "daemonsets/status" in apps
    assert "controllerrevisions" in apps
    group = k8s.AppsApi(api).get_api_group()
    assert group.preferred_version.group_version == "apps/v1"


def test_kubectl_api_resources(kubectl: KubectlRun) -> None:
    out = kubectl("api-resources").stdout
    assert "clusterpolicies" in out and "nvidia.com/v1" in out
    assert "nvidiadrivers" in out and "poddisruptionbudgets" in out
    assert "metrics.k8s.io" not in out
    assert kubectl("version", "-o", "json").returncode == 0
