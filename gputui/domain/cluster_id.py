"""Which cluster an audit line is about: the server URL and the ``kube-system`` namespace UID.

Why not the context name: a context is a local label. Every demo cluster is
``gputui-demo``, a colleague's kubeconfig may call production ``admin``, and a context
reused for a rebuilt cluster keeps its name. Matching the audit log by context put a
cordon of another cluster, a drain from an earlier run and both "done" and "failed" for
one node into one handoff summary. The server knows which cluster it is: the
``kube-system`` namespace exists from a cluster's first second to its last, and its UID is
drawn once (the identity ``kubectl`` plugins and cluster registries use). A cluster
restored from another's etcd backup keeps that UID, so the server URL is compared too;
the same cluster behind two URLs is then two clusters, which a summary says by counting
what it left out, rather than mixing two clusters' actions.

The URL is kept without userinfo (a ``user:password@`` must never reach a file) and
compared without case in scheme and host and without a trailing ``/``. When the UID could
not be read (RBAC refuses ``get namespaces``), the URL alone decides, and whoever shows the
result says so. Pure: what is read from an audit line is hostile and checked here.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass
from urllib.parse import urlsplit, urlunsplit

#: the namespace whose UID names a cluster
KUBE_SYSTEM = "kube-system"
#: where it is read (GET)
KUBE_SYSTEM_PATH = f"/api/v1/namespaces/{KUBE_SYSTEM}"
#: the read-gap key (:mod:`gputui.domain.readgaps`) when the UID could not be read
UID_RESOURCE = "namespaces"
#: longer values are not a URL or a UID a server produces
_MAX = 2048


@dataclass(frozen=True, slots=True)
class ClusterId:
    """One cluster as the audit log records it (``"cluster": {"server", "uid"}``).

    Attributes:
        server: the API server URL without userinfo.
        uid: the ``kube-system`` namespace UID; "" when it could not be read.
    """

    server: str
    uid: str = ""

    def to_json(self) -> dict[str, str]:
        """What an intent line carries under ``cluster``."""
        return {"server": self.server, "uid": self.uid}

    def describe(self) -> str:
        """``https://k (kube-system UID 1f…)``, or the URL alone when the UID is unknown."""
        return f"{self.server} (kube-system UID {self.uid})" if self.uid else self.server


def bare_server(url: str) -> str:
    """``url`` without ``user:password@``, scheme and host in lower case, no trailing ``/``.

    Something that is not a URL is kept as it is, minus anything up to an ``@`` (it may
    still hold a password); it then matches only itself.
    """
    try:
        parts = urlsplit(url.strip())
    except ValueError:
        parts = None
    if parts is None or not parts.netloc:
        return url.strip().rsplit("@", 1)[-1]
    netloc = parts.netloc.rsplit("@", 1)[-1].lower()
    path = parts.path.rstrip("/")
    return urlunsplit((parts.scheme.lower(), netloc, path, parts.query, ""))


def cluster_id(server: str, uid: str = "") -> ClusterId:
    """The id of the cluster at ``server`` whose ``kube-system`` UID is ``uid``."""
    return ClusterId(bare_server(server), uid if _clean(uid) is not None else "")


def _clean(value: object) -> str | None:
    """A printable string of sensible length, or None."""
    if not isinstance(value, str) or len(value) > _MAX:
        return None
    if any(unicodedata.category(ch).startswith("C") for ch in value):
        return None
    return value


def parse_cluster(value: object) -> ClusterId | None:
    """The ``cluster`` of an audit line, or None when it has none a cluster could match
    (missing: a line written before gputui recorded it; or not of the right shape)."""
    if not isinstance(value, dict):
        return None
    server = _clean(value.get("server"))
    if not server:
        return None
    uid = _clean(value.get("uid")) or ""
    return ClusterId(bare_server(server), uid)


def same_cluster(ours: ClusterId, theirs: ClusterId) -> bool:
    """Whether ``theirs`` (an audit line's) is the cluster ``ours`` names.

    The URLs must be the same; the UIDs too when both are known. When either side could
    not read its UID, the URL alone decides (the fallback the caller says it used).
    """
    if bare_server(ours.server) != bare_server(theirs.server):
        return False
    if ours.uid and theirs.uid:
        return ours.uid == theirs.uid
    return True


def uid_of_namespace(document: object) -> str:
    """``metadata.uid`` of a Namespace the server answered, "" when it holds none usable."""
    metadata = document.get("metadata") if isinstance(document, dict) else None
    uid = metadata.get("uid") if isinstance(metadata, dict) else None
    cleaned = _clean(uid)
    return cleaned if cleaned and len(cleaned) <= 128 else ""
