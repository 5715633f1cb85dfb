"""How long the ``scale-5000`` scenario takes to build, and how big it is.

Prints wall time of the converged set-up (5,000 GPU nodes with their operand pods, created
directly rather than by stepping init chains) and the process's peak RSS once it is built,
object counts per resource, and the JSON size of the nodes and pods a client listing them
would download.

    python benchmarks/bench_scale_scenario.py [scenario]
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from resource import RUSAGE_SELF, getrusage

from gputui.sim.clock import SimClock
from gputui.sim.nodeside import NodeSide
from gputui.sim.operator import Operator
from gputui.sim.scenario import load_scenario
from gputui.sim.store import Store

RESOURCES = ("nodes", "pods", "daemonsets.apps", "controllerrevisions.apps", "configmaps",
             "events", "poddisruptionbudgets.policy", "clusterpolicies.nvidia.com")


async def build(name: str) -> None:
    clock = SimClock(speed=1.0)
    store = Store(clock)
    operator = Operator(store, clock, NodeSide(), load_scenario(name))
    started = time.perf_counter()
    await operator.start()
    took = time.perf_counter() - started
    peak = getrusage(RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux
    print(f"scenario {name}: built in {took:.1f} s, peak RSS {peak:.0f} MiB")
    for resource in RESOURCES:
        print(f"  {resource:<30} {store.count(resource):>7}")
    for resource in ("nodes", "pods"):
        items, _ = store.list(resource)
        size = sum(len(json.dumps(item, separators=(",", ":"))) for item in items)
        average = size / max(1, len(items))
        print(f"  {resource} JSON: {size / 2**20:.1f} MiB ({average / 1024:.1f} KiB each)")
    started = time.perf_counter()
    await asyncio.sleep(2.0)
    print(f"  first 2 s after set-up: controllers settled ({time.perf_counter() - started:.1f} s)")
    await operator.stop()


if __name__ == "__main__":
    asyncio.run(build(sys.argv[1] if len(sys.argv) > 1 else "scale-5000"))
