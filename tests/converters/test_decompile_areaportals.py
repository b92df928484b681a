"""Areaportal brushes given back to their ``func_areaportal`` when the AREAPORTALS lump is empty.

The maps are built in code with the example room's builder: world brushes
with ``CONTENTS_AREAPORTAL`` (as vbsp leaves an areaportal entity's brush),
``func_door`` brush models, areaportal entities with ``target`` keys, and the
AREAPORTALS lump vbsp writes for a map without portals (its one dummy entry).
Which entity owns which brush is known from how each map was built; the
decompiled VMF is read back with srctools.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

from sourcebsp.codecs.entities import Entity
from sourcebsp.container import BspFile
from sourcebsp.converters.vmf import build_vmf, decompile_report, decompile_text
from sourcebsp.examples import room
from sourcebsp.examples.helpers import Box
from sourcebsp.lump_ids import LumpId

from ._brush_entity_map import box_entity, room_builder, room_map
from ._vmf_reference import parse_vmf

CONTENTS_AREAPORTAL = 0x8000  # bspflags.h
DOOR = Box((-4.0, -32.0, -64.0), (4.0, 32.0, 64.0))  # a door 8 thick, around its origin


def portal_map(doors: Sequence[tuple[str, str, tuple[float, float, float]]], portals: Sequence[Box],
               entities: Sequence[Sequence[tuple[str, str]]]) -> BspFile:
    """The example room with ``doors`` ((classname, targetname, origin), each a :data:`DOOR` model),
    ``portals`` (world areaportal brushes, in BRUSHES order) and ``entities`` (key/value pairs)."""
    builder = room_builder()
    for box in portals:
        b = builder.box_brush(box, {})
        first, count, _ = builder.brushes[b]
        builder.brushes[b] = (first, count, CONTENTS_AREAPORTAL)
    listed = list(room._entities())
    listed += [box_entity(builder, DOOR, classname, origin, [("targetname", name)]) for classname, name, origin in doors]
    listed += [Entity(list(pairs)) for pairs in entities]
    return room_map(builder, listed)


def _slab(x: float, y: float, axis: int = 0) -> Box:
    """An areaportal brush 4 thick filling a door at (x, y) (across ``axis``)."""
    half = np.array([2.0, 32.0, 0.0]) if axis == 0 else np.array([32.0, 2.0, 0.0])
    lo = np.array([x, y, 0.0]) - half
    hi = np.array([x, y, 128.0]) + half
    return Box(tuple(lo.tolist()), tuple(hi.tolist()))


def _portal_solids(bsp: BspFile):
    """Per func_areaportal* entity of the decompiled VMF (srctools): (targetname or target, boxes of its solids)."""
    text, stats = decompile_text(bsp)
    vmf = parse_vmf(text)
    out = []
    for ent in vmf.entities:
        if ent["classname"] not in ("func_areaportal", "func_areaportalwindow"):
            continue
        boxes = []
        for solid in ent.solids:
            # An axial box: the side facing +axis a lies at x_a = its dist, the one facing -axis at -dist.
            lo, hi = [0.0] * 3, [0.0] * 3
            for side in solid.sides:
                p0, p1, p2 = (np.array(tuple(p), float) for p in side.planes)
                n = np.cross(p0 - p1, p2 - p1)
                n /= np.linalg.norm(n)
                a = int(np.argmax(np.abs(n)))
                assert abs(abs(n[a]) - 1) < 1e-9
                if n[a] > 0:
                    hi[a] = float(n @ p0)
                else:
                    lo[a] = -float(n @ p0)
            boxes.append((tuple(lo), tuple(hi)))
        out.append((ent["targetname"] or ent["target"] or ent["portalnumber"], ent["target"], boxes))
    return out, stats


def _box(b: Box) -> tuple[tuple[float, ...], tuple[float, ...]]:
    return tuple(map(float, b.mins)), tuple(map(float, b.maxs))


def _every_brush_once(found, portals: Sequence[Box]) -> None:
    boxes = [box for _, _, solids in found for box in solids]
    assert sorted(boxes) == sorted(_box(p) for p in portals)  # each brush in exactly one entity


def test_each_brush_goes_to_the_entity_whose_door_it_closes():
    """No portal numbers (vbsp's order cannot be used): the door each entity targets decides."""
    doors = [("func_door", "door_a", (-128.0, 0.0, 64.0)), ("func_door", "door_b", (128.0, 0.0, 64.0)),
             ("func_door", "door_c", (0.0, 160.0, 64.0))]
    portals = [_slab(-128, 0), _slab(128, 0), _slab(0, 160, axis=1)]
    # Entities in another order than their brushes, one targeting a door by another case.
    ents = [[("classname", "func_areaportal"), ("target", "door_c"), ("StartOpen", "1")],
            [("classname", "func_areaportal"), ("target", "DOOR_A"), ("StartOpen", "0")],
            [("classname", "func_areaportal"), ("target", "door_b"), ("StartOpen", "1")]]
    bsp = portal_map(doors, portals, ents)
    assert len(bsp.areaportals) == 1 and bsp.areaportals["portal_key"][0] == 0  # only vbsp's dummy entry
    found, stats = _portal_solids(bsp)
    _every_brush_once(found, portals)
    by_target = {target.casefold(): solids for _, target, solids in found}
    assert by_target == {"door_a": [_box(portals[0])], "door_b": [_box(portals[1])], "door_c": [_box(portals[2])]}
    assert stats.areaportal_owners["target"] == 3 and stats.not_rebuilt == []
    assert decompile_report(stats)["reconstructed"]["areaportal_owners"]["target"] == 3


def test_vbsp_order_gives_the_brushes_when_numbers_and_counts_agree():
    """Entities numbered 1..N, as many brushes: the k-th brush is portal k's, with or without targets."""
    doors = [("func_door", "door_a", (-128.0, 0.0, 64.0)), ("func_door", "door_b", (128.0, 0.0, 64.0))]
    portals = [_slab(-128, 0), _slab(128, 0), _slab(0, -200, axis=1)]
    ents = [[("classname", "func_areaportal"), ("target", "door_a"), ("portalnumber", "1")],
            [("classname", "func_areaportal"), ("targetname", "lonely"), ("portalnumber", "3")],
            [("classname", "func_areaportal"), ("target", "door_b"), ("portalnumber", "2")]]
    found, stats = _portal_solids(portal_map(doors, portals, ents))
    _every_brush_once(found, portals)
    assert {name: solids for name, _, solids in found} == {
        "door_a": [_box(portals[0])], "lonely": [_box(portals[2])], "door_b": [_box(portals[1])]}
    assert stats.areaportal_owners["order"] == 3


def test_order_contradicted_by_the_target_is_not_taken():
    """Numbers 1..2 but swapped against the doors: the doors win, and both brushes still go once."""
    doors = [("func_door", "door_a", (-128.0, 0.0, 64.0)), ("func_door", "door_b", (128.0, 0.0, 64.0))]
    portals = [_slab(-128, 0), _slab(128, 0)]
    ents = [[("classname", "func_areaportal"), ("target", "door_a"), ("portalnumber", "2")],
            [("classname", "func_areaportal"), ("target", "door_b"), ("portalnumber", "1")]]
    found, stats = _portal_solids(portal_map(doors, portals, ents))
    _every_brush_once(found, portals)
    assert {target: solids for _, target, solids in found} == {"door_a": [_box(portals[0])],
                                                               "door_b": [_box(portals[1])]}
    assert stats.areaportal_owners["target"] == 2 and stats.areaportal_owners["order"] == 0


def test_without_a_target_the_brush_nearest_what_opens_it():
    """A func_areaportal with no target: the brush nearest the entity whose outputs open it; a
    func_areaportalwindow: the brush next to its fade brush."""
    doors = [("func_door", "door_a", (-128.0, 0.0, 64.0)), ("func_brush", "fade", (128.0, 0.0, 64.0))]
    portals = [_slab(128, 0), _slab(-128, 0)]
    ents = [[("classname", "func_areaportal"), ("targetname", "ap_a")],
            [("classname", "func_areaportalwindow"), ("target", "fade"), ("FadeDist", "512")],
            [("classname", "trigger_multiple"), ("origin", "-100 0 64"), ("OnTrigger", "ap_a,Open,,0,-1")]]
    found, stats = _portal_solids(portal_map(doors, portals, ents))
    _every_brush_once(found, portals)
    assert {name: solids for name, _, solids in found} == {"ap_a": [_box(portals[1])], "fade": [_box(portals[0])]}
    assert stats.areaportal_owners["references"] == 1 and stats.areaportal_owners["target"] == 1


def test_what_stays_ambiguous_is_reported_and_never_duplicated():
    """Two brushes equally near the one door an entity targets: neither is given to it, the reason is
    reported, each brush is still written once (in an entity of its own), and nothing else changes."""
    doors = [("func_door", "door_a", (-128.0, 0.0, 64.0)), ("func_door", "door_c", (0.0, 160.0, 64.0))]
    portals = [_slab(-128, 0), _slab(0, 160 - 6, axis=1), _slab(0, 160 + 6, axis=1)]
    ents = [[("classname", "func_areaportal"), ("target", "door_a")],
            [("classname", "func_areaportal"), ("target", "door_c"), ("targetname", "ap_c")],
            [("classname", "func_areaportal"), ("target", "nothing_here"), ("targetname", "ap_lost")]]
    found, stats = _portal_solids(portal_map(doors, portals, ents))
    _every_brush_once(found, portals)
    named = {name: solids for name, _, solids in found if name}
    assert named["door_a"] == [_box(portals[0])]
    assert named["ap_c"] == [] and named["ap_lost"] == []
    reasons = " | ".join(stats.not_rebuilt)
    assert "ap_c: 2 areaportal brushes equally near its target" in reasons
    assert "ap_lost: its target 'nothing_here' names no entity" in reasons
    # The two ambiguous brushes each in an entity of their own, once.
    made = [solids for name, _, solids in found if not name]
    assert sorted(made) == sorted([[_box(portals[1])], [_box(portals[2])]])


def test_a_brush_two_entities_claim_equally_goes_to_neither():
    doors = [("func_door", "door_b", (128.0, 0.0, 64.0))]
    portals = [_slab(128, 0)]
    ents = [[("classname", "func_areaportal"), ("target", "door_b"), ("targetname", "one")],
            [("classname", "func_areaportal"), ("target", "door_b"), ("targetname", "two")]]
    found, stats = _portal_solids(portal_map(doors, portals, ents))
    _every_brush_once(found, portals)
    named = {name: solids for name, _, solids in found if name}
    assert named == {"one": [], "two": []}
    assert sum("as near to 2 entities' targets" in line for line in stats.not_rebuilt) == 2


def test_an_emptied_lump_gives_what_the_lump_gave(corpus_file):
    """valvebsp_testmap's three func_areaportal (no targets): with the AREAPORTALS lump emptied, vbsp's
    order gives each entity the brush the lump's portal entries gave it."""
    import sourcebsp

    def owners(empty: bool):
        with sourcebsp.open(corpus_file("valvebsp_testmap.bsp")) as bsp:
            if empty:
                bsp.set_lump(LumpId.AREAPORTALS, bsp.areaportals[:1])
            vmf, stats = build_vmf(bsp)
        out = {}
        for e in vmf.entities:
            if e.classname == "func_areaportal":
                out[e.id] = [np.round(np.vstack([s.vertices for s in solid.sides]).min(axis=0), 3).tolist()
                             for solid in e.solids]
        return out, stats

    with_lump, stats = owners(False)
    emptied, stats_empty = owners(True)
    assert stats.areaportal_owners["lump"] == 3 and stats_empty.areaportal_owners["order"] == 3
    assert emptied == with_lump and all(len(v) == 1 for v in emptied.values()) and len(emptied) == 3
    assert stats_empty.not_rebuilt == []


def test_corpus_areaportal_brushes_each_in_one_entity(map_path):
    """On every corpus map, as compiled and with its AREAPORTALS lump emptied: every areaportal brush of
    the world is written in exactly one func_areaportal* entity, and no entity of the lump gets two."""
    import sourcebsp

    with sourcebsp.open(map_path) as bsp:
        if not bsp.has_lump("BRUSHES"):
            return
        brushes = int(np.count_nonzero(bsp.brushes["contents"] & CONTENTS_AREAPORTAL))
        lump_entities = sum(1 for e in bsp.entities if (e.classname or "").startswith("func_areaportal"))
        results = [build_vmf(bsp)]
        if brushes:
            bsp.set_lump(LumpId.AREAPORTALS, bsp.areaportals[:1])
            results.append(build_vmf(bsp))
    for vmf, stats in results:
        ents = [e for e in vmf.entities if e.classname.startswith("func_areaportal")]
        solids = [id(s) for e in ents for s in e.solids]
        assert len(solids) == len(set(solids)) == brushes
        assert all(len(e.solids) <= 1 for e in ents)
        # Where there are as many brushes as entities, none of them is left without its brush.
        if brushes == lump_entities:
            assert len(ents) == lump_entities and stats.not_rebuilt == []
