"""What the emulated nodes know that the API does not: hardware, marker files, container runs.

A real node keeps its readiness markers in ``/run/nvidia/validations`` (§1.3), its loaded
driver in the kernel and its MIG layout in the GPUs. The emulator keeps that host-side state
here; the controllers turn it into the Kubernetes objects a real cluster would show.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from gputui.sim.operator.gpufaults import Wear
from gputui.sim.operator.hardware import GpuModel, gpu_uuid
from gputui.sim.operator.sharing import Sharing


@dataclass
class ContainerRun:
    """One container's life so far, enough to render a real ``containerStatuses`` entry."""

    name: str
    started_at: float | None = None
    finished_at: float | None = None
    restarts: int = 0
    ready: bool = False
    crash_until: float | None = None     # in CrashLoopBackOff until then
    last_exit: tuple[int, str, float, float] | None = None  # code, reason, start, end
    polls: int = 0                        # retries of a polling init container this run
    next_poll: float = 0.0


@dataclass
class PodRun:
    """An operand pod on a node: which init container it is in and how each one fared."""

    name: str
    operand: str
    node: str
    revision: str
    init: list[ContainerRun]
    main: list[ContainerRun]
    created_at: float
    step: int = 0                        # index of the running init container
    step_started: float = 0.0
    phase: str = "Pending"
    driver_version: str = ""
    entered: bool = False                # side effects of entering the step were done
    ip: str = ""
    child: str = ""                      # the nvidia-cuda-validator pod it launched
    child_started: float = 0.0
    #: condition type -> (status, lastTransitionTime): the kubelet's status manager keeps a
    #: condition's transition time until its status changes
    transitions: dict[str, tuple[bool, float]] = field(default_factory=dict)

    @property
    def initialized(self) -> bool:
        return self.step >= len(self.init)

    @property
    def ready(self) -> bool:
        return self.initialized and all(c.ready for c in self.main)

    def restart_total(self) -> int:
        return max([c.restarts for c in self.init + self.main] or [0])


@dataclass
class Gpu:
    """One physical GPU and what the exporter reports for it."""

    index: int
    uuid: str
    mig: dict[str, int] | None = None    # applied MIG layout, None = MIG disabled
    xid: int = 0
    fallen: bool = False                  # XID 79: off the bus
    remap_failed: bool = False            # DCGM_FI_DEV_ROW_REMAP_FAILURE (a bank out of spare rows)
    unhealthy: bool = False               # the device plugin marked it (health.go)
    energy_mj: float = 0.0
    util: float = 0.0
    nvlink_total: float = 0.0             # DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL (counter)
    wear: Wear | None = None              # what faults did to it (sim.operator.gpufaults)
    slot: int | None = None               # its PCI slot once a lost sibling renumbered it


@dataclass
class NodeRun:
    """Host-side state of one emulated GPU node."""

    name: str
    pool: str
    model: GpuModel
    gpu_count: int
    kernel: str
    host_driver: bool
    index: int = 0
    joined_at: float = 0.0
    phase: str = "new"                   # new -> nfd -> labelled
    markers: set[str] = field(default_factory=set)
    driver_loaded: str = ""               # version loaded in the kernel, "" when none
    pods: dict[str, PodRun] = field(default_factory=dict)      # operand -> pod
    gpus: list[Gpu] = field(default_factory=list)
    crash: str = ""                       # "", "kernel-headers" or "driver-in-use"
    validator_stuck: bool = False
    mig_fail_next: bool = False
    driver_blocked: bool = False          # its driver pod cannot be scheduled (#688)
    first_build: bool = False             # joined: its first driver build takes minutes
    first_build_seconds: float = 300.0    # how long that first build takes (joining.py)
    allocatable_at: float | None = None   # when the kubelet first listed its GPUs
    mig_applied_label: str | None = None  # last mig.config value the MIG manager handled
    mig_job: dict[str, float | str] | None = None
    sharing_applied: Sharing | None = None  # the config the running device plugin uses
    next_at: float | None = None
    ip: str = ""
    down_since: float | None = None       # rebooting since then (sim.operator.reboot)
    boot_kernel: str = ""                 # the kernel it boots into
    marked_unknown: bool = False          # the node controller set Ready Unknown
    plugin_down_since: float | None = None  # the kubelet lost the device plugin then
    #: opt-in exporter counters a fault enabled on this node (sim.operator.dcgmhealth)
    exporter_metrics: frozenset[str] = frozenset()

    def __post_init__(self) -> None:
        if not self.gpus:
            self.gpus = [Gpu(i, gpu_uuid(self.name, i)) for i in range(self.gpu_count)]
