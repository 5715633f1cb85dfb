"""The API-level fault grammar, from ``--faults``, scenario files and tests, and what each
fault looks like to a real client (the ``kubernetes`` package and plain HTTP)."""

from __future__ import annotations

import json
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client, config
from kubernetes.client.rest import ApiException

from gputui.sim.apiserver.faults import ApiFault, FaultInjector, parse_api_fault
from gputui.sim.cluster import EmulatedCluster
from gputui.sim.scenario import ScenarioError, load_scenario
from tests.sources.helpers import node, pod

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(("item", "fault"), [
    ("429", ApiFault("429", "1")),
    ("429:2%50", ApiFault("429", "2", 50.0)),
    ("down@30s+20s", ApiFault("down", "", 100.0, 30.0, 20.0)),
    ("latency:250%10@1m", ApiFault("latency", "250", 10.0, 60.0)),
    ("forbid:events", ApiFault("forbid", "events")),
    ("watch-410%30+5m", ApiFault("watch-410", "", 30.0, 0.0, 300.0)),
    ("503:0~/eviction+2s", ApiFault("503", "0", 100.0, 0.0, 2.0, "/eviction")),
])
def test_items_parse(item: str, fault: ApiFault) -> None:
    assert parse_api_fault(item) == fault
    assert parse_api_fault(fault.text()) == fault  # the text form reads back


@pytest.mark.parametrize(("spec", "says"), [
    ("teapot", "unknown kind 'teapot'"), ("forbid", "expected forbid:RESOURCE"),
    ("500:3", "500 takes no argument"), ("latency:soon", "MS must be a number"),
    ("429%150", "percent must be 0-100"), ("down@soon", "fault 'down@soon'"),
    ("seed:x", "seed must be a number"),
])
def test_bad_items_are_one_line(spec: str, says: str) -> None:
    with pytest.raises(ScenarioError, match=says.replace("(", r"\(")):
        load_scenario("empty", faults=spec)


def test_scenario_files_list_faults(tmp_path: Path) -> None:
    path = tmp_path / "flaky.yaml"
    path.write_text("summary: flaky\nfaults: ['429:1%50', 'down@1m+10s', 'seed:4']\n")
    scenario = load_scenario(str(path), faults="reset%5,xid:h100/0:3:79@30s")
    assert scenario.api_faults == ("429:1%50", "down@1m+10s", "seed:4", "reset%5")
    assert [event.action for event in scenario.timeline] == ["xid"]
    path.write_text("summary: flaky\nfaults: '429'\n")
    with pytest.raises(ScenarioError, match="faults: expected a list"):
        load_scenario(str(path))


def test_the_schedule_and_the_seed_decide() -> None:
    now = [0.0]
    injector = FaultInjector([parse_api_fault("500%50@10s+5s")], seed=3, clock=lambda: now[0])
    assert not injector.faults[0].active(injector.elapsed())
    now[0] = 12.0
    assert injector.faults[0].active(injector.elapsed())
    now[0] = 15.0
    assert not injector.faults[0].active(injector.elapsed())
    draws = [FaultInjector(seed=9).random.random() for _ in range(2)]
    assert draws[0] == draws[1]


def _get(url: str) -> tuple[int, dict[str, str], bytes]:
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read()


def test_each_answering_fault_over_http(api_only: EmulatedCluster) -> None:
    api_only.store.create("nodes", node("gpu-0"))
    nodes = api_only.url + "/api/v1/nodes"
    for spec, code, reason in (("429:2", 429, "TooManyRequests"), ("500", 500, "InternalError"),
                               ("503:3", 503, "ServiceUnavailable"),
                               ("forbid:nodes", 403, "Forbidden")):
        api_only.inject(spec)
        status, headers, body = _get(nodes)
        assert (status, json.loads(body)["reason"]) == (code, reason)
        if code in (429, 503):
            assert headers["Retry-After"] == spec.split(":")[1]
        api_only.heal()
    assert _get(nodes)[0] == 200
    api_only.inject("watch-410")
    status, _, body = _get(nodes + "?watch=true")
    assert status == 200 and json.loads(body)["object"]["code"] == 410
    api_only.heal()
    api_only.inject("reset")
    with pytest.raises(Exception, match="IncompleteRead"):
        _get(nodes)
    api_only.heal()
    api_only.inject("down")
    with pytest.raises(Exception, match="closed connection|Connection reset|RemoteDisconnected"):
        _get(nodes)
    api_only.heal()
    stats = json.loads(_get(api_only.url + "/gputui-sim/faults")[2])
    assert stats["injected"] == {"429": 1, "500": 1, "503": 1, "forbid": 1, "watch-410": 1,
                                 "reset": 1, "down": 1}


def test_watch_close_ends_watches_early(api_only: EmulatedCluster) -> None:
    api_only.inject("watch-close")
    started = time.monotonic()
    status, _, _ = _get(api_only.url + "/api/v1/nodes?watch=true&timeoutSeconds=60")
    assert status == 200 and time.monotonic() - started < 30  # not the 60 s asked for


def test_an_eviction_refused_forever(api_only: EmulatedCluster) -> None:
    api_only.store.create("pods", pod("ml", "train", "gpu-0", gpus=8))
    api_only.inject("evict-refuse")
    cfg = client.Configuration()
    config.load_kube_config_from_dict(api_only.kubeconfig(), client_configuration=cfg)
    core = client.CoreV1Api(client.ApiClient(cfg))
    body: Any = client.V1Eviction(metadata=client.V1ObjectMeta(name="train", namespace="ml"))
    for _ in range(3):
        with pytest.raises(ApiException) as refused:
            core.create_namespaced_pod_eviction("train", "ml", body)
        assert refused.value.status == 429 and "disruption budget" in refused.value.body
    assert core.read_namespaced_pod("train", "ml").metadata.name == "train"
    assert core.list_node().items == []  # everything else answers


def test_sim_cli_rejects_a_bad_fault_in_one_line() -> None:
    result = subprocess.run([sys.executable, "-m", "gputui", "sim", "--faults", "429%x"],
                            capture_output=True, text=True, cwd=REPO, timeout=60, check=False)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert result.stderr.strip().startswith("gputui sim: fault '429%x'")


def test_forbid_answers_the_real_servers_forbidden_status(api_only: EmulatedCluster) -> None:
    """``forbid:RESOURCE`` words its 403 as kube-apiserver (and ``--deny``) do: the
    Kubernetes verb, the group, the namespace or the cluster scope, and ``details``."""
    api_only.inject("forbid:pods")
    base = api_only.url + "/api/v1/namespaces/gpu-operator/pods"
    for url, verb, scope in (
            (base, "list", 'in the namespace "gpu-operator"'),
            (base + "?watch=true", "watch", 'in the namespace "gpu-operator"'),
            (api_only.url + "/api/v1/pods", "list", "at the cluster scope")):
        status, _, body = _get(url)
        answer = json.loads(body)
        assert status == 403 and answer["reason"] == "Forbidden"
        assert answer["message"] == (f'pods is forbidden: User "operator" cannot {verb} '
                                     f'resource "pods" in API group "" {scope}')
        assert answer["details"] == {"kind": "pods"}
    api_only.heal()
    api_only.inject("forbid:clusterpolicies")
    status, _, body = _get(api_only.url + "/apis/nvidia.com/v1/clusterpolicies/cluster-policy")
    assert status == 403 and json.loads(body)["message"] == (
        'clusterpolicies "cluster-policy" is forbidden: User "operator" cannot get resource '
        '"clusterpolicies" in API group "nvidia.com" at the cluster scope')
