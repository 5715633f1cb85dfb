"""The ``nvidia-cuda-validator-xxxxx`` pod that ``cuda-validation`` launches (§1.3).

It runs ``vectorAdd`` once (restartPolicy OnFailure) and Succeeds; a stuck validator
(scenario ``validator-stuck``) leaves it Pending, unschedulable, so ``cuda-validation`` never
completes — what an operator sees when taints or a broken runtime block the workload.
"""

from __future__ import annotations

from typing import Any

from gputui.sim.operator import keys as K
from gputui.sim.operator.operands import IMAGES
from gputui.sim.operator.runtime import NodeRun, PodRun
from gputui.sim.operator.world import World

RUN_SECONDS = 8.0


def ensure(world: World, node: NodeRun, run: PodRun, now: float) -> str:
    """Create the CUDA validator pod once per validator run and move it along; its name."""
    if not run.child or world.store.get("pods", run.child, world.ns) is None:
        run.child = world.pod_name("nvidia-cuda-validator-")
        run.child_started = now
        world.store.create("pods", _pod(world, node, run), manager=K.M_VALIDATOR)
        world.pod_index[run.child] = (node.name, "cuda-validator")
        return run.child
    pod = world.store.get("pods", run.child, world.ns) or {}
    phase = pod.get("status", {}).get("phase")
    if node.validator_stuck:
        _set(world, run.child, _pending_unschedulable(world))
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
                     "tolerations": [dict(K.TOLERATION_GPU)],
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


def _pending_unschedulable(world: World) -> dict[str, Any]:
    return {"phase": "Pending", "qosClass": "BestEffort",
            "conditions": [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
                            "message": "0/1 nodes are available: 1 node(s) had untolerated taint "
                                       "{node.kubernetes.io/unschedulable: }. preemption: 0/1 "
                                       "nodes are available: 1 Preemption is not helpful for scheduling.",
                            "lastTransitionTime": world.clock.rfc3339()}]}
