"""Entities of a decompiled map: the entity lump, static props, cubemaps, overlays; the world
entity, outputs and player-start cameras both VMF builders (Source's and Titanfall's) write.

* Every entity of the entity lump is written with its keys in map order,
  except ``hammerid`` (it becomes the entity's VMF ``id``), a brush
  entity's ``model`` (``*N``: its brushes are written instead) and the keys
  vbsp adds and sets again on every compile (:data:`COMPILER_KEYS`:
  ``portalnumber``, ``occludernumber``, worldspawn's ``world_mins`` /
  ``world_maxs``).  Outputs go in the ``connections`` block, their text
  unchanged (comma or ESC separated, as the map has them).
* Static props become ``prop_static`` entities with the keys Hammer's FGD
  gives them, for the fields the map's ``StaticPropLump_t`` version has
  (gamebspfile.h ``STATIC_PROP_*`` flags turned back into their keys).  A
  prop lit from a lighting origin gets an ``info_lighting`` entity there.
* Cubemap samples become ``env_cubemap`` (``cubemapsize`` is stored as is;
  :mod:`~sourcebsp.converters.vmf.decompile` fills ``sides`` with the sides whose
  materials vbsp patched for the sample).
* Overlays become ``info_overlay``: ``vecUVPoints[0..2].z`` hold BasisU,
  ``vecUVPoints[3].z`` is 1 when BasisV is flipped, ``BasisV = cross(normal,
  BasisU)`` (negated when flipped); fade distances come from OVERLAY_FADES
  (square roots); ``sides`` are the VMF ids of the brush sides the overlay's
  faces were cut from.

What the compiler removes for good and cannot be restored: ``func_instance``
(collapsed into its contents), ``func_viscluster``, hidden visgroups,
``info_overlay`` angles, prop_static keys vbsp ignores, and the map's own
editor-only blocks (visgroups, groups, cameras).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterable

import numpy as np

from ...codecs.entities import Output
from ...codecs.overlays import split_render_order
from ...flags import StaticPropFlags
from ...lump_ids import LumpId
from ...model.geometry import angles_matrix
from ...protocols import MapReader
from .writer import VmfEntity, format_number, format_numbers

if TYPE_CHECKING:
    from ...codecs.entities import Entity

__all__ = [
    "COMPILER_KEYS", "split_keys", "static_prop_pairs", "cubemap_pairs", "overlay_pairs",
    "STATIC_PROP_FLAG_KEYS", "PLAYER_STARTS", "parse_vector", "parse_int", "output_text", "format_outputs",
    "world_entity", "player_cameras",
]

#: Keys vbsp adds to entities, dropped from the VMF (vbsp writes them again).
COMPILER_KEYS = frozenset({"hammerid", "portalnumber", "occludernumber", "world_mins", "world_maxs"})

#: gamebspfile.h STATIC_PROP_* flag bits set from Hammer keys (Source 2013 and older).
STATIC_PROP_FLAG_KEYS = (
    (StaticPropFlags.IGNORE_NORMALS, "ignorenormals"),
    (StaticPropFlags.NO_SHADOW, "disableshadows"),
    (StaticPropFlags.NO_PER_VERTEX_LIGHTING, "disablevertexlighting"),
    (StaticPropFlags.NO_SELF_SHADOWING, "disableselfshadowing"),
)
_DEFAULT_LIGHTMAP_RESOLUTION = 32  # the FGD default of lightmapresolutionx / y
# m_FlagsEx (CS:GO branch)
_FLAGS_EX_KEYS = ((0x1, "disableshadowdepth"), (0x2, "disableflashlight"), (0x4, "enablelightbounce"))


def split_keys(pairs: Iterable[tuple[str, str]], *, drop: Iterable[str] = ()) -> tuple[list[tuple[str, str]],
                                                                                     list[tuple[str, str]]]:
    """``(keys, connections)`` of an entity's pairs: outputs apart, compiler keys dropped.

    A pair is an output when its value parses as one
    (:meth:`~sourcebsp.codecs.entities.Output.parse`: five fields, a number
    for the delay, an integer for the times to fire), whatever its name
    (``OnTrigger``, but also ``BombExplode``), with no more than the five
    fields a VMF connection holds (Vampire's longer outputs stay plain keys).
    """
    dropped = {k.casefold() for k in drop} | COMPILER_KEYS
    keys: list[tuple[str, str]] = []
    outputs: list[tuple[str, str]] = []
    for key, value in pairs:
        folded = key.casefold()
        if folded in dropped:
            continue
        parsed = Output.parse(key, value)
        # Vampire's outputs carry extra fields after "times", which VMF connections cannot hold.
        if parsed is not None and not parsed.extra:
            outputs.append((key, value))
        else:
            keys.append((key, value))
    return keys, outputs


def parse_vector(text: str | None) -> np.ndarray | None:
    """The three finite numbers of a key's value (``origin``, ``angles``), or None."""
    try:
        values = [float(p) for p in (text or "").split()]
    except ValueError:
        return None
    return np.array(values) if len(values) == 3 and np.all(np.isfinite(values)) else None


def parse_int(text: str | None) -> int | None:
    """A key's value as an integer, or None."""
    try:
        return int(str(text).strip())
    except (TypeError, ValueError):
        return None


_ESC = "\x1b"


def output_text(key: str, value: str, io_format: str) -> str:
    """An output's value with the separator of ``io_format``.

    Hammer 4.x (``"old"``) separates the five fields with commas, later
    Hammers (``"new"``) with ESC (0x1B); ``"map"`` keeps what the map has.
    A field holding a comma keeps ESC.
    """
    parsed = Output.parse(key, value)
    if io_format == "map" or parsed is None:
        return value
    fields = value.split(parsed.separator)
    if io_format == "old" and any("," in f for f in fields):
        return value
    return ("," if io_format == "old" else _ESC).join(fields)


def format_outputs(outputs: list[tuple[str, str]], io_format: str) -> list[tuple[str, str]]:
    """Each output of an entity with the separator of ``io_format`` (:func:`output_text`)."""
    return [(k, output_text(k, v, io_format)) for k, v in outputs]


def world_entity(worldspawn: Entity | None, io_format: str = "map") -> tuple[VmfEntity, int]:
    """The VMF world entity (id 1) with worldspawn's keys and outputs, and the map's ``mapversion``."""
    pairs: list[tuple[str, str]] = [("classname", "worldspawn")]
    outputs: list[tuple[str, str]] = []
    mapversion = 1
    if worldspawn is not None:
        keys, outputs = split_keys(worldspawn.items(), drop=("classname",))
        outputs = format_outputs(outputs, io_format)
        pairs += keys
        mapversion = parse_int(worldspawn.get("mapversion")) or 1
    return VmfEntity(1, pairs, outputs), mapversion


#: Classes where a player starts: a Hammer camera is put at each.
PLAYER_STARTS = frozenset({
    "info_player_start", "info_player_terrorist", "info_player_counterterrorist", "info_player_teamspawn",
    "info_player_deathmatch", "info_player_combine", "info_player_rebel", "info_survivor_position",
})
_EYE_HEIGHT = 64.0
_MAX_CAMERAS = 16


def player_cameras(entities: list[Any]) -> list[tuple[np.ndarray, np.ndarray]]:
    """``(position, look)`` of a camera at eye height over each player start, looking along its angles."""
    out = []
    for e in entities:
        if (e.classname or "").casefold() not in PLAYER_STARTS:
            continue
        origin = parse_vector(e.get("origin"))
        if origin is None:
            continue
        angles = parse_vector(e.get("angles"))
        forward = angles_matrix(angles if angles is not None else np.zeros(3))[:, 0]
        position = origin + [0.0, 0.0, _EYE_HEIGHT]
        out.append((position, position + 256.0 * forward))
        if len(out) == _MAX_CAMERAS:
            break
    return out


def _vec(values: Any) -> str:
    return format_numbers(np.asarray(values, np.float64).ravel())


# ---- static props -----------------------------------------------------------------
def static_prop_pairs(bsp: MapReader) -> list[tuple[list[tuple[str, str]], tuple[float, float, float] | None]]:
    """``(pairs, lighting_origin)`` per static prop, ready for a ``prop_static`` entity.

    ``lighting_origin`` is where an ``info_lighting`` must go (None when the
    prop has none).
    """
    if bsp.lump_or_none(LumpId.GAME_LUMP) is None:
        return []
    props = bsp.static_props
    if props is None or not len(props):
        return []
    names = props.model_names()
    rec = props.props
    fields = set(rec.dtype.names or ())
    csgo = "flags_ex" in fields
    # Vindictus's scale array: a "scale" key on every prop of its sub-lump, as BSPSource writes.
    scales = props.scale_vectors() if props.scales is not None else None
    out: list[tuple[list[tuple[str, str]], tuple[float, float, float] | None]] = []
    for i, model in enumerate(names):
        r = rec[i]
        pairs = [("classname", "prop_static"), ("angles", _vec(r["angles"]))]
        flags = int(r["flags"]) if "flags" in fields else 0
        fade_min, fade_max = float(r["fade_min_dist"]), float(r["fade_max_dist"])
        if fade_min <= 0 and fade_max <= 0:
            fade_min = -1.0  # Hammer's "no fade" default
        pairs += [("fademaxdist", format_number(fade_max)), ("fademindist", format_number(fade_min))]
        if "forced_fade_scale" in fields:
            pairs.append(("fadescale", format_number(float(r["forced_fade_scale"]))))
        for bit, key in STATIC_PROP_FLAG_KEYS:
            pairs.append((key, "1" if flags & bit else "0"))
        if csgo:
            pairs.append(("drawinfastreflection", "1" if flags & StaticPropFlags.SCREEN_SPACE_FADE else "0"))
            for ex_bit, key in _FLAGS_EX_KEYS:
                pairs.append((key, "1" if int(r["flags_ex"]) & ex_bit else "0"))
        else:
            pairs.append(("screenspacefade", "1" if flags & StaticPropFlags.SCREEN_SPACE_FADE else "0"))
        if "lightmap_resolution_x" in fields:
            # vbsp stores no resolution for a prop without lightmaps: Hammer's default (32) then.
            res_x, res_y = int(r["lightmap_resolution_x"]), int(r["lightmap_resolution_y"])
            if flags & StaticPropFlags.NO_PER_TEXEL_LIGHTING and not res_x and not res_y:
                res_x = res_y = _DEFAULT_LIGHTMAP_RESOLUTION
            pairs += [("generatelightmaps", "0" if flags & StaticPropFlags.NO_PER_TEXEL_LIGHTING else "1"),
                      ("lightmapresolutionx", str(res_x)), ("lightmapresolutiony", str(res_y))]
        if "min_dx_level" in fields:
            pairs += [("maxdxlevel", str(int(r["max_dx_level"]))), ("mindxlevel", str(int(r["min_dx_level"])))]
        if "min_cpu_level" in fields:
            pairs += [(k, str(int(r[f]))) for k, f in (("mincpulevel", "min_cpu_level"), ("maxcpulevel", "max_cpu_level"),
                                                     ("mingpulevel", "min_gpu_level"), ("maxgpulevel", "max_gpu_level"))]
        if "diffuse_modulation" in fields:
            color = np.asarray(r["diffuse_modulation"]).astype(int).tolist()
            pairs += [("rendercolor", " ".join(map(str, color[:3]))), ("renderamt", str(color[3]))]
        if "disable_x360" in fields:
            pairs.append(("disableX360", str(int(r["disable_x360"]))))
        if "uniform_scale" in fields:
            pairs.append(("modelscale", format_number(float(r["uniform_scale"]))))
        if scales is not None:
            pairs.append(("scale", " ".join(format_number(float(v)) for v in scales[i])))
        pairs += [("model", model), ("skin", str(int(r["skin"]))), ("solid", str(int(r["solid"])))]
        if "targetname" in fields:
            name = bytes(r["targetname"]).split(b"\0", 1)[0].decode("utf-8", "replace")
            if name:
                pairs.append(("targetname", name))
        pairs.append(("origin", _vec(r["origin"])))
        lighting = None
        if flags & StaticPropFlags.USE_LIGHTING_ORIGIN:
            lo = np.asarray(r["lighting_origin"], np.float64)
            if np.all(np.isfinite(lo)):
                lighting = (float(lo[0]), float(lo[1]), float(lo[2]))
        out.append((pairs, lighting))
    return out


# ---- cubemaps ---------------------------------------------------------------------
def cubemap_pairs(bsp: MapReader) -> list[list[tuple[str, str]]]:
    cubemaps = bsp.lump_or_none(LumpId.CUBEMAPS)
    if cubemaps is None:
        return []
    return [
        [("classname", "env_cubemap"), ("cubemapsize", str(int(c["size"]))), ("sides", ""),
         ("origin", _vec(c["origin"]))]
        for c in cubemaps
    ]


# ---- overlays ---------------------------------------------------------------------
def overlay_pairs(bsp: MapReader, face_side_ids: np.ndarray, materials: list[str]) -> list[list[tuple[str, str]]]:
    """``info_overlay`` keys of every overlay; ``face_side_ids`` gives a VMF side id per face (-1: none)."""
    overlays = bsp.lump_or_none(LumpId.OVERLAYS)
    if overlays is None or not len(overlays):
        return []
    texinfo = bsp.lump_or_none(LumpId.TEXINFO)
    fades = bsp.lump_or_none(LumpId.OVERLAY_FADES)
    count, order = split_render_order(overlays)
    out = []
    for i, o in enumerate(overlays):
        uv = np.asarray(o["uv_points"], np.float64)
        normal = np.asarray(o["basis_normal"], np.float64)
        basis_u = uv[:3, 2].copy()
        basis_v = np.cross(normal, basis_u)
        if uv[3, 2] > 0.5:
            basis_v = -basis_v
        faces = np.asarray(o["faces"][: int(count[i])], np.int64)
        valid = (faces >= 0) & (faces < len(face_side_ids))
        ids = face_side_ids[faces[valid]]
        sides = list(dict.fromkeys(int(s) for s in ids if s >= 0))
        ti = int(o["texinfo"])
        material = ""
        if texinfo is not None and 0 <= ti < len(texinfo):
            td = int(texinfo["texdata"][ti])
            material = materials[td] if 0 <= td < len(materials) else ""
        origin = _vec(o["origin"])
        pairs = [
            ("classname", "info_overlay"), ("angles", "0 0 0"),
            ("BasisNormal", _vec(normal)), ("BasisOrigin", origin),
            ("BasisU", _vec(basis_u)), ("BasisV", _vec(basis_v)),
            ("StartU", format_number(o["u"][0])), ("EndU", format_number(o["u"][1])),
            ("StartV", format_number(o["v"][0])), ("EndV", format_number(o["v"][1])),
        ]
        fade_min, fade_max = -1.0, 0.0
        if fades is not None and i < len(fades):
            lo, hi = float(fades["fade_dist_min_sq"][i]), float(fades["fade_dist_max_sq"][i])
            fade_min = float(np.sqrt(lo)) if lo > 0 else -1.0
            fade_max = float(np.sqrt(hi)) if hi > 0 else 0.0
        pairs.append(("fademindist", format_number(fade_min)))
        if fade_max > 0:
            pairs.append(("fademaxdist", format_number(fade_max)))
        pairs += [("material", material), ("RenderOrder", str(int(order[i]))), ("sides", " ".join(map(str, sides)))]
        pairs += [(f"uv{k}", _vec([uv[k, 0], uv[k, 1], 0.0])) for k in range(4)]
        pairs.append(("origin", origin))
        out.append(pairs)
    return out
