"""Decompile a compiled map back into a Hammer VMF.

>>> from sourcebsp.converters.vmf import decompile          # doctest: +SKIP
>>> stats = decompile("de_dust2.bsp", "de_dust2_d.vmf")     # doctest: +SKIP

What comes back (details in the modules named):

* world brushes, ``func_detail`` and brush entities, with sides textured
  from their texinfo and tool textures restored from brush contents and
  surface flags (:mod:`~sourcebsp.model.brushes`,
  :mod:`~sourcebsp.converters.vmf_textures`, :mod:`~sourcebsp.converters.decompile`);
* ``func_areaportal`` brushes (from ``CONTENTS_AREAPORTAL`` and the
  AREAPORTALS lump) and ``func_occluder`` brushes (from the OCCLUSION lump);
  water brushes come back as world brushes with their contents' materials;
* every entity of the entity lump with its keys and outputs, static props
  as ``prop_static``, cubemap samples as ``env_cubemap``, overlays as
  ``info_overlay`` (:mod:`~sourcebsp.converters.vmf_entities`);
* displacements as ``dispinfo`` blocks (:mod:`~sourcebsp.converters.vmf_disp`);
* Hammer's side ids from the FACEIDS lump, entity ids from ``hammerid``.

What cannot come back, because the compiler does not keep it: brushes made
only of hint and skip sides (vbsp keeps no brush for them), the brushes of
displacements (a brush is made for each displacement instead),
``func_instance`` (collapsed into its contents), ``func_viscluster``,
visgroups, groups and hidden objects, cameras, ``info_overlay`` angles, the
``sides`` of ``env_cubemap``, displacement sculpting data beyond the final
vertex offsets (``offsets``, ``elevation``, forced triangle tags), texture
``rotation`` (folded into the axes), and the grouping of detail brushes into
separate ``func_detail`` entities (all of them go into one).  The texture
axes of sides without faces are whatever texinfo vbsp left them (it drops
the texinfos no face uses and points such sides at another one), so only
sides that have faces keep their own alignment.

Not converted yet: water overlays (``info_overlay_transition``, the
WATEROVERLAYS lump; no corpus map has one).  Vampire: Bloodlines outputs
with more than the five standard fields are written as plain keys, since a
VMF ``connections`` block cannot hold them.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from .._io import atomic_write
from ._common import opened, report
from .decompile import DECOMPILE_STEPS, DecompileOptions, DecompileStats, build_vmf
from .vmf_writer import VmfMap

__all__ = ["decompile", "decompile_text", "build_vmf", "DecompileOptions", "DecompileStats", "DECOMPILE_STEPS",
           "VmfMap"]


def decompile_text(bsp_or_path: Any, *, props: bool = True, overlays: bool = True, cubemaps: bool = True,
                   detail_as_world: bool = False,
                   progress: Callable[[str], None] | None = None) -> tuple[str, DecompileStats]:
    """The VMF text of a map (a :class:`~sourcebsp.BspFile` or a path) and the decompile's statistics."""
    options = DecompileOptions(props=props, overlays=overlays, cubemaps=cubemaps, detail_as_world=detail_as_world)
    with opened(bsp_or_path) as bsp:
        vmf, stats = build_vmf(bsp, options, progress)
    text = vmf.to_text()
    return text, stats


def decompile(bsp_or_path: Any, path: str | Path, *, props: bool = True, overlays: bool = True,
              cubemaps: bool = True, detail_as_world: bool = False,
              progress: Callable[[str], None] | None = None) -> DecompileStats:
    """Decompile a map into the VMF file ``path`` (written atomically).

    Parameters
    ----------
    bsp_or_path : BspFile or path
    path : path of the ``.vmf`` to write
    props, overlays, cubemaps : bool
        Write static props (``prop_static``), overlays (``info_overlay``) and
        cubemap samples (``env_cubemap``).
    detail_as_world : bool
        Keep ``CONTENTS_DETAIL`` brushes in the world instead of a ``func_detail``.
    progress : callable, optional
        Called with the name of each finished step (:data:`DECOMPILE_STEPS`).
    """
    text, stats = decompile_text(bsp_or_path, props=props, overlays=overlays, cubemaps=cubemaps,
                                 detail_as_world=detail_as_world, progress=progress)
    atomic_write(Path(path), text.encode("utf-8", "surrogateescape"))
    report(progress, "write")
    return stats
