"""Timeline actions that break GPUs: the GPU-health drills (``--faults`` rows, pcie, ...).

Each resolves its ``node`` (a name or ``POOL/INDEX``) and ``gpu`` (the index the driver
gives it now) and records the fault in the GPU's :class:`~gputui.sim.operator.gpufaults.Wear`;
the exporter turns that into series when it is scraped. ``reboot`` restarts a node on its
own kernel (the driver comes back; a GPU gone from the bus does not).
"""

from __future__ import annotations

from typing import Any

from gputui.sim.operator import dcgmhealth
from gputui.sim.operator import gpufaults as F


def _gpus(timeline: Any, args: dict[str, Any]) -> list[tuple[Any, Any]]:
    """(node run, GPU) for the event's node and GPU index; a GPU no longer there is skipped."""
    index = int(args.get("gpu", 0))
    found = []
    for name in timeline.world.resolve(args):
        run = timeline.world.nodes[name]
        if 0 <= index < len(run.gpus):
            found.append((run, run.gpus[index]))
    return found


def do_rows(timeline: Any, args: dict[str, Any]) -> None:
    """An uncorrectable memory error: ``DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS`` goes up
    by one (``RETIRED_DBE`` on parts before Ampere, which retire pages instead)."""
    now = timeline.world.clock.now()
    for run, gpu in _gpus(timeline, args):
        F.remap_rows(gpu, now, pre_ampere=run.model.compute < (8, 0))


def do_pcie(timeline: Any, args: dict[str, Any]) -> None:
    """A degrading PCIe link or riser: the replay counter rises about 300 a minute."""
    now = timeline.world.clock.now()
    for _, gpu in _gpus(timeline, args):
        F.degrade_pcie(gpu, now)


def do_nvlink(timeline: Any, args: dict[str, Any]) -> None:
    """A failing NVLink: its CRC flit errors rise (data CRC errors and replays with them).
    The error counters are opt-in: the node's exporter exports them from now on (as a
    custom metrics CSV would), whatever the scenario enabled."""
    now = timeline.world.clock.now()
    for run, gpu in _gpus(timeline, args):
        F.degrade_nvlink(gpu, now)
        run.exporter_metrics = run.exporter_metrics | dcgmhealth.NVLINK_COUNTERS


def do_throttle(timeline: Any, args: dict[str, Any]) -> None:
    """The GPU is throttled half of every second (``cause`` thermal or power): violation
    time rises 0.5 s a second, the SM clock holds about 900 MHz under load, a thermal
    throttle runs at 92 °C and a power one at the board limit."""
    cause = str(args.get("cause", "thermal"))
    now = timeline.world.clock.now()
    for _, gpu in _gpus(timeline, args):
        F.throttle(gpu, cause, now)


def do_off_bus(timeline: Any, args: dict[str, Any]) -> None:
    """XID 79 and the GPU never comes back: after the node's next reboot the driver
    enumerates one GPU fewer (GFD's ``gpu.count``, capacity and the exporter follow)."""
    now = timeline.world.clock.now()
    for _, gpu in _gpus(timeline, args):
        F.off_bus(gpu, now)


def do_reboot(timeline: Any, args: dict[str, Any]) -> None:
    """Someone reboots the node (its kernel unchanged): the driver reloads after boot."""
    for name in timeline.world.resolve(args):
        timeline._reboot(name, timeline.world.nodes[name].kernel)


#: timeline action -> handler (registered in :data:`gputui.sim.operator.timeline.HANDLERS`)
HANDLERS = {"rows": do_rows, "pcie-replays": do_pcie, "nvlink-errors": do_nvlink,
            "throttle": do_throttle, "gpu-off-bus": do_off_bus, "reboot": do_reboot}
