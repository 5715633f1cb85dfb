"""MIG (§5): which configs a node offers, what layout a named config gives each GPU.

mig-parted ``v1`` config text is parsed with PyYAML's safe loader (a parser, not IO). The
config file a node's mig-manager uses is, in order: the custom ClusterPolicy ConfigMap, the
per-node generated ``<node>-mig-config``, else ``default-mig-parted-config`` (§5.3).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import yaml

from gputui.domain import kube
from gputui.domain import labels as L
from gputui.domain.inputs import JsonDict
from gputui.domain.model import MigGpu, MigInstance, NodeMigView, NodeView


@dataclass(frozen=True, slots=True)
class MigSpec:
    """One entry of a named config: which devices, MIG on/off, instances per GPU."""

    devices: tuple[int, ...] | None  # None = all
    mig_enabled: bool
    instances: tuple[MigInstance, ...]
    device_filter: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class MigConfigFile:
    """A parsed mig-parted config: name -> specs, in file order."""

    configs: Mapping[str, tuple[MigSpec, ...]] = field(default_factory=dict)
    error: str = ""


def _devices(value: Any) -> tuple[int, ...] | None:
    if isinstance(value, list):
        return tuple(kube.to_int(v) for v in value)
    if isinstance(value, int) and not isinstance(value, bool):
        return (value,)
    return None


def _spec(entry: Mapping[str, Any]) -> MigSpec:
    devices_raw = entry.get("mig-devices")
    wanted = devices_raw if isinstance(devices_raw, Mapping) else {}
    instances = tuple(MigInstance(str(p), kube.to_int(c)) for p, c in wanted.items())
    filt = entry.get("device-filter")
    filters = tuple(str(f) for f in filt) if isinstance(filt, list) else (
        (str(filt),) if filt else ())
    return MigSpec(devices=_devices(entry.get("devices")),
                   mig_enabled=bool(entry.get("mig-enabled")), instances=instances,
                   device_filter=filters)


def parse_mig_config(text: str) -> MigConfigFile:
    """Parse mig-parted ``v1`` YAML text; errors come back in ``error``, never raised."""
    try:
        data = yaml.safe_load(text) or {}
    except yaml.YAMLError as error:
        return MigConfigFile(error=f"invalid YAML: {str(error).splitlines()[0]}")
    if not isinstance(data, Mapping) or not isinstance(data.get("mig-configs"), Mapping):
        return MigConfigFile(error="no mig-configs section")
    configs: dict[str, tuple[MigSpec, ...]] = {}
    for name, specs in data["mig-configs"].items():
        if isinstance(specs, list):
            configs[str(name)] = tuple(_spec(s) for s in specs if isinstance(s, Mapping))
    return MigConfigFile(configs=configs)


def layout(specs: tuple[MigSpec, ...], gpu_count: int) -> tuple[MigGpu, ...]:
    """Per-GPU layout of a named config for a node with ``gpu_count`` GPUs.

    The first spec naming a GPU wins. Device filters cannot be checked (the node's PCI
    device IDs are not in the API), so filtered specs apply only to GPUs no unfiltered spec
    covers.
    """
    gpus: dict[int, MigGpu] = {}
    for filtered in (False, True):
        for spec in specs:
            if bool(spec.device_filter) != filtered:
                continue
            indices = spec.devices if spec.devices is not None else tuple(range(gpu_count))
            for index in indices:
                if index not in gpus:
                    gpus[index] = MigGpu(index, spec.mig_enabled,
                                         spec.instances if spec.mig_enabled else ())
    return tuple(gpus[i] for i in sorted(gpus))


def config_source(node: str, namespace: str | None, custom: str | None,
                  configmaps: Mapping[tuple[str, str], JsonDict]) -> tuple[str, JsonDict | None]:
    """The ConfigMap name the node's mig-manager reads and its dict (None if not seen)."""
    ns = namespace or ""
    candidates = []
    if custom and custom != L.MIG_PARTED_DEFAULT_CONFIGMAP:
        candidates.append(custom)
    candidates += [node + L.MIG_CONFIGMAP_SUFFIX, L.MIG_PARTED_DEFAULT_CONFIGMAP]
    for name in candidates:
        found = configmaps.get((ns, name))
        if found is None and not ns:
            found = next((cm for (_, n), cm in configmaps.items() if n == name), None)
        if found is not None:
            return name, found
    return candidates[0], None


def _profile_per_gpu(specs: tuple[MigSpec, ...], profile: str) -> int | None:
    """MIG devices of ``profile`` each GPU gets from ``specs``: the one number every spec
    giving that profile agrees on, when those specs cover all GPUs; None otherwise. Specs
    without the profile are for other models (a config names one per device filter)."""
    giving = [(s, sum(i.count for i in s.instances if i.profile == profile))
              for s in specs if s.mig_enabled]
    giving = [(s, n) for s, n in giving if n > 0]
    counts = {n for _, n in giving}
    if len(counts) != 1 or any(s.devices is not None for s, _ in giving):
        return None
    return counts.pop()


def physical_gpu_count(node: NodeView, specs: tuple[MigSpec, ...]) -> int | None:
    """The node's physical GPUs, or None when its labels and MIG config cannot tell.

    GFD writes ``nvidia.com/gpu.count`` from every full GPU (MIG-enabled or not) under
    ``none`` and ``mixed``; under ``single`` with a valid layout its MIG labeler overrides
    ``gpu.count`` with the MIG devices and ``gpu.product`` with ``<model>-MIG-<profile>``,
    and no label keeps the physical count (k8s-device-plugin ``internal/lm/mig-strategy.go``,
    ``newMigStrategySingleLabeler`` merged over ``newGPULabelers``). Then it is the MIG
    devices over the devices per GPU of the applied config (``specs``) when that config
    gives every GPU the same number; an invalid layout (``-MIG-INVALID``) says nothing.
    """
    _, _, profile = node.product.partition("-MIG-")
    if not profile:
        return node.gpu_count
    if profile == "INVALID":
        return None
    per_gpu = _profile_per_gpu(specs, profile)
    if per_gpu is None or node.gpu_count % per_gpu:
        return None
    return node.gpu_count // per_gpu


def physical_gpus(node: NodeView, specs: tuple[MigSpec, ...]) -> int:
    """GPUs to lay a config out on: the physical count, else ``gpu.count`` as it stands."""
    count = physical_gpu_count(node, specs)
    return node.gpu_count if count is None else count


class MigConfigCache:
    """Parsed config files keyed by their text, so 5,000 MIG nodes sharing one ConfigMap,
    or each with its own ``<node>-mig-config`` generated identically from the same GPU
    model, parse each distinct file once."""

    def __init__(self) -> None:
        self._parsed: dict[str, MigConfigFile] = {}

    def get(self, configmap: JsonDict) -> MigConfigFile:
        """The parsed ``config.yaml`` of ``configmap``."""
        text = str(kube.sub(configmap, "data").get(L.MIG_CONFIG_KEY, ""))
        if text not in self._parsed:
            self._parsed[text] = parse_mig_config(text)
        return self._parsed[text]


def node_mig_view(node: NodeView, namespace: str | None, custom: str | None,
                  configmaps: Mapping[tuple[str, str], JsonDict],
                  cache: MigConfigCache) -> NodeMigView:
    """MIG view of one node: desired/applied config, state, configs offered and layout."""
    source, configmap = config_source(node.name, namespace, custom, configmaps)
    parsed = cache.get(configmap) if configmap is not None else MigConfigFile()
    applied = node.mig_config if node.mig_state == L.MIG_STATE_SUCCESS else None
    shown = applied or node.mig_config
    specs = parsed.configs.get(shown or "", ())
    gpus = layout(specs, physical_gpus(node, specs)) if specs else ()
    physical = physical_gpu_count(node, parsed.configs.get(applied or "", ()))
    return NodeMigView(node=node.name, desired=node.mig_config, applied=applied,
                       state=node.mig_state, strategy=node.mig_strategy, since=node.mig_since,
                       capable=node.mig_capable, config_source=source,
                       available_configs=tuple(parsed.configs), gpus=gpus,
                       physical_gpus=physical)
