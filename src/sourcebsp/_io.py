"""File writing shared by every writer: atomic replacement."""
from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import BinaryIO, Callable


def atomic_write(target: Path, *chunks: bytes | memoryview | Callable[[BinaryIO], None],
                 fsync: bool = True) -> Path:
    """Write ``chunks`` to a temporary file beside ``target``, then rename it over.

    Readers never see a half-written file, and a failure leaves ``target`` as it was.
    A chunk may be a function that writes to the stream itself (e.g. an
    in-kernel copy); ``fsync=False`` skips flushing to the disk.
    """
    handle, temp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent or ".")
    try:
        # mkstemp makes the file private (0600): give it the mode a plain open() would,
        # or the mode of the file it replaces.
        if target.exists():
            mode = target.stat().st_mode & 0o7777
        else:
            umask = os.umask(0)
            os.umask(umask)
            mode = 0o666 & ~umask
        os.chmod(temp, mode)
        with os.fdopen(handle, "wb") as stream:
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
        if os.path.exists(temp):
            os.unlink(temp)
        raise
    return target
