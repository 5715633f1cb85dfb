"""The driver upgrade policy (``spec.driver.upgradePolicy``, §2.2), as a frozen value."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class UpgradePolicy:
    """``upgradePolicy`` of a ClusterPolicy or NVIDIADriver with the CRD defaults applied.

    ``max_unavailable`` keeps the raw form (``"25%"`` or ``"2"``) because the controller
    resolves percentages against the managed node count each cycle.
    """

    auto_upgrade: bool = False
    max_parallel_upgrades: int = 1
    max_unavailable: str = "25%"
    wait_for_completion_selector: str = ""
    wait_for_completion_timeout: int = 0
    pod_deletion_force: bool = False
    pod_deletion_timeout: int = 300
    pod_deletion_delete_empty_dir: bool = False
    drain_enable: bool = False
    drain_force: bool = False
    drain_selector: str = ""
    drain_timeout: int = 300
    drain_delete_empty_dir: bool = False
    source: str = ""
    #: why ``maxUnavailable`` is unusable (a string that is not a percentage), else ""
    max_unavailable_error: str = ""

    def describe(self) -> str:
        """The policy line of the upgrades pane, e.g.
        "maxParallelUpgrades 4, maxUnavailable 25%, waitForCompletion app=trainer
        (never times out)"."""
        parallel = str(self.max_parallel_upgrades) if self.max_parallel_upgrades else "unlimited"
        parts = [f"maxParallelUpgrades {parallel}", f"maxUnavailable {self.max_unavailable}"]
        if self.wait_for_completion_selector:
            timeout = (f"times out after {self.wait_for_completion_timeout} s"
                       if self.wait_for_completion_timeout else "never times out")
            parts.append(f"waitForCompletion {self.wait_for_completion_selector} ({timeout})")
        if self.drain_enable:
            parts.append("drain on")
        if not self.auto_upgrade:
            parts.insert(0, "autoUpgrade off")
        return ", ".join(parts)
