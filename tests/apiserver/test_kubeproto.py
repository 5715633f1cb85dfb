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
from gputui.sim.apiserver.protowire import length_field
from gputui.sim.cluster import EmulatedCluster
from gputui.sim.errors import ApiError
from tests.apiserver.conftest import http

# Request bodies captured from kubectl v1.35.2 with -v=8 against the emulated server.
CAN_I_PATCH_NODES = bytes.fromhex(
    "6b3873000a320a17617574686f72697a6174696f6e2e6b38732e696f2f76311217"
    "53656c665375626a6563744163636573735265766965771" "23f0a100a0012001a00220"
    "02a00320038004200122"
    "10a1f0a0764656661756c7412057061746368" "1a0022002a056e6f64657332003a001a"
    "0808001200" "1a0020001a002200")
CREATE_CONFIGMAP = bytes.fromhex(
    "6b3873000a0f0a0276311209436f6e6669674d617012" "1e0a140a04636d31341200"
    "1a0022002a0032003800420012060a01611201621a002200")
CREATE_PDB = bytes.fromhex(
    "6b3873000a200a09706f6c6963792f7631121350" "6f64446973727570" "74696f6e427564676574"
    "12510a1b0a0470646278" "12001a0764656661756c7422002a003200380042001226"
    "12190a080a036170701201781" "20d0a04746965721202496e1a0161" "1a0908011000"
    "1a03323525" "1a0a0800180020002800300" "01a002200")


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
    (_wrap("v1", "Pod"), 415, "unknown format"),
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
    pod = _wrap("v1", "Pod", length_field(1, length_field(1, b"p")))
    status, body = http(api_only, "POST", "/api/v1/namespaces/default/pods", pod,
                        content_type=PROTOBUF_TYPE)
    assert status == 415 and body["reason"] == "UnsupportedMediaType"
    assert api_only.store.get("pods", "p", "default") is None


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
