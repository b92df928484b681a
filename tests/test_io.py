"""``sourcebsp._io.atomic_write``: modes, no umask change, no stale temp files, errors that name the target."""
from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

import pytest

from sourcebsp import _io
from sourcebsp._io import atomic_write, temp_path


def test_writes_and_replaces(tmp_path: Path) -> None:
    target = tmp_path / "a.bsp"
    assert atomic_write(target, b"one", b"two") == target
    assert target.read_bytes() == b"onetwo"
    atomic_write(str(target), b"three")
    assert target.read_bytes() == b"three"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.bsp"]


@pytest.mark.skipif(os.name != "posix", reason="POSIX modes")
@pytest.mark.parametrize("umask", [0o022, 0o077, 0o002])
def test_new_file_mode_follows_the_umask(tmp_path: Path, umask: int) -> None:
    old = os.umask(umask)
    try:
        atomic_write(tmp_path / "new.bin", b"x")
        with open(tmp_path / "plain.bin", "wb") as handle:
            handle.write(b"x")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "new.bin").stat().st_mode) == 0o666 & ~umask
    assert stat.S_IMODE((tmp_path / "new.bin").stat().st_mode) == stat.S_IMODE((tmp_path / "plain.bin").stat().st_mode)


@pytest.mark.skipif(os.name != "posix", reason="POSIX modes")
def test_replaced_file_keeps_its_mode(tmp_path: Path) -> None:
    target = tmp_path / "map.bsp"
    target.write_bytes(b"old")
    os.chmod(target, 0o640)
    atomic_write(target, b"new")
    assert stat.S_IMODE(target.stat().st_mode) == 0o640 and target.read_bytes() == b"new"


@pytest.mark.skipif(os.name != "posix", reason="POSIX umask")
def test_the_process_umask_is_never_changed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []
    real = os.umask
    monkeypatch.setattr(os, "umask", lambda mask: calls.append(mask) or real(mask))
    atomic_write(tmp_path / "x.bin", b"x")
    assert calls == []


def test_a_stale_temp_file_is_replaced_by_the_next_save(tmp_path: Path) -> None:
    target = tmp_path / "map.bsp"
    stale = temp_path(target)
    assert stale.parent == tmp_path and stale.name.startswith(".map.bsp")
    stale.write_bytes(b"left by a save that was killed")
    atomic_write(target, b"saved")
    assert target.read_bytes() == b"saved"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["map.bsp"]


@pytest.mark.skipif(os.name != "posix", reason="save locks are POSIX file locks")
def test_a_save_in_progress_is_never_taken_for_a_stale_one(tmp_path: Path) -> None:
    import fcntl

    target = tmp_path / "map.bsp"
    target.write_bytes(b"the user's map")
    busy = temp_path(target)
    busy.write_bytes(b"another save, half written")
    with open(busy, "rb") as other:  # another save holds its lock on the temp file
        fcntl.flock(other.fileno(), fcntl.LOCK_EX)
        with pytest.raises(BlockingIOError, match="in progress") as info:
            atomic_write(target, b"second save")
        assert info.value.filename == str(target)
        assert busy.read_bytes() == b"another save, half written" and target.read_bytes() == b"the user's map"
    # Once that save is gone (its lock with it), its file is stale and replaced.
    atomic_write(target, b"second save")
    assert target.read_bytes() == b"second save" and not busy.exists()


def test_a_failed_write_leaves_the_target_and_no_temp_file(tmp_path: Path) -> None:
    target = tmp_path / "map.bsp"
    target.write_bytes(b"original")

    # The second chunk cannot be written: the file is half-written when it fails.
    with pytest.raises(TypeError):
        atomic_write(target, b"partial", 12345)  # type: ignore[arg-type]
    assert target.read_bytes() == b"original"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["map.bsp"]


def test_errors_name_the_target_not_the_temp_file(tmp_path: Path) -> None:
    target = tmp_path / "missing-folder" / "out.bsp"
    with pytest.raises(FileNotFoundError) as info:
        atomic_write(target, b"x")
    assert info.value.filename == str(target)
    assert temp_path(target).name not in str(info.value)


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="permissions do not bind root")
def test_permission_error_names_the_target(tmp_path: Path) -> None:
    folder = tmp_path / "locked"
    folder.mkdir()
    os.chmod(folder, 0o500)
    try:
        with pytest.raises(PermissionError) as info:
            atomic_write(folder / "out.bsp", b"x")
        assert info.value.filename == str(folder / "out.bsp")
    finally:
        os.chmod(folder, 0o700)


# ---- fsync=False: an existing file is swapped with the new one ----------------------
_SWAPS = sys.platform.startswith("linux") and _io._renameat2() is not None


@pytest.mark.skipif(not _SWAPS, reason="renameat2(RENAME_EXCHANGE) is Linux-only")
def test_unsynced_save_over_a_file_swaps_without_a_rename(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "map.bsp"
    target.write_bytes(b"old map")
    os.chmod(target, 0o640)
    renames: list[object] = []
    real = os.replace
    monkeypatch.setattr(os, "replace", lambda *args: renames.append(args) or real(*args))
    atomic_write(target, b"new map", fsync=False)
    assert renames == []  # swapped in one step: ext4 starts no write-back on it
    assert target.read_bytes() == b"new map" and stat.S_IMODE(target.stat().st_mode) == 0o640
    assert sorted(p.name for p in tmp_path.iterdir()) == ["map.bsp"]  # the old file is gone
    # A durable save, or one to a new name, renames as before.
    atomic_write(target, b"synced", fsync=True)
    atomic_write(tmp_path / "new.bsp", b"fresh", fsync=False)
    assert len(renames) == 2 and target.read_bytes() == b"synced"


@pytest.mark.skipif(os.name != "posix", reason="symbolic links")
def test_unsynced_save_replaces_a_link_not_what_it_points_to(tmp_path: Path) -> None:
    real_file = tmp_path / "real.bsp"
    real_file.write_bytes(b"linked map")
    link = tmp_path / "link.bsp"
    link.symlink_to(real_file)
    atomic_write(link, b"saved", fsync=False)
    assert not link.is_symlink() and link.read_bytes() == b"saved"
    assert real_file.read_bytes() == b"linked map"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link.bsp", "real.bsp"]


def test_unsynced_save_onto_a_folder_fails_and_moves_nothing(tmp_path: Path) -> None:
    folder = tmp_path / "maps"
    folder.mkdir()
    (folder / "inside.bsp").write_bytes(b"kept")
    with pytest.raises(OSError) as info:
        atomic_write(folder, b"x", fsync=False)
    assert info.value.filename == str(folder)
    assert (folder / "inside.bsp").read_bytes() == b"kept"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["maps"]


def test_unsynced_save_renames_where_the_swap_fails(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A filesystem without RENAME_EXCHANGE (EINVAL), an old kernel (ENOSYS), another system.
    monkeypatch.setattr(_io, "_renameat2", lambda: (lambda *args: -1))
    target = tmp_path / "map.bsp"
    target.write_bytes(b"old")
    atomic_write(target, b"new", fsync=False)
    assert target.read_bytes() == b"new"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["map.bsp"]


@pytest.mark.skipif(not _SWAPS, reason="renameat2(RENAME_EXCHANGE) is Linux-only")
def test_another_save_during_a_swap_finds_it_in_progress(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Between the swap and the removal of the old file (now under the temporary name), a second
    save to the same target must not take that file for a stale one and delete the name."""
    target = tmp_path / "map.bsp"
    target.write_bytes(b"old map")
    real = _io._exchange
    swapped: list[bool] = []

    def exchange_then_another_save(temp: Path, into: Path) -> bool:
        done = real(temp, into)
        with pytest.raises(BlockingIOError):
            _io._open_temp(temp_path(into))  # a second save to the same target, just now
        swapped.append(done)
        return done

    monkeypatch.setattr(_io, "_exchange", exchange_then_another_save)
    atomic_write(target, b"new map", fsync=False)
    assert swapped == [True] and target.read_bytes() == b"new map"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["map.bsp"]


def test_a_size_hint_reserves_space_but_the_file_is_what_was_written(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "map.bsp"
    reserved: list[tuple[int, int]] = []
    real = _io._reserve
    monkeypatch.setattr(_io, "_reserve", lambda handle, size: (reserved.append((handle, size)), real(handle, size)))
    atomic_write(target, b"abc", b"defg", size=7)
    assert target.read_bytes() == b"abcdefg" and reserved == []  # a small file is not worth the system call
    large = bytes(range(256)) * 1024
    atomic_write(target, large[:1000], large[1000:], size=len(large))
    assert target.read_bytes() == large and [size for _, size in reserved] == [len(large)]
    # A hint larger than the data (a caller's mistake) adds nothing to the file.
    atomic_write(target, b"xyz", size=1 << 20)
    assert target.read_bytes() == b"xyz" and target.stat().st_size == 3 and len(reserved) == 2
    if hasattr(os.stat_result, "st_blocks"):
        assert target.stat().st_blocks * 512 < 1 << 16  # and keeps none of the space reserved past its end
    # A system that cannot reserve (fallocate fails, or there is none) writes all the same.
    monkeypatch.setattr(_io, "_fallocate", lambda: (lambda *args: -1))
    atomic_write(target, b"no reservation", size=1 << 20)
    assert target.read_bytes() == b"no reservation"
    monkeypatch.setattr(_io, "_fallocate", lambda: None)
    atomic_write(target, b"no fallocate", size=1 << 20)
    assert target.read_bytes() == b"no fallocate"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["map.bsp"]


def test_space_is_reserved_only_where_it_repays_loading_ctypes(monkeypatch: pytest.MonkeyPatch) -> None:
    # With ctypes loaded (numpy loads it), from 128 KiB; without (an entity edit), once the
    # process's writes repay its import (the startup tests check that a save then loads no ctypes).
    assert not _io._worth_reserving(_io._RESERVE_FROM - 1) and _io._worth_reserving(_io._RESERVE_FROM)
    monkeypatch.delitem(sys.modules, "ctypes")
    monkeypatch.setattr(_io, "_written_unreserved", 0)
    assert not _io._worth_reserving(_io._RESERVE_WITH_IMPORT_FROM - 1)
    monkeypatch.setattr(_io, "_written_unreserved", 0)
    assert _io._worth_reserving(_io._RESERVE_WITH_IMPORT_FROM)  # one large file
    monkeypatch.setattr(_io, "_written_unreserved", 0)
    third = _io._RESERVE_WITH_IMPORT_FROM // 3
    assert [_io._worth_reserving(third) for _ in range(4)] == [False, False, True, True]  # many saves
    assert not _io._worth_reserving(_io._RESERVE_FROM - 1)  # small files never


# ---- gathered writes -----------------------------------------------------------------
def _short_writes(monkeypatch: pytest.MonkeyPatch, limit: int) -> list[int]:
    """Make every write take at most ``limit`` bytes, as a pipe or a full disk may; the
    number of buffers each call was given is recorded."""
    calls: list[int] = []

    def writev(handle: int, buffers: list[memoryview]) -> int:
        calls.append(len(buffers))
        return os.write(handle, b"".join(bytes(b) for b in buffers)[:limit])

    monkeypatch.setattr(os, "writev", writev, raising=False)
    monkeypatch.setattr(os, "write", lambda handle, data, real=os.write: real(handle, bytes(data)[:limit]))
    return calls


def test_short_writes_are_resumed_where_they_stopped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import numpy as np

    words = np.arange(7, dtype="<u4")  # a buffer of 4-byte items: written as its 28 bytes
    chunks = [b"head", b"", memoryview(b"0123456789")[2:9], bytearray(b"xyz"), memoryview(words), b"tail"]
    expected = b"head" + b"2345678" + b"xyz" + words.tobytes() + b"tail"
    calls = _short_writes(monkeypatch, 5)
    atomic_write(tmp_path / "short.bin", *chunks, fsync=False)
    assert (tmp_path / "short.bin").read_bytes() == expected
    assert len(calls) == -(-len(expected) // 5)  # every call wrote all it could: nothing written twice
    if hasattr(os, "writev"):
        monkeypatch.delattr(os, "writev")  # a system without gathered writes (Windows)
        atomic_write(tmp_path / "one_by_one.bin", *chunks, fsync=False)
        assert (tmp_path / "one_by_one.bin").read_bytes() == expected


def test_buffers_go_out_in_gathered_writes_of_at_most_iov_max(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _short_writes(monkeypatch, 1 << 30)
    pieces = [bytes([i % 251]) * 3 for i in range(2500)]
    atomic_write(tmp_path / "many.bin", *pieces, fsync=False)
    assert (tmp_path / "many.bin").read_bytes() == b"".join(pieces)
    assert calls == [1024, 1024, 452]


def test_a_function_chunk_writes_between_its_neighbours(tmp_path: Path) -> None:
    def middle(handle: int) -> None:
        os.write(handle, b"-from the function-")

    atomic_write(tmp_path / "mixed.bin", b"one", b"two", middle, b"three", fsync=False)
    assert (tmp_path / "mixed.bin").read_bytes() == b"onetwo-from the function-three"
