"""The five journeys of ``JOURNEYS.md``, done with the real binary in tmux at 80x24 (issue 29).

Each test is an operator at 3 a.m.: keys only, each action started from the view where the
problem was found (journey 2 from the upgrade lanes, 4 from the node list's worst finding,
5 from the MIG view). Each asserts:

- every prompt and the confirmation dialog name their targets;
- what ``y`` sends (the emulated server's request log, the audit log) names the view's
  selection and nothing else;
- ``:summary`` holds this cluster's actions only (another cluster's, planted in the audit
  log under the same context name, is left out), each once with its one result;
- the keys pressed stay within the journey's budget (typed text one key per character;
  the handoff summary's own keys, ``:summary`` ``y`` ``esc``, are not counted).

Content only: every wait is a poll for text on the screen or a line in the audit log.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from gputui.sim.cluster import EmulatedCluster
from tests.helpers import poll
from tests.ui.helpers import CANARY
from tests.ui.tmux_journey import Journey, arrowed, assert_operations, flat, row_of

pytestmark = pytest.mark.tmux

Start = Callable[[str, float], Journey]


@pytest.fixture
def journey(request_queries: list[tuple[str, str]], tmp_path: Path) -> Iterator[Start]:
    """``journey(scenario, speed)``: the emulated cluster in this process (its requests in
    ``request_queries``) and gputui on it in tmux at 80x24, live."""
    started: list[Journey] = []

    def start(scenario: str, speed: float) -> Journey:
        cluster = EmulatedCluster(scenario, speed=speed).start()
        one = Journey(cluster, request_queries, tmp_path)
        started.append(one)
        one.start()
        return one

    yield start
    for one in started:
        one.stop()
        one.cluster.stop()


#: journey 1: find the node (a key or two), open it, its driver log and back (3), cordon
#: (c, y), and set deploy.driver=false (":driver-off", Enter, y: 13)
BUDGET_1 = 22


def test_journey_1_no_gpus_on_a_node_cordon_and_driver_off(journey: Start) -> None:
    """"Jobs say no GPUs on gke-prod-h100-...": the node list shows the H100 node at 0/8
    with its driver failing; its pipeline breaks at the driver, the log says why (kernel
    headers after the kernel update); cordon it and take the driver off it."""
    j = journey("driver-crashloop", 20)

    def broken_h100(screen: str) -> bool:
        return any("h100" in line and "0/8" in line and "crit driver-pod-failing" in line
                   for line in screen.splitlines())

    j.wait(broken_h100, timeout=90)
    node = j.move_to(lambda name: "h100" in name and broken_h100(row_of(j.screen(), name)))
    j.press("Enter")
    screen = j.wait(f"Pipeline: {node}")
    j.wait("chain breaks at driver: failed")
    assert "kernel 5.15.0-1075-gke" in row_of(j.screen(), "driver 570.172.08"), screen
    j.press("l")
    j.wait("linux-headers-5.15.0-1075-gke")
    j.press("Escape")
    j.wait(lambda s: "linux-headers" not in s and f"Pipeline: {node}" in s)
    j.press("c")
    dialog = j.wait("Dry run: passed")
    assert f"Cordon {node}" in flat(dialog) and f"Targets: {node}" in flat(dialog), dialog
    cordoned = j.confirm(1)
    j.command("driver-off")
    dialog = j.wait("Dry run: passed")
    assert f"Driver off on {node}" in flat(dialog) and f"Targets: {node}" in flat(dialog)
    assert "nvidia.com/gpu.deploy.driver: true -> false" in flat(dialog), dialog
    labelled = j.confirm(2)
    assert j.keys <= BUDGET_1, j.keys
    # what y sent: one PATCH of the node for each action (the dry runs too), nothing else
    assert [(w.method, w.resource, w.name) for w in j.writes()] == [
        ("PATCH", "nodes", node)] * 2
    assert {(w.resource, w.name) for w in j.writes(dry_run=True)} == {("nodes", node)}
    intents = [line for line in j.audit_lines() if line["phase"] == "intent"]
    assert [(i["action"], i["targets"]) for i in intents] == [
        ("cordon", [node]), ("driver_off", [node])]
    j.plant_other_cluster(node, "uncordon")
    summary = j.summary()
    assert_operations(summary, [("cordon", node, cordoned["result"]),
                                ("driver_off", node, labelled["result"])])
    assert arrowed(j.screen()) == node


#: journey 2: open the lanes (2), hold the node the cursor is on (":hold", Enter, y: 7),
#: page down to the failed lane at the end (PageDown: 4 pages of 24 nodes at 80x24, 1 to
#: spare), retry it (":retry-upgrade", Enter, y: 16)
BUDGET_2 = 29


def test_journey_2_a_stuck_upgrade_hold_a_node_and_retry_the_failed_one(
        journey: Start) -> None:
    """"The driver upgrade has been running since yesterday": the lanes show the slots
    held by waiting trainers and a failed node; from the lanes, hold the node under the
    cursor (it has not started) and retry the failed one."""
    j = journey("upgrade-slots-held", 200)
    j.press("2")
    lanes = j.wait("slots 4 of 4 in use (1 failed)", timeout=90)
    assert "maxParallelUpgrades 4, maxUnavailable 25%" in flat(lanes), lanes
    assert "waitForCompletion app=trainer (never times out)" in flat(lanes), lanes
    held = j.move_to(lambda name: "waiting for a slot" in row_of(j.screen(), name))
    j.command("hold")
    dialog = j.wait("Dry run: passed")
    assert f"Hold 1 node(s) out of the driver upgrade ({held})" in flat(dialog), dialog
    assert f"Targets: {held}" in flat(dialog), dialog
    hold = j.confirm(1)
    failed = j.move_to(lambda name: "failed in" in row_of(j.screen(), name)
                       or "failed (holds a slot" in row_of(j.screen(), name),
                       key="PageDown", most=5)
    assert failed != held
    j.command("retry-upgrade")
    dialog = j.wait("Dry run: passed")
    assert f"Retry the driver upgrade of 1 node(s) ({failed})" in flat(dialog), dialog
    assert f"Targets: {failed}" in flat(dialog), dialog
    assert "upgrade-failed -> upgrade-required" in flat(dialog), dialog
    retry = j.confirm(2)
    assert j.keys <= BUDGET_2, j.keys
    assert [(w.method, w.resource, w.name) for w in j.writes()] == [
        ("PATCH", "nodes", held), ("PATCH", "nodes", failed)]
    assert {w.name for w in j.writes(dry_run=True)} == {held, failed}
    j.plant_other_cluster(failed, "upgrade-retry")
    summary = j.summary()
    assert_operations(summary, [("upgrade-hold", held, hold["result"]),
                                ("upgrade-retry", failed, retry["result"])])


VERSION = "580.82.07"
#: journey 3: the palette (ctrl+p, "version", Enter: 9), the version (9 and Enter), read the
#: plan and leave it (esc), a node of the second pool for the canary (Down, up to 3),
#: ":canary" and Enter (8), the version again (10) and its typed confirmation (10): the
#: version is typed three times, 30 of the keys, on purpose (a roll-out is confirmed typed)
BUDGET_3 = 51


def upgrade_states(j: Journey) -> dict[str, str]:
    """Each GPU node's driver upgrade state, as the server has it."""
    nodes, _ = j.cluster.store.list("nodes", label_selector="nvidia.com/gpu.present=true")
    return {n["metadata"]["name"]: n["metadata"]["labels"].get(
        "nvidia.com/gpu-driver-upgrade-state", "") for n in nodes}


def test_journey_3_a_new_driver_canary_first_then_pool_by_pool(
        journey: Start, tmp_path: Path) -> None:
    """"Roll out a new driver, canary first": the palette's set-version plan says every
    node will roll and offers the canary; the canary on the node list's node holds the
    others, sets the version, watches the canary pass and releases the pools."""
    scenario = tmp_path / "canary.yaml"
    scenario.write_text(CANARY)  # two pools of two H100 nodes, one node at a time
    j = journey(str(scenario), 300)
    # the last roll has ended on every node (the server says so; at 80x24 the node list
    # has no room for its UPGRADE column)
    assert poll(lambda: set(upgrade_states(j).values()) == {"upgrade-done"}), upgrade_states(j)
    j.press("C-p")
    j.wait("🔎")
    j.type("version")
    j.wait(":driver-version")
    j.press("Enter")
    prompt = j.wait("New driver version (image tag)")
    assert "gke-" not in row_of(prompt, "New driver version"), prompt  # the cluster's
    j.type(VERSION)
    j.press("Enter")
    dialog = j.wait("Dry run: passed")
    assert "Targets: the cluster" in flat(dialog), dialog
    assert "every one of the 4 nodes will roll, up to 1 at a time" in flat(dialog), dialog
    assert "to try one node first, use 'upgrade: canary'" in flat(dialog), dialog
    j.press("Escape")
    j.wait(lambda s: "sort: FINDING" in s)  # the node list again, the dialog gone
    canary = j.move_to(lambda name: "9e1d" in name)
    others = set(upgrade_states(j)) - {canary}
    assert len(others) == 3, others
    j.command("canary")
    prompt = j.wait("New driver version (image tag)")
    assert f"upgrade: canary for {canary}: New driver version" in flat(prompt), prompt
    j.type(VERSION)
    j.press("Enter")
    dialog = j.wait("Dry run: passed")
    assert f"Canary driver {VERSION} on {canary}" in flat(dialog), dialog
    assert f"Targets: {canary}" in flat(dialog), dialog
    assert f"type {VERSION} to confirm" in flat(dialog), dialog
    j.type(VERSION)
    j.press("Enter")
    outcome = j.done(1, timeout=120)
    assert j.keys <= BUDGET_3, j.keys
    assert outcome["result"].startswith(f"ok: driver {VERSION} rolled out: canary {canary}")
    # what y sent: the holds of the three others, the version on the ClusterPolicy, their
    # releases; nothing to the canary itself (the upgrade controller rolls it)
    sent = [(w.method, w.resource, w.name) for w in j.writes()]
    holds, policy, releases = sent[:3], sent[3], sent[4:]
    assert {name for _, _, name in holds} == others and len(holds) == 3, sent
    assert policy == ("PATCH", "clusterpolicies", "cluster-policy"), sent
    assert sorted(name for _, _, name in releases) == sorted(others), sent
    assert all(method == "PATCH" and resource == "nodes"
               for method, resource, _ in holds + releases), sent
    j.plant_other_cluster(canary, "upgrade-canary")
    summary = j.summary()
    assert_operations(summary, [("upgrade-canary", canary, outcome["result"])])


#: journey 4: up to the worst finding's row (Up, up to 3), the metrics pane (m), into it
#: (tab, tab), down to GPU 3 (PageDown, up to 4), back to the list (esc), drain (r), the
#: default options (Enter), a 10 s timeout (3), y, and esc to close the outcome
BUDGET_4 = 20


def gpus_shown(screen: str) -> list[str]:
    """The GPUs whose heading the metrics pane shows: only scrolling changes them (its
    sparklines and figures move every second). At 80x24 a page is 10 lines and a GPU's
    block 8 at most, so every page shows one."""
    return re.findall(r"^ GPU (\d+) ", screen, flags=re.MULTILINE)


def test_journey_4_xid_79_drain_refused_by_the_budget_not_forced(journey: Start) -> None:
    """"XID 79 on a training node": the node list's worst finding is the GPU gone from
    DCGM's view; the metrics pane shows GPU 3's XID 79 and the trainer that used it; drain
    it: DaemonSet pods skipped, the trainer's eviction refused by its budget (429) and
    retried, never forced, and the outcome says not drained."""
    j = journey("xid-storm", 20)
    j.wait(lambda s: "crit gpu-missing" in s, timeout=90)
    # the list sorts the worst finding first; the cursor stays on its node as rows move
    node = j.move_to(lambda name: "crit gpu-missing" in row_of(j.screen(), name), key="Up",
                     most=3)
    j.press("m")
    j.wait(f"Metrics: {node}")
    j.press("Tab", "Tab")
    j.wait("keys here")
    screen = j.press_until("XID 79 (GPU has fallen off the bus)", "PageDown", most=4,
                           view=gpus_shown)
    assert "ml-training/trainer-llama" in screen, screen  # the pod that used the GPU
    j.press("Escape")
    j.wait(lambda s: f"Metrics: {node}" in s and "keys here" not in s)
    pods = j.pods_on(node)
    trainer = next(name for name in pods if name.startswith("trainer-llama"))
    daemons = {name for name, pod in pods.items()
               if any(ref.get("kind") == "DaemonSet"
                      for ref in pod["metadata"].get("ownerReferences", []))}
    assert daemons, pods  # the operands: what the drain must leave
    j.press("r")
    prompt = j.wait("Drain options")
    assert f"Drain for {node}: Drain options" in flat(prompt), prompt
    j.press("Enter")
    prompt = j.wait("Seconds to keep retrying")
    assert f"Drain for {node}: Seconds to keep retrying" in flat(prompt), prompt
    j.type("10")
    j.press("Enter")
    dialog = j.wait("Dry run: passed")
    assert f"Drain {node}" in flat(dialog) and f"Targets: {node}" in flat(dialog), dialog
    assert f"evict ml-training/{trainer}" in flat(dialog), dialog
    j.press("y")
    j.wait("refused by PodDisruptionBudget trainer-llama-pdb")
    outcome = j.outcomes(1)[0]
    j.wait(f"{node} not drained")
    j.press("Escape")
    j.wait(lambda s: "sort: FINDING" in s)  # the node list again, the dialog gone
    assert j.keys <= BUDGET_4, j.keys
    assert outcome["result"].startswith(f"failed: {node} not drained: 1 pod still there")
    assert "stays cordoned" in outcome["result"], outcome
    # what y sent: the node's cordon, then evictions of its pods only, DaemonSet pods
    # skipped, the trainer's retried (refused) and never deleted
    sent = j.writes()
    assert (sent[0].method, sent[0].resource, sent[0].name) == ("PATCH", "nodes", node)
    evicted = [w.name for w in sent[1:] if w.eviction]
    assert len(evicted) == len(sent) - 1, sent
    assert set(evicted) <= set(pods) - daemons and evicted.count(trainer) >= 2, evicted
    assert trainer in j.pods_on(node)
    j.plant_other_cluster(node, "drain")
    summary = j.summary()
    assert_operations(summary, [("drain", node, outcome["result"])])


#: the A100 pool, all-disabled, two inference jobs of 8 GPUs: the scheduler fills nodes in
#: name order, so the first two nodes run one each
MIG = """summary: the A100 pool, all-disabled, two whole-node inference jobs
namespace: gpu-operator
clusterPolicy:
  spec:
    mig: {strategy: mixed}
nodePools:
  - {name: a100, prefix: gke-prod-a100-pool-2b9c, count: 3, gpu: A100-80GB, gpusPerNode: 8,
     migConfig: all-disabled}
workloads:
  - {name: inference-bert, namespace: ml-serving, pool: a100, count: 2, gpus: 8,
     labels: {app: inference}, runSeconds: 10h}
"""
#: journey 5: the MIG view (3), a card or two down (up to 2), ":mig-safe" and Enter (10),
#: all-1g.10gb from the offered list (Down, up to 4, Enter), drain the GPU pods (Down,
#: Enter), y
BUDGET_5 = 21


def allocatable(j: Journey, node: str) -> dict[str, str]:
    """What the server says ``node`` offers (the MIG slices of a mixed strategy)."""
    return dict((j.cluster.store.get("nodes", node) or {}).get("status", {})
                .get("allocatable", {}))


def gpu_pods(j: Journey, node: str) -> list[str]:
    """The inference pods running on ``node``."""
    return sorted(name for name, pod in j.pods_on(node).items()
                  if pod["metadata"]["namespace"] == "ml-serving"
                  and pod["status"].get("phase") == "Running")


def test_journey_5_repartition_an_a100_node_from_the_mig_view(
        journey: Start, tmp_path: Path) -> None:
    """"Repartition the A100 pool for inference": in the MIG view, the card of a node
    (not the node list's) running an inference job; the safe change to all-1g.10gb drains
    its GPU pod, applies, waits for success and uncordons it; nothing else is touched."""
    scenario = tmp_path / "mig.yaml"
    scenario.write_text(MIG)
    j = journey(str(scenario), 60)
    listed = j.wait(lambda s: arrowed(s) is not None and "gke-prod-a100" in s)
    list_cursor = arrowed(listed)
    assert list_cursor is not None, listed
    j.press("3")
    j.wait("3 MIG-capable nodes · cluster strategy mixed")
    node = j.move_to(lambda name: name != list_cursor and bool(gpu_pods(j, name)), most=2)
    (job,) = gpu_pods(j, node)
    j.wait("desired all-disabled · applied all-disabled")
    j.command("mig-safe")
    prompt = j.wait("MIG config (offered by the node's MIG manager)")
    assert f"mig: safe change for {node}: MIG config" in flat(prompt), prompt
    offered = [line.strip("│▊▎ ") for line in prompt.splitlines() if "▊ all-" in line]
    assert "all-1g.10gb" in offered, prompt
    for _ in range(offered.index("all-1g.10gb") - offered.index("all-disabled")):
        j.press("Down")
    j.press("Enter")
    prompt = j.wait("GPU pods on the node")
    assert f"mig: safe change for {node}: GPU pods on the node" in flat(prompt), prompt
    j.press("Down", "Enter")  # drain them (the job runs for hours)
    dialog = j.wait("Dry run: passed")
    assert f"Safely change MIG config to all-1g.10gb on 1 node(s) ({node})" in flat(dialog)
    assert f"Targets: {node}" in flat(dialog), dialog
    assert f"ml-serving/{job}" in flat(dialog), dialog
    pods = set(j.pods_on(node))
    nodes, _ = j.cluster.store.list("nodes")
    others = {n["metadata"]["name"]: gpu_pods(j, n["metadata"]["name"]) for n in nodes
              if n["metadata"]["name"] != node}
    outcome = j.confirm(1, timeout=90)
    assert j.keys <= BUDGET_5, j.keys
    assert outcome["result"].startswith("ok: "), outcome
    j.wait(lambda s: node in s and "1g.10gb ×7 each" in row_of(s[s.index(node):], "GPU 0-7"))
    assert poll(lambda: allocatable(j, node).get("nvidia.com/mig-1g.10gb") == "56"), \
        allocatable(j, node)
    assert not gpu_pods(j, node)
    # the other nodes' jobs run on (the evicted one may have been scheduled beside them)
    assert all(set(jobs) <= set(gpu_pods(j, other)) for other, jobs in others.items())
    # what y sent: cordon, evictions of the node's pods (the job, a finished validator),
    # the MIG label, uncordon: this node only
    sent = j.writes()
    assert {w.name for w in sent if not w.eviction} == {node}, sent
    evicted = [w.name for w in sent if w.eviction]
    assert job in evicted and set(evicted) <= pods, sent
    assert all(w.resource == "nodes" for w in sent if not w.eviction), sent
    j.plant_other_cluster(node, "mig-config-safe")
    summary = j.summary()
    assert_operations(summary, [("mig-config-safe", node, outcome["result"])])
    assert f"**mig-config-failed** on {node}" not in summary, summary  # it succeeded
