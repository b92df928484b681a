"""The libraries benchmarks/bench.py compares, and the measured interpreter it starts.

Each library is an :class:`Adapter`: its import name and one :class:`Op` per
operation it offers.  Run as a script (``python bench_adapters.py LIB OP MAP
OUT``), this module is the measured interpreter of bench.py's whole-process
figures: it imports the library, does the operation once and prints its own
peak RSS.  So that those figures hold only the library's cost, it imports
nothing but ``sys`` at the top (no dataclasses, typing, pathlib or json,
which sourcepp's process would not otherwise load); paths are plain strings.
"""
from __future__ import annotations

import sys

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: the measured interpreter does not import typing
    from typing import Any, Callable


def _same(path: str) -> str:
    return path


def _nothing(state: Any) -> None:
    return None


class Op:
    """``run(setup(path), out)`` is timed; ``setup`` (untimed) defaults to the path itself.

    ``process_run``, when given, replaces ``run`` in the measured interpreter
    (e.g. a command run the way its console script runs it).  ``loads`` names
    the modules the operation imports (a converter, pygltflib, Pillow): the
    measured interpreter imports them before it reads its RSS, so the peak
    above that reading is the operation's work, not its imports.
    """

    __slots__ = ("run", "setup", "teardown", "process_run", "loads")

    def __init__(self, run: Callable[[Any, str], Any], setup: Callable[[str], Any] = _same,
                 teardown: Callable[[Any], None] = _nothing,
                 process_run: Callable[[Any, str], Any] | None = None, loads: tuple[str, ...] = ()) -> None:
        self.run, self.setup, self.teardown = run, setup, teardown
        self.process_run = process_run or run
        self.loads = loads


class Adapter:
    """A library: its name, its import name (to tell whether it is installed), its distribution, its operations.

    ``ready`` is what the import-only interpreter imports: the modules that
    make the library usable (sourcebsp's package itself loads its names
    lazily, without numpy: ``sourcebsp:open`` looks the name up as a
    program does), so "import" and "above import" mean the same for every
    library.
    """

    __slots__ = ("name", "module", "distribution", "ops", "ready")

    def __init__(self, name: str, module: str, distribution: str, ops: dict[str, Op] | None = None,
                 ready: str | None = None) -> None:
        self.name, self.module, self.distribution, self.ops = name, module, distribution, dict(ops or {})
        self.ready = ready or module


# sourcebsp ----------------------------------------------------------------------------
def _sb_open(path: str) -> Any:
    import sourcebsp

    return sourcebsp.open(path)


def _sb_close(bsp: Any) -> None:
    bsp.close()


def _sb_decode(path: str, out: str) -> str:
    import numpy as np
    import sourcebsp

    with sourcebsp.open(path) as bsp:
        decoded = bsp.decode_all()
        # Zero-copy arrays read nothing yet: one pass over every stored lump reads
        # every byte (compressed lumps were read by their decompression).
        for index, entry in bsp.iter_lumps():
            if not entry.compressed:
                np.frombuffer(bsp.raw_lump(index), np.uint8).max(initial=0)
        raw = [bsp.lump_name(i) for i, value in decoded.items() if isinstance(value, sourcebsp.RawLump)]
    return f"{len(decoded) - len(raw)}/{len(decoded)} lumps decoded" + (f"; raw: {', '.join(raw)}" if raw else "")


def _sb_entities(path: str, out: str) -> str:
    # Every key and value made into Python strings: sourcebsp makes them when first
    # read, the other libraries when they parse.
    with _sb_open(path) as bsp:
        pairs = sum(len(entity.items()) for entity in bsp.entities)
        return f"{len(bsp.entities)} entities, {pairs} keys"


def _sb_props(path: str, out: str) -> str:
    with _sb_open(path) as bsp:
        props = bsp.static_props
        return f"{len(props.props)} props, {len(props.model_names())} names"


def _sb_pak(path: str, out: str) -> str:
    with _sb_open(path) as bsp:
        return f"{len(bsp.pakfile.names())} files"


def _sb_vis(path: str, out: str) -> str:
    from sourcebsp import LumpId, RawLump

    with _sb_open(path) as bsp:
        vis = bsp.get_lump(LumpId.VISIBILITY) if bsp.entry(LumpId.VISIBILITY).filelen else None
        if vis is None or isinstance(vis, RawLump):
            return "no visibility"
        return f"{vis.pvs_matrix().shape[0]} clusters (PVS and PAS matrices)"


def _sb_edited(path: str) -> Any:
    bsp = _sb_open(path)
    bsp.entities[0]["bench_edit"] = "1"
    return bsp


def _sb_obj(path: str, out: str) -> None:
    from sourcebsp.converters.obj import export_obj

    export_obj(path, out)


def _sb_glb(path: str, out: str) -> None:
    from sourcebsp.converters.gltf import export_glb

    export_glb(path, out)


def _sb_vmf(path: str, out: str) -> None:
    from sourcebsp.converters.vmf import decompile

    decompile(path, out)


def _sb_render(path: str, out: str) -> None:
    from sourcebsp.converters.render import render_png

    render_png(path, out)


def _sb_deps_check(path: str, out: str) -> int:
    # No game mounted: the map's own references and pakfile, then every lint rule on them.
    from sourcebsp.content import map_dependencies
    from sourcebsp.content.lint import check_map

    with _sb_open(path) as bsp:
        graph = map_dependencies(bsp)
        return len(graph.summary()) + len(check_map(bsp, graph=graph))


def _sb_info(path: str, out: str) -> None:
    from sourcebsp.cli import main as cli

    if cli(["info", path]) != 0:
        raise RuntimeError("sourcebsp info failed")


def _sb_info_command(path: str, out: str) -> None:
    # As the console script runs it: main() without argv reads sys.argv and sets up
    # the process for one command (one BLAS thread unless chosen, start-up GC).
    from sourcebsp.cli import main as cli

    sys.argv = ["sourcebsp", "info", path]
    if cli() != 0:
        raise RuntimeError("sourcebsp info failed")


def _save_to(state: Any, out: str) -> None:
    state.save(out)


def _save_unsynced(state: Any, out: str) -> None:
    state.save(out, fsync=False)


# What a save imports on first use (the writer, and pathlib for the Path it returns): loaded before
# the peak RSS baseline, as the converters are, so that "above its imports" is the save's data.
# After an edit also the entity codec, and those of the lumps that move and hold file offsets.
_SAVING = ("sourcebsp.writeplan", "sourcebsp._io", "pathlib")
_EDITING = ("sourcebsp.codecs.entities", "sourcebsp.codecs.gamelumps", "sourcebsp.codecs.pakfile")

SOURCEBSP_OPS: dict[str, Op] = {
    "open+decode": Op(_sb_decode),
    "entities": Op(_sb_entities, loads=("sourcebsp.codecs.entities",)),
    "static props": Op(_sb_props),
    "pakfile list": Op(_sb_pak, loads=("sourcebsp.codecs.pakfile",)),
    "pvs/pas": Op(_sb_vis),
    "save unchanged": Op(_save_to, _sb_open, _sb_close, loads=_SAVING),
    "save after edit": Op(_save_to, _sb_edited, _sb_close, loads=_SAVING + _EDITING),
    # Like for like with the other libraries, which never flush to the disk.
    "save unchanged (no fsync)": Op(_save_unsynced, _sb_open, _sb_close, loads=_SAVING),
    "save after edit (no fsync)": Op(_save_unsynced, _sb_edited, _sb_close, loads=_SAVING + _EDITING),
    "export obj": Op(_sb_obj, loads=("sourcebsp.converters.obj",)),
    "export glb": Op(_sb_glb, loads=("sourcebsp.converters.gltf", "sourcebsp._io", "pygltflib", "PIL.Image")),
    "decompile vmf": Op(_sb_vmf, loads=("sourcebsp.converters.vmf",)),
    # With the readers of the textures it finds in the pakfile (srctools' VMT and VTF), code it imports.
    "render": Op(_sb_render, loads=("sourcebsp.converters.render", "sourcebsp.converters.render.textures",
                                    "PIL.Image", "srctools.vmt", "srctools.vtf")),
    "deps+check": Op(_sb_deps_check, loads=("sourcebsp.content", "sourcebsp.content.lint")),
    "cli info": Op(_sb_info, process_run=_sb_info_command),
}
# These need no table of records, so no numpy (see tests/test_startup.py).
_WITHOUT_NUMPY = {"entities", "pakfile list", "save unchanged", "save after edit", "save unchanged (no fsync)",
                  "save after edit (no fsync)"}
# The codec modules, which the layout tables import on first use (every codec but the static
# props'), are code like the converters: imports, not the operation's data.
_CODECS = ("sourcebsp.codecs.tables:tables()", "sourcebsp.codecs.staticprops")
for _name, _op in SOURCEBSP_OPS.items():
    if _name != "cli info":  # the command itself sets up the process before numpy loads
        _op.loads = ("sourcebsp:open", *(() if _name in _WITHOUT_NUMPY else ("numpy", *_CODECS)), *_op.loads)


# srctools -----------------------------------------------------------------------------
def _st_open(path: str) -> Any:
    from srctools.bsp import BSP

    return BSP(path)


def _srctools_lumps(bsp: Any) -> list[str]:
    """The ``ParsedLump`` views whose lump the file has.

    A view of an absent lump only builds an empty default (and saving the
    default Strata Source ``color_vars`` fails in srctools 2.7).
    """
    from srctools.bsp import BSP, ParsedLump

    names = []
    for name, view in vars(BSP).items():
        if not isinstance(view, ParsedLump):
            continue
        present = view.lump in bsp.game_lumps if isinstance(view.lump, bytes) else bool(bsp.lumps[view.lump].data)
        if present:
            names.append(name)
    return names


def _st_decode(path: str, out: str) -> str:
    bsp = _st_open(path)
    names = _srctools_lumps(bsp)
    for name in names:
        try:
            getattr(bsp, name)
        except Exception as error:
            raise RuntimeError(f"parsing {name}: {type(error).__name__}: {error}") from error
    return f"{len(names)} parsed lump views"


def _st_edited(path: str) -> Any:
    bsp = _st_open(path)
    bsp.ents.spawn["bench_edit"] = "1"
    return bsp


def _st_save(bsp: Any, out: str) -> None:
    bsp.save(out)


def _st_entities(path: str, out: str) -> str:
    # srctools makes every key and value a string while parsing; this reads them all.
    vmf = _st_open(path).ents
    entities = [vmf.spawn, *vmf.entities]
    pairs = sum(len(list(entity.items())) for entity in entities)
    return f"{len(entities)} entities, {pairs} keys"


def _st_vis(path: str, out: str) -> str:
    vis = _st_open(path).visibility
    if vis is None:
        return "no visibility"
    return f"{len(vis.potentially_visible)} + {len(vis.potentially_audible)} clusters (PVS and PAS sets)"


SRCTOOLS_OPS = {
    "open+decode": Op(_st_decode),
    "entities": Op(_st_entities),
    "static props": Op(lambda path, out: f"{len(_st_open(path).props)} props"),
    "pakfile list": Op(lambda path, out: f"{len(_st_open(path).pakfile.namelist())} files"),
    "pvs/pas": Op(_st_vis),
    "save unchanged": Op(_st_save, _st_open),
    "save after edit": Op(_st_save, _st_edited),
}


# bsp_tool -----------------------------------------------------------------------------
def _bt_open(path: str) -> Any:
    import bsp_tool

    return bsp_tool.load_bsp(path)


def _bt_close(bsp: Any) -> None:
    bsp.file.close()


def _bt_decode(path: str, out: str) -> str:
    from bsp_tool import lumps

    bsp = _bt_open(path)
    try:
        touched = 0
        for lump in bsp.branch.LUMP:
            value = getattr(bsp, lump.name, None)
            if value is None:
                continue
            touched += 1
            if isinstance(value, lumps.BasicBspLump):
                value[:]  # bsp_tool reads table entries lazily
        errors = sorted(bsp.loading_errors)
    finally:
        _bt_close(bsp)
    return f"{touched} lumps read" + ("; left raw after loading errors: " + ", ".join(errors) if errors else "")


def _bt_with(read: Callable[[Any], str]) -> Callable[[str, str], str]:
    def run(path: str, out: str) -> str:
        bsp = _bt_open(path)
        try:
            return read(bsp)
        finally:
            _bt_close(bsp)
    return run


def _bt_save(bsp: Any, out: str) -> None:
    from bsp_tool.base import Bsp

    if type(bsp).save_as is Bsp.save_as:  # the base class only raises NotImplementedError
        raise NotImplementedError(f"bsp_tool has no writer for {type(bsp).__name__}")
    bsp.save_as(out)


def _bt_edited(path: str) -> Any:
    bsp = _bt_open(path)
    bsp.ENTITIES[0]["bench_edit"] = "1"
    return bsp


def _bt_obj(path: str, out: str) -> None:
    from bsp_tool.scene import wavefront

    bsp = _bt_open(path)
    try:
        models = [bsp.model(i) for i in range(len(bsp.MODELS))]
        with open(out, "w") as handle:
            handle.write(wavefront.Obj.from_models(models).as_text())
    finally:
        _bt_close(bsp)


BSP_TOOL_OPS = {
    "open+decode": Op(_bt_decode),
    "entities": Op(_bt_with(lambda bsp: f"{len(bsp.ENTITIES)} entities")),
    "static props": Op(_bt_with(lambda bsp: f"{len(bsp.GAME_LUMP.sprp.props)} props")),
    "pakfile list": Op(_bt_with(lambda bsp: f"{len(bsp.PAKFILE.namelist())} files")),
    "save unchanged": Op(_bt_save, _bt_open, _bt_close),
    "save after edit": Op(_bt_save, _bt_edited, _bt_close),
    "export obj": Op(_bt_obj),
}


# sourcepp -----------------------------------------------------------------------------
def _sp_open(path: str) -> Any:
    from sourcepp import bsppp

    bsp = bsppp.BSP(path)
    if not bsp:
        raise RuntimeError("sourcepp could not open the map")
    return bsp


def _sp_decode(path: str, out: str) -> str:
    bsp = _sp_open(path)
    lump_enum = type(bsp).Lump
    typed = set()
    for attr in dir(bsp):
        if attr.startswith("get_lump_data_for_"):
            lump = getattr(lump_enum, attr[len("get_lump_data_for_"):].upper())
            typed.add(lump.value)
            if bsp.has_lump(lump):
                getattr(bsp, attr)()
    raw = 0
    for index in range(64):
        if index not in typed and bsp.has_lump(lump_enum(index)):
            bsp.get_lump_data(lump_enum(index))
            raw += 1
    return f"{len(typed)} typed getters + raw bytes of {raw} other lumps"


def _sp_entities(path: str, out: str) -> str:
    # Every key and value made into Python strings, as the other libraries' rows do.
    entities = _sp_open(path).get_lump_data_for_entities()
    pairs = sum(len([(pair.key, pair.value) for pair in entity.keyvalues]) for entity in entities)
    return f"{len(entities)} entities, {pairs} keys"


def _sp_pak(path: str, out: str) -> str:
    from sourcepp import bsppp

    pak = bsppp.PakLump.open(path)
    names: list[str] = []
    pak.run_for_all_entries(lambda name, entry: names.append(name))
    return f"{len(names)} files"


# sourcepp's LZMA level for a lump found compressed: liblzma's preset 6, the level sourcebsp uses.
_SP_LZMA_LEVEL = 6


def _sp_edited(path: str) -> Any:
    bsp = _sp_open(path)
    entities = bsp.get_lump_data_for_entities()
    entities[0].add_keyvalue("bench_edit", "1")
    return bsp, entities


def _sp_save_edited(state: Any, out: str) -> None:
    """Store the edited entities and write the map, timed together like the others' saves
    (srctools and sourcebsp turn an edit into bytes inside ``save``; sourcepp does it in
    ``set_lump_for_entities``).  The lump stays compressed when it was, as in sourcebsp's
    save; a level of 0 would store it uncompressed."""
    bsp, entities = state
    lump = type(bsp).Lump.ENTITIES
    level = _SP_LZMA_LEVEL if bsp.is_lump_compressed(lump) else 0
    bsp.set_lump_for_entities(bsp.get_lump_version(lump), entities, level)
    _sp_save(bsp, out)


def _sp_save(bsp: Any, out: str) -> None:
    if not bsp.bake(out):
        raise RuntimeError("bake() returned False")


SOURCEPP_OPS = {
    "open+decode": Op(_sp_decode),
    "entities": Op(_sp_entities),
    "pakfile list": Op(_sp_pak),
    "save unchanged": Op(_sp_save, _sp_open),
    "save after edit": Op(_sp_save_edited, _sp_edited),
}

def _unsynced_too(ops: dict[str, Op]) -> dict[str, Op]:
    """A library that never calls fsync: its saves are also the "no fsync" rows."""
    return {**ops, **{f"{name} (no fsync)": ops[name] for name in ("save unchanged", "save after edit") if name in ops}}


SRCTOOLS_OPS, BSP_TOOL_OPS, SOURCEPP_OPS = map(_unsynced_too, (SRCTOOLS_OPS, BSP_TOOL_OPS, SOURCEPP_OPS))

LIBRARIES: dict[str, Adapter] = {
    "sourcebsp": Adapter("sourcebsp", "sourcebsp", "sourcebsp", SOURCEBSP_OPS, ready="sourcebsp:open"),
    "srctools": Adapter("srctools", "srctools.bsp", "srctools", SRCTOOLS_OPS),
    "bsp_tool": Adapter("bsp_tool", "bsp_tool", "bsp_tool", BSP_TOOL_OPS),
    "sourcepp": Adapter("sourcepp", "sourcepp", "sourcepp", SOURCEPP_OPS),
}


def _load(names: tuple[str, ...]) -> None:
    """Import each ``module``, or ``module:name`` to also look the name up (``sourcebsp:open``
    loads the container the way a program's first ``sourcebsp.open`` does), or ``module:name()``
    to call it (``sourcebsp.codecs.tables:tables()`` composes the layout tables, importing the codecs)."""
    for spec in names:
        name, _, attribute = spec.partition(":")
        module = __import__(name, fromlist=["_"])
        if attribute.endswith("()"):
            getattr(module, attribute[:-2])()
        elif attribute:
            getattr(module, attribute)
        if name == "PIL.Image":
            module.preinit()  # the format plug-ins Pillow loads on its first save


def child(library: str, operation: str, path: str, out: str) -> None:
    """The measured interpreter: import the library, do one operation (``-``: none), print
    its peak RSS before the operation (after its imports) and at the end."""
    import io
    import resource

    adapter = LIBRARIES[library]
    _load((adapter.ready,) if operation == "-" else (adapter.module,))
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    if operation != "-":
        op = adapter.ops[operation]
        stdout, sys.stdout = sys.stdout, io.StringIO()  # srctools and bsp_tool print while saving
        try:
            _load(op.loads)
            before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
            op.process_run(op.setup(path), out)
        finally:
            sys.stdout = stdout
    print(before, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)


if __name__ == "__main__":
    child(*sys.argv[1:5])
