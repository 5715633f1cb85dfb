"""Protobuf request bodies: the bytes kubectl 1.35 really sends, and how the server answers."""

from __future__ import annotations

import pytest

from gputui.sim.apiserver.kubeproto import (
    MAGIC,
    PROTOBUF_TYPE,
    decode_body,
    decode_message,
    encode_body,
    encode_message,
)
from gputui.sim.apiserver.protowire import length_field, varint_field
from gputui.sim.cluster import EmulatedCluster
from gputui.sim.errors import ApiError
from tests.apiserver.conftest import http

# Request bodies captured from kubectl v1.35.2 (-v=9) against the emulated server: auth
# can-i patch nodes, create configmap, create pdb, debug node/<name>.
CAN_I_PATCH_NODES = bytes.fromhex(
    "6b3873000a320a17617574686f72697a6174696f6e2e6b38732e696f2f7631121753656c66537562"
    "6a656374416363657373526576696577123f0a100a0012001a0022002a0032003800420012210a1f"
    "0a0764656661756c74120570617463681a0022002a056e6f64657332003a001a08080012001a0020"
    "001a002200")
CREATE_CONFIGMAP = bytes.fromhex(
    "6b3873000a0f0a0276311209436f6e6669674d6170121e0a140a04636d313412001a0022002a0032"
    "003800420012060a01611201621a002200")
CREATE_PDB = bytes.fromhex(
    "6b3873000a200a09706f6c6963792f76311213506f6444697372757074696f6e4275646765741251"
    "0a1b0a047064627812001a0764656661756c7422002a00320038004200122612190a080a03617070"
    "120178120d0a04746965721202496e1a01611a09080110001a033235251a0a080018002000280030"
    "001a002200")
DEBUG_NODE_POD = bytes.fromhex(
    "6b3873000a090a0276311203506f6412b2020a6f0a306e6f64652d64656275676765722d676b652d"
    "70726f642d613130302d706f6f6c2d326239632d386b686c2d6476396d3512001a0022002a003200"
    "380042005a2d0a1c6170702e6b756265726e657465732e696f2f6d616e616765642d6279120d6b75"
    "626563746c2d646562756712a9010a120a09686f73742d726f6f7412050a030a012f12450a086465"
    "627567676572120762757379626f782a0042004a180a09686f73742d726f6f7410001a052f686f73"
    "74220032006a007200800100880100900100a2010446696c651a054e65766572320042004a00521c"
    "676b652d70726f642d613130302d706f6f6c2d326239632d386b686c5801600168018201008a0100"
    "9a0100b2010e0a0012064578697374731a002200c201001a130a001a0022002a0032004a005a0072"
    "008801001a002200")


def _wrap(api_version: str, kind: str, raw: bytes = b"") -> bytes:
    """A ``k8s\\0`` envelope around ``raw``, built field by field."""
    type_meta = length_field(1, api_version.encode()) + length_field(2, kind.encode())
    return MAGIC + length_field(1, type_meta) + length_field(2, raw)


def test_kubectl_can_i_body_decodes_to_the_json_dict() -> None:
    assert decode_body(CAN_I_PATCH_NODES) == {
        "kind": "SelfSubjectAccessReview", "apiVersion": "authorization.k8s.io/v1",
        "metadata": {},
        "spec": {"resourceAttributes": {"namespace": "default", "verb": "patch",
                                        "resource": "nodes"}},
        "status": {}}


def test_kubectl_create_configmap_and_pdb_bodies_decode() -> None:
    assert decode_body(CREATE_CONFIGMAP) == {
        "kind": "ConfigMap", "apiVersion": "v1", "metadata": {"name": "cm14"},
        "data": {"a": "b"}}
    assert decode_body(CREATE_PDB) == {
        "kind": "PodDisruptionBudget", "apiVersion": "policy/v1",
        "metadata": {"name": "pdbx", "namespace": "default"},
        "spec": {"selector": {"matchLabels": {"app": "x"},
                              "matchExpressions": [{"key": "tier", "operator": "In",
                                                    "values": ["a"]}]},
                 "maxUnavailable": "25%"}}


def test_kubectl_debug_node_pod_decodes() -> None:
    pod = decode_body(DEBUG_NODE_POD)
    assert pod["metadata"]["labels"] == {"app.kubernetes.io/managed-by": "kubectl-debug"}
    assert pod["spec"] == {
        "volumes": [{"name": "host-root", "hostPath": {"path": "/"}}],
        "containers": [{"name": "debugger", "image": "busybox", "resources": {},
                        "volumeMounts": [{"name": "host-root", "mountPath": "/host"}],
                        "terminationMessagePolicy": "File"}],
        "restartPolicy": "Never", "nodeName": "gke-prod-a100-pool-2b9c-8khl",
        "hostNetwork": True, "hostPID": True, "hostIPC": True,
        "tolerations": [{"operator": "Exists"}]}


def test_unread_fields_with_data_refuse_the_body_and_zeros_are_skipped() -> None:
    container = {"name": "c", "image": "i"}
    raw = encode_message("Container", container)
    zero_probe = length_field(10, length_field(1, b"") + varint_field(2, 0))
    assert decode_message("Container", raw + zero_probe) == container
    probe = length_field(10, varint_field(2, 5))  # livenessProbe.initialDelaySeconds = 5
    with pytest.raises(ApiError) as caught:
        decode_body(_wrap("v1", "Pod", length_field(2, length_field(2, raw + probe))))
    assert caught.value.code == 415 and "field 10 of Container" in caught.value.message


def test_quantities_and_inline_volume_sources_round_trip() -> None:
    spec = {"containers": [{"name": "c", "resources": {"limits": {"nvidia.com/gpu": "1"},
                                                       "requests": {"memory": "512Mi"}}}],
            "volumes": [{"name": "scratch", "emptyDir": {"sizeLimit": "1Gi"}}]}
    assert decode_message("PodSpec", encode_message("PodSpec", spec)) == spec


def test_round_trip_keeps_pointer_zeros_and_drops_empty_strings() -> None:
    options = {"gracePeriodSeconds": 0, "orphanDependents": False,
               "preconditions": {"uid": "u-1"}, "dryRun": ["All"],
               "propagationPolicy": ""}
    decoded = decode_message("DeleteOptions", encode_message("DeleteOptions", options))
    assert decoded == {"gracePeriodSeconds": 0, "orphanDependents": False,
                       "preconditions": {"uid": "u-1"}, "dryRun": ["All"]}


def test_round_trip_of_metadata_times_owners_and_binary_data() -> None:
    configmap = {"apiVersion": "v1", "kind": "ConfigMap",
                 "metadata": {"name": "x", "namespace": "gpu-operator",
                              "creationTimestamp": "2026-11-29T10:00:00Z",
                              "labels": {"a": "1", "b": "2"}, "generation": 3,
                              "ownerReferences": [{"apiVersion": "nvidia.com/v1",
                                                   "kind": "ClusterPolicy", "name": "p",
                                                   "uid": "u", "controller": True}]},
                 "binaryData": {"blob": "AAEC"}, "immutable": True}
    assert decode_body(encode_body(configmap)) == configmap


def test_int_or_string_both_ways() -> None:
    for value in (2, "25%"):
        spec = {"minAvailable": value}
        assert decode_message("PodDisruptionBudgetSpec",
                              encode_message("PodDisruptionBudgetSpec", spec)) == spec


@pytest.mark.parametrize(("body", "code", "text"), [
    (b"{}", 400, "prefix"),
    (CREATE_CONFIGMAP[:-5], 400, "could not be decoded"),
    (_wrap("apps/v1", "DaemonSet"), 415, "unknown format"),
    (_wrap("v1", "ConfigMap", b"\x12\x05\x0a\x01a"), 400, "could not be decoded"),
])
def test_bad_or_unsupported_bodies(body: bytes, code: int, text: str) -> None:
    with pytest.raises(ApiError) as caught:
        decode_body(body)
    assert caught.value.code == code and text in caught.value.message


def test_server_answers_protobuf_can_i_in_json(api_only: EmulatedCluster) -> None:
    status, review = http(api_only, "POST",
                          "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
                          CAN_I_PATCH_NODES, content_type=PROTOBUF_TYPE,
                          headers={"Accept": f"{PROTOBUF_TYPE},application/json"})
    assert status == 201
    assert review["spec"]["resourceAttributes"]["verb"] == "patch"
    assert review["status"]["allowed"] is True


def test_server_stores_a_protobuf_configmap(api_only: EmulatedCluster) -> None:
    status, created = http(api_only, "POST", "/api/v1/namespaces/default/configmaps",
                           CREATE_CONFIGMAP, content_type=PROTOBUF_TYPE)
    assert status == 201 and created["data"] == {"a": "b"}
    assert api_only.store.get("configmaps", "cm14", "default")["data"] == {"a": "b"}


def test_a_kind_without_protobuf_support_is_415(api_only: EmulatedCluster) -> None:
    daemonset = _wrap("apps/v1", "DaemonSet", length_field(1, length_field(1, b"d")))
    status, body = http(api_only, "POST", "/apis/apps/v1/namespaces/default/daemonsets",
                        daemonset, content_type=PROTOBUF_TYPE)
    assert status == 415 and body["reason"] == "UnsupportedMediaType"
    assert api_only.store.get("daemonsets.apps", "d", "default") is None


def test_protobuf_only_accept_is_406_and_json_second_choice_is_json(
        api_only: EmulatedCluster) -> None:
    status, body = http(api_only, "GET", "/api/v1/namespaces",
                        headers={"Accept": PROTOBUF_TYPE})
    assert status == 406 and body["reason"] == "NotAcceptable"
    status, body = http(api_only, "GET", "/api/v1/namespaces",
                        headers={"Accept": f"{PROTOBUF_TYPE}, application/json;q=0.9"})
    assert status == 200 and body["kind"] == "NamespaceList"
    status, _ = http(api_only, "GET", "/api/v1/namespaces",
                     headers={"Accept": f"{PROTOBUF_TYPE}, application/json;q=0"})
    assert status == 406
