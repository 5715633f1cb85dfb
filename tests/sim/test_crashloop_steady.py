"""A crash-looping driver is failing all along, not only while it is backed off.

In the driver-crashloop scenario the A100 node's driver pod fails in k8s-driver-manager
("driver is in use") and the kubelet restarts it with back-off (10 s x 2^n, up to 5 min);
the H100 pool reboots into a kernel without headers and its driver container crashes in
the same way. Between two back-offs the container runs again. Read through the real source
(KubeSource on the emulated API server), once a node's ``driver-pod-failing`` is critical
it must stay critical in every later snapshot, and the node is never "normal until ..."
again: before, each restart looked like a start with a fresh 21-minute grace.
"""

from __future__ import annotations

import threading
import time

from gputui.demo import DemoCluster
from gputui.domain.model import ClusterSnapshot, Severity
from gputui.sources.kube import KubeSource

#: emulated seconds watched: several back-off cycles of both crash loops
WATCH_S = 12 * 60.0


def test_a_crash_looping_driver_never_looks_normal_between_back_offs() -> None:
    demo = DemoCluster("driver-crashloop", speed=60)
    target = demo.start()
    began = demo.now()
    snapshots: list[ClusterSnapshot] = []
    lock = threading.Lock()

    def keep(snapshot: ClusterSnapshot) -> None:
        with lock:
            snapshots.append(snapshot)

    source = KubeSource(target, clock=demo.now, coalesce=0.05, rebuild_every=1.0)
    source.start(keep, lambda _: None)
    try:
        deadline = time.monotonic() + 120.0  # real seconds, for a loaded machine
        while demo.now() - began < WATCH_S and time.monotonic() < deadline:
            time.sleep(0.2)
        assert demo.now() - began >= WATCH_S, "the emulated clock did not get far enough"
    finally:
        source.stop()
        demo.stop()
    with lock:
        seen = [s for s in snapshots if not s.loading]
    failing_since: dict[str, int] = {}
    for index, snapshot in enumerate(seen):
        for finding in snapshot.findings:
            if (finding.code == "driver-pod-failing" and finding.node
                    and finding.severity is Severity.CRITICAL):
                failing_since.setdefault(finding.node, index)
    assert len(failing_since) >= 2, "neither crash loop was seen"  # A100 and H100 pools
    for node, first in failing_since.items():
        for snapshot in seen[first:]:
            severities = {f.severity for f in snapshot.findings
                          if f.code == "driver-pod-failing" and f.node == node}
            assert severities == {Severity.CRITICAL}, (node, snapshot.generated_at - began)
            normal = [f.message for f in snapshot.findings
                      if f.node == node and "normal until" in f.message]
            assert not normal, (node, normal)
