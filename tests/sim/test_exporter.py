"""dcgm-exporter: valid Prometheus text with real labels, through the pod proxy and loopback."""

from __future__ import annotations

import json
import subprocess
import urllib.request
from pathlib import Path
from typing import Any

from kubernetes.client.exceptions import ApiException

from tests.helpers import free_port
from tests.sim.conftest import Sim
from tests.sim.promtext import parse

LABELS = {"gpu", "UUID", "pci_bus_id", "device", "modelName", "Hostname", "DCGM_FI_DRIVER_VERSION"}
DEFAULT_COUNTERS = {"DCGM_FI_DEV_SM_CLOCK", "DCGM_FI_DEV_MEM_CLOCK", "DCGM_FI_DEV_GPU_TEMP",
                    "DCGM_FI_DEV_POWER_USAGE", "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION",
                    "DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_DEV_XID_ERRORS", "DCGM_FI_DEV_FB_FREE",
                    "DCGM_FI_DEV_FB_USED", "DCGM_FI_PROF_GR_ENGINE_ACTIVE"}


def scrape_via_proxy(sim: Sim, node: str) -> str:
    pods = sim.core.list_namespaced_pod("gpu-operator", label_selector="app=nvidia-dcgm-exporter",
                                        field_selector=f"spec.nodeName={node}").items
    return str(sim.core.connect_get_namespaced_pod_proxy_with_path(
        f"{pods[0].metadata.name}:9400", "gpu-operator", "metrics"))


def test_metrics_parse_with_real_labels_and_pod_mapping(start_sim: Any) -> None:
    sim = start_sim("healthy", speed=20)
    trainers = sim.core.list_namespaced_pod("ml-training", label_selector="app=trainer").items
    node = trainers[0].spec.node_name
    types, samples = parse(scrape_via_proxy(sim, node))
    assert DEFAULT_COUNTERS <= set(types)
    assert types["DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION"] == "counter"
    util = [s for s in samples if s.name == "DCGM_FI_DEV_GPU_UTIL"]
    assert len(util) == 8 and all(LABELS <= set(s.labels) for s in util)
    assert {s.labels["Hostname"] for s in util} == {node}
    assert {s.labels["pod"] for s in util} == {trainers[0].metadata.name}
    assert all(s.labels["namespace"] == "ml-training" and s.value > 50 for s in util)
    assert all(s.labels["DCGM_FI_DRIVER_VERSION"] == "570.172.08" for s in util)
    idle_node = next(iter(sim.operator.world.pool_members["a100"]))
    idle = [s for s in parse(scrape_via_proxy(sim, idle_node))[1] if s.name == "DCGM_FI_DEV_GPU_UTIL"]
    assert idle and all("pod" not in s.labels for s in idle if s.value == 0)


def test_xid_79_is_reported_and_the_gpu_goes_idle(start_sim: Any) -> None:
    sim = start_sim("healthy", speed=20, faults="xid:h100/0:3:79@1s,xid-alone:h100/1:0:48@1s")
    node = sim.node("h100/0")
    sim.wait_for(lambda: "err_code=\"79\"" in scrape_via_proxy(sim, node), 120, "XID 79 exported")
    _, samples = parse(scrape_via_proxy(sim, node))
    xid = next(s for s in samples if s.name == "DCGM_FI_DEV_XID_ERRORS" and s.labels["gpu"] == "3")
    assert xid.value == 79 and xid.labels["err_msg"] == "GPU has fallen off the bus"
    # fallen off the bus: the GPU's other series are gone, its XID series stays
    assert {s.name for s in samples if s.labels["gpu"] == "3"} == {"DCGM_FI_DEV_XID_ERRORS"}
    assert len([s for s in samples if s.name == "DCGM_FI_DEV_GPU_UTIL"]) == 7
    # the device plugin marks the GPU unhealthy: allocatable drops below capacity
    status = sim.core.read_node(node).status
    assert status.capacity["nvidia.com/gpu"] == "8" and status.allocatable["nvidia.com/gpu"] == "7"
    other = next(s for s in parse(scrape_via_proxy(sim, sim.node("h100/1")))[1]
             if s.name == "DCGM_FI_DEV_XID_ERRORS" and s.labels["gpu"] == "0")
    assert other.value == 48 and other.labels["err_msg"] == "Double Bit ECC Error"


def test_promtool_parses_the_output(start_sim: Any) -> None:
    sim = start_sim("healthy", speed=20, faults="xid:h100/0:3:79@0s")
    text = scrape_via_proxy(sim, sim.node("h100/0"))
    result = subprocess.run(["promtool", "check", "metrics"], input=text, capture_output=True, check=False,
                            text=True, timeout=30)
    # exit 3 = lint findings only (dcgm-exporter's real names are camelCase, counters lack _total)
    assert result.returncode in (0, 3), result.stderr + result.stdout
    output = result.stdout + result.stderr
    assert "parsing error" not in output and "error while linting" not in output
    for line in filter(None, output.splitlines()):
        assert "camelCase" in line or "_total" in line or "should not include type" in line, line


def test_loopback_exporters_and_service_discovery(start_sim: Any) -> None:
    port = free_port()
    sim = start_sim("time-slicing", speed=20, exporters_port=port)
    targets = json.loads(urllib.request.urlopen(f"http://127.0.0.1:{port}/sd", timeout=10).read())
    nodes = {t["labels"]["node"] for t in targets}
    assert nodes == set(sim.operator.world.nodes)
    path = targets[0]["labels"]["__metrics_path__"]
    body = urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=10).read().decode()
    types, samples = parse(body)
    assert "DCGM_FI_DEV_GPU_UTIL" in types and samples
    health = urllib.request.urlopen(f"http://127.0.0.1:{port}/health/{targets[0]['labels']['node']}",
                                    timeout=10)
    assert health.status == 200


MIG = """summary: one A100 node going all-1g.10gb with two MIG pods waiting for it
clusterPolicy:
  spec:
    mig: {strategy: STRATEGY}
nodePools:
  - {name: a100, prefix: gke-test-a100-pool-3c4d, count: 1, gpu: A100-80GB, gpusPerNode: 8,
     migConfig: all-disabled}
workloads:
  - {name: infer-small, namespace: ml-serving, pool: a100, count: 2, gpus: 1,
     labels: {app: infer}, resource: RESOURCE}
timeline:
  - {at: 1m, action: mig-config, node: a100/0, config: all-1g.10gb}
"""


def _mig_sim(start_sim: Any, tmp_path: Path, strategy: str, resource: str) -> tuple[Sim, str]:
    """The cluster and the node's exporter text once it maps MIG instances to their pods (the scrape that
    showed it: at 120x speed the exporter pod may be replaced before a second scrape)."""
    path = tmp_path / "mig.yaml"
    path.write_text(MIG.replace("STRATEGY", strategy).replace("RESOURCE", resource))
    sim = start_sim(str(path), speed=120)
    node = sim.node("a100/0")
    seen: list[str] = []

    def mapped() -> bool:
        try:
            text = scrape_via_proxy(sim, node) if _exporter_ready(sim, node) else ""
        except ApiException as error:  # the pod listed was replaced before its scrape
            if error.status != 404:
                raise
            text = ""
        except IndexError:  # gone between the readiness check and the scrape's own list
            text = ""
        seen.append(text)
        return text.count('pod="infer-small-') >= 2 and 'GPU_I_PROFILE="1g.10gb"' in text
    sim.wait_for(mapped, 900, "MIG instances exported with their pods")
    return sim, seen[-1]


def _exporter_ready(sim: Sim, node: str) -> bool:
    pods = sim.core.list_namespaced_pod("gpu-operator", label_selector="app=nvidia-dcgm-exporter",
                                        field_selector=f"spec.nodeName={node}").items
    return bool(pods) and all(c.ready for c in pods[0].status.container_statuses or [])


def test_mig_instances_have_their_own_series(start_sim: Any, tmp_path: Path) -> None:
    sim, text = _mig_sim(start_sim, tmp_path, "mixed", "nvidia.com/mig-1g.10gb")
    _, samples = parse(text)
    free = [s for s in samples if s.name == "DCGM_FI_DEV_FB_FREE"]
    assert len(free) == 56  # 8 GPUs x 7 instances, no whole-GPU series left
    assert all(LABELS | {"GPU_I_PROFILE", "GPU_I_ID"} <= set(s.labels) for s in free)
    assert {s.labels["GPU_I_PROFILE"] for s in free} == {"1g.10gb"}
    for gpu in range(8):
        ids = {s.labels["GPU_I_ID"] for s in free if s.labels["gpu"] == str(gpu)}
        assert len(ids) == 7
    assert {s.labels["modelName"] for s in free} == {"NVIDIA A100-SXM4-80GB"}
    assert not [s for s in samples if s.name == "DCGM_FI_DEV_GPU_UTIL"]  # NVML: none on MIG
    pods = {p.metadata.name for p in sim.core.list_namespaced_pod("ml-serving").items
            if p.status.phase == "Running"}
    used = [s for s in free if "pod" in s.labels]
    assert len(used) == 2 and {s.labels["pod"] for s in used} == pods
    assert all(s.labels["namespace"] == "ml-serving" and s.labels["container"] == "infer"
               for s in used)
    for sample in used:
        key = (sample.labels["gpu"], sample.labels["GPU_I_ID"])
        used_mib = next(s.value for s in samples if s.name == "DCGM_FI_DEV_FB_USED"
                        and (s.labels["gpu"], s.labels["GPU_I_ID"]) == key)
        active = next(s.value for s in samples if s.name == "DCGM_FI_PROF_GR_ENGINE_ACTIVE"
                      and (s.labels["gpu"], s.labels["GPU_I_ID"]) == key)
        assert used_mib > 0 and sample.value + used_mib == 10 * 1024 - 256 and active > 0.5
    result = subprocess.run(["promtool", "check", "metrics"], input=text, capture_output=True,
                            check=False, text=True, timeout=30)
    assert result.returncode in (0, 3) and "error" not in (result.stdout + result.stderr)


def test_single_strategy_maps_gpu_requests_to_instances(start_sim: Any, tmp_path: Path) -> None:
    _, text = _mig_sim(start_sim, tmp_path, "single", "nvidia.com/gpu")
    _, samples = parse(text)
    used = [s for s in samples if s.name == "DCGM_FI_PROF_GR_ENGINE_ACTIVE" and "pod" in s.labels]
    assert len(used) == 2 and {s.labels["GPU_I_PROFILE"] for s in used} == {"1g.10gb"}


def test_xid_series_always_labelled_and_power_below_limit_for_every_model() -> None:
    """Upstream labels every XID series (``"0"``/``"No Error"`` when none); every model's
    power starts from an idle figure below its limit and rises with load; clocks and the
    NVLink counter follow the model."""
    from gputui.sim.operator.exporter import _values
    from gputui.sim.operator.hardware import MODELS, electrical
    from gputui.sim.operator.runtime import Gpu

    for key, model in MODELS.items():
        gpu = Gpu(index=0, uuid="GPU-x")
        idle = _values(gpu, model, 0.0, 0, 0.0, False)
        busy = _values(gpu, model, 100.0, 0, 1.0, True)
        limit = model.power_limit_w
        assert 0 < idle["DCGM_FI_DEV_POWER_USAGE"] < busy["DCGM_FI_DEV_POWER_USAGE"] < limit, key
        assert idle["DCGM_FI_DEV_POWER_USAGE"] < 0.3 * limit, key
        assert busy["DCGM_FI_DEV_SM_CLOCK"] > idle["DCGM_FI_DEV_SM_CLOCK"]
        assert busy["DCGM_FI_DEV_MEM_CLOCK"] == electrical(model).mem_clock_mhz
    assert electrical(MODELS["H100-80GB"]).nvlink_links == 18
    assert electrical(MODELS["T4"]).nvlink_links == 0


def test_xid_series_of_a_healthy_gpu_says_no_error(start_sim: Any) -> None:
    sim = start_sim("healthy", speed=20)
    node = next(iter(sim.operator.world.pool_members["a100"]))
    _, samples = parse(scrape_via_proxy(sim, node))
    xids = [s for s in samples if s.name == "DCGM_FI_DEV_XID_ERRORS"]
    assert xids and all(s.labels["err_code"] == "0" and s.labels["err_msg"] == "No Error"
                        and s.value == 0 for s in xids)
    nvlink = [s for s in samples if s.name == "DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL"]
    assert nvlink and all(s.value >= 0 for s in nvlink)


ALL_ENABLED = """summary: two A100 nodes with MIG enabled and no instance yet (mixed strategy)
clusterPolicy:
  spec:
    mig: {strategy: mixed}
nodePools:
  - {name: a100, prefix: gke-test-a100-pool-2b9c, count: 2, gpu: A100-80GB, gpusPerNode: 8,
     migConfig: all-enabled}
"""


def test_mig_enabled_gpu_without_instances_is_reported_as_the_whole_gpu(
        start_sim: Any, tmp_path: Path) -> None:
    """dcgm-exporter ``--devices f`` monitors a GPU with no GPU instance as an ``FE_GPU``
    entity (``internal/pkg/devicemonitoring/device_monitoring.go``,
    ``monitorAllGPUInstances``): all 8 GPUs stay in the scrape, without instance labels and
    without the utilisation NVML does not give in MIG mode."""
    scenario = tmp_path / "all-enabled.yaml"
    scenario.write_text(ALL_ENABLED)
    sim = start_sim(str(scenario), speed=20)
    node = sim.node("a100/0")
    sim.wait_for(lambda: "DCGM_FI_DEV_GPU_TEMP" in scrape_via_proxy(sim, node), 300,
                 "the exporter answering")
    _, samples = parse(scrape_via_proxy(sim, node))
    temps = [s for s in samples if s.name == "DCGM_FI_DEV_GPU_TEMP"]
    assert sorted(int(s.labels["gpu"]) for s in temps) == list(range(8))
    assert all("GPU_I_ID" not in s.labels and LABELS <= set(s.labels) for s in temps)
    assert not [s for s in samples if s.name == "DCGM_FI_DEV_GPU_UTIL"]
    assert len([s for s in samples if s.name == "DCGM_FI_DEV_XID_ERRORS"]) == 8
