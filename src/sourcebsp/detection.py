"""Which engine branch a file is: the rules, all derived from the branch table.

:mod:`sourcebsp.variants` holds what each branch is; this module reads a file's header (and,
where the header leaves several branches, its lumps, record sizes, static prop version and
entity classes) to pick one.  The container calls the steps in that order, cheapest first,
each only while alternatives remain; :attr:`Detection.guessed` says when none could tell.
"""
from __future__ import annotations

import functools
from typing import Any, Callable, Mapping, NamedTuple

from .codecs import tables
from .codecs.base import Record
from .codecs.classnames import found_classes
from .codecs.counts import lookup
from .codecs.respawn import IDENT as _RBSP_IDENT
from .codecs.tables import resolve
from .errors import UnsupportedError
from .header import Header
from .lump_ids import NUM_LUMPS
from .variants import VARIANTS, LazyLayouts, Variant, detection_rules

__all__ = [
    "Detection",
    "detect",
    "detect_variant",
    "detect_respawn",
    "fits",
    "refine",
    "refine_by_entities",
    "refine_by_lumps",
    "refine_by_sizes",
]


class Detection(NamedTuple):
    """The branch a header was read as, and the others its header fits just as well."""

    variant: Variant
    alternatives: tuple[str, ...]  # names of other branches that write such headers

    @property
    def guessed(self) -> bool:
        """True when the header alone cannot tell this branch from the alternatives."""
        return bool(self.alternatives)


def fits(variant: Variant, header: Header, encrypted: bool = False) -> bool:
    """Whether ``variant`` writes headers like this one (version, byte order, lump_t order),
    in files encrypted or not like this one."""
    return (header.version in variant.versions and variant.endian == header.endian
            and variant.lump_order in (None, header.lump_order) and variant.encrypted == encrypted)


def detect(header: Header, *, encrypted: bool = False) -> Detection:
    """The variant a header belongs to (the first rule matching its version, byte order and
    lump_t order, and whether the file was ``encrypted``) and the other branches whose files
    have such headers."""
    for rule in detection_rules():
        if rule.matches(header, encrypted):
            chosen = VARIANTS[rule.variant]
            others = tuple(v.name for v in VARIANTS.values() if v is not chosen and fits(v, header, encrypted))
            return Detection(chosen, others)
    if not any(entry.filelen for entry in header.lumps):
        # A directory without a lump of data tells no lump_t order (read_header calls it
        # standard): the first rule for its version, byte order and encryption names the
        # branch (Contagion's BSP 27, whose directory is Left 4 Dead 2's).
        for rule in detection_rules():
            if rule.matches(header, encrypted, any_order=True):
                return Detection(VARIANTS[rule.variant], ())
    raise UnsupportedError(
        f"no variant reads {'encrypted ' if encrypted else ''}BSP version {header.version} with byte order "
        f"{header.endian!r} and {header.lump_order} lump_t order (register one with sourcebsp.register_variant)",
        offset=4,
    )


def refine_by_lumps(found: Detection, present: "Callable[[int], bool]") -> Detection:
    """``found`` narrowed by the branches' own lumps (:attr:`Variant.marker_lumps`): a file that
    has one is that branch's; the branches whose own lumps it lacks drop out."""
    def has_markers(variant: Variant) -> bool:
        return any(present(lump) for lump in variant.marker_lumps)

    names = (found.variant.name, *found.alternatives)
    marked = [name for name in names if has_markers(VARIANTS[name])]
    if marked:  # only that branch writes those lumps
        return Detection(VARIANTS[marked[0]], tuple(marked[1:]))
    kept = [name for name in names if not VARIANTS[name].marker_lumps]
    return Detection(VARIANTS[kept[0]], tuple(kept[1:])) if kept else found


def _sizes(versions: Mapping[Any, Any]) -> dict[Any, Any]:
    """A lump's version table with each record as its size, and what any other version reads (None)."""
    read = {**versions, None: resolve(versions, None)}
    return {version: found.size if isinstance(found, Record) else found for version, found in read.items()}


@functools.lru_cache(maxsize=64)
def _read_differently(names: frozenset[str]) -> tuple[int, ...]:
    """The lumps some of these layout tables read with records of other sizes than the rest."""
    sizes = [{lump: _sizes(versions) for lump, versions in tables.bare_table(name).items()} for name in sorted(names)]
    return tuple(lump for lump in range(NUM_LUMPS) if any(table.get(lump) != sizes[0].get(lump) for table in sizes))


def refine_by_sizes(found: Detection, header: Header) -> Detection:
    """``found`` narrowed by record sizes: a branch reading one of the file's lumps with records
    whose size does not divide the lump's length drops out (Dota 2's 180-byte disp infos, the HL2
    beta's 68- and 72-byte faces).  Only uncompressed lumps are measured, with the records of the
    built-in tables (:mod:`~sourcebsp.codecs.tables`, no numpy); a branch outside them stays.
    When every branch would drop out (a damaged lump), ``found`` is kept as it is."""
    def table_of(name: str) -> str | None:
        layouts = VARIANTS[name].at_version(header.version).layouts
        return layouts.table if isinstance(layouts, LazyLayouts) and layouts.table in tables.RECIPES else None

    table_names = {name: table_of(name) for name in (found.variant.name, *found.alternatives)}
    distinct = {table for table in table_names.values() if table is not None}
    if len(distinct) < 2:
        return found  # read alike: sizes cannot tell them apart
    lumps = header.lumps
    changed = [(lump, lumps[lump].version, lumps[lump].filelen) for lump in _read_differently(frozenset(distinct))
               if lump < len(lumps) and lumps[lump].filelen and not lumps[lump].compressed]

    def fits(table: str) -> bool:
        kinds = (lookup(table, lump, version) for lump, version, _ in changed)
        return all(not isinstance(kind, Record) or not length % kind.size
                   for kind, (_, _, length) in zip(kinds, changed))

    fitting = {table: fits(table) for table in distinct}

    def fits_sizes(variant: Variant) -> bool:
        table = table_names[variant.name]
        return table is None or fitting[table]

    names = [name for name in (found.variant.name, *found.alternatives) if fits_sizes(VARIANTS[name])]
    if not names or len(names) == 1 + len(found.alternatives):
        return found
    if names[0] == found.variant.name:
        return Detection(found.variant, tuple(names[1:]))
    return Detection(VARIANTS[names[0]], tuple(names[1:]))  # the first left in the table: the most common


def refine(found: Detection, static_prop_version: int | None, static_prop_size: int | None = None) -> Detection:
    """``found`` narrowed by the static prop lump's version: the branches that cannot have
    written it drop out (a branch whose versions are not known stays).  When the detected one
    drops out, the first branch of the table that remains is taken.  Props whose version and
    record size only one branch writes (:attr:`Variant.static_prop_sizes`: The Ship's) name it;
    a branch whose records of that version have a known size drops out when theirs differ (a
    72-byte v9 is not Dear Esther's 76)."""
    if static_prop_version is None or not found.alternatives:
        return found
    names = (found.variant.name, *found.alternatives)
    own = [name for name in names if (static_prop_version, static_prop_size) in VARIANTS[name].static_prop_sizes]
    if static_prop_size is not None and own:
        return Detection(VARIANTS[own[0]], tuple(own[1:]))

    def may_write(variant: Variant) -> bool:
        if variant.static_prop_versions and static_prop_version not in variant.static_prop_versions:
            return False
        sizes = {size for version, size in variant.static_prop_sizes if version == static_prop_version}
        return static_prop_size is None or not sizes or static_prop_size in sizes

    others = tuple(name for name in found.alternatives if may_write(VARIANTS[name]))
    if not may_write(found.variant) and not others:
        # No candidate writes such a version: it was read in a directory layout other than the
        # file's (Vindictus's or Dark Messiah's), so it tells nothing.
        return found
    if may_write(found.variant):
        return Detection(found.variant, others)
    return Detection(VARIANTS[others[0]], others[1:])  # the first left in the table: the most common


def refine_by_entities(found: Detection, entities: "Callable[[], bytes | memoryview | None]") -> Detection:
    """``found`` narrowed by the entity classes only some branches' games have
    (:attr:`Variant.entity_classes`): a map holding one is that branch's (the first in the table
    when it holds several branches' classes).  ``entities`` gives the entity lump's text (None:
    not readable), asked for only when a candidate has classes of its own."""
    names = (found.variant.name, *found.alternatives)
    specs = {name: VARIANTS[name].entity_classes for name in names}
    if not found.alternatives or not any(specs.values()):
        return found
    data = entities()
    if data is None:
        return found
    present = found_classes(data, (spec for classes in specs.values() for spec in classes))
    marked = [name for name in names if present.intersection(specs[name])]
    return Detection(VARIANTS[marked[0]], tuple(marked[1:])) if marked else found


def detect_variant(header: Header) -> Variant:
    """The variant a header belongs to: the first rule matching its version,
    byte order and lump_t order."""
    return detect(header).variant


def detect_respawn(head: bytes | memoryview) -> Variant | None:
    """The Respawn rBSP branch a file starting with ``head`` (its first 8 bytes or more) belongs
    to, from its ident and version; None when it is not a Titanfall or Titanfall 2 map."""
    if len(head) < 8 or bytes(head[:4]) != _RBSP_IDENT:
        return None
    name = _respawn_by_version().get(int.from_bytes(bytes(head[4:8]), "little", signed=True))
    return None if name is None else VARIANTS[name]


def _respawn_by_version() -> dict[int, str]:
    """rBSP version -> the branch writing it, from the table (registered branches included)."""
    return {version: v.name for v in VARIANTS.values() if v.container == "respawn" for version in v.versions}
