"""The emulated hardware: GPU models, their MIG profiles and the generated MIG configs.

This is what NVML would report on a real node. GFD labels, device-plugin capacity, the MIG
manager's generated ``<node>-mig-config`` (§5.3) and dcgm-exporter series all derive from it.
"""

from __future__ import annotations

import functools
import hashlib
from dataclasses import dataclass, field

import yaml


@dataclass(frozen=True)
class GpuModel:
    """One GPU model as NVML and GFD describe it."""

    key: str
    product: str            # sanitized, as in nvidia.com/gpu.product
    model_name: str         # as dcgm-exporter's modelName label
    memory_mib: int
    family: str
    compute: tuple[int, int]
    device_id: str          # PCI device id, mig-parted device-filter form
    machine: str
    power_limit_w: int
    mig_profiles: dict[str, int] = field(default_factory=dict)  # profile -> max per GPU
    slices: int = 0

    @property
    def mig_capable(self) -> bool:
        return bool(self.mig_profiles)


def _profiles(*pairs: tuple[str, int]) -> dict[str, int]:
    return dict(pairs)


MODELS: dict[str, GpuModel] = {m.key: m for m in (
    GpuModel("H100-80GB", "NVIDIA-H100-80GB-HBM3", "NVIDIA H100 80GB HBM3", 81559, "hopper",
             (9, 0), "0x233010DE", "a3-highgpu-8g", 700,
             _profiles(("1g.10gb", 7), ("1g.10gb+me", 1), ("1g.20gb", 4), ("2g.20gb", 3),
                       ("3g.40gb", 2), ("4g.40gb", 1), ("7g.80gb", 1)), 7),
    GpuModel("A100-80GB", "NVIDIA-A100-SXM4-80GB", "NVIDIA A100-SXM4-80GB", 81920, "ampere",
             (8, 0), "0x20B210DE", "a2-ultragpu-8g", 400,
             _profiles(("1g.10gb", 7), ("1g.10gb+me", 1), ("1g.20gb", 4), ("2g.20gb", 3),
                       ("3g.40gb", 2), ("4g.40gb", 1), ("7g.80gb", 1)), 7),
    GpuModel("A100-40GB", "NVIDIA-A100-SXM4-40GB", "NVIDIA A100-SXM4-40GB", 40960, "ampere",
             (8, 0), "0x20B010DE", "a2-highgpu-8g", 400,
             _profiles(("1g.5gb", 7), ("1g.5gb+me", 1), ("1g.10gb", 4), ("2g.10gb", 3),
                       ("3g.20gb", 2), ("4g.20gb", 1), ("7g.40gb", 1)), 7),
    GpuModel("A30", "NVIDIA-A30", "NVIDIA A30", 24576, "ampere", (8, 0), "0x20B710DE",
             "PowerEdge-R750xa", 165,
             _profiles(("1g.6gb", 4), ("1g.6gb+me", 1), ("2g.12gb", 2), ("2g.12gb+me", 1),
                       ("4g.24gb", 1)), 4),
    GpuModel("L4", "NVIDIA-L4", "NVIDIA L4", 23034, "ada-lovelace", (8, 9), "0x27B810DE",
             "g2-standard-48", 72),
    GpuModel("T4", "Tesla-T4", "Tesla T4", 15360, "turing", (7, 5), "0x1EB810DE",
             "n1-standard-16", 70),
)}


@dataclass(frozen=True)
class Electrical:
    """What a model's DCGM series move between: idle and peak (vendor datasheet figures).

    Attributes:
        idle_power_w: board power with nothing running (well below the limit).
        sm_clock_idle / sm_clock_max: SM clock at idle and at full load, MHz.
        mem_clock_mhz: memory clock (HBM parts run a fixed clock; GDDR parts too at load).
        nvlink_links: NVLink links (0 for PCIe-only parts: the counter stays 0).
        nvlink_gbps_per_link: GB/s per link and direction.
    """

    idle_power_w: float
    sm_clock_idle: int
    sm_clock_max: int
    mem_clock_mhz: int
    nvlink_links: int = 0
    nvlink_gbps_per_link: float = 25.0


ELECTRICAL: dict[str, Electrical] = {
    "H100-80GB": Electrical(70.0, 345, 1980, 2619, 18),
    "A100-80GB": Electrical(58.0, 210, 1410, 1593, 12),
    "A100-40GB": Electrical(54.0, 210, 1410, 1215, 12),
    "A30": Electrical(31.0, 210, 1440, 1215, 4),
    "L4": Electrical(16.0, 210, 2040, 6251),
    "T4": Electrical(10.0, 300, 1590, 5000),
}


def electrical(model_: GpuModel) -> Electrical:
    """The model's idle/peak figures (a conservative default for unlisted models)."""
    return ELECTRICAL.get(model_.key) or Electrical(0.1 * model_.power_limit_w, 300, 1500, 1500)


def model(key: str) -> GpuModel:
    return MODELS[key]


def profile_memory_mib(model_: GpuModel, profile: str) -> int:
    """Per-instance memory of a MIG profile (the ``<n>gb`` part, in MiB, slightly under)."""
    gb = int(profile.split(".")[1].split("+")[0].rstrip("gb"))
    return gb * 1024 - 256


def balanced(model_: GpuModel) -> dict[str, int]:
    """mig-parted's all-balanced layout: 7 slices 2×1g+1×2g+1×3g, 4 slices 2×1g+1×2g."""
    base = {p.split(".")[0]: p for p in model_.mig_profiles
            if "+" not in p and p.split(".")[0] in ("1g", "2g", "3g")
            and p.split(".")[1] == _smallest_mem(model_, p.split(".")[0])}
    layout = {base["1g"]: 2, base["2g"]: 1}
    if model_.slices >= 7:
        layout[base["3g"]] = 1
    return layout


def _smallest_mem(model_: GpuModel, gi: str) -> str:
    mems = sorted((int(p.split(".")[1].rstrip("gb")), p.split(".")[1])
                  for p in model_.mig_profiles if p.startswith(gi + ".") and "+" not in p)
    return mems[0][1]


def mig_configs(model_: GpuModel) -> dict[str, dict[str, int] | None]:
    """Generated config names (§5.3) → MIG layout per GPU (``None`` = MIG disabled)."""
    configs: dict[str, dict[str, int] | None] = {"all-disabled": None, "all-enabled": {}}
    if not model_.mig_capable:
        return {"all-disabled": None}
    configs["all-balanced"] = balanced(model_)
    for profile, count in model_.mig_profiles.items():
        configs["all-" + profile.replace("+", ".")] = {profile: count}
    return configs


def generated_config_yaml(model_: GpuModel) -> str:
    """The mig-parted v1 file the MIG manager generates from the hardware (cached per model)."""
    return _generated_config_yaml(model_.key)


@functools.cache
def _generated_config_yaml(key: str) -> str:
    model_ = MODELS[key]
    body: dict[str, object] = {"version": "v1", "mig-configs": {}}
    for name, layout in mig_configs(model_).items():
        entry: dict[str, object] = {"devices": "all", "mig-enabled": layout is not None}
        if layout:
            entry["mig-devices"] = dict(layout)
        elif layout is not None:
            entry["mig-devices"] = {}
        body["mig-configs"][name] = [entry]  # type: ignore[index]
    header = "# DO NOT EDIT: Auto-generated by nvidia-mig-manager from the node's hardware\n"
    return header + str(yaml.safe_dump(body, sort_keys=False))


def node_suffix(seed: str, length: int = 4) -> str:
    """A stable, realistic-looking random suffix (e.g. ``xk2p``) derived from ``seed``."""
    alphabet = "bcdfghjklmnpqrstvwxz2456789"
    digest = hashlib.sha256(seed.encode()).digest()
    return "".join(alphabet[b % len(alphabet)] for b in digest[:length])


_SUFFIX_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"  # Kubernetes' generateName alphabet
_SUFFIX_SPACE = len(_SUFFIX_ALPHABET) ** 5
#: coprime with the suffix space (27**5 = 3**15): multiplying by it permutes the space
_SUFFIX_STRIDE = 7_368_787


def numbered_suffix(seed: str, number: int) -> str:
    """The ``number``-th 5-character suffix of a sequence unique to ``seed``.

    ``number * stride + offset`` modulo 27**5 is a bijection, so the first 14 million
    numbers give distinct suffixes that still look random (``x7kqp``, not ``bbbbc``), and
    the offset drawn from ``seed`` makes each DaemonSet's sequence look different.
    """
    value = (number * _SUFFIX_STRIDE + _offset(seed)) % _SUFFIX_SPACE
    chars = []
    for _ in range(5):
        value, digit = divmod(value, len(_SUFFIX_ALPHABET))
        chars.append(_SUFFIX_ALPHABET[digit])
    return "".join(chars)


def gpu_uuid(node: str, index: int) -> str:
    digest = hashlib.md5(f"{node}/{index}".encode()).hexdigest()
    return f"GPU-{digest[:8]}-{digest[8:12]}-{digest[12:16]}-{digest[16:20]}-{digest[20:32]}"


def pci_bus_id(index: int) -> str:
    buses = (0x04, 0x0A, 0x44, 0x4A, 0x84, 0x8A, 0xC0, 0xC6, 0xD0, 0xD6, 0xE0, 0xE6, 0xF0, 0xF6, 0xF8, 0xFA)
    return f"00000000:{buses[index % len(buses)]:02X}:00.0"


CUDA_BY_DRIVER_MAJOR = {"535": "12.2", "550": "12.4", "560": "12.6", "565": "12.7",
                        "570": "12.8", "575": "12.9", "580": "13.0"}


def cuda_runtime_for(driver_version: str) -> str:
    return CUDA_BY_DRIVER_MAJOR.get(driver_version.split(".")[0], "12.8")


@functools.lru_cache(maxsize=1024)
def _offset(seed: str) -> int:
    """Where ``seed``'s sequence starts (one hash per DaemonSet, not one per pod)."""
    return int.from_bytes(hashlib.sha256(seed.encode()).digest()[:8], "big")
