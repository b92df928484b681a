"""The entity lump: parsing, editing and writing, on synthetic text and on every corpus map.

Independent references: srctools' entity parser (``BSP.ents``; for maps
srctools cannot open, its parser run on the lump text), and the Hammer
sources in ``vmf/``.
"""
from __future__ import annotations

import struct
import time
import warnings
from pathlib import Path
from typing import Any

import pytest

import sourcebsp
from sourcebsp import BspFormatError, LumpId
from sourcebsp.codecs.entities import (
    ESC,
    Entities,
    EntitiesCodec,
    Entity,
    EntitySyntaxError,
    Output,
    iter_entities,
    parse_entities,
)

srctools_bsp = pytest.importorskip("srctools.bsp")
from srctools.keyvalues import Keyvalues  # noqa: E402


# ---- srctools as the reference ------------------------------------------------------
def srctools_entities(path: Path | None, lump: bytes | None = None) -> list[Any]:
    """srctools' entities of a map (worldspawn first).

    srctools cannot open big-endian (Xbox 360) maps; for those its entity
    parser is run on the lump text given in ``lump``.
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if path is not None:
            try:
                vmf = srctools_bsp.BSP(path).ents
                return [vmf.spawn, *vmf.entities]
            except ValueError:
                if lump is None:
                    raise
        stub = srctools_bsp.BSP.__new__(srctools_bsp.BSP)
        stub.out_comma_sep = None
        vmf = srctools_bsp.BSP._lmp_read_ents(stub, bytes(lump))
        return [vmf.spawn, *vmf.entities]


def srctools_view(entity: Any) -> tuple[dict[str, str], list[tuple[Any, ...]]]:
    """srctools keeps one value per key (case-insensitive, the last one) and the outputs apart."""
    keys = {k.casefold(): v for k, v in entity.items()}
    outputs = [(o.output if o.inst_out is None else f"instance:{o.inst_out};{o.output}",
                o.target, o.input, o.params, o.delay, o.times) for o in entity.outputs]
    return keys, outputs


def our_view(entity: Entity) -> tuple[dict[str, str], list[tuple[Any, ...]]]:
    """Our pairs folded the way srctools folds them."""
    keys: dict[str, str] = {}
    outputs = []
    for key, value in entity.items():
        output = Output.parse(key, value)
        if output is not None and not output.extra:
            outputs.append((key, output.target, output.input, output.parameter, output.delay, output.times))
        else:
            keys[key.casefold()] = value
    return keys, outputs


def lump_text(path: Path) -> bytes:
    with sourcebsp.open(path) as bsp:
        return bytes(bsp.lump_bytes(LumpId.ENTITIES))


# ---- the corpus ---------------------------------------------------------------------
def test_corpus_entities_equal_srctools(map_path: Path) -> None:
    data = lump_text(map_path)
    with sourcebsp.open(map_path) as bsp:
        ours = list(bsp.entities)
        theirs = srctools_entities(map_path, data)
        assert len(ours) == len(theirs)
        for index, (mine, other) in enumerate(zip(ours, theirs)):
            assert our_view(mine) == srctools_view(other), f"entity {index}"
            if index:  # the keys in the same order (srctools puts worldspawn's classname first)
                assert list(our_view(mine)[0]) == list(srctools_view(other)[0]), f"entity {index}"
        # Repeated keys are all kept: every quoted string of the text is in a pair.
        text = data.split(b"\0", 1)[0]
        assert 4 * sum(len(e) for e in ours) == text.count(b'"')
        assert ours[0].classname == "worldspawn"


def test_corpus_decode_encode_is_identity(map_path: Path, tmp_path: Path) -> None:
    data = lump_text(map_path)
    entities = parse_entities(data)
    assert not entities.changed
    assert entities.to_bytes() == data
    # Through the container: the entities are loaded, so they are encoded again on save.
    with sourcebsp.open(map_path) as bsp:
        assert len(bsp.entities) > 0
        assert bsp.to_bytes() == map_path.read_bytes()
        assert bsp.save(tmp_path / "same.bsp", reencode=True).read_bytes() == map_path.read_bytes()


def test_corpus_brush_entities_link_to_models(map_path: Path) -> None:
    with sourcebsp.open(map_path) as bsp:
        entities = bsp.entities
        models = bsp.models
        linked = [e for e in entities if e.model_index is not None]
        for entity in linked:
            assert 0 < entity.model_index < len(models)
            assert entities.by_model(entity.model_index) is not None
        # Every "*N" value is a link; no other model value is.
        stars = [e for e in entities if (e.get("model") or "").startswith("*")]
        assert linked == stars
        assert entities.by_model(0) is entities.worldspawn


def test_corpus_output_separator_as_found(map_path: Path, tmp_path: Path) -> None:
    data = lump_text(map_path)
    with sourcebsp.open(map_path) as bsp:
        entities = bsp.entities
        outputs = [o for e in entities for o in e.outputs]
        if ESC.encode() in data:
            assert outputs and all(o.separator == ESC for o in outputs)
            assert entities.output_separator == ESC
        elif outputs:
            assert all(o.separator == "," for o in outputs)
            assert entities.output_separator == ","
        # A new output is written with the map's separator and read back as an output.
        world = entities.worldspawn
        world.add_output("OnUser1", "!self", "Kill", "a b", 1.5, 1, separator=entities.output_separator)
        out = tmp_path / "out.bsp"
        bsp.save(out)
    with sourcebsp.open(out) as again:
        added = again.entities.worldspawn.outputs[-1]
        assert (added.target, added.input, added.parameter, added.delay, added.times) == ("!self", "Kill", "a b", 1.5, 1)
        assert added.separator == entities.output_separator
        theirs = srctools_entities(out, bytes(again.lump_bytes(0)))[0].outputs[-1]
        assert (theirs.output, theirs.target, theirs.input, theirs.params, theirs.delay, theirs.times) == (
            "OnUser1", "!self", "Kill", "a b", 1.5, 1)


def test_corpus_edits_survive_save_and_reopen(map_path: Path, tmp_path: Path) -> None:
    with sourcebsp.open(map_path) as bsp:
        entities = bsp.entities
        count = len(entities)
        world = entities.worldspawn
        world["skyname"] = "sky_sourcebsp_test"
        world.rename("classname", "classname")  # a no-op rename still counts as a change
        world.add("sourcebsp_note", "first")
        world.add("sourcebsp_note", "second")  # repeated keys keep their order
        doomed = entities[-1] if count > 1 else None
        doomed_pairs = doomed.items() if doomed else None
        if doomed is not None:
            entities.remove(doomed)
        entities.add(classname="info_target", targetname="sourcebsp_added", origin=(1, 2.5, -3))
        out = tmp_path / "edited.bsp"
        bsp.save(out)
    with sourcebsp.open(out) as again:
        ents = again.entities
        expected = count + 1 - (1 if doomed is not None else 0)
        assert len(ents) == expected
        assert ents.worldspawn["skyname"] == "sky_sourcebsp_test"
        assert ents.worldspawn.get_all("sourcebsp_note") == ["first", "second"]
        added = ents.first(targetname="sourcebsp_added")
        assert added is not None and added.classname == "info_target" and added.origin == (1.0, 2.5, -3.0)
        assert ents[-1] is added
        if doomed_pairs is not None:
            assert [e.items() for e in ents].count(doomed_pairs) == [
                e.items() for e in parse_entities(lump_text(map_path))].count(doomed_pairs) - 1
        raw = bytes(again.lump_bytes(0))
        assert raw.endswith(b"\0") and raw.count(b"\0") == 1
        # The other lumps are untouched.
        with sourcebsp.open(map_path) as before:
            for lump in (LumpId.PLANES, LumpId.MODELS):
                assert bytes(again.lump_bytes(lump)) == bytes(before.lump_bytes(lump))
    theirs = srctools_entities(out, raw)
    assert len(theirs) == expected
    assert theirs[0]["skyname"] == "sky_sourcebsp_test"
    assert theirs[0]["sourcebsp_note"] == "second"  # srctools keeps the last value of a repeated key
    found = [e for e in theirs if e["targetname"] == "sourcebsp_added"]
    assert len(found) == 1 and found[0]["classname"] == "info_target" and found[0]["origin"] == "1 2.5 -3"


def test_largest_entity_lump_parses_fast(corpus_file) -> None:
    """v42_rot_main: 742 KB of entity text, 3073 entities.  Compared with srctools'
    tokenizer on the same text (machine speed cancels out)."""
    data = lump_text(corpus_file("v42_rot_main.bsp"))
    assert len(data) > 700_000

    def best(fn: Any, runs: int = 3) -> float:
        times = []
        for _ in range(runs):
            start = time.perf_counter()
            fn()
            times.append(time.perf_counter() - start)
        return min(times)

    ours = best(lambda: parse_entities(data))
    theirs = best(lambda: srctools_entities(None, data), runs=1)
    assert len(parse_entities(data)) == 3073
    assert ours < theirs / 4, (ours, theirs)
    assert ours < 1.0


# ---- the Hammer sources -------------------------------------------------------------
# Entities vbsp consumes: it turns them into other lumps (static props, overlays,
# cubemaps, detail brushes merged into the world, instances collapsed) and
# leaves them out of the entity lump.  Seen in the corpus: prop_static,
# info_overlay and func_detail (test_consumed_classes_are_absent checks them).
CONSUMED_BY_VBSP = frozenset({
    "prop_static", "static_prop", "prop_detail", "info_overlay", "info_overlay_transition",
    "env_cubemap", "func_detail", "func_instance", "func_instance_parms", "func_instance_io_proxy",
    "info_no_dynamic_shadow", "func_viscluster",
})
VMFS = ["momentum_mp_lobby", "tf2_mp_lobby", "tf2_test2", "tf2_test_displacement_decompile",
        "tf2_test_physcollide", "x360_shack"]


def compiled_vmf_entities(path: Path) -> tuple[int, list[Keyvalues]]:
    """(mapversion, top-level entity blocks).  Entities Hammer hides (under a
    top-level ``hidden`` block) are not compiled, so they are left out."""
    with path.open(encoding="utf-8", errors="surrogateescape") as handle:
        root = Keyvalues.parse(handle)
    version = int(root.find_key("versioninfo")["mapversion"])
    return version, [block for block in root if block.name == "entity"]


@pytest.mark.parametrize("name", VMFS)
def test_vmf_point_entities_are_in_the_bsp(name: str, vmf_dir: Path, corpus_file) -> None:
    vmf_version, blocks = compiled_vmf_entities(vmf_dir / f"{name}.vmf")
    with sourcebsp.open(corpus_file(f"{name}.bsp")) as bsp:
        entities = list(bsp.entities)
    by_id = {e["hammerid"]: e for e in entities if "hammerid" in e}
    bsp_version = int(entities[0]["mapversion"])
    newest = max(map(int, by_id))
    checked = late = 0
    for block in blocks:
        # A brush entity has "solid" blocks (prop_dynamic has a "solid" key: not a block).
        brush = any(child.name == "solid" and child.has_children() for child in block)
        if brush or block["classname"] in CONSUMED_BY_VBSP:
            continue
        found = by_id.get(block["id"])
        if found is None:
            # The .vmf was saved again after the compile (tf2_test2: mapversion 26
            # against 24 in the BSP): only entities made after it may be missing.
            assert vmf_version > bsp_version and int(block["id"]) > newest, (block["classname"], block["id"])
            late += 1
            continue
        assert found.classname == block["classname"]
        want = [float(v) for v in block["origin"].split()]
        assert found.origin is not None
        assert all(abs(a - b) <= 0.01 for a, b in zip(found.origin, want)), (found, want)
        assert found.get("targetname") == block["targetname", None]
        checked += 1
    assert late == (3 if name == "tf2_test2" else 0)  # three cans added to tf2_test2 after its compile
    expected_points = {"momentum_mp_lobby": 2, "tf2_mp_lobby": 3, "tf2_test2": 22,
                       "tf2_test_displacement_decompile": 0, "tf2_test_physcollide": 0, "x360_shack": 3}
    assert checked == expected_points[name]


@pytest.mark.parametrize("name", VMFS)
def test_consumed_classes_are_absent(name: str, vmf_dir: Path, corpus_file) -> None:
    _, blocks = compiled_vmf_entities(vmf_dir / f"{name}.vmf")
    with sourcebsp.open(corpus_file(f"{name}.bsp")) as bsp:
        entities = bsp.entities
        ids = {e["hammerid"] for e in entities if "hammerid" in e}
        classes = {(e.classname or "").casefold() for e in entities}
    for block in blocks:
        if block["classname"] in CONSUMED_BY_VBSP:
            assert block["id"] not in ids, block["classname"]
    assert not classes & CONSUMED_BY_VBSP


# ---- synthetic text -----------------------------------------------------------------
SAMPLE = (
    b'{\n"world_maxs" "1 2 3"\n"classname" "worldspawn"\n}\n'
    b'{\n"model" "*2"\n"classname" "trigger_once"\n"targetname" "Door_Trigger"\n'
    b'"OnTrigger" "door,Open,,0,-1"\n"OnTrigger" "door,Close,,5,1"\n}\n'
    b'{\n"classname" "info_target"\n"targetname" "spot"\n"origin" "0 0 64"\n}\n\x00'
)


def test_pairs_in_order_with_repeated_keys() -> None:
    entities = parse_entities(SAMPLE)
    trigger = entities[1]
    assert trigger.items() == [("model", "*2"), ("classname", "trigger_once"), ("targetname", "Door_Trigger"),
                               ("OnTrigger", "door,Open,,0,-1"), ("OnTrigger", "door,Close,,5,1")]
    assert trigger.get_all("ontrigger") == ["door,Open,,0,-1", "door,Close,,5,1"]
    assert trigger["OnTrigger"] == "door,Close,,5,1"  # the last value, as the engine ends up with
    assert trigger.model_index == 2
    assert entities[2].model_index is None and entities[0].model_index is None
    outputs = trigger.outputs
    assert [(o.name, o.target, o.input, o.parameter, o.delay, o.times, o.separator) for o in outputs] == [
        ("OnTrigger", "door", "Open", "", 0.0, -1, ","), ("OnTrigger", "door", "Close", "", 5.0, 1, ",")]
    assert outputs[0].text == "door,Open,,0,-1"


def test_find_by_classname_and_targetname() -> None:
    entities = parse_entities(SAMPLE)
    assert entities.find(classname="trigger_once") == [entities[1]]
    assert entities.find(targetname="door_trigger") == [entities[1]]  # case-insensitive
    assert entities.find(classname="info_*") == [entities[2]]
    assert entities.find(classname="trigger_once", targetname="spot") == []
    assert entities.find(origin="0 0 64") == [entities[2]]
    assert entities.first(targetname="nobody") is None
    assert len(entities.find()) == 3
    assert entities.by_model(2) is entities[1]


def test_set_rename_delete_keys() -> None:
    entities = parse_entities(SAMPLE)
    trigger = entities[1]
    trigger["ONTRIGGER"] = "x,y,,0,-1"  # one value: the first pair changes, the others go
    assert trigger.get_all("OnTrigger") == ["x,y,,0,-1"]
    assert trigger.keys()[3] == "OnTrigger"
    trigger.add("OnTrigger", "z,w,,0,-1")
    assert trigger.rename("ontrigger", "OnStartTouch") == 2
    assert "OnTrigger" not in trigger and trigger.get_all("OnStartTouch") == ["x,y,,0,-1", "z,w,,0,-1"]
    assert trigger.delete("onstarttouch") == 2
    with pytest.raises(KeyError):
        trigger.delete("onstarttouch")
    with pytest.raises(KeyError):
        trigger.rename("missing", "other")
    trigger["health"] = 100
    trigger["origin"] = (1, 2.5, 0.0)
    assert trigger["health"] == "100" and trigger["origin"] == "1 2.5 0"
    text = entities.to_bytes()
    again = parse_entities(text)
    assert again[1].items() == trigger.items()
    assert again[0].items() == entities[0].items() and again[2].items() == entities[2].items()
    # Untouched entities keep their exact text.
    assert text.startswith(SAMPLE[: SAMPLE.index(b"}\n") + 2])
    assert text.endswith(b'"origin" "0 0 64"\n}\n\x00')


def test_values_the_lump_cannot_hold_are_refused() -> None:
    entity = Entity(classname="info_target")
    with pytest.raises(ValueError):
        entity["message"] = 'say "hi"'
    with pytest.raises(ValueError):
        entity.add("key\0", "x")
    with pytest.raises(TypeError):
        entity["x"] = object()
    with pytest.raises(ValueError):
        Output.make("OnTrigger", "a,b", "Kill", separator=",")


def test_esc_outputs_keep_commas_in_parameters() -> None:
    text = '{\n"classname" "logic_relay"\n"OnTrigger" "t\x1bAddOutput\x1bhealth 1,2\x1b0.5\x1b-1"\n}\n\x00'
    entities = parse_entities(text.encode())
    [output] = entities[0].outputs
    assert (output.target, output.input, output.parameter, output.delay, output.times) == (
        "t", "AddOutput", "health 1,2", 0.5, -1)
    assert output.separator == ESC and entities.output_separator == ESC
    new = entities[0].add_output("OnUser1", "a", "b")
    assert new.text == "a\x1bb\x1b\x1b0\x1b-1"
    assert entities.to_bytes().count(b"\x1b") == 8


def test_vampire_outputs_with_extra_fields() -> None:
    [entity] = parse_entities(b'{\n"OnTrigger" "newplayer,Toggle,,0,1,ccmd.createplayer,"\n}\n\x00')
    [output] = entity.outputs
    assert (output.target, output.input, output.times, output.extra) == ("newplayer", "Toggle", 1, ("ccmd.createplayer", ""))


def test_not_outputs() -> None:
    assert Output.parse("message", "a,b,c,d,e") is None  # delay and times are not numbers
    assert Output.parse("targetname", "door") is None
    assert Output.parse("x", "a\x1bb\x1bc") is None


def test_layout_kept_when_untouched() -> None:
    odd = b'  {"classname" "worldspawn"   "a"\t"b"}\r\n\r\n{ "classname"  "x" }\r\n\x00\x00pad'
    entities = parse_entities(odd)
    assert [e.items() for e in entities] == [[("classname", "worldspawn"), ("a", "b")], [("classname", "x")]]
    assert entities.to_bytes() == odd
    entities[1]["k"] = "v"
    assert entities.newline == "\r\n"
    assert entities.to_bytes() == (b'  {"classname" "worldspawn"   "a"\t"b"}\r\n\r\n'
                                   b'{\r\n"classname" "x"\r\n"k" "v"\r\n}\r\n\x00\x00pad')


def test_bytes_that_are_not_utf8_survive() -> None:
    data = b'{\n"classname" "worldspawn"\n"message" "caf\xe9 \xc3\xa9"\n}\n\x00'
    entities = parse_entities(data)
    assert entities[0]["message"].endswith("\u00e9")  # valid UTF-8 is text
    assert entities.to_bytes() == data
    entities[0]["other"] = "1"
    assert parse_entities(entities.to_bytes())[0]["message"] == entities[0]["message"]


def test_empty_and_unterminated_lumps() -> None:
    empty = parse_entities(b"")
    assert len(empty) == 0 and empty.to_bytes() == b""
    empty.add(classname="worldspawn")
    assert empty.to_bytes() == b'{\n"classname" "worldspawn"\n}\n\x00'
    bare = b'{\n"classname" "worldspawn"\n}'  # no NUL: kept as found, NUL added once edited
    entities = parse_entities(bare)
    assert entities.to_bytes() == bare
    entities.add(classname="info_null")
    assert entities.to_bytes() == bare + b'\n{\n"classname" "info_null"\n}\n\x00'


def test_add_remove_insert() -> None:
    entities = parse_entities(SAMPLE)
    spot = entities[2]
    new = entities.add({"classname": "info_target"}, targetname="t2")
    assert new.items() == [("classname", "info_target"), ("targetname", "t2")]
    entities.insert(1, Entity([("classname", "light"), ("classname", "light")]))
    entities.remove(spot)
    assert spot not in entities
    del entities[0]
    with pytest.raises(ValueError):
        entities.remove(spot)
    assert [e.classname for e in parse_entities(entities.to_bytes())] == ["light", "trigger_once", "info_target"]
    assert entities.remove_all(entities.find(classname="light")) == 1
    with pytest.raises(TypeError):
        entities.add(Entity(), classname="x")


def test_codec_registered_for_every_variant() -> None:
    from sourcebsp.variants import VARIANTS

    for variant in VARIANTS.values():
        codec = variant.codec(LumpId.ENTITIES, 0)
        assert isinstance(codec, EntitiesCodec) and codec.mutable


# ---- malformed text -----------------------------------------------------------------
MALFORMED = [
    # (text, byte offset of the error, line, words in the message)
    (b'{\n"classname" "worldspawn"\n}\n{\n"a" "b"\n\x00', 29, 4, "never closed"),
    (b'{\n"classname" "worldspawn"\n}\n}\n\x00', 29, 4, "'}' with no '{'"),
    (b'{\n"classname" "worldspawn"\n{\n"a" "b"\n}\n\x00', 27, 3, "inside the entity opened at line 1"),
    (b'{\n"classname" "worldspawn"\n"message" "unterminated\n}\n\x00', 37, 3, "unterminated"),
    (b'{\n"classname" "worldspawn"\n"lonely"\n}\n\x00', 27, 3, "'lonely' has no value"),
    (b'{\n"classname" "worldspawn"\n}\n"stray" "pair"\n\x00', 29, 4, "outside braces"),
    (b'{\n"classname" "worldspawn"\n}\njunk\n\x00', 29, 4, "outside braces"),
    (b'{\n"classname" worldspawn\n}\n\x00', 14, 2, "inside an entity"),
]


@pytest.mark.parametrize("text, offset, line, words", MALFORMED)
def test_malformed_text_names_offset_and_line(text: bytes, offset: int, line: int, words: str) -> None:
    with pytest.raises(EntitySyntaxError) as info:
        parse_entities(text, file_offset=1000)
    error = info.value
    assert isinstance(error, BspFormatError)
    assert (error.lump_offset, error.offset, error.line) == (offset, 1000 + offset, line)
    message = str(error)
    assert f"file offset {1000 + offset}" in message and f"line {line}," in message
    assert words in message


def test_iter_entities_yields_what_the_lump_holds(map_path: Path) -> None:
    """One entity at a time from the lump's memory-mapped bytes: the same pairs and text as the decoded list."""
    with sourcebsp.open(map_path) as bsp:
        if not bsp.has_lump(LumpId.ENTITIES):
            pytest.skip("no entity lump")
        streamed = [(e.items(), e.to_text(), e.trail) for e in iter_entities(bsp.lump_bytes(LumpId.ENTITIES))]
        assert streamed == [(e.items(), e.to_text(), e.trail) for e in bsp.entities]


@pytest.mark.parametrize("text, offset, line, words", MALFORMED)
def test_iter_entities_raises_where_the_parser_fails(text: bytes, offset: int, line: int, words: str) -> None:
    entities = iter_entities(memoryview(text), file_offset=1000)
    with pytest.raises(EntitySyntaxError) as info:
        for entity in entities:
            assert entity.classname == "worldspawn"  # the block before the error comes first
    assert (info.value.lump_offset, info.value.offset, info.value.line) == (offset, 1000 + offset, line)


def test_error_offset_counts_bytes_not_characters() -> None:
    text = '{\n"message" "\u00e9\u00e9"\n"x"\n}\n\x00'.encode()
    with pytest.raises(EntitySyntaxError) as info:
        parse_entities(text)
    assert info.value.lump_offset == text.index(b'"x"') and info.value.line == 3


def test_malformed_lump_in_a_real_map_names_the_file_offset(corpus_file) -> None:
    path = corpus_file("tf2_mp_lobby.bsp")
    data = bytearray(path.read_bytes())
    fileofs, filelen = struct.unpack_from("<ii", data, 8)
    lump = bytes(data[fileofs : fileofs + filelen])
    bad = lump.index(b"}")  # worldspawn's closing brace becomes a stray quote
    data[fileofs + bad] = ord('"')
    bsp = sourcebsp.BspFile.from_bytes(bytes(data))
    with pytest.raises(BspFormatError) as info:
        bsp.get_lump(LumpId.ENTITIES)
    assert info.value.lump == "ENTITIES"
    assert fileofs <= info.value.offset < fileofs + filelen
    line = lump[: info.value.offset - fileofs].count(b"\n") + 1
    assert f"line {line}," in str(info.value)


def test_decode_via_codec_uses_context() -> None:
    from sourcebsp.codecs.base import LumpContext

    ctx = LumpContext(0, "ENTITIES", 0, 19, "<", 5000)
    entities = EntitiesCodec().decode(memoryview(b'{"classname" "worldspawn"}\x00'), ctx)
    assert entities.output_separator == ","  # no outputs in a BSP 19 map: commas
    assert EntitiesCodec().count(entities) == 1
    with pytest.raises(EntitySyntaxError) as info:
        EntitiesCodec().decode(memoryview(b'{"a"}\x00'), ctx)
    assert info.value.offset == 5001 and info.value.lump == "ENTITIES"


def test_entities_collection_is_a_sequence() -> None:
    entities = Entities([Entity(classname="worldspawn")])
    assert len(entities) == 1 and entities.worldspawn is entities[0]
    assert entities.to_bytes() == b'{\n"classname" "worldspawn"\n}\n\x00'
    assert Entities().worldspawn is None


# Tactical Intervention's entity lumps: NULs between blocks (Tsuey/Tactically-Decompiled's README:
# readers that stop at the first NUL miss hundreds of entities in each map).
_TI_LUMP = (b'{\n"classname" "worldspawn"\n}\n\0\0\0{\n"classname" "info_player_ctstart_A1"\n}\n'
            b'\0\n{\n"classname" "ti_trigger_once"\n"targetname" "t1"\n}\n\0\0stale text')


def test_entities_after_nuls_between_blocks_are_read() -> None:
    ents = Entities.from_bytes(_TI_LUMP)
    assert [e["classname"] for e in ents] == ["worldspawn", "info_player_ctstart_A1", "ti_trigger_once"]
    assert ents.to_bytes() == _TI_LUMP  # untouched: as found, the stale text after the last NUL too
    assert [e["classname"] for e in iter_entities(_TI_LUMP)] == [e["classname"] for e in ents]
    ents[2]["targetname"] = "t2"
    edited = Entities.from_bytes(ents.to_bytes())
    assert [e.get("targetname") for e in edited] == [None, None, "t2"]


def test_text_after_the_last_nul_is_not_read_as_entities() -> None:
    # What follows the terminating NUL is kept, not parsed, unless a block starts there.
    ents = Entities.from_bytes(b'{\n"classname" "worldspawn"\n}\n\0 "k" "v" }\0\0')
    assert len(ents) == 1 and ents.to_bytes().endswith(b'\0 "k" "v" }\0\0')
    with pytest.raises(EntitySyntaxError):  # a broken block after NULs is the lump's, and broken
        Entities.from_bytes(b'{\n"classname" "worldspawn"\n}\n\0{ "k" }\0')
