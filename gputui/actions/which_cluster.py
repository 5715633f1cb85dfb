"""Which cluster the runner's writes go to, for the audit log's ``cluster`` (see
:mod:`gputui.domain.cluster_id` for why the context name is not enough).

Asked of the server through the writer (a GET of the ``kube-system`` namespace: allowed in
read-only mode too, though nothing is audited there). A refusal (403: RBAC) or a missing
namespace is an answer: the id is the server URL alone. A server that cannot be reached
is not: nothing is kept, and the next intent line asks again (its apply would fail first).
"""

from __future__ import annotations

import logging

from gputui.actions.base import ClusterWriter, WriteError
from gputui.domain.cluster_id import KUBE_SYSTEM, ClusterId, cluster_id, uid_of_namespace

_log = logging.getLogger(__name__)


def ask_cluster(writer: ClusterWriter) -> tuple[ClusterId, bool]:
    """(the id of the writer's cluster, whether it is final and may be kept).

    The URL is the writer's, without userinfo; the UID is "" when it could not be read.
    """
    server = writer.server
    try:
        namespace = writer.get("Namespace", KUBE_SYSTEM)
    except WriteError as error:
        _log.info("the kube-system namespace could not be read (%s); audit lines name the "
                  "cluster by its server URL only", error.reason)
        return cluster_id(server), error.status != 0
    uid = uid_of_namespace(namespace)
    if not uid:
        _log.info("the kube-system namespace has no usable uid; audit lines name the "
                  "cluster by its server URL only")
    return cluster_id(server, uid), True
