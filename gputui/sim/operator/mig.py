"""The MIG manager (§5): apply ``nvidia.com/mig.config`` changes, publish MIG configs.

Follows ``Reconfigure.Run``: validate the name against the node's configs (``failed`` if
unknown), ``pending``, pause the GPU clients' deploy labels (``paused-for-mig-change``), wait
for their pods to go, apply, delete the validator pod so validations re-run, restore the
labels, ``success``. GPU workload pods are not evicted, as with the real one. A new
mig-manager pod applies the node's current label when it starts (mig-parted
``cmd/nvidia-mig-manager/main.go``): ``run.mig_applied_label`` is forgotten with the pod.
"""

from __future__ import annotations

from typing import Any

import yaml

from gputui.sim.operator import keys as K
from gputui.sim.operator.hardware import MODELS, generated_config_yaml, mig_configs
from gputui.sim.operator.runtime import NodeRun
from gputui.sim.operator.world import World

Obj = dict[str, Any]
APPLY_SECONDS = 30.0
CLIENTS = ("device-plugin", "gfd", "dcgm-exporter")


def apply_layout(run: NodeRun, config: str) -> bool:
    """Set the GPUs' MIG layout to a generated config; False if the name is unknown."""
    configs = mig_configs(run.model)
    if config not in configs:
        return False
    for gpu in run.gpus:
        layout = configs[config]
        gpu.mig = dict(layout) if layout is not None else None
    return True


def default_config_map(namespace: str) -> Obj:
    """The operator's static ``default-mig-parted-config`` (device-filtered per model)."""
    configs: dict[str, list[Obj]] = {"all-disabled": [{"devices": "all", "mig-enabled": False}],
                                     "all-enabled": [{"devices": "all", "mig-enabled": True,
                                                      "mig-devices": {}}]}
    for model in MODELS.values():
        for name, layout in mig_configs(model).items():
            if name in ("all-disabled", "all-enabled") or layout is None:
                continue
            configs.setdefault(name, []).append({"device-filter": [model.device_id],
                                                 "devices": "all", "mig-enabled": True,
                                                 "mig-devices": dict(layout)})
    text = yaml.safe_dump({"version": "v1", "mig-configs": configs}, sort_keys=False)
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "default-mig-parted-config", "namespace": namespace,
                         "labels": {"app.kubernetes.io/managed-by": "gpu-operator"}},
            "data": {"config.yaml": text}}


def publish_config(world: World, run: NodeRun) -> None:
    """The ``<node>-mig-config`` ConfigMap the MIG manager generates from the hardware."""
    name = f"{run.name}-mig-config"
    if world.store.get("configmaps", name, world.ns) is not None:
        return
    pod = run.pods.get("mig-manager")
    owner = world.store.get("pods", pod.name, world.ns) if pod else None
    meta: Obj = {"name": name, "namespace": world.ns,
                 "labels": {"app.kubernetes.io/component": "nvidia-mig-manager",
                            "nvidia.com/node-name": run.name}}
    if owner:
        meta["ownerReferences"] = [{"apiVersion": "v1", "kind": "Pod", "name": owner["metadata"]["name"],
                                    "uid": owner["metadata"]["uid"], "controller": True}]
    world.store.create("configmaps", {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta,
                                      "data": {"config.yaml": generated_config_yaml(run.model)}},
                       manager=K.M_MIG, adopt=True)


def _pause(world: World, node: str, paused: bool) -> None:
    labels = (world.node_obj(node) or {}).get("metadata", {}).get("labels", {})
    change: dict[str, str | None] = {}
    for operand in K.MIG_PAUSED_OPERANDS:
        key = K.DEPLOY_PREFIX + operand
        value = labels.get(key)
        if value is None or value == "false":
            continue
        if paused and value == "true":
            change[key] = K.PAUSED_MIG_CHANGE
        elif not paused and value == K.PAUSED_MIG_CHANGE:
            change[key] = "true"
    if change:
        world.set_labels(node, change, K.M_MIG)


def _state(world: World, node: str, state: str) -> None:
    labels = (world.node_obj(node) or {}).get("metadata", {}).get("labels", {})
    if labels.get(K.MIG_CONFIG_STATE) != state:  # a restart re-asserting success writes nothing
        world.set_labels(node, {K.MIG_CONFIG_STATE: state}, K.M_MIG)


def reconcile(world: World, run: NodeRun, now: float) -> float | None:
    """One pass of the node's MIG manager; returns when it next needs to run."""
    pod = run.pods.get("mig-manager")
    if run.mig_job is None and (pod is None or not pod.ready):
        return None
    if pod is not None and pod.ready:
        publish_config(world, run)
    labels = (world.node_obj(run.name) or {}).get("metadata", {}).get("labels", {})
    wanted = labels.get(K.MIG_CONFIG)
    if run.mig_job is None:
        if not wanted or (wanted == run.mig_applied_label and labels.get(K.MIG_CONFIG_STATE)):
            return None
        return _start(world, run, wanted, now)
    return _continue(world, run, now)


def _start(world: World, run: NodeRun, wanted: str, now: float) -> float | None:
    name = (pod := run.pods.get("mig-manager")) and pod.name or ""
    run.mig_applied_label = wanted
    configs = mig_configs(run.model)
    world.nodeside.log(world.ns, name, "nvidia-mig-manager", f"Updating to MIG config: {wanted}")
    if wanted not in configs:
        world.nodeside.log(world.ns, name, "nvidia-mig-manager",
                           f'Error validating MIG config: error parsing selected config "{wanted}": not found in config file')
        _state(world, run.name, "failed")
        return None
    if all(g.mig == configs[wanted] for g in run.gpus):
        _state(world, run.name, "success")
        return None
    _state(world, run.name, "pending")
    _pause(world, run.name, True)
    run.mig_job = {"config": wanted, "phase": "waiting", "since": now}
    return now + 2


def _continue(world: World, run: NodeRun, now: float) -> float | None:
    job = run.mig_job
    assert job is not None
    if job["phase"] == "waiting":
        if any(k in run.pods for k in CLIENTS):
            return now + 2
        for pod in world.store.list("pods", world.ns, "app=nvidia-cuda-validator")[0]:
            if pod["spec"].get("nodeName") == run.name:
                world.store.delete("pods", pod["metadata"]["name"], world.ns)
        job.update(phase="applying", since=now)
        return now + APPLY_SECONDS
    if now < float(job["since"]) + APPLY_SECONDS:
        return float(job["since"]) + APPLY_SECONDS
    run.mig_job = None
    if run.mig_fail_next:
        run.mig_fail_next = False
        world.nodeside.log(world.ns, (run.pods.get("mig-manager") or run).name, "nvidia-mig-manager",
                           "Error applying MIG configuration with hooks: error setting MIG mode: "
                           "In use by another client")
        _pause(world, run.name, False)
        _state(world, run.name, "failed")
        return now + 1
    apply_layout(run, str(job["config"]))
    validator = run.pods.get("validator")
    if validator is not None and world.store.get("pods", validator.name, world.ns) is not None:
        world.store.delete("pods", validator.name, world.ns)
    _pause(world, run.name, False)
    _state(world, run.name, "success")
    return now + 1
