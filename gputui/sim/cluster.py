"""Run the emulated GPU cluster: store, API server and operator controllers, in one thread.

:class:`EmulatedCluster` is what ``gputui sim``, ``gputui --demo``, ``gputui check --demo``,
the tests and the benchmarks all start. Everything of the cluster runs on one asyncio loop in
a background thread, so the caller's thread (a TUI, pytest) stays free and talks to it over
real HTTP on a loopback port, exactly as it would talk to a real cluster.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from pathlib import Path
from typing import Any, Self

import yaml

from gputui.sim.clock import SimClock
from gputui.sim.nodeside import NodeSide
from gputui.sim.store import Store

DEFAULT_CONTEXT = "gputui-demo"

_log = logging.getLogger(__name__)


class EmulatedCluster:
    """The emulated cluster, started with :meth:`start` (or as a context manager).

    Args:
        scenario: name of a shipped scenario (``gputui scenarios``) or a path to a YAML file.
        speed: emulated-clock speed factor.
        port: API server port on ``host``; 0 picks a free one.
        exporters_port: when set, each node's dcgm-exporter is also served on plain loopback
            ports starting here (so a real Prometheus can scrape them).
        faults: extra fault spec (``gputui sim --faults``), passed to the scenario loader.
        run_controllers: False serves only the API over an empty store (API tests).
        deny: verbs the API server refuses as RBAC would (``gputui sim --deny``, see
            :mod:`gputui.sim.apiserver.rbac`); checked here so a bad SPEC fails at once.
        identity: who the server says the caller is (``kubectl auth whoami``, the user of
            a 403); ``operator`` when None (``gputui sim --identity NAME --groups ...``).
    """

    def __init__(self, scenario: str = "healthy", *, speed: float = 1.0, port: int = 0,
                 host: str = "127.0.0.1", exporters_port: int | None = None,
                 faults: str | None = None, run_controllers: bool = True,
                 clock: SimClock | None = None, deny: str | None = None,
                 identity: Any = None, bookmark_interval: float = 1.0,
                 tokens: frozenset[str] | None = None):
        self.scenario_name = scenario
        self.speed = speed
        self.host = host
        self.port = port
        self.exporters_port = exporters_port
        self.faults = faults
        self.run_controllers = run_controllers
        from gputui.sim.apiserver.rbac import parse_deny

        parse_deny(deny)
        self.deny = deny
        #: a :class:`gputui.sim.apiserver.rbac.Identity` (imported lazily, as above)
        self.identity = identity
        #: seconds between BOOKMARK events on watches that allow them
        self.bookmark_interval = bookmark_interval
        #: bearer tokens the server accepts; None: any request (``set_tokens``)
        self.tokens = tokens
        self.clock = clock or SimClock(speed=speed)
        self.store = Store(self.clock)
        # as kube-apiserver creates it at start: its UID (a fresh uuid4 from the store, one
        # per emulated cluster) is what gputui tells clusters apart by
        self.store.create("namespaces", {"metadata": {"name": "kube-system", "labels": {
            "kubernetes.io/metadata.name": "kube-system"}}, "spec": {"finalizers": [
                "kubernetes"]}, "status": {"phase": "Active"}}, manager="kube-apiserver")
        self.nodeside = NodeSide()
        self.loop: asyncio.AbstractEventLoop | None = None
        self.operator: Any = None
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()
        self._stopped = threading.Event()
        self._error: BaseException | None = None
        self._runner: Any = None
        #: the API-level faults in force (tests and the soak add and clear them live)
        self.injector: Any = None

    # ---------------------------------------------------------------- public
    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def start(self, timeout: float = 60.0) -> Self:
        """Start the thread and wait until the API server answers; re-raise start errors."""
        self._thread = threading.Thread(target=self._main, name="gputui-sim", daemon=True)
        self._thread.start()
        if not self._ready.wait(timeout):
            raise RuntimeError("emulated cluster did not start in time")
        if self._error is not None:
            raise self._error
        return self

    def stop(self, timeout: float = 10.0) -> None:
        """Stop controllers and the server, then the loop; safe to call twice."""
        if self.loop is None or self._thread is None or not self._thread.is_alive():
            return
        future = asyncio.run_coroutine_threadsafe(self._shutdown(), self.loop)
        try:
            future.result(timeout)
        except Exception:  # noqa: BLE001 - stopping must not raise; say why it was unclean
            _log.warning("emulated cluster did not shut down cleanly", exc_info=True)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(timeout)

    def inject(self, spec: str) -> None:
        """Add API-level faults now (grammar in :mod:`gputui.sim.apiserver.faults`)."""
        from gputui.sim.scenario import api_fault_items

        self.injector.add(",".join(api_fault_items(spec)))

    def heal(self) -> None:
        """End every API-level fault: the network and the server are healthy again."""
        self.injector.clear()

    def call(self, coro: Any, timeout: float = 30.0) -> Any:
        """Run a coroutine on the cluster's loop from another thread and return its result."""
        assert self.loop is not None
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    def set_deny(self, spec: str | None) -> None:
        """Replace the denied verbs while the server runs (drills, tests)."""
        from gputui.sim.apiserver import CTX_KEY
        from gputui.sim.apiserver.rbac import parse_deny

        rules = parse_deny(spec)
        self.deny = spec
        if self._runner is not None:
            self._runner.app[CTX_KEY].denials.rules = rules

    def set_identity(self, identity: Any) -> None:
        """Replace who the server says the caller is, while it runs (tests, drills)."""
        from gputui.sim.apiserver import CTX_KEY
        from gputui.sim.apiserver.rbac import Identity

        self.identity = identity
        if self._runner is not None:
            self._runner.app[CTX_KEY].denials.identity = identity or Identity()
    def set_tokens(self, tokens: frozenset[str] | None) -> None:
        """Accept only these bearer tokens (401 for others), or any request (None)."""
        from gputui.sim.apiserver import AUTHN_KEY

        self.tokens = tokens
        if self._runner is not None:
            self._runner.app[AUTHN_KEY].accepted = tokens

    def kubeconfig(self, context: str = DEFAULT_CONTEXT) -> dict[str, Any]:
        """A kubeconfig that points kubectl and the ``kubernetes`` client at this cluster."""
        return {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [{"name": context, "cluster": {"server": self.url}}],
            # not "gputui-demo-…": a token sharing its first 8 characters with the context
            # name would have the name redacted as a cut-off credential (secrets.scrub)
            "users": [{"name": "operator", "user": {"token": "emulated-placeholder-token"}}],
            "contexts": [{"name": context,
                          "context": {"cluster": context, "user": "operator"}}],
            "current-context": context,
            "preferences": {},
        }

    def write_kubeconfig(self, path: str | Path, context: str = DEFAULT_CONTEXT) -> Path:
        target = Path(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(yaml.safe_dump(self.kubeconfig(context), sort_keys=False))
        return target

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # ------------------------------------------------------------- internals
    def _main(self) -> None:
        self.loop = asyncio.new_event_loop()
        asyncio.set_event_loop(self.loop)
        try:
            self.loop.run_until_complete(self._startup())
        except BaseException as error:  # noqa: BLE001 - handed to the starting thread
            self._error = error
            self._ready.set()
            self.loop.close()
            return
        self._ready.set()
        try:
            self.loop.run_forever()
        finally:
            self.loop.close()
            self._stopped.set()

    async def _startup(self) -> None:
        from aiohttp import web

        from gputui.sim.apiserver import FaultInjector, build_app
        from gputui.sim.operator.exporter import SHUTDOWN_GRACE
        from gputui.sim.scenario import api_fault_items, load_scenario

        scenario = None
        if self.run_controllers:
            scenario = load_scenario(self.scenario_name, faults=self.faults)
            items = scenario.api_faults
        else:
            items = api_fault_items(self.faults or "")
        self.injector = FaultInjector()
        self.injector.add(",".join(items))
        app = build_app(self.store, self.nodeside, deny=self.deny, faults=self.injector,
                        identity=self.identity, bookmark_interval=self.bookmark_interval,
                        tokens=self.tokens)
        self._runner = web.AppRunner(app, access_log=None, handle_signals=False,
                                       shutdown_timeout=SHUTDOWN_GRACE)
        await self._runner.setup()
        site = web.TCPSite(self._runner, self.host, self.port)
        await site.start()
        sockets = getattr(site._server, "sockets", None) or []
        if sockets:
            self.port = sockets[0].getsockname()[1]
        if scenario is not None:
            from gputui.sim.operator import Operator

            self.operator = Operator(self.store, self.clock, self.nodeside, scenario,
                                     exporters_port=self.exporters_port)
            await self.operator.start()

    async def _shutdown(self) -> None:
        if self.operator is not None:
            await self.operator.stop()
        if self._runner is not None:
            await self._runner.cleanup()
