"""Client keys and certificates as files OpenSSL can open, that never outlive gputui.

Python's ``ssl`` loads a client certificate and key only from a path, so the kubeconfig's
``client-key-data`` (or an exec plugin's ``clientKeyData``) has to become a file. The
``kubernetes`` client writes it to ``$TMPDIR`` and deletes it at ``atexit``, which a SIGTERM
skips: the key stays on disk. Here:

* on Linux the "file" is a ``memfd`` (anonymous memory) opened as ``/proc/self/fd/N``:
  nothing is written to any filesystem, and the kernel frees it however the process ends,
  SIGKILL included;
* elsewhere, a ``0600`` file in a private ``0700`` directory, removed by :func:`remove_all`,
  a clean-up of :mod:`gputui.shutdown`: it runs at exit, at the TUI's fast exit after
  SIGTERM/SIGHUP, and before a signal ends ``gputui check`` (:func:`remove_on_signals`).

:func:`rewrite` replaces a file's content in place, for exec plugins whose certificates
expire: new connections then load the new pair from the same path.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import tempfile
import threading

from gputui.shutdown import die_by_signal, handle_signals, on_exit

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
        hooked, _hooked = _hooked, True
    if not hooked:
        on_exit(remove_all)


def remove_on_signals(signals: tuple[signal.Signals, ...] = (signal.SIGTERM, signal.SIGHUP)
                      ) -> None:
    """On each of ``signals``: remove the key files (every clean-up), then die of the
    signal as its default action would, so the exit status still says which one; a signal
    ignored before (``nohup``) stays ignored. Call from the main thread (``gputui check``
    does, before it loads the kubeconfig)."""
    handle_signals(die_by_signal, [sig for sig in signals
                                   if signal.getsignal(sig) != signal.SIG_IGN])
