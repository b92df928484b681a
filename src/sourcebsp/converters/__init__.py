"""Converters: meshes to glTF and OBJ, lightmap images, preview pictures.

They read the model layer (:mod:`sourcebsp.model`), never byte offsets.
Pillow and pygltflib are optional: ``pip install 'sourcebsp[export]'``.
"""
from ._common import METERS_PER_UNIT, Units, unit_scale

__all__ = ["METERS_PER_UNIT", "Units", "unit_scale"]
