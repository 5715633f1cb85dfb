"""The ``nvidia-cuda-validator-xxxxx`` pod that ``cuda-validation`` launches (§1.3).

As gpu-operator ``cmd/nvidia-validator/main.go`` does: each run of ``cuda-validation``
deletes the previous pod and creates a new one bound to the node (``spec.nodeName``, so no
scheduler and no taint is involved), with the validator DaemonSet's tolerations and no GPU
request, then polls it every 5 s, 60 times, for ``Succeeded``; after that it gives up ("gave
up waiting for pod ... to be available"), exits 1 and the kubelet restarts the init container
(``Init:CrashLoopBackOff``). A stuck validator (scenario ``validator-stuck``) is what stops
such a pod for real: its container cannot start because the NVIDIA runtime hook finds no
working driver, so the pod stays Pending in ``Init:RunContainerError``.
"""

from __future__ import annotations

from typing import Any

from gputui.sim.operator import keys as K
from gputui.sim.operator.operands import IMAGES
from gputui.sim.operator.runtime import NodeRun, PodRun
from gputui.sim.operator.world import World

RUN_SECONDS = 8.0
#: podCreationWaitRetries x podCreationSleepIntervalSeconds in cmd/nvidia-validator/main.go
WAIT_RETRIES = 60
WAIT_INTERVAL = 5.0
VALIDATOR_DS = "nvidia-operator-validator"
#: what containerd answers when the NVIDIA runtime's hook finds no working driver
HOOK_ERROR = ("failed to create containerd task: failed to create shim task: OCI runtime create "
              "failed: runc create failed: unable to start container process: error during "
              "container init: error running prestart hook #0: exit status 1, stdout: , "
              "stderr: nvidia-container-cli: initialization error: nvml error: driver not "
              "loaded: unknown")


def launch(world: World, node: NodeRun, run: PodRun, now: float) -> str:
    """A new run of ``cuda-validation``: delete the last pod, create a fresh one; its name."""
    if run.child and world.store.get("pods", run.child, world.ns) is not None:
        world.store.delete("pods", run.child, world.ns)
    run.child = world.pod_name("nvidia-cuda-validator-")
    run.child_started = now
    world.store.create("pods", _pod(world, node, run), manager=K.M_VALIDATOR)
    world.pod_index[run.child] = (node.name, "cuda-validator")
    return run.child


def ensure(world: World, node: NodeRun, run: PodRun, now: float) -> str:
    """Move this run's CUDA validator pod along (creating it if it is gone); its name."""
    if not run.child or world.store.get("pods", run.child, world.ns) is None:
        return launch(world, node, run, now)
    pod = world.store.get("pods", run.child, world.ns) or {}
    phase = pod.get("status", {}).get("phase")
    if node.validator_stuck:
        if not pod.get("status", {}).get("initContainerStatuses"):
            _set(world, run.child, _hook_failing(world, node, run))
    elif phase == "Pending" and now >= run.child_started + 2:
        _set(world, run.child, _status(world, node, run, "Running"))
    elif phase == "Running" and now >= run.child_started + RUN_SECONDS:
        world.nodeside.log(world.ns, run.child, "nvidia-cuda-validator", "cuda workload validation is successful")
        _set(world, run.child, _status(world, node, run, "Succeeded"))
    return run.child


def converged(world: World, node: NodeRun, run: PodRun, now: float) -> None:
    """The Succeeded validator pod a finished ``cuda-validation`` leaves behind."""
    run.child = world.pod_name("nvidia-cuda-validator-")
    run.child_started = now - RUN_SECONDS
    pod = _pod(world, node, run)
    pod["status"] = _status(world, node, run, "Succeeded")
    world.store.create("pods", pod, manager=K.M_VALIDATOR, adopt=True)
    world.pod_index[run.child] = (node.name, "cuda-validator")


def _set(world: World, name: str, status: dict[str, Any]) -> None:
    def change(pod: dict[str, Any]) -> None:
        pod["status"] = status
    world.store.mutate("pods", name, world.ns, change, manager=K.M_KUBELET)


def _pod(world: World, node: NodeRun, run: PodRun) -> dict[str, Any]:
    owner = world.store.get("pods", run.name, world.ns) or {"metadata": {"name": run.name, "uid": ""}}
    image = IMAGES["validator"]
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": run.child, "namespace": world.ns,
                         "labels": {"app": "nvidia-cuda-validator"},
                         "ownerReferences": [{"apiVersion": "v1", "kind": "Pod",
                                              "name": run.name,
                                              "uid": owner["metadata"].get("uid", ""),
                                              "controller": True}]},
            "spec": {"nodeName": node.name, "restartPolicy": "OnFailure",
                     "runtimeClassName": "nvidia", "priorityClassName": "system-node-critical",
                     "tolerations": _tolerations(world),
                     "initContainers": [{"name": "cuda-validation", "image": image,
                                         "command": ["sh", "-c"], "args": ["vectorAdd"]}],
                     "containers": [{"name": "nvidia-cuda-validator", "image": image,
                                     "command": ["sh", "-c"],
                                     "args": ["echo cuda workload validation is successful"]}]},
            "status": {"phase": "Pending", "qosClass": "BestEffort",
                       "conditions": [{"type": "PodScheduled", "status": "True"}]}}


def _status(world: World, node: NodeRun, run: PodRun, phase: str) -> dict[str, Any]:
    rfc = world.clock.rfc3339
    start, end = rfc(run.child_started), rfc(world.clock.now())
    done = phase == "Succeeded"
    term = {"terminated": {"exitCode": 0, "reason": "Completed", "startedAt": start, "finishedAt": end}}
    main_state = term if done else {"running": {"startedAt": end}}
    return {"phase": phase, "hostIP": node.ip, "podIP": "", "startTime": start,
            "qosClass": "BestEffort",
            "conditions": [{"type": "Initialized", "status": "True"},
                           {"type": "Ready", "status": "False" if done else "True",
                            **({"reason": "PodCompleted"} if done else {})},
                           {"type": "PodScheduled", "status": "True"}],
            "initContainerStatuses": [{"name": "cuda-validation", "ready": True, "restartCount": 0,
                                       "image": IMAGES["validator"], "imageID": IMAGES["validator"], "state": term}],
            "containerStatuses": [{"name": "nvidia-cuda-validator", "ready": not done,
                                   "restartCount": 0, "image": IMAGES["validator"], "imageID": IMAGES["validator"],
                                   "state": main_state}]}


def _tolerations(world: World) -> list[dict[str, Any]]:
    """The validator DaemonSet's tolerations, copied as upstream copies them to the pod."""
    ds = world.store.get("daemonsets.apps", VALIDATOR_DS, world.ns) or {}
    found = ((ds.get("spec") or {}).get("template") or {}).get("spec", {}).get("tolerations")
    return [dict(t) for t in found] if isinstance(found, list) else [dict(K.TOLERATION_GPU)]


def _hook_failing(world: World, node: NodeRun, run: PodRun) -> dict[str, Any]:
    """Bound and scheduled, but ``cuda-validation`` cannot start: the runtime hook fails."""
    image = IMAGES["validator"]
    waiting = {"waiting": {"reason": "RunContainerError", "message": HOOK_ERROR}}
    return {"phase": "Pending", "hostIP": node.ip, "podIP": "",
            "startTime": world.clock.rfc3339(run.child_started), "qosClass": "BestEffort",
            "conditions": [{"type": "Initialized", "status": "False",
                            "reason": "ContainersNotInitialized",
                            "message": "containers with incomplete status: [cuda-validation]"},
                           {"type": "Ready", "status": "False", "reason": "ContainersNotReady",
                            "message": "containers with unready status: [nvidia-cuda-validator]"},
                           {"type": "PodScheduled", "status": "True"}],
            "initContainerStatuses": [{"name": "cuda-validation", "ready": False, "restartCount": 0,
                                       "image": image, "imageID": "", "state": waiting}],
            "containerStatuses": [{"name": "nvidia-cuda-validator", "ready": False,
                                   "restartCount": 0, "image": image, "imageID": "",
                                   "state": {"waiting": {"reason": "PodInitializing"}}}]}
