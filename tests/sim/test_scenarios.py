"""Scenario files and the ``--faults`` grammar: strict validation with one-line errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from gputui.sim.scenario import ScenarioError, list_scenarios, load_scenario, parse_faults

SHIPPED = {"empty", "healthy", "node-join", "driver-crashloop", "validator-stuck",
           "upgrade-rolling", "upgrade-failed", "mig-reconfig-failed", "xid-storm",
           "time-slicing", "scale-5000", "scale-15000", "upgrade-drain-blocked", "normal-life",
           "upgrade-slots-held", "gpu-health"}


def test_every_required_scenario_ships_with_a_summary() -> None:
    listed = dict(list_scenarios())
    assert SHIPPED <= set(listed)
    for name, summary in listed.items():
        assert summary and "\n" not in summary
        assert load_scenario(name).name == name


def test_unknown_scenario_is_one_line_naming_it() -> None:
    with pytest.raises(ScenarioError, match="unknown scenario 'nope'") as info:
        load_scenario("nope")
    assert "\n" not in str(info.value) and isinstance(info.value, ValueError)


@pytest.mark.parametrize("body, problem", [
    ("nodePools: [{name: a, prefix: p, count: 1, gpu: H100-80GB, colour: red}]", "unknown field 'colour'"),
    ("nodePools: [{name: a, prefix: p, count: 1, gpu: V100}]", "unknown gpu 'V100'"),
    ("nodePools: [{name: a, prefix: p, count: two, gpu: T4}]", "count: expected int"),
    ("timeline: [{at: 5x, action: join, pool: a}]", "bad duration '5x'"),
    ("timeline: [{at: 5s, action: explode}]", "unknown action 'explode'"),
    ("workloads: [{name: w, pool: missing}]", "unknown pool 'missing'"),
    ("banana: 1", "unknown field 'banana'"),
])
def test_bad_fields_are_named(tmp_path: Path, body: str, problem: str) -> None:
    path = tmp_path / "broken.yaml"
    path.write_text("summary: broken\n" + body + "\n")
    with pytest.raises(ScenarioError) as info:
        load_scenario(str(path))
    assert problem in str(info.value) and "\n" not in str(info.value)


def test_faults_grammar() -> None:
    events = parse_faults("xid:h100/0:3:79@30s,crashloop:h100@10s,driver:580.82.07@2m,"
                          "mig:gke-prod-a100-pool-2b9c-qvzd:all-1g.10gb,join:h100:2@1h")
    assert [(e.action, e.at) for e in events] == [
        ("xid", 30), ("crashloop", 10), ("driver-version", 120), ("mig-config", 0), ("join", 3600)]
    assert events[0].args == {"node": "h100/0", "gpu": 3, "code": 79}
    assert events[1].args == {"pool": "h100"}
    assert events[3].args == {"node": "gke-prod-a100-pool-2b9c-qvzd", "config": "all-1g.10gb"}


@pytest.mark.parametrize("spec, problem", [
    ("boom:h100", "unknown kind 'boom'"), ("xid:h100/0:3", "expected xid:NODE:GPU:CODE"),
    ("xid:h100/0:x:79", "gpu must be a number"), ("join:h100:2@soon", "bad duration"),
])
def test_bad_faults(spec: str, problem: str) -> None:
    with pytest.raises(ScenarioError, match=problem):
        parse_faults(spec)


def test_faults_join_the_timeline_in_order() -> None:
    scenario = load_scenario("node-join", faults="xid:h100/0:1:79@5s,cordon:h100/1@1h")
    assert [e.action for e in scenario.timeline] == ["xid", "join", "cordon"]


def test_every_timeline_action_the_loader_accepts_has_a_handler() -> None:
    """The loader's ACTIONS and the timeline's HANDLERS name the same actions: a scenario
    the loader accepts never meets an action the emulator cannot play."""
    from gputui.sim.operator.timeline import HANDLERS
    from gputui.sim.scenario import ACTIONS

    assert set(HANDLERS) == set(ACTIONS)
