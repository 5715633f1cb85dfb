"""The emulated Kubernetes API server: an aiohttp application over the in-memory store.

``build_app(store, nodeside)`` is the one entry point; :mod:`gputui.sim.cluster` serves it on a
loopback port. Real clients (the ``kubernetes`` package, kubectl) are the judge of fidelity.
"""

from __future__ import annotations

from aiohttp import web

from gputui.sim.apiserver.authn import AUTHN_KEY, Tokens, authenticate
from gputui.sim.apiserver.common import CTX_KEY, ApiContext
from gputui.sim.apiserver.faults import FAULTS_KEY, FaultInjector, inject_faults, register
from gputui.sim.apiserver.rbac import Denials, Identity, parse_deny
from gputui.sim.apiserver.routes import add_routes, status_errors
from gputui.sim.apiserver.watch import end_all_watches
from gputui.sim.nodeside import NodeSide
from gputui.sim.store import Store

__all__ = ["AUTHN_KEY", "CTX_KEY", "FAULTS_KEY", "ApiContext", "FaultInjector", "build_app"]


def build_app(store: Store, nodeside: NodeSide | None = None, *,
              bookmark_interval: float = 1.0, deny: str | None = None,
              faults: FaultInjector | None = None,
              identity: Identity | None = None,
              tokens: frozenset[str] | None = None) -> web.Application:
    """The API server application for ``store`` (and the node side's logs and ports).

    Args:
        store: the objects served.
        nodeside: container logs and ports behind ``pods/log`` and ``pods/proxy``.
        bookmark_interval: seconds between BOOKMARK events on watches that allow them.
        deny: verbs to refuse as RBAC would (:mod:`gputui.sim.apiserver.rbac`).
        faults: API-level faults to inject (:mod:`gputui.sim.apiserver.faults`); its
            middleware runs first, so a fault answers before any handler.
        identity: who every caller is (``kubectl auth whoami``); ``operator`` when None.
        tokens: when set, the only bearer tokens accepted (:mod:`~.authn`); others get 401.
    """
    app = web.Application(middlewares=[inject_faults, authenticate, status_errors],
                          client_max_size=64 * 1024 * 1024)
    app[AUTHN_KEY] = Tokens(tokens)
    if faults is not None:
        register(app, faults)
    ctx = ApiContext(store=store, nodeside=nodeside or NodeSide(),
                     bookmark_interval=bookmark_interval, denials=Denials(parse_deny(deny),
                                                           identity or Identity()))
    app[CTX_KEY] = ctx

    async def on_shutdown(_: web.Application) -> None:
        end_all_watches(ctx)

    app.on_shutdown.append(on_shutdown)
    add_routes(app)
    return app
