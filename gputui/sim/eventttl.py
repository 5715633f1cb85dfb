"""Events expire, as on a real API server.

kube-apiserver stores each Event with an etcd lease of ``--event-ttl`` (default 1 h,
``cmd/kube-apiserver/app/options``; the registry's ``TTLFunc`` in
``pkg/registry/core/event/storage``), renewed on every write: an Event not written for an
hour is gone, with a DELETED watch event. Anything gputui presents as durable must therefore
come from labels, annotations, managedFields or its own observation; the emulator expires
Events so a long drill shows what a real cluster keeps.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from gputui.sim.store import Store

#: kube-apiserver's default ``--event-ttl``.
EVENT_TTL_S = 3600.0
#: How often (emulated seconds) the sweep runs; etcd's lease expiry is not exact either.
SWEEP_EVERY_S = 30.0


def _stamp(value: Any) -> float | None:
    if not isinstance(value, str) or not value:
        return None
    try:
        return datetime.fromisoformat(value).timestamp()
    except ValueError:  # not RFC 3339: this timestamp says nothing
        return None


def last_written(event: dict[str, Any]) -> float | None:
    """When the Event was last written: the newest of its timestamps (the lease's renewal)."""
    meta = event.get("metadata") or {}
    fields = [t for t in (meta.get("managedFields") or []) if isinstance(t, dict)]
    stamps = [_stamp(event.get("lastTimestamp")), _stamp(event.get("eventTime")),
              _stamp(meta.get("creationTimestamp"))] + [_stamp(f.get("time")) for f in fields]
    known = [s for s in stamps if s is not None]
    return max(known) if known else None


def expire(store: Store, ttl: float = EVENT_TTL_S) -> int:
    """Delete every Event last written ``ttl`` or more seconds ago; returns how many."""
    now = store.clock.now()
    gone = 0
    for event in store.list("events")[0]:
        written = last_written(event)
        if written is not None and now - written >= ttl:
            meta = event["metadata"]
            if store.get("events", meta["name"], meta.get("namespace")) is event:
                store.delete("events", meta["name"], meta.get("namespace"))
                gone += 1
    return gone
