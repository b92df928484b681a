"""The package type-checks (it ships ``py.typed``); the README's blocks: tests/test_readme.py."""
from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
from mypy import api  # in the test extra

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "src" / "sourcebsp"
# One cache per checkout: mypy took another checkout's cached modules for this one's.
CACHE = ["--cache-dir", str(ROOT / ".mypy_cache" / "tests")]


def _mypy(*args: str) -> None:
    out, err, status = api.run([*args, "--no-error-summary", *CACHE])
    assert status == 0, out + err


def test_mypy_is_clean() -> None:
    _mypy(str(PACKAGE))


def test_package_passes_strict(tmp_path: Path, monkeypatch) -> None:
    """``mypy --strict`` on the whole package, with no per-module relaxation."""
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("MYPYPATH", str(ROOT / "src"))
    bare = tmp_path / "bare.ini"  # only --strict, whatever pyproject says
    bare.write_text("[mypy]\nignore_missing_imports = True\n", encoding="utf-8")
    _mypy("--config-file", str(bare), "--strict", "src/sourcebsp")


def test_pyproject_asks_for_strict_everywhere() -> None:
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["mypy"]
    assert config.get("strict") is True and not config.get("overrides")


def _revealed(tmp_path: Path, monkeypatch, code: str, *flags: str) -> tuple[list[str], str]:
    """The types mypy reveals in ``code`` (a script importing sourcebsp), and its output."""
    script = tmp_path / "reveal.py"
    script.write_text(code, encoding="utf-8")
    monkeypatch.setenv("MYPYPATH", str(ROOT / "src"))
    out, err, _ = api.run([*flags, "--follow-imports=silent", str(script), *CACHE])
    return re.findall(r'Revealed type is "(.*)"', out), out + err


def test_container_satisfies_its_protocol(tmp_path: Path, monkeypatch) -> None:
    """BspFile is a MapReader, and a MapReader's lumps keep their types."""
    revealed, out = _revealed(
        tmp_path, monkeypatch,
        "import sourcebsp\nfrom sourcebsp import LumpId\nfrom sourcebsp.protocols import MapReader\n"
        "bsp: MapReader = sourcebsp.open('x.bsp')\n"
        "reveal_type(bsp.lump_or_none(LumpId.ENTITIES))\nreveal_type(bsp.planes)\n", "--strict")
    assert revealed[:1] == ["sourcebsp.codecs.entities.Entities | None"], out
    assert len(revealed) == 2 and revealed[1].startswith("numpy.ndarray"), out
    assert ": error: " not in out, out


def test_open_gives_the_map_protocol_and_both_containers_satisfy_it(tmp_path: Path, monkeypatch) -> None:
    """``sourcebsp.open`` gives a MapReader whatever the variant; BspFile and RespawnBsp are
    MapReaders (mypy would reject the assignments otherwise), with the same typed members."""
    revealed, out = _revealed(
        tmp_path, monkeypatch,
        "import sourcebsp\nfrom sourcebsp.protocols import MapReader\n"
        "reveal_type(sourcebsp.open('x.bsp'))\nreveal_type(sourcebsp.open('x.bsp', variant='titanfall2'))\n"
        "source: MapReader = sourcebsp.BspFile.open('x.bsp')\n"
        "titanfall: MapReader = sourcebsp.RespawnBsp.open('x.bsp')\n"
        "reveal_type(titanfall.static_props)\nreveal_type(sourcebsp.RespawnBsp.open('x.bsp').planes)\n",
        "--strict")
    assert revealed[:2] == ["sourcebsp.protocols.MapReader"] * 2, out
    assert revealed[2] == "sourcebsp.codecs.staticprops.StaticProps", out
    assert revealed[3].startswith("numpy.ndarray"), out
    assert ": error: " not in out, out


def test_lump_types_are_seen_by_mypy(tmp_path: Path, monkeypatch) -> None:
    """reveal_type of lump attributes and typed get_lump / lump_or_none."""
    revealed, out = _revealed(
        tmp_path, monkeypatch,
        "import sourcebsp\nfrom sourcebsp import LumpId\n"
        "bsp = sourcebsp.open('x.bsp')\n"
        "reveal_type(bsp.planes)\nreveal_type(bsp.entities)\nreveal_type(bsp.pakfile)\n"
        "reveal_type(bsp.get_lump(LumpId.ENTITIES))\nreveal_type(bsp.lump_or_none(LumpId.PLANES))\n"
        "reveal_type(bsp.static_props)\n")
    assert len(revealed) == 6, out
    assert revealed[0].startswith("numpy.ndarray")
    assert revealed[1] == "sourcebsp.codecs.entities.Entities"
    assert revealed[2] == "sourcebsp.codecs.pakfile.Pakfile"
    assert revealed[3] == "sourcebsp.codecs.entities.Entities | sourcebsp.codecs.base.RawLump"
    assert revealed[4].startswith("numpy.ndarray") and revealed[4].endswith("| None")
    assert revealed[5] == "sourcebsp.codecs.staticprops.StaticProps"


def _map_parameters() -> list[tuple[str, str, str]]:
    """(module:line, parameter, annotation) of every function parameter that holds a map
    (named ``bsp``, ``bsp_or_path`` or ``*_bsp``) in the package."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                continue
            args = node.args
            for arg in [*args.posonlyargs, *args.args, *args.kwonlyargs]:
                if arg.arg in ("bsp", "bsp_or_path") or arg.arg.endswith("_bsp"):
                    where = f"{path.relative_to(PACKAGE)}:{arg.lineno}"
                    found.append((where, arg.arg, ast.unparse(arg.annotation) if arg.annotation else ""))
    return found


def test_no_map_parameter_is_typed_any() -> None:
    """A map parameter is a MapReader (or BspFile, a map-or-path MapSource, or the part of a map
    the resource checks read, SizedMap): never ``Any``,
    ``object`` or unannotated, so mypy checks every lump read through it."""
    found = _map_parameters()
    assert len(found) > 100  # the scan sees the package's map parameters
    loose = [f for f in found if not f[2] or re.search(r"\b(Any|object)\b", f[2])]
    assert not loose, loose
    allowed = {"MapReader", "SizedMap", "SizedMap | int", "MapSource", "BspFile", "'SavedMap'",
               "RespawnBsp", "str | Path | RespawnBsp",  # Titanfall rBSP: its own container, typed
               "MapSource | RespawnBsp"}  # render: a map of either container, or a path to one
    assert {f[2] for f in found} <= allowed, {f[2] for f in found} - allowed


def test_generated_lump_declarations_match_the_table() -> None:
    """The overload ladders and lump attributes of container.py and protocols.py are what
    ``sourcebsp.lump_types.LUMP_TYPES`` makes (``python -m sourcebsp.lump_types`` rewrites them)."""
    from sourcebsp import lump_types

    assert lump_types.update_sources(write=False) == []
    blocks = lump_types.generated_blocks()
    # Every lump has an entry, and each typed lump an attribute and a rung on each ladder.
    assert set(lump_types.LUMP_TYPES) == set(sourcebsp_lump_ids())
    accessors = (PACKAGE / "lumpaccess.py").read_text(encoding="utf-8")
    for lump, kind in lump_types.LUMP_TYPES.items():
        assert f"    {lump.name.lower()}: LumpAttr[" in accessors
        if kind not in (None, lump_types.ARRAY):
            for method in ("get_lump", "lump_or_none", "lump_or_raise"):
                assert f"LumpId.{lump.name}" in blocks["lumpaccess.py"][method], (lump, method)


def sourcebsp_lump_ids() -> list:
    from sourcebsp.lump_ids import LumpId

    return list(LumpId)


def test_lump_type_table_agrees_with_the_codecs() -> None:
    """ARRAY lumps have record-table codecs in every variant, untyped lumps none; a lump of a
    codec's own type decodes (in the example map) to an instance of the class the table names."""
    import importlib

    import numpy as np

    import sourcebsp
    from sourcebsp import lump_types, variants
    from sourcebsp.codecs.arrays import ArrayCodec
    from sourcebsp.examples import example_map_bytes

    checked = 0
    for name in variants.variant_names():
        variant = variants.get_variant(name)
        if variant.container != "source":  # rBSP's 128 lump ids are not LumpId: RespawnBsp.array reads them
            continue
        for lump, versions in variant.layouts.items():
            kind = lump_types.LUMP_TYPES[sourcebsp.LumpId(lump)]
            for version in versions:
                codec = variant.codec(lump, -1 if version is None else version)
                assert kind is not None, (name, lump)
                assert isinstance(codec, ArrayCodec) == (kind == lump_types.ARRAY), (name, lump, version)
                checked += 1
    assert checked > 100
    bsp = sourcebsp.BspFile.from_bytes(example_map_bytes())
    decoded = 0
    for lump, kind in lump_types.LUMP_TYPES.items():
        if not bsp.has_lump(lump) or kind is None:
            continue
        value = bsp.get_lump(lump)
        if kind == lump_types.ARRAY:
            assert isinstance(value, np.ndarray), lump
        else:
            module, cls = kind.rsplit(".", 1)
            assert isinstance(value, getattr(importlib.import_module(f"sourcebsp.{module}"), cls)), lump
        decoded += 1
    assert decoded >= 10


def test_accessors_are_typed(tmp_path: Path, monkeypatch) -> None:
    """lump_or_none / lump_or_raise keep the lump's type, on a BspFile and on a MapReader."""
    script = tmp_path / "accessors.py"
    script.write_text(
        "import sourcebsp\nfrom sourcebsp import LumpId\nfrom sourcebsp.protocols import MapReader\n"
        "bsp = sourcebsp.open('x.bsp')\nreader: MapReader = bsp\n"
        + "".join(f"reveal_type({m}.lump_or_none(LumpId.PAKFILE, 'list files'))\n"
                  f"reveal_type({m}.lump_or_raise(LumpId.OCCLUSION, 'read occluders'))\n"
                  f"reveal_type({m}.lump_or_raise(LumpId.ENTITIES, 'read entities'))\n"
                  f"reveal_type({m}.lump_or_none(LumpId.FACES, 'build meshes'))\n" for m in ("bsp", "reader")),
        encoding="utf-8")
    monkeypatch.setenv("MYPYPATH", str(ROOT / "src"))
    out, err, status = api.run(["--strict", "--follow-imports=silent", str(script), *CACHE])
    revealed = re.findall(r'Revealed type is "(.*)"', out)
    assert len(revealed) == 8 and ": error: " not in out, out + err
    assert revealed[:4] == revealed[4:]
    assert revealed[0] == "sourcebsp.codecs.pakfile.Pakfile | None"
    assert revealed[1] == "sourcebsp.codecs.occlusion.Occlusion"
    assert revealed[2] == "sourcebsp.codecs.entities.Entities"
    assert revealed[3].startswith("numpy.ndarray") and revealed[3].endswith("| None")
