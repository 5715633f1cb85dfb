"""The one catalogue of finding codes: each code, its usual severity, its pane, its meaning.

Finding codes are a public contract (``gputui check --json``, ARCHITECTURE's list): the rules
in ``findings*.py`` use the constants below, never string literals, and make their findings
with :func:`finding`, which fills in the pane and the usual severity from here; the README's
Findings list, the contract test and help read this catalogue, so a code cannot exist in one
place and not the others. ``severity`` is what the finding is when it is a problem; rules say
``info`` instead while a grace period or an explanation (a reboot, a rolling upgrade) holds,
and a few escalate (a missing GPU is critical).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from gputui.domain.model import Finding, Severity
from gputui.domain.pane import Pane


@dataclass(frozen=True)
class Code:
    """One finding code as the catalogue describes it."""

    code: str
    severity: Severity
    pane: Pane
    meaning: str


CLUSTER_POLICY_MISSING = "cluster-policy-missing"
CLUSTER_POLICY_NOT_READY = "cluster-policy-not-ready"
CLUSTER_POLICY_IGNORED = "cluster-policy-ignored"
NODE_NOT_READY = "node-not-ready"
GPUS_UNAVAILABLE = "gpus-unavailable"
OPERAND_PAUSED = "operand-paused"
DRIVER_POD_FAILING = "driver-pod-failing"
OPERAND_POD_FAILING = "operand-pod-failing"
VALIDATOR_STUCK = "validator-stuck"
UPGRADE_FAILED = "upgrade-failed"
UPGRADE_STALLED = "upgrade-stalled"
UPGRADE_BLOCKED = "upgrade-blocked"
MIG_CONFIG_FAILED = "mig-config-failed"
MIG_CONFIG_PENDING = "mig-config-pending"
MIG_NO_INSTANCES = "mig-no-instances"
XID_ERROR = "xid-error"
DAEMONSET_NOT_SCHEDULED = "daemonset-not-scheduled"
GPU_NODE_UNMANAGED = "gpu-node-unmanaged"
GPU_HEALTH_CHECKS_OFF = "gpu-health-checks-off"
GPU_MISSING = "gpu-missing"
ROW_REMAP_FAILURE = "row-remap-failure"
SHARING_CONFIG_MISSING = "sharing-config-missing"
SLOW_GPU_JOIN = "slow-gpu-join"
GPU_COUNT_DROPPED = "gpu-count-dropped"
GPU_MEMORY_ERROR = "gpu-memory-error"
PCIE_REPLAYS = "pcie-replays"
NVLINK_ERRORS = "nvlink-errors"
GPU_THROTTLED = "gpu-throttled"

_W, _C = Severity.WARNING, Severity.CRITICAL
_ENTRIES = (
    Code(CLUSTER_POLICY_MISSING, _C, Pane.NODES, "no ClusterPolicy: the operator deploys nothing"),
    Code(CLUSTER_POLICY_NOT_READY, _W, Pane.PIPELINE,
         "the ClusterPolicy is notReady and no upgrade, joining node or node cause "
         "(mig-no-instances, slow-gpu-join) explains it"),
    Code(CLUSTER_POLICY_IGNORED, _W, Pane.NODES,
         "a ClusterPolicy the operator ignores (only the oldest one is used)"),
    Code(NODE_NOT_READY, _W, Pane.NODES, "the node is NotReady past the reboot grace"),
    Code(GPUS_UNAVAILABLE, _W, Pane.PIPELINE,
         "allocatable GPUs below capacity, or capacity below the GPUs the node has"),
    Code(OPERAND_PAUSED, _W, Pane.PIPELINE,
         "a nvidia.com/gpu.deploy.* label left at a paused value"),
    Code(DRIVER_POD_FAILING, _W, Pane.PIPELINE, "the driver pod fails or is past its startup budget"),
    Code(OPERAND_POD_FAILING, _W, Pane.PIPELINE, "an operand pod other than the driver fails"),
    Code(VALIDATOR_STUCK, _W, Pane.PIPELINE,
         "the validator is stuck in an init container (named), blaming the stage it waits on"),
    Code(UPGRADE_FAILED, _W, Pane.UPGRADE, "the node's driver upgrade failed; it holds a slot"),
    Code(UPGRADE_STALLED, _W, Pane.UPGRADE,
         "an upgrade step held past its limit, or upgrade-required that cannot proceed"),
    Code(UPGRADE_BLOCKED, _C, Pane.UPGRADE,
         "the upgrade controller is stopped for the whole cluster (driver DaemonSet, policy)"),
    Code(MIG_CONFIG_FAILED, _W, Pane.MIG, "mig-manager failed to apply the MIG config label"),
    Code(MIG_CONFIG_PENDING, _W, Pane.MIG, "a MIG change pending past its limit"),
    Code(MIG_NO_INSTANCES, _W, Pane.MIG,
         "a MIG config applied with MIG on and no instances: no GPU can be allocated"),
    Code(XID_ERROR, _C, Pane.METRICS,
         "the worst XID a GPU reported within the lookback (meaning, age, later XIDs, pods)"),
    Code(DAEMONSET_NOT_SCHEDULED, _W, Pane.NODES,
         "an operand DaemonSet schedules fewer pods than it should"),
    Code(GPU_NODE_UNMANAGED, _W, Pane.NODES,
         "NFD sees an NVIDIA GPU on a node the operator does not manage"),
    Code(GPU_HEALTH_CHECKS_OFF, _W, Pane.PIPELINE,
         "DP_DISABLE_HEALTHCHECKS=all: failing GPUs stay allocatable (info as a setting, "
         "warning while a GPU reports a critical XID)"),
    Code(GPU_MISSING, _C, Pane.METRICS,
         "the exporter reports fewer physical GPUs than the node has"),
    Code(ROW_REMAP_FAILURE, _C, Pane.METRICS,
         "DCGM_FI_DEV_ROW_REMAP_FAILURE set: the GPU's memory cannot be trusted"),
    Code(SHARING_CONFIG_MISSING, _W, Pane.PIPELINE,
         "the device-plugin config label names a key its ConfigMap lacks"),
    Code(SLOW_GPU_JOIN, _W, Pane.PIPELINE,
         "a joining node still has no allocatable GPU past its pool's p90 x 2 (or the "
         "configured limit); names the stage it is stuck in"),
    Code(GPU_COUNT_DROPPED, _C, Pane.METRICS,
         "fewer physical GPUs than the node's pool siblings (same instance type and "
         "product) or than it had earlier: a GPU fell off the bus and stayed gone"),
    Code(GPU_MEMORY_ERROR, _C, Pane.METRICS,
         "uncorrectable memory errors within the lookback (remapped rows, retired DBE "
         "pages, volatile DBE ECC): drain and reset; RMA if it repeats"),
    Code(PCIE_REPLAYS, _W, Pane.METRICS,
         "the PCIe replay counter rising faster than the limit: a degrading link or riser"),
    Code(NVLINK_ERRORS, _W, Pane.METRICS, "NVLink CRC, replay or recovery errors rising"),
    Code(GPU_THROTTLED, _W, Pane.METRICS,
         "sustained thermal, power or hardware slowdown, naming the cause and how long"),
)

#: code -> its entry, in the README's order.
CATALOGUE: Mapping[str, Code] = MappingProxyType({c.code: c for c in _ENTRIES})


def finding(code: str, node: str | None, message: str, hint: str, subject: str = "", *,
            severity: Severity | None = None, nodes: tuple[str, ...] = ()) -> Finding:
    """A finding of ``code`` (one of the constants above) with the catalogue's pane, and its
    usual severity unless the rule says otherwise (info while a grace period or an
    explanation holds, critical where it escalates). A code not in the catalogue raises
    ``KeyError``: a rule cannot invent one."""
    entry = CATALOGUE[code]
    return Finding(code, entry.severity if severity is None else severity, node, message, hint,
                   entry.pane, subject, nodes)
