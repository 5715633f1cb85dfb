"""Watch streams: newline-delimited JSON events over a chunked response.

The store calls watch callbacks synchronously, under its lock, from the writer's thread. The
callback here only hops the event onto the server's loop; filtering (namespace, selectors,
with objects that stop matching sent as DELETED) and encoding happen on the loop. Encoded
object bytes come from the shared cache, so fanning one change out to many watchers encodes
it once.
"""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

from aiohttp import web

from gputui.sim.apiserver.common import ApiContext, dumps, int_param
from gputui.sim.apiserver.fields import check_field_selector
from gputui.sim.apiserver.paths import Target
from gputui.sim.apiserver.tables import table_head, table_row, wants_table
from gputui.sim.apiserver.watchlist import INITIAL_EVENTS_END, watch_options
from gputui.sim.apiserver.zero import zero_object
from gputui.sim.errors import ApiError, bad_request
from gputui.sim.selectors import field_predicate, label_predicate
from gputui.sim.store import Obj, Watch, WatchCallback, WatchEvent

_END = object()
LIVENESS_CHECK_S = 5.0  # an idle watch notices a vanished client this often


def _callback(loop: asyncio.AbstractEventLoop, queue: asyncio.Queue[Any]) -> WatchCallback:
    """A store callback that is cheap and safe from any thread."""
    loop_thread = threading.get_ident()

    def deliver(event: WatchEvent) -> None:
        if threading.get_ident() == loop_thread:
            queue.put_nowait(event)
        else:
            loop.call_soon_threadsafe(queue.put_nowait, event)

    return deliver


class WatchFilter:
    """Decides what a watcher sees of an event, translating selector transitions."""

    def __init__(self, target: Target, request: web.Request):
        fields = request.query.get("fieldSelector")
        check_field_selector(target.rtype, fields)
        self.namespace = target.namespace
        self._labels = label_predicate(request.query.get("labelSelector"))
        self._fields = field_predicate(fields)
        self._plain = not request.query.get("labelSelector") and not fields

    def matches(self, obj: Obj | None) -> bool:
        if obj is None:
            return False
        if self.namespace and (obj.get("metadata") or {}).get("namespace") != self.namespace:
            return False
        return self._plain or (self._labels(obj) and self._fields(obj))

    def translate(self, event: WatchEvent) -> str | None:
        """The event type to send, or ``None`` to skip."""
        if event.type != "MODIFIED":
            return event.type if self.matches(event.obj) else None
        now, before = self.matches(event.obj), self.matches(event.old)
        if now and before:
            return "MODIFIED"
        if now:
            return "ADDED"
        return "DELETED" if before else None


class WatchStream:
    """One watch request from registration to the end of its stream."""

    def __init__(self, ctx: ApiContext, target: Target, request: web.Request):
        self.ctx = ctx
        self.target = target
        self.request = request
        self.filter = WatchFilter(target, request)
        self.options = watch_options(request)  # a 422 here, before the stream starts
        self.queue: asyncio.Queue[Any] = asyncio.Queue()
        self.last_rv = 0
        timeout = int_param(request, "timeoutSeconds")
        self.deadline = time.monotonic() + timeout if timeout else None
        bookmarks = request.query.get("allowWatchBookmarks", "").lower() in ("true", "1")
        self.bookmarks = bookmarks
        self.response = web.StreamResponse(headers={"Content-Type": "application/json"})
        self.handle: Watch | None = None
        accept = request.headers.get("Accept", "")
        # kubectl get -w asks for Tables: each event then carries a one-row Table.
        self.table_head = table_head(target.resource, accept, {}) if wants_table(accept) \
            else None

    def _line(self, kind: str, obj: Obj) -> bytes:
        body = self.ctx.cache.encode(self.target.resource, obj)
        if self.table_head is not None:
            row = table_row(self.target.resource, obj, body, self.ctx.store.clock.now())
            body = self.table_head + row + b"]}"
        return b'{"type":"' + kind.encode() + b'","object":' + body + b"}\n"

    def _register(self) -> list[bytes]:
        """Register with the store; return the lines to send first (initial state, backlog)."""
        raw = self.request.query.get("resourceVersion")
        callback = _callback(asyncio.get_running_loop(), self.queue)
        store = self.ctx.store
        send_initial = self.options.send_initial
        if send_initial or (send_initial is None and raw in (None, "", "0")):
            # the store is always at least as new as any version a client saw, so every
            # NotOlderThan request is served from the current state
            items, rv = store.list(self.target.resource, self.target.namespace)
            lines = [self._line("ADDED", o) for o in items if self.filter.matches(o)]
            if self.options.streams_list and self.bookmarks:
                lines.append(self._bookmark(rv, initial_events_end=True))
            self.handle, backlog = store.watch(self.target.resource, callback, since=rv)
            self.last_rv = rv
            return lines + [line for line in map(self._render, backlog) if line]
        since = store.resource_version if raw in (None, "", "0") else _parse_rv(raw)
        self.handle, backlog = store.watch(self.target.resource, callback, since=since)
        self.last_rv = since
        return [line for line in map(self._render, backlog) if line]

    def _render(self, event: WatchEvent) -> bytes | None:
        if event.resource_version <= self.last_rv:
            return None
        self.last_rv = event.resource_version
        kind = self.filter.translate(event)
        return self._line(kind, event.obj) if kind else None

    def _bookmark(self, rv: int, initial_events_end: bool = False) -> bytes:
        rtype = self.target.rtype
        metadata: dict[str, Any] = {"resourceVersion": str(rv)}
        if initial_events_end:
            metadata["annotations"] = {INITIAL_EVENTS_END: "true"}
        obj = zero_object(rtype.key, rtype.kind, rtype.api_version, metadata)
        return b'{"type":"BOOKMARK","object":' + dumps(obj) + b"}\n"

    async def run(self) -> web.StreamResponse:
        self.response.enable_chunked_encoding()
        await self.response.prepare(self.request)
        try:
            first = self._register()
        except ApiError as error:
            await self.response.write(b'{"type":"ERROR","object":' + dumps(error.status())
                                      + b"}\n")
            return await self._finish()
        self.ctx.watch_queues.add(self.queue)
        try:
            if first:
                await self.response.write(b"".join(first))
            await self._pump()
        except (ConnectionResetError, ConnectionError, asyncio.CancelledError):
            pass
        finally:
            self.ctx.watch_queues.discard(self.queue)
            if self.handle is not None:
                self.handle.cancel()
        return await self._finish()

    async def _finish(self) -> web.StreamResponse:
        try:
            await self.response.write_eof()
        except (ConnectionError, RuntimeError):
            pass
        return self.response

    def _wait_time(self, next_bookmark: float) -> float:
        """Until the deadline, the next bookmark or the next check that the client is there."""
        now = time.monotonic()
        limits = [t - now for t in (self.deadline, next_bookmark if self.bookmarks else None)
                  if t is not None]
        return max(min([*limits, LIVENESS_CHECK_S]), 0.0)

    def _client_gone(self) -> bool:
        transport = self.request.transport
        return transport is None or transport.is_closing()

    async def _pump(self) -> None:
        """Forward events until timeout, disconnect or server shutdown."""
        next_bookmark = time.monotonic() + self.ctx.bookmark_interval
        while not self.ctx.closing:
            try:
                event = await asyncio.wait_for(self.queue.get(), self._wait_time(next_bookmark))
            except TimeoutError:
                now = time.monotonic()
                if self._client_gone() or (self.deadline is not None and now >= self.deadline):
                    return
                if self.bookmarks and now >= next_bookmark:
                    await self._maybe_bookmark()
                    next_bookmark = time.monotonic() + self.ctx.bookmark_interval
                continue
            batch = [event]
            while not self.queue.empty():
                batch.append(self.queue.get_nowait())
            if any(item is _END for item in batch):
                return
            lines = [line for line in map(self._render, batch) if line]
            if lines:
                await self.response.write(b"".join(lines))

    async def _maybe_bookmark(self) -> None:
        """Send a bookmark at the store's version once every earlier event is queued."""
        rv = self.ctx.store.resource_version
        await asyncio.sleep(0)  # let events scheduled from other threads land first
        if self.queue.empty():
            self.last_rv = max(self.last_rv, rv)
            await self.response.write(self._bookmark(self.last_rv))


async def watch_response(ctx: ApiContext, target: Target,
                         request: web.Request) -> web.StreamResponse:
    return await WatchStream(ctx, target, request).run()


def end_all_watches(ctx: ApiContext) -> None:
    """Server shutdown: end every stream so the runner need not wait for them."""
    ctx.closing = True
    for queue in list(ctx.watch_queues):
        queue.put_nowait(_END)


def _parse_rv(raw: str) -> int:
    try:
        return int(raw)
    except ValueError:
        raise bad_request(f"invalid resourceVersion {raw!r}") from None


def is_watch(request: web.Request) -> bool:
    return request.query.get("watch", "").lower() in ("true", "1")
