"""The node list: patching by key, filter, sort, marks, faults-only (Pilot, frozen data)."""

from __future__ import annotations

import copy
from dataclasses import replace

from gputui.domain.model import ClusterSnapshot, NodeView
from gputui.domain.snapshot import SnapshotBuilder
from gputui.ui.node_rows import COLUMNS, LabelTexts, NodeFilter, node_cells
from gputui.ui.screens.nodes import NodesScreen
from gputui.ui.widgets.node_table import NodeTable
from tests.fixtures import SCENARIOS
from tests.fixtures.recordings import ReplaySource, load_recording
from tests.ui.conftest import FrozenApp, modified, settle

H100 = "gke-prod-h100-pool-7f3a-4vvm"
A100_OK = "gke-prod-a100-pool-2b9c-stnm"


async def test_one_row_per_node_with_explicit_column_keys(frozen_app: FrozenApp) -> None:
    app = frozen_app("driver-crashloop")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        table = app.screen.query_one(NodeTable)
        assert sorted(table.shown_nodes) == sorted(app.snapshot.nodes)
        assert list(table.columns) == [c.key for c in COLUMNS]
        # worst first: the healthy node sorts last, the cursor starts on the top row
        assert table.shown_nodes[-1] == A100_OK
        assert table.selected_node == table.shown_nodes[0]
        assert table.get_cell(H100, "gpus").plain == "0/8"
        # the row leads with the cause (the crash-looping driver), not the symptom
        assert table.get_cell(H100, "finding").plain.startswith("✖ crit driver-pod-failing")


async def test_refresh_patches_rows_and_keeps_cursor_and_marks(frozen_app: FrozenApp) -> None:
    recording = load_recording("driver-crashloop", SCENARIOS)
    source = ReplaySource.from_recording(recording)
    app = frozen_app("driver-crashloop", source=source)
    gone = "gke-prod-h100-pool-7f3a-bfdz"
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        table = app.screen.query_one(NodeTable)
        assert table.select_node(A100_OK)
        table.toggle_mark(A100_OK)
        table.toggle_mark(gone)
        table.toggle_mark(H100)
        table.select_node(A100_OK)
        added: list[str] = []
        removed: list[str] = []
        table.add_row = _spy(table.add_row, added)  # type: ignore[method-assign]
        table.drop_rows = _spy(table.drop_rows, removed)  # type: ignore[method-assign]
        source.push(modified(recording, remove=(gone,), add={"gke-new-node-1": A100_OK},
                             cordon=(H100,)))
        await settle(pilot)
        assert app.pace.applied == 2
        assert table.selected_node == A100_OK
        assert table.marks == {A100_OK, gone, H100}  # a vanished node's mark is harmless
        assert removed == [gone] and added == ["gke-new-node-1"]
        assert gone not in table.shown_nodes and "gke-new-node-1" in table.shown_nodes
        assert table.get_cell(H100, "status").plain == "Ready,Cordoned"
        assert table.get_cell(A100_OK, "mark").plain == "▶●"  # the cursor's row, marked


def _spy(method, calls: list[str]):  # type: ignore[no-untyped-def]
    """Record the row keys ``method`` is called for (its first argument: a key or keys)."""
    def wrapper(*args, **kwargs):  # type: ignore[no-untyped-def]
        keys = args[0]
        calls.extend([keys] if isinstance(keys, str) else keys)
        return method(*args, **kwargs)
    return wrapper


async def test_unchanged_views_are_skipped_by_identity(frozen_app: FrozenApp) -> None:
    recording = load_recording("driver-crashloop", SCENARIOS)
    source = ReplaySource.from_recording(recording)
    app = frozen_app("driver-crashloop", source=source)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        table = app.screen.query_one(NodeTable)
        updates: list[str] = []
        table.write_cells = _spy(table.write_cells, updates)  # type: ignore[method-assign]
        table.add_row = _spy(table.add_row, updates)  # type: ignore[method-assign]
        source.push(source.snapshots[0])
        await settle(pilot)
        assert updates == []


async def test_filter_text_and_label_selector(frozen_app: FrozenApp) -> None:
    app = frozen_app("driver-crashloop")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        table = app.screen.query_one(NodeTable)
        await pilot.press("slash", *"a100")
        await settle(pilot)
        assert all("a100" in name for name in table.shown_nodes) and table.row_count == 2
        await pilot.press("enter")
        assert table.has_focus
        await pilot.press("slash", *("backspace",) * 4, *"nvidia.com/gpu.product=NVIDIA-H100-80GB-HBM3")
        await settle(pilot)
        assert table.row_count == 3 and all("h100" in n for n in table.shown_nodes)
        await pilot.press("escape")
        await settle(pilot)
        assert table.node_filter == NodeFilter() and table.row_count == 5


def test_filter_terms_are_label_selectors_or_text() -> None:
    view = NodeView(name="n1", product="NVIDIA-A100", labels={"pool": "a", "nvidia.com/mig.capable": "true"})
    assert NodeFilter("pool=a").predicate()(view)
    assert not NodeFilter("pool!=a").predicate()(view)
    assert NodeFilter("!zone").predicate()(view)
    assert NodeFilter("nvidia.com/mig.capable").predicate()(view)
    assert NodeFilter("A100 pool=a").predicate()(view)
    assert not NodeFilter("h100").predicate()(view)
    assert not NodeFilter(findings_only=True).predicate()(view)
    assert NodeFilter("pool in (a, b)").predicate()(view)
    assert not NodeFilter("pool notin (a,b) A100").predicate()(view)
    assert NodeFilter("pool=a,nvidia.com/mig.capable=true").predicate()(view)


def test_label_texts_match_like_each_label_and_follow_a_changed_node() -> None:
    """The kept label texts give the answers matching label by label gives: a match never
    spans two labels, and a node whose labels changed is matched on its new labels."""
    texts = LabelTexts()
    view = NodeView(name="n1", labels={"pool": "a", "zone": "Eu-West"})
    for typed, found in (("pool=a", True), ("eu-west", True), ("a\x00zone", False),
                         ("=azone", False), ("west", True), ("h100", False)):
        assert NodeFilter(typed).predicate((), texts)(view) is found, typed
        assert NodeFilter(typed).predicate()(view) is found, typed
    relabelled = replace(view, labels={"pool": "b"})
    assert not NodeFilter("west").predicate((), texts)(relabelled)
    assert NodeFilter("pool=b").predicate((), texts)(relabelled)
    odd = NodeView(name="n2", labels={"gpus": 8, "pool": "a"})  # type: ignore[dict-item]
    assert NodeFilter("8").predicate((), texts)(odd)  # a value read as a number
    texts.keep_only(())
    assert len(texts) == 0


async def test_a_node_changed_while_filtered_out_comes_back_changed(frozen_app: FrozenApp) -> None:
    """Clearing a filter brings rows back from their kept cells; a node that changed while
    it was hidden shows its new cells, and the columns are as wide as before."""
    recording = load_recording("driver-crashloop", SCENARIOS)
    source = ReplaySource.from_recording(recording)
    app = frozen_app("driver-crashloop", source=source)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        table = app.screen.query_one(NodeTable)
        before = {name: table.get_row(name) for name in table.shown_nodes}
        widths = {key: column.content_width for key, column in table.columns.items()}
        table.set_filter(NodeFilter("a100"))
        await settle(pilot)
        assert H100 not in table.shown_nodes
        source.push(modified(recording, cordon=(H100,)))
        await settle(pilot)
        table.set_filter(NodeFilter())
        await settle(pilot)
        assert sorted(table.shown_nodes) == sorted(before)
        status = table.get_cell(H100, "status")
        assert "Cordoned" in status.plain and "Cordoned" not in before[H100][list(table.columns).index("status")].plain
        assert table.get_row(A100_OK) == before[A100_OK]
        # the changed cell was measured (its column grew to fit it); the kept ones fit
        assert table.columns["status"].content_width == max(widths["status"], status.cell_len)
        assert {key: column.content_width for key, column in table.columns.items()
                if key != "status"} == {key: w for key, w in widths.items() if key != "status"}


async def test_sort_cycles_and_flips(frozen_app: FrozenApp) -> None:
    app = frozen_app("driver-crashloop")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        table = app.screen.query_one(NodeTable)
        cursor = table.selected_node
        assert table.sort_column == "finding"
        await pilot.press("o")  # finding -> upgrade (the next column)
        assert table.sort_column == "upgrade"
        table.sort_by("name")
        await settle(pilot)
        assert table.shown_nodes == sorted(app.snapshot.nodes)
        await pilot.press("O")
        await settle(pilot)
        assert table.shown_nodes == sorted(app.snapshot.nodes, reverse=True)
        assert table.selected_node == cursor  # the cursor follows its node, not its row


async def test_header_click_sorts(frozen_app: FrozenApp) -> None:
    app = frozen_app("driver-crashloop")
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot)
        table = app.screen.query_one(NodeTable)
        name_x = table.columns["mark"].render_width(table.cell_padding) + 1
        await pilot.click(NodeTable, offset=(name_x, 0))  # the header's first line
        await settle(pilot)
        assert table.sort_column == "name"
        assert table.shown_nodes == sorted(app.snapshot.nodes)
        await pilot.click(NodeTable, offset=(name_x, 0))  # again: the order flips
        await settle(pilot)
        assert table.shown_nodes == sorted(app.snapshot.nodes, reverse=True)


async def test_findings_only_and_marks(frozen_app: FrozenApp) -> None:
    app = frozen_app("driver-crashloop")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        table = app.screen.query_one(NodeTable)
        first = table.selected_node
        await pilot.press("space")
        assert table.marks == {first}
        assert table.selected_node != first  # k9s: marking moves down
        await pilot.press("f")
        await settle(pilot)
        assert A100_OK not in table.shown_nodes and table.row_count == 4
        assert table.marks == {first}
        await pilot.press("f")
        await settle(pilot)
        assert table.row_count == 5
        await pilot.press("ctrl+backslash")
        assert table.marks == set()


async def test_cursor_drives_detail_node(frozen_app: FrozenApp) -> None:
    app = frozen_app("driver-crashloop")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, NodesScreen)
        await pilot.press("down")
        await settle(pilot)
        assert screen.selected == screen.table.shown_nodes[1]


def test_cells_show_symbol_and_word_not_only_colour() -> None:
    snapshot = load_recording("driver-crashloop", SCENARIOS).snapshot()
    cells = node_cells(snapshot.nodes[H100])
    assert cells["finding"] == ("✖ crit driver-pod-failing +2", "crit")  # cause first
    assert cells["gpus"] == ("0/8", "crit")
    assert node_cells(snapshot.nodes[A100_OK])["finding"] == ("✔ ok", "ok")


def _stalled_queue() -> tuple[ReplaySource, ClusterSnapshot, list[str]]:
    """The upgrade-failed recording with its three done nodes queued in upgrade-required
    for 3 h behind the failed node, which holds the only slot (maxParallelUpgrades 1)."""
    recording = load_recording("upgrade-failed", SCENARIOS)
    objects = recording.objects
    state = "nvidia.com/gpu-driver-upgrade-state"
    waiting = sorted(n for n, node in objects.nodes.items()
                     if node["metadata"]["labels"].get(state) == "upgrade-done")
    nodes = dict(objects.nodes)
    times = {name: dict(value) for name, value in objects.label_times.items()}
    for name in waiting:
        meta = nodes[name]["metadata"]
        nodes[name] = {**nodes[name], "metadata": {
            **meta, "labels": {**meta["labels"], state: "upgrade-required"}}}
        times[name][state] = recording.now - 3 * 3600
    policy = copy.deepcopy(objects.cluster_policies[0])
    policy["spec"]["driver"]["upgradePolicy"]["maxParallelUpgrades"] = 1
    snapshot = SnapshotBuilder().build(replace(objects, nodes=nodes, label_times=times,
                                               cluster_policies=[policy]), recording.now)
    return ReplaySource.from_recording(recording), snapshot, waiting


async def test_rows_of_a_stalled_queue_point_to_its_one_finding(frozen_app: FrozenApp) -> None:
    """A stalled upgrade queue is one cluster-level finding (k8s-operator-libs
    ``pkg/upgrade/common_manager.go``: failed nodes hold slots); each waiting node's row
    shows it, and the FINDING column still fits an 80x24 terminal."""
    source, snapshot, waiting = _stalled_queue()
    (queue,) = [f for f in snapshot.findings if f.code == "upgrade-stalled"]
    assert queue.node is None and list(queue.nodes) == waiting and len(waiting) == 3
    app = frozen_app("upgrade-failed", source=source)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        table = app.screen.query_one(NodeTable)
        assert {table.get_cell(n, "finding").plain for n in waiting} == {"✔ ok"}
        source.push(snapshot)
        await settle(pilot)
        for name in waiting:
            assert table.get_cell(name, "finding").plain == "▲ warn upgrade-stalled"
        # worst first: the failed node, then the queue it holds up
        assert table.shown_nodes[1:] == waiting
        # the pointer is read whole at 80 columns: it starts left of 80 - its length
        left = sum(c.render_width(table.cell_padding) for c in table.ordered_columns
                   if c.key in ("mark", "name", "status", "gpus"))
        assert left + table.cell_padding + len("▲ warn upgrade-stalled") <= 80
        # faults only keeps them: they wait in a stalled queue
        table.set_filter(NodeFilter(findings_only=True))
        await settle(pilot)
        failed = [n for n, v in snapshot.nodes.items() if v.upgrade_state == "upgrade-failed"]
        assert sorted(table.shown_nodes) == sorted([*waiting, *failed]) and len(failed) == 1
        table.set_filter(NodeFilter())
        await settle(pilot)
        # the queue frees: the rows follow though their node views did not change
        source.push(replace(snapshot, findings=tuple(
            f for f in snapshot.findings if f is not queue)))
        await settle(pilot)
        assert {table.get_cell(n, "finding").plain for n in waiting} == {"✔ ok"}
