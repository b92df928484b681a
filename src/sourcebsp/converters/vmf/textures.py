"""Materials and texture axes of decompiled brush sides.

Material names come from ``texinfo -> texdata -> TEXDATA_STRING_DATA``, with
the renames vbsp makes undone:

* ``maps/<map>/<material>_<x>_<y>_<z>``: a copy of the material patched
  with the nearest ``env_cubemap`` (vbsp "fixing up env_cubemap materials");
* ``maps/<map>/<material>_wvt_patch``: a WorldVertexTransition patch;
* ``..._depth_<n>``: a cheap-water depth patch;

applied repeatedly, since patches nest (``maps/m/maps/m/water_1_2_3_depth_4``).

Tool textures.  vbsp shares one texinfo among the sides of every
``SURF_NODRAW`` material with the same texture vectors, so such a side may
name another tool material (a player clip side reading
``tools/toolsinvisibleladder``); and a side may have no material at all.
Such sides get the tool texture that their brush contents and surface flags
call for (bspflags.h ``CONTENTS_*`` / ``SURF_*``), by :func:`tool_category`,
with each game's name for it (:data:`TOOL_TEXTURES`); a name that is
already of the right family is kept (``tools/toolsclip_metal`` stays).
A named side keeps its name when its brush has a drawn side (the nodraw
edges of glass and grate brushes are ``toolsnodraw``, not
``toolsblockbullets`` or ``toolsinvisible``) and when the name is a tool
material of a family this module does not know (Vampire's
``tools/tools_shadow``); an areaportal brush's sides are always
``tools/toolsareaportal``.

Texture axes (``texinfo_t.textureVecsTexelsPerWorldUnits``): a row
``(sx, sy, sz, shift)`` gives ``scale = 1 / |s|`` and ``axis = s * scale``.
A side of a brush entity whose origin vbsp subtracted has ``shift`` reduced
by ``dot(s, origin)``, which is undone.  Texture vectors that cannot be an
axis pair of the side are replaced by Hammer's default world-aligned axes
with scale 0.25: zero vectors, and pairs whose projection normal ``u x v``
is perpendicular to the side (:func:`perpendicular_axes`; Hammer refuses
those, and vbsp's shared texinfos of nodraw and sky sides often give them).  ``lightmapscale`` is ``1 / |lightmapVecs[0].xyz|`` (16 when unset).
"""
from __future__ import annotations

import re

import numpy as np

from ...lump_ids import LumpId
from ...flags import Contents, Surf
from ...model.geometry import texture_names
from ...protocols import MapReader

__all__ = [
    "TOOL_TEXTURES", "clean_material_name", "tool_category", "game_of", "material_names",
    "side_materials", "texture_axes", "vector_axes", "default_axes", "perpendicular_axes", "PERPENDICULAR_LIMIT",
]

# CS:GO's bspflags.h reuses two current bits for its clip brushes.
CSGO_GRENADECLIP = 0x80000
CSGO_DRONECLIP = 0x100000

#: Tool texture of each category, per game family ("default" for the others).
TOOL_TEXTURES: dict[str, dict[str, str]] = {
    "default": {
        "nodraw": "tools/toolsnodraw", "clip": "tools/toolsclip", "playerclip": "tools/toolsplayerclip",
        "npcclip": "tools/toolsnpcclip", "hint": "tools/toolshint", "skip": "tools/toolsskip",
        "trigger": "tools/toolstrigger", "areaportal": "tools/toolsareaportal",
        "occluder": "tools/toolsoccluder", "ladder": "tools/toolsinvisibleladder",
        "blocklos": "tools/toolsblock_los", "blocklight": "tools/toolsblocklight",
        "blockbullets": "tools/toolsblockbullets", "invisible": "tools/toolsinvisible",
        "skybox": "tools/toolsskybox", "skybox2d": "tools/toolsskybox2d", "origin": "tools/toolsorigin",
    },
    "csgo": {"grenadeclip": "tools/toolsgrenadeclip", "droneclip": "tools/toolsdroneclip"},
    "left4dead2": {"climb": "tools/climb"},
}

# Names of each category (beyond TOOL_TEXTURES' own), so that a right name is kept.
_FAMILY_PREFIXES: list[tuple[str, str]] = [
    ("tools/toolsclip", "clip"), ("tools/toolsnodraw", "nodraw"), ("tools/toolsplayerclip", "playerclip"),
    ("tools/toolsnpcclip", "npcclip"), ("tools/toolsinvisibleladder", "ladder"), ("tools/climb", "climb"),
    ("tools/invismetal", "blockbullets"), ("tools/toolsblockbullets", "blockbullets"),
    ("tools/toolsblock_los", "blocklos"), ("tools/toolsblocklight", "blocklight"),
    ("tools/toolsinvisible", "invisible"), ("tools/toolstrigger", "trigger"), ("tools/toolshint", "hint"),
    ("tools/toolsskip", "skip"), ("tools/toolsareaportal", "areaportal"), ("tools/toolsoccluder", "occluder"),
    ("tools/toolsskybox2d", "skybox2d"), ("tools/toolsskybox", "skybox"), ("tools/toolsgrenadeclip", "grenadeclip"),
    ("tools/toolsdroneclip", "droneclip"), ("tools/toolsorigin", "origin"),
]

_PATCH = re.compile(r"^maps/[^/]+/(?P<name>.+?)(?:_-?\d+_-?\d+_-?\d+|_wvt_patch|_depth_-?\d+)$", re.IGNORECASE)
_DEPTH = re.compile(r"^(?P<name>.+)_depth_-?\d+$", re.IGNORECASE)


def clean_material_name(name: str) -> str:
    """The material a vbsp-patched name was made from (unchanged for other names)."""
    for _ in range(8):
        match = _PATCH.match(name) or (_DEPTH.match(name) if name.lower().startswith("maps/") else None)
        if match is None:
            break
        name = match.group("name")
    return name


def game_of(bsp: MapReader) -> str:
    """The tool-texture family of a map (a key of :data:`TOOL_TEXTURES`): its branch's
    vocabulary (:attr:`sourcebsp.variants.Variant.tool_textures`)."""
    family = bsp.variant.tool_textures
    return family if family in TOOL_TEXTURES else "default"


def tool_category(contents: int, flags: int, game: str = "default") -> str | None:
    """The tool texture category brush ``contents`` and side ``flags`` call for, or None."""
    c = int(contents) & 0xFFFFFFFF
    if flags & Surf.HINT:
        return "hint"
    if flags & Surf.SKIP:
        return "skip"
    if flags & Surf.SKY2D:
        return "skybox2d"
    if flags & Surf.SKY:
        return "skybox"
    if flags & Surf.TRIGGER:
        return "trigger"
    if c & Contents.AREAPORTAL:
        return "areaportal"
    if c & Contents.ORIGIN:
        return "origin"
    if c & Contents.LADDER:
        return "climb" if game == "left4dead2" and c & Contents.TEAM2 else "ladder"
    player, npc = c & Contents.PLAYERCLIP, c & Contents.MONSTERCLIP
    if player and npc:
        return "clip"
    if player:
        return "playerclip"
    if npc:
        return "npcclip"
    if game == "csgo" and c & CSGO_GRENADECLIP:
        return "grenadeclip"
    if game == "csgo" and c & CSGO_DRONECLIP:
        return "droneclip"
    if c & Contents.BLOCKLOS and not c & Contents.SOLID:
        return "blocklos"
    if c & Contents.OPAQUE and not c & Contents.SOLID:
        return "blocklight"
    if c & Contents.WINDOW:
        return "blockbullets"
    if c & Contents.GRATE:
        return "invisible"
    if c & (Contents.SOLID | Contents.WATER | Contents.SLIME):
        return "nodraw"
    return None


def _family(name: str) -> str | None:
    low = name.lower().replace("\\", "/")
    for prefix, family in _FAMILY_PREFIXES:
        if low.startswith(prefix):
            return family
    return None


def tool_name(category: str, game: str = "default") -> str:
    return TOOL_TEXTURES.get(game, {}).get(category) or TOOL_TEXTURES["default"].get(category, "tools/toolsnodraw")


def material_names(bsp: MapReader) -> list[str]:
    """The cleaned material name of every texdata entry (``""`` when missing)."""
    return [clean_material_name(name) for name in texture_names(bsp)]


def _side_material(name: str, flags: int, contents: int, drawn_brush: bool, game: str) -> tuple[str, bool]:
    """``(material, inferred)`` of one side: its own name, or the tool texture its contents call for."""
    portal = bool(contents & Contents.AREAPORTAL)
    if name and not portal:
        if not flags & Surf.NODRAW:
            return name, False
        # The nodraw sides of a drawn brush (glass and grate edges) are plain nodraw, as named; a
        # tool material this module does not know (Vampire's tools/tools_shadow) is the game's own.
        if drawn_brush or (_family(name) is None and name.casefold().startswith("tools/")):
            return name, False
    category = tool_category(contents, flags, game)
    if category is None and not name:
        category = "nodraw"
    if category is None or (name and _family(name) == category):
        return name, False
    return tool_name(category, game), True


def side_materials(texinfo_index: np.ndarray, contents: np.ndarray, bsp: MapReader,
                   names: list[str] | None = None, side_brush: np.ndarray | None = None) -> tuple[list[str], np.ndarray]:
    """The material of each side and whether it was restored from contents and flags.

    ``texinfo_index`` and ``contents`` (of the side's brush) are per side;
    ``side_brush`` (the brush of each side, grouped) tells the nodraw sides
    of a drawn brush (kept as named) from those of a tool brush.
    """
    game = game_of(bsp)
    names = material_names(bsp) if names is None else names
    texinfo = bsp.lump_or_none(LumpId.TEXINFO)
    n_ti = 0 if texinfo is None else len(texinfo)
    ti = np.asarray(texinfo_index, np.int64)
    ok = (ti >= 0) & (ti < n_ti)
    flags = np.zeros(len(ti), np.int64)
    texdata = np.full(len(ti), -1, np.int64)
    if texinfo is not None and n_ti:
        flags[ok] = texinfo["flags"][ti[ok]]
        texdata[ok] = texinfo["texdata"][ti[ok]]
    out: list[str] = []
    restored = np.zeros(len(ti), bool)
    drawn = np.zeros(len(ti), bool)  # the side's brush has a side that is drawn
    if side_brush is not None and len(ti):
        sb = np.asarray(side_brush, np.int64)
        per_brush = np.zeros(int(sb.max()) + 1, bool)
        np.logical_or.at(per_brush, sb, (flags & int(Surf.NODRAW | Surf.SKY | Surf.SKY2D | Surf.HINT
                                                     | Surf.SKIP | Surf.TRIGGER)) == 0)
        drawn = per_brush[sb]
    cache: dict[tuple[int, int, int, bool], tuple[str, bool]] = {}
    for i, (td, fl, co, dr) in enumerate(zip(texdata.tolist(), flags.tolist(), np.asarray(contents).tolist(),
                                             drawn.tolist())):
        key = (td, fl, co, dr)
        hit = cache.get(key)
        if hit is None:
            hit = _side_material(names[td] if 0 <= td < len(names) else "", fl, co, dr, game)
            cache[key] = hit
        out.append(hit[0])
        restored[i] = hit[1]
    return out, restored


# ---- axes -------------------------------------------------------------------------
_BASE_AXES = np.array([
    [[0, 0, 1], [1, 0, 0], [0, -1, 0]],  # floor
    [[0, 0, -1], [1, 0, 0], [0, -1, 0]],  # ceiling
    [[1, 0, 0], [0, 1, 0], [0, 0, -1]],  # west wall
    [[-1, 0, 0], [0, 1, 0], [0, 0, -1]],  # east wall
    [[0, 1, 0], [1, 0, 0], [0, 0, -1]],  # south wall
    [[0, -1, 0], [1, 0, 0], [0, 0, -1]],  # north wall
], np.float64)


def default_axes(normals: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Hammer's world-aligned texture axes for each normal: ``(u, v)``, each ``(N, 3)``."""
    normals = np.asarray(normals, np.float64).reshape(-1, 3)
    best = np.argmax(normals @ _BASE_AXES[:, 0].T + 1e-9 * np.arange(6, 0, -1), axis=1)
    return _BASE_AXES[best, 1], _BASE_AXES[best, 2]


#: Smallest ``|cos|`` between a side's normal and its texture projection normal (``u x v``).
#: Hammer rejects a side whose projection is perpendicular to it ("texture axis
#: perpendicular to face", at 1e-4); the margin covers the six decimals written.
PERPENDICULAR_LIMIT = 1e-3


def perpendicular_axes(u: np.ndarray, v: np.ndarray, normals: np.ndarray,
                       limit: float = PERPENDICULAR_LIMIT) -> np.ndarray:
    """Bool per side: the projection normal ``u x v`` is (nearly) perpendicular to the side's normal.

    Parallel or zero axes have no projection normal and count as perpendicular.
    """
    proj = np.cross(np.asarray(u, np.float64).reshape(-1, 3), np.asarray(v, np.float64).reshape(-1, 3))
    length = np.linalg.norm(proj, axis=1)
    normals = np.asarray(normals, np.float64).reshape(-1, 3)
    nlen = np.linalg.norm(normals, axis=1)
    cos: np.ndarray = np.abs(np.einsum("nj,nj->n", proj, normals)) / np.where(length * nlen > 0, length * nlen, 1.0)
    perpendicular: np.ndarray = (length <= 1e-9) | (cos < limit)
    return perpendicular


def texture_axes(texinfo_index: np.ndarray, normals: np.ndarray, origins: np.ndarray | None,
                 bsp: MapReader, rotations: np.ndarray | None = None) -> dict[str, np.ndarray]:
    """``uaxis``/``vaxis`` ``(N, 4)``, ``uscale``/``vscale`` ``(N,)`` and ``lightmapscale`` ``(N,)``.

    ``normals`` are the sides' world-space normals.  ``origins`` ``(N, 3)``
    is the origin vbsp subtracted from each side's brush entity (zeros for
    the world), or None; ``rotations`` ``(N, 3, 3)`` turns a brush entity's
    model into the world (its texture vectors turn with it), or None.
    """
    texinfo = bsp.lump_or_none(LumpId.TEXINFO)
    n = len(texinfo_index)
    normals = np.asarray(normals, np.float64).reshape(-1, 3)
    ti = np.asarray(texinfo_index, np.int64)
    ok = (ti >= 0) & (ti < (0 if texinfo is None else len(texinfo)))
    if texinfo is not None and ok.any():  # a damaged texinfo (NaN or infinite vectors) counts as none
        ok[ok] = np.isfinite(texinfo["texture_vecs"][ti[ok]]).all(axis=(1, 2)) & \
            np.isfinite(texinfo["lightmap_vecs"][ti[ok]]).all(axis=(1, 2))
    vecs = np.zeros((n, 2, 4))
    lvecs = np.zeros((n, 2, 4))
    if texinfo is not None and ok.any():
        vecs[ok] = texinfo["texture_vecs"][ti[ok]]
        lvecs[ok] = texinfo["lightmap_vecs"][ti[ok]]
    if rotations is not None and n:
        vecs[:, :, :3] = np.einsum("nij,nkj->nki", np.asarray(rotations, np.float64), vecs[:, :, :3])
    return vector_axes(vecs, lvecs, ok, normals, origins)


def vector_axes(vecs: np.ndarray, lvecs: np.ndarray, ok: np.ndarray, normals: np.ndarray,
                origins: np.ndarray | None = None) -> dict[str, np.ndarray]:
    """The VMF texture keys of sides from their texture vectors ``(N, 2, 4)`` (``texinfo_t``'s
    ``textureVecs``: s and t, each an axis scaled by 1 / scale, and a shift) and lightmap vectors
    (zeros: lightmap scale 16); sides not ``ok``, or whose axes are degenerate or perpendicular to
    them, get Hammer's default axes.  See :func:`texture_axes` for the keys returned."""
    n = len(vecs)
    normals = np.asarray(normals, np.float64).reshape(-1, 3)
    s = vecs[:, :, :3]
    length = np.linalg.norm(s, axis=2)
    axes = s / np.where(length > 1e-9, length, 1.0)[:, :, None]
    perpendicular = perpendicular_axes(axes[:, 0], axes[:, 1], normals)
    good = ok & np.all(length > 1e-6, axis=1) & ~perpendicular
    shift = vecs[:, :, 3].copy()
    if origins is not None:
        shift -= np.einsum("nkj,nj->nk", s, np.asarray(origins, np.float64))
    du, dv = default_axes(normals)
    uaxis = np.where(good[:, None], axes[:, 0], du)
    vaxis = np.where(good[:, None], axes[:, 1], dv)
    scale = np.where(good[:, None], 1.0 / np.where(length > 1e-9, length, 1.0), 0.25)
    shift = np.where(good[:, None], shift, 0.0)
    llen = np.linalg.norm(lvecs[:, 0, :3], axis=1)
    lightmap = np.where(llen > 1e-6, np.rint(1.0 / np.where(llen > 1e-6, llen, 1.0)), 16).astype(np.int64)
    lightmap = np.clip(lightmap, 1, 1 << 16)
    return {
        "uaxis": np.concatenate([uaxis, shift[:, :1]], axis=1),
        "vaxis": np.concatenate([vaxis, shift[:, 1:2]], axis=1),
        "uscale": scale[:, 0],
        "vscale": scale[:, 1],
        "lightmapscale": lightmap,
        "restored_axes": ~good,
        "perpendicular": ok & np.all(length > 1e-6, axis=1) & perpendicular,
    }
