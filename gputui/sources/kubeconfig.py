"""Find and load the cluster connection the way kubectl does.

Order: ``--kubeconfig`` (``Settings.kubeconfig``; colon-separated lists allowed), else
``$KUBECONFIG`` (several files merged, first file to define a name wins, the first
``current-context`` wins, missing files skipped), else ``~/.kube/config``, else the in-cluster
service account when gputui runs in a pod. The cluster entry and auth providers are the
``kubernetes`` client's own loader; the user entry's tokens, token files, key data and exec
plugins are handled as client-go handles them (:mod:`gputui.sources.credentials`), and
gputui adds kubectl's merge rule for ``current-context`` and one-line errors.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from kubernetes.client import Configuration
from kubernetes.config import incluster_config, kube_config
from kubernetes.config.config_exception import ConfigException

from gputui.sources.credentials import FileToken, install, take_credentials
from gputui.sources.errors import SourceError
from gputui.sources.execplugin import ExecCredentials
from gputui.sources.secrets import scrub
from gputui.sources.userinfo import split_userinfo

IN_CLUSTER_CONTEXT = "in-cluster"


@dataclass(frozen=True)
class KubeTarget:
    """A loaded connection: client configuration plus the names the header shows."""

    configuration: Configuration
    context: str
    server: str
    #: the kubeconfig user entry the context names (the audit log's "user"); never a secret
    user: str = ""
    #: the exec credential plugin the user entry names, already run once; None without one
    credentials: ExecCredentials | None = None


def load_target(kubeconfig: str | None = None, context: str | None = None,
                environ: Mapping[str, str] | None = None, *,
                may_prompt: bool = True) -> KubeTarget:
    """Resolve kubeconfig files and context into a ready client :class:`Configuration`.

    Args:
        kubeconfig: explicit file (or colon-separated files); ``None`` means ``$KUBECONFIG``,
            ``~/.kube/config`` or in-cluster, like kubectl.
        context: context name; ``None`` means the merged ``current-context``.
        environ: the environment to read ``KUBECONFIG``/``HOME`` from (tests pass their own).
        may_prompt: an exec plugin's first run may use the terminal (a login prompt); its
            later runs never do.

    Raises:
        SourceError: one line naming the file, context or setting that is wrong.
    """
    env = os.environ if environ is None else environ
    paths = _candidate_paths(kubeconfig, env)
    existing = [p for p in paths if p.exists()]
    if kubeconfig is not None:
        missing = [p for p in paths if not p.exists()]
        if missing:
            raise SourceError(f"kubeconfig not found: {missing[0]}")
    if not existing:
        if env.get("KUBERNETES_SERVICE_HOST") and kubeconfig is None:
            return _in_cluster()
        looked = ", ".join(str(p) for p in paths) or "~/.kube/config"
        raise SourceError(f"no kubeconfig found (looked in {looked}); "
                          "pass --kubeconfig or set KUBECONFIG")
    return _from_files(existing, context, may_prompt)


def _candidate_paths(kubeconfig: str | None, env: Mapping[str, str]) -> list[Path]:
    """The files kubectl would consider, in precedence order."""
    if kubeconfig is not None:
        raw = kubeconfig
    elif env.get("KUBECONFIG"):
        raw = env["KUBECONFIG"]
    else:
        home = env.get("HOME") or str(Path.home())
        return [Path(home) / ".kube" / "config"]
    return [Path(os.path.expanduser(part)) for part in raw.split(os.pathsep) if part]


def _read_yaml(path: Path) -> dict[str, Any]:
    """One kubeconfig file as a mapping, or a one-line error naming the file."""
    try:
        data = yaml.safe_load(path.read_text())
    except OSError as error:
        raise SourceError(f"cannot read kubeconfig {path}: {error.strerror or error}") from None
    except yaml.YAMLError as error:
        first = str(error).splitlines()[0] if str(error) else "invalid YAML"
        raise SourceError(f"kubeconfig {path} is not valid YAML: {first}") from None
    if not isinstance(data, dict):
        raise SourceError(f"kubeconfig {path} is not a kubeconfig (expected a mapping)")
    return data


def _from_files(paths: list[Path], context: str | None, may_prompt: bool) -> KubeTarget:
    """Merge files as kubectl does and load the chosen context."""
    documents = [_read_yaml(p) for p in paths]
    current = next((d.get("current-context") for d in documents if d.get("current-context")),
                   None)
    names = [c.get("name") for d in documents for c in (d.get("contexts") or [])
             if isinstance(c, dict)]
    chosen = context or current
    if not chosen:
        raise SourceError("kubeconfig has no current context; pass --context "
                          f"(contexts: {', '.join(n for n in names if n) or 'none'})")
    if chosen not in names:
        where = "" if len(paths) > 1 else f" {paths[0]}"
        raise SourceError(f"context {chosen!r} not found in kubeconfig{where} "
                          f"(contexts: {', '.join(n for n in names if n) or 'none'})")
    user = next((str((c.get("context") or {}).get("user") or "") for d in documents
                 for c in (d.get("contexts") or [])
                 if isinstance(c, dict) and c.get("name") == chosen), "")
    configuration, plugin = _load(paths, chosen, user)
    if plugin is not None:
        plugin.start(may_prompt)
    return KubeTarget(configuration, chosen, str(configuration.host), user, plugin)


def _load(paths: list[Path], chosen: str, user: str
          ) -> tuple[Configuration, ExecCredentials | None]:
    """The client configuration of context ``chosen``, credentials installed."""
    try:
        # the client's merger keeps each entry's file for relative certificate paths; only
        # its current-context rule (last file wins) differs from kubectl's, fixed here
        lib: Any = kube_config
        merger = lib.KubeConfigMerger(os.pathsep.join(str(p) for p in paths))
        merged = merger.config
        merged.value["current-context"] = chosen
        loader = lib.KubeConfigLoader(config_dict=merged, active_context=chosen)
        user_node = loader._user
        base = os.path.dirname(os.path.abspath(user_node.path)) if getattr(
            user_node, "path", None) else os.getcwd()
        source = None
        if user_node is not None and isinstance(user_node.value, dict):
            cluster = loader._cluster.value if loader._cluster is not None else {}
            source = take_credentials(user_node.value, cluster, user, base)
        configuration = Configuration()
        loader.load_and_set(configuration)
    except (ConfigException, KeyError, TypeError, ValueError, OSError) as error:
        raise SourceError(f"kubeconfig context {chosen!r}: {scrub(str(error))}") from None
    if source is not None:
        install(configuration, source, user)
    _take_url_userinfo(configuration)
    return configuration, source if isinstance(source, ExecCredentials) else None


def _take_url_userinfo(configuration: Configuration) -> None:
    """Move a ``user:password@`` out of the server URL into a basic-auth header.

    The URL is shown and written everywhere; the credential must not be (see
    :mod:`gputui.sources.userinfo`). As Go's ``net/http`` does for kubectl, the userinfo
    is sent as basic auth unless the user entry already authenticates the requests.
    """
    found = split_userinfo(str(configuration.host))
    if not found.carried:
        return
    configuration.host = found.url
    if not configuration.auth_settings():
        configuration.api_key["BearerToken"] = found.basic_header()


def _in_cluster() -> KubeTarget:
    """The pod's service account, for gputui running inside the cluster."""
    configuration = Configuration()
    try:
        lib: Any = incluster_config
        lib.load_incluster_config(client_configuration=configuration)
    except ConfigException as error:
        raise SourceError(f"in-cluster config: {error}") from None
    # the client sends the projected token as read, newline and all: trimmed, as client-go
    install(configuration, FileToken(lib.SERVICE_TOKEN_FILENAME, "serviceaccount").bearer,
            "serviceaccount")
    return KubeTarget(configuration, IN_CLUSTER_CONTEXT, str(configuration.host),
                      "serviceaccount")
