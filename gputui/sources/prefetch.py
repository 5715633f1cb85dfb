"""A list's pages fetched ahead, in a thread of their own, while the caller decodes.

Why: a list of 40,000 pods is 80 pages, and the API server serialises each one on request.
Fetching only the next page while one is decoded (one page ahead) left the server idle
whenever a decode ran longer than a serialisation, as it does while three lists are decoded
at once and take turns at the GIL: at 5,000 nodes the pod list had no request in flight for
a sixth of its time. Here the fetcher goes on to the page after as soon as a page's bytes
are in (the ``continue`` token is read from the raw bytes: it precedes the items), up to
``ahead`` pages queued, so server and client work side by side and the list is read at the
pace of the slower of the two, not of both in turn.

The fetcher stops at the list's last page, at an error (raised to the caller in its place,
after the pages before it) and when the caller stops reading (the generator is closed).
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Iterator

#: pages fetched ahead of the one being decoded: enough to ride out a decode's stall, few
#: enough that the bytes held stay small (pages of 500 pods are ~3 MB)
PAGES_AHEAD = 2
#: seconds between checks of the stop flag while the queue is full
_POLL = 0.1

Fetch = Callable[[str], bytes]


class PageFetcher:
    """Fetches ``fetch(token)`` for the first token and each token peeked from a page's
    bytes after it, into a bounded queue, in a daemon thread; iterate for (bytes, token
    peeked from them) in order."""

    def __init__(self, fetch: Fetch, peek: Callable[[bytes], str], first_token: str = "",
                 ahead: int = PAGES_AHEAD, name: str = "gputui-page"):
        self._fetch = fetch
        self._peek = peek
        self._queue: queue.Queue[tuple[bytes, str] | BaseException | None] = \
            queue.Queue(maxsize=max(1, ahead))
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, args=(first_token,), name=name,
                                        daemon=True)
        self._thread.start()

    def _run(self, token: str) -> None:
        while not self._stop.is_set():
            try:
                data = self._fetch(token)
            except BaseException as error:  # noqa: BLE001 - handed to the reader, in order
                self._put(error)
                return
            token = self._peek(data)
            if not self._put((data, token)) or not token:
                break
        self._put(None)

    def _put(self, item: tuple[bytes, str] | BaseException | None) -> bool:
        """Queue ``item``, waiting while the queue is full; False once stopped."""
        while not self._stop.is_set():
            try:
                self._queue.put(item, timeout=_POLL)
            except queue.Full:
                continue
            return True
        return False

    def __iter__(self) -> Iterator[tuple[bytes, str]]:
        while True:
            item = self._queue.get()
            if item is None:
                return
            if isinstance(item, BaseException):
                raise item
            yield item

    def stop(self) -> None:
        """Stop fetching and wait for the page in flight (the connection is then free)."""
        self._stop.set()
        self._drain()
        self._thread.join()

    def _drain(self) -> None:
        try:
            while True:
                self._queue.get_nowait()
        except queue.Empty:
            pass
