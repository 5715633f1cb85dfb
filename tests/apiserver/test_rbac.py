"""``--deny``: chosen verbs refused with 403 and by SelfSubjectAccessReview, others allowed."""

from __future__ import annotations

import subprocess
import sys

import pytest
from kubernetes import client as k8s
from kubernetes.client.rest import ApiException

from gputui.sim.apiserver.rbac import parse_deny
from gputui.sim.cluster import EmulatedCluster
from tests.apiserver.conftest import node, pod


def _review(api: k8s.ApiClient, verb: str, resource: str, subresource: str | None = None,
            group: str | None = None) -> k8s.V1SubjectAccessReviewStatus:
    body = k8s.V1SelfSubjectAccessReview(spec=k8s.V1SelfSubjectAccessReviewSpec(
        resource_attributes=k8s.V1ResourceAttributes(verb=verb, resource=resource,
                                                     subresource=subresource, group=group)))
    return k8s.AuthorizationV1Api(api).create_self_subject_access_review(body).status


def test_denied_verbs_answer_403_and_reviews_say_no(api: k8s.ApiClient, core: k8s.CoreV1Api,
                                                    api_only: EmulatedCluster) -> None:
    api_only.store.create("nodes", node("gpu-1"))
    api_only.store.create("pods", pod("p", "gpu-1"))
    assert _review(api, "patch", "nodes").allowed
    api_only.set_deny("patch:nodes,create:pods/eviction,*:clusterpolicies.nvidia.com")
    with pytest.raises(ApiException) as error:
        core.patch_node("gpu-1", {"spec": {"unschedulable": True}})
    assert error.value.status == 403
    assert ('nodes \\"gpu-1\\" is forbidden: User \\"operator\\" cannot patch resource '
            '\\"nodes\\"') in error.value.body
    with pytest.raises(ApiException) as evict:
        core.create_namespaced_pod_eviction("p", "default", k8s.V1Eviction(
            metadata=k8s.V1ObjectMeta(name="p", namespace="default")))
    assert evict.value.status == 403 and api_only.store.get("pods", "p", "default")
    core.read_node("gpu-1")  # get is not denied
    core.patch_namespaced_pod("p", "default", {"metadata": {"labels": {"a": "b"}}})
    status = _review(api, "patch", "nodes")
    assert not status.allowed and "refuses patch nodes" in status.reason
    assert not _review(api, "create", "pods", "eviction").allowed
    assert _review(api, "create", "pods").allowed
    assert not _review(api, "get", "clusterpolicies", group="nvidia.com").allowed
    assert _review(api, "patch", "nodes", group="nvidia.com").allowed
    api_only.set_deny(None)
    assert _review(api, "patch", "nodes").allowed
    core.patch_node("gpu-1", {"spec": {"unschedulable": True}})


@pytest.mark.parametrize("spec", ["patch", "poke:nodes", "patch:"])
def test_bad_deny_spec_is_one_line(spec: str) -> None:
    with pytest.raises(ValueError, match="--deny entry"):
        parse_deny(spec)
    result = subprocess.run([sys.executable, "-m", "gputui", "sim", "--deny", spec],
                            capture_output=True, text=True, timeout=60, check=False)
    assert result.returncode == 2
    assert "--deny entry" in result.stderr and "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_denied_reads_answer_the_real_servers_forbidden_status(
        api: k8s.ApiClient, core: k8s.CoreV1Api, api_only: EmulatedCluster) -> None:
    """list/watch/get refused as kube-apiserver words it: a Status with reason Forbidden,
    the resource as ``details.kind``, the namespace or the cluster scope in the message."""
    import json

    api_only.store.create("nodes", node("gpu-1"))
    api_only.set_deny("list:pods,watch:pods,get:pods,list:nodes")
    cases = [
        (lambda: core.list_namespaced_pod("gpu-operator"),
         ('pods is forbidden: User "operator" cannot list resource "pods" in API group "" in '
         'the namespace "gpu-operator"'), {"kind": "pods"}),
        (lambda: core.list_namespaced_pod("gpu-operator", watch=True, _preload_content=False),
         ('pods is forbidden: User "operator" cannot watch resource "pods" in API group "" in '
         'the namespace "gpu-operator"'), {"kind": "pods"}),
        (lambda: core.list_pod_for_all_namespaces(),
         ('pods is forbidden: User "operator" cannot list resource "pods" in API group "" at '
         'the cluster scope'), {"kind": "pods"}),
        (lambda: core.read_namespaced_pod("p", "default"),
         ('pods "p" is forbidden: User "operator" cannot get resource "pods" in API group "" in '
         'the namespace "default"'), {"kind": "pods", "name": "p"}),
        (lambda: core.list_node(),
         ('nodes is forbidden: User "operator" cannot list resource "nodes" in API group "" at '
         'the cluster scope'), {"kind": "nodes"}),
    ]
    for call, message, details in cases:
        with pytest.raises(ApiException) as error:
            call()
        status = json.loads(error.value.body)
        assert error.value.status == 403
        assert status == {"kind": "Status", "apiVersion": "v1", "metadata": {},
                          "status": "Failure", "message": message, "reason": "Forbidden",
                          "details": details, "code": 403}
    core.read_node("gpu-1")  # get of nodes is not denied
