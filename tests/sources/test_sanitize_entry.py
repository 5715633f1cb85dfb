"""Cluster text is cleaned where it enters gputui: hostile strings written through the real
``kubernetes`` client into the emulated API server come back through gputui's sources with
every escape shown (``\\x1b``) and none left to drive a terminal.

Each entry point of :mod:`gputui.sources` is crossed: list pages (nodes, pods, events),
watch events, plain GETs (a pod's events), pod logs, error ``Status`` bodies, write refusals,
exporter metrics text, recordings, and the debug log behind them all.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kubernetes import client as k8s
from kubernetes import config as k8s_config

from gputui.domain.pods import PodInfo
from gputui.domain.sanitize import clean_tree
from gputui.logsetup import configure_logging, remove_logging
from gputui.sim.cluster import EmulatedCluster
from gputui.sources.decode import NODES, clean_objects
from gputui.sources.errors import ApiStatusError
from gputui.sources.exposition import parse_samples
from gputui.sources.http import KubeHttp
from gputui.sources.kubeconfig import load_target
from gputui.sources.oneshot import read_objects
from gputui.sources.pods import read_pod_events, read_pod_log
from gputui.sources.status import StatusTracker
from gputui.sources.writer import api_error
from tests.fixtures.recordings import Recording
from tests.sources.helpers import cluster_policy, node, pod

NS = "gpu-operator"
TITLE = "\x1b]2;PWNED\x1b\\"
CLIPBOARD = "\x1b]52;c;cHduZWQ=\x07"
CLEAR = "\x1b[2J\x1b[H"
HOSTILE = f"{TITLE} {CLIPBOARD} {CLEAR} \x9b31m \u202eevil"
#: how HOSTILE reads once cleaned
SHOWN = r"\x1b]2;PWNED\x1b\ \x1b]52;c;cHduZWQ=\x07 \x1b[2J\x1b[H \x9b31m \u202eevil"


def _no_control(value: Any) -> None:
    """No string anywhere in ``value`` holds ESC, BEL, a C1 control or a bidi override."""
    text = json.dumps(value, ensure_ascii=False, default=repr)
    for char in ("\x1b", "\x07", "\x9b", "\u202e"):
        assert char not in text, f"{char!r} reached gputui: {text[:300]}"
    assert "\\u001b" not in text and "\\u0007" not in text


@pytest.fixture
def api(cluster: EmulatedCluster, kubeconfig: Path) -> k8s.CoreV1Api:
    return k8s.CoreV1Api(k8s_config.new_client_from_config(str(kubeconfig)))


def _seed(cluster: EmulatedCluster, api: k8s.CoreV1Api) -> None:
    """A GPU node with a hostile annotation and Ready condition, an operand pod, and a
    hostile event about that pod: all written through the kubernetes client."""
    cluster.store.create("clusterpolicies.nvidia.com", cluster_policy(NS))
    api.create_namespace({"metadata": {"name": NS}})
    api.create_node({"metadata": {"name": "gpu-0", "labels": node("gpu-0")["metadata"]["labels"],
                                  "annotations": {"note": HOSTILE}}})
    api.patch_node_status("gpu-0", {"status": {"capacity": {"nvidia.com/gpu": "8"}, "conditions": [
        {"type": "Ready", "status": "False", "reason": "KubeletNotReady", "message": HOSTILE,
         "lastTransitionTime": "2026-12-01T10:00:00Z"}]}})
    api.create_namespaced_pod(NS, pod(NS, "nvidia-driver-daemonset-a", "gpu-0",
                                      labels={"app": "nvidia-driver-daemonset"}))
    api.create_namespaced_event(NS, {
        "metadata": {"name": "hostile"}, "reason": "Failed", "type": "Warning",
        "message": HOSTILE, "involvedObject": {"kind": "Pod", "namespace": NS,
                                               "name": "nvidia-driver-daemonset-a"}})


def test_list_pages_clean_annotations_and_condition_messages(
        cluster: EmulatedCluster, kubeconfig: Path, api: k8s.CoreV1Api) -> None:
    _seed(cluster, api)
    assert api.read_node("gpu-0").metadata.annotations["note"] == HOSTILE  # stored as sent
    objects = read_objects(load_target(str(kubeconfig)))
    reduced = objects.nodes["gpu-0"]
    assert reduced["metadata"]["annotations"]["note"] == SHOWN
    (ready,) = reduced["status"]["conditions"]
    assert ready["message"] == SHOWN
    _no_control(reduced)
    _no_control([info.__dict__ if not isinstance(info, PodInfo) else repr(info)
                 for info in objects.pods.values()])


def test_pod_events_and_logs_are_cleaned(cluster: EmulatedCluster, kubeconfig: Path,
                                         api: k8s.CoreV1Api) -> None:
    _seed(cluster, api)
    cluster.nodeside.log(NS, "nvidia-driver-daemonset-a", "main",
                         f"building\tmodule {TITLE}\r")
    cluster.nodeside.log(NS, "nvidia-driver-daemonset-a", "main", f"{CLIPBOARD}\x0c{CLEAR}")
    http = KubeHttp(load_target(str(kubeconfig)).configuration)
    try:
        lines = read_pod_log(http, NS, "nvidia-driver-daemonset-a", "main")
        events = read_pod_events(http, NS, "nvidia-driver-daemonset-a")
    finally:
        http.close()
    # a tab kept, CR before the LF dropped, FF and every escape shown
    assert lines == ["building\tmodule \\x1b]2;PWNED\\x1b\\", r"\x1b]52;c;cHduZWQ=\x07\x0c\x1b[2J\x1b[H"]
    assert [event["message"] for event in events] == [SHOWN]
    _no_control(events)


def test_error_status_bodies_are_cleaned(cluster: EmulatedCluster, kubeconfig: Path) -> None:
    """A 404 quotes the name asked for: the server's message comes back inert."""
    http = KubeHttp(load_target(str(kubeconfig)).configuration)
    try:
        with pytest.raises(ApiStatusError) as caught:
            http.get(f"/api/v1/nodes/{TITLE}")
    finally:
        http.close()
    assert caught.value.code == 404
    assert r"\x1b]2;PWNED" in str(caught.value) and r"\x1b]2;PWNED" in caught.value.detail
    _no_control([str(caught.value), caught.value.detail, caught.value.reason])


def test_write_refusals_are_cleaned() -> None:
    body = json.dumps({"kind": "Status", "message": f"denied {TITLE}", "reason": "Forbidden",
                       "details": {"causes": [{"message": f"budget {CLEAR}"}]}}).encode()
    error = api_error(403, body)
    assert r"denied \x1b]2;PWNED" in error.reason and r"budget \x1b[2J" in error.reason
    _no_control([str(error), error.reason])


def test_watch_events_are_cleaned() -> None:
    """A MODIFIED event as the watch stream carries it (JSON escapes, raw C1 bytes)."""
    obj = node("gpu-0")
    obj["metadata"]["annotations"] = {"note": HOSTILE}
    obj["metadata"]["labels"]["evil\u202ekey"] = "v"
    line = json.dumps({"type": "MODIFIED", "object": obj}, ensure_ascii=False).encode()
    event = NODES.event(line)
    assert event.item is not None
    reduced, _ = event.item
    assert reduced["metadata"]["annotations"]["note"] == SHOWN
    assert r"evil\u202ekey" in reduced["metadata"]["labels"]
    _no_control([event.object, reduced])


def test_exporter_label_values_are_cleaned() -> None:
    text = ('# TYPE DCGM_FI_DEV_XID_ERRORS gauge\n'
            f'DCGM_FI_DEV_XID_ERRORS{{gpu="0",err_msg="{TITLE}{CLIPBOARD}"}} 79\n')
    (sample,) = parse_samples(text)
    assert sample.labels["err_msg"] == r"\x1b]2;PWNED\x1b\\x1b]52;c;cHduZWQ=\x07"


def test_recordings_are_cleaned() -> None:
    recording = Recording.from_json({"scenario": "x", "now": 1.0,
                                     "logs": {"ns/p/c": [f"log {CLEAR}"]},
                                     "pod_events": {"ns/p": [{"message": HOSTILE}]}})
    assert recording.logs["ns/p/c"] == (r"log \x1b[2J\x1b[H",)
    assert recording.pod_events["ns/p"][0]["message"] == SHOWN


def test_the_debug_log_holds_no_control_character(tmp_path: Path) -> None:
    """The last line of defence: whatever a library logs, the file stays inert."""
    path = tmp_path / "debug.log"
    handler = configure_logging(path)
    try:
        logging.getLogger("gputui.test").warning("answer: %s", HOSTILE)
    finally:
        remove_logging(handler)
    text = path.read_text(encoding="utf-8")
    assert SHOWN in text
    _no_control(text)


def test_the_header_line_is_cleaned_whatever_the_source() -> None:
    """An exception raised on hostile data, or a kubeconfig context name, reaches the header
    through :class:`SourceStatus`, which cleans what it holds."""
    tracker = StatusTracker(context=f"prod{TITLE}", server="https://api")
    tracker.build_failed(f"snapshot build failed: ValueError: {CLEAR}")
    status = tracker.current()
    assert status.context == "prod\\x1b]2;PWNED\\x1b\\"
    assert r"ValueError: \x1b[2J\x1b[H" in status.message
    _no_control([status.context, status.message])


_JSON = st.recursive(
    st.one_of(st.text(st.characters(codec=None), max_size=20), st.integers(), st.booleans(),
              st.none(), st.sampled_from(["\x1b[2J", "a\tb\nc", "\x9b", "\u202e", "é\u00a0"])),
    lambda inner: st.one_of(st.lists(inner, max_size=4),
                            st.dictionaries(st.text(max_size=8), inner, max_size=4)),
    max_leaves=15)


@settings(max_examples=300, deadline=None, derandomize=True, database=None)
@given(st.lists(_JSON, max_size=4))
def test_the_page_gate_never_lets_an_unclean_object_through(objects: list[Any]) -> None:
    """:func:`clean_objects` skips the walk when the re-encoded bytes look plain: whatever
    the objects, its answer is the full walk's."""
    assert clean_objects(objects) == [clean_tree(obj) for obj in objects]
