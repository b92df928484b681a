"""File writing shared by every writer: atomic replacement."""
from __future__ import annotations

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
        try:
            handle = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o666)
        except FileExistsError:
            # Left by an interrupted save to this target: it holds nothing the user owns.
            os.unlink(temp)
            handle = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o666)
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
