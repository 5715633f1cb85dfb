"""The driver-upgrade actions, in the order help lists them.

Cluster-wide (the ClusterPolicy, or the NVIDIADriver owning the nodes):
:mod:`gputui.actions.upgrade_policy` (driver version, autoUpgrade) and
:mod:`gputui.actions.upgrade_limits` (maxParallelUpgrades, maxUnavailable, waitForCompletion,
podDeletion, drain). Per node: :mod:`gputui.actions.upgrade_node` (hold, release, request,
retry). The guided canary roll-out is :mod:`gputui.actions.canary`.
"""

from __future__ import annotations

from typing import Final

from gputui.actions.base import Action
from gputui.actions.upgrade_limits import (
    SetDrain,
    SetMaxParallel,
    SetMaxUnavailable,
    SetPodDeletion,
    SetWaitForCompletion,
)
from gputui.actions.upgrade_node import HoldNode, ReleaseNode, RequestUpgrade, RetryFailed
from gputui.actions.upgrade_policy import SetDriverVersion, ToggleAutoUpgrade

ACTIONS: Final[tuple[Action, ...]] = (
    SetDriverVersion(), ToggleAutoUpgrade(), SetMaxParallel(), SetMaxUnavailable(),
    SetWaitForCompletion(), SetPodDeletion(), SetDrain(),
    HoldNode(), ReleaseNode(), RequestUpgrade(), RetryFailed(),
)
