"""The emulated clock never runs ahead of the controllers that wait on it.

A starved loop (a loaded CI runner while a scenario settles at hundreds of times real time)
used to see minutes of emulated time pass between two of its turns, with no controller acting
in them. These tests starve the loop on purpose (a blocking call on it) and check that every
wait still ends at its exact emulated time, in order, and that the work a wake-up sets off
runs at that instant.
"""

from __future__ import annotations

import asyncio
import itertools
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

import gputui.sim as sim_package
from gputui.sim.clock import SimClock
from tests.sim.conftest import Sim

START = 1_800_000_000.0
SCENARIOS = Path(sim_package.__file__).parent / "scenarios"


def starve(seconds: float) -> None:
    """Block the loop's thread, as a CPU given to other processes does."""
    time.sleep(seconds)


def test_a_starved_loop_still_wakes_every_wait_at_its_emulated_time() -> None:
    """At 600x a 0.5 s stall is 300 emulated seconds: a controller ticking every 10 s is
    woken 30 times in them, each at its own time, not once at the end."""
    clock = SimClock(speed=600.0, start=START)
    seen: list[float] = []

    async def controller() -> None:
        began = clock.now()
        while clock.now() < began + 400:
            await clock.sleep(10.0)
            seen.append(clock.now())

    async def main() -> None:
        task = asyncio.create_task(controller())
        await asyncio.sleep(0)
        starve(0.5)  # the loop gets no CPU: 300 emulated seconds on the wall clock
        await task

    asyncio.run(main())
    steps = [round(later - earlier, 6) for earlier, later in itertools.pairwise(seen)]
    assert len(seen) >= 40 and steps == [10.0] * len(steps), seen


def test_time_waits_at_a_due_wake_up_until_the_loop_has_run_it() -> None:
    """Read from another thread while the loop is stalled, the clock stops at the first
    pending wake-up instead of running on with the wall clock."""
    clock = SimClock(speed=600.0, start=START)
    stalled = threading.Event()
    readings: list[float] = []
    asleep: list[float] = []

    async def controller() -> None:
        asleep.append(clock.now())
        await clock.sleep(60.0)

    async def main() -> None:
        asyncio.create_task(controller())
        await asyncio.sleep(0)
        reader = threading.Thread(target=lambda: (stalled.wait(), time.sleep(0.3),
                                                  readings.append(clock.now())))
        reader.start()
        stalled.set()
        starve(0.6)  # 360 emulated seconds pass on the wall clock, the loop is stuck
        reader.join()
        await clock.close()

    asyncio.run(main())
    # stopped at the wake-up (scheduled a hair after ``asleep``: the thread may be switched
    # out between the two reads), never the 360 s the wall clock ran on
    assert len(readings) == 1 and asleep[0] + 60.0 <= readings[0] <= asleep[0] + 90.0


def test_work_a_wake_up_sets_off_runs_at_the_same_instant() -> None:
    """A timeline action at t=90 wakes the reconcile loop (an event, as a store watch does);
    that loop runs at t=90, not at its own next timer, however far behind the loop is."""
    clock = SimClock(speed=600.0, start=START)
    wake = asyncio.Event
    acted: list[tuple[str, float]] = []

    async def main() -> None:
        kicked = wake()

        async def timeline() -> None:
            began = clock.now()
            await clock.sleep(90.0)
            acted.append(("fault", round(clock.now() - began, 2)))
            acted.append(("at", clock.now()))
            kicked.set()

        async def reconcile() -> None:
            while len(acted) < 3:
                await clock.wait(kicked, 30.0)
                if kicked.is_set():
                    kicked.clear()
                    acted.append(("reconcile", clock.now()))

        tasks = [asyncio.create_task(timeline()), asyncio.create_task(reconcile())]
        await asyncio.sleep(0)
        starve(0.5)  # 300 emulated seconds behind
        await asyncio.gather(*tasks)

    asyncio.run(main())
    assert [kind for kind, _ in acted] == ["fault", "at", "reconcile"]
    # the fault at its 90 s (plus whatever the OS took between reading ``began`` and
    # scheduling the sleep: 10 ms descheduled is 6 emulated seconds at 600x), and the
    # reconcile at that very instant, not at its own next 30 s timer
    assert 90.0 <= acted[0][1] < 120.0 and acted[2][1] == acted[1][1]


def test_a_frozen_clock_wakes_its_waits_when_advanced() -> None:
    clock = SimClock(start=START, frozen=True)
    woke: list[float] = []

    async def main() -> None:
        sleeper = asyncio.create_task(clock.sleep(100.0))
        sleeper.add_done_callback(lambda _: woke.append(clock.now()))
        await asyncio.sleep(0.05)
        assert not woke and clock.now() == START
        clock.advance(40.0)
        await asyncio.sleep(0.05)
        assert not woke and clock.now() == START + 40
        clock.advance(3600.0)
        await asyncio.wait_for(sleeper, 5.0)

    asyncio.run(main())
    assert woke == [START + 3640.0]  # ended late, at the jump, as after a suspend


def test_a_wait_given_up_does_not_hold_the_time_back() -> None:
    """An event ends the wait first: its timer is dropped and the time flows past it."""
    clock = SimClock(speed=600.0, start=START)

    async def main() -> None:
        event = asyncio.Event()
        event_set = asyncio.get_running_loop().call_later(0.01, event.set)
        assert await clock.wait(event, 3600.0)
        event_set.cancel()
        began = clock.now()
        deadline = time.monotonic() + 30
        while clock.now() < began + 5 and time.monotonic() < deadline:
            await asyncio.sleep(0.01)
        assert clock.now() >= began + 5
        assert not await clock.wait(asyncio.Event(), 1.0)
        await clock.close()

    asyncio.run(main())


def test_set_speed_keeps_the_time_and_never_jumps_back() -> None:
    clock = SimClock(speed=600.0, start=START)
    before = clock.now()
    clock.set_speed(1.0)
    after = clock.now()
    assert before <= after < before + 60  # a generous ceiling: no catch-up at the new speed


def test_pause_at_stops_the_time_there_and_resumes_from_it() -> None:
    """``check --demo`` reads a scenario at its settle time however late its thread looks."""
    clock = SimClock(speed=600.0, start=START)
    clock.pause_at(START + 30)
    deadline = time.monotonic() + 30
    while clock.now() < START + 30 and time.monotonic() < deadline:
        time.sleep(0.01)
    time.sleep(0.2)  # 120 emulated seconds on the wall clock
    assert clock.now() == START + 30
    clock.set_speed(1.0)
    clock.pause_at(None)
    assert START + 30 <= clock.now() < START + 90


def test_a_stalled_cluster_plays_its_timeline_at_the_emulated_times(
        start_sim: Callable[..., Sim], tmp_path: Path) -> None:
    """The whole emulated cluster at 600x, its loop stalled for a second (ten emulated
    minutes) right after start: the nodes of a join at 2 min are created at 2 min, read
    back through the API, not at the end of the stall."""
    data = yaml.safe_load((SCENARIOS / "healthy.yaml").read_text())
    data["timeline"] = [{"at": "2m", "action": "join", "pool": "h100", "count": 2}]
    path = tmp_path / "join-at-2m.yaml"
    path.write_text(yaml.safe_dump(data))
    sim = start_sim(str(path), speed=600.0)
    assert sim.cluster.loop is not None
    sim.cluster.loop.call_soon_threadsafe(starve, 1.0)
    start = sim.operator.timeline.start

    def joined() -> list[Any]:
        new = set(sim.operator.world.pool_members["h100"][4:])
        return [n for n in sim.core.list_node().items if n.metadata.name in new]

    nodes = sim.wait_for(lambda: len(joined()) == 2 and joined(), 3600, "the joined nodes")
    for node in nodes:
        created = node.metadata.creation_timestamp.timestamp()
        assert abs(created - (start + 120)) <= 1, (node.metadata.name, created - start)
