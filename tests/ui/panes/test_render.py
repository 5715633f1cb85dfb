"""The detail renderers as plain text at fixed widths: what the operator's eye lands on."""

from __future__ import annotations

import io
from dataclasses import replace
from types import MappingProxyType

from rich.console import Console

from gputui.domain.model import MigGpu, MigInstance
from gputui.ui.render.mig import gpu_groups, node_card, profile_slices, render_mig, slice_bar
from gputui.ui.render.node_detail import render_node_detail
from gputui.ui.render.pipeline import render_pipeline
from gputui.ui.render.pod_log import render_events
from gputui.ui.render.upgrades import lane_rows, policy_line, render_upgrades
from gputui.ui.theme import theme_palette
from tests.ui.helpers import rendered_text
from tests.ui.panes.data import (
    BROKEN,
    NOW,
    blocked_snapshot,
    broken_node,
    healthy_node,
    mig_snapshot,
    upgrade_node,
    upgrade_snapshot,
)


def lines_with(output: str, needle: str) -> list[str]:
    return [line for line in output.splitlines() if needle in line]


# --- pipeline ---------------------------------------------------------------------------------

def test_pipeline_names_the_break_before_the_table() -> None:
    out = rendered_text(render_pipeline(broken_node(), NOW, "driver").renderable)
    first = out.splitlines()[:3]
    assert BROKEN in first[0] and "driver 550.90.07" in first[0] and "kernel 6.8.0-1015-gcp" in first[0]
    assert first[1].startswith("✖ chain breaks at driver: failed · 5 later stages wait on it")
    assert "Init:CrashLoopBackOff in k8s-driver-manager, 14 restarts" in first[2]


def test_stages_after_the_break_wait_on_it() -> None:
    out = rendered_text(render_pipeline(broken_node(), NOW, None).renderable)
    for operand in ("container-toolkit", "operator-validator", "device-plugin",
                    "dcgm-exporter", "gpu-feature-discovery"):
        (row,) = [line for line in lines_with(out, operand) if "└" not in line]
        assert "◐ progressing" in row and "waiting on driver" in row, row
    (driver,) = [line for line in out.splitlines() if line.lstrip("▶ ").startswith("driver ")]
    assert "✖ failed ◀" in driver and "14" in driver


def test_wide_pipeline_shows_pod_age_and_init_container() -> None:
    out = rendered_text(render_pipeline(broken_node(), NOW, None, wide=True).renderable, width=160)
    (row,) = lines_with(out, "nvidia-device-plugin-daemonset-q7w2r")
    assert "3 h" in row and "waiting on driver (init: toolkit-validation)" in row


def test_validator_steps_are_substages_in_chain_order() -> None:
    out = rendered_text(render_pipeline(broken_node(), NOW, None).renderable).splitlines()
    steps = ["driver-validation", "toolkit-validation", "cuda-validation", "plugin-validation"]
    rows = [next(i for i, line in enumerate(out) if f"└ {step}" in line) for step in steps]
    assert rows == sorted(rows)
    assert "◐ progressing" in out[rows[0]] and "? absent" in out[rows[1]]


def test_cursor_row_and_footer_name_the_pod_and_container() -> None:
    result = render_pipeline(broken_node(), NOW, "driver")
    body = rendered_text(result.body).splitlines()
    assert result.cursor_line is not None and body[result.cursor_line].startswith("▶")
    out = rendered_text(result.renderable).splitlines()
    assert any("pod gpu-operator/nvidia-driver-daemonset-8x7kq · container k8s-driver-manager"
               in line for line in out)


def test_healthy_chain_reads_complete() -> None:
    out = rendered_text(render_pipeline(healthy_node(), NOW, None).renderable)
    assert "✔ chain complete: every stage ready" in out
    assert "waiting on" not in out


def test_palette_colours_the_broken_stage() -> None:
    palette = theme_palette({"gpu-crit": "red", "gpu-progress": "blue"})
    console = Console(width=80, record=True, color_system="truecolor", file=io.StringIO())
    console.print(render_pipeline(broken_node(), NOW, None, palette=palette).renderable)
    assert "\x1b[1;38;2;255;0;0m" in console.export_text(styles=True)


# --- upgrades ---------------------------------------------------------------------------------

def test_policy_line_resolves_max_unavailable_and_says_drain_off() -> None:
    assert policy_line(upgrade_snapshot().upgrade) == (
        "maxParallelUpgrades 4, maxUnavailable 25% (=2 of 8), waitForCompletion app=trainer "
        "(never times out), drain off")


def test_lanes_group_nodes_in_state_machine_order() -> None:
    rows = lane_rows(upgrade_snapshot().upgrade, NOW)
    headings = [r.label for r in rows if r.node is None]
    assert headings == ["upgrade-required (2)", "wait-for-jobs-required (3)",
                        "upgrade-done (2)", "upgrade-failed (1)"]
    lane = {r.node: r.lane for r in rows if r.node}
    assert lane[upgrade_node(0)] == "wait-for-jobs-required"
    assert lane[upgrade_node(3)] == "upgrade-failed"


def test_upgrades_view_shows_slots_reasons_and_the_failed_event() -> None:
    out = rendered_text(render_upgrades(upgrade_snapshot().upgrade, NOW), width=160)
    assert "slots 4 of 4 in use (1 failed) · 0 free · unavailable 1 of max 2" in out
    assert "required 2 › cordon 0 › jobs 3" in out and "failed 1" in out
    (row,) = lines_with(out, upgrade_node(0))
    assert "2 pods app=trainer still running (oldest 31 h), timeout: never" in row
    (row,) = lines_with(out, upgrade_node(4))
    assert "waiting for a slot (4 of 4 in use, 1 failed)" in row
    (row,) = lines_with(out, upgrade_node(3))
    assert "failed in pod-restart-required" in row


def test_blocked_banner() -> None:
    out = rendered_text(render_upgrades(blocked_snapshot().upgrade, NOW), width=160)
    assert "✖ blocked: driver DaemonSet nvidia-driver-daemonset has 1 unscheduled pod" in out


# --- MIG --------------------------------------------------------------------------------------

def test_slices_are_proportional_to_the_profile() -> None:
    assert profile_slices("3g.40gb") == 3 and profile_slices("1g.10gb+me") == 1
    seven = MigGpu(0, True, (MigInstance("1g.10gb", 7),))
    assert slice_bar(seven) == "[1g]" * 7
    balanced = MigGpu(0, True, (MigInstance("3g.40gb", 1), MigInstance("2g.20gb", 1),
                                MigInstance("1g.10gb", 2)))
    assert slice_bar(balanced) == "[ 3g.40gb  ][  2g  ][1g][1g]"
    assert slice_bar(balanced, cell=6) == "[    3g.40gb     ][ 2g.20gb  ][ 1g ][ 1g ]"
    assert "MIG off" in slice_bar(MigGpu(1, False))
    partial = MigGpu(0, True, (MigInstance("3g.40gb", 1),))
    assert slice_bar(partial).endswith("·" * 16)


def test_mig_cards_show_desired_applied_state_and_configs() -> None:
    out = rendered_text(render_mig(mig_snapshot().mig, NOW), width=160)
    assert "3 MIG-capable nodes · 1 pending · 1 failed · cluster strategy mixed" in out
    assert "✔ success for 24 h" in out and "◐ pending for 50 min" in out
    assert "✖ failed for 10 min" in out
    assert "desired all-1g.10gb · applied — (pending)" in out
    assert "GPU 0-1  " + "[1g]" * 7 + "  1g.10gb ×7 each" in out
    assert "offers (from a100-pool-node-1-mig-config): all-disabled all-enabled" in out
    assert "l opens its log" in out


def test_identical_neighbouring_gpus_fold_into_one_line() -> None:
    one = (MigInstance("1g.10gb", 7),)
    gpus = (MigGpu(0, True, one), MigGpu(1, True, one), MigGpu(2, False), MigGpu(3, True, one))
    assert [label for label, _ in gpu_groups(gpus)] == ["GPU 0-1", "GPU 2", "GPU 3"]


def test_mig_card_without_layout_says_so() -> None:
    view = replace(mig_snapshot().mig.nodes["a100-pool-node-2"], gpus=())
    assert "layout unknown: config 'all-1g.10gb' not found" in rendered_text(node_card(view, NOW))


# --- node detail and metrics --------------------------------------------------------------------

def test_node_detail_puts_kernel_beside_driver_and_flags_missing_gpus() -> None:
    out = rendered_text(render_node_detail(broken_node(), NOW), width=120)
    (driver,) = [line for line in out.splitlines() if line.startswith("driver ")]
    assert "550.90.07  ·  kernel 6.8.0-1015-gcp  ·  operator-managed" in driver
    assert "nvidia.com/gpu 0/8 allocatable  ✖ 8 missing" in out
    assert "ml/trainer-7d9f-0" in out and "Pending" in out
    assert "✖ critical driver-pod-failing" in out and "hint: Kernel 6.8.0-1015-gcp" in out
    assert "JOIN" in out and "? unknown: its operand pods were made or restarted" in out


def test_node_detail_join_gives_time_to_gpu_and_each_stage() -> None:
    out = rendered_text(render_node_detail(healthy_node(), NOW), width=160)
    (line,) = [line for line in out.splitlines() if line.startswith("JOIN ")]
    assert "GPUs allocatable 6 min after joining (driver 4 min · toolkit 12 s · valid. 38 s · " \
        "plugin 88 s)" in line


def test_node_detail_highlights_paused_deploy_labels() -> None:
    from gputui.domain.model import DeployLabel
    node = replace(healthy_node(), deploy_labels=(
        DeployLabel("driver", "true", False),
        DeployLabel("device-plugin", "paused-for-mig-change", True)))
    out = rendered_text(render_node_detail(node, NOW), width=120)
    assert "‖ device-plugin=paused-for-mig-change" in out and "‖ driver" not in out


def test_events_table_marks_warnings_in_words() -> None:
    events = [{"type": "Warning", "reason": "BackOff", "count": 14,
               "message": "Back-off restarting failed container",
               "lastTimestamp": "2025-11-29T09:58:00Z"}]
    out = rendered_text(render_events(events, NOW), width=100)
    assert "▲ Warning" in out and "BackOff" in out and "2 min" in out
    assert "no events" in rendered_text(render_events([], NOW))


def test_empty_lanes_view_has_no_rows() -> None:
    from gputui.domain.model import UpgradeView
    assert lane_rows(UpgradeView(lanes=MappingProxyType({})), NOW) == []


def test_a_stage_with_no_pod_is_not_waiting_on_the_break() -> None:
    from gputui.domain.model import PipelineStage, StageStatus
    node = broken_node()
    absent = PipelineStage("mig-manager", StageStatus.ABSENT, "no pod on this node")
    node = replace(node, pipeline=replace(node.pipeline, stages=node.pipeline.stages + (absent,)))
    out = rendered_text(render_pipeline(node, NOW, None).renderable)
    (row,) = lines_with(out, "mig-manager")
    assert "? absent" in row and "no pod on this node" in row and "waiting" not in row
    assert "5 later stages wait on it" in out


def test_a_deleted_node_says_so() -> None:
    out = rendered_text(render_pipeline(None, NOW, None, missing=BROKEN).renderable)
    assert f"node {BROKEN} is not in the cluster any more" in out


def test_no_policy_means_no_slot_line() -> None:
    from gputui.domain.model import UpgradeView
    out = rendered_text(render_upgrades(UpgradeView(), NOW))
    assert "no driver upgrade policy" in out and "slots" not in out


def test_wide_side_panel_lists_the_pods_that_hold_the_node() -> None:
    from gputui.ui.render.upgrades import node_side_text
    snapshot = upgrade_snapshot()
    out = rendered_text(node_side_text(snapshot.nodes[upgrade_node(0)], NOW), width=60)
    assert "GPU pods on the node (2)" in out
    assert "ml/trainer-n00-0  Running  4 GPU  31 h  app=trainer" in out
    failed = rendered_text(node_side_text(snapshot.nodes[upgrade_node(3)], NOW), width=60)
    assert "driver: ✖ failed · 11 restarts" in failed


def test_pipeline_blames_the_crash_looping_device_plugin_not_the_validator() -> None:
    """The validator's plugin-validation waits for the device plugin (gpu-operator
    ``cmd/nvidia-validator/main.go``): the banner names the plugin, the stage that fails."""
    from gputui.domain.snapshot import SnapshotBuilder
    from tests.domain import factory as f

    pods = [p for p in f.healthy_pods() if p["metadata"]["labels"]["app"] not in (
        "nvidia-device-plugin-daemonset", "nvidia-operator-validator")]
    pods.append(f.operand_pod("device-plugin", crash_in="nvidia-device-plugin", restarts=7,
                              suffix="dp"))
    pods.append(f.operand_pod("operator-validator", crash_in="plugin-validation", restarts=4,
                              suffix="va"))
    node = SnapshotBuilder().build(f.objects([f.node(allocatable=0)], pods), f.T0).nodes[f.NODE]
    out = rendered_text(render_pipeline(node, f.T0, None).renderable, width=120)
    assert "chain breaks at device-plugin: failed" in out.splitlines()[1]
