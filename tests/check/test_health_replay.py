"""``check --replay`` judges GPU health as the session did: the recording keeps the counters'
evidence (rises, how they were measured) and the thresholds the session ran with. Fails on
the code before it (a recording kept GPU counts and row remaps only)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from gputui.check import replay_snapshot
from gputui.domain import health_fields as H
from gputui.domain.inputs import CounterRise, GpuHealth
from gputui.settings import Settings
from gputui.sources.tape.writer import TapeWriter
from tests.domain import factory as f

NODE = "gpu-sick"
START = f.T0


def _tape(path: Path, thresholds: dict[str, Any] | None = None) -> Path:
    """Two builds a minute apart: quiet, then GPU 2's replay counter rising 300 a minute."""
    quiet = GpuHealth(8, exported=frozenset({H.PCIE_REPLAY}), origin="exporter",
                      window=600.0)
    loud = GpuHealth(8, rises=(CounterRise(2, H.PCIE_REPLAY, 3000.0, 600.0),),
                     exported=quiet.exported, origin="exporter", window=600.0)
    writer = TapeWriter(path, context="prod", server="https://k", thresholds=thresholds)
    try:
        for health, now in ((quiet, START), (loud, START + 60)):
            objects = f.objects([f.node(NODE)], f.healthy_pods(NODE),
                                gpu_health={NODE: health})
            writer.objects(objects, now)
            assert writer.drain(30.0), "the recorder did not write a build"
    finally:
        writer.close()
    return path


def _codes(path: Path, at: str, settings: Settings) -> set[str]:
    moment = replay_snapshot(settings, str(path), at, [])
    return {x.code for x in moment.snapshot.findings if x.node == NODE}


def test_the_replay_judges_the_recorded_rises(tmp_path: Path) -> None:
    path = _tape(tmp_path / "health.tape")
    assert "pcie-replays" not in _codes(path, "+10s", Settings())
    assert "pcie-replays" in _codes(path, "+60s", Settings())
    moment = replay_snapshot(Settings(), str(path), "+60s", [])
    [x] = [x for x in moment.snapshot.findings if x.code == "pcie-replays"]
    assert "over the last 10 min (exporter scrapes)" in x.message


def test_the_recorded_health_thresholds_judge_the_replay(tmp_path: Path) -> None:
    lenient = _tape(tmp_path / "lenient.tape", {"pcie_replays_per_minute": 500.0})
    assert "pcie-replays" not in _codes(lenient, "+60s", Settings())
