"""What a fresh process imports: ``import sourcebsp``, ``sourcebsp --version``, ``info``, ``decode_all``.

Every CLI call and every script pays for its imports (numpy alone is most of
the start-up), so the paths below load no module they do not use; these tests
keep a later change from bringing one back without anyone noticing.  Each
child reports its ``sys.modules``; modules the bare interpreter (or numpy
itself) already loads are not held against sourcebsp.  No timing is asserted.
"""
from __future__ import annotations

import gc
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import sourcebsp
from sourcebsp import LumpId, _io
from sourcebsp.cli import main
from sourcebsp.lumpfile import read_lump_file, write_lump_file

from .conftest import ROOT

# Nothing the package's names, --help or --version need: they must not load numpy and the rest.
NOT_ON_IMPORT = {"numpy", "typing", "dataclasses", "pathlib", "re", "enum", "argparse", "zipfile", "tempfile",
                 "concurrent.futures", "sourcebsp.container", "sourcebsp.codecs", "sourcebsp.cli._common"}
# Reading a map needs neither extraction, saving, batch work, terminal tables nor the converters;
# nor zipfile (the pakfile's directory is read without it), pathlib or shutil (with bz2), 6-9 ms together.
NOT_FOR_READING = {"tempfile", "random", "glob", "json", "multiprocessing", "rich", "PIL", "pygltflib",
                   "sourcebsp._io", "sourcebsp.model", "sourcebsp.converters", "sourcebsp.content",
                   "sourcebsp.queries", "sourcebsp.writeplan", "zipfile", "pathlib", "shutil", "bz2"}
NOT_FOR_DECODING = NOT_FOR_READING | {"argparse", "gettext", "sourcebsp.cli"}

_REPORT = """
import sys
_report = open  # the body may import sourcebsp's ``open``
{body}
sys.stdout.flush()
_report({out!r}, "w").write("\\n".join(sorted(sys.modules)))
"""


def _modules(tmp_path: Path, body: str) -> tuple[set[str], str]:
    """The modules loaded once ``body`` ran in a fresh interpreter, and what it printed."""
    out = tmp_path / f"modules-{len(list(tmp_path.iterdir()))}.txt"
    done = subprocess.run([sys.executable, "-c", _REPORT.format(body=body, out=str(out))], capture_output=True,
                          text=True, env={**os.environ, "PYTHONPATH": str(ROOT / "src")}, timeout=300)
    assert done.returncode == 0, done.stderr
    return set(out.read_text().split("\n")), done.stdout


def _unwanted(loaded: set[str], forbidden: set[str], baseline: set[str]) -> set[str]:
    """Forbidden modules (or their submodules) that were loaded and that the baseline does not load."""
    return {m for m in loaded - baseline if m in forbidden or any(m.startswith(f + ".") for f in forbidden)}


@pytest.fixture(scope="module")
def bare(tmp_path_factory: pytest.TempPathFactory) -> set[str]:
    """What the interpreter loads by itself (site, encodings, ...)."""
    return _modules(tmp_path_factory.mktemp("bare"), "pass")[0]


@pytest.fixture(scope="module")
def with_numpy(tmp_path_factory: pytest.TempPathFactory) -> set[str]:
    """What importing numpy loads by itself."""
    return _modules(tmp_path_factory.mktemp("numpy"), "import numpy")[0]


def test_import_sourcebsp_loads_no_numpy(tmp_path: Path, bare: set[str]) -> None:
    loaded, _ = _modules(tmp_path, "import sourcebsp")
    assert _unwanted(loaded, NOT_ON_IMPORT, bare) == set()
    assert "sourcebsp.errors" in loaded  # the exceptions are there at once (cheap)


def test_public_names_still_import(tmp_path: Path) -> None:
    """Names load on first use, with ``from sourcebsp import ...``, attribute access and ``*``."""
    body = """
import sourcebsp
from sourcebsp import BspFile, open, open_bsp, LumpId, RawLump, Limits, variant_names
assert open is sourcebsp.open and open_bsp is sourcebsp.open_bsp and BspFile.__module__ == "sourcebsp.container"
assert open.__module__ == "sourcebsp.opening" and open_bsp.__module__ == "sourcebsp.container"
assert LumpId.PAKFILE == 40 and "orange_box" in variant_names()
namespace = {}
exec("from sourcebsp import *", namespace)
missing = [n for n in sourcebsp.__all__ if n not in namespace]
assert not missing, missing
assert set(sourcebsp.__all__) <= set(dir(sourcebsp))
try:
    sourcebsp.no_such_name
except AttributeError as exc:
    assert "no_such_name" in str(exc)
else:
    raise AssertionError("no AttributeError")
print("ok")
"""
    assert _modules(tmp_path, body)[1].strip() == "ok"


@pytest.mark.parametrize("args", [["--version"], ["--help"], ["no-such-command"]])
def test_version_and_help_load_no_numpy(tmp_path: Path, bare: set[str], args: list[str]) -> None:
    # As the ``sourcebsp`` console script runs it: ``sys.exit(main())``, arguments from sys.argv.
    body = f"from sourcebsp.cli import main\nsys.argv[1:] = {args!r}\ncode = main()\nprint(code)"
    loaded, printed = _modules(tmp_path, body)
    assert printed.splitlines()[-1] == ("2" if args == ["no-such-command"] else "0")
    assert _unwanted(loaded, NOT_ON_IMPORT, bare) == set()


@pytest.mark.slow
@pytest.mark.parametrize("json_out", [False, True])
def test_info_loads_no_numpy(tmp_path: Path, bare: set[str], map_path: Path, json_out: bool) -> None:
    """All that ``info`` prints comes from record sizes and lump headers (codecs/counts.py):
    numpy, 50 ms of a 90 ms process, is not imported; the counts are the decoded ones."""
    args = ["info", *(["--json"] if json_out else []), str(map_path)]
    body = f"from sourcebsp.cli import main\nsys.argv[1:] = {args!r}\nprint(main())"
    loaded, printed = _modules(tmp_path, body)
    assert printed.splitlines()[-1] == "0"
    forbidden = (NOT_FOR_READING - {"json"} if json_out else NOT_FOR_READING) | {"numpy", "dataclasses", "inspect"}
    assert _unwanted(loaded, forbidden, bare) == set()
    assert "sourcebsp.codecs.pakfile" in loaded or not sourcebsp.open(map_path).has_lump(LumpId.PAKFILE)
    with sourcebsp.open(map_path) as bsp:
        decoded = {int(lump): bsp.count(lump) for lump, _ in bsp.iter_lumps()}  # numpy here
        entities = len(bsp.entities)
    if json_out:
        report = json.loads(printed[: printed.rindex("}") + 1])
        assert {row["index"]: row["count"] for row in report["lumps"]} == decoded
        assert report["entity_count"] == entities and report["damaged"] == []
    else:
        rows = [line.split("\t") for line in printed.splitlines()[:-1] if line[:1].isdigit()]
        assert {int(r[0]): None if r[-1] == "raw" else int(r[-1]) for r in rows} == decoded
        assert f", {entities} entities" in printed


@pytest.mark.slow
def test_decode_all_loads_only_what_it_reads(tmp_path: Path, with_numpy: set[str], map_path: Path) -> None:
    body = f"""
import sourcebsp
with sourcebsp.open({str(map_path)!r}) as bsp:
    print(sorted(bsp.decode_all()))
"""
    loaded, printed = _modules(tmp_path, body)
    with sourcebsp.open(map_path) as bsp:
        assert printed.strip() == str([int(lump) for lump, _ in bsp.iter_lumps()])  # it did decode every lump
        compressed = any(entry.compressed for _, entry in bsp.iter_lumps()) or (
            bsp.has_lump(LumpId.GAME_LUMP) and any(lump.compressed for lump in bsp.game_lumps))
    # Threads (and the threading module) only for LZMA blocks, decompressed on every core.
    assert _unwanted(loaded, NOT_FOR_DECODING | ({"threading", "concurrent"} if not compressed else set()),
                     with_numpy) == set()


# Reading the entities and listing the pakfile need none of the codecs of record tables, nor
# numpy (a 50 ms import, most of such a process), nor dataclasses (with inspect, 7 ms).  The
# records' declarations (numpy-free) may load: where the header leaves several branches,
# their record sizes tell them apart.
NOT_FOR_TEXT = NOT_FOR_DECODING | {"numpy", "sourcebsp.codecs.arrays", "sourcebsp.codecs.lighting",
                                   "sourcebsp.codecs.gamelumps", "sourcebsp.codecs.visibility",
                                   "sourcebsp.codecs.physics", "sourcebsp.codecs.occlusion",
                                   "sourcebsp.codecs.overlays", "threading", "dataclasses", "inspect"}


@pytest.mark.slow
def test_reading_entities_and_listing_files_loads_no_numpy(tmp_path: Path, bare: set[str], map_path: Path) -> None:
    """Open a map, read every key and value and list the pakfile: their two codecs alone, no
    numpy, LZMA-compressed lumps included (their output buffer is a bytearray, the lock that
    waits for a block a ``_thread`` lock)."""
    body = f"""
import sourcebsp
with sourcebsp.open({str(map_path)!r}) as bsp:
    print(sum(len(entity.items()) for entity in bsp.entities))
    print(len(bsp.pakfile.names()) if bsp.has_lump(40) else 0)
"""
    loaded, printed = _modules(tmp_path, body)
    with sourcebsp.open(map_path) as bsp:
        keys = sum(len(entity.items()) for entity in bsp.entities)
        files = len(bsp.pakfile.names()) if bsp.has_lump(LumpId.PAKFILE) else 0
    assert printed.split() == [str(keys), str(files)] and keys > 0
    assert "sourcebsp.codecs.entities" in loaded
    assert _unwanted(loaded, NOT_FOR_TEXT, bare) == set()


# Saving needs the writer, and the game lump's directory when the lump moves: not the prop layouts.
NOT_FOR_SAVING = (NOT_FOR_TEXT - {"sourcebsp._io", "sourcebsp.writeplan", "sourcebsp.codecs.gamelumps", "pathlib"}
                  | {"sourcebsp.codecs.staticprops"})


@pytest.mark.slow
def test_saving_an_entity_edit_loads_no_numpy(tmp_path: Path, bare: set[str], map_path: Path) -> None:
    """Open a map, change an entity and save it (the lumps after the entities move, the game
    lump's offsets with them), and save it unchanged: no numpy, no table of records."""
    edited, unchanged = tmp_path / "edited.bsp", tmp_path / "unchanged.bsp"
    body = f"""
import sourcebsp
with sourcebsp.open({str(map_path)!r}) as bsp:
    bsp.save({str(unchanged)!r}, fsync=False)
    bsp.entities[0]["startup_test"] = "a value long enough to move the lumps after it"
    bsp.save({str(edited)!r}, fsync=False)
"""
    loaded, _ = _modules(tmp_path, body)
    with sourcebsp.open(map_path) as bsp:
        assert unchanged.read_bytes() == map_path.read_bytes()
        bsp.entities[0]["startup_test"] = "a value long enough to move the lumps after it"
        assert edited.read_bytes() == bsp.to_bytes()
    assert "sourcebsp.writeplan" in loaded
    # ctypes (for fallocate) only once reserving the space repays its import (two saves here).
    forbidden = NOT_FOR_SAVING | ({"ctypes"} if 2 * map_path.stat().st_size < _io._RESERVE_WITH_IMPORT_FROM else set())
    assert _unwanted(loaded, forbidden, bare) == set()


@pytest.mark.parametrize("command", ["edit-entities", "pak add", "lump extract", "lump apply", "repack"])
def test_editing_commands_load_no_numpy(tmp_path: Path, bare: set[str], corpus_file, command: str) -> None:
    """Commands that change text, files or the file's layout write without numpy, the table
    layouts, ``dataclasses`` or rich (stderr is no terminal: no progress bar)."""
    source, out = corpus_file("css_de_rats.bsp"), tmp_path / "out.bsp"
    added, patch = tmp_path / "readme.txt", tmp_path / "entities.lmp"
    added.write_text("packed by a test")
    with sourcebsp.open(source) as bsp:
        bsp.entities[0]["patched"] = "1"
        write_lump_file(bsp, LumpId.ENTITIES, patch)
    args = {
        "edit-entities": ["edit-entities", str(source), "-o", str(out), "--match-class", "light",
                          "--set", "_light=1 2 3 4"],
        "pak add": ["pak", str(source), "add", str(added), "--as", "readme.txt", "-o", str(out)],
        "lump extract": ["lump", str(source), "extract", "ENTITIES", "-o", str(tmp_path / "extracted.lmp")],
        "lump apply": ["lump", str(source), "apply", str(patch), "-o", str(out)],
        "repack": ["repack", str(source), "-o", str(out)],
    }[command]
    body = f"from sourcebsp.cli import main\nsys.argv[1:] = {args!r}\nprint(main())"
    loaded, printed = _modules(tmp_path, body)
    assert printed.splitlines()[-1] == "0"
    with sourcebsp.open(source if command == "lump extract" else out) as bsp:
        if command == "lump extract":
            assert read_lump_file(tmp_path / "extracted.lmp").data == bytes(bsp.lump_bytes(LumpId.ENTITIES))
        elif command == "edit-entities":
            assert [e["_light"] for e in bsp.entities.find(classname="light")][:1] == ["1 2 3 4"]
        elif command == "pak add":
            assert bsp.pakfile.read("readme.txt") == b"packed by a test"
        elif command == "lump apply":
            assert bsp.entities[0]["patched"] == "1"
        else:
            assert out.read_bytes() == source.read_bytes()
    commands = {"argparse", "gettext", "sourcebsp.cli", "json", "zipfile", "shutil", "bz2", "threading"}  # + zipfile's
    assert _unwanted(loaded, NOT_FOR_SAVING - commands, bare) == set()  # rich among them


@pytest.mark.slow
def test_exports_and_decompiles_load_no_masked_arrays(tmp_path: Path, with_numpy: set[str],
                                                      all_maps: list[Path]) -> None:
    """glb, OBJ and VMF of every corpus map in one process never import ``numpy.ma`` (6 ms,
    1.4 MB), which numpy 2.3's plain ``np.unique`` does on its first call."""
    maps = [str(m) for m in all_maps]
    body = f"""
from sourcebsp.converters.gltf import export_glb
from sourcebsp.converters.obj import export_obj
from sourcebsp.converters.vmf import decompile
for number, path in enumerate({maps!r}):
    export_glb(path, {str(tmp_path)!r} + f"/{{number}}.glb")
    export_obj(path, {str(tmp_path)!r} + f"/{{number}}.obj")
    decompile(path, {str(tmp_path)!r} + f"/{{number}}.vmf")
print(number + 1)
"""
    loaded, printed = _modules(tmp_path, body)
    assert printed.split() == [str(len(maps))] and len(maps) >= 20
    assert {"sourcebsp.converters.gltf", "pygltflib", "PIL.PngImagePlugin"} <= loaded  # the atlases were encoded
    assert _unwanted(loaded, {"numpy.ma"}, with_numpy) == set()


def test_command_process_gets_one_blas_thread_unless_the_user_chose(tmp_path: Path) -> None:
    body = """
import gc, os, sys
from sourcebsp.cli import main
sys.argv[1:] = ["--version"]
main()
print(os.environ.get("OPENBLAS_NUM_THREADS"), os.environ.get("MKL_NUM_THREADS"), gc.isenabled())
"""
    env = {k: v for k, v in os.environ.items() if not k.endswith(("_NUM_THREADS", "MAXIMUM_THREADS"))}
    child = {**env, "PYTHONPATH": str(ROOT / "src")}
    done = subprocess.run([sys.executable, "-c", body], capture_output=True, text=True, env=child, timeout=300)
    assert done.stdout.split()[-3:] == ["1", "1", "True"], done.stderr
    done = subprocess.run([sys.executable, "-c", body], capture_output=True, text=True,
                          env={**child, "OPENBLAS_NUM_THREADS": "3"}, timeout=300)
    assert done.stdout.split()[-3:] == ["3", "1", "True"], done.stderr


def test_main_with_arguments_leaves_the_process_alone(capsys: pytest.CaptureFixture[str]) -> None:
    """``main(argv)`` inside a program (tests, scripts) changes neither its environment nor its collector."""
    environ, frozen, collecting = dict(os.environ), gc.get_freeze_count(), gc.isenabled()
    assert main(["--version"]) == 0
    assert capsys.readouterr().out.startswith("sourcebsp ")
    assert dict(os.environ) == environ
    assert (gc.get_freeze_count(), gc.isenabled()) == (frozen, collecting)


def test_info_json_in_a_command_process_equals_in_process(tmp_path: Path, corpus_file,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    """The command-process set-up (collector off while loading, frozen after) changes no result."""
    path = str(corpus_file("css_de_rats.bsp"))
    assert main(["info", "--json", path]) == 0
    expected = json.loads(capsys.readouterr().out)
    body = f"from sourcebsp.cli import main\nsys.argv[1:] = ['info', '--json', {path!r}]\nmain()"
    assert json.loads(_modules(tmp_path, body)[1]) == expected


def test_a_map_freed_while_the_interpreter_exits_says_nothing(corpus_file) -> None:
    """A map still open at exit, in a reference cycle that lives past the modules' globals, closes quietly."""
    body = f"""
import os
import sourcebsp
bsp = sourcebsp.open({str(corpus_file("css_de_rats.bsp"))!r})
bsp.decode_all()
os.keep_until_the_end = lambda: bsp  # os outlives sourcebsp.container: the map is freed after it
"""
    done = subprocess.run([sys.executable, "-c", body], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT / "src")}, timeout=300)
    assert (done.returncode, done.stderr) == (0, "")


@pytest.mark.parametrize("collecting", [True, False])
def test_first_use_leaves_the_collector_as_it_was(tmp_path: Path, collecting: bool, corpus_file) -> None:
    """The first public name used loads the container, the first table of records numpy and
    the codecs, each with the collector off (collections there free nothing); then the
    collector is as the program had it."""
    body = f"""
import gc
{"gc.enable()" if collecting else "gc.disable()"}
import sourcebsp
before = sys.modules.get("numpy")
bsp = sourcebsp.open({str(corpus_file("tf2_mp_lobby.bsp"))!r})
opened = "numpy" in sys.modules
bsp.planes
print(before is None, opened, "numpy" in sys.modules, gc.isenabled())
"""
    assert _modules(tmp_path, body)[1].split() == ["True", "False", "True", str(collecting)]


@pytest.mark.parametrize("first", ["sourcebsp.open", "bsp.planes"])
def test_first_use_leaves_nothing_to_the_young_generations_and_nothing_frozen(tmp_path: Path, corpus_file,
                                                                               first: str) -> None:
    """The container's objects, then numpy's and the codecs', go straight to the oldest
    generation; garbage made before is still collected, and nothing stays frozen."""
    body = f"""
import gc, weakref
import sourcebsp
bsp = sourcebsp.open({str(corpus_file("tf2_mp_lobby.bsp"))!r}) if {first!r} != "sourcebsp.open" else None
class Node: pass
cycle = Node(); cycle.me = cycle
gone = weakref.ref(cycle)
del cycle
{first}
young = len(gc.get_objects(generation=0)) + len(gc.get_objects(generation=1))
frozen = gc.get_freeze_count()
gc.collect()
print(young < 100, frozen, gone() is None, "numpy" in sys.modules)
"""
    assert _modules(tmp_path, body)[1].split() == ["True", "0", "True", str(first == "bsp.planes")]


def test_first_use_leaves_the_programs_frozen_objects_frozen(tmp_path: Path) -> None:
    body = """
import gc
import sourcebsp
kept = [[] for _ in range(100)]
gc.freeze()
sourcebsp.open
tracked = {id(o) for o in gc.get_objects()}  # every generation but the frozen objects
print(gc.get_freeze_count() > 0 and not any(id(o) in tracked for o in kept))
"""
    assert _modules(tmp_path, body)[1].split() == ["True"]


# Only ``scan`` reads and writes tables: the other commands never load pyarrow or dask (seconds of import).
SCAN_ONLY = {"pyarrow", "dask", "distributed", "sourcebsp.scan"}


@pytest.mark.slow
@pytest.mark.parametrize("command", [["info"], ["entities", "--json"], ["props", "--json"], ["pak", "list"],
                                     ["check", "--json"], ["decompile", "-o", "{tmp}/out.vmf"],
                                     ["export", "-o", "{tmp}/out.glb"]])
def test_commands_other_than_scan_load_no_pyarrow_or_dask(tmp_path: Path, bare: set[str], corpus_file,
                                                          command: list[str]) -> None:
    args = [command[0], str(corpus_file("tf2_test2.bsp")), *(a.format(tmp=tmp_path) for a in command[1:])]
    body = f"from sourcebsp.cli import main\nsys.argv[1:] = {args!r}\nprint(main())"
    loaded, printed = _modules(tmp_path, body)
    assert printed.splitlines()[-1] in ("0", "1")  # check exits 1 on an error finding
    assert _unwanted(loaded, SCAN_ONLY, bare) == set()


@pytest.mark.slow
def test_scan_loads_pyarrow_but_no_dask_unless_asked(tmp_path: Path, bare: set[str], corpus_file) -> None:
    args = ["scan", str(corpus_file("tf2_test2.bsp")), "-o", str(tmp_path / "tables")]
    body = f"from sourcebsp.cli import main\nsys.argv[1:] = {args!r}\nprint(main())"
    loaded, printed = _modules(tmp_path, body)
    assert printed.splitlines()[-1] == "0"
    assert "pyarrow" in loaded  # the check above would see it
    assert _unwanted(loaded, {"dask", "distributed"}, bare) == set()
