"""The ``kube-system`` namespace UID: what the server says this cluster is.

Read once when a source connects (the live source and ``check`` alike) and carried in the
snapshot (``ClusterSnapshot.cluster_uid``), so the handoff summary and the timeline can keep
only this cluster's actions from the audit log (:mod:`gputui.domain.cluster_id`). A 403 is
a read gap (``namespaces``: the summary then says it matched by server URL only); a 404 (no
such namespace: an API server without the usual namespaces, such as a bare test server)
or another refusal leaves the UID unknown without a gap. A lost connection is raised: the
caller retries it as it retries the rest of connecting.
"""

from __future__ import annotations

import logging

from gputui.domain.cluster_id import KUBE_SYSTEM_PATH, uid_of_namespace
from gputui.domain.readgaps import FORBIDDEN
from gputui.sources.errors import ApiStatusError
from gputui.sources.http import KubeHttp

_log = logging.getLogger(__name__)


def read_cluster_uid(http: KubeHttp) -> tuple[str, str | None]:
    """(the UID or "", ``forbidden`` when RBAC refused the read, else None).

    Raises:
        SourceError: the server could not be reached (not an :class:`ApiStatusError`).
    """
    try:
        document = http.get(KUBE_SYSTEM_PATH)
    except ApiStatusError as error:
        _log.info("the kube-system namespace could not be read (%s): this cluster's audit "
                  "lines are matched by server URL only", error)
        return "", FORBIDDEN if error.code == 403 else None
    return uid_of_namespace(document), None
