"""Exec credential plugins (``users[].user.exec``), run the way client-go runs them, once.

gke-gcloud-auth-plugin, ``aws eks get-token``, kubelogin: the kubeconfig names a command
whose stdout is an ``ExecCredential`` (``client.authentication.k8s.io/v1`` or ``v1beta1``)
holding a token or a client certificate and key, with an ``expirationTimestamp``. The
``kubernetes`` client reruns the plugin on every request once the token is within five
minutes of expiry, with the terminal as its stdin and stderr: inside the TUI that is
dozens of runs a second, at once, painting over the screen. gputui instead:

* runs it once before the TUI takes the terminal (:meth:`ExecCredentials.start`), so a
  login prompt works, honouring ``interactiveMode`` (``Never``, ``IfAvailable``,
  ``Always``) as client-go does;
* keeps the credential until its ``expirationTimestamp`` and refreshes it in one
  background thread before then (so never two runs at once), with stdin closed and stderr
  captured to the debug log, backing off after a failure;
* says a failure in one line, for the header ("credential plugin X failed: …; retrying in
  30 s"), never quoting what the plugin printed on stdout (the credential).
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import IO, Any

from gputui.sources.errors import SourceError
from gputui.sources.secrets import remember, scrub

log = logging.getLogger("gputui.sources.execplugin")

API_VERSIONS = ("client.authentication.k8s.io/v1", "client.authentication.k8s.io/v1beta1")
INTERACTIVE_MODES = ("Never", "IfAvailable", "Always")
#: seconds a background run may take; a plugin that hangs must not hold the refresh forever
RUN_TIMEOUT = 60.0
#: back-off after a failed run: first wait, factor, cap (seconds)
BACKOFF_FIRST, BACKOFF_FACTOR, BACKOFF_CAP = 10.0, 2.0, 300.0
#: refresh this share of a credential's lifetime before it expires (at most 5 minutes)
REFRESH_SHARE, REFRESH_MARGIN_CAP = 0.2, 300.0
#: seconds between refreshes forced by a 401 (the server refused a credential it should take)
FORCED_EVERY = 30.0


class ExecPluginError(SourceError):
    """The plugin could not give a credential; the message names it, never the output."""


@dataclass(frozen=True)
class ExecCredential:
    """What one run returned: a token and/or a certificate pair, and when it expires."""

    token: str = ""
    client_certificate: str = ""
    client_key: str = ""
    #: epoch seconds; None when the plugin set no expiry (kept until the server says 401)
    expires: float | None = None


@dataclass(frozen=True)
class ExecPlugin:
    """One kubeconfig ``exec`` entry, validated; :meth:`run` runs it once."""

    command: str
    args: tuple[str, ...]
    env: tuple[tuple[str, str], ...]
    api_version: str
    interactive_mode: str
    cluster: Mapping[str, Any] | None = None

    @property
    def name(self) -> str:
        """The command's base name, for messages ("gke-gcloud-auth-plugin")."""
        return os.path.basename(self.command) or self.command

    def run(self, may_prompt: bool, stdin_is_terminal: bool | None = None) -> ExecCredential:
        """Run the plugin once; ``may_prompt``: the terminal is free for a login prompt.

        Raises:
            ExecPluginError: it could not run, failed, or printed no usable credential.
        """
        if stdin_is_terminal is None:
            stdin_is_terminal = _stdin_is_terminal()
        interactive = self._interactive(may_prompt and stdin_is_terminal)
        spec: dict[str, Any] = {"interactive": interactive}
        if self.cluster is not None:
            spec["cluster"] = dict(self.cluster)
        request = {"apiVersion": self.api_version, "kind": "ExecCredential", "spec": spec}
        env = dict(os.environ, **dict(self.env))
        env["KUBERNETES_EXEC_INFO"] = json.dumps(request)
        stdout, stderr, code = self._spawn(env, interactive)
        for line in stderr.splitlines():
            log.debug("credential plugin %s stderr: %s", self.name, _printable(line))
        if code != 0:
            last = next((_printable(x) for x in reversed(stderr.splitlines()) if x.strip()), "")
            raise ExecPluginError(f"credential plugin {self.name} failed: exit status {code}"
                                  + (f": {scrub(last)[:160]}" if last else ""))
        return self._parse(stdout)

    def _interactive(self, terminal: bool) -> bool:
        if self.interactive_mode == "Never":
            return False
        if self.interactive_mode == "Always" and not terminal:
            raise ExecPluginError(
                f"credential plugin {self.name} needs a terminal (interactiveMode: Always) "
                "and has none now; run gputui from a terminal, or log in first")
        return terminal

    def _spawn(self, env: dict[str, str], interactive: bool) -> tuple[str, str, int]:
        """(stdout, captured stderr, exit status); the terminal only when interactive.

        A non-interactive run is bounded: it gets :data:`RUN_TIMEOUT` seconds, its stdout
        may hold :data:`MAX_STDOUT` bytes (a token of 200 MB took ``check`` to 1 GB) and
        only the last :data:`KEEP_STDERR` bytes of stderr are kept; past a limit its whole
        process group (its own session: the children it started too) is ended, so a
        plugin's helper never outlives gputui or holds the pipe that ``check`` waits on.
        """
        try:
            process = subprocess.Popen(
                [self.command, *self.args], env=env, stdin=None if interactive else
                subprocess.DEVNULL, stdout=subprocess.PIPE,
                stderr=None if interactive else subprocess.PIPE, start_new_session=not interactive)
        except OSError as error:
            raise ExecPluginError(f"credential plugin {self.name} could not start: "
                                  f"{error.strerror or type(error).__name__}") from None
        out, err = _Drain(process.stdout, MAX_STDOUT), _Drain(process.stderr, KEEP_STDERR)
        try:
            overflowed = out.wait_or_overflow(None if interactive else RUN_TIMEOUT)
            if overflowed:
                raise ExecPluginError(f"credential plugin {self.name} printed more than "
                                      f"{MAX_STDOUT >> 20} MB: not a credential")
            if out.running():
                raise ExecPluginError(f"credential plugin {self.name} did not answer within "
                                      f"{RUN_TIMEOUT:.0f} s")
            code = process.wait(timeout=None if interactive else RUN_TIMEOUT)
        except subprocess.TimeoutExpired:
            raise ExecPluginError(f"credential plugin {self.name} did not exit within "
                                  f"{RUN_TIMEOUT:.0f} s") from None
        finally:
            if process.poll() is None or not interactive:
                _end_group(process, interactive)
            err.finish()
        return out.text(), err.text(), code

    def _parse(self, stdout: str) -> ExecCredential:
        """The ``status`` of the printed ExecCredential; errors never quote the output."""
        bad = f"credential plugin {self.name} printed no valid ExecCredential"
        try:
            document = json.loads(stdout)
        except ValueError:
            raise ExecPluginError(f"{bad} (not JSON)") from None
        if not isinstance(document, dict) or document.get("kind") != "ExecCredential":
            raise ExecPluginError(f"{bad} (kind is not ExecCredential)")
        if document.get("apiVersion") != self.api_version:
            raise ExecPluginError(f"{bad} (apiVersion does not match {self.api_version})")
        status = document.get("status")
        if not isinstance(status, dict):
            raise ExecPluginError(f"{bad} (no status)")
        token, cert, key = (status.get(k) or "" for k in
                            ("token", "clientCertificateData", "clientKeyData"))
        if not all(isinstance(v, str) for v in (token, cert, key)):
            raise ExecPluginError(f"{bad} (a credential field is not a string)")
        remember(token, key, *(line for line in key.splitlines() if "-----" not in line))
        if bool(cert) != bool(key):
            raise ExecPluginError(f"{bad} (clientCertificateData and clientKeyData go "
                                  "together)")
        if not token and not cert:
            raise ExecPluginError(f"{bad} (neither token nor clientCertificateData)")
        return ExecCredential(token, cert, key, _expiry(status.get("expirationTimestamp"),
                                                        bad))


#: the most a plugin may print on stdout (an ExecCredential is a few KB; certificates too)
MAX_STDOUT = 1 << 20
#: the tail of a plugin's stderr kept for the debug log and the error line
KEEP_STDERR = 64 << 10


class _Drain:
    """Reads one pipe in its own thread, keeping at most ``keep`` bytes (stdout: refused
    past it; stderr: its last bytes), so a plugin that prints without end costs nothing."""

    def __init__(self, pipe: IO[bytes] | None, keep: int) -> None:
        self.keep = keep
        self.data = bytearray()
        self.overflowed = threading.Event()
        self._pipe = pipe
        self._thread = threading.Thread(target=self._read, daemon=True,
                                        name="gputui-plugin-pipe")
        if pipe is not None:
            self._thread.start()

    def _read(self) -> None:
        assert self._pipe is not None
        with contextlib.suppress(OSError, ValueError):
            while chunk := os.read(self._pipe.fileno(), 65536):
                self.data += chunk
                if len(self.data) > 2 * self.keep:
                    self.overflowed.set()
                    del self.data[:len(self.data) - self.keep]

    def wait_or_overflow(self, timeout: float | None) -> bool:
        """Wait for the pipe's end (or ``timeout``); True when it printed past its limit."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while self._thread.is_alive() and not self.overflowed.is_set():
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                break
            self._thread.join(0.05 if left is None else min(0.05, left))
        return self.overflowed.is_set() and len(self.data) >= self.keep

    def running(self) -> bool:
        return self._thread.is_alive()

    def finish(self) -> None:
        """Wait briefly for the reader after the process group was ended."""
        if self._pipe is not None:
            self._thread.join(2.0)
            with contextlib.suppress(OSError):
                self._pipe.close()

    def text(self) -> str:
        return bytes(self.data[-self.keep:]).decode("utf-8", "replace")


#: seconds of a first run before "waiting for credential plugin" is said
WAIT_NOTICE = 1.0


def _say_waiting(name: str) -> None:
    """Tell a person at a terminal what gputui waits for (never into a pipe: ``check``'s
    stderr is one line)."""
    with contextlib.suppress(OSError, ValueError):
        if sys.stderr.isatty():
            sys.stderr.write(f"gputui: waiting for credential plugin {_printable(name)}…\n")
            sys.stderr.flush()


def _end_group(process: subprocess.Popen[bytes], interactive: bool) -> None:
    """End a run: its whole process group when it has its own session (non-interactive),
    else the process alone (an interactive plugin shares the terminal's group)."""
    try:
        if not interactive:
            os.killpg(process.pid, signal.SIGKILL)
        elif process.poll() is None:
            process.kill()
    except (ProcessLookupError, PermissionError):
        pass
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(timeout=5)


def plugin_from_config(config: Mapping[str, Any], base_dir: str,
                       cluster: Mapping[str, Any] | None) -> ExecPlugin:
    """Validate a kubeconfig ``exec`` entry as client-go does; one line when it is wrong."""
    command = config.get("command")
    if not isinstance(command, str) or not command:
        raise SourceError("exec credential plugin: command is missing")
    if os.sep in command and not os.path.isabs(command):  # client-go: relative to the file
        command = os.path.normpath(os.path.join(base_dir, command))
    version = config.get("apiVersion")
    if version not in API_VERSIONS:
        raise SourceError(f"exec credential plugin {command}: apiVersion must be one of "
                          f"{', '.join(API_VERSIONS)}")
    mode = config.get("interactiveMode") or ("" if version.endswith("/v1") else "IfAvailable")
    if mode not in INTERACTIVE_MODES:
        raise SourceError(f"exec credential plugin {command}: interactiveMode must be one of "
                          f"{', '.join(INTERACTIVE_MODES)}"
                          + (" (required for client.authentication.k8s.io/v1)"
                             if not mode else ""))
    env = tuple((str(e.get("name", "")), str(e.get("value", "")))
                for e in config.get("env") or () if isinstance(e, dict))
    args = tuple(str(a) for a in config.get("args") or ())
    return ExecPlugin(command, args, env, version, mode,
                      cluster if config.get("provideClusterInfo") else None)


def _expiry(value: Any, bad: str) -> float | None:
    if value in (None, ""):
        return None
    try:
        return datetime.fromisoformat(str(value)).timestamp()
    except ValueError:
        raise ExecPluginError(f"{bad} (expirationTimestamp is not RFC 3339)") from None


def _stdin_is_terminal() -> bool:
    try:
        return sys.stdin is not None and os.isatty(sys.stdin.fileno())
    except (OSError, ValueError):  # no stdin at all, or a replaced stream without a fd
        return False


def _printable(text: str) -> str:
    """A plugin's stderr line without control characters (it may print anything)."""
    return "".join(c if c.isprintable() else "?" for c in text.strip())


class ExecCredentials:
    """The cached credential of one plugin, refreshed by one background thread.

    :meth:`current` never blocks on the plugin: requests use the cached credential while
    the thread refreshes it ahead of its expiry. ``on_status`` is told a one-line failure
    (with when the next try is) or None when the plugin works again.
    """

    def __init__(self, plugin: ExecPlugin, clock: Callable[[], float] = time.time,
                 on_credential: Callable[[ExecCredential], None] | None = None):
        self.plugin = plugin
        self.clock = clock
        self.on_credential = on_credential
        self.on_status: Callable[[str | None], None] | None = None
        self.runs = 0
        self._credential: ExecCredential | None = None
        self._obtained = 0.0
        self._failure = ""
        self._retry_at = 0.0
        self._backoff = BACKOFF_FIRST
        self._run_lock = threading.Lock()  # never two runs at once, whoever asks
        self._wake = threading.Condition()
        self._forced = False
        self._stopped = False
        self._thread: threading.Thread | None = None

    def start(self, may_prompt: bool = True) -> None:
        """The first run, in the calling thread (the terminal is still the shell's), then
        the refresh thread. A failure is kept (and retried), not raised.

        A run that takes more than a second is said on a terminal's stderr (before the
        screen exists, a slow SSO plugin otherwise leaves a blank terminal).
        """
        notice = threading.Timer(WAIT_NOTICE, _say_waiting, (self.plugin.name,))
        notice.daemon = True
        notice.start()
        try:
            self._run_once(may_prompt)
        finally:
            notice.cancel()
        self._thread = threading.Thread(target=self._refresh_loop, daemon=True,
                                        name="gputui-credential-plugin")
        self._thread.start()

    def current(self) -> ExecCredential:
        """The cached credential; raises :class:`ExecPluginError` while there is none."""
        credential = self._credential
        if credential is None:
            raise ExecPluginError(self._failure or
                                  f"credential plugin {self.plugin.name} has not run yet")
        return credential

    def unauthorized(self) -> None:
        """The server refused the credential (401): refresh it now rather than at its
        expiry, at most once per :data:`FORCED_EVERY` seconds (a plugin whose tokens the
        server never takes must not be run for every refused request)."""
        with self._wake:
            if self._credential is not None and (
                    self.clock() - self._obtained >= FORCED_EVERY):
                self._forced = True
                self._wake.notify_all()

    def stop(self) -> None:
        with self._wake:
            self._stopped = True
            self._wake.notify_all()

    def _run_once(self, may_prompt: bool) -> None:
        with self._run_lock:
            self.runs += 1
            try:
                credential = self.plugin.run(may_prompt)
                if self.on_credential is not None:  # its certificate pair, before it is used
                    self.on_credential(credential)
            except ExecPluginError as error:
                self._failed(str(error))
                return
            except OSError as error:  # the pair could not be stored: this thread must go on
                self._failed(f"credential plugin {self.plugin.name}: cannot keep its "
                             f"certificate: {error.strerror or type(error).__name__}")
                return
            with self._wake:
                self._credential, self._obtained = credential, self.clock()
                self._forced = False
                self._failure, self._backoff = "", BACKOFF_FIRST
            self._tell(None)

    def _failed(self, message: str) -> None:
        with self._wake:
            self._failure = message
            self._retry_at = self.clock() + self._backoff
            wait = self._backoff
            self._backoff = min(BACKOFF_CAP, self._backoff * BACKOFF_FACTOR)
        log.debug("%s", message)
        self._tell(f"{message}; retrying in {wait:.0f} s")

    def _tell(self, message: str | None) -> None:
        listener = self.on_status
        if listener is not None:
            listener(message)

    def _due(self) -> float:
        """Epoch seconds of the next run: a retry after failure, or ahead of expiry."""
        if self._failure:
            return self._retry_at
        if self._forced:
            return 0.0
        credential = self._credential
        if credential is None or credential.expires is None:
            return float("inf")
        lifetime = max(0.0, credential.expires - self._obtained)
        return credential.expires - min(REFRESH_MARGIN_CAP, REFRESH_SHARE * lifetime)

    def _refresh_loop(self) -> None:
        while True:
            with self._wake:
                while not self._stopped and self.clock() < self._due():
                    self._wake.wait(min(5.0, max(0.05, self._due() - self.clock())))
                if self._stopped:
                    return
            self._run_once(may_prompt=False)
