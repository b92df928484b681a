"""OBJ + MTL export on every corpus map: counts, indices, materials."""
from __future__ import annotations

import numpy as np

import sourcebsp
from sourcebsp.converters import obj as obj_module
from sourcebsp.converters.obj import export_obj, material_name

from ..model._expected import expected, names_of


def _parse(path):
    v, vt, vn, f, used, objects = [], 0, 0, [], set(), 0
    for line in path.read_text(encoding="utf-8").splitlines():
        head, _, rest = line.partition(" ")
        if head == "v":
            v.append([float(x) for x in rest.split()])
        elif head == "vt":
            vt += 1
        elif head == "vn":
            vn += 1
        elif head == "f":
            f.append([[int(i) for i in corner.split("/")] for corner in rest.split()])
        elif head == "usemtl":
            used.add(rest)
        elif head == "o":
            objects += 1
    return np.array(v).reshape(-1, 3), vt, vn, np.array(f, np.int64).reshape(-1, 3, 3), used, objects


def test_obj_export(map_path, tmp_path):
    out = tmp_path / "map.obj"
    info = export_obj(map_path, out, units="meters")
    bsp = sourcebsp.open(map_path)
    want = expected(bsp)
    v, vt, vn, faces, used, objects = _parse(out)
    assert len(faces) == want.triangles == info["triangles"]
    assert len(v) == vt == vn == info["vertices"]
    assert objects == len(want.models)
    if len(faces):
        assert faces.min() >= 1 and faces.max() <= len(v)
        assert np.all(faces[:, :, 0] == faces[:, :, 1]) and np.all(faces[:, :, 0] == faces[:, :, 2])
        # Metres: the map's extent shrinks by 0.0254 (a map spans at most 32768 units).
        assert np.abs(v).max() <= 32768 * 0.0254
    names = names_of(bsp)
    assert used == {material_name(names[t]) for t in want.textures}
    mtl = (tmp_path / "map.mtl").read_text(encoding="utf-8")
    declared = {line.split(" ", 1)[1] for line in mtl.splitlines() if line.startswith("newmtl ")}
    assert used == declared


def _percent_line_blocks(template, values, counts):
    """The reference for the writer's numbers: the % operator, one call per block (how it was written before)."""
    blocks = np.split(np.asarray(values), np.cumsum(counts)[:-1].astype(np.int64))
    return [((template * len(b)) % tuple(b.ravel().tolist())).encode("ascii") if len(b) else b"" for b in blocks]


def test_obj_numbers_identical_to_the_percent_operator(map_path, tmp_path, monkeypatch):
    for units in ("hammer", "meters"):
        export_obj(map_path, tmp_path / f"new_{units}.obj", units=units)
        with monkeypatch.context() as patch:
            patch.setattr(obj_module, "format_line_blocks", _percent_line_blocks)
            export_obj(map_path, tmp_path / f"reference_{units}.obj", units=units)
        for suffix in (".obj", ".mtl"):
            new = (tmp_path / f"new_{units}{suffix}").read_bytes()
            reference = (tmp_path / f"reference_{units}{suffix}").read_bytes()
            assert new.replace(b"new_", b"reference_") == reference
