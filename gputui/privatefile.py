"""Opening a file only its owner may read, without following a planted symlink.

The audit log and the debug log name nodes, workloads and who changed them; the debug log
may quote a request. Both are appended to, by path, in directories that may be shared
(``/tmp``, a state directory on NFS). So each open follows the same rules, and refuses,
with one sentence saying why, when any rule does not hold:

* the file is opened with ``O_NOFOLLOW``: a symlink planted at the path is refused, never
  followed to a file of the attacker's choosing;
* ``O_NONBLOCK`` while opening, so a FIFO planted at the path cannot hang gputui;
* after opening, ``fstat`` of what was opened (not of the path, which may have changed):
  a regular file, owned by the effective uid, with no other hard link;
* mode 0600 (``fchmod``) before the first byte is written, whatever mode it had;
* for the audit log (``private_dir=True``), its directory is opened with ``O_NOFOLLOW`` as
  well, must be owned by us and is made 0700; a symlinked ancestor owned by a third user is
  refused (someone else decides where the log goes). The debug log may live in a shared
  directory (``/tmp``): the file rules alone protect it there.

No gputui import here: the actions and the CLI's log setup share it.
"""

from __future__ import annotations

import errno
import fcntl
import os
import stat
from pathlib import Path

FILE_MODE = 0o600
DIR_MODE = 0o700
_FILE_FLAGS = (os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC
               | os.O_NONBLOCK)
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC


class PrivateFileError(Exception):
    """The file cannot be used safely; ``str()`` is one sentence naming the path and why."""


def open_private(path: str | Path, what: str, *, private_dir: bool = False) -> int:
    """An fd open for appending to ``path``, checked as the module docstring says.

    Args:
        path: the file (``~`` is expanded); its directory is created 0700 when missing.
        what: how the sentence names it (``the audit log``).
        private_dir: also require the directory to be ours and make it 0700.

    Raises:
        PrivateFileError: any rule broken or any OS error, as one sentence.
    """
    target = Path(path).expanduser().absolute()
    try:
        directory = _open_dir(target.parent, what, private_dir)
    except OSError as error:
        raise PrivateFileError(f"cannot write {what} {target} (its directory: "
                               f"{_why(error)})") from None
    try:
        return _open_file(target, directory, what)
    finally:
        os.close(directory)


def _open_dir(directory: Path, what: str, private_dir: bool) -> int:
    """The directory as an fd (created 0700 when missing), checked when ``private_dir``."""
    if private_dir:  # before anything is created down a path someone else decides
        _refuse_foreign_symlinks(directory, what)
    if not directory.exists():
        directory.mkdir(parents=True, mode=DIR_MODE, exist_ok=True)
    try:
        fd = os.open(directory, _DIR_FLAGS | (os.O_NOFOLLOW if private_dir else 0))
    except OSError as error:
        # Linux answers ENOTDIR, not ELOOP, for O_DIRECTORY | O_NOFOLLOW on a symlink
        if error.errno in (errno.ELOOP, errno.ENOTDIR) and directory.is_symlink():
            raise PrivateFileError(f"the directory of {what}, {directory}, is a symbolic "
                                   "link; gputui does not write through one") from None
        raise
    if private_dir:
        try:
            info = os.fstat(fd)
            if info.st_uid != os.geteuid():
                raise PrivateFileError(
                    f"the directory of {what}, {directory}, is owned by uid {info.st_uid}, "
                    f"not by you (uid {os.geteuid()})")
            if stat.S_IMODE(info.st_mode) != DIR_MODE:
                os.fchmod(fd, DIR_MODE)
        except BaseException:
            os.close(fd)
            raise
    return fd


def _refuse_foreign_symlinks(directory: Path, what: str) -> None:
    """A symlink among the directory's ancestors owned by neither us nor root is refused."""
    for ancestor in reversed(directory.parents):
        try:
            info = os.lstat(ancestor)
        except OSError:
            return  # missing from here down: created by us below (or racing: the
            # O_NOFOLLOW open decides)
        if stat.S_ISLNK(info.st_mode) and info.st_uid not in (0, os.geteuid()):
            raise PrivateFileError(
                f"the path of {what} goes through {ancestor}, a symbolic link owned by uid "
                f"{info.st_uid}; gputui does not write where another user decides")


def _open_file(target: Path, directory: int, what: str) -> int:
    """The file itself, relative to the checked directory fd; checked before use."""
    try:
        fd = os.open(target.name, _FILE_FLAGS, FILE_MODE, dir_fd=directory)
    except OSError as error:
        if error.errno == errno.ELOOP:
            raise PrivateFileError(f"{what} {target} is a symbolic link; gputui does not "
                                   "write through one") from None
        if error.errno == errno.EISDIR:
            raise PrivateFileError(f"{what} {target} is a directory, not a file") from None
        if error.errno == errno.ENXIO:
            raise PrivateFileError(f"{what} {target} is not a regular file") from None
        raise PrivateFileError(f"cannot write {what} {target}: {_why(error)}") from None
    try:
        _check_opened(fd, target, what)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _check_opened(fd: int, target: Path, what: str) -> None:
    """Regular, ours, one link, mode 0600 (forced), blocking writes again."""
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise PrivateFileError(f"{what} {target} is not a regular file")
        if info.st_uid != os.geteuid():
            raise PrivateFileError(f"{what} {target} is owned by uid {info.st_uid}, not by "
                                   f"you (uid {os.geteuid()})")
        if info.st_nlink > 1:
            raise PrivateFileError(f"{what} {target} has {info.st_nlink} hard links; gputui "
                                   "writes only to a file with one")
        if stat.S_IMODE(info.st_mode) != FILE_MODE:
            os.fchmod(fd, FILE_MODE)
        flags = fcntl.fcntl(fd, fcntl.F_GETFL)
        fcntl.fcntl(fd, fcntl.F_SETFL, flags & ~os.O_NONBLOCK)
    except OSError as error:
        raise PrivateFileError(f"cannot secure {what} {target}: {_why(error)}") from None


def write_all(fd: int, data: bytes) -> None:
    """Write every byte (a short write is retried; an error raises OSError)."""
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def sync_directory(path: str | Path) -> None:
    """fsync a directory so a file just created in it survives a crash (best effort)."""
    try:
        fd = os.open(Path(path).expanduser().absolute(), _DIR_FLAGS)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass  # some filesystems refuse fsync on a directory; the file's own fsync stands
    finally:
        os.close(fd)


def _why(error: OSError) -> str:
    return error.strerror or str(error)
