"""dcgm-exporter (§7): per-node Prometheus text with the default counters and real labels.

Each node's exporter pod serves ``/metrics`` and ``/health`` on container port 9400 through
the API server's ``pods/proxy`` (registered with :class:`NodeSide`). With ``exporters_port=N``
one loopback HTTP server on port N also serves every node for a real Prometheus:

* ``GET /metrics/<node>`` and ``/health/<node>``: that node's exporter;
* ``GET /sd``: Prometheus HTTP service discovery JSON, one target per node with
  ``__metrics_path__`` set, so ``http_sd_configs: [{url: http://127.0.0.1:N/sd}]`` scrapes all;
  a static config works too: ``targets: [127.0.0.1:N]`` plus label
  ``__metrics_path__: /metrics/<node>`` per node.

What the series say, as the real exporter (``--devices f``, pod mapping on) would:

* A GPU with MIG disabled has one series per metric, with ``pod``/``namespace``/``container``
  while a pod holds it.
* A GPU with MIG enabled under the applied layout has one series per GPU *instance* instead,
  labelled ``GPU_I_PROFILE``/``GPU_I_ID`` on top of the parent's labels, with the pod that
  holds that instance (:mod:`gputui.sim.operator.miginstances`). Framebuffer series are the
  instance's (free + used = the profile's memory) and ``DCGM_FI_PROF_*`` its activity;
  clocks, temperatures, power and energy repeat the parent GPU's values on every instance;
  ``DCGM_FI_DEV_{GPU,MEM_COPY,ENC,DEC}_UTIL`` are absent, as NVML does not report them for
  MIG (dcgm-exporter #105, #430). A MIG-enabled GPU with no instance is reported as the
  whole GPU, as ``--devices f`` does (dcgm-exporter ``internal/pkg/devicemonitoring/
  device_monitoring.go``, ``monitorAllGPUInstances``: a GPU with no GPU instance is added
  as an ``FE_GPU`` entity), idle and without the utilisation NVML refuses in MIG mode.
* The XID series always carries ``err_code``/``err_msg`` (``"0"``/``"No Error"`` on a GPU
  that raised none), as upstream does. Power starts from the model's idle figure and rises
  with load to under its limit; SM and memory clocks and the NVLink counter follow the
  model (:data:`~gputui.sim.operator.hardware.ELECTRICAL`; PCIe-only parts count no NVLink).
* GPU-health faults (:mod:`gputui.sim.operator.gpufaults`) move the default counters
  (PCIe replays, remapped rows, clocks and temperatures of a throttled GPU); the XID gauge
  shows the last XID reported by the scrape's instant, so a fatal XID followed by 45 shows
  45 a second later. The opt-in counters (:mod:`gputui.sim.operator.dcgmhealth`) are
  served only where the scenario's ``exporterMetrics`` or a fault enabled them.
* XID 79 (fallen off the bus): the GPU is gone from DCGM's view, so every series of it
  stops except ``DCGM_FI_DEV_XID_ERRORS`` (and ``DCGM_EXP_XID_ERRORS_COUNT``). That one
  stays because DCGM takes XIDs from the driver's kernel messages, not from the dead GPU,
  and it is what tells an operator (and gputui's ``xid-error`` finding, which reads
  exporters) why the GPU's series vanished.

Not emulated: DCGM's 30 s sampling (values follow the clock at each scrape), vGPU, DRA and
pod-label/pod-UID options, and the HEAD exporter's lowercase ``hostname``.
"""

from __future__ import annotations

import json
import math
from typing import Any

from gputui.sim.operator import dcgmhealth
from gputui.sim.operator.gpufaults import last_xid
from gputui.sim.operator.hardware import electrical, profile_memory_mib
from gputui.sim.operator.miginstances import Assignments, Instance, instances
from gputui.sim.operator.runtime import NodeRun
from gputui.sim.operator.world import World

#: seconds a stopping server waits for requests in flight (a watch, a proxied scrape)
#: before it cancels them: nobody waits for an emulator that is going away
SHUTDOWN_GRACE = 2.0

XID_MEANING = {13: "Graphics Engine Exception", 31: "GPU memory page fault",
               43: "GPU stopped processing", 45: "Preemptive cleanup, due to previous errors",
               48: "Double Bit ECC Error", 63: "ECC page retirement or row remapping recording event",
               64: "ECC page retirement or row remapper recording failure", 74: "NVLINK Error",
               79: "GPU has fallen off the bus", 92: "High single-bit ECC error rate",
               94: "Contained ECC error", 95: "Uncontained ECC error",
               119: "GSP RPC timeout", 120: "GSP error"}
METRICS = [  # name, type, help
    ("DCGM_FI_DEV_SM_CLOCK", "gauge", "SM clock frequency (in MHz)."),
    ("DCGM_FI_DEV_MEM_CLOCK", "gauge", "Memory clock frequency (in MHz)."),
    ("DCGM_FI_DEV_MEMORY_TEMP", "gauge", "Memory temperature (in C)."),
    ("DCGM_FI_DEV_GPU_TEMP", "gauge", "GPU temperature (in C)."),
    ("DCGM_FI_DEV_POWER_USAGE", "gauge", "Power draw (in W)."),
    ("DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", "counter", "Total energy consumption since boot (in mJ)."),
    ("DCGM_FI_DEV_PCIE_REPLAY_COUNTER", "counter", "Total number of PCIe retries."),
    ("DCGM_FI_DEV_GPU_UTIL", "gauge", "GPU utilization (in %)."),
    ("DCGM_FI_DEV_MEM_COPY_UTIL", "gauge", "Memory utilization (in %)."),
    ("DCGM_FI_DEV_ENC_UTIL", "gauge", "Encoder utilization (in %)."),
    ("DCGM_FI_DEV_DEC_UTIL", "gauge", "Decoder utilization (in %)."),
    ("DCGM_FI_DEV_XID_ERRORS", "gauge", "Value of the last XID error encountered."),
    ("DCGM_FI_DEV_FB_FREE", "gauge", "Framebuffer memory free (in MiB)."),
    ("DCGM_FI_DEV_FB_USED", "gauge", "Framebuffer memory used (in MiB)."),
    ("DCGM_FI_DEV_FB_RESERVED", "gauge", "Framebuffer memory reserved (in MiB)."),
    ("DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL", "counter", "Total number of NVLink bandwidth counters for all lanes."),
    ("DCGM_FI_DEV_VGPU_LICENSE_STATUS", "gauge", "vGPU License status"),
    ("DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS", "counter", "Number of remapped rows for uncorrectable errors"),
    ("DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS", "counter", "Number of remapped rows for correctable errors"),
    ("DCGM_FI_DEV_ROW_REMAP_FAILURE", "gauge", "Whether remapping of rows has failed"),
    ("DCGM_FI_PROF_GR_ENGINE_ACTIVE", "gauge", "Ratio of time the graphics engine is active."),
    ("DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", "gauge", "Ratio of cycles the tensor (HMMA) pipe is active."),
    ("DCGM_FI_PROF_DRAM_ACTIVE", "gauge", "Ratio of cycles the device memory interface is active sending or receiving data."),
    ("DCGM_FI_PROF_PCIE_TX_BYTES", "gauge", "The rate of data transmitted over the PCIe bus - including both protocol headers and data payloads - in bytes per second."),
    ("DCGM_FI_PROF_PCIE_RX_BYTES", "gauge", "The rate of data received over the PCIe bus - including both protocol headers and data payloads - in bytes per second."),
]


def _esc(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


# NVML reports no utilisation for MIG instances (dcgm-exporter #105): whole GPUs only
UTIL_ONLY_WHOLE_GPU = ("DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_DEV_MEM_COPY_UTIL",
                       "DCGM_FI_DEV_ENC_UTIL", "DCGM_FI_DEV_DEC_UTIL")


def render(world: World, node_name: str, users: dict[int, Any],
           mig_users: dict[Instance, Any] | None = None) -> str:
    """The node's ``/metrics`` body now (values move with the clock and the workload).

    ``users`` maps whole-GPU indices to the pods using them, ``mig_users`` MIG instances.
    """
    run = world.nodes.get(node_name)
    if run is None:
        return ""
    enabled = enabled_opt_in(world, run)
    catalogue = METRICS + [m for m in dcgmhealth.OPT_IN if m[0] in enabled]
    series: dict[str, list[str]] = {m[0]: [] for m in catalogue}
    for gpu in run.gpus:
        slot = gpu.index if gpu.slot is None else gpu.slot
        labels = {"gpu": str(gpu.index), "UUID": gpu.uuid, "pci_bus_id": _pci(slot),
                  "device": f"nvidia{gpu.index}", "modelName": run.model.model_name}
        tail = {"Hostname": node_name, "DCGM_FI_DRIVER_VERSION": run.driver_loaded or "unknown"}
        if gpu.mig is None:
            _whole_gpu(series, world.clock.now(), run.model, gpu, {**labels, **tail},
                       users.get(gpu.index))
            continue
        present = instances(run.model, gpu)
        if not present:
            _mig_parent(series, world.clock.now(), run.model, gpu, {**labels, **tail})
            continue
        held = [(mig_users or {}).get(inst) for inst in present]
        load = _parent_util(run.model, present, held)
        _accrue(gpu, run.model, load)
        for inst, user in zip(present, held):
            inst_labels = {**labels, "GPU_I_PROFILE": inst.profile, "GPU_I_ID": str(inst.gi), **tail}
            _instance(series, (world.clock.now(), load), run.model, gpu, inst,
                      _with_pod(inst_labels, user))
    out = []
    for name, kind, help_ in catalogue:
        if series[name]:
            out += [f"# HELP {name} {help_}", f"# TYPE {name} {kind}"] + series[name]
    return "\n".join(out) + "\n"


def enabled_opt_in(world: World, run: NodeRun) -> frozenset[str]:
    """The opt-in series the node's exporter serves: the scenario's metrics CSV plus what a
    fault enabled on the node (:mod:`gputui.sim.operator.dcgmhealth`)."""
    chosen = world.scenario.exporter_metrics
    if not chosen:
        return frozenset(run.exporter_metrics)
    return frozenset(chosen) | run.exporter_metrics


def _with_pod(labels: dict[str, str], user: Any) -> dict[str, str]:
    if user is None:
        return labels
    return {**labels, "container": user.spec.name.split("-")[0], "namespace": user.spec.namespace,
            "pod": user.name}


def _wave(now: float, gpu: Any, gi: int = 0) -> float:
    return 0.5 + 0.5 * math.sin(now / 37.0 + gpu.index + 0.7 * gi)


def _accrue(gpu: Any, model: Any, util: float) -> None:
    """Energy and NVLink traffic keep counting while the GPU is on the bus."""
    if not gpu.fallen:
        gpu.energy_mj += _power(model, util, 0.5) * 1000 * 5
        spec = electrical(model)
        gpu.nvlink_total += spec.nvlink_links * spec.nvlink_gbps_per_link * util / 100 * 5e3


def _power(model: Any, util: float, wave: float) -> float:
    """Board power: the model's idle figure at 0 %, rising with load, below the limit."""
    idle = electrical(model).idle_power_w
    peak = 0.9 * model.power_limit_w
    return float(round(idle + (peak - idle) * util / 100 + 0.02 * (peak - idle) * wave, 3))


def _emit(series: dict[str, list[str]], gpu: Any, labels: dict[str, str],
          values: dict[str, float], now_busy: tuple[float, bool]) -> None:
    """Append one entity's samples; after XID 79 only its XID series are left."""
    now, busy = now_busy
    for name, value in values.items():
        if name not in series or (gpu.fallen and name != "DCGM_FI_DEV_XID_ERRORS"):
            continue
        if name == "DCGM_FI_DEV_XID_ERRORS":
            # upstream always labels the XID series; a GPU without one says "0"/"No Error"
            xid = last_xid(gpu, now)
            message = XID_MEANING.get(xid, "Unknown") if xid else "No Error"
            xid_labels = {**labels, "err_code": str(xid), "err_msg": message}
            series[name].append(_line(name, xid_labels, xid))
        else:
            series[name].append(_line(name, labels, value))
    if dcgmhealth.XID_COUNT in series or dcgmhealth.CLOCK_EVENTS in series:
        for name, samples in dcgmhealth.exp_samples(gpu, now, busy).items():
            if name in series:
                series[name] += [_line(name, {**labels, **extra}, v) for extra, v in samples]


def _whole_gpu(series: dict[str, list[str]], now: float, model: Any, gpu: Any,
               labels: dict[str, str], user: Any) -> None:
    busy = user is not None and not gpu.fallen
    wave = _wave(now, gpu)
    util = 0.0 if not busy else round(88 + 10 * wave)
    fb_used = 0 if not busy else int(model.memory_mib * (0.72 + 0.2 * wave))
    _accrue(gpu, model, util)
    values = _values(gpu, model, util, fb_used, wave, busy)
    dcgmhealth.apply(values, gpu, model, now, busy)
    _emit(series, gpu, _with_pod(labels, user), values, (now, busy))


def _mig_parent(series: dict[str, list[str]], now: float, model: Any, gpu: Any,
                labels: dict[str, str]) -> None:
    """A MIG-enabled GPU with no instance: one idle whole-GPU entity, no utilisation."""
    wave = _wave(now, gpu)
    _accrue(gpu, model, 0.0)
    values = _values(gpu, model, 0.0, 0, wave, False)
    dcgmhealth.apply(values, gpu, model, now, False)
    for name in UTIL_ONLY_WHOLE_GPU:
        values.pop(name)
    _emit(series, gpu, labels, values, (now, False))


def _parent_util(model: Any, present: list[Instance], held: list[Any]) -> float:
    """The parent GPU's load: the share of its compute slices held by running pods."""
    busy = sum(int(i.profile.split("g.")[0]) for i, user in zip(present, held) if user is not None)
    return float(round(90 * busy / max(int(model.slices), 1)))


def _instance(series: dict[str, list[str]], when_load: tuple[float, float], model: Any,
              gpu: Any, inst: Instance, labels: dict[str, str]) -> None:
    """One GPU instance: the parent's device values (``load`` %), its own FB and activity."""
    now, load = when_load
    busy = "pod" in labels
    wave = _wave(now, gpu, inst.gi)
    total = profile_memory_mib(model, inst.profile)
    fb_used = int(total * (0.55 + 0.3 * wave)) if busy else 0
    active = round(0.80 + 0.15 * wave, 6) if busy else 0.0
    values = _values(gpu, model, load, fb_used, wave, load > 0)
    dcgmhealth.apply(values, gpu, model, now, load > 0)
    for name in UTIL_ONLY_WHOLE_GPU:
        values.pop(name)
    values.update({"DCGM_FI_DEV_FB_FREE": total - fb_used, "DCGM_FI_DEV_FB_RESERVED": 0,
                   "DCGM_FI_PROF_GR_ENGINE_ACTIVE": active,
                   "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE": round(active * 0.63, 6),
                   "DCGM_FI_PROF_DRAM_ACTIVE": round(active * 0.5, 6),
                   "DCGM_FI_PROF_PCIE_TX_BYTES": int(active * 1.2e8),
                   "DCGM_FI_PROF_PCIE_RX_BYTES": int(active * 2.0e8)})
    _emit(series, gpu, labels, values, (now, load > 0))


def _values(gpu: Any, model: Any, util: float, fb_used: int, wave: float,
            busy: bool) -> dict[str, float]:
    """One GPU's sample values: clocks, temperatures and power follow utilisation."""
    spec = electrical(model)
    return {
        "DCGM_FI_DEV_SM_CLOCK": spec.sm_clock_max if busy else spec.sm_clock_idle,
        "DCGM_FI_DEV_MEM_CLOCK": spec.mem_clock_mhz,
        "DCGM_FI_DEV_MEMORY_TEMP": 38 + (22 * util / 100), "DCGM_FI_DEV_GPU_TEMP": 31 + (40 * util / 100),
        "DCGM_FI_DEV_POWER_USAGE": _power(model, util, wave),
        "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION": int(gpu.energy_mj), "DCGM_FI_DEV_PCIE_REPLAY_COUNTER": 0,
        "DCGM_FI_DEV_GPU_UTIL": util, "DCGM_FI_DEV_MEM_COPY_UTIL": round(util * 0.45),
        "DCGM_FI_DEV_ENC_UTIL": 0, "DCGM_FI_DEV_DEC_UTIL": 0, "DCGM_FI_DEV_XID_ERRORS": gpu.xid,
        "DCGM_FI_DEV_FB_FREE": model.memory_mib - fb_used - 512, "DCGM_FI_DEV_FB_USED": fb_used,
        "DCGM_FI_DEV_FB_RESERVED": 512, "DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL": int(gpu.nvlink_total),
        "DCGM_FI_DEV_VGPU_LICENSE_STATUS": 0, "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS": 0,
        "DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS": 0, "DCGM_FI_DEV_ROW_REMAP_FAILURE": int(gpu.remap_failed),
        "DCGM_FI_PROF_GR_ENGINE_ACTIVE": round(util / 100 * 0.97, 6),
        "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE": round(util / 100 * 0.61, 6),
        "DCGM_FI_PROF_DRAM_ACTIVE": round(util / 100 * 0.48, 6),
        "DCGM_FI_PROF_PCIE_TX_BYTES": int(util * 1.9e7), "DCGM_FI_PROF_PCIE_RX_BYTES": int(util * 3.1e7),
    }


def _line(name: str, labels: dict[str, str], value: float) -> str:
    body = ",".join(f'{k}="{_esc(v)}"' for k, v in labels.items())
    return f"{name}{{{body}}} {value}"


def _pci(index: int) -> str:
    from gputui.sim.operator.hardware import pci_bus_id
    return pci_bus_id(index)


class Exporters:
    """Registers each node's exporter on its pod, and optionally one loopback server."""

    def __init__(self, world: World, port: int | None, users: Any = None, running: Any = None):
        """``users(node)``: GPU index -> pod holding it; ``running(node)``: its running pods."""
        self.world = world
        self.port = port
        self.users = users
        self.running = running
        self.assignments = Assignments()
        self._served: dict[str, str] = {}
        self._runner: Any = None

    def _users(self, node: str) -> dict[int, Any]:
        return self.users(node) if self.users else {}

    def _mig_users(self, node: str) -> dict[Instance, Any]:
        """Which running pod holds each MIG instance of the node (stable while it runs)."""
        run = self.world.nodes.get(node)
        if run is None or self.running is None or all(g.mig is None for g in run.gpus):
            return {}
        present = [i for g in run.gpus for i in instances(run.model, g)]
        return self.assignments.users(node, present, self.running(node), self.world.mig_strategy())

    def sync(self) -> None:
        """Serve port 9400 on every ready exporter pod (cheap: only new pods register)."""
        for name, run in self.world.nodes.items():
            pod = run.pods.get("dcgm-exporter")
            if pod is None or not pod.ready or self._served.get(name) == pod.name:
                continue
            self._served[name] = pod.name
            self.world.nodeside.serve(self.world.ns, pod.name, 9400, self._handler(name))

    def _handler(self, node: str) -> Any:
        async def handle(method: str, path: str) -> tuple[int, str, bytes]:
            return self.respond(node, path)
        return handle

    def respond(self, node: str, path: str) -> tuple[int, str, bytes]:
        path = path.split("?")[0]
        run = self.world.nodes.get(node)
        pod = run.pods.get("dcgm-exporter") if run is not None else None
        if pod is None or not pod.ready:
            return 503, "text/plain", b"exporter not running\n"
        if path.rstrip("/") in ("/health", ""):
            return 200, "text/plain", b"OK\n"
        if path.startswith("/metrics"):
            body = render(self.world, node, self._users(node), self._mig_users(node)).encode()
            return 200, "text/plain; version=0.0.4; charset=utf-8", body
        return 404, "text/plain", b"404 page not found\n"

    async def start(self) -> None:
        if self.port is None:
            return
        from aiohttp import web

        app = web.Application()
        app.router.add_get("/sd", self._sd)
        app.router.add_get("/metrics/{node}", self._http)
        app.router.add_get("/health/{node}", self._http)
        self._runner = web.AppRunner(app, access_log=None, handle_signals=False,
                                       shutdown_timeout=SHUTDOWN_GRACE)
        await self._runner.setup()
        await web.TCPSite(self._runner, "127.0.0.1", self.port).start()

    async def _http(self, request: Any) -> Any:
        from aiohttp import web
        node = request.match_info["node"]
        kind = "/metrics" if request.path.startswith("/metrics") else "/health"
        status, ctype, body = self.respond(node, kind)
        return web.Response(status=status, body=body, headers={"Content-Type": ctype})

    async def _sd(self, request: Any) -> Any:
        from aiohttp import web
        targets = [{"targets": [f"127.0.0.1:{self.port}"],
                    "labels": {"__metrics_path__": f"/metrics/{name}", "node": name}}
                   for name in sorted(self.world.nodes)]
        return web.Response(text=json.dumps(targets), content_type="application/json")

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
