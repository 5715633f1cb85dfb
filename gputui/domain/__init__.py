"""gputui.domain: the pure model of a GPU Operator cluster (no IO, no textual).

Plain Kubernetes JSON (:class:`~gputui.domain.inputs.ClusterObjects`) goes in; one frozen
:class:`~gputui.domain.model.ClusterSnapshot` comes out of
:class:`~gputui.domain.snapshot.SnapshotBuilder`. ``to_check_json`` renders the CLI contract.
"""

from gputui.domain.checkjson import exit_code, to_check_json
from gputui.domain.inputs import EMPTY_OBJECTS, ClusterObjects, XidEvent
from gputui.domain.model import EMPTY_SNAPSHOT, ClusterSnapshot, Finding, Severity, StageStatus

__all__ = ["EMPTY_OBJECTS", "EMPTY_SNAPSHOT", "ClusterObjects", "ClusterSnapshot", "Finding",
           "Severity", "StageStatus", "XidEvent", "exit_code", "to_check_json"]
