"""Decompile a compiled map back into a Hammer VMF.

>>> from sourcebsp.converters.vmf import decompile          # doctest: +SKIP
>>> stats = decompile("de_dust2.bsp", "de_dust2_d.vmf")     # doctest: +SKIP

What comes back (details in the modules named):

* world brushes, ``func_detail`` and brush entities, with sides textured
  from their texinfo and tool textures restored from brush contents and
  surface flags (:mod:`~sourcebsp.model.brushes`,
  :mod:`~sourcebsp.converters.vmf.textures`, :mod:`~sourcebsp.converters.vmf.decompile`);
  the plane every side's three points define is its BSP plane (normal
  within 1e-5 per component, distance within 1e-3:
  :data:`~sourcebsp.converters.vmf.geometry.PLANE_RULE`); texture axes whose
  projection is perpendicular to the side are replaced by Hammer's default axes;
* rotated brush entities turned into place, their ``angles`` dropped, except
  the classes whose ``angles`` is a direction or is zeroed by the game
  (:data:`~sourcebsp.converters.vmf.decompile.MOVEDIR_CLASSES`,
  :data:`~sourcebsp.converters.vmf.decompile.ANGLES_ZEROED_CLASSES`);
* ``func_ladder`` (from ``CONTENTS_LADDER`` world brushes),
  ``func_areaportal`` brushes (from ``CONTENTS_AREAPORTAL``, owners from the
  AREAPORTALS lump or, when it is empty, vbsp's numbering, targets and
  referrers: :mod:`~sourcebsp.converters.vmf.areaportals`) and
  ``func_occluder`` brushes (from the OCCLUSION lump);
  water brushes come back as world brushes with their contents' materials;
* every entity of the entity lump with its keys and outputs, static props
  as ``prop_static``, cubemap samples as ``env_cubemap`` with the sides
  whose materials vbsp patched for them, overlays as ``info_overlay``
  (:mod:`~sourcebsp.converters.vmf.entities`);
* displacements as ``dispinfo`` blocks (:mod:`~sourcebsp.converters.vmf.disp`);
* Hammer's side ids from the FACEIDS lump, entity ids from ``hammerid``;
* visgroups for what was rebuilt (Detail, Areaportals, Ladders,
  Displacements, Reconstructed) and a camera at each player start;
* with ``visclusters``, a ``func_viscluster`` box around each cluster only
  a func_viscluster explains (:func:`~sourcebsp.converters.vmf.decompile.viscluster_boxes`).

:func:`decompile_report` gives a fidelity report; ``check=True`` runs the
compile-readiness rules (:mod:`~sourcebsp.converters.vmf.checks`).

What cannot come back, because the compiler does not keep it: brushes made
only of hint and skip sides (vbsp keeps no brush for them), the brushes of
displacements (a brush is made for each displacement instead),
``func_instance`` (collapsed into its contents), the shape of a
``func_viscluster`` (only a box around its leaves, and none for one leaf), the
map's own visgroups, groups, hidden objects and cameras, ``info_overlay``
angles, displacement sculpting data beyond the final vertex offsets
(``offsets``, ``elevation``, forced triangle tags), texture ``rotation``
(folded into the axes), the grouping of detail brushes into separate
``func_detail`` entities (all of them go into one), the mapper's own
plane points (only the plane they define survives), and the owner of an
areaportal brush when the AREAPORTALS lump is empty and neither vbsp's
numbering, a target nor a referring entity tells it apart (reported with
the reason, no geometry is made up).  The texture axes of sides without
faces are whatever texinfo vbsp left them (it drops the texinfos no face
uses and points such sides at another one), so only sides that have faces
keep their own alignment.

A Titanfall rBSP map (a :class:`~sourcebsp.RespawnBsp` or its path) goes through the same
functions to its own, smaller decompile (collision brushes and entities):
:mod:`~sourcebsp.converters.vmf.respawn`.

Not converted yet: water overlays (``info_overlay_transition``, the
WATEROVERLAYS lump; no corpus map has one).  Vampire: Bloodlines outputs
with more than the five standard fields are written as plain keys, since a
VMF ``connections`` block cannot hold them.
"""
from __future__ import annotations

from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from ..._io import atomic_write
from .._common import opened, report
from .decompile import DECOMPILE_STEPS, DecompileOptions, DecompileStats, build_vmf, decompile_steps
from .checks import Problem, check_vmf
from .writer import VmfMap

if TYPE_CHECKING:
    from ...protocols import MapSource

__all__ = ["decompile", "decompile_text", "decompile_report", "build_vmf", "check_vmf", "DecompileOptions",
           "DecompileStats", "DECOMPILE_STEPS", "Problem", "VmfMap", "decompile_steps"]


def decompile_text(bsp_or_path: MapSource, *, props: bool = True, overlays: bool = True, cubemaps: bool = True,
                   detail_as_world: bool = False, rotation_fix: bool = True, ladders: bool = True,
                   visgroups: bool = True, cameras: bool = True, visclusters: bool = False, io_format: str = "map",
                   check: bool = False, progress: Callable[[str], None] | None = None) -> tuple[str, DecompileStats]:
    """The VMF text of a map (any :class:`~sourcebsp.protocols.MapReader`, or a path) and the decompile's
    statistics.

    With ``check``, the document is checked for compile-readiness
    (:func:`~sourcebsp.converters.vmf.checks.check_vmf`) and
    ``stats.problems`` lists what it breaks.
    """
    options = DecompileOptions(props=props, overlays=overlays, cubemaps=cubemaps, detail_as_world=detail_as_world,
                               rotation_fix=rotation_fix, ladders=ladders, visgroups=visgroups, cameras=cameras,
                               visclusters=visclusters, io_format=io_format)
    with opened(bsp_or_path) as bsp:
        vmf, stats = build_vmf(bsp, options, progress)
    if check:
        stats.problems = check_vmf(vmf)
    text = vmf.to_text()
    return text, stats


def decompile(bsp_or_path: MapSource, path: str | Path, *, props: bool = True, overlays: bool = True,
              cubemaps: bool = True, detail_as_world: bool = False, rotation_fix: bool = True, ladders: bool = True,
              visgroups: bool = True, cameras: bool = True, visclusters: bool = False, io_format: str = "map",
              check: bool = False, progress: Callable[[str], None] | None = None) -> DecompileStats:
    """Decompile a map into the VMF file ``path`` (written atomically).

    Parameters
    ----------
    bsp_or_path : MapReader or path
        A map of any branch (a Titanfall map's decompile, and the options it ignores:
        :mod:`~sourcebsp.converters.vmf.respawn`).
    path : path of the ``.vmf`` to write
    props, overlays, cubemaps : bool
        Write static props (``prop_static``), overlays (``info_overlay``) and
        cubemap samples (``env_cubemap``, with the sides vbsp patched for them).
    detail_as_world : bool
        Keep ``CONTENTS_DETAIL`` brushes in the world instead of a ``func_detail``.
    rotation_fix : bool
        Turn the solids of rotated brush entities and drop their ``angles``
        (see :mod:`~sourcebsp.converters.vmf.decompile` for the classes left alone).
    ladders : bool
        Rebuild ``func_ladder`` entities from ``CONTENTS_LADDER`` world brushes.
    visgroups, cameras : bool
        Group what was rebuilt in Hammer visgroups; put a camera at each player start.
    visclusters : bool
        Rebuild ``func_viscluster`` boxes around the clusters only a
        func_viscluster explains (:func:`~sourcebsp.converters.vmf.decompile.viscluster_boxes`).
    io_format : {"map", "old", "new"}
        The separator of outputs in ``connections``: as the map has them,
        commas (Hammer 4.x) or ESC (later Hammers).
    check : bool
        Check the document for compile-readiness (``stats.problems``).
    progress : callable, optional
        Called with the name of each finished step (:func:`decompile_steps`).
    """
    text, stats = decompile_text(bsp_or_path, props=props, overlays=overlays, cubemaps=cubemaps,
                                 detail_as_world=detail_as_world, rotation_fix=rotation_fix, ladders=ladders,
                                 visgroups=visgroups, cameras=cameras, visclusters=visclusters,
                                 io_format=io_format, check=check,
                                 progress=progress)
    atomic_write(Path(path), text.encode("utf-8", "surrogateescape"))
    report(progress, "write")
    return stats


def decompile_report(stats: DecompileStats, name: str = "") -> dict[str, Any]:
    """The fidelity report of a decompile, as JSON-ready data.

    What was written (solids, sides, entities by class), how much of the
    map came back (BSP brushes written, sides off their BSP plane, texture
    axes replaced; ``sides.off_plane_rule``: sides whose written points
    define a plane off their BSP plane by
    :data:`~sourcebsp.converters.vmf.geometry.PLANE_RULE`, and
    ``sides.worst_plane``: the side farthest off relative to that rule, its
    VMF side id, BRUSHES and BRUSHSIDES rows, normal and distance errors), what was rebuilt (ladders, areaportals, occluders,
    displacement brushes, cubemap sides), how each rotated brush entity was
    placed, what could not be rebuilt and why, and the compile-readiness
    rules the VMF breaks (None when not checked).
    """
    return {
        "map": name,
        "solids": {"written": stats.solids, "world": stats.world_solids, "detail": stats.detail_solids,
                   "in_entities": stats.entity_solids},
        "bsp_brushes": {"total": stats.bsp_brushes, "written": stats.bsp_brushes - len(stats.skipped_brushes),
                        "skipped_not_closed": stats.skipped_brushes},
        "sides": {"written": stats.sides, "off_plane_over_1e-3": stats.sides_off_plane,
                  "max_off_plane": stats.max_off_plane, "off_plane_rule": stats.sides_off_plane_rule,
                  "worst_plane": stats.worst_plane, "side_ids_restored": stats.restored_side_ids},
        "texture_axes": {"perpendicular_fixed": stats.perpendicular_axes_fixed,
                         "default_axes": stats.default_axes, "tool_textures_restored": stats.restored_tool_textures},
        "displacements": stats.displacements,
        "entities": {"brush": stats.brush_entities, "point": stats.point_entities, "by_class": stats.entity_classes},
        "reconstructed": {"ladders": stats.ladders, "areaportal_solids": stats.areaportal_solids,
                          "areaportal_owners": stats.areaportal_owners,
                          "occluder_solids": stats.occluder_solids,
                          "displacement_brushes": stats.displacement_brushes_made,
                          "cubemap_sides": stats.cubemap_sides, "static_props": stats.static_props,
                          "overlays": stats.overlays, "cubemaps": stats.cubemaps, "cameras": stats.cameras,
                          "visgroups": stats.visgroups, "visclusters": stats.visclusters},
        "rotation": [{"class": c, "name": n, "rule": r} for c, n, r in stats.entity_rotation],
        "not_rebuilt": stats.not_rebuilt,
        "compile_problems": None if stats.problems is None else [asdict(p) for p in stats.problems],
    }
