"""What ``gputui scenarios`` says about when a fault shows is true (issue 29 item 11).

``driver-crashloop`` said "a kernel update at 15s breaks the driver build", and the H100
pool looked healthy for about 3 minutes: the kernel update reboots the nodes (2.5 minutes,
``sim/operator/reboot.py``) and the build fails only once they are back. The line now says
when the fault shows; this plays the scenario and checks it on both sides of that time.
"""

from __future__ import annotations

from gputui.demo import DemoCluster, settle_speed
from gputui.domain.model import ClusterSnapshot
from gputui.settings import Settings
from gputui.sim.scenario import list_scenarios
from gputui.sources.connect import read_target

SCENARIO = "driver-crashloop"


def _at(span: float) -> ClusterSnapshot:
    """The scenario's snapshot ``span`` emulated seconds after it started."""
    demo = DemoCluster(SCENARIO, speed=settle_speed(span))
    target = demo.start()
    try:
        demo.settle(span)
        demo.hold()
        return read_target(target, Settings(), demo.now, None)
    finally:
        demo.stop()


def _failing(snapshot: ClusterSnapshot, pool: str) -> set[str]:
    return {f.node for f in snapshot.findings
            if f.code == "driver-pod-failing" and f.node and pool in f.node}


def test_the_scenario_line_says_when_the_driver_fault_shows() -> None:
    summary = dict(list_scenarios())[SCENARIO]
    assert "driver-pod-failing from about 3.5 min" in summary
    assert "From 20s an A100 node's driver is \"in use\"" in summary
    shown = _at(3.5 * 60)
    h100 = {n for n in shown.nodes if "h100" in n}
    assert h100 and _failing(shown, "h100") == h100
    early = _at(2.5 * 60)
    assert _failing(early, "h100") == set()  # not said earlier than it happens
    assert len(_failing(early, "a100")) == 1
