"""The store's ``metadata.managedFields`` bookkeeping: who owns which fields after a write.

A write gives its manager the labels, annotations and top-level ``spec``/``status``/``data``
keys it changed (:func:`~gputui.sim.jsonpaths.changed_fields`), stamped with the time, and
takes those fields from every other manager, as the API server's field manager does for
``Update`` operations.

Why a class that remembers: the entries an object ends up with depend only on the entries it
had, the paths a write changed, the manager and the time; not on the object. A scenario's
set-up makes ~45,000 objects at 5,000 nodes whose writes are equal in all of these (the clock
is held while it runs, and a pool's nodes or a DaemonSet's pods have the same keys), and
building each object's fieldsV1 tree anew, field by field, was a third of the set-up and a
tree of ~30 dicts per object. Here each distinct write is worked out once and its result is
handed to every object it applies to: stored objects are read-only (see
:mod:`gputui.sim.store`), so many may hold the same list, and a later write builds a new list
that shares the entries it does not change.
"""

from __future__ import annotations

from typing import Any

from gputui.sim.jsonpaths import changed_fields, copy_json, drop_paths

Obj = dict[str, Any]
Entries = list[Obj]
Path = tuple[str, ...]

#: distinct writes remembered at once; past that the memory starts again (a running
#: cluster's writes differ in their time, so old ones would never be asked for again)
DEFAULT_REMEMBERED = 4096

_NO_ENTRIES: Entries = []


class FieldOwners:
    """Works out managedFields after a write, once per distinct write (not thread-safe: the
    store calls it with its lock held)."""

    def __init__(self, remembered: int = DEFAULT_REMEMBERED):
        self._remembered = remembered
        # (id(entries), changed, manager, operation, apiVersion, time) ->
        # (entries, the result): entries is kept so that its id is not reused meanwhile
        self._after: dict[tuple[object, ...], tuple[Entries, Entries]] = {}
        # (create shape, manager, operation, apiVersion, time) -> the result
        self._created: dict[tuple[object, ...], Entries | None] = {}

    def created(self, obj: Obj, manager: str, operation: str, time: str) -> Entries | None:
        """The entries of ``obj`` as created by ``manager`` (None when it owns nothing)."""
        metadata = obj.get("metadata") or {}
        given = metadata.get("managedFields")
        shape = None if given else _create_shape(obj)
        api_version = obj.get("apiVersion", "v1")
        if shape is None:  # entries sent by the client, or a section that is not a dict
            return self.after_paths(given, changed_fields(None, obj), manager, operation,
                                    api_version, time)
        key = (shape, manager, operation, api_version, time)
        found = self._created.get(key)
        if found is None and key not in self._created:
            if len(self._created) >= self._remembered:
                self._created.clear()
            found = self._created[key] = self.after_paths(
                _NO_ENTRIES, changed_fields(None, obj), manager, operation, api_version, time)
        return found

    def after(self, old: Obj, new: Obj, manager: str, operation: str,
              time: str) -> Entries | None:
        """``new``'s entries once ``manager`` wrote it over ``old`` (its entries are
        ``new``'s current ones); None when the write changed no tracked field (the entries
        stay as they are)."""
        changed = changed_fields(old, new)
        if not changed:
            return None
        entries = (new.get("metadata") or {}).get("managedFields") or _NO_ENTRIES
        return self.after_paths(entries, changed, manager, operation,
                                new.get("apiVersion", "v1"), time)

    def after_paths(self, entries: Entries | None, changed: list[Path], manager: str,
                    operation: str, api_version: str, time: str) -> Entries | None:
        """:meth:`after` for a write whose ``changed`` paths are known: the entries once
        ``manager`` owns them (``entries`` itself, or None when there are none, if
        ``changed`` is empty)."""
        entries = entries or _NO_ENTRIES
        if not changed:
            return entries or None
        key = (id(entries), tuple(changed), manager, operation, api_version, time)
        kept = self._after.get(key)
        if kept is not None and kept[0] is entries:
            return kept[1]
        result = owned(entries, changed, manager, operation, api_version, time)
        if len(self._after) >= self._remembered:
            self._after.clear()
        self._after[key] = (entries, result)
        return result


def owned(entries: Entries, changed: list[Path], manager: str, operation: str,
          api_version: str, time: str) -> Entries:
    """A new list of entries: ``manager``'s ``operation`` entry owns ``changed``, stamped
    ``time``; other managers lose those paths; entries left owning nothing are dropped.
    ``entries`` is not touched: the entries a write does not change are shared."""
    result: Entries = []
    mine: Obj | None = None
    for entry in entries:
        if mine is None and entry.get("manager") == manager \
                and entry.get("operation") == operation:
            mine = copy_json(entry)
            result.append(mine)
            continue
        fields = entry.get("fieldsV1")
        if entry.get("manager") != manager and fields and _holds_any(fields, changed):
            entry = copy_json(entry)
            drop_paths(entry["fieldsV1"], changed)
        if entry.get("fieldsV1"):
            result.append(entry)
    if mine is None:
        mine = {"manager": manager, "operation": operation, "apiVersion": api_version,
                "fieldsType": "FieldsV1", "fieldsV1": {}}
        result.append(mine)
    mine["time"] = time
    fields_v1 = mine.setdefault("fieldsV1", {})
    for path in changed:
        node = fields_v1
        for part in path:
            node = node.setdefault(part, {})
    return result


def _holds_any(fields: Obj, paths: list[Path]) -> bool:
    """Whether ``fields`` (a fieldsV1 tree) holds any of ``paths``."""
    for path in paths:
        node: Any = fields
        for part in path:
            node = node.get(part) if isinstance(node, dict) else None
            if node is None:
                break
        else:
            return True
    return False


def _create_shape(obj: Obj) -> tuple[object, ...] | None:
    """What :func:`changed_fields` reads of a new object: its label and annotation keys and
    the top-level keys of spec, status and data, each without the keys set to null (a
    null is not a change). None when a section is not the dict it should be."""
    metadata = obj.get("metadata") or {}
    parts: list[object] = []
    for section in (metadata.get("labels"), metadata.get("annotations"),
                    obj.get("spec"), obj.get("status"), obj.get("data")):
        if not section:
            parts.append(())
        elif type(section) is not dict:
            return None
        elif None in section.values():
            parts.append(tuple(k for k, v in section.items() if v is not None))
        else:
            parts.append(tuple(section))
    return tuple(parts)
