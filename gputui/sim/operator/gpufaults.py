"""What a failing GPU reports to DCGM: its XIDs, remapped rows, link errors and throttling.

Each emulated GPU carries a :class:`Wear` once a fault touches it (``None`` before: the
scale scenarios' tens of thousands of GPUs cost nothing). Counters are not advanced by a
tick: a fault records when it started and how fast its counter rises (:class:`Rising`), and
the exporter computes the value when it is scraped, so they are monotonic between boots at
no per-tick cost.

What the faults reproduce (dcgm-exporter ``etc/default-counters.csv`` and NVIDIA's XID
catalogue):

* an XID the driver answers by tearing down the GPU's contexts (:data:`FOLLOWED_BY_45`) is
  followed :data:`FOLLOW_S` later by XID 45 "Preemptive cleanup" when a pod runs on the GPU,
  so ``DCGM_FI_DEV_XID_ERRORS`` (the *last* XID) shows 45, not the fatal code;
* remapped rows and retired pages live in the GPU's InfoROM and survive a reboot; the
  volatile ECC count, the PCIe replay and NVLink error counters and the violation times
  count from the driver's load, so a reboot resets them;
* a GPU gone from the bus for good (:func:`off_bus`) is not enumerated at the next boot:
  the driver numbers the remaining GPUs from 0 in PCI order (each keeps its PCI bus id and
  UUID), so GFD, the device plugin and the exporter all see one GPU fewer.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

#: XIDs after which the driver cleans up the contexts the error killed (XID 45): double-bit
#: and uncontained ECC errors, NVLink errors, contained ECC errors, GSP errors
FOLLOWED_BY_45 = frozenset({48, 74, 94, 95, 119, 120})
#: seconds between the fatal XID and the XID 45 that follows it
FOLLOW_S = 1.0
#: dcgm-exporter ``--xid-count-window-size`` / ``--clock-events-count-window-size`` (ms)
WINDOW_MS = 300_000
#: DCGM samples the exporter's fields at its collect interval (``-c``, 30 s)
SAMPLE_S = 30.0
#: the share of every second a throttled GPU spends throttled
THROTTLED_SHARE = 0.5
#: what a throttled GPU shows under load: SM clock (MHz) and, thermally, its temperature (°C)
THROTTLED_SM_MHZ = 900
THERMAL_GPU_C = 92
THERMAL_MEM_C = 88
#: PCIe replays per second of a degrading link (300 a minute)
PCIE_REPLAYS_PER_S = 5.0
#: NVLink CRC flit errors per second of a failing link; data CRC errors and replays follow
NVLINK_FLITS_PER_S = 0.5
THROTTLE_CAUSES = ("thermal", "power")


@dataclass
class Rising:
    """A counter rising at ``per_s`` from ``since`` (emulated epoch seconds)."""

    since: float
    per_s: float

    def value(self, now: float, boot: float) -> int:
        """The count now; counting restarts at ``boot`` (the driver's load)."""
        return int(self.per_s * max(0.0, now - max(self.since, boot)))


@dataclass
class Wear:
    """A GPU's fault state, as NVML and DCGM would report it."""

    boot: float = 0.0                     # the driver's load: volatile counters count from here
    xids: list[tuple[float, int]] = field(default_factory=list)  # (when, code) since boot
    uncorrectable_rows: int = 0           # persistent (InfoROM)
    correctable_rows: int = 0
    retired_dbe: int = 0                  # pre-Ampere page retirement (persistent)
    ecc_dbe_aggregate: int = 0            # persistent
    ecc_dbe_volatile: int = 0             # since the driver's load
    pcie: Rising | None = None
    nvlink: Rising | None = None
    throttle: str = ""                    # "", "thermal" or "power"
    throttle_since: float = 0.0
    dead: bool = False                    # off the bus for good: gone after the next boot


def wear(gpu: Any) -> Wear:
    """The GPU's :class:`Wear`, created on first use."""
    if gpu.wear is None:
        gpu.wear = Wear()
    return gpu.wear  # type: ignore[no-any-return]


def raise_xid(gpu: Any, code: int, now: float, follow: bool) -> None:
    """The GPU reports XID ``code`` now, and XID 45 :data:`FOLLOW_S` later if ``follow``
    and the code is one the driver cleans up after."""
    gpu.xid = code
    state = wear(gpu)
    state.xids.append((now, code))
    if follow and code in FOLLOWED_BY_45:
        state.xids.append((now + FOLLOW_S, 45))


def last_xid(gpu: Any, now: float) -> int:
    """``DCGM_FI_DEV_XID_ERRORS`` now: the last XID reported by this time, 0 for none."""
    state = gpu.wear
    if state is None or not state.xids:
        return int(gpu.xid)
    seen = [code for when, code in state.xids if when <= now]
    return seen[-1] if seen else 0


def xid_counts(gpu: Any, now: float) -> dict[int, int]:
    """``DCGM_EXP_XID_ERRORS_COUNT``: XIDs per code within the exporter's window."""
    counts: dict[int, int] = {}
    if gpu.wear is not None:
        start = now - WINDOW_MS / 1000
        for when, code in gpu.wear.xids:
            if start < when <= now:
                counts[code] = counts.get(code, 0) + 1
    return counts


def remap_rows(gpu: Any, now: float, pre_ampere: bool) -> None:
    """An uncorrectable memory error: a row is remapped (Ampere on) or a page retired
    (before); either way a double-bit ECC error is counted."""
    state = wear(gpu)
    if pre_ampere:
        state.retired_dbe += 1
    else:
        state.uncorrectable_rows += 1
    state.ecc_dbe_aggregate += 1
    state.ecc_dbe_volatile += 1


def degrade_pcie(gpu: Any, now: float) -> None:
    wear(gpu).pcie = Rising(now, PCIE_REPLAYS_PER_S)


def degrade_nvlink(gpu: Any, now: float) -> None:
    wear(gpu).nvlink = Rising(now, NVLINK_FLITS_PER_S)


def throttle(gpu: Any, cause: str, now: float) -> None:
    state = wear(gpu)
    state.throttle, state.throttle_since = cause, now


def off_bus(gpu: Any, now: float) -> None:
    """XID 79 and no way back: the GPU is not enumerated after the next boot."""
    raise_xid(gpu, 79, now, follow=False)
    gpu.fallen = True
    wear(gpu).dead = True


def boot(run: Any, now: float) -> None:
    """The driver loads after a reboot and enumerates the GPUs still on the bus.

    A dead GPU is gone; the others are numbered from 0 again, keep their PCI slot and UUID
    and start with no XID and fresh volatile counters.
    """
    kept = [gpu for gpu in run.gpus if gpu.wear is None or not gpu.wear.dead]
    for index, gpu in enumerate(kept):
        if gpu.slot is None:
            gpu.slot = gpu.index
        gpu.index, gpu.xid, gpu.fallen = index, 0, False
        if gpu.wear is not None:
            gpu.wear.boot = now
            gpu.wear.xids.clear()
            gpu.wear.ecc_dbe_volatile = 0
    if len(kept) != len(run.gpus):
        run.gpus, run.gpu_count = kept, len(kept)
