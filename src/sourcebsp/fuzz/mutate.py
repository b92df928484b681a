"""A mutator that knows the BSP layout, and the seed maps it starts from.

A mutation is a small, replayable operation (:class:`Mutation`) on the bytes
of a map: a field of the lump directory, a lump version, one integer or float
field of one record of a lump (through the lump's own numpy dtype, so counts
and indices are hit where they live), the ``lzma_header_t`` of a compressed
lump, a field of a zip record of the pakfile, the entity text, the game lump
directory, or plain bytes.  Because each mutation is a value, an input is a
seed name plus a list of mutations, and minimising a crash is dropping
mutations while the crash stays (:func:`minimise`).

Seeds (:func:`seeds`) are all built from the package's example map, so every
input the fuzzer finds is the project's own: the map as written, the map with
a pakfile of stored, deflated and LZMA entries, and the same LZMA-compressed
lump by lump; and the room in every branch's layout (Tactical Intervention's
encrypted: its mutations are made to the plain map, then encrypted again).
"""
from __future__ import annotations

import io
import random
import re
import struct
import zipfile
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Callable, NamedTuple

import numpy as np

from .. import BspFile
from ..codecs import respawn as respawn_codec
from ..codecs.pakfile import Pakfile
from ..detection import detect_variant
from ..encryption import find_key, xor
from ..examples import example_map_bytes
from ..examples.branches import example_branch_bytes, example_branches
from ..header import HEADER_SIZE, Header
from ..lump_ids import NUM_LUMPS, LumpId
from ..respawn import RespawnBsp
from ..variants import VARIANTS

__all__ = ["Mutation", "seeds", "apply", "random_mutations", "minimise", "describe"]

_LUMP_T = 16  # fileofs, filelen, version, fourCC


class _Layout(NamedTuple):
    """Where a seed's directory is: its offset, its number of lump_t, the header's size."""

    directory: int
    lumps: int
    header: int


_SOURCE = _Layout(8, NUM_LUMPS, HEADER_SIZE)  # ident and version come first
_RESPAWN = _Layout(16, respawn_codec.NUM_LUMPS, respawn_codec.HEADER_SIZE)  # and mapRevision, 127


def _layout(data: bytes | bytearray) -> _Layout:
    return _RESPAWN if bytes(data[:4]) == respawn_codec.IDENT else _SOURCE
_INTERESTING = (0, 1, 2, 3, 4, -1, -2, 7, 8, 15, 16, 31, 32, 63, 64, 127, 128, 255, 256, 1023, 1024, 4095,
                4096, 32767, 32768, 65535, 65536, 1 << 20, 1 << 24, (1 << 28) + 7, (1 << 31) - 1, -(1 << 31),
                (1 << 30), 100_000)
_FLOATS = (float("nan"), float("inf"), float("-inf"), 0.0, -0.0, 1e30, -1e30, 1e-40, 3.4e38, 65536.0, "snan")
# Signalling NaNs: converting one raises the "invalid" flag (Python floats cannot carry them).
_SNAN = {4: (0x7F800001).to_bytes(4, "little"), 8: (0x7FF0000000000001).to_bytes(8, "little")}


@dataclass(frozen=True)
class Mutation:
    """One replayable change: ``kind`` says what, the rest where and to what."""

    kind: str
    a: int = 0
    b: int = 0
    c: int = 0
    value: Any = 0
    text: bytes = b""

    def __str__(self) -> str:
        return describe(self)


def describe(m: Mutation) -> str:
    names = {i.value: i.name for i in LumpId}
    lump = names.get(m.a, str(m.a))
    if m.kind == "dir":
        return f"directory {lump}.{('fileofs', 'filelen', 'version', 'fourCC')[m.b]} = {m.value}"
    if m.kind == "record_int":
        return f"{lump} record {m.b} field #{m.c} = {m.value}"
    if m.kind == "record_float":
        return f"{lump} record {m.b} float field #{m.c} = {m.value}"
    if m.kind.startswith("column"):
        return f"{lump} every record's {'float ' if 'float' in m.kind else ''}field #{m.c} = {m.value}"
    if m.kind == "share":
        return f"directory {lump} points at {names.get(m.b, m.b)}'s data"
    return f"{m.kind}({m.a}, {m.b}, {m.c}, {m.value!r}, {m.text[:20]!r})"


# ---- seeds --------------------------------------------------------------------------
def _pakfile_zip() -> bytes:
    """A small zip with a stored, a deflated and an LZMA entry, and a folder entry."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        archive.writestr(zipfile.ZipInfo("materials/maps/example/c0_0_0.vmt"), b'"patch" { "include" "x" }\n' * 4)
        archive.writestr("scripts/soundscapes_example.txt", b"soundscape\n" * 200, zipfile.ZIP_DEFLATED)
        archive.writestr("sound/example/zero.raw", bytes(4096), zipfile.ZIP_LZMA)
        archive.writestr("materials/maps/example/", b"")
    return out.getvalue()


@lru_cache(maxsize=None)
def seeds() -> dict[str, bytes]:
    """Seed maps by name, all derived from the package's example map (and its other branches' layouts)."""
    plain = example_map_bytes()
    bsp = BspFile.from_bytes(plain)
    bsp.set_lump(LumpId.PAKFILE, Pakfile(_pakfile_zip()))
    packed = bsp.to_bytes()
    compressed = BspFile.from_bytes(packed).to_bytes(compression="lzma")
    found = {"example": plain, "example_pak": packed, "example_lzma": compressed}
    # The room in every other branch's layout: their structs, byte orders, lump_t orders, versions.
    for name in example_branches():
        if name != "orange_box":
            found[f"example_{name}"] = example_branch_bytes(name)
        for version in sorted(VARIANTS[name].version_layouts):  # its other BSP versions' layouts (HL2 beta 17)
            found[f"example_{name}_{version}"] = example_branch_bytes(name, bsp_version=version)
    # Respawn's rBSP rooms (Titanfall 2's with a static prop), and one with a pakfile.
    for name, variant in VARIANTS.items():
        if variant.container == "respawn":
            found[f"example_{name}"] = example_branch_bytes(name)
    found["example_titanfall2_pak"] = _respawn_with_pakfile(found["example_titanfall2"])
    return found


def _respawn_with_pakfile(seed: bytes) -> bytes:
    bsp = RespawnBsp(seed)
    bsp.set_lump(respawn_codec.PAKFILE, _pakfile_zip())
    return bsp.to_bytes()


# ---- applying ----------------------------------------------------------------------
def _entry(data: bytearray, lump: int) -> tuple[int, int, int, int]:
    return struct.unpack_from("<iiii", data, _layout(data).directory + _LUMP_T * lump)


def _set_entry(data: bytearray, lump: int, field_index: int, value: int) -> None:
    struct.pack_into("<i", data, _layout(data).directory + _LUMP_T * lump + 4 * field_index, _i32(value))


def _i32(value: int) -> int:
    return (int(value) + (1 << 31)) % (1 << 32) - (1 << 31)


def _lump_slice(data: bytearray, lump: int) -> tuple[int, int]:
    ofs, length, _, _ = _entry(data, lump)
    if ofs < _layout(data).header or length <= 0 or ofs + length > len(data):
        return 0, 0
    return ofs, length


def _record_dtype_of(data: bytearray, lump: int) -> np.dtype | None:
    """The record of ``lump`` in the seed's own layout (Source's by the default branch, rBSP's by its version)."""
    if _layout(data) is _RESPAWN:
        dtype = respawn_codec.record_dtypes(struct.unpack_from("<i", data, 4)[0]).get(lump)
        return dtype if dtype is not None and dtype.names else None
    return _record_dtype(lump, _entry(data, lump)[2])


@lru_cache(maxsize=None)
def _record_dtype(lump: int, version: int) -> np.dtype | None:
    codec = detect_variant(Header()).codec(lump, version)
    dtype = getattr(codec, "dtype", None)
    return dtype if isinstance(dtype, np.dtype) and dtype.names else None


def _scalar_fields(dtype: np.dtype, kind: str, prefix: str = "") -> list[tuple[int, np.dtype, str]]:
    """(byte offset, scalar dtype, field name) of every integer (``"i"``) or float (``"f"``) element."""
    out: list[tuple[int, np.dtype, str]] = []
    for name in dtype.names or ():
        sub, offset = dtype.fields[name][:2]  # type: ignore[index]
        base, shape = sub.base, sub.shape
        if base.names:
            out += [(offset + o, d, n) for o, d, n in _scalar_fields(base, kind, prefix + name + ".")]
            continue
        if (kind == "i" and base.kind in "iu") or (kind == "f" and base.kind == "f"):
            for k in range(int(np.prod(shape)) if shape else 1):
                out.append((offset + k * base.itemsize, base, prefix + name))
    return out


# Integer fields that size or index something: what validation must catch.
_STRUCTURAL = re.compile(r"num|first|count|index|ofs|offset|plane|children|texinfo|texdata|dispinfo|cluster|"
                         r"size|head|edge|side|leaf|face|brush|area|style|power|v$|string")


def _field_choice(fields: list[tuple[int, np.dtype, str]], pick: int, kind: str) -> tuple[int, np.dtype, str]:
    """Field ``pick``: even picks prefer the fields that count or index (when the record has any)."""
    structural = [f for f in fields if _STRUCTURAL.search(f[2])] if kind == "i" else []
    pool = structural if structural and pick % 2 == 0 else fields
    return pool[(pick // 2) % len(pool)]


def _put_int(data: bytearray, at: int, dtype: np.dtype, value: int) -> None:
    bits = dtype.itemsize * 8
    value = int(value) % (1 << bits)
    if dtype.kind == "i" and value >= 1 << (bits - 1):
        value -= 1 << bits
    data[at : at + dtype.itemsize] = np.array(value, dtype.newbyteorder("<") if dtype.kind == "i" else
                                              np.dtype(f"<u{dtype.itemsize}")).tobytes()


def _mutate_record(data: bytearray, m: Mutation, kind: str) -> None:
    ofs, length = _lump_slice(data, m.a)
    dtype = _record_dtype_of(data, m.a)
    if not length or dtype is None or length < dtype.itemsize:
        return
    fields = _scalar_fields(dtype, kind)
    if not fields:
        return
    count = length // dtype.itemsize
    at, scalar, _ = _field_choice(fields, m.c, kind)
    # "column" mutations set the field in every record, the others in one.
    for record in range(count) if m.kind.startswith("column") else [m.b % count]:
        position = ofs + record * dtype.itemsize + at
        if kind == "i":
            _put_int(data, position, scalar, m.value)
        elif m.value == "snan":
            data[position : position + scalar.itemsize] = _SNAN.get(scalar.itemsize, b"\xff" * scalar.itemsize)
        else:
            data[position : position + scalar.itemsize] = np.array(m.value, scalar.newbyteorder("<")).tobytes()


def _append_lump(data: bytearray, lump: int, payload: bytes) -> None:
    """Put ``payload`` at the end of the file and point the lump's directory entry at it."""
    data.extend(b"\0" * (-len(data) % 4))
    _set_entry(data, lump, 0, len(data))
    _set_entry(data, lump, 1, len(payload))
    _set_entry(data, lump, 3, 0)
    data.extend(payload)


def _mutate_entities(data: bytearray, m: Mutation) -> None:
    ofs, length = _lump_slice(data, LumpId.ENTITIES)
    text = bytes(data[ofs : ofs + length])
    if not text:
        return
    where = m.b % (len(text) + 1)
    op = m.c % 6
    if op == 0:  # delete a span
        text = text[:where] + text[where + (m.value % 64) :]
    elif op == 1:  # insert
        text = text[:where] + m.text + text[where:]
    elif op == 2:  # repeat a span many times
        span = text[where : where + 1 + m.value % 32] or b"{"
        text = text[:where] + span * (1 + m.value % 4096) + text[where:]
    elif op == 3:  # drop every closing brace (an unclosed block)
        text = text.replace(b"}", b"")
    elif op == 4:  # drop one kind of quote or brace
        text = text.replace(bytes([b'"{}'[m.value % 3]]), b"", 1 + m.value % 8)
    else:  # overwrite one byte
        if where < len(text):
            text = text[:where] + bytes([m.value % 256]) + text[where + 1 :]
    _append_lump(data, LumpId.ENTITIES, text)


def _find_all(data: bytes, needle: bytes) -> list[int]:
    found: list[int] = []
    at = data.find(needle)
    while at >= 0 and len(found) < 4096:
        found.append(at)
        at = data.find(needle, at + 1)
    return found


# Zip record fields (offset within the record, size): local header, central entry, end record.
_ZIP_FIELDS = {
    b"PK\x03\x04": [(6, 2), (8, 2), (14, 4), (18, 4), (22, 4), (26, 2), (28, 2)],
    b"PK\x01\x02": [(8, 2), (10, 2), (16, 4), (20, 4), (24, 4), (28, 2), (30, 2), (32, 2), (42, 4)],
    b"PK\x05\x06": [(8, 2), (10, 2), (12, 4), (16, 4), (20, 2)],
}


def _mutate_zip(data: bytearray, m: Mutation) -> None:
    ofs, length = _lump_slice(data, LumpId.PAKFILE)
    if not length:
        return
    signature = list(_ZIP_FIELDS)[m.a % 3]
    places = [p for p in _find_all(bytes(data[ofs : ofs + length]), signature)]
    if not places:
        return
    record = ofs + places[m.b % len(places)]
    at, size = _ZIP_FIELDS[signature][m.c % len(_ZIP_FIELDS[signature])]
    if record + at + size <= len(data):
        value = int(m.value) % (1 << (8 * size))
        data[record + at : record + at + size] = value.to_bytes(size, "little")


def _mutate_lzma(data: bytearray, m: Mutation) -> None:
    places = _find_all(bytes(data), b"LZMA")
    if not places:
        return
    at = places[m.a % len(places)]
    # lzma_header_t: id, actualSize, lzmaSize, properties[5] (lc/lp/pb byte, then dictionary size).
    fields = [(4, 4), (8, 4), (12, 1), (13, 4)]
    offset, size = fields[m.b % len(fields)]
    if at + offset + size <= len(data):
        data[at + offset : at + offset + size] = (int(m.value) % (1 << (8 * size))).to_bytes(size, "little")


def _mutate_game_lumps(data: bytearray, m: Mutation) -> None:
    ofs, length = _lump_slice(data, LumpId.GAME_LUMP)
    if length < 4:
        return
    count = struct.unpack_from("<i", data, ofs)[0]
    slots = [0] + [4 + 16 * k + f for k in range(max(0, min(count, (length - 4) // 16)))
                   for f in (0, 4, 6, 8, 12)]
    at = ofs + slots[m.b % len(slots)]
    size = 2 if (at - ofs - 4) % 16 in (4, 6) else 4
    data[at : at + size] = (int(m.value) % (1 << (8 * size))).to_bytes(size, "little")


def _apply_one(data: bytearray, m: Mutation) -> None:
    layout = _layout(data)
    NUM_LUMPS, HEADER_SIZE = layout.lumps, layout.header  # noqa: N806 - the seed's, not Source's
    if m.kind == "dir":
        _set_entry(data, m.a % NUM_LUMPS, m.b % 4, m.value)
    elif m.kind == "share":  # a directory entry pointing at another lump's bytes
        ofs, length, _, fourcc = _entry(data, m.b % NUM_LUMPS)
        _set_entry(data, m.a % NUM_LUMPS, 0, ofs)
        _set_entry(data, m.a % NUM_LUMPS, 1, length)
        _set_entry(data, m.a % NUM_LUMPS, 3, fourcc)
    elif m.kind == "header":
        struct.pack_into("<i", data, 4 if m.a % 2 == 0 else HEADER_SIZE - 4, _i32(m.value))
    elif m.kind in ("record_int", "column_int"):
        _mutate_record(data, m, "i")
    elif m.kind in ("record_float", "column_float"):
        _mutate_record(data, m, "f")
    elif m.kind == "grow":  # repeat a lump's records, so counts can point further
        ofs, length = _lump_slice(data, m.a % NUM_LUMPS)
        if length:
            _append_lump(data, m.a % NUM_LUMPS, bytes(data[ofs : ofs + length]) * (2 + m.value % 8))
    elif m.kind == "truncate_lump":
        ofs, length = _lump_slice(data, m.a % NUM_LUMPS)
        if length:
            _set_entry(data, m.a % NUM_LUMPS, 1, m.value % length)
    elif m.kind == "truncate_file":
        del data[max(HEADER_SIZE // 2, len(data) - 1 - m.value % len(data)) :]
    elif m.kind == "bytes":
        at = m.a % max(len(data), 1)
        data[at : at + len(m.text)] = m.text[: max(0, len(data) - at)]
    elif m.kind == "entities":
        _mutate_entities(data, m)
    elif m.kind == "zip":
        _mutate_zip(data, m)
    elif m.kind == "lzma":
        _mutate_lzma(data, m)
    elif m.kind == "game_lump":
        _mutate_game_lumps(data, m)


def _plain(data: bytes) -> tuple[bytes, bytes | None]:
    """The map inside ``data`` (an encrypted one decrypted) and its key, or None."""
    key = find_key(data)
    return (data, None) if key is None else (xor(data, key).tobytes(), key)


def apply(seed: bytes, mutations: list[Mutation]) -> bytes:
    """The seed with the mutations applied in order (each one tolerant of what came before).

    An encrypted seed (Tactical Intervention's) is mutated as its plain map and encrypted
    again, so the mutations hit its structures; one that writes over bytes 384-416 changes the
    key the reader finds."""
    plain, key = _plain(seed)
    data = bytearray(plain)
    for m in mutations:
        if len(data) >= _layout(data).header:
            _apply_one(data, m)
    return bytes(data) if key is None else xor(data, key).tobytes()


# ---- choosing ----------------------------------------------------------------------
def _number(rng: random.Random) -> int:
    roll = rng.random()
    if roll < 0.6:
        value = rng.choice(_INTERESTING)
        return value + rng.choice((0, 0, 0, 1, -1))
    if roll < 0.8:
        return rng.randrange(-64, 65536)
    return rng.getrandbits(32) - (1 << 31)


def _present_lumps(data: bytes) -> list[int]:
    layout = _layout(data)
    return [i for i in range(layout.lumps) if struct.unpack_from("<i", data, layout.directory + _LUMP_T * i + 4)[0] > 0]


#: Lumps whose records hold the counts and indices everything else is built from.
_HOT = frozenset({LumpId.FACES, LumpId.BRUSHES, LumpId.BRUSHSIDES, LumpId.NODES, LumpId.LEAFS, LumpId.MODELS,
                  LumpId.TEXINFO, LumpId.TEXDATA, LumpId.EDGES, LumpId.SURFEDGES, LumpId.DISPINFO,
                  LumpId.VERTEXES, LumpId.PLANES, LumpId.TEXDATA_STRING_TABLE, LumpId.LEAFFACES,
                  LumpId.LEAFBRUSHES, LumpId.ORIGINALFACES, LumpId.FACES_HDR, LumpId.DISP_VERTS})
# rBSP's: models, meshes, material sorts, mesh indices, the vertex lumps, texture data and names,
# and the collision brushes with the grid that gives them to models.
_HOT_RESPAWN = frozenset({respawn_codec.MODELS, respawn_codec.MESHES, respawn_codec.MATERIAL_SORTS,
                          respawn_codec.MESH_INDICES, respawn_codec.TEXTURE_DATA,
                          respawn_codec.TEXTURE_DATA_STRING_TABLE, respawn_codec.GAME_LUMP,
                          *respawn_codec.VERTEX_LUMP_OF_FLAGS.values(), respawn_codec.CM_BRUSHES,
                          respawn_codec.CM_GRID, respawn_codec.CM_GRID_CELLS, respawn_codec.CM_GEO_SETS,
                          respawn_codec.CM_PRIMITIVES, respawn_codec.CM_UNIQUE_CONTENTS})


def random_mutation(rng: random.Random, data: bytes) -> Mutation:
    """One mutation, weighted towards the structures that matter."""
    data = _plain(data)[0]
    present = _present_lumps(data) or [0]
    hot = [i for i in present if i in (_HOT_RESPAWN if _layout(data) is _RESPAWN else _HOT)]
    lump = rng.choice(hot) if hot and rng.random() < 0.7 else rng.choice(present)
    kind = rng.choices(
        ["dir", "share", "header", "record_int", "record_float", "grow", "truncate_lump", "truncate_file",
         "bytes", "entities", "zip", "lzma", "game_lump", "column_int", "column_float"],
        weights=[10, 2, 1, 30, 8, 4, 3, 1, 4, 8, 8, 6, 5, 4, 4],
    )[0]
    if kind == "dir":
        return Mutation(kind, lump, rng.randrange(4), value=_number(rng))
    if kind == "share":
        return Mutation(kind, lump, rng.choice(present))
    if kind in ("record_int", "column_int"):
        return Mutation(kind, lump, rng.randrange(1 << 16), rng.randrange(128), value=_number(rng))
    if kind in ("record_float", "column_float"):
        return Mutation(kind, lump, rng.randrange(1 << 16), rng.randrange(64), value=rng.choice(_FLOATS))
    if kind == "bytes":
        return Mutation(kind, rng.randrange(len(data)), text=bytes(rng.getrandbits(8) for _ in range(rng.randint(1, 8))))
    if kind == "entities":
        insert = rng.choice([b"{", b"}", b'"', b'"\n"', b"\0", b"\xff\xfe", b"{ {", b'"k" "v"',
                             b'"origin" "nan inf 1e999"', b"//", b"\\", b'"' + b"x" * 5000])
        return Mutation(kind, 0, rng.randrange(1 << 16), rng.randrange(6), value=_number(rng), text=insert)
    if kind in ("zip", "lzma", "game_lump"):
        return Mutation(kind, rng.randrange(16), rng.randrange(1 << 16), rng.randrange(16), value=_number(rng))
    return Mutation(kind, lump, value=abs(_number(rng)))


def random_mutations(rng: random.Random, data: bytes, most: int = 4) -> list[Mutation]:
    """One to ``most`` mutations (fewer is likelier: small inputs minimise well)."""
    count = 1 + min(int(rng.expovariate(1.2)), most - 1)
    return [random_mutation(rng, data) for _ in range(count)]


# ---- minimising --------------------------------------------------------------------
def minimise(seed: bytes, mutations: list[Mutation], still_fails: Callable[[bytes], bool]) -> list[Mutation]:
    """Drop mutations one at a time while the input still fails the same way."""
    current = list(mutations)
    changed = True
    while changed and len(current) > 1:
        changed = False
        for i in range(len(current)):
            trial = current[:i] + current[i + 1 :]
            if still_fails(apply(seed, trial)):
                current = trial
                changed = True
                break
    return current


@dataclass
class Case:
    """A fuzz input: the seed it came from and the mutations applied."""

    seed: str
    mutations: list[Mutation] = field(default_factory=list)

    def data(self) -> bytes:
        return apply(seeds()[self.seed], self.mutations)
