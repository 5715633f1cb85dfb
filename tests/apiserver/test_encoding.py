"""The serialised-bytes cache: hits by identity, never stale, pruned of deleted objects."""

from __future__ import annotations

import json

import pytest

from gputui.sim.apiserver import common
from gputui.sim.apiserver.common import EncodeCache
from gputui.sim.store import Store


def test_cache_hits_by_identity_and_never_serves_stale_bytes() -> None:
    store = Store()
    stored = store.create("configmaps", {"metadata": {"name": "a"}, "data": {"k": "1"}})
    cache = EncodeCache(store)
    first = cache.encode("configmaps", stored)
    assert cache.encode("configmaps", stored) is first
    updated = store.mutate("configmaps", "a", "default", lambda o: o["data"].update(k="2"))
    assert json.loads(cache.encode("configmaps", updated))["data"] == {"k": "2"}


def test_cache_forgets_deleted_objects(monkeypatch: pytest.MonkeyPatch) -> None:
    store = Store()
    cache = EncodeCache(store)
    monkeypatch.setattr(common, "PRUNE_AFTER", 5)
    kept = store.create("configmaps", {"metadata": {"name": "kept"}})
    cache.encode("configmaps", kept)
    for index in range(20):
        obj = store.create("configmaps", {"metadata": {"name": f"c{index}"}})
        cache.encode("configmaps", obj)
        store.delete("configmaps", f"c{index}", "default")
    assert len(cache) <= 6
    assert cache.encode("configmaps", kept) is cache.encode("configmaps", kept)
