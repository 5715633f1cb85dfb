"""How a request gets its ``Authorization`` header: client-go's rules, no secret in an error.

The ``kubernetes`` client's loader reads the kubeconfig's cluster and its auth providers;
gputui takes the user entry's own credentials out of its hands first
(:func:`take_credentials`) because the loader differs from kubectl where it matters:

* ``tokenFile`` is read as client-go reads it: whitespace trimmed (a file ending in a
  newline works, as with kubectl), an empty file refused, re-read every minute (projected
  service-account tokens rotate), the last good token kept if a re-read fails; a file wins
  over ``token`` when both are set;
* ``client-key-data``, ``client-certificate-data`` and ``certificate-authority-data`` become
  :mod:`gputui.sources.keyfiles` paths (memory on Linux), never files left in ``$TMPDIR``;
* ``exec`` plugins run through :mod:`gputui.sources.execplugin` (once up front, then
  refreshed in the background), not on the request path;
* every value is remembered by :mod:`gputui.sources.secrets`, so no text gputui writes
  carries it, and a header value with a line break or control character is refused with a
  sentence naming the user entry (urllib3 would raise ``Invalid header value b'Bearer …'``).

The header is computed per request through the ``Configuration``'s ``refresh_api_key_hook``,
which both :class:`~gputui.sources.http.KubeHttp` and the generated API client (the writer)
call: one path for reads and writes.
"""

from __future__ import annotations

import base64
import binascii
import os
import threading
import time
from collections.abc import Callable, MutableMapping
from dataclasses import dataclass
from typing import Any

from kubernetes.client import Configuration

from gputui.sources import keyfiles
from gputui.sources.errors import SourceError
from gputui.sources.execplugin import ExecCredential, ExecCredentials, plugin_from_config
from gputui.sources.secrets import remember

#: seconds a token read from a file is used before the file is read again (client-go's)
TOKEN_FILE_PERIOD = 60.0


class CredentialError(SourceError):
    """The user entry's credential cannot be used; the message names the entry, not it."""


@dataclass
class FileToken:
    """``tokenFile``: trimmed, never empty, re-read every :data:`TOKEN_FILE_PERIOD` s."""

    path: str
    user: str
    clock: Callable[[], float] = time.monotonic
    _token: str = ""
    _read_at: float = float("-inf")

    def __post_init__(self) -> None:
        self._lock = threading.Lock()

    def bearer(self) -> str:
        with self._lock:
            if self.clock() - self._read_at >= TOKEN_FILE_PERIOD or not self._token:
                try:
                    self._token = self._read()
                except CredentialError:
                    if not self._token:
                        raise  # no good token yet; otherwise keep the last one, as client-go
                self._read_at = self.clock()
            return self._token

    def _read(self) -> str:
        try:
            with open(self.path, encoding="utf-8", errors="replace") as handle:
                token = handle.read().strip()
        except OSError as error:
            raise CredentialError(f"user {self.user!r}: cannot read tokenFile {self.path}: "
                                  f"{error.strerror or type(error).__name__}") from None
        if not token:
            raise CredentialError(f"user {self.user!r}: tokenFile {self.path} is empty")
        remember(token)
        return token


def take_credentials(user: MutableMapping[str, Any], cluster: MutableMapping[str, Any],
                     user_name: str, base_dir: str) -> Callable[[], str] | ExecCredentials | None:
    """Take the credentials gputui handles itself out of the loader's user and cluster
    entries (mutated in place); returns the bearer token's source, if any.

    A :class:`~gputui.sources.execplugin.ExecCredentials` is returned unstarted: the caller
    starts it once it knows whether the terminal is free for a prompt.
    """
    remember(*(str(user.get(k) or "") for k in ("token", "password", "client-key-data")))
    provider = (user.get("auth-provider") or {}).get("config") or {}
    if isinstance(provider, dict):  # gcp/oidc: the client's loader uses them, gputui hides them
        remember(*(str(provider.get(k) or "") for k in (
            "access-token", "id-token", "refresh-token", "client-secret")))
    if user.get("username") and user.get("password"):
        remember(base64.b64encode(f"{user['username']}:{user['password']}".encode()).decode())
    _data_to_path(user, "client-key-data", "client-key", user_name, secret=True)
    _data_to_path(user, "client-certificate-data", "client-certificate", user_name)
    _data_to_path(cluster, "certificate-authority-data", "certificate-authority", user_name)
    exec_config = user.pop("exec", None)
    token_file = user.pop("tokenFile", None)
    token = user.pop("token", None)
    if token_file:
        path = os.path.normpath(os.path.join(base_dir, str(token_file)))
        return FileToken(path, user_name).bearer
    if token:
        text = str(token)
        return lambda: text
    if isinstance(exec_config, dict):
        plugin = plugin_from_config(exec_config, base_dir, _cluster_info(cluster))
        return ExecCredentials(plugin)
    return None


def _data_to_path(entry: MutableMapping[str, Any], data_key: str, file_key: str,
                  user_name: str, secret: bool = False) -> None:
    """Replace base64 ``data_key`` with a :mod:`keyfiles` path under ``file_key``."""
    data = entry.pop(data_key, None)
    if not data:
        return
    try:
        raw = base64.b64decode(str(data), validate=False)
    except (binascii.Error, ValueError):
        raise CredentialError(f"user {user_name!r}: {data_key} is not valid base64") from None
    if secret:
        remember(*(line for line in raw.decode("ascii", "replace").splitlines()
                   if "-----" not in line))
    entry[file_key] = keyfiles.materialize(raw, file_key)


def _cluster_info(cluster: MutableMapping[str, Any]) -> dict[str, Any]:
    """``spec.cluster`` for a plugin with ``provideClusterInfo`` (client-go's fields)."""
    info: dict[str, Any] = {"server": cluster.get("server", "")}
    for key in ("tls-server-name", "insecure-skip-tls-verify", "proxy-url"):
        if key in cluster:
            info[key] = cluster[key]
    path = cluster.get("certificate-authority")
    if path and os.path.isfile(str(path)):
        with open(str(path), "rb") as handle:
            info["certificate-authority-data"] = base64.b64encode(handle.read()).decode()
    for extension in cluster.get("extensions") or ():
        if isinstance(extension, dict) and extension.get(
                "name") == "client.authentication.k8s.io/exec":
            info["config"] = extension.get("extension")
    return info


def install(configuration: Configuration, source: Callable[[], str] | ExecCredentials,
            user_name: str) -> None:
    """Make every request (reads and writes) ask ``source`` for its bearer token.

    A token or token file is read now, so an unreadable file or an unusable token fails
    at load as with kubectl; an exec plugin's failure is kept and retried instead.
    """
    if isinstance(source, ExecCredentials):
        source.on_credential = _certificate_setter(configuration)
        supplier = _exec_token(source)
        initial = ""
    else:
        supplier = source
        initial = header_value(supplier(), user_name)

    def refresh(conf: Configuration) -> None:
        token = supplier()
        conf.api_key["BearerToken"] = header_value(token, user_name) if token else ""

    configuration.api_key["BearerToken"] = initial
    hooked: Any = configuration
    hooked.refresh_api_key_hook = refresh


def header_value(token: str, user_name: str) -> str:
    """``Bearer <token>``; a token no HTTP header can carry is refused in one sentence."""
    if not token.isprintable() or any(c in token for c in "\r\n"):
        raise CredentialError(f"user {user_name!r}: the bearer token contains a line break "
                              "or control character (check the kubeconfig's token)")
    return f"Bearer {token}"


def _exec_token(credentials: ExecCredentials) -> Callable[[], str]:
    def token() -> str:
        current = credentials.current()
        if not current.token:
            return ""
        return current.token
    return token


def _certificate_setter(configuration: Configuration) -> Callable[[ExecCredential], None]:
    """Write a plugin's certificate pair to the configuration's key paths: made on the
    first pair, rewritten in place after (new connections load the new pair)."""
    lock = threading.Lock()
    paths: dict[str, str] = {}

    def apply(credential: ExecCredential) -> None:
        if not credential.client_certificate:
            return
        pair = ((credential.client_certificate, "cert_file", "exec-client-certificate"),
                (credential.client_key, "key_file", "exec-client-key"))
        with lock:
            for pem, attribute, name in pair:
                if attribute in paths:
                    keyfiles.rewrite(paths[attribute], pem.encode())
                else:
                    paths[attribute] = keyfiles.materialize(pem.encode(), name)
                    setattr(configuration, attribute, paths[attribute])

    return apply
