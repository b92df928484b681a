"""What the layers above the codecs read from a map: a typed protocol of the container.

:mod:`sourcebsp.writeplan`, :mod:`sourcebsp.queries`, :mod:`sourcebsp.model`
and the converters take a :class:`MapReader` instead of importing
:class:`~sourcebsp.BspFile`, so no import runs from them back up to the
container, and a type checker still sees each lump's type.
:class:`~sourcebsp.BspFile` satisfies it (checked by mypy in the tests).
"""
from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, Iterator, Literal, Protocol, Union, overload

from .codecs.base import Codec, RawLump
from .header import Endian, Header, LumpEntry
from .lump_ids import LumpId

if TYPE_CHECKING:
    from pathlib import Path

    import numpy.typing as npt

    from .codecs.entities import Entities
    from .codecs.gamelumps import GameLumps
    from .codecs.lighting import Lightmaps
    from .codecs.occlusion import Occlusion
    from .codecs.pakfile import Pakfile
    from .codecs.physics import PhysCollide, PhysDisp
    from .codecs.staticprops import DetailProps, StaticProps
    from .codecs.textures import StringData
    from .codecs.visibility import Visibility

    Array = npt.NDArray[Any]
    # The lumps whose built-in layouts are fixed-size record tables (numpy arrays).
    ArrayLump = Literal[
        LumpId.PLANES, LumpId.TEXDATA, LumpId.VERTEXES, LumpId.NODES, LumpId.TEXINFO, LumpId.FACES,
        LumpId.LEAFS, LumpId.FACEIDS, LumpId.EDGES, LumpId.SURFEDGES, LumpId.MODELS, LumpId.WORLDLIGHTS,
        LumpId.LEAFFACES, LumpId.LEAFBRUSHES, LumpId.BRUSHES, LumpId.BRUSHSIDES, LumpId.AREAS,
        LumpId.AREAPORTALS, LumpId.PROPCOLLISION, LumpId.PROPHULLS, LumpId.PROPHULLVERTS, LumpId.PROPTRIS,
        LumpId.DISPINFO, LumpId.ORIGINALFACES, LumpId.VERTNORMALS, LumpId.VERTNORMALINDICES,
        LumpId.DISP_LIGHTMAP_ALPHAS, LumpId.DISP_VERTS, LumpId.DISP_LIGHTMAP_SAMPLE_POSITIONS,
        LumpId.LEAFWATERDATA, LumpId.PRIMITIVES, LumpId.PRIMVERTS, LumpId.PRIMINDICES,
        LumpId.CLIPPORTALVERTS, LumpId.CUBEMAPS, LumpId.TEXDATA_STRING_TABLE, LumpId.OVERLAYS,
        LumpId.LEAFMINDISTTOWATER, LumpId.FACE_MACRO_TEXTURE_INFO, LumpId.DISP_TRIS, LumpId.WATEROVERLAYS,
        LumpId.LEAF_AMBIENT_INDEX_HDR, LumpId.LEAF_AMBIENT_INDEX, LumpId.WORLDLIGHTS_HDR,
        LumpId.LEAF_AMBIENT_LIGHTING_HDR, LumpId.LEAF_AMBIENT_LIGHTING, LumpId.FACES_HDR, LumpId.MAP_FLAGS,
        LumpId.OVERLAY_FADES, LumpId.OVERLAY_SYSTEM_LEVELS,
    ]

__all__ = ["LumpKey", "MapReader", "MapSource"]

# A lump named by its id, its number or its name ("planes").
LumpKey = LumpId | int | str


class MapReader(Protocol):
    """The reading side of a map (what :class:`~sourcebsp.BspFile` offers to the layers above).

    ``find_lump`` gives None when the map has no such lump (or keeps it raw);
    ``require_lump`` gives None when it has none and raises when it is kept
    raw, naming ``purpose``; ``has_lump`` answers whether it is there.
    """

    header: Header

    @property
    def path(self) -> Path | None: ...

    @property
    def version(self) -> int: ...

    @property
    def endian(self) -> Endian: ...

    def lump_name(self, key: LumpKey) -> str: ...

    def entry(self, key: LumpKey) -> LumpEntry: ...

    def has_lump(self, key: LumpKey) -> bool: ...

    def is_loaded(self, key: LumpKey) -> bool: ...

    def codec(self, key: LumpKey) -> Codec | None: ...

    def raw_lump(self, key: LumpKey) -> memoryview: ...

    def lump_bytes(self, key: LumpKey) -> memoryview: ...

    def set_lump(self, key: LumpKey, value: Any) -> None: ...

    @property
    def file_size(self) -> int: ...

    def count(self, key: LumpKey) -> int | None: ...

    def iter_lumps(self) -> Iterator[tuple[LumpId, LumpEntry]]: ...

    # The typed lump attributes the layers above read (BspFile declares them all).
    @property
    def entities(self) -> "Entities": ...

    @property
    def planes(self) -> "Array": ...

    @property
    def vertexes(self) -> "Array": ...

    @property
    def dispinfo(self) -> "Array": ...

    @property
    def static_props(self) -> "StaticProps": ...

    @property
    def detail_props(self) -> "DetailProps | None": ...

    @overload
    def get_lump(self, key: Literal[LumpId.ENTITIES]) -> "Entities | RawLump": ...
    @overload
    def get_lump(self, key: Literal[LumpId.VISIBILITY]) -> "Visibility | RawLump": ...
    @overload
    def get_lump(self, key: Literal[LumpId.LIGHTING, LumpId.LIGHTING_HDR]) -> "Lightmaps | RawLump": ...
    @overload
    def get_lump(self, key: Literal[LumpId.OCCLUSION]) -> "Occlusion | RawLump": ...
    @overload
    def get_lump(self, key: Literal[LumpId.PHYSCOLLIDE, LumpId.PROP_BLOB]) -> "PhysCollide | RawLump": ...
    @overload
    def get_lump(self, key: Literal[LumpId.PHYSDISP]) -> "PhysDisp | RawLump": ...
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

    @overload
    def find_lump(self, key: Literal[LumpId.ENTITIES]) -> "Entities | None": ...
    @overload
    def find_lump(self, key: Literal[LumpId.VISIBILITY]) -> "Visibility | None": ...
    @overload
    def find_lump(self, key: Literal[LumpId.LIGHTING, LumpId.LIGHTING_HDR]) -> "Lightmaps | None": ...
    @overload
    def find_lump(self, key: Literal[LumpId.OCCLUSION]) -> "Occlusion | None": ...
    @overload
    def find_lump(self, key: Literal[LumpId.PHYSCOLLIDE, LumpId.PROP_BLOB]) -> "PhysCollide | None": ...
    @overload
    def find_lump(self, key: Literal[LumpId.PHYSDISP]) -> "PhysDisp | None": ...
    @overload
    def find_lump(self, key: Literal[LumpId.GAME_LUMP]) -> "GameLumps | None": ...
    @overload
    def find_lump(self, key: Literal[LumpId.PAKFILE]) -> "Pakfile | None": ...
    @overload
    def find_lump(self, key: Literal[LumpId.TEXDATA_STRING_DATA]) -> "StringData | None": ...
    @overload
    def find_lump(self, key: "ArrayLump") -> "Array | None": ...
    @overload
    def find_lump(self, key: LumpKey) -> Any: ...

    @overload
    def require_lump(self, key: Literal[LumpId.ENTITIES], purpose: str) -> "Entities | None": ...
    @overload
    def require_lump(self, key: Literal[LumpId.VISIBILITY], purpose: str) -> "Visibility | None": ...
    @overload
    def require_lump(self, key: Literal[LumpId.LIGHTING, LumpId.LIGHTING_HDR],
                     purpose: str) -> "Lightmaps | None": ...
    @overload
    def require_lump(self, key: Literal[LumpId.GAME_LUMP], purpose: str) -> "GameLumps | None": ...
    @overload
    def require_lump(self, key: Literal[LumpId.PAKFILE], purpose: str) -> "Pakfile | None": ...
    @overload
    def require_lump(self, key: Literal[LumpId.TEXDATA_STRING_DATA], purpose: str) -> "StringData | None": ...
    @overload
    def require_lump(self, key: "ArrayLump", purpose: str) -> "Array | None": ...
    @overload
    def require_lump(self, key: LumpKey, purpose: str) -> Any: ...

    def need_lump(self, key: LumpKey, purpose: str) -> Any: ...


#: A map, or the path of one (the converters open it and close it afterwards).
MapSource = Union[MapReader, str, "os.PathLike[str]"]
