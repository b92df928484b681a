"""The VMF document a decompile produces, and its text as Hammer writes it.

A VMF (Valve Map Format) file is KeyValues text: named blocks in braces
holding ``"key" "value"`` lines, indented with tabs.  The top level holds
``versioninfo``, ``visgroups``, ``viewsettings``, ``world`` (worldspawn's
keys and the world brushes, ``solid`` blocks), one ``entity`` block per
entity (keys, a ``connections`` block with the outputs, brush entities'
``solid`` blocks), ``cameras`` and ``cordon``.

A ``solid`` holds its ``side`` blocks.  A side's ``"plane"`` is three points
on the plane, ``"(x y z) (x y z) (x y z)"``, clockwise seen from outside the
brush: the outward normal is ``(p2 - p0) x (p1 - p0)``.  Texture axes are
``"[x y z shift] scale"``: ``u = dot(p, axis) / scale + shift`` texels.

Numbers are written as Hammer writes them: whole numbers without a decimal
point, others with up to six decimals and no trailing zeros, never in
exponent form and never as ``-0``.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable, Iterator, Sequence

import numpy as np

from ...numformat import format_lines, format_many

__all__ = [
    "VmfDisp", "VmfSide", "VmfSolid", "VmfEntity", "VmfMap",
    "format_number", "format_numbers", "format_vector",
]


# ---- numbers ------------------------------------------------------------------------
def format_number(value: float, decimals: int = 6) -> str:
    """One number as Hammer writes it: ``16``, ``0.25``, ``-4.5``; never ``-0`` or ``1e-05``."""
    v = float(value)
    if not np.isfinite(v):
        return "0"
    text = f"{v:.{decimals}f}"
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def format_numbers(values: Iterable[float], decimals: int = 6) -> str:
    """Numbers separated by single spaces."""
    return " ".join(format_number(v, decimals) for v in np.asarray(values, np.float64).ravel().tolist())


def format_vector(values: Sequence[float], decimals: int = 6) -> str:
    return format_numbers(values, decimals)


def _quote(text: str) -> str:
    # VMF strings have no escapes; a double quote cannot be represented.
    return '"' + str(text).replace('"', "'") + '"'


# ---- the document -------------------------------------------------------------------
@dataclass
class VmfDisp:
    """A side's ``dispinfo`` block; per-vertex arrays are row-major ``(2^power + 1)^2``."""

    power: int
    start_position: np.ndarray  # (3,)
    normals: np.ndarray  # (V, 3)
    distances: np.ndarray  # (V,)
    offsets: np.ndarray  # (V, 3)
    offset_normals: np.ndarray  # (V, 3)
    alphas: np.ndarray  # (V,)
    triangle_tags: np.ndarray  # (2 * 4^power,) Hammer tags (1 walkable, 8 buildable)
    allowed_verts: np.ndarray  # (10,) int32
    flags: int = 0
    elevation: float = 0.0
    subdiv: int = 0

    @property
    def size(self) -> int:
        return (1 << self.power) + 1


@dataclass
class VmfSide:
    id: int
    points: np.ndarray  # (3, 3): the "plane" points, clockwise seen from outside
    material: str
    uaxis: np.ndarray  # (4,): x y z shift
    uscale: float
    vaxis: np.ndarray
    vscale: float
    lightmapscale: int = 16
    smoothing_groups: int = 0
    rotation: float = 0.0
    disp: VmfDisp | None = None
    vertices: np.ndarray | None = None  # (K, 3) the polygon, world space (not written)
    brushside: int = -1  # the BRUSHSIDES row it came from (-1: made by the decompiler)
    _text: tuple[str, str, str] = field(default=("", "", ""), repr=False, compare=False)
    _disp_text: dict[str, list[str]] = field(default_factory=dict, repr=False, compare=False)


@dataclass
class VmfSolid:
    id: int
    sides: list[VmfSide]
    brush: int = -1  # the BRUSHES row it came from (-1: made by the decompiler)
    visgroups: list[int] = field(default_factory=list)


@dataclass
class VmfEntity:
    id: int
    pairs: list[tuple[str, str]]  # classname first, then keys in map order
    connections: list[tuple[str, str]] = field(default_factory=list)
    solids: list[VmfSolid] = field(default_factory=list)
    color: str = "220 30 220"
    visgroups: list[int] = field(default_factory=list)

    @property
    def classname(self) -> str:
        for k, v in self.pairs:
            if k.casefold() == "classname":
                return v
        return ""

    def get(self, key: str, default: str | None = None) -> str | None:
        folded = key.casefold()
        for k, v in reversed(self.pairs):
            if k.casefold() == folded:
                return v
        return default


@dataclass
class VmfMap:
    """A whole VMF: the world entity, the other entities, and the editor blocks."""

    world: VmfEntity
    entities: list[VmfEntity] = field(default_factory=list)
    mapversion: int = 1
    editorversion: int = 400
    editorbuild: int = 8000
    visgroups: list[tuple[int, str, str]] = field(default_factory=list)  # (visgroupid, name, color)
    cameras: list[tuple[np.ndarray, np.ndarray]] = field(default_factory=list)  # (position, look)

    def iter_solids(self) -> Iterator[VmfSolid]:
        yield from self.world.solids
        for entity in self.entities:
            yield from entity.solids

    # ---- text -------------------------------------------------------------------------
    def to_text(self) -> str:
        out: list[str] = []
        _prepare_sides(list(self.iter_solids()))
        self._header(out)
        _entity_block(out, "world", self.world, "0 180 0", editor=False)
        for entity in self.entities:
            _entity_block(out, "entity", entity, "0 180 0", editor=True)
        out += ["cameras\n{\n", f'\t"activecamera" "{0 if self.cameras else -1}"\n']
        for position, look in self.cameras:
            out += ["\tcamera\n\t{\n", f'\t\t"position" "[{format_numbers(position)}]"\n',
                    f'\t\t"look" "[{format_numbers(look)}]"\n', "\t}\n"]
        out += ["}\n"]
        out += ["cordon\n{\n", '\t"mins" "(-1024 -1024 -1024)"\n', '\t"maxs" "(1024 1024 1024)"\n',
                '\t"active" "0"\n', "}\n"]
        return "".join(out)

    def _header(self, out: list[str]) -> None:
        out += ["versioninfo\n{\n", f'\t"editorversion" "{self.editorversion}"\n',
                f'\t"editorbuild" "{self.editorbuild}"\n', f'\t"mapversion" "{self.mapversion}"\n',
                '\t"formatversion" "100"\n', '\t"prefab" "0"\n', "}\n"]
        out += ["visgroups\n{\n"]
        for ident, name, color in self.visgroups:
            out += ["\tvisgroup\n\t{\n", f"\t\t{_quote('name')} {_quote(name)}\n", f'\t\t"visgroupid" "{ident}"\n',
                    f'\t\t"color" "{color}"\n', "\t}\n"]
        out += ["}\n"]
        out += ["viewsettings\n{\n", '\t"bSnapToGrid" "1"\n', '\t"bShowGrid" "1"\n',
                '\t"bShowLogicalGrid" "0"\n', '\t"nGridSpacing" "64"\n', '\t"bShow3DGrid" "0"\n', "}\n"]


def _kv(out: list[str], depth: int, key: str, value: str) -> None:
    out.append(f"{chr(9) * depth}{_quote(key)} {_quote(value)}\n")


def _editor(out: list[str], depth: int, color: str, visgroups: Sequence[int] = ()) -> None:
    tabs = "\t" * depth
    out.append(f"{tabs}editor\n{tabs}{{\n")
    _kv(out, depth + 1, "color", color)
    for ident in visgroups:
        _kv(out, depth + 1, "visgroupid", str(ident))
    _kv(out, depth + 1, "visgroupshown", "1")
    _kv(out, depth + 1, "visgroupautoshown", "1")
    out.append(f"{tabs}}}\n")


def _entity_block(out: list[str], name: str, entity: VmfEntity, solid_color: str, editor: bool) -> None:
    out.append(f"{name}\n{{\n")
    _kv(out, 1, "id", str(entity.id))
    for key, value in entity.pairs:
        _kv(out, 1, key, value)
    if entity.connections:
        out.append("\tconnections\n\t{\n")
        for key, value in entity.connections:
            _kv(out, 2, key, value)
        out.append("\t}\n")
    for solid in entity.solids:
        _solid_block(out, solid, solid_color)
    if editor:
        _editor(out, 1, entity.color, entity.visgroups)
    out.append("}\n")


def _solid_block(out: list[str], solid: VmfSolid, color: str) -> None:
    out.append("\tsolid\n\t{\n")
    _kv(out, 2, "id", str(solid.id))
    for side in solid.sides:
        _side_block(out, side)
    _editor(out, 2, color, solid.visgroups)
    out.append("\t}\n")


def _prepare_sides(solids: list[VmfSolid]) -> None:
    """Format the numbers of every side at once (``side._text``: plane, uaxis, vaxis)."""
    sides = [side for solid in solids for side in solid.sides]
    if not sides:
        return
    n = len(sides)
    points = np.array([s.points for s in sides], np.float64).reshape(n, 9)
    scales = np.array([[s.uscale, s.vscale] for s in sides], np.float64).reshape(n, 2)
    axes = np.concatenate([np.array([s.uaxis for s in sides], np.float64).reshape(n, 4),
                           np.array([s.vaxis for s in sides], np.float64).reshape(n, 4)])
    axes = np.column_stack([axes, scales.T.ravel()])  # x y z shift scale: u of every side, then v
    planes = _lines("(%.6f %.6f %.6f) (%.6f %.6f %.6f) (%.6f %.6f %.6f)\n", points)
    axis_lines = _lines("[%.6f %.6f %.6f %.4f] %.6f\n", axes)  # the shift with 4 decimals
    for i, side in enumerate(sides):
        side._text = (planes[i], axis_lines[i], axis_lines[n + i])
    _prepare_displacements([side for side in sides if side.disp is not None])


def _lines(template: str, values: np.ndarray) -> list[str]:
    """``template`` (one line) filled with every row of ``values`` in Hammer's number style."""
    return format_lines(template, values, hammer=True).decode("ascii").splitlines()


#: The per-vertex rows of a ``dispinfo`` block: name, decimals.
_DISP_ROWS = (("normals", 6), ("distances", 6), ("offsets", 6), ("offset_normals", 6), ("alphas", 6),
              ("triangle_tags", 0))


def _prepare_displacements(sides: list[VmfSide]) -> None:
    """Format the rows of every displacement at once (``side._disp_text``), one call per decimals."""
    for decimals in {decimals for _, decimals in _DISP_ROWS}:
        kinds = [name for name, places in _DISP_ROWS if places == decimals]
        # Tags are integers: a fraction is cut off before formatting.
        dtype = np.int64 if decimals == 0 else np.float64
        arrays = [(side, name, np.asarray(getattr(side.disp, name), dtype).ravel()) for side in sides for name in kinds]
        text = format_many(np.concatenate([array for _, _, array in arrays]), decimals) if arrays else []
        at = 0
        for side, name, array in arrays:
            side._disp_text[name] = text[at : at + len(array)]
            at += len(array)


def _side_block(out: list[str], side: VmfSide) -> None:
    plane, uaxis, vaxis = side._text
    t = "\t\t\t"
    out.append(f'\t\tside\n\t\t{{\n{t}"id" "{side.id}"\n{t}"plane" "{plane}"\n'
               f'{t}"material" {_quote(side.material)}\n{t}"uaxis" "{uaxis}"\n{t}"vaxis" "{vaxis}"\n'
               f'{t}"rotation" "{format_number(side.rotation)}"\n{t}"lightmapscale" "{int(side.lightmapscale)}"\n'
               f'{t}"smoothing_groups" "{int(side.smoothing_groups)}"\n')
    if side.disp is not None:
        _disp_block(out, side.disp, side._disp_text)
    out.append("\t\t}\n")


def _rows(out: list[str], depth: int, name: str, text: list[str], per_row: int) -> None:
    tabs = "\t" * depth
    out.append(f"{tabs}{name}\n{tabs}{{\n")
    for r in range(len(text) // per_row):
        out.append(f'{tabs}\t"row{r}" "{" ".join(text[r * per_row : (r + 1) * per_row])}"\n')
    out.append(f"{tabs}}}\n")


def _disp_block(out: list[str], disp: VmfDisp, text: dict[str, list[str]]) -> None:
    d = 3
    tabs = "\t" * d
    w = disp.size
    out.append(f"{tabs}dispinfo\n{tabs}{{\n")
    _kv(out, d + 1, "power", str(disp.power))
    _kv(out, d + 1, "startposition", f"[{format_numbers(disp.start_position)}]")
    _kv(out, d + 1, "flags", str(int(disp.flags)))
    _kv(out, d + 1, "elevation", format_number(disp.elevation))
    _kv(out, d + 1, "subdiv", str(int(disp.subdiv)))
    per_row = {"normals": 3 * w, "offsets": 3 * w, "offset_normals": 3 * w, "triangle_tags": 2 * (w - 1)}
    for name, _ in _DISP_ROWS:
        _rows(out, d + 1, name, text[name], per_row.get(name, w))
    t2 = "\t" * (d + 1)
    out.append(f"{t2}allowed_verts\n{t2}{{\n")
    _kv(out, d + 2, "10", " ".join(str(int(v)) for v in np.asarray(disp.allowed_verts).astype(np.int32)))
    out.append(f"{t2}}}\n")
    out.append(f"{tabs}}}\n")
