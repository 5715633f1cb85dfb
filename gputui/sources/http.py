"""Raw-JSON HTTP to the Kubernetes API, built from the ``kubernetes`` client's Configuration.

Why not the generated API classes: gputui reads big lists (5,000 nodes, tens of thousands of
pods) and typed models cost about four times the parse, and the informer in
``kubernetes.informer`` neither pages nor lets gputui reduce objects as they arrive. So this
module reuses what the client does well (TLS, proxies, the urllib3 pool from
``kubernetes.client.rest``, token refresh for exec plugins through ``auth_settings()``) and
adds only plain GETs: one JSON document, a paged list, or a watch stream of events.
"""

from __future__ import annotations

import contextlib
import json
import logging
import re
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from typing import Any, Generic, Protocol, TypeVar
from urllib.parse import urlencode

import urllib3
from kubernetes.client import Configuration
from kubernetes.client.rest import RESTClientObject

from gputui.domain.sanitize import clean_tree
from gputui.sources.credentials import CredentialError
from gputui.sources.decode import FeedDecoder
from gputui.sources.errors import ApiStatusError, UnreachableError, status_parts
from gputui.sources.prefetch import PageFetcher
from gputui.sources.retry import RateLimiter, RetryPolicy, parse_retry_after, with_retries

log = logging.getLogger("gputui.sources.http")

try:  # orjson parses big lists about twice as fast and shares equal short keys
    import orjson

    def _loads(data: bytes) -> Any:
        return orjson.loads(data)
except ImportError:  # pragma: no cover - the standard library is enough, only slower
    def _loads(data: bytes) -> Any:
        return json.loads(data)

JsonObj = dict[str, Any]


class DecodedPage(Protocol):
    """What :meth:`KubeHttp.list_pages` needs of a decoded page: where the list goes on."""

    @property
    def continue_token(self) -> str: ...


P = TypeVar("P", bound=DecodedPage)
E = TypeVar("E")

#: seconds to open a connection; a silent server should fail fast, not hang the header
CONNECT_TIMEOUT = 5.0
#: seconds to wait for a list page or a log (a 500-item page is far quicker than this)
READ_TIMEOUT = 60.0
PAGE_LIMIT = 500
#: no retries inside urllib3: every attempt, a dead pooled connection after a server restart
#: included, goes through :mod:`gputui.sources.retry`, so each one takes a token from the
#: rate limiter and is logged (urllib3's own retry doubled the requests of a down server)
_RETRY = urllib3.Retry(total=0, redirect=0, status=0, other=0,
                       respect_retry_after_header=False, raise_on_status=False)


class KubeHttp:
    """A thread-safe GET-only client; :meth:`close` aborts watches blocked on a read."""

    def __init__(self, configuration: Configuration, *, limiter: RateLimiter | None = None,
                 policy: RetryPolicy | None = None):
        self.configuration = configuration
        self.host = str(configuration.host).rstrip("/")
        self._pool: urllib3.PoolManager = RESTClientObject(configuration).pool_manager
        self._lock = threading.Lock()
        self._streams: set[WatchStream[Any]] = set()
        self._closed = False
        #: every request of every thread takes a token: a bounded rate whatever fails
        self.limiter = limiter or RateLimiter()
        self.policy = policy or RetryPolicy()
        self._closing = threading.Event()
        #: told (from the requesting thread) what is being retried, then None when that
        #: thread's retries are over; the live source shows it in the header
        self.on_retry: Callable[[int, str | None], None] | None = None
        #: told when the server answers 401 (an exec plugin's credential is then refreshed)
        self.on_unauthorized: Callable[[], None] | None = None

    def _report_retry(self, message: str | None) -> None:
        listener = self.on_retry
        if listener is not None:
            listener(threading.get_ident(), message)

    # ------------------------------------------------------------------ requests
    def _headers(self, accept: str = "application/json") -> dict[str, str]:
        """Auth headers are recomputed per request so expiring credentials are refreshed.

        A value no header can carry (a line break, a control character) is refused here
        in a sentence; urllib3 would raise ``ValueError`` quoting the whole header.
        """
        headers = {"Accept": accept, "User-Agent": "gputui"}
        settings: dict[str, Any] = dict(self.configuration.auth_settings())
        for setting in settings.values():
            if setting.get("in") == "header" and setting.get("value"):
                value = str(setting["value"])
                if not value.isprintable():
                    raise CredentialError(f"the {setting['key']} credential of this kubeconfig "
                                          "contains a line break or control character")
                headers[str(setting["key"])] = value
        return headers

    def _open_once(self, path: str, query: Mapping[str, Any] | None, read_timeout: float,
                   accept: str = "application/json") -> urllib3.BaseHTTPResponse:
        """One attempt: a token from the limiter, the request, a logged outcome."""
        url = self.host + path
        if query:
            url += "?" + urlencode({k: v for k, v in query.items() if v is not None})
        self.limiter.acquire()
        if self._closing.is_set():  # closed (the app is leaving): nothing more is sent
            raise UnreachableError(f"not sent to {self.host}: the client is closed")
        started = time.monotonic()
        try:
            response = self._pool.request(
                "GET", url, headers=self._headers(accept), preload_content=False,
                retries=_RETRY,
                timeout=urllib3.Timeout(connect=CONNECT_TIMEOUT, read=read_timeout))
        except urllib3.exceptions.HTTPError as error:
            reason = _reason(error)
            log.debug("GET %s failed: %s", url, reason)
            raise UnreachableError(f"cannot reach the API server at {self.host}: {reason}",
                                   no_answer=True) from None
        log.debug("GET %s -> %d (%.0f ms)", url, response.status,
                  (time.monotonic() - started) * 1000)
        if response.status == 401 and self.on_unauthorized is not None:
            self.on_unauthorized()
        if response.status >= 300:
            body = _read_all(response)
            raise _status_error(response.status, body,
                                parse_retry_after(response.headers.get("Retry-After")))
        return response

    def _open(self, path: str, query: Mapping[str, Any] | None, read_timeout: float,
              accept: str = "application/json") -> urllib3.BaseHTTPResponse:
        """Open a response, retrying what :mod:`gputui.sources.retry` says is worth it."""
        return with_retries(lambda: self._open_once(path, query, read_timeout, accept),
                            f"GET {path}", self.policy, self._closing, self._report_retry)

    def get(self, path: str, query: Mapping[str, Any] | None = None) -> JsonObj:
        """One JSON document (an object or a list page)."""
        return self._parse(path, self._fetch(path, query))

    def _fetch(self, path: str, query: Mapping[str, Any] | None,
               accept: str = "application/json") -> bytes:
        """The whole body; a connection reset mid-body is retried like a failed request."""
        return with_retries(
            lambda: _read_all(self._open_once(path, query, READ_TIMEOUT, accept)),
            f"GET {path}", self.policy, self._closing, self._report_retry)

    def _parse(self, path: str, data: bytes) -> JsonObj:
        try:
            document = _loads(data)
        except ValueError:
            raise UnreachableError(f"{self.host}{path}: answer is not JSON") from None
        except RecursionError:
            return self._shallow(path, data)
        if not isinstance(document, dict):
            raise UnreachableError(f"{self.host}{path}: answer is not a JSON object")
        try:
            return clean_tree(document)  # type: ignore[no-any-return]
        except RecursionError:
            return self._shallow(path, data)

    def _shallow(self, path: str, data: bytes) -> JsonObj:
        """A list whose items nest too deep to read: the others, the deep ones left out
        (logged by the decoder); a single object that deep is not an answer gputui reads."""
        try:
            page = FeedDecoder(None, lambda obj: (obj, {})).page(data)
        except ValueError:
            raise UnreachableError(f"{self.host}{path}: answer nested too deep") from None
        return {"metadata": {"resourceVersion": page.resource_version},
                "items": [obj for obj, _ in page.items]}

    def get_text(self, path: str, query: Mapping[str, Any] | None = None, *,
                 timeout: float = READ_TIMEOUT, patient: bool = True) -> str:
        """A plain-text answer (pod logs, exporter scrapes through the pod proxy).

        ``patient=False`` makes one attempt within ``timeout``: a hung exporter among many
        should cost one timeout, not the whole retry budget.
        """
        policy = self.policy if patient else RetryPolicy(max_attempts=1, no_answer_attempts=1)
        data = with_retries(
            lambda: _read_all(self._open_once(path, query, timeout, "*/*")),
            f"GET {path}", policy, self._closing)
        return data.decode("utf-8", errors="replace")

    def get_tail(self, path: str, query: Mapping[str, Any] | None, keep: int,
                 limit: int) -> tuple[str, int]:
        """The last ``keep`` bytes of a plain-text answer, and how many bytes it had.

        For pod logs: a server or proxy that ignores ``tailLines`` may send hundreds of
        megabytes. The body is streamed and only its tail kept, so memory stays at
        ``keep`` whatever comes; past ``limit`` bytes the read stops (the tail is then
        the last bytes read, not the log's end, which the caller says).
        """
        return with_retries(
            lambda: _read_tail(self._open_once(path, query, READ_TIMEOUT, "*/*"), keep, limit),
            f"GET {path}", self.policy, self._closing)

    def list_pages(self, path: str, decode: Callable[[bytes], P],
                   query: Mapping[str, Any] | None = None, limit: int = PAGE_LIMIT
                   ) -> Iterator[P]:
        """Yield each page of a list decoded by ``decode``, following ``continue``.

        The caller keeps what it needs of each page before the next is decoded. The pages
        after it are fetched meanwhile (:class:`~gputui.sources.prefetch.PageFetcher`, a
        few ahead): the ``continue`` token sits in the list's metadata, before the items,
        so it is read from the raw bytes and the server serialises and sends the next pages
        while gputui decodes this one (server and client alternate otherwise, and each
        waits for the other). A token the peek misread is followed as the page says.
        """
        params: dict[str, Any] = dict(query or {}, limit=limit)

        def fetch(token: str) -> bytes:
            return self._fetch(path, dict(params, **{"continue": token}) if token else params)

        token: str | None = ""
        while token is not None:
            fetcher = PageFetcher(fetch, _peek_continue, token)
            token = None
            try:
                for data, guess in fetcher:
                    page = self._decoded(path, decode, data)
                    del data
                    if page.continue_token != guess:  # the peek missed (unusual layout)
                        fetcher.stop()
                        token = page.continue_token or None
                        yield page
                        break
                    yield page
            finally:
                fetcher.stop()

    def _decoded(self, path: str, decode: Callable[[bytes], P], data: bytes) -> P:
        try:
            return decode(data)
        except ValueError:
            raise UnreachableError(f"{self.host}{path}: answer is not a JSON list") from None

    def watch(self, path: str, query: Mapping[str, Any], timeout_seconds: int,
              decode: Callable[[bytes], E]) -> WatchStream[E]:
        """Open a watch and return its stream of events, each line decoded by ``decode``.

        The request is made now, so an error status or an unreachable server raises here;
        iterating then raises :class:`UnreachableError` if the connection drops mid-stream,
        and simply ends when the server closes the stream (``timeoutSeconds``).
        """
        params = dict(query)
        params.update(watch="true", timeoutSeconds=timeout_seconds, allowWatchBookmarks="true")
        response = self._open(path, params, read_timeout=timeout_seconds + 30.0)
        stream = WatchStream(self, response, decode)
        with self._lock:
            if self._closed:
                stream.close()
            else:
                self._streams.add(stream)
        return stream

    def _forget(self, stream: WatchStream[Any]) -> None:
        with self._lock:
            self._streams.discard(stream)

    def close(self) -> None:
        """Abort open watch streams (unblocking their threads) and drop pooled connections."""
        self._closing.set()
        with self._lock:
            self._closed = True
            streams = list(self._streams)
        for stream in streams:
            stream.close()
        self._pool.clear()


class WatchStream(Generic[E]):
    """One open watch: iterate for events; :meth:`close` (any thread) ends the iteration."""

    def __init__(self, owner: KubeHttp, response: urllib3.BaseHTTPResponse,
                 decode: Callable[[bytes], E]):
        self._owner = owner
        self._response = response
        self._decode = decode
        self._closed = False

    def __iter__(self) -> Iterator[E]:
        finished = False
        try:
            if not self._closed:
                yield from _events(self._response, self._owner.host, self._decode)
                finished = True
        except UnreachableError:
            if not self._closed:
                raise
        finally:
            self._owner._forget(self)
            if not finished:  # left mid-stream (an ERROR event): the connection is dirty
                with contextlib.suppress(Exception):
                    self._response.close()
            self._response.release_conn()

    def close(self) -> None:
        """Shut the socket so a read blocked in another thread returns at once."""
        self._closed = True
        with contextlib.suppress(Exception):  # best effort while stopping
            self._response.shutdown()


def _events(response: urllib3.BaseHTTPResponse, host: str, decode: Callable[[bytes], E]
            ) -> Iterator[E]:
    """Newline-delimited JSON events from a streaming response, each decoded."""
    buffer = b""
    try:
        while True:
            chunk = response.read1(65536)
            if not chunk:
                break
            buffer += chunk
            while b"\n" in buffer:
                line, buffer = buffer.split(b"\n", 1)
                if line.strip():
                    yield decode(line)
    except (urllib3.exceptions.HTTPError, OSError, ValueError) as error:
        raise UnreachableError(f"watch on {host} broke: {_reason(error)}") from None
    if buffer.strip():
        try:
            yield decode(buffer)
        except ValueError:
            pass


_CONTINUE = re.compile(rb'"continue"\s*:\s*"([^"\\]*)"')


def _peek_continue(data: bytes) -> str:
    """The ``metadata.continue`` token read from a list's raw bytes, before its items."""
    head = data[:16384]
    items = head.find(b'"items"')
    found = _CONTINUE.search(head if items < 0 else head[:items])
    return found.group(1).decode() if found else ""


def _read_all(response: urllib3.BaseHTTPResponse) -> bytes:
    try:
        return response.read()
    except (urllib3.exceptions.HTTPError, OSError) as error:
        raise UnreachableError(f"reading from the API server failed: {_reason(error)}") from None
    finally:
        response.release_conn()


def _read_tail(response: urllib3.BaseHTTPResponse, keep: int, limit: int
               ) -> tuple[str, int]:
    """The body's last ``keep`` bytes (decoded) and its size, reading at most ``limit``."""
    tail, total = bytearray(), 0
    try:
        for chunk in response.stream(1 << 16):
            total += len(chunk)
            tail += chunk
            if len(tail) > 2 * keep:  # trimmed in batches: one copy per ``keep`` bytes read
                del tail[:len(tail) - keep]
            if total >= limit:
                break
    except (urllib3.exceptions.HTTPError, OSError) as error:
        raise UnreachableError(f"reading from the API server failed: {_reason(error)}") from None
    finally:
        response.release_conn()
    return bytes(tail[-keep:]).decode("utf-8", errors="replace"), total


def _status_error(code: int, body: bytes, retry_after: float | None = None) -> ApiStatusError:
    """A Kubernetes ``Status`` answer (or any error body) as one exception."""
    reason, message = "", body.decode("utf-8", errors="replace").strip()[:200]
    try:
        status = json.loads(body)
    except (ValueError, RecursionError):  # not JSON (a proxy's HTML page): quoted as text
        status = None
    if isinstance(status, dict):
        _, reason, detail = status_parts(status)
        message = detail or message
    return ApiStatusError(code, reason, message or "no message", retry_after)


def _reason(error: BaseException) -> str:
    """The innermost cause of a urllib3 error, short: "connection refused", "timed out"."""
    inner: BaseException = error
    while True:
        nxt = getattr(inner, "reason", None)
        if isinstance(nxt, BaseException) and nxt is not inner:
            inner = nxt
            continue
        break
    if isinstance(inner, ConnectionRefusedError) or "Connection refused" in str(inner):
        return "connection refused"
    if "RemoteDisconnected" in repr(inner) or "Connection aborted" in str(inner):
        return "connection closed by the server"
    if "timed out" in str(inner).lower():
        return "timed out"
    text = str(inner).split(": ", 1)[-1] if ": " in str(inner) else str(inner)
    return text.splitlines()[0] if text else type(inner).__name__
