"""The snapshot's MIG view kept by difference, and which ConfigMap changes touch which nodes.

A node's MIG view depends on its own view and on the ConfigMap its mig-manager reads
(:func:`gputui.domain.mig.config_source`). Only ``<node>-mig-config`` belongs to one node;
any other ConfigMap change (the default or custom config) can reach every MIG node, so it
asks for a full build.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from types import MappingProxyType

from gputui.domain import labels as L
from gputui.domain.inputs import JsonDict
from gputui.domain.mig import MigConfigCache, MigSpec, node_mig_view
from gputui.domain.model import MigView, NodeMigView, NodeView

ConfigMaps = Mapping[tuple[str, str], JsonDict]


def configmap_changes(old: ConfigMaps | None, new: ConfigMaps, nodes: Mapping[str, JsonDict],
                      custom: str | None) -> set[str] | None:
    """Nodes whose own MIG ConfigMap changed; None when a shared one did (or no history)."""
    if old is None:
        return None
    if old == new:  # C speed; the values compare by identity first
        return set()
    touched: set[str] = set()
    for key in old.keys() | new.keys():
        if old.get(key) is new.get(key):
            continue
        name = key[1]
        node = name[: -len(L.MIG_CONFIGMAP_SUFFIX)]
        if name == custom or not name.endswith(L.MIG_CONFIGMAP_SUFFIX) or node not in nodes:
            return None
        touched.add(node)
    return touched


class MigTracker:
    """Per-node MIG views of the MIG nodes, by name, and the parsed config files."""

    def __init__(self) -> None:
        self._cache = MigConfigCache()
        self._views: dict[str, NodeMigView] = {}
        self._mapping: Mapping[str, NodeMigView] | None = None
        self._sorted = True

    def fork(self) -> MigTracker:
        """An independent copy; the parsed-config memo is shared (a text parses to the same
        config in every copy)."""
        other = copy.copy(self)
        other._views = dict(self._views)
        return other

    def specs_of(self, configmap: JsonDict) -> Mapping[str, tuple[MigSpec, ...]]:
        """The configs a MIG ConfigMap offers, by name (parsed once per distinct text)."""
        return self._cache.get(configmap).configs

    def put(self, name: str, node: NodeView | None, namespace: str | None,
            custom: str | None, configmaps: ConfigMaps) -> None:
        """Node ``name`` now looks like ``node`` (None: gone)."""
        had = name in self._views
        if node is None or not (node.mig_capable or node.mig_config):
            if had:
                del self._views[name]
                self._mapping = None
            return
        self._views[name] = node_mig_view(node, namespace, custom, configmaps, self._cache)
        self._sorted = self._sorted and had
        self._mapping = None

    def physical_gpus(self, name: str, node: NodeView) -> int | None:
        """The node's physical GPU count (None: unknown), from its labels and, under the
        ``single`` strategy, its applied MIG config (:func:`gputui.domain.mig.physical_gpu_count`)."""
        if "-MIG-" not in node.product:
            return node.gpu_count
        view = self._views.get(name)
        return view.physical_gpus if view is not None else None

    def view(self, strategy: str | None) -> MigView:
        """The MIG view; its node mapping is reused while no MIG node changed."""
        if not self._sorted:
            self._views = {name: self._views[name] for name in sorted(self._views)}
            self._sorted = True
        if self._mapping is None:
            self._mapping = MappingProxyType(dict(self._views))
        return MigView(strategy=strategy, nodes=self._mapping)
