"""API-level faults: the emulated API server misbehaving on a schedule or at random, seeded.

An aiohttp middleware (first in the chain) decides per request which active fault applies:
latency, 429 with ``Retry-After`` (priority and fairness), 500 and 503, a connection reset
mid-body, watches closed early or answered ``410 Expired``, the whole server down (every
connection dropped without an answer, open watches cut), one resource forbidden (403), an
eviction refused forever as a disruption budget would (429), and the dcgm-exporters behind the
pod proxy hanging or answering garbage, or any path answering a chosen status (``status:CODE``:
a pod proxy that may not reach the exporters answers 400 "address not allowed", a dead or
firewalled pod 503).

Grammar (one item of ``gputui sim --faults``, a scenario's ``faults:`` list, or
:meth:`FaultInjector.add`)::

    KIND[:ARG][~PATH][%PERCENT][@START][+DURATION]   seed:N sets the random seed (default 0)

``START`` and ``DURATION`` are wall-clock seconds since the server started (``30``, ``30s``,
``5m``): the network misbehaves in real time, whatever the emulated clock's speed.
``PERCENT`` (default 100) is the share of matching requests that get the fault; ``~PATH``
narrows it to requests whose path contains PATH (``500~/eviction``: evictions fail). Exporter
scrapes through the pod proxy get only the ``exporter-*`` faults and those naming a ``~PATH``
(``503~/proxy/metrics``): a server-wide 500 is about the API, not the exporters behind it.

==================  ===========================================================================
``latency:MS``      every matching request waits MS milliseconds first
``429[:SECONDS]``   ``429 TooManyRequests`` with ``Retry-After: SECONDS`` (default 1)
``500``             ``500 InternalError``
``503[:SECONDS]``   ``503 ServiceUnavailable`` with ``Retry-After`` (default 1)
``reset``           headers and half the body, then the connection is cut (new watches: cut
                    after a moment; open watches: each cut with the same chance)
``watch-close``     watches end after 1-2 s, cleanly, as a server's timeout would (open
                    watches: each ended with the fault's chance)
``watch-410``       watches answer an ``ERROR`` event ``410 Expired``: the client must relist
``down``            the server is down: every connection closed without an answer
``forbid:RESOURCE`` ``403 Forbidden`` for one resource (``events``, ``pods``, ``nodes`` ...)
``evict-refuse``    every eviction refused (429) as a disruption budget would, forever
``exporter-hang``   exporter scrapes through the pod proxy never answer (the client times out)
``exporter-garbage`` exporter scrapes answer text that is not the exposition format
``status:CODE``     ``CODE`` (400-599) with the Status a real kube-apiserver sends: 400
                    ``BadRequest`` "address not allowed" (the pod proxy refusing a pod IP),
                    404 ``NotFound`` (an API not served), 503 "error trying to reach
                    service" (a dead or firewalled pod behind the proxy), others generic
==================  ===========================================================================

Examples: ``429:1%50`` (half the requests throttled, as measured against kubectl),
``down@30s+20s``, ``watch-410%30,reset%5,seed:7``, ``forbid:events``,
``status:400~/proxy/metrics`` (every exporter scrape refused as "address not allowed"),
``forbid:nvidiadrivers,status:404~/apis/nvidia.com/v1alpha1`` (no NVIDIADriver CRD, and a
viewer refused the unknown resource, as RBAC does before routing).
"""

from __future__ import annotations

import asyncio
import random
import re
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass

from aiohttp import web

from gputui.sim.apiserver.rbac import forbidden_details, forbidden_message

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]

#: kind -> (argument name or "", default argument)
KINDS: dict[str, tuple[str, str]] = {
    "latency": ("MS", ""), "429": ("SECONDS", "1"), "500": ("", ""), "503": ("SECONDS", "1"),
    "reset": ("", ""), "watch-close": ("", ""), "watch-410": ("", ""), "down": ("", ""),
    "forbid": ("RESOURCE", ""), "evict-refuse": ("", ""), "exporter-hang": ("", ""),
    "exporter-garbage": ("", ""), "status": ("CODE", ""),
}
_ITEM = re.compile(r"^(?P<kind>[a-z0-9-]+)(?::(?P<arg>[^%@+~]+))?(?:~(?P<path>[^%@+]+))?"
                   r"(?:%(?P<pct>\d+(?:\.\d+)?))?(?:@(?P<start>[0-9.]+[smh]?))?"
                   r"(?:\+(?P<dur>[0-9.]+[smh]?))?$")
_UNITS = {"": 1.0, "s": 1.0, "m": 60.0, "h": 3600.0}
#: the emulator's own endpoint with :meth:`FaultInjector.stats` (``gputui sim`` runs apart)
STATS_PATH = "/gputui-sim/faults"
GARBAGE = b"\x00\xff<html>502 Bad Gateway</html>\nDCGM_FI_DEV_GPU_UTIL{gpu=0 42 not-a-number\n"


class FaultSpecError(ValueError):
    """A fault item that cannot be parsed; the message names the item."""


@dataclass(frozen=True)
class ApiFault:
    """One fault rule: what, how often, and when (seconds since the server started)."""

    kind: str
    arg: str = ""
    percent: float = 100.0
    start: float = 0.0
    duration: float | None = None
    #: only requests whose path contains this (``/eviction``, ``/nodes``); "" = every request
    path: str = ""

    def active(self, elapsed: float) -> bool:
        end = None if self.duration is None else self.start + self.duration
        return elapsed >= self.start and (end is None or elapsed < end)

    def text(self) -> str:
        """The item back in the grammar (logs, soak reports)."""
        out = self.kind + (f":{self.arg}" if self.arg else "")
        out += f"~{self.path}" if self.path else ""
        out += f"%{self.percent:g}" if self.percent < 100 else ""
        out += f"@{self.start:g}s" if self.start else ""
        return out + (f"+{self.duration:g}s" if self.duration is not None else "")


def _seconds(text: str | None, item: str) -> float | None:
    if text is None:
        return None
    match = re.fullmatch(r"([0-9.]+)([smh]?)", text)
    if not match:
        raise FaultSpecError(f"fault {item!r}: bad time {text!r} (use 30, 30s, 5m)")
    return float(match.group(1)) * _UNITS[match.group(2)]


def parse_api_fault(item: str) -> ApiFault:
    """One item of the grammar above (``seed:N`` is handled by the caller)."""
    match = _ITEM.match(item.strip())
    if not match or match.group("kind") not in KINDS:
        kind = item.split(":")[0].split("%")[0].split("@")[0]
        raise FaultSpecError(f"fault {item!r}: unknown API fault {kind!r} "
                             f"(known: {', '.join(KINDS)})")
    kind = match.group("kind")
    needs, default = KINDS[kind]
    arg = match.group("arg") or default
    if needs and not arg:
        raise FaultSpecError(f"fault {item!r}: expected {kind}:{needs}")
    if not needs and match.group("arg"):
        raise FaultSpecError(f"fault {item!r}: {kind} takes no argument")
    if needs in ("MS", "SECONDS") and not re.fullmatch(r"\d+(\.\d+)?", arg):
        raise FaultSpecError(f"fault {item!r}: {needs} must be a number")
    if needs == "CODE" and not (arg.isdigit() and 400 <= int(arg) <= 599):
        raise FaultSpecError(f"fault {item!r}: CODE must be an HTTP error status (400-599)")
    percent = float(match.group("pct") or 100)
    if not 0 <= percent <= 100:
        raise FaultSpecError(f"fault {item!r}: percent must be 0-100")
    return ApiFault(kind, arg, percent, _seconds(match.group("start"), item) or 0.0,
                    _seconds(match.group("dur"), item), match.group("path") or "")


def is_api_fault(item: str) -> bool:
    """True when ``item`` belongs to this grammar (rather than the scenario timeline's)."""
    head = re.split(r"[:%@+~]", item.strip(), maxsplit=1)[0]
    return head in KINDS or head == "seed"


def _status(code: int, reason: str, message: str, retry_after: str = "") -> web.Response:
    headers = {"Retry-After": retry_after} if retry_after else None
    return web.json_response({"kind": "Status", "apiVersion": "v1", "metadata": {},
                              "status": "Failure", "message": message, "reason": reason,
                              "code": code}, status=code, headers=headers)


#: fault kind -> the Status it answers with (``{resource}`` and ``{verb}`` filled in)
_STATUS_ANSWERS = {
    "429": (429, "TooManyRequests", "Too many requests, please try again later."),
    "500": (500, "InternalError", "Internal error occurred: injected fault"),
    "503": (503, "ServiceUnavailable", "the server is currently unable to handle the request"),
    "evict-refuse": (429, "TooManyRequests",
                     "Cannot evict pod as it would violate the pod's disruption budget."),
}
#: ``status:CODE`` -> the reason and message a kube-apiserver sends with that code. 400 is
#: the pod proxy's answer for a pod IP it may not proxy to (``proxyutil.IsProxyableIP``:
#: "address not allowed"); 503 its answer when the pod does not answer the dial
_CODE_ANSWERS = {
    400: ("BadRequest", "address not allowed"),
    403: ("Forbidden", "forbidden: injected fault"),
    404: ("NotFound", "the server could not find the requested resource"),
    500: ("InternalError", "Internal error occurred: injected fault"),
    502: ("BadGateway", "error trying to reach service: EOF"),
    503: ("ServiceUnavailable", "error trying to reach service: dial tcp 10.244.0.9:9400: "
                                "connect: connection refused"),
    504: ("Timeout", "error trying to reach service: dial tcp 10.244.0.9:9400: i/o timeout"),
}


def _forbidden(request: web.Request, resource: str) -> web.Response:
    """The 403 a real kube-apiserver answers (the same body as ``--deny``'s): the Kubernetes
    verb, the API group, the namespace or the cluster scope, and ``details``."""
    parts = [p for p in request.path.split("/") if p]
    group = parts[1] if parts[:1] == ["apis"] and len(parts) > 1 else ""
    rest = parts[2:] if parts[:1] == ["api"] else parts[3:]
    rest = rest[1:] if rest[:1] == ["watch"] else rest
    namespace = rest[1] if len(rest) >= 3 and rest[0] == "namespaces" else None
    scoped = rest[2:] if namespace else rest
    name = scoped[1] if len(scoped) > 1 else None
    subresource = scoped[2] if len(scoped) > 2 else ""
    if request.method == "GET":
        verb = "watch" if _is_watch(request) else "get" if name else "list"
    else:
        verb = {"POST": "create", "PUT": "update", "PATCH": "patch"}.get(
            request.method, request.method.lower())
    status = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
              "message": forbidden_message(verb, resource, subresource, group, name, namespace),
              "reason": "Forbidden", "details": forbidden_details(resource, group, name),
              "code": 403}
    return web.json_response(status, status=403)


def _is_watch(request: web.Request) -> bool:
    return request.query.get("watch") in ("true", "1") or "/watch/" in request.path


def _resource(request: web.Request) -> str:
    """The resource a path names: ``/api/v1/namespaces/x/pods/y/log`` -> ``pods``."""
    parts = [p for p in request.path.split("/") if p]
    parts = parts[2:] if parts[:1] == ["api"] else parts[3:]
    if parts[:1] == ["watch"]:
        parts = parts[1:]
    if len(parts) >= 2 and parts[0] == "namespaces":
        parts = parts[2:] or ["namespaces"]
    return parts[0] if parts else ""


def _is_exporter_scrape(request: web.Request) -> bool:
    return "/pods/" in request.path and "/proxy" in request.path and \
        "dcgm-exporter" in request.path


def _reaches(fault: ApiFault, request: web.Request) -> bool:
    """``exporter-*`` faults touch only exporter scrapes; the others touch scrapes only when
    they name a ``~PATH`` (``503~/proxy/metrics``), else only the API itself."""
    if fault.kind.startswith("exporter-"):
        return _is_exporter_scrape(request)
    return bool(fault.path) or not _is_exporter_scrape(request)


class FaultInjector:
    """The faults in force and what they did; thread-safe enough for tests (rules are
    replaced, never mutated, and counters only grow)."""

    def __init__(self, faults: Iterable[ApiFault] = (), seed: int = 0,
                 clock: Callable[[], float] = time.monotonic):
        self.faults: tuple[ApiFault, ...] = tuple(faults)
        self.random = random.Random(seed)
        self._clock = clock
        self.started = clock()
        #: faults injected, by kind
        self.injected: Counter[str] = Counter()
        #: requests received, by whole second since the start (requests per second)
        self.per_second: Counter[int] = Counter()
        self._watches: dict[int, tuple[web.Request, asyncio.Future[web.StreamResponse]]] = {}
        self._monitor: asyncio.Future[None] | None = None

    def elapsed(self) -> float:
        return self._clock() - self.started

    def add(self, spec: str) -> None:
        """Add faults (grammar above), starting times counted from now."""
        now = self.elapsed()
        added = []
        for item in filter(None, (part.strip() for part in spec.split(","))):
            if item.startswith("seed:"):
                self.random.seed(int(item[5:]))
                continue
            fault = parse_api_fault(item)
            added.append(ApiFault(fault.kind, fault.arg, fault.percent,
                                  fault.start + now, fault.duration, fault.path))
        self.faults = self.faults + tuple(added)

    def clear(self) -> None:
        """End every fault now (the network is healthy again)."""
        self.faults = ()

    def _roll(self, fault: ApiFault) -> bool:
        return fault.percent >= 100 or self.random.random() * 100 < fault.percent

    def _pick(self, request: web.Request) -> list[ApiFault]:
        now = self.elapsed()
        watch = _is_watch(request)
        picked = []
        for fault in self.faults:
            if not fault.active(now):
                continue
            kind = fault.kind
            if fault.path and fault.path not in request.path:
                continue
            if kind.startswith("watch-") and not watch:
                continue
            if kind == "forbid" and _resource(request) != fault.arg:
                continue
            if kind == "evict-refuse" and not request.path.endswith("/eviction"):
                continue
            if not _reaches(fault, request):
                continue
            if self._roll(fault):
                picked.append(fault)
        return picked

    def down_now(self) -> bool:
        now = self.elapsed()
        return any(f.kind == "down" and f.active(now) for f in self.faults)

    def stats(self) -> dict[str, object]:
        """What was injected and how many requests came, per second (soak figures)."""
        return {"faults": [fault.text() for fault in self.faults],
                "injected": dict(self.injected), "elapsed": self.elapsed(),
                "per_second": {str(k): v for k, v in sorted(self.per_second.items())}}

    async def handle(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        """The middleware body: apply the first fault that answers, else serve normally."""
        if request.path == STATS_PATH:  # not the Kubernetes API: never faulted, not counted
            return web.json_response(self.stats())
        self.per_second[int(self.elapsed())] += 1
        picked = self._pick(request)
        for fault in picked:
            self.injected[fault.kind] += 1
            if fault.kind == "latency":
                await asyncio.sleep(float(fault.arg) / 1000.0)
        for fault in picked:
            answer = await self._answer(fault, request, handler)
            if answer is not None:
                return answer
        if _is_watch(request):
            return await self._watch(request, handler)
        return await handler(request)

    async def _answer(self, fault: ApiFault, request: web.Request,
                      handler: Handler) -> web.StreamResponse | None:
        kind = fault.kind
        if kind == "down":
            return _drop(request)
        if kind == "forbid":
            return _forbidden(request, fault.arg)
        if kind == "status":
            code = int(fault.arg)
            reason, message = _CODE_ANSWERS.get(code, ("", "injected fault"))
            return _status(code, reason, message)
        if kind in _STATUS_ANSWERS:
            code, reason, message = _STATUS_ANSWERS[kind]
            return _status(code, reason, message.format(resource=fault.arg,
                                                        verb=request.method.lower()),
                           fault.arg if kind in ("429", "503") else "")
        if kind == "exporter-hang":
            await asyncio.sleep(3600)
        if kind == "exporter-garbage":
            return web.Response(body=GARBAGE, content_type="text/plain")
        if kind == "watch-410":
            return await _expired_watch(request)
        if kind == "watch-close":
            seconds = str(self.random.randint(1, 2))  # 0 would mean no timeout at all
            query = request.rel_url.query.copy()
            query["timeoutSeconds"] = seconds
            return await handler(request.clone(rel_url=request.rel_url.with_query(query)))
        if kind == "reset":
            return await self._reset(request, handler)
        return None

    async def _reset(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        """Half an answer, then the connection cut: what a dropped proxy does."""
        if _is_watch(request):
            task = asyncio.get_running_loop().call_later(
                self.random.uniform(0.1, 1.0), _abort, request)
            try:
                return await self._watch(request, handler)
            finally:
                task.cancel()
        response = await handler(request)
        body = response.body if isinstance(response, web.Response) else None
        if not isinstance(body, bytes) or len(body) < 2:
            return _drop(request)
        partial = web.StreamResponse(status=response.status, headers=response.headers)
        partial.content_length = len(body)
        await partial.prepare(request)
        await partial.write(body[: len(body) // 2])
        return _drop(request)

    async def _watch(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        """Serve a watch, known to the monitor that applies faults to open watches."""
        if self._monitor is None or self._monitor.done():
            self._monitor = asyncio.ensure_future(self._fault_open_watches())
        serving = asyncio.ensure_future(handler(request))
        self._watches[id(request)] = (request, serving)
        try:
            return await serving  # a cancelled watch still ends its stream cleanly
        finally:
            self._watches.pop(id(request), None)

    async def _fault_open_watches(self) -> None:
        """Faults reach open watches too: a server going down drops them all; ``reset`` cuts
        and ``watch-close`` ends (cleanly) each open watch with the fault's percent chance,
        rolled once per fault and watch."""
        rolled: set[tuple[int, int]] = set()
        while True:
            await asyncio.sleep(0.2)
            if not self._watches:
                continue
            now = self.elapsed()
            active = [f for f in self.faults
                      if f.kind in ("down", "reset", "watch-close") and f.active(now)]
            for key, (request, serving) in list(self._watches.items()):
                for fault in active:
                    if fault.kind != "down" and (id(fault), key) in rolled:
                        continue
                    rolled.add((id(fault), key))
                    if fault.kind == "down" or self._roll(fault):
                        self.injected[fault.kind] += 1
                        self._watches.pop(key, None)
                        if fault.kind == "watch-close":
                            serving.cancel()
                        else:
                            _abort(request)
                        break


def _abort(request: web.Request) -> None:
    transport = request.transport
    if transport is not None:
        transport.abort()


def _drop(request: web.Request) -> web.StreamResponse:
    """Close the connection without an answer; the client sees it closed or reset."""
    _abort(request)
    raise _Dropped()


class _Dropped(web.HTTPException):
    """Raised after the transport is gone: aiohttp then writes nothing more."""

    status_code = 499  # nginx's "client closed request": never seen by anyone


async def _expired_watch(request: web.Request) -> web.StreamResponse:
    """A watch answered 200 with one ``ERROR`` event (410 Expired), as after compaction."""
    response = web.StreamResponse(status=200, headers={"Content-Type": "application/json"})
    try:
        await response.prepare(request)
        await response.write(b'{"type":"ERROR","object":{"kind":"Status","apiVersion":"v1",'
                             b'"metadata":{},"status":"Failure","message":"too old resource '
                             b'version (injected fault)","reason":"Expired","code":410}}\n')
        await response.write_eof()
    except ConnectionError:  # the client left already: nothing to tell it
        pass
    return response


FAULTS_KEY: web.AppKey[FaultInjector] = web.AppKey("gputui_faults", FaultInjector)


def register(app: web.Application, injector: FaultInjector) -> None:
    """Serve ``injector``'s faults on ``app`` (the middleware must be in its chain)."""
    app[FAULTS_KEY] = injector

    async def stop_monitor(_: web.Application) -> None:
        if injector._monitor is not None:
            injector._monitor.cancel()

    app.on_shutdown.append(stop_monitor)


@web.middleware
async def inject_faults(request: web.Request, handler: Handler) -> web.StreamResponse:
    """The registered middleware: hands each request to the app's :class:`FaultInjector`."""
    injector = request.app.get(FAULTS_KEY)
    if injector is None:
        return await handler(request)
    return await injector.handle(request, handler)
