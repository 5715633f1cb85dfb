"""The emulated cluster's object store: what etcd plus the API server's registry do.

Every object is a plain Kubernetes JSON dict. Stored dicts are never mutated in place: each
write stores a new dict, so readers (the HTTP layer, watchers, controllers) may share
references without copying, and may cache serialised JSON per ``resourceVersion``. Callers
must treat returned objects as read-only; :meth:`Store.mutate` hands out a private copy.

One global ``resourceVersion`` counter orders all writes, as in etcd. Each resource keeps a
bounded log of recent events so watches can resume; a watch that asks for a version older
than the log gets 410 ``Expired`` and must relist, exactly like a real cluster.

Writes record ``metadata.managedFields`` for the labels, annotations and top-level spec and
status keys they change, with the writer's manager name and time: on a real cluster those
entries are the only record of when the MIG manager or the upgrade controller last touched
a node label, and gputui reads them. Objects written alike share one list of entries
(:mod:`gputui.sim.managedfields`), which is why no one may edit a stored one in place.
"""

from __future__ import annotations

import builtins
import contextlib
import copy
import functools
import logging
import os
import random
import threading
import uuid
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from gputui.sim.clock import SimClock
from gputui.sim.errors import already_exists, conflict, expired, invalid, not_found
from gputui.sim.jsonpaths import copy_for_write
from gputui.sim.managedfields import FieldOwners
from gputui.sim.resources import ResourceType, resource_type
from gputui.sim.selectors import field_predicate, label_predicate

Obj = dict[str, Any]
ObjKey = tuple[str, str]  # (namespace or "", name)

DEFAULT_EVENT_LOG = 50_000
#: distinct lists (resource, namespace, selectors) whose answers are kept at once
_LISTS_KEPT = 64

_log = logging.getLogger(__name__)


@dataclass(frozen=True)
class WatchEvent:
    """One change: ``type`` is ADDED, MODIFIED or DELETED; ``obj`` is the new (or last) state."""

    resource: str
    type: str
    obj: Obj
    resource_version: int
    old: Obj | None = None


WatchCallback = Callable[[WatchEvent], None]


class Watch:
    """A registered watcher; call :meth:`cancel` to stop deliveries."""

    def __init__(self, store: Store, resource: str, callback: WatchCallback):
        self._store = store
        self.resource = resource
        self.callback = callback
        self.active = True

    def cancel(self) -> None:
        if self.active:
            self.active = False
            self._store._remove_watch(self)


def new_uid() -> str:
    """A random (version 4) UUID as ``metadata.uid`` holds it, from a generator seeded by the
    system once: a scenario's set-up makes ~50,000 at 5,000 nodes, and ``uuid.uuid4``
    reads the system's random source for each (four times slower)."""
    value = _UIDS.getrandbits(128) & _UID_CLEAR | _UID_SET
    text = f"{value:032x}"
    return f"{text[:8]}-{text[8:12]}-{text[12:16]}-{text[16:20]}-{text[20:]}"


_UIDS = random.Random()  # seeded from the system's random source
# a forked child must not hand out its parent's next uids
os.register_at_fork(after_in_child=_UIDS.seed)
#: the version (4) and variant (RFC 4122) bits of a UUID, cleared then set
_UID_CLEAR = ~((0xF000 << 64) | (0xC000 << 48))
_UID_SET = (0x4000 << 64) | (0x8000 << 48)


@functools.lru_cache(maxsize=4096)
def _meta_path(section: str, key: str) -> tuple[str, str, str]:
    """The fieldsV1 path of a label or annotation, made once per key (a set-up at 5,000 nodes
    writes a quarter of a million, of a few hundred keys)."""
    return ("f:metadata", f"f:{section}", f"f:{key}")


def meta(obj: Obj) -> dict[str, Any]:
    found: dict[str, Any] = obj.setdefault("metadata", {})
    return found


def obj_key(rtype: ResourceType, obj: Obj) -> ObjKey:
    metadata = obj.get("metadata") or {}
    namespace = metadata.get("namespace") or "" if rtype.namespaced else ""
    return (namespace, metadata.get("name") or "")


class Store:
    """Thread-safe in-memory object store with resourceVersions, watches and managedFields."""

    def __init__(self, clock: SimClock | None = None, event_log_size: int = DEFAULT_EVENT_LOG):
        self.clock = clock or SimClock()
        self._lock = threading.RLock()
        self._rv = 1
        self._objects: dict[str, dict[ObjKey, Obj]] = {}
        self._log: dict[str, deque[WatchEvent]] = {}
        self._compacted: dict[str, int] = {}
        self._watches: dict[str, list[Watch]] = {}
        self._log_size = event_log_size
        #: writes per resource, and lists answered since its last write (see :meth:`list`)
        self._writes: dict[str, int] = {}
        self._listed: dict[tuple[str, str | None, str | None, str | None],
                           tuple[int, builtins.list[Obj]]] = {}
        self._owners = FieldOwners()
        #: open :meth:`unlogged` blocks
        self._unlogged = 0

    # ----------------------------------------------------------------- reads
    @property
    def resource_version(self) -> int:
        with self._lock:
            return self._rv

    def get(self, resource: str, name: str, namespace: str | None = None) -> Obj | None:
        """The stored object (read-only) or ``None``."""
        rtype = resource_type(resource)
        key = ((namespace or "") if rtype.namespaced else "", name)
        with self._lock:
            return self._objects.get(resource, {}).get(key)

    def require(self, resource: str, name: str, namespace: str | None = None) -> Obj:
        """Like :meth:`get` but raises 404 ``NotFound``."""
        found = self.get(resource, name, namespace)
        if found is None:
            raise not_found(resource_type(resource).plural, name)
        return found

    def list(self, resource: str, namespace: str | None = None,
             label_selector: str | None = None,
             field_selector: str | None = None) -> tuple[list[Obj], int]:
        """Matching objects sorted by namespace and name, and the list's resourceVersion.

        The answer is kept until the resource is next written, as the API server's watch
        cache keeps one: a paged list of 40,000 pods asks 80 times, and sorting and
        filtering them all for every page made the list quadratic (11 of the 16 s the
        emulator spent serving ``check`` at 5,000 nodes).
        """
        resource_type(resource)
        key = (resource, namespace or None, label_selector or None, field_selector or None)
        with self._lock:
            writes = self._writes.get(resource, 0)
            kept = self._listed.get(key)
            if kept is not None and kept[0] == writes:
                return builtins.list(kept[1]), self._rv
            bucket = self._objects.get(resource, {})
            keys = sorted(bucket)
            items = [bucket[k] for k in keys if not namespace or k[0] == namespace]
            rv = self._rv
        if label_selector:
            labels_ok = label_predicate(label_selector)
            items = [o for o in items if labels_ok(o)]
        if field_selector:
            fields_ok = field_predicate(field_selector)
            items = [o for o in items if fields_ok(o)]
        with self._lock:
            if self._writes.get(resource, 0) == writes:  # no write since it was read
                if len(self._listed) >= _LISTS_KEPT:
                    self._listed.clear()
                self._listed[key] = (writes, items)
        return builtins.list(items), rv

    def count(self, resource: str) -> int:
        with self._lock:
            return len(self._objects.get(resource, {}))

    # ---------------------------------------------------------------- writes
    def create(self, resource: str, obj: Obj, *, manager: str = "gputui-sim",
               dry_run: bool = False, adopt: bool = False) -> Obj:
        """Store a new object; 409 ``AlreadyExists`` if the name is taken.

        ``adopt=True`` skips the defensive deep copy: the caller hands ``obj`` over and never
        touches it again (bulk scenario set-up of tens of thousands of fresh dicts).
        """
        rtype = resource_type(resource)
        new = obj if adopt else copy.deepcopy(obj)
        metadata = meta(new)
        generated = not metadata.get("name") and bool(metadata.get("generateName"))
        if generated:
            metadata["name"] = metadata["generateName"] + uuid.uuid4().hex[:5]
        if not metadata.get("name"):
            raise invalid(rtype.plural, "", "metadata.name: Required value: name or generateName is required")
        if rtype.namespaced and not metadata.get("namespace"):
            metadata["namespace"] = "default"
        if not rtype.namespaced:
            metadata.pop("namespace", None)
        new.setdefault("apiVersion", rtype.api_version)
        new.setdefault("kind", rtype.kind)
        key = obj_key(rtype, new)
        with self._lock:
            bucket = self._objects.setdefault(resource, {})
            while generated and key in bucket:  # a suffix collision is not the caller's fault
                metadata["name"] = metadata["generateName"] + uuid.uuid4().hex[:5]
                key = obj_key(rtype, new)
            if key in bucket:
                raise already_exists(rtype.plural, key[1])
            metadata["uid"] = metadata.get("uid") or new_uid()
            stamp = self.clock.rfc3339()
            metadata["creationTimestamp"] = metadata.get("creationTimestamp") or stamp
            if "spec" in new:
                metadata.setdefault("generation", 1)
            owned = self._owners.created(new, manager, "Update", stamp)
            if owned is not None:
                metadata["managedFields"] = owned
            if dry_run:
                metadata["resourceVersion"] = str(self._rv)
                return new
            self._rv += 1
            metadata["resourceVersion"] = str(self._rv)
            bucket[key] = new
            self._emit(resource, "ADDED", new, None)
            return new

    def update(self, resource: str, obj: Obj, *, manager: str = "gputui-sim",
               dry_run: bool = False, subresource: str | None = None) -> Obj:
        """Replace an object (PUT). A stale ``metadata.resourceVersion`` is 409 ``Conflict``.

        With ``subresource="status"`` only ``status`` is taken from ``obj``; otherwise ``status``
        is kept from the stored object when the type has a status subresource (as real
        servers do for CRDs and most built-ins).
        """
        rtype = resource_type(resource)
        key = obj_key(rtype, obj)
        with self._lock:
            current = self._objects.get(resource, {}).get(key)
            if current is None:
                raise not_found(rtype.plural, key[1])
            wanted_rv = (obj.get("metadata") or {}).get("resourceVersion")
            if wanted_rv and str(wanted_rv) != current["metadata"]["resourceVersion"]:
                raise conflict(rtype.plural, key[1])
            new = copy.deepcopy(obj)
            if subresource == "status":
                merged = copy.deepcopy(current)
                merged["status"] = new.get("status", {})
                new = merged
            elif "status" in rtype.subresources and "status" in current:
                new["status"] = copy.deepcopy(current["status"])
            return self._commit(rtype, resource, key, current, new, manager, dry_run)

    def mutate(self, resource: str, name: str, namespace: str | None,
               change: Callable[[Obj], None], *, manager: str = "gputui-sim",
               dry_run: bool = False) -> Obj:
        """Read-modify-write in one step: ``change`` edits a private copy in place.

        This is how controllers write; it never conflicts because the store lock is held.
        A change that leaves the object identical is not a write (no new resourceVersion,
        no event), as with a no-op patch on a real server. ``change`` must leave
        ``metadata.managedFields`` alone: the copy shares them with the stored object.
        """
        with self._lock:
            rtype, key, current = self._stored(resource, name, namespace)
            new = copy_for_write(current)
            change(new)
            return self._commit(rtype, resource, key, current, new, manager, dry_run)

    def _stored(self, resource: str, name: str, namespace: str | None
                ) -> tuple[ResourceType, ObjKey, Obj]:
        """(type, key, the stored object) of ``name``; 404 when absent. The lock is held."""
        rtype = resource_type(resource)
        key = ((namespace or "") if rtype.namespaced else "", name)
        current = self._objects.get(resource, {}).get(key)
        if current is None:
            raise not_found(rtype.plural, name)
        return rtype, key, current

    def amend(self, resource: str, name: str, namespace: str | None, *, manager: str,
              labels: Mapping[str, str | None] | None = None,
              annotations: Mapping[str, str | None] | None = None) -> Obj:
        """Scenario set-up only: set ``labels`` and ``annotations`` (None removes one) as
        :meth:`mutate` would, but in place, without the copy or the event, for an object no
        reader can hold yet (the server answers nothing while the set-up runs, and its
        event log is compacted after it).

        Writing a converged node's labels as their four writers did, through
        :meth:`mutate`, copied the whole node four times: a fifth of the set-up at 5,000
        nodes; and finding what changed by comparing the whole object was another tenth.
        Only the keys given are compared; ``manager`` owns those whose value changed.
        """
        with self._lock:
            _, _, current = self._stored(resource, name, namespace)
            metadata = meta(current)
            changed: builtins.list[tuple[str, ...]] = []
            edited = False
            for section, values in (("labels", labels), ("annotations", annotations)):
                if not values:
                    continue
                held = metadata.setdefault(section, {})
                for key, value in values.items():
                    if value is None:
                        edited = held.pop(key, None) is not None or edited
                    elif held.get(key) != value:
                        held[key] = value
                        changed.append(_meta_path(section, key))
            if not changed and not edited:
                return current
            if changed:
                owned = self._owners.after_paths(
                    metadata.get("managedFields"), changed, manager, "Update",
                    current.get("apiVersion", "v1"), self.clock.rfc3339())
                metadata["managedFields"] = owned
            self._rv += 1
            metadata["resourceVersion"] = str(self._rv)
            self._writes[resource] = self._writes.get(resource, 0) + 1
            return current

    def delete(self, resource: str, name: str, namespace: str | None = None, *,
               dry_run: bool = False) -> Obj:
        """Remove an object now and return its last state; 404 when absent."""
        rtype = resource_type(resource)
        key = ((namespace or "") if rtype.namespaced else "", name)
        with self._lock:
            bucket = self._objects.get(resource, {})
            current = bucket.get(key)
            if current is None:
                raise not_found(rtype.plural, name)
            if dry_run:
                return current
            del bucket[key]
            self._rv += 1
            gone = dict(current)
            gone["metadata"] = dict(current["metadata"], resourceVersion=str(self._rv))
            self._emit(resource, "DELETED", gone, current)
            return gone

    def bulk_create(self, resource: str, objs: Iterable[Obj], *, manager: str = "gputui-sim") -> int:
        """Create many objects (scenario set-up); returns how many were stored."""
        count = 0
        for obj in objs:
            self.create(resource, obj, manager=manager)
            count += 1
        return count

    # ----------------------------------------------------------------- watch
    def watch(self, resource: str, callback: WatchCallback,
              since: int | None = None) -> tuple[Watch, builtins.list[WatchEvent]]:
        """Register ``callback`` for future events of ``resource``.

        Returns the watch and the logged events after ``since`` (to replay first), atomically,
        so no event is lost or doubled between the two. ``since`` older than the retained
        log raises 410 ``Expired``. ``since=None`` replays nothing.
        """
        resource_type(resource)
        with self._lock:
            backlog: list[WatchEvent] = []
            if since is not None:
                if since < self._compacted.get(resource, 0):
                    raise expired(f"too old resource version: {since} ({self._compacted[resource]})")
                backlog = [e for e in self._log.get(resource, ()) if e.resource_version > since]
            handle = Watch(self, resource, callback)
            self._watches.setdefault(resource, []).append(handle)
            return handle, backlog

    def compact(self, resource: str | None = None) -> None:
        """Forget the event log (as etcd compaction does); older watches then get 410."""
        with self._lock:
            for res in [resource] if resource else {*self._log, *self._writes}:
                self._log.get(res, deque()).clear()
                self._compacted[res] = self._rv

    @contextlib.contextmanager
    def unlogged(self) -> Iterator[None]:
        """Writes in the block reach the watches registered, but are not logged for watches
        to come: the log is compacted at the end, so a watch must start after the block.

        For a scenario's set-up, which no client can have seen (the server is not up yet):
        its log would keep every intermediate copy of every node and pod alive (at 5,000
        nodes, hundreds of MB), and an event for each of ~50,000 writes nobody watches
        was a twentieth of the set-up's time.
        """
        with self._lock:
            self._unlogged += 1
        try:
            yield
        finally:
            with self._lock:
                self._unlogged -= 1
                self.compact()

    def _remove_watch(self, handle: Watch) -> None:
        with self._lock:
            watchers = self._watches.get(handle.resource, [])
            if handle in watchers:
                watchers.remove(handle)

    # -------------------------------------------------------------- internals
    def _commit(self, rtype: ResourceType, resource: str, key: ObjKey, current: Obj, new: Obj,
                manager: str, dry_run: bool) -> Obj:
        metadata = meta(new)
        old_meta = current["metadata"]
        for fixed in ("uid", "creationTimestamp", "name"):
            if fixed in old_meta:
                metadata[fixed] = old_meta[fixed]
        if rtype.namespaced:
            metadata["namespace"] = old_meta.get("namespace")
        metadata["resourceVersion"] = old_meta["resourceVersion"]
        if "managedFields" in old_meta:
            metadata["managedFields"] = old_meta["managedFields"]
        else:
            metadata.pop("managedFields", None)
        if "generation" in old_meta:
            metadata["generation"] = old_meta["generation"]
            if new.get("spec") != current.get("spec"):
                metadata["generation"] = old_meta["generation"] + 1
        if new == current:
            return current
        owned = self._owners.after(current, new, manager, "Update", self.clock.rfc3339())
        if owned is not None:
            metadata["managedFields"] = owned
        if dry_run:
            return new
        self._rv += 1
        metadata["resourceVersion"] = str(self._rv)
        self._objects[resource][key] = new
        self._emit(resource, "MODIFIED", new, current)
        return new

    def _emit(self, resource: str, kind: str, obj: Obj, old: Obj | None) -> None:
        self._writes[resource] = self._writes.get(resource, 0) + 1
        watchers = self._watches.get(resource)
        if self._unlogged and not watchers:
            return
        event = WatchEvent(resource, kind, obj, self._rv, old)
        if not self._unlogged:
            log = self._log.setdefault(resource, deque())
            if len(log) >= self._log_size:
                dropped = log.popleft()
                self._compacted[resource] = dropped.resource_version
            log.append(event)
        for handle in list(watchers or ()):
            if not handle.active:
                continue
            try:
                handle.callback(event)
            except Exception:  # noqa: BLE001 - a broken watcher must not undo a write
                _log.exception("watch callback on %s failed; cancelling that watch", resource)
                handle.cancel()
