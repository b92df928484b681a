"""What a ``.glb`` export is asked for (:class:`GltfOptions`) and what it wrote
(:class:`ExportStats`, with the line ``sourcebsp export`` prints of it)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ...model.geometry import ModelSelection
from .._common import Units, unit_scale

if TYPE_CHECKING:
    from ...content.gamefs import GameFS

__all__ = ["ExportStats", "GltfOptions"]


@dataclass(frozen=True)
class GltfOptions:
    """What a map's ``.glb`` holds: the options of :func:`glb_bytes` and :func:`export_glb`.

    A bad ``units`` raises ValueError here, before any work.
    """

    models: ModelSelection = "all"  # "all", "world" or brush model indices
    include_tools: bool = False  # keep faces the game does not draw (nodraw, sky, hint, tools/ ...)
    units: Units = "hammer"  # or "meters"
    hdr: bool | None = None  # None: the LDR lightmaps when present, else the HDR ones; True / False: that kind
    props: bool = True  # the static prop nodes
    #: A mounted game (:func:`sourcebsp.content.mount`) to find the static props' models (and the
    #: textures) in, after the map's pakfile.
    game: GameFS | None = None
    #: Embed the base textures (PNG, at most ``texture_size`` texels a side, default 512) of the
    #: materials found in the pakfile or the game (see :mod:`.textures`).
    textures: bool = False
    texture_size: int | None = None
    #: The 3D skybox (the world's faces and props in ``sky_camera``'s area) as a node of its own,
    #: scaled by ``sky_camera``'s scale around the playable space, as a player sees it.
    skybox: bool = False
    #: Each drawn prop with the map's light on its vertices (``COLOR_0``, a mesh of its own, see
    #: :mod:`.proplight`); False shares one unlit mesh among a model's props.
    prop_lighting: bool = True

    def __post_init__(self) -> None:
        unit_scale(self.units)


@dataclass
class ExportStats:
    """What an export wrote."""

    triangles: int = 0
    vertices: int = 0
    meshes: int = 0
    materials: int = 0
    props: int = 0
    lightmap: tuple[int, int] | None = None  # atlas width, height
    mesh_names: list[str] = field(default_factory=list)
    material_names: list[str] = field(default_factory=list)
    props_meshed: int = 0  # static props drawn with their model's mesh
    props_missing: int = 0  # static props whose model (or its mesh files) was not found
    prop_models: int = 0  # distinct models read
    missing_models: list[str] = field(default_factory=list)  # "name: why", one per model not drawn
    textures: int = 0  # texture images embedded
    props_vertex_lit: int = 0  # props coloured by their .vhv vertex lighting
    props_ambient_lit: int = 0  # props coloured by the leaf ambient cube
    lighting_problems: list[str] = field(default_factory=list)  # .vhv files left out, and why

    def summary(self, output: str, options: GltfOptions) -> str:
        """The line ``sourcebsp export`` prints: what was written to ``output``."""
        atlas = f", lightmap atlas {self.lightmap[0]}x{self.lightmap[1]}" if self.lightmap else ""
        meshed = (f" ({self.props_meshed} drawn with the meshes of {self.prop_models} models, "
                  f"{self.props_missing} without a model found)") if options.game is not None and self.props else ""
        if self.props_vertex_lit or self.props_ambient_lit:
            meshed += (f", {self.props_vertex_lit} lit per vertex by the map, "
                       f"{self.props_ambient_lit} by the leaf ambient light")
        if options.textures:
            meshed += f", {self.textures} textures"
        return (f"{output}: {self.meshes} meshes, {self.triangles} triangles, "
                f"{self.materials} materials, {self.props} static props{meshed}{atlas}")

    def notes(self, options: GltfOptions) -> list[str]:
        """What the export left out or drew otherwise, one line each (``sourcebsp export``'s notes)."""
        return ([f"static prop model not drawn: {line}" for line in self.missing_models if options.game is not None]
                + [f"static prop lit by the ambient light instead: {line}" for line in self.lighting_problems])
