"""Issue 29, item 10: one figure, one source, so two screens never disagree about it.

Each test fails on the code before its fix:
* the summary's upgrade counts added up to more than the nodes ("7 nodes: 1 done, 1 in
  progress, 5 pending, 1 failed"): a failed node holds a slot, so ``in_progress`` counts
  it, and the sentence counted it twice;
* (the fleet line's "1 nodes on screen" beside five rows is in
  ``tests/metrics/test_feed_live.py``: it needs exporters to scrape.)
"""

from __future__ import annotations

from types import MappingProxyType

from gputui.domain.model import ClusterSnapshot
from gputui.domain.summary import SummaryInput, build_summary
from gputui.domain.views import UpgradePolicy, UpgradeView

NOW = 1_796_000_000.0


def _counts(text: str) -> str:
    line = next(line for line in text.splitlines() if line.startswith("- Auto upgrade:"))
    return line.split("; ", 1)[1]


def test_the_summary_upgrade_counts_add_up_to_the_nodes() -> None:
    """upgrade-slots-held on the demo: 24 nodes, 20 required, 3 waiting for jobs, 1 failed;
    ``in_progress`` is 4 (the failed one holds a slot)."""
    upgrade = UpgradeView(policy=UpgradePolicy(), enabled=True, total=24, in_progress=4,
                          failed=1, pending=20, done=0, lanes=MappingProxyType({}))
    text = build_summary(SummaryInput(ClusterSnapshot(upgrade=upgrade), NOW))
    assert _counts(text) == "24 nodes: 0 done, 3 in progress, 20 pending, 1 failed"


def test_nodes_without_a_state_label_are_counted_too() -> None:
    upgrade = UpgradeView(policy=UpgradePolicy(), enabled=True, total=7, in_progress=1,
                          failed=0, pending=2, done=1)
    text = build_summary(SummaryInput(ClusterSnapshot(upgrade=upgrade), NOW))
    assert _counts(text) == ("7 nodes: 1 done, 1 in progress, 2 pending, 0 failed, "
                             "3 without a state")
