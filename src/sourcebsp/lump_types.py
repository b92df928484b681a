"""The type of each lump's decoded value: the one table the typed lump API is made from.

A type checker sees ``bsp.planes`` as a numpy array and
``bsp.lump_or_none(LumpId.ENTITIES)`` as ``Entities | None`` because
:class:`~sourcebsp.BspFile` and :class:`~sourcebsp.protocols.MapReader`
declare a typed attribute per lump and an ``@overload`` per type for each
accessor.  Those declarations are generated from :data:`LUMP_TYPES` into
marked blocks of ``lumpaccess.py`` (the accessors both containers share) and ``protocols.py``; giving a lump a
type is one entry here, then::

    python -m sourcebsp.lump_types      # rewrites the generated blocks

``tests/test_typing.py`` fails when a block differs from what this table makes.
"""
from __future__ import annotations

import re
import sys
from pathlib import Path

from .lump_ids import LumpId

__all__ = ["ARRAY", "LUMP_TYPES", "generated_blocks", "update_sources"]

#: A table of fixed-size records: a numpy structured array.
ARRAY = "Array"

#: The decoded value of each lump with its built-in layout: ``ARRAY``, a codec's
#: class as ``"module.Class"`` (relative to the package), or None for a lump
#: with no built-in layout (a RawLump, or the value of a codec registered for it).
LUMP_TYPES: dict[LumpId, str | None] = {
    LumpId.ENTITIES: "codecs.entities.Entities",
    LumpId.PLANES: ARRAY,
    LumpId.TEXDATA: ARRAY,
    LumpId.VERTEXES: ARRAY,
    LumpId.VISIBILITY: "codecs.visibility.Visibility",
    LumpId.NODES: ARRAY,
    LumpId.TEXINFO: ARRAY,
    LumpId.FACES: ARRAY,
    LumpId.LIGHTING: "codecs.lighting.Lightmaps",
    LumpId.OCCLUSION: "codecs.occlusion.Occlusion",
    LumpId.LEAFS: ARRAY,
    LumpId.FACEIDS: ARRAY,
    LumpId.EDGES: ARRAY,
    LumpId.SURFEDGES: ARRAY,
    LumpId.MODELS: ARRAY,
    LumpId.WORLDLIGHTS: ARRAY,
    LumpId.LEAFFACES: ARRAY,
    LumpId.LEAFBRUSHES: ARRAY,
    LumpId.BRUSHES: ARRAY,
    LumpId.BRUSHSIDES: ARRAY,
    LumpId.AREAS: ARRAY,
    LumpId.AREAPORTALS: ARRAY,
    LumpId.PROPCOLLISION: ARRAY,
    LumpId.PROPHULLS: ARRAY,
    LumpId.PROPHULLVERTS: ARRAY,
    LumpId.PROPTRIS: ARRAY,
    LumpId.DISPINFO: ARRAY,
    LumpId.ORIGINALFACES: ARRAY,
    LumpId.PHYSDISP: "codecs.physics.PhysDisp",
    LumpId.PHYSCOLLIDE: "codecs.physics.PhysCollide",
    LumpId.VERTNORMALS: ARRAY,
    LumpId.VERTNORMALINDICES: ARRAY,
    LumpId.DISP_LIGHTMAP_ALPHAS: ARRAY,
    LumpId.DISP_VERTS: ARRAY,
    LumpId.DISP_LIGHTMAP_SAMPLE_POSITIONS: ARRAY,
    LumpId.GAME_LUMP: "codecs.gamelumps.GameLumps",
    LumpId.LEAFWATERDATA: ARRAY,
    LumpId.PRIMITIVES: ARRAY,
    LumpId.PRIMVERTS: ARRAY,
    LumpId.PRIMINDICES: ARRAY,
    LumpId.PAKFILE: "codecs.pakfile.Pakfile",
    LumpId.CLIPPORTALVERTS: ARRAY,
    LumpId.CUBEMAPS: ARRAY,
    LumpId.TEXDATA_STRING_DATA: "codecs.textures.StringData",
    LumpId.TEXDATA_STRING_TABLE: ARRAY,
    LumpId.OVERLAYS: ARRAY,
    LumpId.LEAFMINDISTTOWATER: ARRAY,
    LumpId.FACE_MACRO_TEXTURE_INFO: ARRAY,
    LumpId.DISP_TRIS: ARRAY,
    LumpId.PROP_BLOB: "codecs.physics.PhysCollide",
    LumpId.WATEROVERLAYS: ARRAY,
    LumpId.LEAF_AMBIENT_INDEX_HDR: ARRAY,
    LumpId.LEAF_AMBIENT_INDEX: ARRAY,
    LumpId.LIGHTING_HDR: "codecs.lighting.Lightmaps",
    LumpId.WORLDLIGHTS_HDR: ARRAY,
    LumpId.LEAF_AMBIENT_LIGHTING_HDR: ARRAY,
    LumpId.LEAF_AMBIENT_LIGHTING: ARRAY,
    LumpId.XZIPPAKFILE: None,
    LumpId.FACES_HDR: ARRAY,
    LumpId.MAP_FLAGS: ARRAY,
    LumpId.OVERLAY_FADES: ARRAY,
    LumpId.OVERLAY_SYSTEM_LEVELS: ARRAY,
    LumpId.PHYSLEVEL: None,
    LumpId.DISP_MULTIBLEND: None,
}

_WIDTH = 118  # wrap generated lines longer than this


# ---- what the table makes ------------------------------------------------------------
def _name(lump: LumpId) -> str:
    kind = LUMP_TYPES[lump]
    return "Any" if kind is None else kind.rsplit(".", 1)[-1]


def _groups() -> list[tuple[str, list[LumpId]]]:
    """Typed lumps by type, in the order each type first appears (arrays last)."""
    groups: dict[str, list[LumpId]] = {}
    for lump in LumpId:
        kind = LUMP_TYPES[lump]
        if kind is not None and kind != ARRAY:
            groups.setdefault(_name(lump), []).append(lump)
    return [*groups.items(), (ARRAY, [lump for lump in LumpId if LUMP_TYPES[lump] == ARRAY])]


def _imports(indent: str) -> list[str]:
    modules: dict[str, set[str]] = {}
    for kind in LUMP_TYPES.values():
        if kind is not None and kind != ARRAY:
            module, name = kind.rsplit(".", 1)
            modules.setdefault(module, set()).add(name)
    return [f"{indent}from .{module} import {', '.join(sorted(names))}" for module, names in sorted(modules.items())]


def _array_lumps(indent: str) -> list[str]:
    names = [f"LumpId.{lump.name}" for lump in LumpId if LUMP_TYPES[lump] == ARRAY]
    lines, line = [f"{indent}ArrayLump = Literal["], indent + "    "
    for name in names:
        if len(line) + len(name) + 2 > _WIDTH:
            lines.append(line.rstrip())
            line = indent + "    "
        line += name + ", "
    return [*lines, line.rstrip(), f"{indent}]"]


#: accessor: (its parameters after the key, what it returns given the lump's type T)
_ACCESSORS = {
    "get_lump": ("", "{} | RawLump"),
    "lump_or_none": (", purpose: str | None = None", "{} | None"),
    "lump_or_raise": (", purpose: str", "{}"),
}


def _ladder(method: str, indent: str) -> list[str]:
    params, returns = _ACCESSORS[method]
    lines = []
    for name, lumps in _groups():
        key = '"ArrayLump"' if name == ARRAY else f"Literal[{', '.join(f'LumpId.{lump.name}' for lump in lumps)}]"
        line = f'{indent}def {method}(self, key: {key}{params}) -> "{returns.format(name)}": ...'
        if len(line) > _WIDTH:
            line = (f"{indent}def {method}(self, key: {key},\n{indent}{' ' * (len(method) + 5)}"
                    f'{params[2:]}) -> "{returns.format(name)}": ...')
        lines += [f"{indent}@overload", line]
    return [*lines, f"{indent}@overload", f"{indent}def {method}(self, key: LumpKey{params}) -> Any: ..."]


def _attributes(indent: str) -> list[str]:
    lines = []
    for lump in LumpId:
        name = _name(lump)
        kind = name if name in (ARRAY, "Any") else f'"{name}"'
        raw = ", raw_ok=True" if LUMP_TYPES[lump] is None else ""
        lines.append(f"{indent}{lump.name.lower()}: LumpAttr[{kind}] = LumpAttr(LumpId.{lump.name}{raw})")
    return lines


def _properties(indent: str) -> list[str]:
    lines = []
    for lump in LumpId:
        name = _name(lump)
        attr = lump.name.lower()
        lines += [f"{indent}@property", f'{indent}def {attr}(self) -> "{name}": ...',
                  f"{indent}@{attr}.setter", f'{indent}def {attr}(self, value: "{name}") -> None: ...']
    return lines


def generated_blocks() -> dict[str, dict[str, str]]:
    """{source file name: {block name: its text}}, as :data:`LUMP_TYPES` makes them."""
    def text(lines: list[str]) -> str:
        return "\n".join(lines) + "\n"

    ladders = {method: text(_ladder(method, "    ")) for method in _ACCESSORS}
    container = {"imports": text(_imports("    ")), **ladders, "attributes": text(_attributes("    "))}
    return {
        "lumpaccess.py": container,  # the accessors both containers take from TypedLumps
        "protocols.py": {"imports": text(_imports("    ") + _array_lumps("    ")),  # under TYPE_CHECKING there
                         **{method: text(_ladder(method, "        ")) for method in _ACCESSORS},
                         "attributes": text(_properties("        "))},
    }


_BLOCK = re.compile(r"(?P<open>[ \t]*# >>> generated: (?P<name>\w+)[^\n]*\n)(?P<body>.*?)(?P<close>[ \t]*# <<< generated\n)",
                    re.S)


def _replaced(source: str, blocks: dict[str, str]) -> str:
    seen: list[str] = []

    def fill(match: re.Match[str]) -> str:
        seen.append(match["name"])
        return match["open"] + blocks[match["name"]] + match["close"]

    result = _BLOCK.sub(fill, source)
    if sorted(seen) != sorted(blocks):
        raise ValueError(f"generated blocks found {sorted(seen)}, expected {sorted(blocks)}")
    return result


def update_sources(package: Path = Path(__file__).parent, *, write: bool = True) -> list[str]:
    """Rewrite the generated blocks from the table; the names of the files that changed."""
    changed = []
    for file_name, blocks in generated_blocks().items():
        path = package / file_name
        source = path.read_text(encoding="utf-8")
        new = _replaced(source, blocks)
        if new != source:
            changed.append(file_name)
            if write:
                path.write_text(new, encoding="utf-8")
    return changed


if __name__ == "__main__":
    names = update_sources(write="--check" not in sys.argv[1:])
    print("\n".join(f"{'differs' if '--check' in sys.argv else 'rewrote'}: {n}" for n in names) or "up to date")
    sys.exit(1 if names and "--check" in sys.argv else 0)
