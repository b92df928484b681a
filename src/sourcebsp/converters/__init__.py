"""Converters: meshes to glTF and OBJ, lightmap images, preview pictures.

They read the model layer (:mod:`sourcebsp.model`), never byte offsets.
Pillow and pygltflib are optional: ``pip install 'sourcebsp[export]'``.
"""
