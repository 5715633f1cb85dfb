"""One feed's list+watch loop, in its own thread: the client-go reflector, for raw JSON.

List (paged, each page decoded straight into reduced objects) into the cache, then watch from the list's
resourceVersion with bookmarks. A stream the server ends is resumed from the last version
seen; a 410 ``Expired`` (history compacted) relists; a lost connection backs off (capped
exponential with jitter) and resumes; a 403 empties the feed and marks it forbidden; a 404
on an optional feed (CRD not installed) is an empty feed. Every state change is reported to
the listener so the header can say "live", "reconnecting" or "forbidden".
"""

from __future__ import annotations

import enum
import logging
import random
import threading
from collections.abc import Callable
from typing import Protocol

from gputui.sources.cache import ObjectCache
from gputui.sources.decode import Page, WatchEvent, decoder_for, resource_version_of
from gputui.sources.discovery import served
from gputui.sources.errors import ApiStatusError, SourceError, status_parts
from gputui.sources.http import KubeHttp, WatchStream
from gputui.sources.reduce import JsonObj, LabelTimes
from gputui.sources.resources import Feed
from gputui.sources.retry import FORBIDDEN_RETRY

log = logging.getLogger(__name__)


class FeedState(enum.Enum):
    """Where one feed stands."""

    SYNCING = "syncing"
    SYNCED = "synced"
    FORBIDDEN = "forbidden"
    ABSENT = "absent"
    DISCONNECTED = "disconnected"


class FeedListener(Protocol):
    """What a reflector tells its owner."""

    def feed_state(self, feed: str, state: FeedState, message: str) -> None:
        """The feed moved to ``state``; ``message`` says why when it is a problem."""

    def feed_changed(self) -> None:
        """The feed submitted a change to the cache: a build is due."""

    def feed_alive(self) -> None:
        """A bookmark proved the data current; nothing changed, so no build is due."""


class Expired(Exception):
    """The watch's resourceVersion is gone from the server's history: relist."""


class Backoff:
    """Capped exponential back-off with jitter, so many clients do not retry in step."""

    def __init__(self, initial: float = 0.5, cap: float = 30.0):
        self.initial = initial
        self.cap = cap
        self._next = initial

    def next(self) -> float:
        delay = self._next
        self._next = min(self.cap, self._next * 2)
        return delay * random.uniform(0.8, 1.2)

    def reset(self) -> None:
        self._next = self.initial


def _after(gate: Callable[[], object], decode: Callable[[bytes], Page]
           ) -> Callable[[bytes], Page]:
    """``decode`` that first waits on ``gate``: the page is already in."""
    def gated(data: bytes) -> Page:
        gate()
        return decode(data)
    return gated


def list_feed(http: KubeHttp, feed: Feed, gate: Callable[[], object] | None = None,
              refused: list[str] | None = None,
              on_page: Callable[[list[tuple[JsonObj, LabelTimes]]], None] | None = None
              ) -> tuple[list[tuple[JsonObj, LabelTimes]], str]:
    """List a feed, each page decoded straight into what the cache keeps; returns the
    items and the list's resourceVersion (the last page's).

    With a ``gate``, each page is transferred at once but decoded only once ``gate()``
    returns (it blocks, bounded): the live source gates every feed on the GPU node rows,
    so their list is not slowed by decoding 40,000 pods beside it on a busy CPU (decoding
    holds the GIL) and the node rows show first, and every feed on the keys just typed
    (:class:`~gputui.sources.foreground.Foreground`). ``on_page`` is handed each page's
    items as it is decoded (the first list of the GPU nodes shows rows page by page).
    """
    items: list[tuple[JsonObj, LabelTimes]] = []
    version = ""
    decode: Callable[[bytes], Page] = decoder_for(feed.reduce).page
    if gate is not None:
        decode = _after(gate, decode)
    for page in http.list_pages(feed.path, decode, feed.query()):
        items.extend(page.items)
        if on_page is not None:
            on_page(page.items)
        version = page.resource_version
        if refused is not None:  # objects nested too deep to read: the rest is kept
            refused.extend(page.refused)
    return items, version


class Reflector:
    """Keeps one cache slot in sync with the server until :meth:`stop`."""

    #: seconds before a forbidden or absent feed is tried again (RBAC or CRDs may change,
    #: rarely: minutes, jittered, not a request every few seconds forever)
    RECHECK_SECONDS = FORBIDDEN_RETRY

    def __init__(self, http: KubeHttp, feed: Feed, cache: ObjectCache, listener: FeedListener,
                 *, watch_timeout: int = 290, backoff: Backoff | None = None,
                 gate: Callable[[], object] | None = None,
                 on_first_pages: Callable[[], None] | None = None):
        self.http = http
        self.feed = feed
        self.cache = cache
        self.listener = listener
        self.watch_timeout = watch_timeout
        self.backoff = backoff or Backoff()
        self.gate = gate  # each list page waits for it (see list_feed)
        #: when given, the first list's pages go into the cache as they are decoded and
        #: this is called after each (a relist stays one swap: it must not show a part)
        self.on_first_pages = on_first_pages
        self._listed_once = False
        self.resource_version = ""
        self._events_since_list = 1  # the first expiry relists at once
        #: object name -> why it could not be read (nested too deep), said in the header
        self._refused: dict[str, str] = {}
        self._stream: WatchStream[WatchEvent] | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"gputui-feed-{feed.name}",
                                        daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        """End the loop: a blocked watch read is unblocked, and nothing more is written."""
        self._stop.set()
        stream = self._stream
        if stream is not None:
            stream.close()

    def join(self, timeout: float) -> None:
        self._thread.join(timeout)

    # ------------------------------------------------------------------ the loop
    def _run(self) -> None:
        self.listener.feed_state(self.feed.name, FeedState.SYNCING, "")
        while not self._stop.is_set():
            try:
                if not self.resource_version:
                    self._list()
                self._watch()
            except Expired:
                self.resource_version = ""
                if self._expired_again():  # a server expiring every watch: no tight relist loop
                    self._stop.wait(self.backoff.next())
            except ApiStatusError as error:
                self._on_status_error(error)
            except SourceError as error:
                if self._stop.is_set():
                    return
                self.listener.feed_state(self.feed.name, FeedState.DISCONNECTED, str(error))
                self._stop.wait(self.backoff.next())
            except Exception as error:  # broad on purpose: a bug in decoding or reducing one
                # object must not end the feed silently (its data would freeze while the
                # header says live); say so, and start over from a fresh list
                if self._stop.is_set():
                    return
                log.exception("feed %s failed", self.feed.name)
                self.resource_version = ""
                text = str(error).splitlines()[0] if str(error) else ""
                self.listener.feed_state(self.feed.name, FeedState.DISCONNECTED,
                                         f"{type(error).__name__}: {text}".rstrip(": ")
                                         + " (gputui error, see --log-file; relisting)")
                self._stop.wait(self.backoff.next())

    def _expired_again(self) -> bool:
        """True when this watch expired before any event came since the last list."""
        again = self._events_since_list == 0
        self._events_since_list = 0
        return again

    def _list(self) -> None:
        refused: list[str] = []
        on_page = None if self._listed_once or self.on_first_pages is None else self._page_in
        items, version = list_feed(self.http, self.feed, self.gate, refused, on_page)
        if self._stop.is_set():
            return
        # after pages went in one by one, the swap changes nothing they brought (same
        # objects, same resourceVersions) and drops nothing: the cache was empty before
        self.cache.replace(self.feed.name, items)
        self._listed_once = True
        self.resource_version = version
        self.backoff.reset()
        self._refused = {why.partition(":")[0]: why for why in refused}
        self.listener.feed_state(self.feed.name, FeedState.SYNCED, self._refusal())
        self.listener.feed_changed()

    def _page_in(self, items: list[tuple[JsonObj, LabelTimes]]) -> None:
        """One page of the first list, into the cache now (see :attr:`on_first_pages`)."""
        if self._stop.is_set() or self.on_first_pages is None:
            return
        for obj, times in items:
            self.cache.apply(self.feed.name, "ADDED", obj, times)
        self.on_first_pages()

    def _watch(self) -> None:
        """Follow one watch stream to its end, applying events as they come."""
        query = self.feed.query()
        query["resourceVersion"] = self.resource_version
        timeout = max(1, int(self.watch_timeout * random.uniform(0.9, 1.0)))
        stream = self._stream = self.http.watch(self.feed.path, query, timeout,
                                                decoder_for(self.feed.reduce).event)
        if self._stop.is_set():
            stream.close()
            return
        self.listener.feed_state(self.feed.name, FeedState.SYNCED, self._refusal())
        for event in stream:
            if self._stop.is_set():
                return
            self._handle(event)
        # the stream opened and ended cleanly: the connection is healthy
        self.backoff.reset()

    def _handle(self, event: WatchEvent) -> None:
        kind, obj = event.type, event.object
        if kind == "ERROR":
            code, reason, message = status_parts(obj)
            if code == 410:
                raise Expired()
            raise ApiStatusError(code, reason, message or "watch error")
        version = resource_version_of(obj)
        if version:
            self.resource_version = version
            self._events_since_list += 1
        if kind == "BOOKMARK":
            self.listener.feed_alive()
            return
        if event.refused or kind in ("ADDED", "MODIFIED", "DELETED"):
            self._note_refusal(event)
        if kind not in ("ADDED", "MODIFIED", "DELETED"):
            return
        if event.item is None:
            changed = self.cache.apply(self.feed.name, "DELETED", obj, {})
        else:
            changed = self.cache.apply(self.feed.name, kind, event.item[0], event.item[1])
        if changed:
            self.listener.feed_changed()

    def _note_refusal(self, event: WatchEvent) -> None:
        """Keep the header's word on objects that cannot be read in step with the watch:
        a refused event names its object; a readable change of that object clears it."""
        name = event.refused.partition(":")[0] if event.refused else str(
            (event.object.get("metadata") or {}).get("name") or "")
        before = dict(self._refused)
        if event.refused:
            self._refused[name] = event.refused
        else:
            self._refused.pop(name, None)
        if self._refused != before:
            self.listener.feed_state(self.feed.name, FeedState.SYNCED, self._refusal())

    def _refusal(self) -> str:
        """The header's line for the objects of this feed that could not be read."""
        if not self._refused:
            return ""
        return (f"{self.feed.name}: {len(self._refused)} object(s) not read ("
                f"{'; '.join(sorted(self._refused.values()))[:160]})")

    def _on_status_error(self, error: ApiStatusError) -> None:
        if self._stop.is_set():
            return
        if error.code == 410:
            self.resource_version = ""
            return
        if error.code == 403 or (error.code == 404 and self.feed.optional):
            # RBAC answers before routing: a 403 on a CRD that is not installed is "absent"
            state = FeedState.ABSENT if error.code == 404 or (
                self.feed.optional and served(self.http, self.feed.path) is False) \
                else FeedState.FORBIDDEN
            self.resource_version = ""
            self.cache.clear(self.feed.name)
            self.listener.feed_state(self.feed.name, state, str(error))
            self.listener.feed_changed()
            self._stop.wait(self.RECHECK_SECONDS * random.uniform(0.9, 1.1))
            return
        self.listener.feed_state(self.feed.name, FeedState.DISCONNECTED, str(error))
        self._stop.wait(self.backoff.next())
