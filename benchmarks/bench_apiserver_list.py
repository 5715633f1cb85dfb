"""Benchmark: list 5,000 realistic GPU nodes from the emulated API server over HTTP.

Builds a store with 5,000 nodes labelled as NFD, GFD and the GPU Operator label them (~80
labels each), with capacity, conditions, addresses, nodeInfo and managedFields, serves it on
a loopback port and lists the nodes with plain ``urllib`` (one full list, and ``limit=500``
pages as kubectl and client-go do). Prints requests/s and MB/s; asserts nothing.

    python benchmarks/bench_apiserver_list.py [--nodes 5000] [--rounds 5]
"""

from __future__ import annotations

import argparse
import json
import re
import threading
import time
import urllib.request
from typing import Any

from gputui.sim.cluster import EmulatedCluster
from gputui.sim.version import GIT_VERSION

CONTINUE_RE = re.compile(rb'"continue":"([^"]+)"')
PRODUCTS = ("NVIDIA-H100-80GB-HBM3", "NVIDIA-A100-SXM4-80GB", "NVIDIA-L40S")


def _labels(index: int, name: str) -> dict[str, str]:
    product = PRODUCTS[index % len(PRODUCTS)]
    labels = {
        "kubernetes.io/hostname": name, "kubernetes.io/os": "linux",
        "kubernetes.io/arch": "amd64", "beta.kubernetes.io/os": "linux",
        "beta.kubernetes.io/arch": "amd64", "node.kubernetes.io/instance-type": "p5.48xlarge",
        "topology.kubernetes.io/zone": f"us-east-1{'abc'[index % 3]}",
        "topology.kubernetes.io/region": "us-east-1",
        "nvidia.com/gpu.present": "true", "nvidia.com/gpu.product": product,
        "nvidia.com/gpu.count": "8", "nvidia.com/gpu.memory": "81559",
        "nvidia.com/gpu.family": "hopper", "nvidia.com/gpu.machine": "p5.48xlarge",
        "nvidia.com/gpu.compute.major": "9", "nvidia.com/gpu.compute.minor": "0",
        "nvidia.com/cuda.driver.major": "550", "nvidia.com/cuda.driver.minor": "54",
        "nvidia.com/cuda.driver.rev": "15", "nvidia.com/cuda.runtime.major": "12",
        "nvidia.com/cuda.runtime.minor": "4", "nvidia.com/gfd.timestamp": "1716200000",
        "nvidia.com/gpu.replicas": "1", "nvidia.com/gpu.sharing-strategy": "none",
        "nvidia.com/mig.capable": "true", "nvidia.com/mig.strategy": "single",
        "nvidia.com/mig.config": "all-disabled", "nvidia.com/mig.config.state": "success",
        "nvidia.com/mps.capable": "false", "nvidia.com/vgpu.present": "false",
        "nvidia.com/gpu.deploy.driver": "true", "nvidia.com/gpu.deploy.gpu-feature-discovery":
        "true", "nvidia.com/gpu.deploy.container-toolkit": "true",
        "nvidia.com/gpu.deploy.device-plugin": "true", "nvidia.com/gpu.deploy.dcgm": "true",
        "nvidia.com/gpu.deploy.dcgm-exporter": "true",
        "nvidia.com/gpu.deploy.operator-validator": "true",
        "nvidia.com/gpu.deploy.node-status-exporter": "true",
        "nvidia.com/gpu.deploy.mig-manager": "true",
        "nvidia.com/gpu-driver-upgrade-state": "upgrade-done",
        "feature.node.kubernetes.io/pci-10de.present": "true",
        "feature.node.kubernetes.io/pci-15b3.present": "true",
        "feature.node.kubernetes.io/rdma.available": "true",
        "feature.node.kubernetes.io/rdma.capable": "true",
        "feature.node.kubernetes.io/kernel-version.full": "5.15.0-105-generic",
        "feature.node.kubernetes.io/kernel-version.major": "5",
        "feature.node.kubernetes.io/kernel-version.minor": "15",
        "feature.node.kubernetes.io/kernel-version.revision": "0",
        "feature.node.kubernetes.io/system-os_release.ID": "ubuntu",
        "feature.node.kubernetes.io/system-os_release.VERSION_ID": "22.04",
        "feature.node.kubernetes.io/system-os_release.VERSION_ID.major": "22",
        "feature.node.kubernetes.io/system-os_release.VERSION_ID.minor": "04",
        "feature.node.kubernetes.io/storage-nonrotationaldisk": "true",
        "feature.node.kubernetes.io/memory-numa": "true",
        "feature.node.kubernetes.io/network-sriov.capable": "true",
        "feature.node.kubernetes.io/cpu-model.vendor_id": "AMD",
        "feature.node.kubernetes.io/cpu-model.family": "25",
        "feature.node.kubernetes.io/cpu-model.id": "1",
        "feature.node.kubernetes.io/cpu-hardware_multithreading": "true",
        "feature.node.kubernetes.io/cpu-pstate.status": "active",
        "feature.node.kubernetes.io/cpu-pstate.turbo": "true",
        "feature.node.kubernetes.io/cpu-rdt.RDTCMT": "true",
        "feature.node.kubernetes.io/cpu-security.sev.enabled": "true",
    }
    for flag in ("AVX", "AVX2", "AVX512F", "AVX512BW", "AVX512CD", "AVX512DQ", "AVX512VL",
                 "AVX512VNNI", "FMA3", "SHA", "VAES", "VPCLMULQDQ", "ADX", "AESNI",
                 "CMPXCHG8", "FXSR", "IBPB", "STIBP", "X87", "XSAVE"):
        labels[f"feature.node.kubernetes.io/cpu-cpuid.{flag}"] = "true"
    return labels


def _managed(time_stamp: str) -> list[dict[str, Any]]:
    return [{"manager": manager, "operation": "Update", "apiVersion": "v1",
             "time": time_stamp, "fieldsType": "FieldsV1",
             "fieldsV1": {"f:metadata": {"f:labels": {f"f:{key}": {} for key in keys}}}}
            for manager, keys in (("nfd-master", ("feature.node.kubernetes.io/pci-10de.present",)),
                                  ("gpu-feature-discovery", ("nvidia.com/gpu.product",)),
                                  ("gpu-operator", ("nvidia.com/gpu.deploy.driver",)),
                                  ("kubelet", ("kubernetes.io/hostname",)))]


def make_node(index: int) -> dict[str, Any]:
    """One GPU node as a real cluster with the GPU Operator would store it."""
    name = f"gpu-node-{index:05d}"
    stamp = "2024-05-20T10:00:00Z"
    resources = {"cpu": "192", "memory": "2113412548Ki", "ephemeral-storage": "3750000000Ki",
                 "hugepages-1Gi": "0", "hugepages-2Mi": "0", "pods": "110",
                 "nvidia.com/gpu": "8", "rdma/rdma_shared_device_a": "63"}
    conditions = [{"type": kind, "status": status, "reason": reason, "message": reason,
                   "lastHeartbeatTime": stamp, "lastTransitionTime": stamp}
                  for kind, status, reason in (("MemoryPressure", "False", "KubeletHasSufficientMemory"),
                                               ("DiskPressure", "False", "KubeletHasNoDiskPressure"),
                                               ("PIDPressure", "False", "KubeletHasSufficientPID"),
                                               ("Ready", "True", "KubeletReady"))]
    return {
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": name, "labels": _labels(index, name), "managedFields": _managed(stamp),
                     "annotations": {"node.alpha.kubernetes.io/ttl": "0",
                                     "nfd.node.kubernetes.io/feature-labels": "pci-10de.present",
                                     "volumes.kubernetes.io/controller-managed-attach-detach":
                                     "true"}},
        "spec": {"podCIDR": f"10.{index // 250}.{index % 250}.0/24",
                 "providerID": f"aws:///us-east-1a/i-{index:017x}"},
        "status": {"capacity": resources, "allocatable": resources, "conditions": conditions,
                   "addresses": [{"type": "InternalIP", "address": f"10.1.{index // 250}.{index % 250}"},
                                 {"type": "Hostname", "address": name}],
                   "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
                   "nodeInfo": {"architecture": "amd64", "bootID": f"boot-{index}",
                                "containerRuntimeVersion": "containerd://1.7.13",
                                "kernelVersion": "5.15.0-105-generic",
                                "kubeProxyVersion": GIT_VERSION, "kubeletVersion": GIT_VERSION,
                                "machineID": f"m{index:031x}", "operatingSystem": "linux",
                                "osImage": "Ubuntu 22.04.4 LTS", "systemUUID": f"u{index:035x}"}},
    }


def fetch(url: str) -> tuple[int, dict[str, Any] | None]:
    with urllib.request.urlopen(url, timeout=120) as response:
        body = response.read()
    return len(body), None if len(body) > 1_000_000 else json.loads(body)


def full_list(base: str) -> tuple[int, int]:
    size, _ = fetch(base + "/api/v1/nodes")
    return 1, size


def paged_list(base: str, limit: int = 500) -> tuple[int, int]:
    requests = total = 0
    token = ""
    while True:
        url = f"{base}/api/v1/nodes?limit={limit}" + (f"&continue={token}" if token else "")
        with urllib.request.urlopen(url, timeout=120) as response:
            body = response.read()
        requests += 1
        total += len(body)
        # The list metadata comes first; read the token without decoding 5 MB of items, so
        # the figure measures the server rather than this client's JSON parser.
        match = CONTINUE_RE.search(body[:1024])
        token = match.group(1).decode() if match else ""
        if not token:
            return requests, total


def table_list(base: str) -> tuple[int, int]:
    """What ``kubectl get nodes`` asks for: a meta.k8s.io Table with the objects."""
    request = urllib.request.Request(base + "/api/v1/nodes?limit=500", headers={
        "Accept": "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"})
    with urllib.request.urlopen(request, timeout=120) as response:
        return 1, len(response.read())


def selected_list(base: str) -> tuple[int, int]:
    size, _ = fetch(base + "/api/v1/nodes?labelSelector=nvidia.com%2Fgpu.product%3DNVIDIA-L40S")
    return 1, size


def _watcher(url: str, expected: int, seen: list[int]) -> None:
    """Read watch events until ``expected`` have arrived; count them."""
    count = 0
    with urllib.request.urlopen(url, timeout=300) as response:
        for line in response:
            if line.strip():
                count += 1
            if count >= expected:
                break
    seen.append(count)


def watch_fanout(cluster: EmulatedCluster, watchers: int, changes: int) -> None:
    """``changes`` node label writes fanned out to ``watchers`` streams; events/s delivered."""
    rv = cluster.store.resource_version
    url = f"{cluster.url}/api/v1/nodes?watch=1&resourceVersion={rv}"
    seen: list[int] = []
    threads = [threading.Thread(target=_watcher, args=(url, changes, seen))
               for _ in range(watchers)]
    for thread in threads:
        thread.start()
    time.sleep(0.5)
    started = time.perf_counter()
    for index in range(changes):
        name = f"gpu-node-{index % 5000:05d}"
        cluster.store.mutate("nodes", name, None, lambda o, i=index: o["metadata"]["labels"]
                             .__setitem__("bench/tick", str(i)))
    for thread in threads:
        thread.join()
    elapsed = time.perf_counter() - started
    total = sum(seen)
    print(f"watch fan-out {watchers}x{changes:<9} {total / elapsed:8.0f} events/s "
          f"({total} events in {elapsed:.2f}s)")


def report(label: str, run: Any, base: str, rounds: int) -> None:
    started = time.perf_counter()
    requests = total = 0
    for _ in range(rounds):
        count, size = run(base)
        requests += count
        total += size
    elapsed = time.perf_counter() - started
    print(f"{label:<28} {requests / elapsed:8.1f} req/s {total / elapsed / 1e6:8.1f} MB/s "
          f"({requests} requests, {total / 1e6:.1f} MB in {elapsed:.2f}s)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    with EmulatedCluster(run_controllers=False) as cluster:
        started = time.perf_counter()
        cluster.store.bulk_create("nodes", (make_node(i) for i in range(args.nodes)))
        labels = len(make_node(0)["metadata"]["labels"])
        print(f"stored {args.nodes} nodes ({labels} labels each) in "
              f"{time.perf_counter() - started:.1f}s")
        report("full list, cold cache", full_list, cluster.url, 1)
        report("full list, warm", full_list, cluster.url, args.rounds)
        report("limit=500 pages, warm", paged_list, cluster.url, args.rounds)
        report("Table, first 500 rows", table_list, cluster.url, args.rounds * 4)
        report("labelSelector (1/3 match)", selected_list, cluster.url, args.rounds)
        watch_fanout(cluster, watchers=20, changes=1000)


if __name__ == "__main__":
    main()
