"""managedFields worked out once per distinct write and shared between objects: sharing must
never let one object's write show in another's, and must give what a field-by-field
bookkeeping gives."""

from __future__ import annotations

import copy
from typing import Any

from gputui.sim.clock import SimClock
from gputui.sim.managedfields import FieldOwners, owned
from gputui.sim.store import Store


def _node(name: str, **labels: str) -> dict[str, Any]:
    return {"metadata": {"name": name, "labels": dict(labels)}, "spec": {"podCIDR": "x"},
            "status": {"capacity": {"cpu": "8"}}}


def _fields(obj: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {e["manager"]: e["fieldsV1"] for e in obj["metadata"]["managedFields"]}


def test_objects_of_one_shape_share_their_entries_and_a_write_to_one_leaves_the_other() -> None:
    store = Store(SimClock(start=1_800_000_000.0, frozen=True))
    a = store.create("nodes", _node("a", pool="x"), manager="kubelet")
    b = store.create("nodes", _node("b", pool="y"), manager="kubelet")
    assert a["metadata"]["managedFields"] is b["metadata"]["managedFields"]
    shared = copy.deepcopy(b["metadata"]["managedFields"])
    store.mutate("nodes", "a", None, lambda o: o["metadata"]["labels"].update(pool="z"),
                 manager="operator")
    assert store.require("nodes", "b")["metadata"]["managedFields"] == shared
    after = _fields(store.require("nodes", "a"))
    assert after["operator"] == {"f:metadata": {"f:labels": {"f:pool": {}}}}
    assert after["kubelet"] == {"f:spec": {"f:podCIDR": {}}, "f:status": {"f:capacity": {}}}


def test_a_label_set_to_null_is_not_owned_and_a_different_shape_is_not_shared() -> None:
    store = Store(SimClock(start=1_800_000_000.0, frozen=True))
    plain = store.create("nodes", _node("a", pool="x"), manager="kubelet")
    nulled = _node("b", pool="x")
    nulled["metadata"]["labels"]["gone"] = None
    made = store.create("nodes", nulled, manager="kubelet")
    assert made["metadata"]["managedFields"] is plain["metadata"]["managedFields"]
    other = store.create("nodes", _node("c", pool="x", extra="1"), manager="kubelet")
    assert "f:extra" in _fields(other)["kubelet"]["f:metadata"]["f:labels"]
    assert "f:extra" not in _fields(plain)["kubelet"]["f:metadata"]["f:labels"]


def test_entries_sent_with_a_new_object_are_kept_beside_the_creators() -> None:
    store = Store()
    obj = _node("a", pool="x")
    obj["metadata"]["managedFields"] = [{
        "manager": "helm", "operation": "Apply", "apiVersion": "v1", "fieldsType": "FieldsV1",
        "fieldsV1": {"f:metadata": {"f:labels": {"f:team": {}}}}, "time": "2026-01-01T00:00:00Z"}]
    made = store.create("nodes", obj, manager="kubectl")
    assert [e["manager"] for e in made["metadata"]["managedFields"]] == ["helm", "kubectl"]
    assert "f:pool" not in _fields(made)["helm"]["f:metadata"]["f:labels"]


def test_owning_leaves_the_entries_it_was_given_and_drops_an_entry_left_empty() -> None:
    entries = [
        {"manager": "kubelet", "operation": "Update", "apiVersion": "v1",
         "fieldsType": "FieldsV1", "time": "t0",
         "fieldsV1": {"f:metadata": {"f:labels": {"f:a": {}}}}},
        {"manager": "gfd", "operation": "Update", "apiVersion": "v1",
         "fieldsType": "FieldsV1", "time": "t0",
         "fieldsV1": {"f:metadata": {"f:labels": {"f:b": {}, "f:c": {}}}}},
    ]
    before = copy.deepcopy(entries)
    result = owned(entries, [("f:metadata", "f:labels", "f:a"), ("f:metadata", "f:labels", "f:b")],
                   "gfd", "Update", "v1", "t1")
    assert entries == before
    assert [e["manager"] for e in result] == ["gfd"]  # kubelet owned nothing else
    assert result[0]["time"] == "t1"
    assert result[0]["fieldsV1"] == {"f:metadata": {"f:labels": {"f:a": {}, "f:b": {}, "f:c": {}}}}


def test_an_entry_the_write_does_not_touch_is_shared_not_copied() -> None:
    untouched = {"manager": "nfd", "operation": "Update", "apiVersion": "v1",
                 "fieldsType": "FieldsV1", "time": "t0",
                 "fieldsV1": {"f:metadata": {"f:labels": {"f:n": {}}}}}
    result = owned([untouched], [("f:spec", "f:unschedulable")], "kubectl", "Update", "v1", "t1")
    assert result[0] is untouched


def test_the_same_write_over_the_same_entries_is_worked_out_once() -> None:
    owners = FieldOwners()
    node = _node("a", pool="x")
    first = owners.created(node, "kubelet", "Update", "t0")
    assert first is owners.created(_node("b", pool="y"), "kubelet", "Update", "t0")
    assert first is not owners.created(node, "kubelet", "Update", "t1")
    path = [("f:metadata", "f:labels", "f:pool")]
    again = owners.after_paths(first, path, "operator", "Update", "v1", "t2")
    assert again is owners.after_paths(first, path, "operator", "Update", "v1", "t2")
    assert again is not owners.after_paths(list(first or []), path, "operator", "Update", "v1",
                                           "t2")


def test_amend_removes_a_label_given_as_null_as_a_write() -> None:
    store = Store()
    made = store.create("nodes", _node("a", pool="x", old="1"), manager="kubelet")
    version = int(made["metadata"]["resourceVersion"])
    result = store.amend("nodes", "a", None, labels={"old": None}, manager="nfd")
    assert "old" not in result["metadata"]["labels"]
    assert int(result["metadata"]["resourceVersion"]) > version
    assert "nfd" not in _fields(result)
