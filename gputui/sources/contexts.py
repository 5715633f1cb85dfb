"""The kubeconfig's contexts, for ``:ctx``: list them, and open one as a live source.

Why here and not in the UI: which files count, how they merge and which context is current
are kubectl's rules, already kept by :mod:`gputui.sources.kubeconfig`; the ``:ctx`` view only
shows what this module returns. Every shown field goes through
:func:`~gputui.domain.sanitize.clean_line` (a context name is text a colleague or a cloud
CLI wrote, and it reaches the terminal), and no credential is ever read into an entry: a
server URL loses any ``user:password@`` it carries, and the user is the kubeconfig entry's
name, never its token.
"""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit, urlunsplit

from gputui.domain.sanitize import clean_line
from gputui.settings import Settings
from gputui.sources.errors import SourceError
from gputui.sources.secrets import scrub

if TYPE_CHECKING:  # the UI imports this module; the client is loaded when a context opens
    from gputui.sources.kube import KubeSource


@dataclass(frozen=True)
class ContextEntry:
    """One context as ``:ctx`` lists it; every field but ``key`` is clean to show.

    Attributes:
        key: the context's name exactly as the kubeconfig spells it (what a switch loads).
        name: the same name, cleaned for the screen.
        cluster: the cluster entry it names.
        server: that cluster's API server URL, without any userinfo.
        user: the user entry it names (a name, never a credential).
        namespace: its default namespace, or "".
        current: the kubeconfig's ``current-context``, or the one gputui shows now.
        read_only: matches ``read_only_contexts`` (or ``--read-only`` is set).
    """

    key: str
    name: str
    cluster: str
    server: str
    user: str
    namespace: str = ""
    current: bool = False
    read_only: bool = False


def is_read_only(settings: Settings, context: str) -> bool:
    """True when ``--read-only`` is set or ``context`` matches a ``read_only_contexts`` glob
    (shell-style, case-sensitive like context names: ``prod-*``, ``*-eu-?``)."""
    return settings.read_only or any(fnmatch.fnmatchcase(context, glob)
                                     for glob in settings.read_only_contexts)


def read_only_reason(settings: Settings, context: str) -> str | None:
    """Why actions are refused in ``context``, in the words the greyed keys show; None when
    writes are allowed."""
    if settings.read_only:
        return None  # the runner's own sentence names the flag
    glob = next((g for g in settings.read_only_contexts if fnmatch.fnmatchcase(context, g)),
                None)
    if glob is None:
        return None
    return f"read-only context (read_only_contexts: {clean_line(glob)}): gputui sends no writes"


def source_context(source: object) -> str | None:
    """The kubeconfig context a live source reads (``KubeSource.target``); None for a
    source without one (a replay, a recording)."""
    context = getattr(getattr(source, "target", None), "context", None)
    return context if isinstance(context, str) else None


def close_writer(writer: object) -> None:
    """Drop a writer's pooled connections (a ``KubeWriter``; test writers hold none)."""
    close = getattr(writer, "close", None)
    if callable(close):
        close()


def server_shown(url: str) -> str:
    """``url`` without ``user:password@`` (a server URL may carry basic-auth credentials)."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return clean_line(scrub(url))
    if "@" in parts.netloc:
        parts = parts._replace(netloc=parts.netloc.rsplit("@", 1)[1])
    return clean_line(scrub(urlunsplit(parts)))


def list_contexts(settings: Settings, showing: str | None = None,
                  environ: Mapping[str, str] | None = None) -> tuple[ContextEntry, ...]:
    """Every context of the merged kubeconfig (kubectl's files and merge rule: the first
    file to name an entry wins), in file order; ``showing`` (the context on screen) is
    marked current, else the kubeconfig's ``current-context``.

    Raises:
        SourceError: one line naming the file that cannot be read or parsed.
    """
    from gputui.sources.kubeconfig import _candidate_paths, _read_yaml

    env = os.environ if environ is None else environ
    paths = [p for p in _candidate_paths(settings.kubeconfig, env) if p.exists()]
    documents = [_read_yaml(p) for p in paths]
    current = showing or next((str(d["current-context"]) for d in documents
                               if d.get("current-context")), "")
    clusters = _first_by_name(documents, "clusters")
    seen: set[str] = set()
    entries = []
    for item in _named(documents, "contexts"):
        key = str(item["name"])
        if key in seen:
            continue
        seen.add(key)
        raw = item.get("context")
        body: dict[str, Any] = raw if isinstance(raw, dict) else {}
        cluster = str(body.get("cluster") or "")
        server = str((clusters.get(cluster) or {}).get("server") or "")
        entries.append(ContextEntry(
            key, clean_line(key), clean_line(cluster), server_shown(server),
            clean_line(str(body.get("user") or "")), clean_line(str(body.get("namespace") or "")),
            current=key == current, read_only=is_read_only(settings, key)))
    return tuple(entries)


def _named(documents: Sequence[Mapping[str, Any]], section: str) -> Iterable[dict[str, Any]]:
    """The entries of ``section`` across files that are mappings with a name."""
    for document in documents:
        items = document.get(section)
        for item in items if isinstance(items, list) else ():
            if isinstance(item, dict) and item.get("name"):
                yield item


def _first_by_name(documents: Sequence[Mapping[str, Any]], section: str
                   ) -> dict[str, dict[str, Any]]:
    """name -> body of each entry, the first file's winning (kubectl's merge rule)."""
    found: dict[str, dict[str, Any]] = {}
    for item in _named(documents, section):
        body = item.get(section[:-1])
        found.setdefault(str(item["name"]), body if isinstance(body, dict) else {})
    return found


def open_context(settings: Settings, context: str, **options: Any) -> KubeSource:
    """The live source on ``context`` of the same kubeconfig (``:ctx``): loaded without
    a terminal prompt (the TUI holds the terminal; an exec plugin that needs a login says
    so in one line instead). Nothing connects until ``start``.

    Raises:
        SourceError: unknown context, unreadable kubeconfig, a credential plugin that fails.
    """
    if settings.demo:
        raise SourceError("demo mode: the emulated clusters are opened by gputui.demo")
    from gputui.sources.connect import prometheus_options
    from gputui.sources.kube import KubeSource
    from gputui.sources.kubeconfig import load_target

    target = load_target(settings.kubeconfig, context, may_prompt=False)
    return KubeSource(target, settings.thresholds, namespace=settings.namespace,
                      prometheus=prometheus_options(settings), **options)
