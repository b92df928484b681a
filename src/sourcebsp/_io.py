"""File writing shared by every writer: atomic replacement."""
from __future__ import annotations

import errno
import os
from pathlib import Path
from typing import BinaryIO, Callable

__all__ = ["atomic_write", "temp_path"]

_TEMP_SUFFIX = ".sourcebsp-partial"


def temp_path(target: str | os.PathLike[str]) -> Path:
    """The one temporary file a save to ``target`` writes before renaming it into place.

    The name is fixed (hidden, beside the target), so a save interrupted by a
    kill leaves at most this one file, and the next save to the same target
    replaces it.
    """
    path = Path(target)
    return path.with_name(f".{path.name}{_TEMP_SUFFIX}")


def atomic_write(target: str | os.PathLike[str], *chunks: bytes | memoryview | Callable[[BinaryIO], None],
                 fsync: bool = True) -> Path:
    """Write ``chunks`` to a temporary file beside ``target``, then rename it over.

    Readers never see a half-written file, and a failure leaves ``target`` as it
    was.  The new file gets the mode a plain ``open()`` would give it (the
    kernel applies the umask; the process umask is never changed) or, when it
    replaces a file, that file's mode.  An ``OSError`` names ``target`` as
    given, never the temporary file.  A chunk may be a function that writes to
    the stream itself (e.g. an in-kernel copy); ``fsync=False`` skips flushing
    to the disk.
    """
    target = Path(target)
    temp = temp_path(target)
    try:
        mode = target.stat().st_mode & 0o7777 if target.exists() else None
        handle = _open_temp(temp)
        try:
            with os.fdopen(handle, "wb") as stream:
                if mode is not None:
                    os.chmod(stream.fileno() if os.chmod in os.supports_fd else temp, mode)
                for chunk in chunks:
                    if callable(chunk):
                        chunk(stream)
                    else:
                        stream.write(chunk)
                stream.flush()
                if fsync:
                    os.fsync(stream.fileno())
                if _LOCKS:
                    # Renamed while still locked, so no other save takes it for a stale file.
                    os.replace(temp, target)
            if not _LOCKS:
                os.replace(temp, target)
        except BaseException:
            try:
                os.unlink(temp)
            except OSError:
                pass
            raise
    except OSError as exc:
        if exc.filename is not None and exc.filename != str(target) and exc.errno is not None:
            raise type(exc)(exc.errno, exc.strerror, str(target)) from exc
        raise
    return target


try:  # POSIX: a save holds a lock on its temporary file; the lock dies with the process
    import fcntl

    _LOCKS = True
except ImportError:  # pragma: no cover - Windows
    _LOCKS = False

_CREATE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)


def _in_use(temp: Path) -> bool:
    """Whether another save is writing ``temp`` now (it holds the lock); False for a file
    left by an interrupted save."""
    if not _LOCKS:
        return False
    try:
        handle = os.open(temp, os.O_RDONLY)
    except FileNotFoundError:
        return False
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(handle)
    return False


def _open_temp(temp: Path) -> int:
    """Create ``temp`` (mode 0o666 less the umask, applied by the kernel) and lock it.

    A temporary file left by an interrupted save is replaced; one that another
    save is still writing makes this save fail, and that save stays intact.
    """
    for _ in range(3):
        try:
            handle = os.open(temp, _CREATE, 0o666)
        except FileExistsError:
            if _in_use(temp):
                raise BlockingIOError(errno.EWOULDBLOCK, "another save to this file is in progress",
                                      str(temp)) from None
            try:
                os.unlink(temp)  # left by an interrupted save: it holds nothing the user owns
            except FileNotFoundError:
                pass
            continue
        if _LOCKS:
            fcntl.flock(handle, fcntl.LOCK_EX)
        return handle
    raise FileExistsError(errno.EEXIST, "cannot create the temporary file", str(temp))
