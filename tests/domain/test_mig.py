"""MIG: mig-parted config parsing, per-GPU layout, config source per node (§5)."""

from __future__ import annotations

from typing import Any

from gputui.domain.mig import MigConfigCache, config_source, layout, parse_mig_config
from gputui.domain.model import MigInstance
from gputui.domain.snapshot import SnapshotBuilder
from tests.domain import factory as f


def _text() -> str:
    text = f.load("configmap-default-mig-parted-config.json")["data"]["config.yaml"]
    assert isinstance(text, str)
    return text


def test_parse_named_configs_in_file_order() -> None:
    parsed = parse_mig_config(_text())
    assert parsed.error == ""
    assert list(parsed.configs) == ["all-disabled", "all-enabled", "all-1g.10gb", "all-3g.40gb",
                                    "all-balanced", "custom-split"]
    spec = parsed.configs["all-1g.10gb"][0]
    assert spec.devices is None and spec.mig_enabled
    assert spec.instances == (MigInstance("1g.10gb", 7),)
    assert parsed.configs["all-balanced"][0].device_filter == ("0x233010DE", "0x233110DE")


def test_parse_errors_are_reported_not_raised() -> None:
    assert parse_mig_config("version: v1\n  bad: [").error.startswith("invalid YAML")
    assert parse_mig_config("version: v1\n").error == "no mig-configs section"


def test_layout_all_and_index_lists() -> None:
    parsed = parse_mig_config(_text())
    gpus = layout(parsed.configs["all-3g.40gb"], 8)
    assert len(gpus) == 8 and all(g.instances == (MigInstance("3g.40gb", 2),) for g in gpus)
    split = layout(parsed.configs["custom-split"], 8)
    assert [g.mig_enabled for g in split] == [False] * 4 + [True] * 4
    assert split[0].instances == () and split[7].instances == (MigInstance("1g.10gb", 7),)
    balanced = layout(parsed.configs["all-balanced"], 2)
    assert [i.profile for i in balanced[0].instances] == ["1g.10gb", "2g.20gb", "3g.40gb"]


def test_config_source_prefers_custom_then_per_node_then_default() -> None:
    default = f.load("configmap-default-mig-parted-config.json")
    per_node = f.merge(default, {"metadata": {"name": f"{f.NODE}-mig-config"}})
    custom = f.merge(default, {"metadata": {"name": "my-mig"}})
    cms = {(f.NS, c["metadata"]["name"]): c for c in (default, per_node, custom)}
    assert config_source(f.NODE, f.NS, "my-mig", cms)[0] == "my-mig"
    assert config_source(f.NODE, f.NS, "default-mig-parted-config", cms)[0] == (
        f"{f.NODE}-mig-config")
    del cms[(f.NS, f"{f.NODE}-mig-config")]
    assert config_source(f.NODE, f.NS, None, cms)[0] == "default-mig-parted-config"


def _snapshot(labels: dict[str, str | None], configmaps: list[dict[str, Any]] | None = None) -> Any:
    cms = configmaps if configmaps is not None else [
        f.load("configmap-default-mig-parted-config.json")]
    objs = f.objects([f.node(labels=labels)], f.healthy_pods(), configmaps=cms,
                     label_times={f.NODE: {"nvidia.com/mig.config.state": f.T0 - 120}})
    return SnapshotBuilder().build(objs, f.T0)


def test_mig_view_mixed_success() -> None:
    snap = _snapshot({"nvidia.com/mig.config": "all-1g.10gb", "nvidia.com/mig.strategy": "mixed"})
    view = snap.mig.nodes[f.NODE]
    assert view.desired == view.applied == "all-1g.10gb"
    assert view.state == "success" and view.strategy == "mixed"
    assert view.since == f.T0 - 120
    assert view.config_source == "default-mig-parted-config"
    assert "all-balanced" in view.available_configs
    assert len(view.gpus) == 8 and view.gpus[0].instances == (MigInstance("1g.10gb", 7),)


def test_mig_view_single_strategy_counts_physical_gpus() -> None:
    snap = _snapshot({"nvidia.com/mig.config": "all-1g.10gb",
                      "nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3-MIG-1g.10gb",
                      "nvidia.com/gpu.count": "56"})
    assert len(snap.mig.nodes[f.NODE].gpus) == 8


def test_mig_view_pending_has_no_applied_config() -> None:
    snap = _snapshot({"nvidia.com/mig.config": "all-3g.40gb",
                      "nvidia.com/mig.config.state": "pending"})
    view = snap.mig.nodes[f.NODE]
    assert view.applied is None and view.desired == "all-3g.40gb"
    assert view.gpus[0].instances == (MigInstance("3g.40gb", 2),)


def test_non_mig_node_not_in_mig_view() -> None:
    snap = _snapshot({"nvidia.com/mig.capable": "false", "nvidia.com/mig.config": None,
                      "nvidia.com/mig.config.state": None})
    assert f.NODE not in snap.mig.nodes


def test_config_cache_parses_once_per_resource_version() -> None:
    cache = MigConfigCache()
    cm = f.load("configmap-default-mig-parted-config.json")
    assert cache.get(cm) is cache.get(cm)
