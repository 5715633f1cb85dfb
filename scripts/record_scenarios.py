#!/usr/bin/env python3
"""Record emulated scenarios as frozen fixtures for UI tests and screenshots.

For each scenario: start the emulated cluster (``DemoCluster``, fast clock), let it settle
(the same convergence ``gputui check --demo`` waits for), read the raw ``ClusterObjects``
once through the one-shot reader, read the logs and events of the pods the UI would open
(broken pipeline stages first, then one driver pod), and write
``tests/fixtures/scenarios/<scenario>.json``. Re-run it when scenarios are added or change.

Usage: ``python scripts/record_scenarios.py [SCENARIO ...]`` (default: the small ones).
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import replace
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
#: the recorded scenarios the UI tests and the screenshots read (not part of the package)
SCENARIOS = REPO / "tests" / "fixtures" / "scenarios"

from gputui.demo import DemoCluster, settle_span, settle_speed
from gputui.domain.inputs import WHEN_UNKNOWN
from gputui.domain.model import ClusterSnapshot, StageStatus
from gputui.sources.http import KubeHttp
from gputui.sources.oneshot import read_objects
from gputui.sources.pods import read_pod_events, read_pod_log
from gputui.sources.xids import read_xids
from tests.fixtures.recordings import Recording, log_key

SMALL = ("healthy", "driver-crashloop", "upgrade-rolling", "upgrade-failed",
         "mig-reconfig-failed", "xid-storm", "validator-stuck", "time-slicing", "node-join",
         "staggered-joins")
MAX_LOGS = 6
LOG_LINES = 60


def _log_targets(snapshot: ClusterSnapshot) -> list[tuple[str, str, str | None]]:
    """(namespace, pod, container) of the stages an operator would open, broken ones first."""
    broken, healthy = [], []
    for node in snapshot.nodes.values():
        for stage in node.pipeline.stages:
            if not (stage.pod and stage.namespace):
                continue
            target = (stage.namespace, stage.pod, stage.container)
            if stage.status in (StageStatus.FAILED, StageStatus.PROGRESSING):
                broken.append(target)
            elif stage.operand == "driver" and not healthy:
                healthy.append(target)
    seen: list[tuple[str, str, str | None]] = []
    for target in broken + healthy:
        if target not in seen:
            seen.append(target)
    return seen[:MAX_LOGS]


def record(scenario: str, speed: float) -> Recording:
    """Run one scenario, settle, read everything once; the emulated cluster is stopped."""
    from gputui.domain.snapshot import SnapshotBuilder

    span = settle_span(scenario)
    demo = DemoCluster(scenario, speed=settle_speed(span, speed))
    target = demo.start()
    try:
        demo.settle(span)
        demo.hold()  # read the cluster as it settled (a node still joining stays so)
        http = KubeHttp(target.configuration)
        try:
            objects = read_objects(target, http=http)
            # XIDs as `gputui check` reads them: from the exporters, time unknown
            objects = replace(objects, xids=read_xids(http, objects, WHEN_UNKNOWN).xids)
            now = demo.now()
            snapshot = SnapshotBuilder().build(objects, now)
            logs: dict[str, tuple[str, ...]] = {}
            events: dict[str, tuple[dict[str, object], ...]] = {}
            for namespace, pod, container in _log_targets(snapshot):
                lines = read_pod_log(http, namespace, pod, container, LOG_LINES)
                logs[log_key(namespace, pod, container)] = tuple(lines)
                events[f"{namespace}/{pod}"] = tuple(read_pod_events(http, namespace, pod))
        finally:
            http.close()
    finally:
        demo.stop()
    return Recording(scenario, objects, now, logs, events)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("scenarios", nargs="*", help="scenario names (default: small ones)")
    parser.add_argument("--speed", type=float, default=1.0, help="minimum emulated clock speed")
    parser.add_argument("--out", type=Path, default=SCENARIOS)
    args = parser.parse_args()
    from gputui.sim.scenario import list_scenarios

    known = {name for name, _ in list_scenarios()}
    names = args.scenarios or [name for name in SMALL if name in known]
    args.out.mkdir(parents=True, exist_ok=True)
    for name in names:
        recording = record(name, args.speed)
        path = args.out / f"{name}.json"
        path.write_text(json.dumps(recording.to_json(), sort_keys=True, separators=(",", ":")) + "\n")
        snap = recording.snapshot()
        print(f"{name:<22} {len(recording.objects.nodes):>3} nodes  "
              f"{len(snap.findings):>3} findings  {len(recording.logs)} logs  "
              f"{path.stat().st_size // 1024} KiB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
