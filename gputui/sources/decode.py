"""Decode list pages and watch events in one pass into the reduced objects the cache keeps.

Nodes become reduced dicts; pods are read on arrival into the domain's
:class:`~gputui.domain.pods.PodInfo` (a pod's reading depends on nothing else, so the cache
keeps that instead of the pod's dict tree: read once per change, not once per build, in a
third of the memory).

Why a typed decoder: at 5,000 nodes the pod list alone is over 200 MB of JSON, and building
every Python object of it (``json.loads``/``orjson``) before :mod:`gputui.sources.reduce`
walks it again to keep a fraction took most of ``gputui check``'s time. ``msgspec`` decodes
straight into a declared shape (:mod:`gputui.sources.shapes`) and skips, in C and without
allocating, every field the shape does not name: managedFields of pods, pod specs' env,
probes, tolerations, node images.

Why ``TypedDict`` shapes rather than ``msgspec.Struct``: decoding into a TypedDict yields
plain dicts, which the domain's readers (``read_pod``, ``read_basics``) take from every
source alike: the typed decoder, the recorded fixtures and the tests' hand-made objects.
Structs would decode a little faster but need a second reader beside each dict reader.
The same shapes are applied to already-decoded objects with ``msgspec.convert``
(:func:`reduce_with`), so the fast path and the dict path (fixtures, tests) keep exactly the
same fields by construction.

managedFields are decoded only for nodes, and only their ``time`` and the label keys under
``fieldsV1.f:metadata.f:labels`` (the rest of each entry is skipped unread): that is all
:func:`~gputui.sources.reduce.label_times` needs. They are not kept as ``msgspec.Raw`` for a
later parse because a Raw value keeps the whole page's buffer alive.

Every object is cleaned (:func:`clean_objects`) between shaping and finishing, so nothing
with a control character reaches the cache, whichever path (pages, events, the dict path) it
came by. Cheaply: a page or event whose raw bytes hold no character the sanitiser changes
(:func:`~gputui.domain.sanitize_json.json_is_clean`, a scan in C of the bytes as they came)
is not walked at all; for any other, its shaped objects are encoded again (in C) and only
those whose bytes hold a backslash escape, DEL or a non-ASCII byte (where a control or
format character could hide) are walked.

A page or event that does not fit the shape (a server sending an unexpected type) is decoded
generically and cut to the shape item by item: odd input costs speed, and only an object that
cannot be cut is dropped (logged), never the page or the feed.
"""

from __future__ import annotations

import logging
import re
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Generic, TypeVar

import msgspec

from gputui.domain.pods import read_pod
from gputui.domain.sanitize import clean_line, clean_tree
from gputui.domain.sanitize_json import json_is_clean
from gputui.domain.selectors import parse_selector
from gputui.sources.reduce import (
    GPU_RESOURCE_PREFIXES,
    JsonObj,
    LabelTimes,
    parse_time,
    share_flat,
    timed_label,
)
from gputui.sources.shapes import ListPage, Node, Pod, WatchLine

log = logging.getLogger(__name__)

#: what the cache keeps of one object: its reduced dict (a pod: the read
#: :class:`~gputui.domain.pods.PodInfo`) and, for nodes, its label-change times
Item = tuple[Any, LabelTimes]
#: turns one shaped object into what the cache keeps, or None to drop it
Finish = Callable[[JsonObj], "Item | None"]
T = TypeVar("T")

# ------------------------------------------------------------------- finishing
def _interned(strings: dict[str, str]) -> dict[str, str]:
    """A string map with keys and values interned, in C (``map``): node labels and
    annotations are ~90 per node and nearly all repeat across the fleet."""
    return dict(zip(map(sys.intern, strings), map(sys.intern, strings.values())))


@lru_cache(maxsize=4096)
def _timed_key(field: str) -> str | None:
    """``f:<label>`` to the interned label key when its change time is kept, else None."""
    if field.startswith("f:") and timed_label(field[2:]):
        return sys.intern(field[2:])
    return None


@lru_cache(maxsize=4096)
def _when(text: str) -> float | None:
    return parse_time(text)


def label_times(obj: Mapping[str, Any]) -> LabelTimes:
    """Label key -> epoch seconds of the managedFields entry that owns it (latest wins),
    for the labels :func:`~gputui.sources.reduce.timed_label` keeps.

    A managedFields entry's ``time`` is when that manager last wrote the object, which for
    a label it owns is when the label was last set by it: the best record a client has.
    """
    entries = (obj.get("metadata") or {}).get("managedFields")
    return _label_times([e for e in entries if isinstance(e, dict)]) if entries else {}


def _label_times(entries: list[JsonObj]) -> LabelTimes:
    """:func:`label_times` over managedFields entries, with the per-key test and the
    timestamp parse cached (the same few repeat fleet-wide)."""
    times: LabelTimes = {}
    for entry in entries:
        fields = entry.get("fieldsV1", {}).get("f:metadata", {}).get("f:labels")
        when = _when(entry.get("time", ""))
        if not fields or when is None:
            continue
        for key in filter(None, map(_timed_key, fields)):
            if when > times.get(key, 0.0):
                times[key] = when
    return times


def finish_node(node: JsonObj) -> Item:
    """A shaped node: label-change times taken out of managedFields, repeated parts shared."""
    metadata = node.get("metadata") or {}
    entries = metadata.pop("managedFields", None)
    times = _label_times(entries) if entries else {}
    for key in ("labels", "annotations"):
        if key in metadata:
            metadata[key] = _interned(metadata[key])
    status = node.get("status")
    if status:
        if status.get("conditions"):
            status["conditions"] = [share_flat(c) for c in status["conditions"]]
        for key in ("capacity", "allocatable", "nodeInfo"):
            if status.get(key):
                status[key] = share_flat(status[key])
    return node, times


def _read_pod(pod: JsonObj, keep_statuses: bool) -> Item:
    """A shaped pod read into the domain's :class:`PodInfo` (the form the cache keeps),
    its label dict shared with the equal ones of other pods (a DaemonSet's pods all carry
    the same labels)."""
    metadata = pod.get("metadata")
    if metadata and metadata.get("labels"):
        metadata["labels"] = share_flat(metadata["labels"])
    if not keep_statuses:  # a workload pod: its phase is what gputui shows of it
        status = pod.get("status")
        if status:
            for key in ("conditions", "initContainerStatuses", "containerStatuses"):
                status.pop(key, None)
    return read_pod(pod), {}


def finish_operator_pod(pod: JsonObj) -> Item:
    """An operand pod: containers in order with their states, conditions, labels, owner."""
    return _read_pod(pod, keep_statuses=True)


def gpu_request(obj: Mapping[str, Any]) -> bool:
    """Whether any container of a pod requests or limits a GPU or MIG resource."""
    return _requests_gpu(obj.get("spec") or {})


def _requests_gpu(spec: Mapping[str, Any]) -> bool:
    for key in ("containers", "initContainers"):
        for container in spec.get(key) or ():
            for section in (container.get("resources") or {}).values():
                for name in section:
                    if name.startswith(GPU_RESOURCE_PREFIXES):
                        return True
    return False


def finish_gpu_pod(pod: JsonObj) -> Item | None:
    """A workload pod that requests a GPU, reduced; ``None`` for every other pod."""
    if not _requests_gpu(pod.get("spec") or {}):
        return None
    return _read_pod(pod, keep_statuses=False)


def _finish_gpu_or_selected(selectors: tuple[str, ...]) -> Callable[[JsonObj], Item | None]:
    """:func:`finish_gpu_pod` that also keeps pods matching any of ``selectors``."""
    matchers = [parse_selector(selector) for selector in selectors]

    def finish(pod: JsonObj) -> Item | None:
        if not _requests_gpu(pod.get("spec") or {}):
            labels = (pod.get("metadata") or {}).get("labels") or {}
            if not any(match(labels) for match in matchers):
                return None
        return _read_pod(pod, keep_statuses=False)
    return finish


# ------------------------------------------------------------------- cleaning
_encode = msgspec.json.Encoder().encode


def _plain(value: Any) -> bool:
    """Whether ``value`` holds no character :func:`clean_tree` would change, told from its
    JSON: ASCII (no C1 or format character), no DEL, no escape (C0 controls are written
    escaped). A value that is not JSON (a test's hand-made object) is walked instead."""
    try:
        data = _encode(value)
    except (TypeError, msgspec.EncodeError, UnicodeEncodeError):  # a lone surrogate
        return False
    return data.isascii() and b"\\" not in data and b"\x7f" not in data


def clean_objects(objects: list[Any]) -> list[Any]:
    """``objects`` with every string cleaned (:func:`~gputui.domain.sanitize.clean_tree`).

    Walking every kept string in Python would cost as much as the decode itself; encoding
    the objects back (in C) and scanning the bytes tells the clean page at once, then the
    clean objects of a dirty page. Only an object that may hold something is walked.
    """
    if not objects or _plain(objects):
        return objects
    return [obj if _plain(obj) else clean_tree(obj) for obj in objects]


# --------------------------------------------------------------- page and event
@dataclass(frozen=True, slots=True)
class Page:
    """One decoded list page: what the cache keeps, the list's version and continue token."""

    items: list[Item]
    resource_version: str
    continue_token: str
    #: objects of the page that could not be read (nested too deep), each "name: why"
    refused: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class WatchEvent:
    """One decoded watch event.

    Attributes:
        type: ``ADDED``, ``MODIFIED``, ``DELETED``, ``BOOKMARK`` or ``ERROR``.
        object: the event's object as shaped (enough for its key and resourceVersion), or
            the whole ``Status`` of an ERROR event.
        item: what the cache keeps, ``None`` when the feed drops this object.
    """

    type: str
    object: JsonObj
    item: Item | None
    #: set when the event's object could not be read (nested too deep): "name: why"
    refused: str = ""


class FeedDecoder(Generic[T]):
    """Decodes one feed's pages and events through a shape, then ``finish`` per object.

    Without a shape (small feeds: DaemonSets, ConfigMaps, policies, events) objects are
    decoded generically and ``finish`` is the feed's reducer.
    """

    def __init__(self, shape: type[T] | None, finish: Callable[[JsonObj], Item | None]):
        self.shape = shape
        self.finish = finish
        if shape is None:
            self._list: msgspec.json.Decoder[Any] = msgspec.json.Decoder()
            self._event: msgspec.json.Decoder[Any] = self._list
        else:
            self._list = msgspec.json.Decoder(ListPage[shape])  # type: ignore[valid-type]
            self._event = msgspec.json.Decoder(WatchLine[shape])  # type: ignore[valid-type]
        self._generic: msgspec.json.Decoder[Any] = msgspec.json.Decoder()

    def page(self, data: bytes) -> Page:
        """One list page (raises ``ValueError`` when it is not a JSON list object)."""
        refused: list[str] = []
        try:
            document = self._decode_page(data)
        except RecursionError:  # one object nested past the decoder's depth: refuse it alone
            document = self._page_item_by_item(data, refused)
        if not isinstance(document, dict):
            raise ValueError("a list page is not a JSON object")  # noqa: TRY004 - callers treat
            # every undecodable answer alike
        found = document.get("items")
        objects = [obj for obj in found if isinstance(obj, dict)] if isinstance(found, list) \
            else []
        if not json_is_clean(data):  # the rare page with something to clean, or an escape
            objects = _cleaned(objects, refused)
        items = [kept for kept in map(self.finish, objects) if kept is not None]
        metadata = document.get("metadata")
        metadata = metadata if isinstance(metadata, dict) else {}
        return Page(items, _text(metadata.get("resourceVersion")),
                    _text(metadata.get("continue")), tuple(refused))

    def _decode_page(self, data: bytes) -> Any:
        try:
            document = self._list.decode(data)
        except msgspec.ValidationError:
            document = self._generic.decode(data)
            found = document.get("items") if isinstance(document, dict) else None
            if isinstance(found, list):
                document["items"] = [obj for obj in map(self.shaped, found) if obj]
        except msgspec.DecodeError as error:
            raise ValueError(str(error)) from None
        return document

    def _page_item_by_item(self, data: bytes, refused: list[str]) -> dict[str, Any]:
        """The page with each item decoded on its own, those too deep left out (named in
        ``refused``): the rare path of a page holding a hostile or broken object."""
        spans = item_spans(data)
        if spans is None:
            raise ValueError("a list page nested too deep")
        items: list[Any] = []
        for start, end in spans:
            try:
                items.extend(self._decode_page(b'{"items":[' + data[start:end] + b"]}")
                             .get("items") or [])
            except RecursionError:
                refused.append(f"{_name_in(data[start:end])}: nested too deep")
        head = self._generic.decode(data[:spans[0][0]] + data[spans[-1][1]:]) if spans \
            else self._decode_page(data)
        head = head if isinstance(head, dict) else {}
        head["items"] = items
        log.warning("list page: %d object(s) refused: %s", len(refused), "; ".join(refused))
        return head

    def event(self, line: bytes) -> WatchEvent:
        """One watch event line (raises ``ValueError`` when it is not a JSON event object).

        A BOOKMARK is read by its ``metadata.resourceVersion`` alone, before any shape: the
        real API server sends the zero value of the kind (a Pod's has ``"spec":
        {"containers": null}``, which the Pod shape refuses), and a bookmark dropped for its
        shape leaves the feed resuming from an old version, to a 410 and a full relist.
        """
        try:
            event = self._event.decode(line)
        except msgspec.ValidationError:  # a bookmark, an ERROR's Status, or an odd object
            event = self._odd_event(line)
        except msgspec.DecodeError as error:
            raise ValueError(str(error)) from None
        except RecursionError:  # the event is skipped, said, and the feed goes on
            why = f"{_name_in(line)}: nested too deep"
            log.warning("watch event refused: %s", why)
            return WatchEvent("", {}, None, why)
        if not isinstance(event, dict):  # the generic decoder of a small feed takes any JSON
            raise ValueError("a watch event is not a JSON object")  # noqa: TRY004 - as above
        kind = event.get("type")
        kind = kind if isinstance(kind, str) else ""
        obj = event.get("object")
        if kind == "BOOKMARK":
            return WatchEvent(kind, bookmark_object(obj), None)
        if not isinstance(obj, dict):
            obj = {}
        elif not json_is_clean(line):
            refused: list[str] = []
            cleaned = _cleaned([obj], refused)
            if refused:
                return WatchEvent("", {}, None, refused[0])
            obj = cleaned[0]
        item = self.finish(obj) if kind in ("ADDED", "MODIFIED", "DELETED") else None
        return WatchEvent(kind, obj, item)

    def _odd_event(self, line: bytes) -> dict[str, Any]:
        """An event the typed decoder refused, decoded generically and cut to the shape
        (bookmarks and ERROR Statuses are read as they are)."""
        try:
            event = self._generic.decode(line)
        except msgspec.DecodeError as error:
            raise ValueError(str(error)) from None
        if not isinstance(event, dict):
            raise ValueError("a watch event is not a JSON object")  # noqa: TRY004 - callers
            # treat every undecodable line alike
        if event.get("type") not in ("ERROR", "BOOKMARK"):
            event["object"] = self.shaped(event.get("object"))
        return event

    def shaped(self, obj: Any) -> JsonObj:
        """An already-decoded object cut to the shape (the dict path: fixtures, tests)."""
        if self.shape is None:
            return obj if isinstance(obj, dict) else {}
        try:
            return msgspec.convert(obj, self.shape, strict=False)  # type: ignore[no-any-return]
        except msgspec.ValidationError as error:
            log.warning("object dropped: does not fit the %s shape: %s",
                        self.shape.__name__, error)
            return {}


#: a JSON string, or one structural character (numbers, literals and blanks are skipped)
_TOKEN = re.compile(rb'"(?:[^"\\]|\\.)*"|[\[\]{},:]')
_NAME = re.compile(rb'"name"\s*:\s*"((?:[^"\\]|\\.){1,253})"')


def item_spans(data: bytes) -> list[tuple[int, int]] | None:
    """(start, end) of each element of a list page's top-level ``items`` array, found by
    scanning tokens (no recursion, whatever the nesting); None when there is none."""
    depth, spans, start, after_items = 0, [], -1, False
    for token in _TOKEN.finditer(data):
        char = data[token.start()]
        if char in b"[{":
            depth += 1
            if depth == 2 and after_items and char == ord("["):
                start, after_items = token.end(), False
        elif char in b"]}":
            if depth == 2 and start >= 0:
                spans.append((start, token.start()))
                return [(a, b) for a, b in spans if data[a:b].strip()]
            depth -= 1
        elif char == ord(",") and depth == 2 and start >= 0:
            spans.append((start, token.start()))
            start = token.end()
        elif char == ord('"') and depth == 1:
            after_items = data[token.start():token.end()] == b'"items"'
    return None


def _name_in(data: bytes) -> str:
    """The first ``"name"`` in an object's bytes (its metadata.name, usually): enough to
    say which object was refused without decoding it."""
    found = _NAME.search(data[:65536])
    return clean_line(found.group(1).decode("utf-8", "replace")) if found else "an object"


def _cleaned(objects: list[Any], refused: list[str]) -> list[Any]:
    """:func:`clean_objects`, except that an object too deep to walk is left out and named
    in ``refused`` (the rest of the page is kept)."""
    try:
        return clean_objects(objects)
    except RecursionError:
        kept = []
        for obj in objects:
            try:
                kept.extend(clean_objects([obj]))
            except RecursionError:
                name = (obj.get("metadata") or {}).get("name") if isinstance(obj, dict) else ""
                refused.append(f"{clean_line(str(name or 'an object'))}: nested too deep")
        return kept


def _text(value: Any) -> str:
    """A list's version or continue token: a string, or "" for anything else."""
    return value if isinstance(value, str) else ""


def resource_version_of(obj: Any) -> str:
    """``metadata.resourceVersion`` of a decoded object as a string, "" when it has none
    (whatever else the object carries: any watch object, typed or generic, may be odd)."""
    metadata = obj.get("metadata") if isinstance(obj, dict) else None
    version = metadata.get("resourceVersion") if isinstance(metadata, dict) else None
    return version if isinstance(version, str) else ""


def bookmark_object(obj: Any) -> JsonObj:
    """What gputui reads of a BOOKMARK's object: its resourceVersion, nothing else."""
    version = resource_version_of(obj)
    return {"metadata": {"resourceVersion": version}} if version else {}


NODES = FeedDecoder(Node, finish_node)
OPERATOR_PODS = FeedDecoder(Pod, finish_operator_pod)
GPU_PODS = FeedDecoder(Pod, finish_gpu_pod)


def reduce_with(decoder: FeedDecoder[Any], obj: Mapping[str, Any]) -> Item | None:
    """The dict path of a typed feed: the same shape and finish as its page decoder.

    ``msgspec.convert`` builds new containers, so ``obj`` is left untouched.
    """
    shaped = decoder.shaped(obj)
    return decoder.finish(clean_objects([shaped])[0]) if shaped else None


def reduce_node(obj: Mapping[str, Any]) -> Item:
    """A node as the cache keeps it (metadata without managedFields, readiness, GPU
    capacity, kernel), plus its label-change times."""
    return reduce_with(NODES, obj) or ({}, {})


def reduce_operator_pod(obj: Mapping[str, Any]) -> Item:
    """An operand pod as the pipeline reads it (see :func:`finish_operator_pod`)."""
    return reduce_with(OPERATOR_PODS, obj) or ({}, {})


def reduce_gpu_pod(obj: Mapping[str, Any]) -> Item | None:
    """A GPU-requesting workload pod reduced; ``None`` for every other pod."""
    return reduce_with(GPU_PODS, obj)


_TYPED: dict[Callable[..., Any], FeedDecoder[Any]] = {
    reduce_node: NODES, reduce_operator_pod: OPERATOR_PODS, reduce_gpu_pod: GPU_PODS}
_GENERIC: dict[Callable[..., Any], FeedDecoder[Any]] = {}


@lru_cache(maxsize=16)
def gpu_pod_reducer(selectors: tuple[str, ...] = ()) -> Callable[[Mapping[str, Any]],
                                                                 Item | None]:
    """The GPU pod feed's reducer, keeping also the pods any of ``selectors`` match: the
    upgrade controller's ``waitForCompletion.podSelector`` waits on every pod it selects,
    GPU or not (k8s-operator-libs ``pkg/upgrade/upgrade_state.go``). Typed like
    :func:`reduce_gpu_pod`; the same selectors give the same function (feeds compare).
    """
    if not selectors:
        return reduce_gpu_pod
    decoder = FeedDecoder(Pod, _finish_gpu_or_selected(selectors))

    def reduce(obj: Mapping[str, Any]) -> Item | None:
        return reduce_with(decoder, obj)
    _TYPED[reduce] = decoder
    return reduce


def decoder_for(reduce: Callable[[Mapping[str, Any]], Item | None]) -> FeedDecoder[Any]:
    """The decoder of a feed, chosen by its reducer: typed for the big feeds (nodes,
    pods), generic then the reducer for the small ones."""
    found = _TYPED.get(reduce) or _GENERIC.get(reduce)
    if found is None:
        found = _GENERIC[reduce] = FeedDecoder(None, reduce)
    return found
