"""Client keys and certificates as files OpenSSL can open, that never outlive gputui.

Python's ``ssl`` loads a client certificate and key only from a path, so the kubeconfig's
``client-key-data`` (or an exec plugin's ``clientKeyData``) has to become a file. The
``kubernetes`` client writes it to ``$TMPDIR`` and deletes it at ``atexit``, which a SIGTERM
skips: the key stays on disk. Here:

* on Linux the "file" is a ``memfd`` (anonymous memory) opened as ``/proc/self/fd/N``:
  nothing is written to any filesystem, and the kernel frees it however the process ends,
  SIGKILL included;
* elsewhere, a ``0600`` file in a private ``0700`` directory, removed by an ``atexit`` hook
  and by :func:`remove_all`, which the signal paths call (:func:`remove_on_signals` installs
  them for ``gputui check``; the TUI's own SIGTERM/SIGHUP handling ends in ``atexit``).

:func:`rewrite` replaces a file's content in place, for exec plugins whose certificates
expire: new connections then load the new pair from the same path.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import shutil
import signal
import tempfile
import threading
from collections.abc import Callable
from types import FrameType
from typing import Any

_lock = threading.Lock()
_memfds: dict[str, int] = {}  # path -> open memfd
_private_dir: str | None = None
_hooked = False
#: tests force the portable fallback; production uses memfd wherever the kernel has it
use_memfd = hasattr(os, "memfd_create") and os.path.isdir("/proc/self/fd")


def materialize(data: bytes, name: str) -> str:
    """A path whose content is ``data``, readable by this process only; see the module doc."""
    _hook_atexit()
    if use_memfd:
        fd = os.memfd_create(f"gputui-{name}", os.MFD_CLOEXEC)
        path = f"/proc/self/fd/{fd}"
        with _lock:
            _memfds[path] = fd
        rewrite(path, data)
        return path
    directory = _directory()
    fd, path = tempfile.mkstemp(prefix=f"{name}-", dir=directory)  # mode 0600
    os.close(fd)
    rewrite(path, data)
    return path


def rewrite(path: str, data: bytes) -> None:
    """Replace the content of a :func:`materialize` path (a refreshed certificate or key)."""
    with _lock:
        memfd = _memfds.get(path)
    if memfd is not None:
        os.ftruncate(memfd, 0)
        os.pwrite(memfd, data, 0)
        return
    fd = os.open(path, os.O_WRONLY | os.O_TRUNC | os.O_NOFOLLOW)
    try:
        os.write(fd, data)
    finally:
        os.close(fd)


def remove_all() -> None:
    """Remove every key file now (atexit, SIGTERM, SIGHUP); safe to call more than once."""
    global _private_dir
    with _lock:
        fds = list(_memfds.values())
        _memfds.clear()
        directory, _private_dir = _private_dir, None
    for fd in fds:
        with contextlib.suppress(OSError):
            os.close(fd)
    if directory is not None:
        shutil.rmtree(directory, ignore_errors=True)


def _directory() -> str:
    """The private ``0700`` directory of the fallback, made on first use."""
    global _private_dir
    with _lock:
        if _private_dir is None:
            _private_dir = tempfile.mkdtemp(prefix="gputui-keys-")  # mode 0700
        return _private_dir


def _hook_atexit() -> None:
    global _hooked
    with _lock:
        if not _hooked:
            atexit.register(remove_all)
            _hooked = True


def remove_on_signals(signals: tuple[signal.Signals, ...] = (signal.SIGTERM, signal.SIGHUP)
                      ) -> None:
    """On each of ``signals``: remove the key files, then do what was to be done before.

    A previous Python handler is called after the cleanup; the default action (terminate)
    is re-raised with the default handler so the exit status still says which signal.
    Call from the main thread (``gputui check`` does, before it loads the kubeconfig).
    """
    for sig in signals:
        previous = signal.getsignal(sig)
        signal.signal(sig, _handler(sig, previous))


def _handler(sig: signal.Signals, previous: Any) -> Callable[[int, FrameType | None], None]:
    def handle(signum: int, frame: FrameType | None) -> None:
        remove_all()
        if callable(previous):
            previous(signum, frame)
            return
        if previous == signal.SIG_IGN:
            return
        signal.signal(sig, signal.SIG_DFL)
        os.kill(os.getpid(), sig)

    return handle
