"""SelfSubjectReview (``kubectl auth whoami``): the emulated server says who the caller is.

kubectl 1.35 sends the review as protobuf; the ``kubernetes`` client and gputui's writer send
JSON. kubectl 1.20 predates ``auth whoami`` (it was added in 1.26), so its run checks only
that discovery advertises the resource.
"""

from __future__ import annotations

import json

import pytest
from kubernetes import client as k8s
from kubernetes.client.rest import ApiException

from gputui.sim.apiserver.rbac import Identity
from gputui.sim.cluster import EmulatedCluster
from tests.apiserver.conftest import Kubectl, http


def test_the_review_answers_the_configured_identity(api: k8s.ApiClient,
                                                    api_only: EmulatedCluster) -> None:
    authn = k8s.AuthenticationV1Api(api)
    review = authn.create_self_subject_review(k8s.V1SelfSubjectReview())
    assert review.kind == "SelfSubjectReview"
    assert review.status.user_info.username == "operator"
    assert review.status.user_info.groups == ["system:authenticated"]
    api_only.set_identity(Identity("alice@example.com", ("gpu-oncall", "system:authenticated")))
    info = authn.create_self_subject_review(k8s.V1SelfSubjectReview()).status.user_info
    assert (info.username, info.groups) == ("alice@example.com",
                                            ["gpu-oncall", "system:authenticated"])
    api_only.set_deny("patch:nodes")
    with pytest.raises(ApiException) as error:
        k8s.CoreV1Api(api).patch_node("gpu-x", {})
    assert 'User \\"alice@example.com\\" cannot patch' in error.value.body  # one identity


def test_the_review_can_be_denied_like_any_verb(api: k8s.ApiClient,
                                                api_only: EmulatedCluster) -> None:
    api_only.set_deny("create:selfsubjectreviews.authentication.k8s.io")
    with pytest.raises(ApiException) as error:
        k8s.AuthenticationV1Api(api).create_self_subject_review(k8s.V1SelfSubjectReview())
    assert error.value.status == 403


def test_only_post_is_served(api_only: EmulatedCluster) -> None:
    status, body = http(api_only, "GET", "/apis/authentication.k8s.io/v1/selfsubjectreviews")
    assert status == 405 and body["kind"] == "Status"


@pytest.mark.kubectl
def test_kubectl_auth_whoami(kubectl: Kubectl, api_only: EmulatedCluster) -> None:
    resources = json.loads(kubectl("get", "--raw", "/apis/authentication.k8s.io/v1").stdout)
    assert [r["name"] for r in resources["resources"]] == ["selfsubjectreviews"]
    if kubectl.version < (1, 35):
        return  # 1.20 has no "auth whoami"
    api_only.set_identity(Identity("alice@example.com", ("gpu-oncall", "system:authenticated")))
    table = kubectl("auth", "whoami").stdout
    assert "Username    alice@example.com" in table
    assert "[gpu-oncall system:authenticated]" in table
    document = json.loads(kubectl("auth", "whoami", "-o", "json").stdout)
    assert document["status"]["userInfo"]["username"] == "alice@example.com"
