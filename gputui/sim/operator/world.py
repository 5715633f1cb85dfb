"""Shared state of the emulated GPU Operator stack and the small helpers every controller uses.

Controllers are separate modules with one job each; they share this object rather than each
other, so the order they run in is decided in one place (:mod:`gputui.sim.operator.core`).
"""

from __future__ import annotations

import asyncio
import copy
import ipaddress
import threading
from collections.abc import Callable, Mapping
from functools import lru_cache
from typing import Any

from gputui.sim.clock import SimClock
from gputui.sim.nodeside import NodeSide
from gputui.sim.operator import keys as K
from gputui.sim.operator import nvidiadriver, upgrade_messages
from gputui.sim.operator.hardware import numbered_suffix
from gputui.sim.operator.objects import node_event, pod_event
from gputui.sim.operator.runtime import NodeRun
from gputui.sim.scenario import Pool, Scenario
from gputui.sim.store import Store

# What a pass must do besides reconciling the dirty nodes: the flags of World.mark, read by
# Operator._pass. (Any mark also wakes the loop.)
#: every node reconciles (a shared input changed: a ConfigMap, the ClusterPolicy's spec)
ALL_NODES = "all-nodes"
#: the ClusterPolicy's spec changed: the operand DaemonSets are reconciled first
POLICY_SPEC = "policy-spec"
#: DaemonSet and ClusterPolicy status are recomputed (also done whenever a node was dirty)
STATUS = "status"
#: capacity or pods changed: the workload scheduler runs
SCHEDULE = "schedule"
#: the upgrade controller wakes
UPGRADE = "upgrade"

Obj = dict[str, Any]

DEFAULT_POLICY_SPEC: Obj = {
    "operator": {"defaultRuntime": "containerd", "initContainer": {}},
    "daemonsets": {"priorityClassName": "system-node-critical", "updateStrategy": "RollingUpdate",
                   "rollingUpdate": {"maxUnavailable": "1"},
                   "tolerations": [dict(K.TOLERATION_GPU)]},
    "driver": {"enabled": True, "useNvidiaDriverCRD": False, "usePrecompiled": False,
               "kernelModuleType": "auto", "repository": "nvcr.io/nvidia", "image": "driver",
               "version": "570.172.08", "imagePullPolicy": "IfNotPresent",
               "manager": {"repository": "nvcr.io/nvidia/cloud-native",
                           "image": "k8s-driver-manager", "version": "v0.12.0"},
               "upgradePolicy": {"autoUpgrade": True, "maxParallelUpgrades": 1,
                                 "maxUnavailable": "25%",
                                 "waitForCompletion": {"timeoutSeconds": 0, "podSelector": ""},
                                 "podDeletion": {"force": False, "timeoutSeconds": 300,
                                                 "deleteEmptyDir": False},
                                 "drain": {"enable": False, "force": False, "podSelector": "",
                                           "timeoutSeconds": 300, "deleteEmptyDir": False}}},
    "toolkit": {"enabled": True, "repository": "nvcr.io/nvidia/k8s", "image": "container-toolkit",
                "version": "v1.18.0", "installDir": "/usr/local/nvidia"},
    "devicePlugin": {"enabled": True, "repository": "nvcr.io/nvidia", "image": "k8s-device-plugin",
                     "version": "v0.20.0", "config": {"name": "", "default": ""}},
    "dcgm": {"enabled": False},
    "dcgmExporter": {"enabled": True, "repository": "nvcr.io/nvidia/k8s", "image": "dcgm-exporter",
                     "version": "4.6.0-4.8.3-distroless",
                     "serviceMonitor": {"enabled": True, "interval": "15s"}},
    "gfd": {"enabled": True, "repository": "nvcr.io/nvidia", "image": "k8s-device-plugin",
            "version": "v0.20.0"},
    "mig": {"strategy": "single"},
    "migManager": {"enabled": True, "repository": "nvcr.io/nvidia/cloud-native",
                   "image": "k8s-mig-manager", "version": "v0.15.0",
                   "config": {"default": "all-disabled", "name": ""}},
    "nodeStatusExporter": {"enabled": False},
    "validator": {"repository": "nvcr.io/nvidia/cloud-native", "image": "gpu-operator-validator",
                  "version": "v26.7.0", "plugin": {"env": [{"name": "WITH_WORKLOAD", "value": "false"}]}},
    "sandboxWorkloads": {"enabled": False, "defaultWorkload": "container"},
    "cdi": {"enabled": True, "default": False},
    "psa": {"enabled": False},
}


def deep_merge(base: Obj, extra: Obj) -> Obj:
    out = copy.deepcopy(base)
    for key, value in extra.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = deep_merge(out[key], value)
        else:
            out[key] = copy.deepcopy(value)
    return out


class World:
    """Everything the controllers share: the store, the clock, the node-side state."""

    def __init__(self, store: Store, clock: SimClock, nodeside: NodeSide, scenario: Scenario):
        self.store, self.clock, self.nodeside, self.scenario = store, clock, nodeside, scenario
        self.ns = scenario.namespace
        self.nodes: dict[str, NodeRun] = {}
        self.pools: dict[str, Pool] = {p.name: p for p in scenario.pools}
        self.pool_members: dict[str, list[str]] = {p.name: [] for p in scenario.pools}
        self.dirty: set[str] = set()
        self.flags: set[str] = set()
        self.wake: asyncio.Event | None = None
        self.loop: asyncio.AbstractEventLoop | None = None
        self.templates: dict[str, Obj] = {}
        self.revisions: dict[str, tuple[str, int]] = {}
        self.pod_index: dict[str, tuple[str, str]] = {}  # pod name -> (node, operand)
        #: container statuses and conditions shared by the converged pods the set-up makes
        #: (equal by construction; stored objects are read-only), emptied after the set-up
        self.setup_statuses: dict[tuple[object, ...], Obj] = {}
        #: (operand, revision, instant) -> the status and condition transitions of the
        #: first converged pod the set-up made of it (see ``daemonsets``), emptied after it
        self.setup_pods: dict[tuple[str, str, float],
                              tuple[Obj, dict[str, tuple[bool, float]]]] = {}
        self._lock = threading.Lock()
        self._event_seq = 0
        self._ip_seq = 0
        self._name_seq: dict[tuple[str, str], int] = {}  # (namespace, prefix) -> names given
        self.operator_pod = ""
        self._policy_cache: tuple[Obj | None, Obj] | None = None
        store.watch("clusterpolicies.nvidia.com", self._forget_policy)
        store.watch(nvidiadriver.RESOURCE, self._forget_policy)

    def _forget_policy(self, _event: Any) -> None:
        self._policy_cache = None

    # ------------------------------------------------------------ scheduling
    def mark(self, node: str | None = None, *flags: str) -> None:
        """Note work to do (``node`` dirty, the module's flags) and wake the loop; safe from
        any thread (watch callbacks)."""
        with self._lock:
            if node:
                self.dirty.add(node)
            self.flags.update(flags)
        if self.loop is not None and self.wake is not None:
            try:
                self.loop.call_soon_threadsafe(self.wake.set)
            except RuntimeError:
                pass

    def take_dirty(self) -> tuple[set[str], set[str]]:
        with self._lock:
            dirty, flags = self.dirty, self.flags
            self.dirty, self.flags = set(), set()
        return dirty, flags

    # ------------------------------------------------------------------ policy
    def policy(self) -> Obj | None:
        """The active ClusterPolicy: oldest creationTimestamp, name as tie-break (§2)."""
        return self._policies()[0]

    def policy_spec(self) -> Obj:
        """The active ClusterPolicy's spec over the Helm defaults ({} when there is none)."""
        return self._policies()[1]

    def device_plugin_config(self) -> tuple[Obj | None, str | None]:
        """(the device plugin's config ConfigMap, its default config name) from the policy.

        Here, not in ``nodectl`` which labels nodes with it: the config-manager step in
        ``steps`` reads it too, and ``nodectl`` imports ``steps`` (that was an import
        circle)."""
        cfg = (self.policy_spec().get("devicePlugin") or {}).get("config") or {}
        cm = self.store.get("configmaps", cfg["name"], self.ns) if cfg.get("name") else None
        return cm, cfg.get("default")

    def _policies(self) -> tuple[Obj | None, Obj]:
        cached = self._policy_cache
        if cached is None:
            items, _ = self.store.list("clusterpolicies.nvidia.com")
            active = min(items, key=lambda p: (p["metadata"].get("creationTimestamp", ""),
                                               p["metadata"]["name"])) if items else None
            spec = deep_merge(DEFAULT_POLICY_SPEC, active.get("spec") or {}) if active else {}
            spec = nvidiadriver.overlay(self.store, spec) if spec else spec
            cached = self._policy_cache = (active, spec)
        return cached

    def upgrade_policy(self) -> Obj:
        return ((self.policy_spec().get("driver") or {}).get("upgradePolicy")) or {}

    def mig_strategy(self) -> str:
        return str((self.policy_spec().get("mig") or {}).get("strategy", "single"))

    def driver_version(self) -> str:
        return str((self.policy_spec().get("driver") or {}).get("version", "570.172.08"))

    # ---------------------------------------------------------------- helpers
    def node_obj(self, name: str) -> Obj | None:
        return self.store.get("nodes", name)

    def write_node(self, name: str, change: Callable[[Obj], None], manager: str) -> Obj | None:
        if self.store.get("nodes", name) is None:
            return None
        return self.store.mutate("nodes", name, None, change, manager=manager)

    def set_labels(self, name: str, labels: Mapping[str, str | None], manager: str,
                   setting_up: bool = False) -> None:
        """Set (or, with ``None``, remove) node labels as ``manager``; ``setting_up``: in
        the scenario's set-up, where the node is written in place (:meth:`Store.amend`)."""
        if setting_up:
            self.store.amend("nodes", name, None, labels=labels, manager=manager)
            return

        def change(obj: Obj) -> None:
            current = obj["metadata"].setdefault("labels", {})
            for key, value in labels.items():
                if value is None:
                    current.pop(key, None)
                else:
                    current[key] = value
        self.write_node(name, change, manager)

    def event(self, node: str, reason: str, message: str, etype: str = "Normal",
              component: str = "gpu-operator") -> None:
        """Record an Event on a Node, only one upstream really records (fail closed)."""
        if not upgrade_messages.known(reason, etype, message):
            raise ValueError(f"not an event upstream records: {etype} {reason} {message!r}")
        obj = self.node_obj(node)
        with self._lock:
            self._event_seq += 1
            seq = self._event_seq
        uid = (obj or {}).get("metadata", {}).get("uid", "")
        self.store.create("events", node_event(node, uid, reason, message, self.clock.rfc3339(),
                                               int(self.clock.now() * 1000) * 1000 + seq,
                                               etype, component), manager=component)

    def pod_event(self, pod: Obj, reason: str, message: str, etype: str = "Normal",
                  component: str = "gpu-operator") -> None:
        """Record an Event on a Pod, only one upstream really records there (fail closed)."""
        if not upgrade_messages.known(reason, etype, message, kind="Pod"):
            raise ValueError(f"not an event upstream records on a Pod: {etype} {reason} "
                             f"{message!r}")
        with self._lock:
            self._event_seq += 1
            seq = self._event_seq
        self.store.create("events", pod_event(pod, reason, message, self.clock.rfc3339(),
                                              int(self.clock.now() * 1000) * 1000 + seq,
                                              etype, component), manager=component)

    def pod_name(self, prefix: str, namespace: str | None = None) -> str:
        """``<prefix><5 random-looking chars>`` like generateName, unique in the namespace.

        Unique by construction, not by luck: the n-th name asked for with a prefix is
        :func:`~gputui.sim.operator.hardware.numbered_suffix` ``(n)``, a bijection of the
        5-character space, so ~45,000 pods at 5,000 nodes (``scale-5000``) never meet the
        birthday collisions that hashed suffixes hit there. Deterministic: the same scenario
        asks for names in the same order. The store is still consulted, for names that
        something else (a scenario, a client) created.
        """
        ns = namespace or self.ns
        while True:
            with self._lock:
                number = self._name_seq.get((ns, prefix), 0)
                self._name_seq[(ns, prefix)] = number + 1
            name = prefix + numbered_suffix(f"{ns}/{prefix}", number)
            if self.store.get("pods", name, ns) is None:
                return name

    def next_ip(self, base: str = "10.128.0.0") -> str:
        with self._lock:
            self._ip_seq += 1
            seq = self._ip_seq
        address = _address(base)
        if address.version != 4:
            return str(address + 10 + seq)
        # written out by hand: ``str(IPv4Address)`` was 3 us of each of 40,000 pods' set-up
        value = int(address) + 10 + seq
        return f"{value >> 24 & 255}.{value >> 16 & 255}.{value >> 8 & 255}.{value & 255}"

    def log(self, pod: str, container: str, line: str) -> None:
        self.nodeside.log(self.ns, pod, container, f"{self.clock.rfc3339()} {line}")

    def resolve(self, args: dict[str, Any]) -> list[str]:
        """Node names from a timeline event's ``node`` (name or POOL/INDEX) or ``pool``."""
        if args.get("node"):
            ref = str(args["node"])
            if "/" in ref:
                pool, _, idx = ref.partition("/")
                members = self.pool_members.get(pool, [])
                return [members[int(idx)]] if idx.isdigit() and int(idx) < len(members) else []
            return [ref] if ref in self.nodes else []
        if args.get("pool"):
            return list(self.pool_members.get(str(args["pool"]), []))
        return []


@lru_cache(maxsize=64)
def _address(base: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address:
    """``base`` parsed once (40,000 pod IPs are counted from two bases at 5,000 nodes)."""
    return ipaddress.ip_address(base)
