"""Benchmark: the domain snapshot builder on an incident-sized cluster (5,000 GPU nodes).

Builds realistic :class:`~gputui.domain.inputs.ClusterObjects` synthetically, from the same
helpers the domain tests use (``tests/domain/factory.py``): ~80 labels per node, the operand
pods of each node (driver, toolkit, validator, device plugin, GFD, dcgm-exporter, mig-manager
on MIG nodes, the completed CUDA validator), GPU workload pods, one DaemonSet per operand, a
ClusterPolicy, the MIG ConfigMap, a rolling driver upgrade and a few sick nodes. Then times:

* full build: a fresh builder, every node (the first snapshot, ``gputui check``);
* one node changed: one node's labels and one of its pods replaced by newer versions, as a
  watch delivers them (``changed_nodes={that node}``);
* one node, pod recreated: its driver pod deleted and a successor with a new name added;
* nothing changed (``changed_nodes=set()``);
* a full rebuild by a warm builder (``changed_nodes=None``, the periodic resync);

each the median of ``--rounds`` runs (wall and CPU time: the machine may be shared), and the
peak traced memory of one full build. Targets: full build well under 1.5 s, one node under
20 ms, nothing changed under 5 ms. Asserts nothing (tests never time anything).

    python benchmarks/bench_snapshot.py [--nodes 5000] [--rounds 3] [--profile out.prof]
"""

from __future__ import annotations

import argparse
import asyncio
import copy
import cProfile
import pickle
import statistics
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from gputui import gctuning
from gputui.domain.inputs import ClusterObjects
from gputui.domain.snapshot import SnapshotBuilder
from tests.domain import factory as f

Json = dict[str, Any]
NOW = f.T0
MIG_EVERY = 3          # every third node is a MIG node (mig-manager pod, MIG labels)
EXTRA_LABELS = 41      # on top of the fixture's 39: ~80 labels, as NFD leaves them


def build(builder: SnapshotBuilder, objects: ClusterObjects, now: float,
          changed_nodes: set[str] | None = None) -> Any:
    """One build as the product's callers make it: the collector paused around it."""
    with gctuning.paused():
        return builder.build(objects, now, changed_nodes=changed_nodes)


def _labels(index: int, mig: bool) -> Json:
    labels: Json = {f"feature.node.kubernetes.io/cpu-cpuid.FEATURE{i:02d}": "true"
                    for i in range(EXTRA_LABELS - 4)}
    labels.update({"topology.kubernetes.io/zone": f"us-central1-{'abc'[index % 3]}",
                   "cloud.google.com/gke-nodepool": f"h100-pool-{index % 20}",
                   "nvidia.com/gfd.timestamp": str(1764324300 + index),
                   "node.kubernetes.io/rack": f"rack-{index // 40}"})
    if mig:
        labels["nvidia.com/mig.config"] = "all-1g.10gb" if index % 2 else "all-disabled"
    else:
        labels["nvidia.com/mig.capable"] = "false"
        labels["nvidia.com/mig.config"] = None
        labels["nvidia.com/mig.config.state"] = None
    if index % 97 == 0:
        labels["nvidia.com/gpu-driver-upgrade-state"] = "upgrade-required"
    elif index % 211 == 0:
        labels["nvidia.com/gpu-driver-upgrade-state"] = "wait-for-jobs-required"
    return labels


def _node_pods(name: str, index: int, mig: bool) -> list[Json]:
    operands = [op for op in f.CORE if mig or op != "mig-manager"]
    overrides: dict[str, dict[str, Any]] = {}
    if index % 250 == 1:
        overrides["driver"] = {"crash_in": "nvidia-driver-ctr", "restarts": 14,
                               "message": "Could not resolve Linux kernel version"}
        overrides["operator-validator"] = {"stuck_in": "driver-validation"}
    elif index % 250 == 2:
        overrides["operator-validator"] = {"stuck_in": "cuda-validation",
                                           "stuck_since": NOW - 3600}
    pods = f.healthy_pods(name, operands, overrides)
    cuda = copy.deepcopy(_CUDA)
    cuda["metadata"]["name"] = f"nvidia-cuda-validator-{name[-6:]}"
    cuda["spec"]["nodeName"] = name
    pods.append(cuda)
    for slot in range(1 + index % 2):
        pods.append(_workload(f"trainer-{index}-{slot}", name, 4, NOW - 7200 * (slot + 1)))
    return pods


def _workload(name: str, node: str, gpus: int, start: float) -> Json:
    pod = copy.deepcopy(_TRAINER)
    pod["metadata"].update(name=name, namespace="ml", resourceVersion="1")
    pod["metadata"]["labels"] = {"app": "trainer", "team": "llm"}
    pod["spec"]["nodeName"] = node
    pod["spec"]["containers"][0]["resources"] = {"limits": {"nvidia.com/gpu": str(gpus)}}
    pod["status"]["startTime"] = f.iso(start)
    return pod


def _completed_cuda_validator() -> Json:
    pod = f.load("pod-cuda-validator-pending.json")
    pod["status"] = {"phase": "Succeeded", "startTime": f.iso(NOW - 86400),
                     "containerStatuses": [{"name": "nvidia-cuda-validator", "ready": False,
                                            "restartCount": 0, "state": {"terminated": {
                                                "exitCode": 0, "reason": "Completed"}}}]}
    return pod


_TRAINER = f.load("pod-workload-trainer.json")
_CUDA = _completed_cuda_validator()


def make_objects(count: int) -> ClusterObjects:
    """A ``count``-node cluster in the middle of a rolling driver upgrade."""
    template = f.node("template")
    nodes: list[Json] = []
    pods: list[Json] = []
    times: dict[str, dict[str, float]] = {}
    for index in range(count):
        name = f"gke-prod-h100-pool-{index:05d}"
        mig = index % MIG_EVERY == 0
        node = f.merge(template, {"metadata": {"name": name, "labels": _labels(index, mig),
                                               "resourceVersion": str(1000 + index)}})
        node["metadata"]["labels"]["kubernetes.io/hostname"] = name
        nodes.append(node)
        pods.extend(_node_pods(name, index, mig))
        times[name] = {"nvidia.com/gpu-driver-upgrade-state": NOW - 3600 * (index % 5)}
    for rv, pod in enumerate(pods):
        pod["metadata"].setdefault("resourceVersion", str(100000 + rv))
    policy = f.cluster_policy(**f.upgrade_policy(autoUpgrade=True, maxParallelUpgrades=4,
                                                 maxUnavailable="25%"))
    daemonsets = [f.daemonset(f.OPERAND_PODS[op][0], count) for op in f.CORE]
    return f.objects(nodes, pods, policies=[policy], daemonsets=daemonsets,
                     configmaps=[f.load("configmap-default-mig-parted-config.json")],
                     label_times=times)


def capture_scenario(name: str) -> tuple[ClusterObjects, float]:
    """The emulated cluster of scenario ``name`` once converged, reduced as the live cache
    reduces what it lists; cached in a temp file (building scale-5000 takes a while)."""
    path = Path(tempfile.gettempdir()) / f"gputui-bench-{name}.pickle"
    if path.exists():
        captured: tuple[ClusterObjects, float] = pickle.loads(path.read_bytes())
        return captured
    captured = asyncio.run(_capture(name))
    path.write_bytes(pickle.dumps(captured))
    return captured


async def _capture(name: str) -> tuple[ClusterObjects, float]:
    from gputui.sim.clock import SimClock
    from gputui.sim.nodeside import NodeSide
    from gputui.sim.operator import Operator
    from gputui.sim.scenario import load_scenario
    from gputui.sim.store import Store
    from gputui.sources import decode as D
    from gputui.sources import reduce as R
    from gputui.sources.cache import ObjectCache

    clock = SimClock(speed=1.0)
    store = Store(clock)
    operator = Operator(store, clock, NodeSide(), load_scenario(name))
    await operator.start()
    ns = f.NS
    cache = ObjectCache()
    cache.replace("nodes", [D.reduce_node(n) for n in store.list("nodes")[0]])
    pods = store.list("pods")[0]
    cache.replace("pods", [D.reduce_operator_pod(p) for p in pods
                           if p["metadata"].get("namespace") == ns])
    cache.replace("gpu-pods", [r for r in (D.reduce_gpu_pod(p) for p in pods
                                           if p["metadata"].get("namespace") != ns) if r])
    for slot, resource in (("daemonsets", "daemonsets.apps"),
                           ("clusterpolicies", "clusterpolicies.nvidia.com")):
        cache.replace(slot, [R.reduce_plain(o) for o in store.list(resource)[0]
                             if o["metadata"].get("namespace") in (ns, None)])
    cache.replace("configmaps", [R.reduce_configmap(c) for c in store.list("configmaps", ns)[0]])
    now = clock.now()
    await operator.stop()
    return cache.objects(operator_namespace=ns, context=name, server="emulated"), now


def one_node_changed(objects: ClusterObjects, name: str) -> ClusterObjects:
    """``objects`` with ``name``'s Node relabelled and its driver pod restarted once, both
    replaced by new dicts with a new resourceVersion, as the watch cache hands them over."""
    node = copy.deepcopy(objects.nodes[name])
    node["metadata"]["labels"]["nvidia.com/gpu-driver-upgrade-state"] = "cordon-required"
    node["metadata"]["resourceVersion"] = str(int(node["metadata"]["resourceVersion"]) + 10**7)
    key = next(k for k, p in objects.pods.items()
               if p["spec"].get("nodeName") == name and k[1].startswith("nvidia-driver"))
    pod = copy.deepcopy(objects.pods[key])
    pod["status"]["containerStatuses"][0]["restartCount"] += 1
    pod["metadata"]["resourceVersion"] = "99999999"
    nodes = dict(objects.nodes)
    nodes[name] = node
    pods = dict(objects.pods)
    pods[key] = pod
    return ClusterObjects(
        nodes=nodes, pods=pods, daemonsets=dict(objects.daemonsets),
        cluster_policies=objects.cluster_policies, configmaps=dict(objects.configmaps),
        events=objects.events, label_times=dict(objects.label_times),
        operator_namespace=objects.operator_namespace, context=objects.context,
        server=objects.server)


def pod_recreated(objects: ClusterObjects, name: str, round_: int) -> ClusterObjects:
    """``objects`` with ``name``'s driver pod deleted and its successor (a new name) added
    last, as a DaemonSet recreating the pod shows up in the cache."""
    key = next(k for k, p in objects.pods.items()
               if p["spec"].get("nodeName") == name and k[1].startswith("nvidia-driver"))
    pod = copy.deepcopy(objects.pods[key])
    pod["metadata"]["name"] = f"nvidia-driver-daemonset-r{round_}"
    pod["metadata"]["resourceVersion"] = str(10**8 + round_)
    pods = {k: p for k, p in objects.pods.items() if k != key}
    pods[(key[0], pod["metadata"]["name"])] = pod
    return ClusterObjects(
        nodes=objects.nodes, pods=pods, daemonsets=objects.daemonsets,
        cluster_policies=objects.cluster_policies, configmaps=objects.configmaps,
        events=objects.events, label_times=objects.label_times,
        operator_namespace=objects.operator_namespace, context=objects.context,
        server=objects.server)


def median_ms(run: Callable[[], object], rounds: int) -> tuple[float, float, list[float]]:
    """Median wall and CPU milliseconds of ``run``, and every wall timing.

    CPU time is printed next to wall time because the machine is shared: wall time there
    includes waiting for a core, CPU time does not.
    """
    wall, cpu = [], []
    for _ in range(rounds):
        began, began_cpu = time.perf_counter(), time.process_time()
        run()
        wall.append((time.perf_counter() - began) * 1000.0)
        cpu.append((time.process_time() - began_cpu) * 1000.0)
    return statistics.median(wall), statistics.median(cpu), wall


def _row(label: str, result: tuple[float, float, list[float]]) -> None:
    wall, cpu, all_ms = result
    runs = ", ".join(f"{ms:.1f}" for ms in all_ms)
    print(f"{label:<34} {wall:9.1f} ms wall {cpu:9.1f} ms cpu   (wall runs: {runs})")


def main() -> None:
    """Build the cluster once, then time the builder."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--profile", help="write a cProfile of one full build here")
    parser.add_argument("--scenario", help="capture this emulated scenario (e.g. scale-5000) "
                        "instead of the synthetic cluster")
    args = parser.parse_args()
    began = time.perf_counter()
    now = NOW
    if args.scenario:
        objects, now = capture_scenario(args.scenario)
    else:
        objects = make_objects(args.nodes)
    changed_name = sorted(objects.nodes)[len(objects.nodes) // 2]
    changed = one_node_changed(objects, changed_name)
    print(f"{len(objects.nodes)} nodes, {len(objects.pods)} pods, "
          f"{sum(len(n['metadata']['labels']) for n in objects.nodes.values()) // len(objects.nodes)}"
          f" labels/node (made in {time.perf_counter() - began:.1f} s)")
    if args.profile:
        cProfile.runctx("build(SnapshotBuilder(), objects, now)", globals(), locals(),
                        args.profile)
        print(f"profile written to {args.profile}")
        return
    snap = build(SnapshotBuilder(), objects, now)  # warm imports and caches of the process
    print(f"findings {len(snap.findings)}, upgrade lanes { {k: len(v) for k, v in snap.upgrade.lanes.items()} }")
    _row("full build (fresh builder)", median_ms(
        lambda: build(SnapshotBuilder(), objects, now), args.rounds))
    warm = SnapshotBuilder()
    build(warm, objects, now)
    last = [objects]

    def one_node() -> None:
        last[0] = changed if last[0] is objects else objects
        build(warm, last[0], now, changed_nodes={changed_name})

    _row("one node changed", median_ms(one_node, args.rounds))
    chain = [last[0]]
    for round_ in range(args.rounds):
        chain.append(pod_recreated(chain[-1], changed_name, round_))
    steps = iter(chain[1:])

    def recreated() -> None:
        last[0] = next(steps)
        build(warm, last[0], now, changed_nodes={changed_name})

    _row("one node, pod recreated", median_ms(recreated, args.rounds))
    _row("nothing changed", median_ms(
        lambda: build(warm, last[0], now, changed_nodes=set()), args.rounds))
    _row("full rebuild, warm builder (None)", median_ms(
        lambda: build(warm, last[0], now, changed_nodes=None), args.rounds))
    tracemalloc.start()
    build(SnapshotBuilder(), objects, now)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    print(f"{'peak traced memory, full build':<34} {peak / 2**20:10.1f} MiB")


if __name__ == "__main__":
    main()
