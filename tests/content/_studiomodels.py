"""Studio models built in code (``.mdl``, ``.vvd``, ``.vtx`` bytes) with ``struct``, for the reader's tests.

Written from the struct layouts of studio.h / optimize.h, field by field, not
from the reader's dtypes, so a wrong dtype shows as a wrong answer.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class Mesh:
    skinref: int
    positions: list[tuple[float, float, float]]
    triangles: list[tuple[int, int, int]]  # mesh vertex ids, as a list would store them
    strip: list[int] | None = None  # store as one triangle strip of these ids instead


@dataclass
class Spec:
    version: int = 48
    checksum: int = 1234
    textures: list[str] = field(default_factory=lambda: ["tex_a", "tex_b"])
    cdmaterials: list[str] = field(default_factory=lambda: ["models\\test\\"])
    skins: list[list[int]] = field(default_factory=lambda: [[0, 1], [1, 0]])
    bodyparts: list[tuple[str, list[tuple[str, list[Mesh]]]]] = field(default_factory=list)
    includes: list[str] = field(default_factory=list)
    fixups: bool = False
    vtx_checksum: int | None = None
    hull: tuple[tuple[float, float, float], tuple[float, float, float]] = ((0, 0, 0), (0, 0, 0))


def _cstr(s: str) -> bytes:
    return s.encode() + b"\0"


def build_mdl(spec: Spec) -> bytes:
    out = bytearray(408)
    def here() -> int:
        return len(out)
    # textures
    tex_at = here()
    out += bytes(64 * len(spec.textures))
    for i, name in enumerate(spec.textures):
        struct.pack_into("<i", out, tex_at + 64 * i, here() - (tex_at + 64 * i))
        out += _cstr(name)
    while len(out) % 4:
        out += b"\0"
    cd_at = here()
    out += bytes(4 * len(spec.cdmaterials))
    for i, name in enumerate(spec.cdmaterials):
        struct.pack_into("<i", out, cd_at + 4 * i, here())
        out += _cstr(name)
    while len(out) % 4:
        out += b"\0"
    skin_at = here()
    refs = len(spec.skins[0]) if spec.skins else 0
    for family in spec.skins:
        out += struct.pack(f"<{refs}h", *family)
    while len(out) % 4:
        out += b"\0"
    bp_at = here()
    out += bytes(16 * len(spec.bodyparts))
    first_vertex = 0
    base = 1
    for b, (bp_name, models) in enumerate(spec.bodyparts):
        at = bp_at + 16 * b
        models_at = here()
        out += bytes(148 * len(models))
        for m, (model_name, meshes) in enumerate(models):
            m_at = models_at + 148 * m
            meshes_at = here()
            out += bytes(116 * len(meshes))
            offset = 0
            for k, mesh in enumerate(meshes):
                struct.pack_into("<4i", out, meshes_at + 116 * k, mesh.skinref, m_at - (meshes_at + 116 * k),
                                 len(mesh.positions), offset)
                offset += len(mesh.positions)
            struct.pack_into("<64sifiiii", out, m_at, model_name.encode(), 0, 1.0, len(meshes),
                             meshes_at - m_at, offset, first_vertex * 48)
            first_vertex += offset
        name_at = here()
        out += _cstr(bp_name)
        struct.pack_into("<4i", out, at, name_at - at, len(models), base, models_at - at)
        base *= max(len(models), 1)
        while len(out) % 4:
            out += b"\0"
    inc_at = here()
    out += bytes(8 * len(spec.includes))
    for i, name in enumerate(spec.includes):
        struct.pack_into("<ii", out, inc_at + 8 * i, 0, here() - (inc_at + 8 * i))
        out += _cstr(name)
    struct.pack_into("<4sii64si", out, 0, b"IDST", spec.version, spec.checksum, b"test.mdl", len(out))
    struct.pack_into("<5i", out, 204, len(spec.textures), tex_at, len(spec.cdmaterials), cd_at, refs)
    struct.pack_into("<3i", out, 224, len(spec.skins), skin_at, len(spec.bodyparts))
    struct.pack_into("<i", out, 236, bp_at)
    struct.pack_into("<ii", out, 336, len(spec.includes), inc_at)
    struct.pack_into("<i", out, 76, len(out))
    struct.pack_into("<6f", out, 104, *spec.hull[0], *spec.hull[1])  # hull_min, hull_max
    return bytes(out)


def _all_meshes(spec: Spec) -> list[Mesh]:
    return [mesh for _, models in spec.bodyparts for _, meshes in models for mesh in meshes]


def build_vvd(spec: Spec) -> bytes:
    verts = []
    for mesh in _all_meshes(spec):
        for i, p in enumerate(mesh.positions):
            normal = (0.0, 0.0, 1.0)
            verts.append(struct.pack("<3f3bB3f3f2f", 1.0, 0, 0, 0, 0, 0, 1, *p, *normal, p[0] / 100, p[1] / 100))
    fixups = b""
    if spec.fixups and len(verts) > 1:
        # Stored with the second half first; two fixups put them back in order.
        half = len(verts) // 2
        stored = verts[half:] + verts[:half]
        fixups = struct.pack("<3i", 0, len(verts) - half, half) + struct.pack("<3i", 0, 0, len(verts) - half)
        verts = stored
    header_size = 64
    fix_at = header_size
    data_at = fix_at + len(fixups)
    data_at += (-data_at) % 16
    lods = [len(verts)] + [0] * 7
    head = struct.pack("<4siii8iiiii", b"IDSV", 4, spec.checksum, 1, *lods, len(fixups) // 12, fix_at, data_at,
                       data_at + 48 * len(verts))
    body = head + fixups
    body += bytes(data_at - len(body))
    return body + b"".join(verts)


def build_vtx(spec: Spec) -> bytes:
    """One LOD; one strip group per mesh holding one strip (a list, or a strip when the mesh says so)."""
    out = bytearray(36)
    bp_at = len(out)
    out += bytes(8 * len(spec.bodyparts))
    for b, (_, models) in enumerate(spec.bodyparts):
        models_at = len(out)
        struct.pack_into("<ii", out, bp_at + 8 * b, len(models), models_at - (bp_at + 8 * b))
        out += bytes(8 * len(models))
        for m, (_, meshes) in enumerate(models):
            lod_at = len(out)
            struct.pack_into("<ii", out, models_at + 8 * m, 1, lod_at - (models_at + 8 * m))
            out += bytes(12)
            meshes_at = len(out)
            struct.pack_into("<iif", out, lod_at, len(meshes), meshes_at - lod_at, 0.0)
            out += bytes(9 * len(meshes))
            for k, mesh in enumerate(meshes):
                group_at = len(out)
                struct.pack_into("<iiB", out, meshes_at + 9 * k, 1, group_at - (meshes_at + 9 * k), 0)
                out += bytes(25)
                # Strip-group vertices in reverse order, so an index is not the mesh vertex id.
                n = len(mesh.positions)
                order = list(range(n))[::-1]
                verts_at = len(out)
                for v in order:
                    out += struct.pack("<3BBH3b", 0, 0, 0, 1, v, 0, 0, 0)
                ids = mesh.strip if mesh.strip is not None else [i for t in mesh.triangles for i in t]
                indices = [order.index(i) for i in ids]
                index_at = len(out)
                out += struct.pack(f"<{len(indices)}H", *indices)
                strip_at = len(out)
                flags = 2 if mesh.strip is not None else 1
                out += struct.pack("<iiiihBii", len(indices), 0, n, 0, 0, flags, 0, 0)
                struct.pack_into("<iiiiiiB", out, group_at, n, verts_at - group_at, len(indices),
                                 index_at - group_at, 1, strip_at - group_at, 0)
    checksum = spec.checksum if spec.vtx_checksum is None else spec.vtx_checksum
    struct.pack_into("<iiHHiiiiii", out, 0, 7, 24, 53, 9, 3, checksum, 1, 0, len(spec.bodyparts), bp_at)
    return bytes(out)


def write_model(folder: Path, name: str, spec: Spec, *, vtx_suffix: str = ".dx90.vtx", mesh_files: bool = True) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{name}.mdl").write_bytes(build_mdl(spec))
    if mesh_files:
        (folder / f"{name}.vvd").write_bytes(build_vvd(spec))
        (folder / f"{name}{vtx_suffix}").write_bytes(build_vtx(spec))
    return folder / f"{name}.mdl"


def quad(skinref: int = 0, z: float = 0.0, size: float = 10.0) -> Mesh:
    """A square of two triangles, stored clockwise seen from +Z (Direct3D's front)."""
    return Mesh(skinref, [(0, 0, z), (size, 0, z), (size, size, z), (0, size, z)], [(0, 2, 1), (0, 3, 2)])


def box_spec(version: int = 48, **changes: object) -> Spec:
    spec = Spec(version=version, bodyparts=[("body", [("body_ref", [quad(0), quad(1, z=5.0, size=4.0)])])])
    for key, value in changes.items():
        setattr(spec, key, value)
    return spec
