"""gputui.domain: the pure model of a GPU Operator cluster (no IO, no textual).

Plain Kubernetes JSON (:class:`~gputui.domain.inputs.ClusterObjects`) goes in; one frozen
:class:`~gputui.domain.model.ClusterSnapshot` comes out of
:class:`~gputui.domain.snapshot.SnapshotBuilder`. ``to_check_json`` renders the CLI contract.
"""

from gputui.domain.checkjson import exit_code, to_check_json
from gputui.domain.inputs import EMPTY_OBJECTS, ClusterObjects, XidEvent
from gputui.domain.model import EMPTY_SNAPSHOT, ClusterSnapshot, Finding, Severity, StageStatus
from gputui.domain.snapshot import SnapshotBuilder
from gputui.domain.thresholds import DEFAULT_THRESHOLDS, ThresholdsLike

__all__ = ["DEFAULT_THRESHOLDS", "EMPTY_OBJECTS", "EMPTY_SNAPSHOT", "ClusterObjects",
           "ClusterSnapshot", "Finding", "Severity", "SnapshotBuilder", "StageStatus",
           "ThresholdsLike", "XidEvent", "exit_code", "to_check_json"]
