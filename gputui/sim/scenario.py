"""Scenarios: named YAML files describing an emulated cluster and a timeline of faults.

A scenario file (``gputui/sim/scenarios/<name>.yaml``, shipped in the wheel) has::

    summary: one line shown by ``gputui scenarios``
    settleSeconds: 1h                  # when everything it plants is visible (gputui check)
    namespace: gpu-operator            # operator namespace
    clusterPolicy: {present: true, spec: {...}}   # deep-merged over the Helm defaults
    extraClusterPolicies: [name, ...]  # more ClusterPolicies (they become ``ignored``)
    devicePluginConfig: {name: CM, default: KEY, data: {KEY: "<device-plugin v1 yaml>"}}
    nodePools: [{name, prefix, count, gpu, gpusPerNode, migConfig, driver: operator|host,
                 deviceConfig, kernel, os: {id, version}, converged, cordoned, labels,
                 driverBuild}]
    workloads: [{name, namespace, pool, count, gpus, labels, runSeconds, startedAgo, pdb,
                 drainSkip}]
    timeline: [{at: 30s, action: ACTION, ...fields}]
    exporterMetrics: [NAME, ...]       # opt-in dcgm-exporter counters (custom metrics CSV)

Timeline actions (fields): ``kernel-update`` (pool or node, kernel, breaksDriver), ``crashloop``
(pool|node, reason: kernel-headers|driver-in-use, nextStart), ``validator-stuck`` (pool|node),
``xid`` (node, gpu, code, follow: false = no XID 45 after a fatal one), ``row-remap-failure``
(node, gpu), ``rows``, ``pcie-replays``, ``nvlink-errors``, ``gpu-off-bus`` (node, gpu),
``throttle`` (node, gpu, cause: thermal|power), ``reboot`` (node|pool), ``mig-config`` (pool|node,
config), ``mig-fail`` (pool|node),
``driver-version`` (version), ``join`` (pool, count, driverBuild: how long these nodes'
first driver build takes, else the pool's ``driverBuild``, 5m by default), ``cordon`` (node),
``driver-unscheduled`` (node|pool: NotReady, driver pod Pending without a node),
``upgrade-policy`` (policy: fields merged into ``spec.driver.upgradePolicy``).
A node reference is a node name or ``POOL/INDEX`` (``h100/0`` = first node of pool h100).

Faults (``gputui sim --faults SPEC``) add timeline entries. SPEC is comma-separated
``KIND:ARG[:ARG...]@TIME`` where TIME is ``30``, ``30s``, ``5m`` or ``1h`` (``@TIME``
optional, default now)::

    xid:NODE:GPU:CODE          e.g. xid:h100/0:3:79@30s; a fatal XID (48, 74, 94, 95, 119,
                               120) on a GPU a pod uses is followed 1 s later by XID 45
    xid-alone:NODE:GPU:CODE    the XID without the XID 45 that follows a fatal one
    remap:NODE:GPU             the GPU's row remapping fails (DCGM_FI_DEV_ROW_REMAP_FAILURE 1)
    rows:NODE:GPU              an uncorrectable memory error: UNCORRECTABLE_REMAPPED_ROWS +1
    pcie:NODE:GPU              PCIe replay counter rising about 300 a minute
    nvlink:NODE:GPU            NVLink CRC flit errors rising (enables the opt-in counters)
    throttle:NODE:GPU:CAUSE    thermal|power throttling half of every second
    offbus:NODE:GPU            XID 79, and the GPU is gone after the node's next reboot
    reboot:POOL|NODE           the node reboots on its current kernel
    crashloop:POOL|NODE        kernel-headers crash loop of the driver container
    driver-in-use:POOL|NODE    k8s-driver-manager "driver is in use" Init:CrashLoopBackOff
    kernel:POOL:VERSION        kernel update that breaks the driver on that pool
    validator-stuck:POOL|NODE  cuda-validation never finishes
    mig:POOL|NODE:CONFIG       set nvidia.com/mig.config
    mig-fail:POOL|NODE         the next MIG reconfiguration fails
    driver:VERSION             set ClusterPolicy spec.driver.version
    join:POOL:COUNT            COUNT new nodes join pool POOL
    cordon:NODE                someone else cordons the node
    driver-unscheduled:NODE    node NotReady, its driver pod left unscheduled (blocks upgrades)

API-level faults (latency, 429, 500/503, resets, watches closed or expired, the server down,
a resource forbidden, evictions refused, exporters hanging or answering garbage) use their
own grammar, ``KIND[:ARG][%PERCENT][@START][+DURATION]`` plus ``seed:N``, documented in
:mod:`gputui.sim.apiserver.faults`; they may be mixed into the same SPEC, or listed in a
scenario file under ``faults:`` (a list of items).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

from gputui.sim.operator.gpufaults import THROTTLE_CAUSES
from gputui.sim.operator.hardware import MODELS


class ScenarioError(ValueError):
    """A scenario that cannot be loaded; the message is one line naming the problem."""


@dataclass(frozen=True)
class Pool:
    name: str
    prefix: str
    count: int
    gpu: str
    gpus_per_node: int = 8
    mig_config: str | None = None
    driver: str = "operator"
    device_config: str | None = None
    kernel: str = "5.15.0-1071-gke"
    os_id: str = "ubuntu"
    os_version: str = "22.04"
    converged: bool = True
    cordoned: int = 0
    labels: dict[str, str] = field(default_factory=dict)
    #: seconds a joining node's first driver build takes (image pull, headers, compile)
    driver_build: float = 300.0


@dataclass(frozen=True)
class Workload:
    name: str
    pool: str | None
    count: int = 1
    gpus: int = 1
    namespace: str = "default"
    labels: dict[str, str] = field(default_factory=dict)
    run_seconds: float | None = None
    started_ago: float = 0.0
    pdb: bool = False
    drain_skip: bool = False
    resource: str = "nvidia.com/gpu"


@dataclass(frozen=True)
class TimelineEvent:
    at: float
    action: str
    args: dict[str, Any]


@dataclass(frozen=True)
class Scenario:
    name: str
    summary: str
    namespace: str = "gpu-operator"
    cluster_policy_present: bool = True
    cluster_policy_spec: dict[str, Any] = field(default_factory=dict)
    extra_cluster_policies: tuple[str, ...] = ()
    device_plugin_config: dict[str, Any] | None = None
    pools: tuple[Pool, ...] = ()
    workloads: tuple[Workload, ...] = ()
    timeline: tuple[TimelineEvent, ...] = ()
    settle_seconds: float | None = None
    #: API-level fault items (:mod:`gputui.sim.apiserver.faults` grammar), in order
    api_faults: tuple[str, ...] = ()
    #: opt-in dcgm-exporter counters its metrics CSV enables (:mod:`gputui.sim.operator.dcgmhealth`)
    exporter_metrics: tuple[str, ...] = ()


ACTIONS: dict[str, set[str]] = {
    "kernel-update": {"pool", "node", "kernel", "breaksDriver"},
    "crashloop": {"pool", "node", "reason", "nextStart"},
    "validator-stuck": {"pool", "node"},
    "xid": {"node", "gpu", "code", "follow"},
    "row-remap-failure": {"node", "gpu"},
    "rows": {"node", "gpu"},
    "pcie-replays": {"node", "gpu"},
    "nvlink-errors": {"node", "gpu"},
    "throttle": {"node", "gpu", "cause"},
    "gpu-off-bus": {"node", "gpu"},
    "reboot": {"node", "pool"},
    "mig-config": {"pool", "node", "config"},
    "mig-fail": {"pool", "node"},
    "driver-version": {"version"},
    "join": {"pool", "count", "driverBuild"},
    "cordon": {"node"},
    "driver-unscheduled": {"node", "pool"},
    "upgrade-policy": {"policy"},
    "log": {"pool", "node", "operand", "container", "line"},
}
TOP_KEYS = {"summary", "settleSeconds", "namespace", "clusterPolicy", "extraClusterPolicies",
            "devicePluginConfig", "nodePools", "workloads", "timeline", "faults",
            "exporterMetrics"}
POOL_KEYS = {"name": "name", "prefix": "prefix", "count": "count", "gpu": "gpu",
             "gpusPerNode": "gpus_per_node", "migConfig": "mig_config", "driver": "driver",
             "deviceConfig": "device_config", "kernel": "kernel", "converged": "converged",
             "cordoned": "cordoned", "labels": "labels", "os": None,
             "driverBuild": "driver_build"}
WORKLOAD_KEYS = {"name": "name", "pool": "pool", "count": "count", "gpus": "gpus",
                 "namespace": "namespace", "labels": "labels", "runSeconds": "run_seconds",
                 "startedAgo": "started_ago", "pdb": "pdb", "drainSkip": "drain_skip",
                 "resource": "resource"}
_DURATION = re.compile(r"^(\d+(?:\.\d+)?)([smhd]?)$")
_UNITS = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400}


def parse_duration(value: Any, where: str) -> float:
    """``30``, ``"30s"``, ``"5m"``, ``"1h"``, ``"2d"`` → seconds."""
    match = _DURATION.match(str(value).strip())
    if not match:
        raise ScenarioError(f"{where}: bad duration {value!r} (use 30s, 5m, 1h)")
    return float(match.group(1)) * _UNITS[match.group(2)]


def _scenario_dir() -> Any:
    return resources.files("gputui.sim") / "scenarios"


def list_scenarios() -> list[tuple[str, str]]:
    """(name, one-line summary) of every shipped scenario, sorted by name."""
    found = []
    for entry in _scenario_dir().iterdir():
        if entry.name.endswith(".yaml"):
            data = yaml.safe_load(entry.read_text()) or {}
            found.append((entry.name[:-5], str(data.get("summary", "")).strip()))
    return sorted(found)


def load_scenario(name: str, faults: str | None = None) -> Scenario:
    """Load a shipped scenario by name, or a YAML file by path, plus extra faults."""
    path = Path(name)
    if name.endswith((".yaml", ".yml")) and path.exists():
        text, label = path.read_text(), path.stem
    else:
        entry = _scenario_dir() / f"{name}.yaml"
        if not re.fullmatch(r"[a-z0-9][a-z0-9-]*", name) or not entry.is_file():
            known = ", ".join(n for n, _ in list_scenarios())
            raise ScenarioError(f"unknown scenario {name!r} (known: {known})")
        text, label = entry.read_text(), name
    try:
        data = yaml.safe_load(text) or {}
    except yaml.YAMLError as error:
        raise ScenarioError(f"scenario {label}: invalid YAML: {str(error).splitlines()[0]}") from None
    scenario = parse_scenario(label, data)
    if faults:
        extra = parse_faults(faults)
        merged = sorted(scenario.timeline + tuple(extra), key=lambda e: e.at)
        scenario = Scenario(**{**scenario.__dict__, "timeline": tuple(merged),
                               "api_faults": scenario.api_faults + api_fault_items(faults)})
    return scenario


def api_fault_items(spec: str | list[Any]) -> tuple[str, ...]:
    """The API-level items of a SPEC (or a scenario's ``faults:`` list), each validated."""
    from gputui.sim.apiserver.faults import FaultSpecError, is_api_fault, parse_api_fault

    items = spec.split(",") if isinstance(spec, str) else [str(i) for i in spec]
    found = []
    for item in filter(None, (part.strip() for part in items)):
        if not is_api_fault(item):
            continue
        try:
            if item.startswith("seed:"):
                int(item[5:])
            else:
                parse_api_fault(item)
        except (FaultSpecError, ValueError) as error:
            raise ScenarioError(str(error) if isinstance(error, FaultSpecError)
                                else f"fault {item!r}: seed must be a number") from None
        found.append(item)
    return tuple(found)


def _check_keys(data: Any, allowed: set[str] | dict[str, Any], where: str) -> dict[str, Any]:
    if not isinstance(data, dict):
        raise ScenarioError(f"{where}: expected a mapping, got {type(data).__name__}")
    for key in data:
        if key not in allowed:
            raise ScenarioError(f"{where}: unknown field {key!r}")
    return data


def parse_scenario(name: str, data: Any) -> Scenario:
    """Validate a scenario mapping strictly: an unknown or mistyped field is an error."""
    where = f"scenario {name}"
    _check_keys(data, TOP_KEYS, where)
    policy = _check_keys(data.get("clusterPolicy") or {}, {"present", "spec"},
                         f"{where}: clusterPolicy")
    pools = tuple(_pool(p, f"{where}: nodePools[{i}]")
                  for i, p in enumerate(data.get("nodePools") or []))
    pool_names = {p.name for p in pools}
    if len(pool_names) != len(pools):
        raise ScenarioError(f"{where}: nodePools: duplicate pool name")
    workloads = tuple(_workload(w, f"{where}: workloads[{i}]", pool_names)
                      for i, w in enumerate(data.get("workloads") or []))
    timeline = tuple(sorted((_event(e, f"{where}: timeline[{i}]")
                             for i, e in enumerate(data.get("timeline") or [])),
                            key=lambda e: e.at))
    faults = data.get("faults") or []
    if not isinstance(faults, list):
        raise ScenarioError(f"{where}: faults: expected a list of fault items")
    dp = data.get("devicePluginConfig")
    if dp is not None:
        _check_keys(dp, {"name", "default", "data"}, f"{where}: devicePluginConfig")
    return Scenario(
        name=name, summary=str(data.get("summary", "")),
        namespace=str(data.get("namespace", "gpu-operator")),
        cluster_policy_present=bool(policy.get("present", True)),
        cluster_policy_spec=dict(policy.get("spec") or {}),
        extra_cluster_policies=tuple(data.get("extraClusterPolicies") or ()),
        device_plugin_config=dp, pools=pools, workloads=workloads, timeline=timeline,
        api_faults=api_fault_items(faults),
        exporter_metrics=_exporter_metrics(data.get("exporterMetrics"), where),
        settle_seconds=(parse_duration(data["settleSeconds"], f"{where}: settleSeconds")
                        if data.get("settleSeconds") is not None else None))


def _exporter_metrics(value: Any, where: str) -> tuple[str, ...]:
    """The opt-in counters a scenario's metrics CSV enables: known names only."""
    from gputui.sim.operator.dcgmhealth import OPT_IN, OPT_IN_NAMES

    if value is None:
        return ()
    if not isinstance(value, list):
        raise ScenarioError(f"{where}: exporterMetrics: expected a list of metric names")
    for name in value:
        if name not in OPT_IN_NAMES:
            known = ", ".join(n for n, _, _ in OPT_IN)
            raise ScenarioError(f"{where}: exporterMetrics: unknown opt-in metric {name!r} "
                                f"(known: {known})")
    return tuple(str(name) for name in value)


def _typed(value: Any, kind: type | tuple[type, ...], where: str) -> Any:
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise ScenarioError(f"{where}: expected {getattr(kind, '__name__', kind)}, got {value!r}")
    return value


def _pool(data: Any, where: str) -> Pool:
    _check_keys(data, POOL_KEYS, where)
    for required in ("name", "prefix", "count", "gpu"):
        if required not in data:
            raise ScenarioError(f"{where}: missing field {required!r}")
    if data["gpu"] not in MODELS:
        raise ScenarioError(f"{where}: unknown gpu {data['gpu']!r} (known: {', '.join(MODELS)})")
    if data.get("driver", "operator") not in ("operator", "host"):
        raise ScenarioError(f"{where}: driver must be operator or host")
    kwargs: dict[str, Any] = {}
    for key, attr in POOL_KEYS.items():
        if key in data and attr:
            kwargs[attr] = data[key]
    for attr in ("count", "gpus_per_node", "cordoned"):
        if attr in kwargs:
            _typed(kwargs[attr], int, f"{where}: {attr}")
    if "driver_build" in kwargs:
        kwargs["driver_build"] = parse_duration(kwargs["driver_build"], f"{where}: driverBuild")
    os_info = _check_keys(data.get("os") or {}, {"id", "version"}, f"{where}: os")
    if os_info:
        kwargs["os_id"] = str(os_info.get("id", "ubuntu"))
        kwargs["os_version"] = str(os_info.get("version", "22.04"))
    kwargs["labels"] = {str(k): str(v) for k, v in (kwargs.get("labels") or {}).items()}
    return Pool(**kwargs)


def _workload(data: Any, where: str, pools: set[str]) -> Workload:
    _check_keys(data, WORKLOAD_KEYS, where)
    if "name" not in data:
        raise ScenarioError(f"{where}: missing field 'name'")
    if data.get("pool") is not None and data["pool"] not in pools:
        raise ScenarioError(f"{where}: unknown pool {data['pool']!r}")
    kwargs = {attr: data[key] for key, attr in WORKLOAD_KEYS.items() if key in data}
    for attr in ("count", "gpus"):
        if attr in kwargs:
            _typed(kwargs[attr], int, f"{where}: {attr}")
    for attr in ("run_seconds", "started_ago"):
        if kwargs.get(attr) is not None:
            kwargs[attr] = parse_duration(kwargs[attr], f"{where}: {attr}")
    kwargs.setdefault("pool", None)
    kwargs["labels"] = {str(k): str(v) for k, v in (kwargs.get("labels") or {}).items()}
    return Workload(**kwargs)


def _event(data: Any, where: str) -> TimelineEvent:
    if not isinstance(data, dict) or "action" not in data:
        raise ScenarioError(f"{where}: expected a mapping with an 'action'")
    action = data["action"]
    if action not in ACTIONS:
        raise ScenarioError(f"{where}: unknown action {action!r} (known: {', '.join(ACTIONS)})")
    _check_keys(data, ACTIONS[action] | {"at", "action"}, f"{where} ({action})")
    args = {k: v for k, v in data.items() if k not in ("at", "action")}
    if action == "throttle" and args.get("cause", "thermal") not in THROTTLE_CAUSES:
        raise ScenarioError(f"{where}: cause must be one of {', '.join(THROTTLE_CAUSES)}")
    if action == "join" and "driverBuild" in args:
        args["driverBuild"] = parse_duration(args["driverBuild"], f"{where}: driverBuild")
    return TimelineEvent(parse_duration(data.get("at", 0), f"{where}: at"), action, args)


_FAULTS: dict[str, tuple[str, tuple[str, ...]]] = {
    "xid": ("xid", ("node", "gpu", "code")),
    "xid-alone": ("xid", ("node", "gpu", "code")),
    "remap": ("row-remap-failure", ("node", "gpu")),
    "rows": ("rows", ("node", "gpu")),
    "pcie": ("pcie-replays", ("node", "gpu")),
    "nvlink": ("nvlink-errors", ("node", "gpu")),
    "throttle": ("throttle", ("node", "gpu", "cause")),
    "offbus": ("gpu-off-bus", ("node", "gpu")),
    "reboot": ("reboot", ("target",)),
    "crashloop": ("crashloop", ("target",)),
    "driver-in-use": ("crashloop", ("target",)),
    "kernel": ("kernel-update", ("pool", "kernel")),
    "validator-stuck": ("validator-stuck", ("target",)),
    "mig": ("mig-config", ("target", "config")),
    "mig-fail": ("mig-fail", ("target",)),
    "driver": ("driver-version", ("version",)),
    "join": ("join", ("pool", "count")),
    "cordon": ("cordon", ("node",)),
    "driver-unscheduled": ("driver-unscheduled", ("node",)),
}


def parse_faults(spec: str) -> list[TimelineEvent]:
    """Parse a ``--faults`` SPEC (grammar in the module docstring) into timeline events."""
    from gputui.sim.apiserver.faults import is_api_fault

    events = []
    for item in filter(None, (part.strip() for part in spec.split(","))):
        if is_api_fault(item):
            continue  # an API-level fault: see api_fault_items
        body, _, when = item.partition("@")
        kind, *values = body.split(":")
        if kind not in _FAULTS:
            from gputui.sim.apiserver.faults import KINDS

            known = ", ".join([*_FAULTS, *KINDS])
            raise ScenarioError(f"fault {item!r}: unknown kind {kind!r} (known: {known})")
        action, names = _FAULTS[kind]
        if len(values) != len(names):
            raise ScenarioError(f"fault {item!r}: expected {kind}:{':'.join(n.upper() for n in names)}")
        args: dict[str, Any] = {}
        for key, value in zip(names, values):
            if key == "target":
                args["pool" if "/" not in value and not _looks_like_node(value) else "node"] = value
            elif key in ("gpu", "code", "count"):
                if not value.isdigit():
                    raise ScenarioError(f"fault {item!r}: {key} must be a number")
                args[key] = int(value)
            else:
                args[key] = value
        if kind == "driver-in-use":
            args["reason"] = "driver-in-use"
        elif kind == "xid-alone":
            args["follow"] = False
        elif kind == "throttle" and args["cause"] not in THROTTLE_CAUSES:
            raise ScenarioError(f"fault {item!r}: cause must be one of {', '.join(THROTTLE_CAUSES)}")
        events.append(TimelineEvent(parse_duration(when or 0, f"fault {item!r}"), action, args))
    return events


def _looks_like_node(value: str) -> bool:
    """Full node names contain several dashes; pool names in scenarios are short words."""
    return value.count("-") >= 3
