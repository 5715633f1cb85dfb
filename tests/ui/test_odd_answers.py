"""An API server (or a proxy in front of it) answering SelfSubjectAccessReviews oddly.

The app once exited 1 at start when a review's ``status`` was not an object. Now every
action needing that permission is greyed with "could not read permission: ...", the app
stays up and the key says why: fail closed, never allowed, never a crash.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import pytest
from aiohttp import web

from gputui.sim import apiserver
from gputui.sim.cluster import EmulatedCluster
from gputui.ui.screens.nodes import NodesScreen
from tests.ui.helpers import LiveApp, cluster, live_app, ready, until

__all__ = ["cluster", "live_app"]

HEAD = {"kind": "SelfSubjectAccessReview", "apiVersion": "authorization.k8s.io/v1"}
#: odd answers and what the greyed action says: a status that is a string (the app exited 1),
#: and ``allowed: "true"``, a string a truthiness test would have taken for yes
ODD = {"no status": {**HEAD, "status": "allowed"},
       "no allowed boolean": {**HEAD, "status": {"allowed": "true"}}}


@pytest.fixture(params=sorted(ODD))
def odd_reviews(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Every SelfSubjectAccessReview answers one of :data:`ODD` (installed before the
    cluster); returns what the reason says."""
    original = apiserver.build_app
    answer = ODD[request.param]

    def build_app(*args: object, **kwargs: object) -> web.Application:
        app = original(*args, **kwargs)  # type: ignore[arg-type]

        @web.middleware
        async def odd(request: web.Request,
                      handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
                      ) -> web.StreamResponse:
            if request.path.endswith("/selfsubjectaccessreviews"):
                return web.json_response(answer, status=201)
            return await handler(request)

        app.middlewares.insert(0, odd)
        return app

    monkeypatch.setattr(apiserver, "build_app", build_app)
    return str(request.param)


async def test_odd_access_reviews_grey_the_actions_and_the_app_stays_up(
        odd_reviews: str, live_app: LiveApp, cluster: EmulatedCluster) -> None:
    app = live_app()
    notes: list[str] = []
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await ready(pilot, app)
        app.notify = lambda message, **kw: notes.append(str(message))  # type: ignore[method-assign]
        await until(pilot, lambda: "cordon" in screen.blocked_actions)
        assert screen.blocked_actions["cordon"].startswith(
            "denied: patch nodes: could not read permission: the access review answer has "
            f"{odd_reviews}")
        app.actions.start("cordon", ["gpu-1"])
        await until(pilot, lambda: any("could not read permission" in n for n in notes),
                    why=lambda: notes)
        assert isinstance(app.screen, NodesScreen) and app.is_running
        assert "could not read permission" in notes[-1]
    assert app.return_code in (None, 0)
