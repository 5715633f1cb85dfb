"""Frozen snapshots for the detail panes, built from the domain dataclasses.

Each reproduces a journey of JOURNEYS.md with fixed epoch times (``NOW``), so renders and
screenshots never depend on the wall clock or on the emulator's timing.
"""

from __future__ import annotations

from dataclasses import replace
from types import MappingProxyType

from gputui.domain.model import (
    ClusterSnapshot,
    DeployLabel,
    DriverOwnership,
    Finding,
    GpuPod,
    GpuResources,
    MigGpu,
    MigInstance,
    MigView,
    NodeJoin,
    NodeMigView,
    NodePipeline,
    NodeUpgradeStatus,
    NodeView,
    PipelineStage,
    ResourceCount,
    Severity,
    StageStatus,
    SubStage,
    UpgradeEvent,
    UpgradePolicy,
    UpgradeView,
)

NOW = 1764410400.0  # 2026-11-29T10:00:00Z
NS = "gpu-operator"
BROKEN = "gke-prod-h100-pool-7f3a-xk2p"
HEALTHY = "gke-prod-h100-pool-7f3a-m9qd"

S = StageStatus


def _validator(statuses: tuple[StageStatus, ...], details: tuple[str, ...]) -> tuple[SubStage, ...]:
    names = ("driver-validation", "toolkit-validation", "cuda-validation", "plugin-validation")
    return tuple(SubStage(n, s, d) for n, s, d in zip(names, statuses, details))


def broken_pipeline() -> NodePipeline:
    """Journey 1: driver in Init:CrashLoopBackOff, the rest waiting behind it."""
    waiting_tk = "waiting in init container toolkit-validation"
    return NodePipeline((
        PipelineStage("driver", S.FAILED,
                      "Init:CrashLoopBackOff in k8s-driver-manager, 14 restarts",
                      pod="nvidia-driver-daemonset-8x7kq", namespace=NS, restarts=14,
                      container="k8s-driver-manager", reason="Init:CrashLoopBackOff",
                      since=NOW - 3 * 3600,
                      substages=(SubStage("k8s-driver-manager", S.FAILED,
                                          "CrashLoopBackOff, 14 restarts", 14),),
                      deploy_label="true"),
        PipelineStage("container-toolkit", S.PROGRESSING,
                      "waiting in init container driver-validation",
                      pod="nvidia-container-toolkit-daemonset-p2v4n", namespace=NS,
                      container="driver-validation", reason="Init:0/1", since=NOW - 3 * 3600,
                      substages=(SubStage("driver-validation", S.PROGRESSING, "running"),),
                      deploy_label="true"),
        PipelineStage("operator-validator", S.PROGRESSING,
                      "waiting in init container driver-validation",
                      pod="nvidia-operator-validator-5mz8d", namespace=NS,
                      container="driver-validation", reason="Init:0/4", since=NOW - 3 * 3600,
                      substages=_validator(
                          (S.PROGRESSING, S.ABSENT, S.ABSENT, S.ABSENT),
                          ("running", "not started", "not started", "not started")),
                      deploy_label="true"),
        PipelineStage("device-plugin", S.PROGRESSING, waiting_tk,
                      pod="nvidia-device-plugin-daemonset-q7w2r", namespace=NS,
                      container="toolkit-validation", reason="Init:0/1", since=NOW - 3 * 3600,
                      deploy_label="true"),
        PipelineStage("dcgm-exporter", S.PROGRESSING, waiting_tk,
                      pod="nvidia-dcgm-exporter-h4k9s", namespace=NS,
                      container="toolkit-validation", reason="Init:0/1", since=NOW - 3 * 3600,
                      deploy_label="true"),
        PipelineStage("gpu-feature-discovery", S.PROGRESSING, waiting_tk,
                      pod="gpu-feature-discovery-t6b3c", namespace=NS,
                      container="toolkit-validation", reason="Init:0/1", since=NOW - 3 * 3600,
                      deploy_label="true"),
    ))


def healthy_pipeline(suffix: str = "a1b2c") -> NodePipeline:
    """Every stage ready (validator steps done)."""
    done = _validator((S.READY,) * 4, ("",) * 4)
    names = (("driver", "nvidia-driver-daemonset"),
             ("container-toolkit", "nvidia-container-toolkit-daemonset"),
             ("operator-validator", "nvidia-operator-validator"),
             ("device-plugin", "nvidia-device-plugin-daemonset"),
             ("dcgm-exporter", "nvidia-dcgm-exporter"),
             ("gpu-feature-discovery", "gpu-feature-discovery"))
    return NodePipeline(tuple(
        PipelineStage(op, S.READY, pod=f"{prefix}-{suffix}", namespace=NS, reason="Running",
                      since=NOW - 5 * 86400, deploy_label="true",
                      substages=done if op == "operator-validator" else ())
        for op, prefix in names))


def _deploy(paused: str | None = None) -> tuple[DeployLabel, ...]:
    ops = ("driver", "container-toolkit", "operator-validator", "device-plugin",
           "dcgm-exporter", "gpu-feature-discovery")
    return tuple(DeployLabel(op, paused if (paused and op in ("device-plugin", "dcgm-exporter",
                                                               "gpu-feature-discovery")) else "true",
                             bool(paused) and op in ("device-plugin", "dcgm-exporter",
                                                     "gpu-feature-discovery"))
                 for op in ops)


def broken_node() -> NodeView:
    """Journey 1's node: 0/8 allocatable, driver failing after a kernel update."""
    finding = Finding(
        "driver-pod-failing", Severity.CRITICAL, BROKEN,
        "driver pod nvidia-driver-daemonset-8x7kq: Init:CrashLoopBackOff in "
        "k8s-driver-manager, 14 restarts",
        "Kernel 6.8.0-1015-gcp is newer than the driver build; check the driver pod log "
        "for a kernel-headers error.", pane="pipeline", subject="driver")
    unavailable = Finding("gpus-unavailable", Severity.CRITICAL, BROKEN,
                          "0 of 8 GPUs allocatable", "The device plugin is not running.",
                          pane="pipeline")
    return NodeView(
        name=BROKEN, pool="h100-pool", product="NVIDIA-H100-80GB-HBM3", gpu_count=8,
        resources=GpuResources((ResourceCount("nvidia.com/gpu", 8, 0),)),
        driver_version="550.90.07", kernel="6.8.0-1015-gcp",
        os_image="Container-Optimized OS from Google", ready=True, cordoned=False,
        gpu_present=True, deploy_labels=_deploy(), driver_ownership=DriverOwnership.OPERATOR,
        upgrade_state="upgrade-done", upgrade_since=NOW - 86400 * 9,
        sharing_strategy="none", sharing_replicas=1,
        gpu_pods=(GpuPod("trainer-7d9f-0", "ml", "Pending", 8, None),),
        created=NOW - 86400 * 30, join_to_allocatable_seconds=412.0,
        join=NodeJoin("unknown", NOW - 86400 * 30,
                      why_unknown="its operand pods were made or restarted after it joined"),
        pipeline=broken_pipeline(), findings=(finding, unavailable), worst=Severity.CRITICAL)


def healthy_node() -> NodeView:
    """A healthy H100 node with a running trainer."""
    return NodeView(
        name=HEALTHY, pool="h100-pool", product="NVIDIA-H100-80GB-HBM3", gpu_count=8,
        resources=GpuResources((ResourceCount("nvidia.com/gpu", 8, 8),)),
        driver_version="550.90.07", kernel="6.8.0-1014-gcp",
        os_image="Container-Optimized OS from Google", ready=True, gpu_present=True,
        deploy_labels=_deploy(), driver_ownership=DriverOwnership.OPERATOR,
        upgrade_state="upgrade-done", upgrade_since=NOW - 86400 * 9,
        gpu_pods=(GpuPod("trainer-7d9f-1", "ml", "Running", 8, NOW - 31 * 3600,
                         MappingProxyType({"app": "trainer"}), ("nvidia.com/gpu",)),),
        created=NOW - 86400 * 30, join_to_allocatable_seconds=388.0,
        join=_joined(NOW - 86400 * 30, 250.0, 262.0, 300.0, 388.0),
        pipeline=healthy_pipeline())


def _joined(at: float, *ends: float) -> NodeJoin:
    """A join done: each stage's end, seconds after ``at``."""
    return NodeJoin("done", at, tuple(at + end for end in ends), at + ends[-1])


def pipeline_snapshot() -> ClusterSnapshot:
    """Two nodes: journey 1's broken one and a healthy neighbour."""
    nodes = {BROKEN: broken_node(), HEALTHY: healthy_node()}
    return ClusterSnapshot(context="gke-prod", generated_at=NOW, operator_namespace=NS,
                           nodes=MappingProxyType(dict(sorted(nodes.items()))),
                           findings=broken_node().findings)


# --- journey 2: the upgrade that has been running since yesterday ---------------------------

POLICY = UpgradePolicy(auto_upgrade=True, max_parallel_upgrades=4, max_unavailable="25%",
                       wait_for_completion_selector="app=trainer")


def upgrade_node(i: int) -> str:
    """The i-th node of the upgrading H100 pool."""
    return f"gke-prod-h100-pool-7f3a-n{i:02d}"


def upgrade_states() -> dict[str, str]:
    """8 nodes: 3 waiting for jobs, 1 failed, 2 required, 2 done."""
    states = ["wait-for-jobs-required"] * 3 + ["upgrade-failed"] + ["upgrade-required"] * 2 \
        + ["upgrade-done"] * 2
    return {upgrade_node(i): s for i, s in enumerate(states)}


def _reason(state: str) -> str:
    return {
        "wait-for-jobs-required": "2 pods app=trainer still running (oldest 31 h), timeout: never",
        "upgrade-required": "waiting for a slot (4 of 4 in use, 1 failed)",
        "upgrade-failed": "failed in pod-restart-required: driver pod restarted 11 times",
        "validation-required": "validator: waiting in init container cuda-validation",
    }.get(state, "")


def _upgrading_node(name: str, state: str) -> NodeView:
    """A node of the upgrading pool: trainers where jobs are awaited, a crashing driver
    where the upgrade failed."""
    pods: tuple[GpuPod, ...] = ()
    if state == "wait-for-jobs-required":
        pods = tuple(GpuPod(f"trainer-{name[-3:]}-{i}", "ml", "Running", 4,
                            NOW - (31 - i) * 3600, MappingProxyType({"app": "trainer"}))
                     for i in range(2))
    pipeline = healthy_pipeline(name[-5:])
    if state == "upgrade-failed":
        driver = replace(pipeline.stages[0], status=S.FAILED, restarts=11,
                         detail="CrashLoopBackOff in nvidia-driver-ctr, 11 restarts",
                         reason="CrashLoopBackOff")
        pipeline = NodePipeline((driver,) + pipeline.stages[1:])
    return NodeView(name=name, pool="h100-pool", upgrade_state=state, ready=True,
                    gpu_pods=pods, pipeline=pipeline)


def upgrade_snapshot(states: dict[str, str] | None = None) -> ClusterSnapshot:
    """An UpgradeView with lanes, reasons and the failed node's last event."""
    states = states or upgrade_states()
    order = ("upgrade-required", "cordon-required", "wait-for-jobs-required",
             "pod-deletion-required", "drain-required", "pod-restart-required",
             "validation-required", "uncordon-required", "upgrade-failed", "upgrade-done")
    lanes = {s: tuple(sorted(n for n, st in states.items() if st == s)) for s in order}
    event = UpgradeEvent("Failed to restart driver pod: restartCount 11 > 10",
                         NOW - 2 * 3600, "Warning")
    statuses = {
        n: NodeUpgradeStatus(n, s, since=NOW - 31 * 3600, skip=False, wait_reason=_reason(s),
                             last_event=event if s == "upgrade-failed" else None)
        for n, s in states.items()}
    idle = ("upgrade-required", "upgrade-done", "")
    view = UpgradeView(
        policy=POLICY, enabled=True, total=len(states),
        in_progress=sum(1 for s in states.values() if s not in idle),
        failed=sum(1 for s in states.values() if s == "upgrade-failed"),
        pending=sum(1 for s in states.values() if s == "upgrade-required"),
        done=sum(1 for s in states.values() if s == "upgrade-done"),
        max_parallel=4, max_unavailable=2, unavailable=1, available_slots=0,
        lanes=MappingProxyType({s: ns for s, ns in lanes.items() if ns}),
        nodes=MappingProxyType(statuses))
    nodes = {n: _upgrading_node(n, s) for n, s in states.items()}
    return ClusterSnapshot(context="gke-prod", generated_at=NOW, operator_namespace=NS,
                           nodes=MappingProxyType(nodes), upgrade=view)


def blocked_snapshot() -> ClusterSnapshot:
    """The controller is stopped by an unscheduled driver pod."""
    snap = upgrade_snapshot()
    return replace(snap, upgrade=replace(
        snap.upgrade, blocked="driver DaemonSet nvidia-driver-daemonset has 1 unscheduled pod"))


# --- journey 5: the A100 pool and MIG -------------------------------------------------------

A100_CONFIGS = ("all-disabled", "all-enabled", "all-balanced", "all-1g.10gb", "all-2g.20gb",
                "all-3g.40gb", "all-7g.80gb")


def mig_snapshot() -> ClusterSnapshot:
    """Three A100 nodes: MIG off (success), all-1g.10gb pending, all-balanced failed."""
    def gpus(layout: tuple[MigInstance, ...] | None) -> tuple[MigGpu, ...]:
        return tuple(MigGpu(i, layout is not None, layout or ()) for i in range(2))

    balanced = (MigInstance("3g.40gb", 1), MigInstance("2g.20gb", 1), MigInstance("1g.10gb", 2))
    views = {
        "a100-pool-node-1": NodeMigView("a100-pool-node-1", "all-disabled", "all-disabled",
                                        "success", "mixed", NOW - 86400, True,
                                        "a100-pool-node-1-mig-config", A100_CONFIGS, gpus(None)),
        "a100-pool-node-2": NodeMigView("a100-pool-node-2", "all-1g.10gb", None, "pending",
                                        "mixed", NOW - 50 * 60, True,
                                        "a100-pool-node-2-mig-config", A100_CONFIGS,
                                        gpus((MigInstance("1g.10gb", 7),))),
        "a100-pool-node-3": NodeMigView("a100-pool-node-3", "all-balanced", None, "failed",
                                        "mixed", NOW - 600, True,
                                        "a100-pool-node-3-mig-config", A100_CONFIGS,
                                        gpus(balanced)),
    }
    manager = PipelineStage("mig-manager", S.READY, pod="nvidia-mig-manager-w8x2p",
                            namespace=NS, reason="Running")
    nodes = {n: NodeView(name=n, pool="a100-pool", product="NVIDIA-A100-SXM4-80GB",
                         gpu_count=2, mig_capable=True, mig_config=v.desired,
                         mig_state=v.state, mig_strategy="mixed",
                         pipeline=NodePipeline((manager,) if v.state == "failed" else ()))
             for n, v in views.items()}
    return ClusterSnapshot(context="gke-prod", generated_at=NOW, operator_namespace=NS,
                           nodes=MappingProxyType(nodes),
                           mig=MigView("mixed", MappingProxyType(views)))
