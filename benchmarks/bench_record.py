"""Benchmark: recording an hour of a 5,000-node cluster, and seeking in the recording.

Builds the same synthetic 5,000-node cluster as ``bench_snapshot.py`` (pods read into
PodInfo, as the live cache hands them), then plays an emulated hour through the real
:class:`TapeWriter`, one build per emulated second, each build changed as a busy cluster
changes it:

* kubelet status reports: every node's conditions get a new ``lastHeartbeatTime`` every
  5 minutes (``nodeStatusReportFrequency``), staggered, ~17 nodes a second;
* a rolling driver upgrade over the hour: every node walks the 9 upgrade states 30 s
  apart (label and its label time), is cordoned and uncordoned, and its driver pod is
  replaced by one with a new name;
* a crash-looping pod restarts every 10 s;
* a metrics reading every 2 s: 40 visible nodes' utilisation and the selected node's 8 GPUs
  with 120-sample windows of 5 traces (the selection moves every 5 minutes).

Prints the file size (target < 50 MB), the writer's CPU per frame (the caller's copy plus
the writer thread's diff, encoding and compression, measured as process CPU while the
caller waits for it), the reader's open time, and ``objects_at`` over random times (target
well under 1 s); timings as min / median / max. Asserts nothing.

    python benchmarks/bench_record.py [--nodes 5000] [--minutes 60] [--seeks 200]
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

from bench_snapshot import make_objects

from gputui import gctuning
from gputui.domain.inputs import ClusterObjects
from gputui.domain.metrics import (
    FleetMetrics,
    GpuMetrics,
    MetricsOrigin,
    MetricsReading,
    MetricsWant,
    NodeMetrics,
)
from gputui.domain.pods import read_pod
from gputui.sources.tape.reader import TapeReader
from gputui.sources.tape.writer import TapeWriter
from tests.domain import factory as f

STATES = ("upgrade-required", "cordon-required", "wait-for-jobs-required",
          "pod-deletion-required", "drain-required", "pod-restart-required",
          "validation-required", "uncordon-required", "upgrade-done")
STATE_LABEL = "nvidia.com/gpu-driver-upgrade-state"
Json = dict[str, Any]


class Cluster:
    """The live mappings a cache would hold, changed in place between builds (objects are
    replaced, never changed: the writer's identity test relies on it, as the builder's)."""

    def __init__(self, count: int) -> None:
        base = make_objects(count)
        self.t0 = f.T0
        self.nodes: dict[str, Json] = {n: _unique(node, i) for i, (n, node)
                                       in enumerate(base.nodes.items())}
        self.raw: dict[tuple[str, str], Json] = dict(base.pods)  # type: ignore[arg-type]
        self.pods = {k: read_pod(v) for k, v in self.raw.items()}
        self.times = {k: dict(v) for k, v in base.label_times.items()}
        self.base = base
        self.names = sorted(self.nodes)
        self.crasher = next(k for k in self.raw if k[1].startswith("trainer"))
        self.spacing = 3600.0 * 0.9 / count
        self.drivers = {p["spec"]["nodeName"]: k for k, p in self.raw.items()
                        if k[1].startswith("nvidia-driver")}

    def objects(self) -> ClusterObjects:
        b = self.base
        return ClusterObjects(nodes=self.nodes, pods=self.pods, daemonsets=b.daemonsets,
                              cluster_policies=b.cluster_policies, configmaps=b.configmaps,
                              events=b.events, label_times=self.times,
                              operator_namespace=b.operator_namespace, context="bench",
                              server="https://bench")

    def second(self, t: int) -> None:
        """What changes in emulated second ``t``."""
        now = self.t0 + t
        for index in range(t % 300, len(self.names), 300):
            self._heartbeat(self.names[index], now)
        first = max(0, int((t - 8 * 30) / self.spacing))
        last = min(len(self.names) - 1, int(t / self.spacing))
        for index in range(first, last + 1):
            step, rest = divmod(t - index * self.spacing, 30.0)
            if 0 <= rest < 1.0 and 0 <= step < len(STATES):
                self._upgrade(self.names[index], int(step), now)
        if t % 10 == 0:
            self._restart(self.crasher)

    def _node(self, name: str) -> Json:
        node = dict(self.nodes[name])
        node["metadata"] = dict(node["metadata"])
        node["metadata"]["resourceVersion"] = str(int(node["metadata"]["resourceVersion"]) + 1)
        self.nodes[name] = node
        return node

    def _heartbeat(self, name: str, now: float) -> None:
        node = self._node(name)
        status = node["status"] = dict(node["status"])
        status["conditions"] = [{**c, "lastHeartbeatTime": f.iso(now)}
                                for c in status["conditions"]]

    def _upgrade(self, name: str, step: int, now: float) -> None:
        node = self._node(name)
        node["metadata"]["labels"] = {**node["metadata"]["labels"], STATE_LABEL: STATES[step]}
        self.times[name] = {**self.times.get(name, {}), STATE_LABEL: now}
        if STATES[step] in ("cordon-required", "uncordon-required"):
            node["spec"] = {**node.get("spec", {}),
                            "unschedulable": STATES[step] == "cordon-required"}
        if STATES[step] == "pod-restart-required":
            key = self.drivers[name]
            pod = dict(self.raw.pop(key))
            del self.pods[key]
            pod["metadata"] = {**pod["metadata"], "name": f"nvidia-driver-daemonset-u{step}"
                               f"{name[-5:]}", "resourceVersion": str(int(now))}
            new = (key[0], pod["metadata"]["name"])
            self.raw[new], self.pods[new] = pod, read_pod(pod)
            self.drivers[name] = new

    def _restart(self, key: tuple[str, str]) -> None:
        pod = dict(self.raw[key])
        status = pod["status"] = dict(pod["status"])
        status["containerStatuses"] = [{**c, "restartCount": c.get("restartCount", 0) + 1}
                                       for c in status.get("containerStatuses", [])]
        pod["metadata"] = {**pod["metadata"], "resourceVersion": str(int(time.time() * 1e6))}
        self.raw[key], self.pods[key] = pod, read_pod(pod)


def _unique(node: Json, index: int) -> Json:
    """What differs between two real nodes of a pool besides the name (the factory's are
    otherwise identical, which gzip would compress better than any real cluster): ids,
    addresses, provider id, boot and machine ids, creation time."""
    rng = random.Random(index)
    ident = {k: uuid.UUID(int=rng.getrandbits(128)).hex for k in
             ("uid", "machineID", "systemUUID", "bootID")}
    ip = f"10.{index // 250 % 250}.{index % 250}.{rng.randrange(2, 250)}"
    node = {**node, "metadata": {**node["metadata"], "uid": ident["uid"],
                                  "creationTimestamp": f.iso(f.T0 - rng.randrange(10**7))}}
    node["spec"] = {**node.get("spec", {}), "podCIDR": f"10.{index % 250}.{index // 250}.0/24",
                    "providerID": f"gce://prod/us-central1-a/{node['metadata']['name']}"}
    status = node["status"] = dict(node["status"])
    status["addresses"] = [{"type": "InternalIP", "address": ip},
                           {"type": "Hostname", "address": node["metadata"]["name"]}]
    status["nodeInfo"] = {**status.get("nodeInfo", {}),
                          **{k: v for k, v in ident.items() if k != "uid"}}
    return node


def reading(cluster: Cluster, t: int) -> MetricsReading:
    """What the metrics pane reads every 2 s on a screenful of nodes."""
    now = cluster.t0 + t
    top = (t // 300) * 40 % len(cluster.names)
    visible = cluster.names[top:top + 40]
    selected = visible[0]
    window = [now - 2.0 * i for i in range(119, -1, -1)]
    gpus = tuple(GpuMetrics(
        gpu, model="NVIDIA H100 80GB HBM3", fb_total=81559.0, power_limit=700.0,
        util=tuple((s, float((int(s) * 7 + gpu) % 101)) for s in window),
        fb_used=tuple((s, 40000.0 + (int(s) % 97) * 10) for s in window),
        temp=tuple((s, 50.0 + (int(s) + gpu) % 30) for s in window),
        power=tuple((s, 300.0 + (int(s) * 3 + gpu) % 350) for s in window),
        sm_clock=tuple((s, 1980.0) for s in window)) for gpu in range(8))
    return MetricsReading(
        MetricsOrigin("prometheus", "http://prometheus:9090", now),
        FleetMetrics("fleet", len(cluster.names) * 8, 30000, 61.5, (selected, 3, 79.0), 2),
        NodeMetrics(selected, gpus), {n: float(hash(n) % 100) for n in visible})


def spread(values: list[float]) -> str:
    return (f"min {min(values):8.2f}  median {statistics.median(values):8.2f}  "
            f"max {max(values):8.2f}")


def record(cluster: Cluster, path: Path, minutes: int,
           **options: Any) -> tuple[list[float], list[float]]:
    """The emulated hour through the writer; CPU ms of each delta frame and keyframe."""
    writer = TapeWriter(path, context="bench", server="https://bench", **options)
    deltas: list[float] = []
    keys: list[float] = []
    for t in range(minutes * 60):
        if t:
            cluster.second(t)
        frames, keyframes = writer.frames, writer.keyframes
        metrics = reading(cluster, t) if t % 2 == 0 else None
        cpu = time.process_time()
        writer.objects(cluster.objects(), cluster.t0 + t)
        if metrics is not None:
            writer.metrics(metrics, cluster.t0 + t)
        writer.drain(60.0)
        spent = (time.process_time() - cpu) * 1000
        if writer.frames > frames:
            (keys if writer.keyframes > keyframes else deltas).append(spent)
        if t % 600 == 599:
            print(f"  {t + 1} s recorded, {path.stat().st_size / 1e6:.1f} MB", flush=True)
    writer.close()
    return deltas, keys


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--minutes", type=int, default=60)
    parser.add_argument("--seeks", type=int, default=200)
    args = parser.parse_args()
    started = time.perf_counter()
    cluster = Cluster(args.nodes)
    gctuning.freeze()  # as the app does once a big cluster is loaded (gctuning.BigHeap)
    print(f"cluster: {len(cluster.nodes)} nodes, {len(cluster.pods)} pods "
          f"({time.perf_counter() - started:.1f} s to make)")
    path = Path(tempfile.mkdtemp(prefix="gputui-bench-")) / "hour.gputui-rec"
    deltas, keys = record(cluster, path, args.minutes)
    size = path.stat().st_size
    print(f"recording: {size / 1e6:.1f} MB for {args.minutes} emulated minutes "
          f"({len(deltas)} delta frames, {len(keys)} keyframes)")
    print(f"writer CPU per delta frame, ms:    {spread(deltas)}")
    print(f"writer CPU per keyframe, ms:       {spread(keys)}")
    opens: list[float] = []
    for _ in range(3):
        begin = time.perf_counter()
        reader = TapeReader.open(path)
        opens.append(time.perf_counter() - begin)
    print(f"reader open, s:                    {spread(opens)}")
    rng = random.Random(7)
    seeks: list[float] = []
    metric_seeks: list[float] = []
    for _ in range(args.seeks):
        at = rng.uniform(reader.start, reader.end)
        begin = time.perf_counter()
        objects = reader.objects_at(at)
        seeks.append((time.perf_counter() - begin) * 1000)
        begin = time.perf_counter()
        reader.metrics_at(at, MetricsWant(selected=next(iter(objects.nodes))))
        metric_seeks.append((time.perf_counter() - begin) * 1000)
    print(f"objects_at over {args.seeks} random times, ms: {spread(seeks)}")
    print(f"metrics_at over {args.seeks} random times, ms: {spread(metric_seeks)}")
    path.unlink()


if __name__ == "__main__":
    main()
