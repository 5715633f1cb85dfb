"""``Foreground``: what the screen needs, heeded by the source's threads, every wait bounded."""

from __future__ import annotations

import threading

from gputui.sources.foreground import Foreground


class Clock:
    """A clock the test moves (a waiter looks at it again within its own timeout)."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_no_claim_no_wait() -> None:
    assert Foreground().wait_turn() == 0.0


def test_a_key_holds_the_next_page_until_its_claim_ends() -> None:
    clock = Clock()
    foreground = Foreground(clock)
    foreground.claim(0.5)
    waits: list[float] = []
    worker = threading.Thread(target=lambda: waits.append(foreground.wait_turn(limit=60)))
    worker.start()
    worker.join(0.2)  # window: the page must still be held while the clock stands
    assert worker.is_alive()
    clock.now += 0.5  # the claim ran out: the waiter sees it when it wakes
    worker.join(5)
    assert not worker.is_alive() and waits == [0.5]


def test_a_key_held_down_lets_a_page_through_each_limit() -> None:
    """Auto-repeat renews the claim for ever: the page waits ``limit`` at most."""
    foreground = Foreground()
    foreground.claim(3600)
    assert 0.05 <= foreground.wait_turn(limit=0.05) < 5


def test_release_ends_every_wait() -> None:
    foreground = Foreground()
    foreground.expect_screen()
    foreground.claim(3600)
    results: list[object] = []
    worker = threading.Thread(target=lambda: results.extend(
        [foreground.wait_turn(limit=3600), foreground.wait_nodes_shown(3600)]))
    worker.start()
    foreground.release()
    worker.join(5)
    assert not worker.is_alive() and results[1] is True


def test_without_a_screen_nothing_waits_for_it() -> None:
    """``check`` and the tests' sources: no screen is expected, no build is held."""
    foreground = Foreground()
    assert foreground.wait_nodes_shown(3600) is True
    assert not foreground.building_for_nobody()


def test_partial_builds_wait_for_the_screen_then_ask_for_one() -> None:
    foreground = Foreground()
    asked: list[str] = []
    foreground.expect_screen()
    foreground.when_listening(lambda: asked.append("build"))
    assert foreground.building_for_nobody() and asked == []
    foreground.listening()
    assert not foreground.building_for_nobody() and asked == ["build"]
    foreground.listening()  # said twice: asked once
    foreground.when_listening(lambda: asked.append("now"))  # already listening: at once
    assert asked == ["build", "now"]


def test_the_other_lists_wait_for_the_whole_node_list_painted() -> None:
    foreground = Foreground()
    foreground.expect_screen()
    foreground.shown(frozenset({"nodes", "pods"}))  # half the node list on screen
    assert foreground.wait_nodes_shown(0.01) is False
    fresh = Foreground()
    fresh.expect_screen()
    fresh.shown(frozenset({"pods"}))  # every node row painted, the pods still loading
    assert fresh.wait_nodes_shown(0.01) is True


def test_a_screen_that_never_paints_is_waited_for_once() -> None:
    foreground = Foreground()
    foreground.expect_screen()
    assert foreground.wait_nodes_shown(0.01) is False
    assert foreground.wait_nodes_shown(3600) is True  # ran out once: never again


def test_no_node_rows_to_paint_waits_for_nothing() -> None:
    foreground = Foreground()
    foreground.expect_screen()
    foreground.skip_shown()  # the node list is refused (403) or absent
    assert foreground.wait_nodes_shown(3600) is True
