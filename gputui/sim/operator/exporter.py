"""dcgm-exporter (§7): per-node Prometheus text with the default counters and real labels.

Each node's exporter pod serves ``/metrics`` and ``/health`` on container port 9400 through
the API server's ``pods/proxy`` (registered with :class:`NodeSide`). With ``exporters_port=N``
one loopback HTTP server on port N also serves every node for a real Prometheus:

* ``GET /metrics/<node>`` and ``/health/<node>``: that node's exporter;
* ``GET /sd``: Prometheus HTTP service discovery JSON, one target per node with
  ``__metrics_path__`` set, so ``http_sd_configs: [{url: http://127.0.0.1:N/sd}]`` scrapes all;
  a static config works too: ``targets: [127.0.0.1:N]`` plus label
  ``__metrics_path__: /metrics/<node>`` per node.
"""

from __future__ import annotations

import json
import math
from typing import Any

from gputui.sim.operator.world import World

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


def render(w: World, node_name: str, users: dict[int, Any]) -> str:
    """The node's ``/metrics`` body now (values move with the clock and the workload)."""
    run = w.nodes.get(node_name)
    if run is None:
        return ""
    now = w.clock.now()
    model = run.model
    series: dict[str, list[str]] = {m[0]: [] for m in METRICS}
    for gpu in run.gpus:
        user = users.get(gpu.index)
        busy = user is not None and not gpu.fallen
        wave = 0.5 + 0.5 * math.sin(now / 37.0 + gpu.index)
        util = 0.0 if not busy else round(88 + 10 * wave)
        fb_used = 0 if not busy else int(model.memory_mib * (0.72 + 0.2 * wave))
        if not gpu.fallen:
            gpu.energy_mj += (70 + 5.5 * util) * 1000 * 5
        labels = {"gpu": str(gpu.index), "UUID": gpu.uuid, "pci_bus_id": _pci(gpu.index),
                  "device": f"nvidia{gpu.index}", "modelName": model.model_name,
                  "Hostname": node_name, "DCGM_FI_DRIVER_VERSION": run.driver_loaded or "unknown"}
        if user is not None:
            labels.update(container=user.spec.name.split("-")[0], namespace=user.spec.namespace,
                          pod=user.name)
        values = _values(gpu, model, util, fb_used, wave, busy)
        for name, value in values.items():
            series[name].append(_line(name, labels, value))
        if gpu.xid:
            xid_labels = {**labels, "err_code": str(gpu.xid), "err_msg": XID_MEANING.get(gpu.xid, "Unknown")}
            series["DCGM_FI_DEV_XID_ERRORS"][-1] = _line("DCGM_FI_DEV_XID_ERRORS", xid_labels, gpu.xid)
    out = []
    for name, kind, help_ in METRICS:
        if series[name]:
            out += [f"# HELP {name} {help_}", f"# TYPE {name} {kind}"] + series[name]
    return "\n".join(out) + "\n"


def _values(gpu: Any, model: Any, util: float, fb_used: int, wave: float,
            busy: bool) -> dict[str, float]:
    """One GPU's sample values: clocks, temperatures and power follow utilisation."""
    return {
        "DCGM_FI_DEV_SM_CLOCK": 1980 if busy else 345, "DCGM_FI_DEV_MEM_CLOCK": 2619,
        "DCGM_FI_DEV_MEMORY_TEMP": 38 + (22 * util / 100), "DCGM_FI_DEV_GPU_TEMP": 31 + (40 * util / 100),
        "DCGM_FI_DEV_POWER_USAGE": round(70 + (model.power_limit_w - 90) * util / 100 + 3 * wave, 3),
        "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION": int(gpu.energy_mj), "DCGM_FI_DEV_PCIE_REPLAY_COUNTER": 0,
        "DCGM_FI_DEV_GPU_UTIL": util, "DCGM_FI_DEV_MEM_COPY_UTIL": round(util * 0.45),
        "DCGM_FI_DEV_ENC_UTIL": 0, "DCGM_FI_DEV_DEC_UTIL": 0, "DCGM_FI_DEV_XID_ERRORS": gpu.xid,
        "DCGM_FI_DEV_FB_FREE": model.memory_mib - fb_used - 512, "DCGM_FI_DEV_FB_USED": fb_used,
        "DCGM_FI_DEV_FB_RESERVED": 512, "DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL": int(gpu.energy_mj / 7),
        "DCGM_FI_DEV_VGPU_LICENSE_STATUS": 0, "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS": 0,
        "DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS": 0, "DCGM_FI_DEV_ROW_REMAP_FAILURE": 0,
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

    def __init__(self, world: World, port: int | None, users: Any = None):
        self.w = world
        self.port = port
        self.users = users
        self._served: dict[str, str] = {}
        self._runner: Any = None

    def _users(self, node: str) -> dict[int, Any]:
        return self.users(node) if self.users else {}

    def sync(self) -> None:
        """Serve port 9400 on every ready exporter pod (cheap: only new pods register)."""
        for name, run in self.w.nodes.items():
            pod = run.pods.get("dcgm-exporter")
            if pod is None or not pod.ready or self._served.get(name) == pod.name:
                continue
            self._served[name] = pod.name
            self.w.nodeside.serve(self.w.ns, pod.name, 9400, self._handler(name))

    def _handler(self, node: str) -> Any:
        async def handle(method: str, path: str) -> tuple[int, str, bytes]:
            return self.respond(node, path)
        return handle

    def respond(self, node: str, path: str) -> tuple[int, str, bytes]:
        path = path.split("?")[0]
        run = self.w.nodes.get(node)
        pod = run.pods.get("dcgm-exporter") if run is not None else None
        if pod is None or not pod.ready:
            return 503, "text/plain", b"exporter not running\n"
        if path.rstrip("/") in ("/health", ""):
            return 200, "text/plain", b"OK\n"
        if path.startswith("/metrics"):
            body = render(self.w, node, self._users(node)).encode()
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
        self._runner = web.AppRunner(app, access_log=None, handle_signals=False)
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
                   for name in sorted(self.w.nodes)]
        return web.Response(text=json.dumps(targets), content_type="application/json")

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
