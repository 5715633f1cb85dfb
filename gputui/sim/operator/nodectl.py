"""One GPU node's life: join, NFD and operator labels, operand pods, capacity and GFD labels.

``reconcile_node`` is called whenever the node is marked dirty (a watch event) or its next
step is due. It plays, in order, the kubelet registering the node, nfd-worker, the operator's
NodeLabeling reconciler (§1.5), the DaemonSet controller, the kubelet running operand pods,
the device plugin advertising resources and GFD labelling the node (§6.3).
"""

from __future__ import annotations

import functools
from typing import Any

from gputui.sim.operator import daemonsets, kubelet, mig, nodes, reboot, validatorpod
from gputui.sim.operator import keys as K
from gputui.sim.operator.hardware import model as gpu_model
from gputui.sim.operator.operands import OPERANDS
from gputui.sim.operator.runtime import NodeRun
from gputui.sim.operator.sharing import Sharing, missing_config, node_sharing
from gputui.sim.operator.steps import INIT_STEPS, MAIN_STEPS
from gputui.sim.operator.world import SCHEDULE, STATUS, World
from gputui.sim.scenario import Pool

Obj = dict[str, Any]
READY_AFTER, NFD_AFTER = 10.0, 15.0
#: how long before the scenario's start a converged node joined (plus an hour per index)
CONVERGED_AGE_S = 20 * 86400.0
#: the kubelet keeps a stopped device plugin's devices in capacity (as unhealthy, so not
#: allocatable) for 5 min, then sets the capacity to 0 (kubernetes
#: ``pkg/kubelet/cm/devicemanager/types.go`` ``endpointStopGracePeriod``;
#: ``pkg/kubelet/nodestatus/setters.go`` ``MachineInfo``: "Set capacity for removed resource
#: to 0 on device removal")
PLUGIN_STOP_GRACE_S = 300.0
HOST_DRIVER_VERSION = "550.163.01"


def add_node(world: World, pool: Pool, now: float, converged: bool,
             driver_build: float | None = None) -> NodeRun:
    """Register a new node of ``pool`` (joining, or already converged at scenario start:
    then the caller, the set-up, marks the status and scheduling work to do).

    A converged node joined weeks before the scenario starts (its creationTimestamp says
    so) and its operand pods were made since (a driver upgrade recreates them), as in a
    cluster that has run a while: its join predates what the pods record."""
    index = len(world.pool_members[pool.name])
    from gputui.sim.operator.hardware import node_suffix
    name, salt = f"{pool.prefix}-{node_suffix(f'{pool.name}/{index}')}", 0
    while name in world.nodes:  # 4-letter suffixes collide in big pools, as they would not in GKE
        salt += 1
        name = f"{pool.prefix}-{node_suffix(f'{pool.name}/{index}/{salt}')}"
    run = NodeRun(name, pool.name, gpu_model(pool.gpu), pool.gpus_per_node, pool.kernel,
                  pool.driver == "host", index=len(world.nodes), joined_at=now, ip=world.next_ip())
    if run.host_driver:
        run.driver_loaded = HOST_DRIVER_VERSION
    run.first_build = not converged and not run.host_driver  # see joining.py
    run.first_build_seconds = pool.driver_build if driver_build is None else driver_build
    world.nodes[name] = run
    world.pool_members[pool.name].append(name)
    labels = dict(pool.labels)
    if run.host_driver:
        labels.setdefault(K.DEPLOY_DRIVER, "false")
    if pool.device_config:
        labels[K.DEVICE_PLUGIN_CONFIG] = pool.device_config
    cordoned = index < pool.cordoned
    own = dict(labels)
    annotations: dict[str, str] = {}
    nfd: dict[str, str] = {}
    if converged:
        nfd = nodes.nfd_labels(run, pool.os_id, pool.os_version)
        labels.update(nfd)
        annotations = _converged_labels(world, run, pool, labels, now)
        run.phase = "labelled"
    obj = nodes.node_object(run, own, world.clock.rfc3339(now), converged, cordoned)
    if converged:
        age = CONVERGED_AGE_S + 3600.0 * (run.index % 240)
        obj["metadata"]["creationTimestamp"] = world.clock.rfc3339(now - age)
    if converged and world.policy_spec() and labels.get(K.DEPLOY_PREFIX + "device-plugin") == "true":
        capacity, healthy = _resources(world, run, labels)
        obj["status"]["capacity"].update({k: str(v) for k, v in capacity.items()})
        obj["status"]["allocatable"].update({k: str(v) for k, v in healthy.items()})
    world.store.create("nodes", obj, manager=K.M_KUBELET, adopt=True)
    if converged:
        _label_as_writers(world, run, own, nfd, labels, annotations)
        converge_pods(world, run, labels, now)  # the set-up marks the work once for all
    else:
        world.mark(name, STATUS, SCHEDULE)
    return run


def _label_as_writers(world: World, run: NodeRun, own: dict[str, str], nfd: dict[str, str],
                      labels: dict[str, str], annotations: dict[str, str]) -> None:
    """Write a converged node's labels as their real writers did, so managedFields say who.

    gputui learns when a label last changed from managedFields; a node created with every
    label at once would claim the kubelet wrote ``nvidia.com/mig.config.state``. Written in
    place (:meth:`~gputui.sim.store.Store.amend`): this runs in the scenario's set-up only.
    ``own``: the labels the node registered with; ``nfd``: NFD's.
    """
    gfd: dict[str, str] = {}
    operator: dict[str, str] = {}
    for key, value in labels.items():
        if key not in own and key not in nfd:
            writer = _label_writer(key)
            if writer == K.M_GFD:
                gfd[key] = value
            elif writer == K.M_OPERATOR:
                operator[key] = value
    world.set_labels(run.name, nfd, K.M_NFD, setting_up=True)
    if gfd:
        world.set_labels(run.name, gfd, K.M_GFD, setting_up=True)
    if operator or annotations:
        world.store.amend("nodes", run.name, None, labels=operator,
                          annotations=annotations, manager=K.M_OPERATOR)
    if K.MIG_CONFIG_STATE in labels:
        world.set_labels(run.name, {K.MIG_CONFIG_STATE: labels[K.MIG_CONFIG_STATE]}, K.M_MIG,
                         setting_up=True)


@functools.lru_cache(maxsize=1024)
def _label_writer(key: str) -> str:
    """Who writes a converged node's label that neither the kubelet nor NFD wrote: GFD its
    GPU, CUDA, MIG-device and sharing labels, the MIG manager the config state, and the
    operator the rest (its deploy labels, ``gpu.present``, the upgrade state)."""
    if key == K.MIG_CONFIG_STATE:
        return K.M_MIG
    if (key.startswith(("nvidia.com/gpu.", "nvidia.com/cuda.", "nvidia.com/mig-",
                        "nvidia.com/gfd.", "nvidia.com/mps."))
            or key in (K.MIG_CAPABLE, K.MIG_STRATEGY)) \
            and not key.startswith(K.DEPLOY_PREFIX) and key != K.GPU_PRESENT:
        return K.M_GFD
    return K.M_OPERATOR


def _converged_labels(world: World, run: NodeRun, pool: Pool, labels: dict[str, str],
                      now: float) -> dict[str, str]:
    """Labels (in place) and annotations a node has once NFD, GFD and the operator ran."""
    spec = world.policy_spec()
    annotations: dict[str, str] = {}
    if pool.mig_config and run.model.mig_capable:
        mig.apply_layout(run, pool.mig_config)
        run.mig_applied_label = pool.mig_config
    if not spec:
        return annotations
    if not run.host_driver:
        run.driver_loaded = world.driver_version()
    labels.update(_gfd(world, run, labels, now))
    nodes.apply_operator_labels(labels, annotations, spec)
    if pool.mig_config and run.model.mig_capable:
        labels[K.MIG_CONFIG] = pool.mig_config
    if labels.get(K.MIG_CONFIG) and labels.get(K.DEPLOY_PREFIX + "mig-manager") == "true":
        labels[K.MIG_CONFIG_STATE] = "success"
        run.mig_applied_label = labels[K.MIG_CONFIG]
    if annotations.get(K.UPGRADE_ENABLED_ANN) and not run.host_driver:
        labels[K.UPGRADE_STATE] = K.S_DONE
    return annotations


def converge_pods(world: World, run: NodeRun, labels: dict[str, str], now: float) -> None:
    """Running operand pods, as the whole chain would leave them (scale, healthy)."""
    if not world.policy_spec():
        return
    # a MIG layout that leaves no GPU resource never converged: the validator (and under
    # single the device plugin) start as on a real node and fail there (see steps.py)
    _, healthy = _resources(world, run, labels)
    stuck = {"validator"} if not any(v > 0 for v in healthy.values()) and any(
        g.mig is not None for g in run.gpus) else set()
    if nodes.plugin_error(run, world.mig_strategy()):
        stuck |= {"device-plugin"}
    run.markers.update({".driver-ctr-ready", "driver-ready", "toolkit-installed", "toolkit-ready",
                        "cuda-ready"} | (set() if stuck else {"plugin-ready"}))
    for op in OPERANDS:
        if op.key in world.templates and daemonsets._matches(labels, op.node_selector):
            daemonsets.create_pod(world, run, op, now, converged=op.key not in stuck)
    if "mig-manager" in run.pods:
        mig.publish_config(world, run)
    if "validator" in run.pods and "validator" not in stuck:
        validatorpod.converged(world, run, run.pods["validator"], now)


def _resources(world: World, run: NodeRun, labels: dict[str, str]) -> tuple[dict[str, int], dict[str, int]]:
    return nodes.device_resources(run, world.mig_strategy(), _sharing(world, run, labels))


def _sharing(world: World, run: NodeRun, labels: dict[str, str]) -> Sharing:
    """The sharing the node's plugin and GFD run: the selected config, or, when the
    ConfigMap lacks it (config-manager fails), the one they started with."""
    cm, default = world.device_plugin_config()
    if missing_config(labels, cm, default) is None:
        run.sharing_applied = node_sharing(labels, cm, default)
    return run.sharing_applied or node_sharing(labels, cm, default)


def _gfd(world: World, run: NodeRun, labels: dict[str, str], now: float) -> dict[str, str]:
    sharing = _sharing(world, run, labels)
    return nodes.gfd_labels(run, world.mig_strategy(), sharing, run.driver_loaded or world.driver_version(), now)


def reconcile_node(world: World, run: NodeRun, now: float) -> float | None:
    """Advance one node as far as it can go now; return when it next needs attention."""
    obj = world.node_obj(run.name)
    if obj is None:
        for pod in list(run.pods.values()):
            daemonsets.delete_pod(world, run, pod)
        world.nodes.pop(run.name, None)
        return None
    down = reboot.reconcile(world, run, now)
    if down is not None:
        return down  # rebooting: its kubelet runs nothing
    if run.phase in ("new", "ready"):
        wait = _join(world, run, now)
        if wait is not None:
            return wait
    spec = world.policy_spec()
    if spec:
        _operator_labels(world, run, spec)
    labels = (world.node_obj(run.name) or obj)["metadata"].get("labels") or {}
    daemonsets.sync_node(world, run, labels, now)
    wakes = []
    for pod in list(run.pods.values()):
        wake = kubelet.advance(world, run, pod, INIT_STEPS, MAIN_STEPS, now)
        if wake is not None:
            wakes.append(wake)
    wake = publish(world, run, now)
    if wake is not None:
        wakes.append(wake)
    wake = mig.reconcile(world, run, now)
    if wake is not None:
        wakes.append(wake)
    return min(wakes) if wakes else None


def _join(world: World, run: NodeRun, now: float) -> float | None:
    if run.phase == "new":
        if now < run.joined_at + READY_AFTER:
            return run.joined_at + READY_AFTER

        def ready(o: Obj) -> None:
            o["status"]["conditions"] = nodes.node_conditions(True, world.clock.rfc3339(now))
        world.write_node(run.name, ready, K.M_KUBELET)
        run.phase = "ready"
    if now < run.joined_at + NFD_AFTER:
        return run.joined_at + NFD_AFTER
    pool = world.pools[run.pool]
    world.set_labels(run.name, dict(nodes.nfd_labels(run, pool.os_id, pool.os_version)), K.M_NFD)
    run.phase = "labelled"
    world.mark(None)  # wake the loop (the node watch marks the node itself)
    return None


def _operator_labels(world: World, run: NodeRun, spec: Obj) -> None:
    """Apply the NodeLabeling rules to the node as stored now (never to a stale copy)."""
    def change(o: Obj) -> None:
        labels = o["metadata"].setdefault("labels", {})
        annotations = o["metadata"].setdefault("annotations", {})
        nodes.apply_operator_labels(labels, annotations, spec)
    world.write_node(run.name, change, K.M_OPERATOR)


def publish(world: World, run: NodeRun, now: float) -> float | None:
    """Device-plugin resources and GFD labels for what currently runs on the node; returns
    when the kubelet drops a stopped plugin's capacity, if that is still to come."""
    obj = world.node_obj(run.name)
    if obj is None:
        return None
    labels = obj["metadata"].get("labels") or {}
    gfd = run.pods.get("gfd")
    if gfd is not None and gfd.ready:
        wanted = _gfd(world, run, labels, now)
        stale = {k: v for k, v in wanted.items()
                 if k != K.GFD_TIMESTAMP and labels.get(k) != v}
        gone = [k for k in labels if k.startswith("nvidia.com/mig-") and k not in wanted]
        if stale or gone:
            world.set_labels(run.name, {**wanted, **{k: None for k in gone}}, K.M_GFD)
    plugin = run.pods.get("device-plugin")
    capacity, healthy = _resources(world, run, labels)
    # the kubelet sees the plugin's socket: a failing config-manager sidecar does not stop it
    up = plugin is not None and plugin.initialized and all(
        c.ready for c in plugin.main if c.name != "config-manager")
    if up:
        run.plugin_down_since = None
        _write_resources(world, run.name, capacity, healthy)
        if run.allocatable_at is None and any(healthy.values()):
            run.allocatable_at = now  # what a test holds gputui's time to GPU to
        return None
    if run.plugin_down_since is None:
        run.plugin_down_since = now
    drop_at = run.plugin_down_since + PLUGIN_STOP_GRACE_S
    _write_resources(world, run.name, None, None, zero_capacity=now >= drop_at)
    return drop_at if now < drop_at else None


def _write_resources(world: World, name: str, capacity: dict[str, int] | None,
                     healthy: dict[str, int] | None, zero_capacity: bool = False) -> None:
    """The kubelet's node status for the plugin's resources: with no plugin, allocatable 0
    at once and capacity 0 too once ``zero_capacity`` (the stop grace has passed)."""
    def change(o: Obj) -> None:
        cap, alloc = o["status"]["capacity"], o["status"]["allocatable"]
        for res in nodes.all_device_resources(cap):
            if capacity is None:
                alloc[res] = "0"
                if zero_capacity:
                    cap[res] = "0"
            elif res not in capacity:
                cap.pop(res, None)
                alloc.pop(res, None)
        for res, amount in (capacity or {}).items():
            cap[res] = str(amount)
            alloc[res] = str((healthy or {}).get(res, 0))
    world.write_node(name, change, K.M_KUBELET)
