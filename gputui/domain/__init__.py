"""gputui.domain: the pure model of a GPU Operator cluster (no IO, no textual).

Plain Kubernetes JSON goes in as :class:`~gputui.domain.inputs.ClusterObjects`;
:class:`~gputui.domain.snapshot.SnapshotBuilder` turns it into one frozen
:class:`~gputui.domain.model.ClusterSnapshot` (nodes with pipelines and findings, the upgrade
view with the controller's slot math, the MIG view, cluster findings);
:func:`~gputui.domain.checkjson.to_check_json` renders the ``gputui check --json`` contract.

Vocabulary shared with other layers: :mod:`~gputui.domain.labels` (label/annotation keys and
state values), :mod:`~gputui.domain.upgrade_state` (the driver upgrade states: lanes, classes,
slots), :mod:`~gputui.domain.operands` (operand catalogue), :mod:`~gputui.domain.xid`,
and :func:`~gputui.domain.podindex.pod_node_name`, the one rule tying a pod to its node (the
cache's change tracking and the builder's pod groups must agree on it).
"""

from gputui.domain.checkjson import exit_code, to_check_json
from gputui.domain.inputs import EMPTY_OBJECTS, ClusterObjects, XidEvent
from gputui.domain.model import EMPTY_SNAPSHOT, ClusterSnapshot, Finding, Severity, StageStatus
from gputui.domain.podindex import pod_node_name
from gputui.domain.snapshot import SnapshotBuilder
from gputui.domain.thresholds import DEFAULT_THRESHOLDS, ThresholdsLike

__all__ = ["DEFAULT_THRESHOLDS", "EMPTY_OBJECTS", "EMPTY_SNAPSHOT", "ClusterObjects",
           "ClusterSnapshot", "Finding", "Severity", "SnapshotBuilder", "StageStatus",
           "ThresholdsLike", "XidEvent", "exit_code", "pod_node_name", "to_check_json"]
