"""The emulated store's own guarantees: versions, watch replay, 410, managedFields."""

from __future__ import annotations

import pytest

from gputui.sim.errors import ApiError
from gputui.sim.store import Store, WatchEvent


def _node(name: str, **labels: str) -> dict[str, object]:
    return {"metadata": {"name": name, "labels": dict(labels)}, "spec": {}}


def test_every_write_bumps_the_resource_version_and_noop_writes_do_not() -> None:
    store = Store()
    created = store.create("nodes", _node("a"))
    first = int(created["metadata"]["resourceVersion"])
    same = store.mutate("nodes", "a", None, lambda obj: None)
    assert same["metadata"]["resourceVersion"] == str(first)
    changed = store.mutate("nodes", "a", None, lambda obj: obj["metadata"]["labels"].update(x="1"))
    assert int(changed["metadata"]["resourceVersion"]) > first


def test_watch_replays_backlog_then_live_events_and_expires_after_compaction() -> None:
    store = Store()
    store.create("nodes", _node("a"))
    since = store.resource_version
    store.create("nodes", _node("b"))
    seen: list[WatchEvent] = []
    handle, backlog = store.watch("nodes", seen.append, since=since)
    assert [e.obj["metadata"]["name"] for e in backlog] == ["b"]
    store.delete("nodes", "a")
    assert [(e.type, e.obj["metadata"]["name"]) for e in seen] == [("DELETED", "a")]
    handle.cancel()
    store.compact("nodes")
    with pytest.raises(ApiError) as gone:
        store.watch("nodes", seen.append, since=since)
    assert gone.value.code == 410


def test_a_failing_watcher_is_cancelled_without_undoing_the_write() -> None:
    store = Store()

    def broken(event: WatchEvent) -> None:
        raise RuntimeError("boom")

    handle, _ = store.watch("nodes", broken)
    store.create("nodes", _node("a"))
    assert store.get("nodes", "a") is not None
    assert not handle.active


def test_managed_fields_record_who_last_changed_a_label_and_when() -> None:
    store = Store()
    store.create("nodes", _node("a", **{"nvidia.com/mig.config": "all-disabled"}),
                 manager="gpu-operator")
    store.mutate("nodes", "a", None,
                 lambda obj: obj["metadata"]["labels"].update({"nvidia.com/mig.config.state": "pending"}),
                 manager="nvidia-mig-manager")
    entries = {e["manager"]: e for e in store.require("nodes", "a")["metadata"]["managedFields"]}
    assert "f:nvidia.com/mig.config.state" in entries["nvidia-mig-manager"]["fieldsV1"]["f:metadata"]["f:labels"]
    assert "f:nvidia.com/mig.config" in entries["gpu-operator"]["fieldsV1"]["f:metadata"]["f:labels"]
    assert entries["nvidia-mig-manager"]["time"].endswith("Z")


def test_stale_update_is_a_conflict() -> None:
    store = Store()
    created = store.create("nodes", _node("a"))
    store.mutate("nodes", "a", None, lambda obj: obj["metadata"]["labels"].update(x="1"))
    with pytest.raises(ApiError) as clash:
        store.update("nodes", created)
    assert clash.value.code == 409


def test_a_list_answered_again_is_the_same_until_the_resource_is_written() -> None:
    store = Store()
    for name in ("b", "a", "c"):
        store.create("nodes", _node(name, pool="x" if name != "c" else "y"))
    first, _ = store.list("nodes", label_selector="pool=x")
    assert [n["metadata"]["name"] for n in first] == ["a", "b"]
    first.clear()  # a caller's list is its own
    assert [n["metadata"]["name"] for n in store.list("nodes", label_selector="pool=x")[0]] \
        == ["a", "b"]
    store.create("pods", {"metadata": {"name": "p", "namespace": "d"}})  # another resource
    store.mutate("nodes", "c", None, lambda obj: obj["metadata"]["labels"].update(pool="x"))
    again, version = store.list("nodes", label_selector="pool=x")
    assert [n["metadata"]["name"] for n in again] == ["a", "b", "c"]
    assert version == store.resource_version
    store.delete("nodes", "a")
    assert [n["metadata"]["name"] for n in store.list("nodes")[0]] == ["b", "c"]


def test_amend_writes_as_mutate_does_without_copying() -> None:
    """Set-up writes: the same labels, managedFields and generation as :meth:`mutate`,
    a new resourceVersion, the object itself edited (no reader holds it yet)."""
    copied, amended = Store(), Store()
    for store in (copied, amended):
        store.create("nodes", _node("a", own="1"), manager="kubelet")
    copied.mutate("nodes", "a", None, lambda obj: obj["metadata"]["labels"].update(nfd="2"),
                  manager="nfd")
    stored = amended.require("nodes", "a")
    before = int(stored["metadata"]["resourceVersion"])
    result = amended.amend("nodes", "a", None, labels={"nfd": "2"}, manager="nfd")
    assert result is stored and int(result["metadata"]["resourceVersion"]) > before
    want, got = copied.require("nodes", "a"), amended.require("nodes", "a")
    assert got["metadata"]["labels"] == want["metadata"]["labels"]
    assert [(e["manager"], e["fieldsV1"]) for e in got["metadata"]["managedFields"]] == \
        [(e["manager"], e["fieldsV1"]) for e in want["metadata"]["managedFields"]]
    unchanged = amended.amend("nodes", "a", None, labels={"nfd": "2"}, manager="nfd")
    assert unchanged["metadata"]["resourceVersion"] == result["metadata"]["resourceVersion"]


def test_unlogged_writes_reach_present_watches_and_a_later_watch_must_start_after_them() -> None:
    """The set-up's writes: no event is kept for a watch to come (one from a version
    inside the block is 410 Expired, as after a compaction), but a watch registered
    before still sees each of them."""
    store = Store()
    store.create("nodes", _node("a"))
    before = store.resource_version
    seen: list[WatchEvent] = []
    store.watch("nodes", seen.append)
    with store.unlogged():
        store.create("nodes", _node("b"))
        store.create("pods", {"metadata": {"name": "p", "namespace": "d"}})
        inside = store.resource_version
    assert [e.obj["metadata"]["name"] for e in seen] == ["b"]
    for resource, since in (("nodes", before), ("pods", inside - 1)):
        with pytest.raises(ApiError) as gone:
            store.watch(resource, seen.append, since=since)
        assert gone.value.code == 410
    _, backlog = store.watch("pods", seen.append, since=inside)
    assert backlog == []
    store.create("pods", {"metadata": {"name": "q", "namespace": "d"}})
    _, backlog = store.watch("pods", seen.append, since=inside)
    assert [e.obj["metadata"]["name"] for e in backlog] == ["q"]
