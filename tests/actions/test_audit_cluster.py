"""Issue 29, item 3: the audit log names the cluster (server URL without userinfo and the
``kube-system`` namespace UID), and the summary, ``check --format markdown`` and the
timeline show only that cluster's actions, however its context is named.

Each test here fails on the code before the change: intent lines carried only the context
name, and the summary took every line of the window (the timeline every line of the same
context name), so a rebuilt cluster behind the same context and URL showed the old one's
cordon.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from gputui.actions.audit import AuditLog
from gputui.actions.base import Cancel
from gputui.actions.audit_read import read_audit
from gputui.actions.registry import action
from gputui.actions.runner import Runner
from gputui.domain.cluster_id import cluster_id
from gputui.domain.operations import pair_operations
from gputui.domain.timeline import action_events
from gputui.domain.timeline_event import Timeline
from gputui.handoff import check_summary, session_summary
from gputui.sim.cluster import EmulatedCluster
from tests.actions.conftest import gpu_node, snapshot_of, writer_for


def _cordon(cluster: EmulatedCluster, node: str, audit: Path, tmp_path: Path,
            server: str | None = None) -> dict[str, Any]:
    """Cordon ``node`` on ``cluster`` through the app's runner; its intent line."""
    writer = writer_for(cluster, tmp_path / f"kube-{cluster.port}-{node}")
    if server is not None:
        writer.server = server  # what the kubeconfig said; the connection is unchanged
    try:
        runner = Runner(writer, AuditLog(audit))
        runner.check_permissions()
        plan = runner.plan(action("cordon"), snapshot_of(cluster, tmp_path), [node], {})
        result = runner.apply(action("cordon"), plan, runner.dry_run(plan), lambda p: None,
                              Cancel())
        assert result.ok, result
    finally:
        writer.close()
    intents = [json.loads(line) for line in audit.read_text().splitlines()
               if json.loads(line)["phase"] == "intent"]
    return intents[-1]


def _uid(cluster: EmulatedCluster) -> str:
    namespace = cluster.store.get("namespaces", "kube-system")
    assert namespace is not None
    return str(namespace["metadata"]["uid"])


def _old_line(audit: Path) -> None:
    """A cordon written by a gputui that did not record the cluster."""
    with audit.open("a", encoding="utf-8") as file:
        file.write(json.dumps({"id": "old", "time": time.strftime(
            "%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time())), "phase": "intent",
            "context": "gputui-demo", "user": "bob", "action": "drain",
            "targets": ["gpu-old"]}) + "\n")


def test_a_rebuilt_cluster_behind_the_same_context_and_url_shows_only_its_own_actions(
        tmp_path: Path) -> None:
    """Two emulated clusters, one after the other on the same port and context name
    (``gputui-demo``), one audit log: each summary, markdown and timeline has only its
    own cordon; the older line without a cluster is counted, not shown."""
    audit = tmp_path / "state" / "audit.jsonl"
    started = time.time() - 1
    first = EmulatedCluster(run_controllers=False).start()
    try:
        first.store.create("nodes", gpu_node("gpu-first"))
        _cordon(first, "gpu-first", audit, tmp_path)
        first_uid, port = _uid(first), first.port
    finally:
        first.stop()
    _old_line(audit)
    second = EmulatedCluster(run_controllers=False, port=port).start()
    try:
        second.store.create("nodes", gpu_node("gpu-second"))
        intent = _cordon(second, "gpu-second", audit, tmp_path)
        assert intent["context"] == "gputui-demo"
        assert intent["cluster"] == {"server": second.url, "uid": _uid(second)}
        assert _uid(second) != first_uid  # each emulated cluster has its own
        snapshot = snapshot_of(second, tmp_path)
    finally:
        second.stop()
    assert snapshot.cluster_uid == _uid(second) and snapshot.server == f"http://127.0.0.1:{port}"
    for text in (check_summary(snapshot, str(audit)),
                 session_summary(snapshot, str(audit), started, snapshot.generated_at,
                                 Timeline())):
        assert "**cordon** on gpu-second" in text
        assert "gpu-first" not in text and "gpu-old" not in text
        assert "1 older action without a cluster id not shown" in text
        assert "1 action on other clusters not shown" in text
        assert f"- Cluster: http://127.0.0.1:{port} (kube-system UID {_uid(second)})" in text
    operations = pair_operations(read_audit(audit).entries)
    ours = cluster_id(snapshot.server, snapshot.cluster_uid)
    found = action_events(operations, ours, 0.0, {"gpu-first", "gpu-second", "gpu-old"})
    assert [event.node for _, events in found for event in events] == ["gpu-second"]


def test_the_intent_line_names_the_server_without_userinfo(api_only: EmulatedCluster,
                                                            tmp_path: Path) -> None:
    """A kubeconfig server URL with ``user:password@``: the line keeps the URL without it."""
    audit = tmp_path / "audit.jsonl"
    api_only.store.create("nodes", gpu_node("gpu-1"))
    with_password = api_only.url.replace("http://", "http://alice:s3cret@")
    intent = _cordon(api_only, "gpu-1", audit, tmp_path, server=with_password)
    assert intent["cluster"] == {"server": api_only.url, "uid": _uid(api_only)}
    assert "s3cret" not in audit.read_text() and "alice:" not in audit.read_text()


def test_a_forbidden_kube_system_falls_back_to_the_server_url_and_says_so(
        api_only: EmulatedCluster, tmp_path: Path) -> None:
    """RBAC refuses ``get namespaces``: the line names the URL alone, the snapshot has the
    read gap, and the summary shows the action and says how it was matched."""
    audit = tmp_path / "audit.jsonl"
    api_only.store.create("nodes", gpu_node("gpu-1"))
    api_only.set_deny("get:namespaces")
    intent = _cordon(api_only, "gpu-1", audit, tmp_path)
    assert intent["cluster"] == {"server": api_only.url, "uid": ""}
    snapshot = snapshot_of(api_only, tmp_path)
    assert snapshot.cluster_uid == "" and snapshot.unreadable.get("namespaces") == "forbidden"
    text = check_summary(snapshot, str(audit))
    assert "**cordon** on gpu-1" in text
    assert ("the kube-system namespace could not be read (403): actions are matched to this "
            "cluster by its server URL only") in text
    assert "cannot read namespaces (403): the kube-system namespace UID" in text
