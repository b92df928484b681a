"""File writing shared by every writer: atomic replacement."""
from __future__ import annotations

import errno
import functools
import os
import stat
import sys
from pathlib import Path
from typing import Callable, Union

Buffer = Union[bytes, bytearray, memoryview]

__all__ = ["atomic_write", "temp_path", "write_all"]

_TEMP_SUFFIX = ".sourcebsp-partial"


def temp_path(target: str | os.PathLike[str]) -> Path:
    """The one temporary file a save to ``target`` writes before renaming it into place.

    The name is fixed (hidden, beside the target), so a save interrupted by a
    kill leaves at most this one file, and the next save to the same target
    replaces it.
    """
    return Path(_temp_name(os.fspath(target)))


def _temp_name(target: str) -> str:
    folder, name = os.path.split(target)
    return os.path.join(folder, f".{name}{_TEMP_SUFFIX}")


def atomic_write(target: str | os.PathLike[str], *chunks: "Buffer | Callable[[int], None]",
                 fsync: bool = True, size: int | None = None) -> Path:
    """Write ``chunks`` to a temporary file beside ``target``, then rename it over.

    Readers never see a half-written file, and a failure leaves ``target`` as it
    was.  The new file gets the mode a plain ``open()`` would give it (the
    kernel applies the umask; the process umask is never changed) or, when it
    replaces a file, that file's mode.  An ``OSError`` names ``target`` as
    given, never the temporary file.  A chunk is a bytes-like object or a
    function that writes to the file's descriptor itself (e.g. an in-kernel
    copy); neighbouring bytes-like chunks go out in one gathered write.
    ``size``, the number of bytes the chunks make when the caller knows it,
    lets the filesystem reserve the space of a large file in one step (Linux
    ``fallocate``): a third faster on ext4 from a few hundred kilobytes.

    ``fsync=False`` skips flushing to the disk, for scratch files: an existing
    file is then swapped with the new one where the system can (Linux), so
    that ext4 does not start writing the new data back as it does on a
    rename over a file.  After a power cut such a file may be empty.
    """
    target = os.fspath(target)  # plain strings: pathlib would cost more than a small save's writes
    temp = _temp_name(target)
    try:
        mode = _mode_of(target)
        handle = _open_temp(temp)
        try:
            try:
                if mode is not None:
                    os.chmod(handle if os.chmod in os.supports_fd else temp, mode)
                reserved = size if size is not None and _worth_reserving(size) else 0
                if reserved:
                    _reserve(handle, reserved)
                _write_chunks(handle, chunks)
                if reserved:
                    written = os.fstat(handle).st_size
                    if written < reserved:
                        os.ftruncate(handle, written)  # frees what was reserved past the end
                if fsync:
                    os.fsync(handle)
                if _LOCKS:
                    # Renamed while still locked, so no other save takes it for a stale file.
                    _into_place(temp, target, swap=mode is not None and not fsync)
            finally:
                os.close(handle)
            if not _LOCKS:
                _into_place(temp, target, swap=mode is not None and not fsync)
        except BaseException:
            try:
                os.unlink(temp)
            except OSError:
                pass
            raise
    except OSError as exc:
        if exc.filename is not None and exc.filename != target and exc.errno is not None:
            raise type(exc)(exc.errno, exc.strerror, target) from exc
        raise
    return Path(target)


# Below this size a reservation costs more than it saves (measured on ext4; the figures:
# benchmarks/README.md, "Figures behind the code").
_RESERVE_FROM = 128 * 1024
# Reaching fallocate through ctypes costs a process that has not loaded ctypes (no numpy:
# an entity edit) more than the reservation saves on smaller writes.
_RESERVE_WITH_IMPORT_FROM = 24 << 20
_written_unreserved = 0  # bytes this process wrote without reserving them, ctypes not loaded


def _worth_reserving(size: int) -> bool:
    """Whether to reserve ``size`` bytes before writing them: from 128 KiB where ctypes is
    loaded; where it is not, once this process's writes (this one too) reach 24 MB, so that
    one small save does not pay for the import and many saves do not go without."""
    global _written_unreserved
    if size < _RESERVE_FROM:
        return False
    if "ctypes" in sys.modules:
        return True
    _written_unreserved += size
    return _written_unreserved >= _RESERVE_WITH_IMPORT_FROM


_NO_SUCH_FILE = frozenset({errno.ENOENT, errno.ENOTDIR, errno.ELOOP})


def _mode_of(path: str) -> int | None:
    """The permission bits of the file ``path`` names, or None when it names none."""
    try:
        return os.stat(path).st_mode & 0o7777
    except OSError as exc:
        if exc.errno in _NO_SUCH_FILE:
            return None
        raise


def _write_chunks(handle: int, chunks: "tuple[Buffer | Callable[[int], None], ...]") -> None:
    """Write ``chunks`` in order at the file's position: each run of bytes-like chunks
    in one gathered write, each function given the descriptor."""
    run: list[Buffer] = []
    for chunk in chunks:
        if callable(chunk):
            write_all(handle, run)
            run = []
            chunk(handle)
        else:
            run.append(chunk)
    write_all(handle, run)


_IOV_MAX = 1024  # POSIX's minimum is 16, Linux and the BSDs take 1024 buffers in one writev


def write_all(handle: int, buffers: "list[Buffer]") -> None:
    """Write every byte of ``buffers`` at the descriptor's position, with as few system calls
    as the system allows (``writev``; one ``write`` each where there is none)."""
    pending = [view for view in map(_byte_view, buffers) if len(view)]
    writev = getattr(os, "writev", None)
    first = 0
    while first < len(pending):
        batch = pending[first : first + _IOV_MAX]
        count = writev(handle, batch) if writev is not None else os.write(handle, batch[0])
        # Skip what went out; a short write leaves the rest of a buffer for the next call.
        while count and count >= len(pending[first]):
            count -= len(pending[first])
            first += 1
        if count:
            pending[first] = pending[first][count:]


def _byte_view(buffer: Buffer) -> memoryview:
    view = memoryview(buffer)  # a TypeError for what is not bytes-like, before anything is written
    return view if view.format == "B" and view.ndim == 1 else view.cast("B")


def _into_place(temp: str, target: str, *, swap: bool) -> None:
    """Rename ``temp`` to ``target``; with ``swap``, exchange the two names instead when
    the system can, then remove the old file (now under the temporary name)."""
    if swap and _LOCKS and sys.platform.startswith("linux"):
        old = _locked_file(target)
        if old is not None:
            try:
                if _exchange(temp, target):
                    # The old file is still locked here: another save meanwhile takes the
                    # temporary name for one in progress, never for a stale file to delete.
                    try:
                        os.unlink(temp)
                    except OSError:
                        pass  # a stale temporary file: the next save to this target removes it
                    return
            finally:
                os.close(old)
    os.replace(temp, target)


def _locked_file(target: str) -> int | None:
    """An open, locked handle on the file ``target`` names (a file or a link to one), or None
    when it is something else or cannot be opened or locked (a plain rename then says what is wrong)."""
    try:
        return _try_lock(target) if stat.S_ISREG(os.stat(target).st_mode) else None
    except OSError:
        return None


_AT_FDCWD = -100
_RENAME_EXCHANGE = 2  # linux/fs.h


def _exchange(temp: str, target: str) -> bool:
    """Swap ``temp`` and ``target`` in one step (``renameat2(RENAME_EXCHANGE)``, Linux
    3.15+): True when done; False where the C library, kernel or filesystem cannot."""
    renameat2 = _renameat2()
    # Any failure (EINVAL: a filesystem without exchange; ENOSYS: an old kernel) falls back.
    return renameat2 is not None and renameat2(
        _AT_FDCWD, os.fsencode(temp), _AT_FDCWD, os.fsencode(target), _RENAME_EXCHANGE) == 0


_FALLOC_FL_KEEP_SIZE = 1  # linux/falloc.h: reserve the blocks, leave the file's length to the writes


def _reserve(handle: int, size: int) -> None:
    """Reserve ``size`` bytes for the file being written, where the system can (Linux
    ``fallocate``).  Not ``os.posix_fallocate``: where a filesystem cannot, the C
    library would write zeros to every block instead; here nothing happens."""
    fallocate = _fallocate() if sys.platform.startswith("linux") else None
    if fallocate is not None:
        fallocate(handle, _FALLOC_FL_KEEP_SIZE, 0, size)  # a failure (EOPNOTSUPP, ENOSPC) is the writes' to report


def _renameat2() -> "Callable[..., int] | None":
    """The C library's ``renameat2``, or None (glibc < 2.28, another C library)."""
    return _libc_function("renameat2", ("c_int", "c_char_p", "c_int", "c_char_p", "c_uint"))


def _fallocate() -> "Callable[..., int] | None":
    """The C library's ``fallocate`` (Linux), or None."""
    return _libc_function("fallocate", ("c_int", "c_int", "c_int64", "c_int64"))


@functools.lru_cache(maxsize=None)
def _libc_function(name: str, argtypes: "tuple[str, ...]") -> "Callable[..., int] | None":
    """A function of the C library this process runs with, returning a C int; None where it has
    none.  ``argtypes`` names the ``ctypes`` type of each argument."""
    import ctypes  # a seam: a save that neither swaps files nor reserves space (_worth_reserving) loads none

    try:
        func: "ctypes._NamedFuncPointer" = getattr(ctypes.CDLL(None, use_errno=True), name)
    except (OSError, AttributeError):
        return None
    func.argtypes = [getattr(ctypes, argtype) for argtype in argtypes]
    func.restype = ctypes.c_int
    return func


try:  # POSIX: a save holds a lock on its temporary file; the lock dies with the process
    import fcntl

    _LOCKS = True
except ImportError:  # pragma: no cover - Windows
    _LOCKS = False

_CREATE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)


def _in_use(temp: str) -> bool:
    """Whether another save is writing ``temp`` now (it holds the lock); False for a file
    left by an interrupted save."""
    if not _LOCKS:
        return False
    try:
        handle = _try_lock(temp)
    except FileNotFoundError:
        return False
    if handle is None:
        return True
    os.close(handle)
    return False


def _try_lock(path: str) -> int | None:
    """An open handle on ``path`` holding its exclusive lock; None when another holds it."""
    handle = os.open(path, os.O_RDONLY)
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(handle)
        return None
    except BaseException:
        os.close(handle)
        raise
    return handle


def _open_temp(temp: str) -> int:
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
