"""The typed lump accessors both containers share: ``get_lump``, ``lump_or_none``,
``lump_or_raise``, ``bsp[key]`` and one attribute per lump (``bsp.planes``).

The overloads and attributes are generated from :data:`sourcebsp.lump_types.LUMP_TYPES`
(``python -m sourcebsp.lump_types``) into this one class; a container
(:class:`~sourcebsp.BspFile`, :class:`~sourcebsp.RespawnBsp`) says how it finds a lump's
index, whether it holds the lump, and how it decodes it.  What each accessor does when
the map has no such lump or keeps it raw is tabled in
:class:`~sourcebsp.protocols.MapReader`.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal, overload

from .codecs.base import RawLump
from .errors import BspFormatError, UnsupportedError
from .header import LumpEntry
from .lump_ids import LumpId
from .protocols import LumpAttr, LumpKey

if TYPE_CHECKING:
    # >>> generated: imports (from sourcebsp.lump_types.LUMP_TYPES by python -m sourcebsp.lump_types)
    from .codecs.entities import Entities
    from .codecs.gamelumps import GameLumps
    from .codecs.lighting import Lightmaps
    from .codecs.occlusion import Occlusion
    from .codecs.pakfile import Pakfile
    from .codecs.physics import PhysCollide, PhysDisp
    from .codecs.textures import StringData
    from .codecs.visibility import Visibility
    # <<< generated
    from .protocols import Array, ArrayLump

__all__ = ["TypedLumps"]


class TypedLumps:
    """The lump accessors of a container, written once over what the container says."""

    _decoded: dict[int, Any]  # values read (or set) so far, by lump index

    # ---- what each container says ----------------------------------------------------------
    def _index(self, key: LumpKey) -> int:
        """The container's index of the lump named by ``key`` (KeyError for no lump)."""
        raise NotImplementedError

    def _holds(self, index: int) -> bool:
        """Whether the map has lump ``index`` (in its file, or given a value since)."""
        raise NotImplementedError

    def _decode(self, index: int) -> Any:
        """Lump ``index`` decoded from the file (not kept)."""
        raise NotImplementedError

    def _check_open(self) -> None:
        raise NotImplementedError

    def _lump_offset(self, index: int) -> int:
        """Where lump ``index``'s bytes start, for errors (its directory offset)."""
        return self.entry(index).fileofs

    def lump_name(self, key: LumpKey) -> str:
        raise NotImplementedError

    def entry(self, key: LumpKey) -> LumpEntry:
        raise NotImplementedError

    def set_lump(self, key: LumpKey, value: Any) -> None:
        raise NotImplementedError

    # ---- the accessors -----------------------------------------------------------------------
    # >>> generated: get_lump (from sourcebsp.lump_types.LUMP_TYPES by python -m sourcebsp.lump_types)
    @overload
    def get_lump(self, key: Literal[LumpId.ENTITIES]) -> "Entities | RawLump": ...
    @overload
    def get_lump(self, key: Literal[LumpId.VISIBILITY]) -> "Visibility | RawLump": ...
    @overload
    def get_lump(self, key: Literal[LumpId.LIGHTING, LumpId.LIGHTING_HDR]) -> "Lightmaps | RawLump": ...
    @overload
    def get_lump(self, key: Literal[LumpId.OCCLUSION]) -> "Occlusion | RawLump": ...
    @overload
    def get_lump(self, key: Literal[LumpId.PHYSDISP]) -> "PhysDisp | RawLump": ...
    @overload
    def get_lump(self, key: Literal[LumpId.PHYSCOLLIDE, LumpId.PROP_BLOB]) -> "PhysCollide | RawLump": ...
    @overload
    def get_lump(self, key: Literal[LumpId.GAME_LUMP]) -> "GameLumps | RawLump": ...
    @overload
    def get_lump(self, key: Literal[LumpId.PAKFILE]) -> "Pakfile | RawLump": ...
    @overload
    def get_lump(self, key: Literal[LumpId.TEXDATA_STRING_DATA]) -> "StringData | RawLump": ...
    @overload
    def get_lump(self, key: "ArrayLump") -> "Array | RawLump": ...
    @overload
    def get_lump(self, key: LumpKey) -> Any: ...
    # <<< generated

    def get_lump(self, key: LumpKey) -> Any:
        """The decoded lump: a numpy array, a codec's object, or a :class:`~sourcebsp.RawLump`.

        With a :class:`~sourcebsp.LumpId` a type checker knows which.
        """
        self._check_open()
        index = self._index(key)
        if index not in self._decoded:
            self._decoded[index] = self._decode(index)
        return self._decoded[index]

    def __getitem__(self, key: LumpKey) -> Any:
        return self.get_lump(key)

    def __setitem__(self, key: LumpKey, value: Any) -> None:
        self.set_lump(key, value)

    # >>> generated: lump_or_none (from sourcebsp.lump_types.LUMP_TYPES by python -m sourcebsp.lump_types)
    @overload
    def lump_or_none(self, key: Literal[LumpId.ENTITIES], purpose: str | None = None) -> "Entities | None": ...
    @overload
    def lump_or_none(self, key: Literal[LumpId.VISIBILITY], purpose: str | None = None) -> "Visibility | None": ...
    @overload
    def lump_or_none(self, key: Literal[LumpId.LIGHTING, LumpId.LIGHTING_HDR],
                     purpose: str | None = None) -> "Lightmaps | None": ...
    @overload
    def lump_or_none(self, key: Literal[LumpId.OCCLUSION], purpose: str | None = None) -> "Occlusion | None": ...
    @overload
    def lump_or_none(self, key: Literal[LumpId.PHYSDISP], purpose: str | None = None) -> "PhysDisp | None": ...
    @overload
    def lump_or_none(self, key: Literal[LumpId.PHYSCOLLIDE, LumpId.PROP_BLOB],
                     purpose: str | None = None) -> "PhysCollide | None": ...
    @overload
    def lump_or_none(self, key: Literal[LumpId.GAME_LUMP], purpose: str | None = None) -> "GameLumps | None": ...
    @overload
    def lump_or_none(self, key: Literal[LumpId.PAKFILE], purpose: str | None = None) -> "Pakfile | None": ...
    @overload
    def lump_or_none(self, key: Literal[LumpId.TEXDATA_STRING_DATA],
                     purpose: str | None = None) -> "StringData | None": ...
    @overload
    def lump_or_none(self, key: "ArrayLump", purpose: str | None = None) -> "Array | None": ...
    @overload
    def lump_or_none(self, key: LumpKey, purpose: str | None = None) -> Any: ...
    # <<< generated

    def lump_or_none(self, key: LumpKey, purpose: str | None = None) -> Any:
        """The decoded lump, or None when the map has none.

        A lump kept raw (no layout known for it) gives None too, unless ``purpose``
        (what needs the lump: "build meshes") is given: then it raises
        :class:`~sourcebsp.UnsupportedError` naming the purpose.
        """
        index = self._index(key)
        self._check_open()
        if not self._holds(index):
            return None
        value = self.get_lump(index)
        if not isinstance(value, RawLump):
            return value
        if purpose is None:
            return None
        raise UnsupportedError(f"cannot {purpose}: {value.reason}", lump=self.lump_name(index),
                               offset=self._lump_offset(index))

    # >>> generated: lump_or_raise (from sourcebsp.lump_types.LUMP_TYPES by python -m sourcebsp.lump_types)
    @overload
    def lump_or_raise(self, key: Literal[LumpId.ENTITIES], purpose: str) -> "Entities": ...
    @overload
    def lump_or_raise(self, key: Literal[LumpId.VISIBILITY], purpose: str) -> "Visibility": ...
    @overload
    def lump_or_raise(self, key: Literal[LumpId.LIGHTING, LumpId.LIGHTING_HDR], purpose: str) -> "Lightmaps": ...
    @overload
    def lump_or_raise(self, key: Literal[LumpId.OCCLUSION], purpose: str) -> "Occlusion": ...
    @overload
    def lump_or_raise(self, key: Literal[LumpId.PHYSDISP], purpose: str) -> "PhysDisp": ...
    @overload
    def lump_or_raise(self, key: Literal[LumpId.PHYSCOLLIDE, LumpId.PROP_BLOB], purpose: str) -> "PhysCollide": ...
    @overload
    def lump_or_raise(self, key: Literal[LumpId.GAME_LUMP], purpose: str) -> "GameLumps": ...
    @overload
    def lump_or_raise(self, key: Literal[LumpId.PAKFILE], purpose: str) -> "Pakfile": ...
    @overload
    def lump_or_raise(self, key: Literal[LumpId.TEXDATA_STRING_DATA], purpose: str) -> "StringData": ...
    @overload
    def lump_or_raise(self, key: "ArrayLump", purpose: str) -> "Array": ...
    @overload
    def lump_or_raise(self, key: LumpKey, purpose: str) -> Any: ...
    # <<< generated

    def lump_or_raise(self, key: LumpKey, purpose: str) -> Any:
        """The decoded lump, for work that cannot go on without it: a missing lump raises
        :class:`~sourcebsp.BspFormatError`, one kept raw :class:`~sourcebsp.UnsupportedError`,
        both naming ``purpose``."""
        index = self._index(key)
        value = self.lump_or_none(index, purpose)
        if value is None:
            name = self.lump_name(index)
            raise BspFormatError(f"cannot {purpose}: the map has no {name} lump", lump=name,
                                 offset=self._lump_offset(index))
        return value

    # ---- typed lump attributes -------------------------------------------------------------
    # >>> generated: attributes (from sourcebsp.lump_types.LUMP_TYPES by python -m sourcebsp.lump_types)
    entities: LumpAttr["Entities"] = LumpAttr(LumpId.ENTITIES)
    planes: LumpAttr[Array] = LumpAttr(LumpId.PLANES)
    texdata: LumpAttr[Array] = LumpAttr(LumpId.TEXDATA)
    vertexes: LumpAttr[Array] = LumpAttr(LumpId.VERTEXES)
    visibility: LumpAttr["Visibility"] = LumpAttr(LumpId.VISIBILITY)
    nodes: LumpAttr[Array] = LumpAttr(LumpId.NODES)
    texinfo: LumpAttr[Array] = LumpAttr(LumpId.TEXINFO)
    faces: LumpAttr[Array] = LumpAttr(LumpId.FACES)
    lighting: LumpAttr["Lightmaps"] = LumpAttr(LumpId.LIGHTING)
    occlusion: LumpAttr["Occlusion"] = LumpAttr(LumpId.OCCLUSION)
    leafs: LumpAttr[Array] = LumpAttr(LumpId.LEAFS)
    faceids: LumpAttr[Array] = LumpAttr(LumpId.FACEIDS)
    edges: LumpAttr[Array] = LumpAttr(LumpId.EDGES)
    surfedges: LumpAttr[Array] = LumpAttr(LumpId.SURFEDGES)
    models: LumpAttr[Array] = LumpAttr(LumpId.MODELS)
    worldlights: LumpAttr[Array] = LumpAttr(LumpId.WORLDLIGHTS)
    leaffaces: LumpAttr[Array] = LumpAttr(LumpId.LEAFFACES)
    leafbrushes: LumpAttr[Array] = LumpAttr(LumpId.LEAFBRUSHES)
    brushes: LumpAttr[Array] = LumpAttr(LumpId.BRUSHES)
    brushsides: LumpAttr[Array] = LumpAttr(LumpId.BRUSHSIDES)
    areas: LumpAttr[Array] = LumpAttr(LumpId.AREAS)
    areaportals: LumpAttr[Array] = LumpAttr(LumpId.AREAPORTALS)
    propcollision: LumpAttr[Array] = LumpAttr(LumpId.PROPCOLLISION)
    prophulls: LumpAttr[Array] = LumpAttr(LumpId.PROPHULLS)
    prophullverts: LumpAttr[Array] = LumpAttr(LumpId.PROPHULLVERTS)
    proptris: LumpAttr[Array] = LumpAttr(LumpId.PROPTRIS)
    dispinfo: LumpAttr[Array] = LumpAttr(LumpId.DISPINFO)
    originalfaces: LumpAttr[Array] = LumpAttr(LumpId.ORIGINALFACES)
    physdisp: LumpAttr["PhysDisp"] = LumpAttr(LumpId.PHYSDISP)
    physcollide: LumpAttr["PhysCollide"] = LumpAttr(LumpId.PHYSCOLLIDE)
    vertnormals: LumpAttr[Array] = LumpAttr(LumpId.VERTNORMALS)
    vertnormalindices: LumpAttr[Array] = LumpAttr(LumpId.VERTNORMALINDICES)
    disp_lightmap_alphas: LumpAttr[Array] = LumpAttr(LumpId.DISP_LIGHTMAP_ALPHAS)
    disp_verts: LumpAttr[Array] = LumpAttr(LumpId.DISP_VERTS)
    disp_lightmap_sample_positions: LumpAttr[Array] = LumpAttr(LumpId.DISP_LIGHTMAP_SAMPLE_POSITIONS)
    game_lump: LumpAttr["GameLumps"] = LumpAttr(LumpId.GAME_LUMP)
    leafwaterdata: LumpAttr[Array] = LumpAttr(LumpId.LEAFWATERDATA)
    primitives: LumpAttr[Array] = LumpAttr(LumpId.PRIMITIVES)
    primverts: LumpAttr[Array] = LumpAttr(LumpId.PRIMVERTS)
    primindices: LumpAttr[Array] = LumpAttr(LumpId.PRIMINDICES)
    pakfile: LumpAttr["Pakfile"] = LumpAttr(LumpId.PAKFILE)
    clipportalverts: LumpAttr[Array] = LumpAttr(LumpId.CLIPPORTALVERTS)
    cubemaps: LumpAttr[Array] = LumpAttr(LumpId.CUBEMAPS)
    texdata_string_data: LumpAttr["StringData"] = LumpAttr(LumpId.TEXDATA_STRING_DATA)
    texdata_string_table: LumpAttr[Array] = LumpAttr(LumpId.TEXDATA_STRING_TABLE)
    overlays: LumpAttr[Array] = LumpAttr(LumpId.OVERLAYS)
    leafmindisttowater: LumpAttr[Array] = LumpAttr(LumpId.LEAFMINDISTTOWATER)
    face_macro_texture_info: LumpAttr[Array] = LumpAttr(LumpId.FACE_MACRO_TEXTURE_INFO)
    disp_tris: LumpAttr[Array] = LumpAttr(LumpId.DISP_TRIS)
    prop_blob: LumpAttr["PhysCollide"] = LumpAttr(LumpId.PROP_BLOB)
    wateroverlays: LumpAttr[Array] = LumpAttr(LumpId.WATEROVERLAYS)
    leaf_ambient_index_hdr: LumpAttr[Array] = LumpAttr(LumpId.LEAF_AMBIENT_INDEX_HDR)
    leaf_ambient_index: LumpAttr[Array] = LumpAttr(LumpId.LEAF_AMBIENT_INDEX)
    lighting_hdr: LumpAttr["Lightmaps"] = LumpAttr(LumpId.LIGHTING_HDR)
    worldlights_hdr: LumpAttr[Array] = LumpAttr(LumpId.WORLDLIGHTS_HDR)
    leaf_ambient_lighting_hdr: LumpAttr[Array] = LumpAttr(LumpId.LEAF_AMBIENT_LIGHTING_HDR)
    leaf_ambient_lighting: LumpAttr[Array] = LumpAttr(LumpId.LEAF_AMBIENT_LIGHTING)
    xzippakfile: LumpAttr[Any] = LumpAttr(LumpId.XZIPPAKFILE, raw_ok=True)
    faces_hdr: LumpAttr[Array] = LumpAttr(LumpId.FACES_HDR)
    map_flags: LumpAttr[Array] = LumpAttr(LumpId.MAP_FLAGS)
    overlay_fades: LumpAttr[Array] = LumpAttr(LumpId.OVERLAY_FADES)
    overlay_system_levels: LumpAttr[Array] = LumpAttr(LumpId.OVERLAY_SYSTEM_LEVELS)
    physlevel: LumpAttr[Any] = LumpAttr(LumpId.PHYSLEVEL, raw_ok=True)
    disp_multiblend: LumpAttr[Any] = LumpAttr(LumpId.DISP_MULTIBLEND, raw_ok=True)
    # <<< generated
