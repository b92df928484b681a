"""``check``: rules a map must pass to ship, each with a stable id.

Every rule is a function over a :class:`Context` (the open map, the mounted
game, the dependency graph) that yields :class:`Finding`\\ s.  Ids never
change meaning; new rules get new ids.  Severities: ``error`` (the map is
broken for players or servers), ``warning`` (likely wrong), ``info`` (could
be better).  :func:`check_map` runs the selected rules.

Rules that need the game (missing assets, stock content packed) run only when
a game or content folder is mounted: without one every file outside the
pakfile would look missing.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Iterator

from ..codecs.pakfile import ZIP_LZMA, ZIP_STORED
from ..protocols import MapReader
from ..lump_ids import LumpId
from .branches import BRANCHES, Branch, map_branch
from .damage import Damage, tolerant
from .deps import DependencyGraph, map_dependencies
from .entitydb import is_entity_class
from .gamefs import GameFS, fold
from .limits import BYTE_LIMITS, LIMITS, MAX_MAP_ENTITIES
from .pack import STREAMED

__all__ = ["Finding", "Rule", "RULES", "Context", "check_map", "select_rules"]

SEVERITIES = ("error", "warning", "info")
# Output targets the engine resolves itself (CBaseEntity::FindNamedEntity's "!" names).
_SPECIAL_TARGET = re.compile(r"^!")
# .tth/.ttz: Vampire: Bloodlines' texture files.
_DEFAULT_CUBEMAP = re.compile(r"/cubemapdefault(\.hdr)?(\.360)?\.(vtf|tth|ttz)$")
_BUILT_CUBEMAP = re.compile(r"^materials/maps/[^/]+/c-?\d+_-?\d+_-?\d+(\.hdr)?(\.360)?\.vtf$")


@dataclass(frozen=True)
class Finding:
    """One problem: rule id and name, severity, a one-line message, a fix hint, and where."""

    rule: str
    name: str
    severity: str
    message: str
    hint: str
    where: str = ""

    def to_json(self) -> dict[str, str]:
        return {"rule": self.rule, "name": self.name, "severity": self.severity, "message": self.message,
                "hint": self.hint, "where": self.where}


@dataclass
class Context:
    """What the rules look at."""

    bsp: MapReader
    fs: GameFS
    graph: DependencyGraph
    map_name: str
    branch: Branch | None = None  # the engine branch the map is for, when known
    branch_reason: str = ""  # how that was told
    damaged: list[Damage] = field(default_factory=list)  # the lumps that did not decode (found as rules run)


@dataclass(frozen=True)
class Rule:
    id: str
    name: str
    severity: str
    summary: str
    hint: str
    run: Callable[[Context], Iterator[tuple[str, str]]] = field(compare=False)  # yields (message, where)


def _pak(ctx: Context) -> Any:
    return ctx.bsp.lump_or_none(LumpId.PAKFILE)


# ---- the rules --------------------------------------------------------------------------
def _damaged_lump(ctx: Context) -> Iterator[tuple[str, str]]:
    for damage in ctx.damaged:
        yield damage.text(), damage.lump if damage.offset is None else f"{damage.lump} @ {damage.offset}"


def _missing_asset(ctx: Context) -> Iterator[tuple[str, str]]:
    if not ctx.fs.mounted:
        return
    for dep in ctx.graph.missing():
        yield f"{dep.path} ({dep.kind}) is in no search path and not in the pakfile", dep.references_text(1)


def _unverified_assets(ctx: Context) -> Iterator[tuple[str, str]]:
    if not ctx.fs.mounted:
        return
    unverified = ctx.graph.unverified()
    if unverified:
        first = unverified[0]
        yield (f"{len(unverified)} referenced asset{'s are' if len(unverified) > 1 else ' is'} in no mounted search "
               f"path; {'they' if len(unverified) > 1 else 'it'} may be stock content of the "
               f"{len(ctx.fs.unresolved)} search path{'s' if len(ctx.fs.unresolved) > 1 else ''} that could not be "
               f"mounted (first: {first.path})"), first.references_text(1)


def _case_collision(ctx: Context) -> Iterator[tuple[str, str]]:
    pak = _pak(ctx)
    seen: dict[str, str] = {}
    for name in pak.names() if pak is not None else ():
        key = fold(name)
        if key in seen:
            yield f"{name!r} and {seen[key]!r} are the same file to the engine", name
        else:
            seen[key] = name


def _upper_case(ctx: Context) -> Iterator[tuple[str, str]]:
    pak = _pak(ctx)
    for name in pak.names() if pak is not None else ():
        if name != name.lower():
            yield f"{name!r} is not lower case", name


def _stock_packed(ctx: Context) -> Iterator[tuple[str, str]]:
    pak = _pak(ctx)
    if pak is None or not ctx.fs.mounted:
        return
    for name in pak.names():
        found = ctx.fs.find_outside_pakfile(name)
        if found is not None and found.stock:
            yield f"{name} is stock content ({found.where} {found.source})", name


def _cubemaps_not_built(ctx: Context) -> Iterator[tuple[str, str]]:
    cubemaps = ctx.bsp.lump_or_none(LumpId.CUBEMAPS)
    if cubemaps is None or not len(cubemaps):
        return
    pak = _pak(ctx)
    names = [fold(n) for n in pak.names()] if pak is not None else []
    built = sum(1 for n in names if _BUILT_CUBEMAP.match(n) and ".hdr." not in n)
    if built == 0:
        defaults = any(_DEFAULT_CUBEMAP.search(n) for n in names)
        state = "only the default cubemap is" if defaults else "no cubemap texture is"
        yield f"{len(cubemaps)} env_cubemap samples but {state} in the pakfile", "CUBEMAPS"


def _branch_text(ctx: Context) -> str:
    assert ctx.branch is not None
    return f"{ctx.branch.title} ({ctx.branch_reason})"


def _lzma_pak_entries(ctx: Context) -> list[str]:
    pak = _pak(ctx)
    return [e.name for e in pak.entries() if e.compress_type == ZIP_LZMA] if pak is not None else []


def _compressed_unsupported(ctx: Context) -> Iterator[tuple[str, str]]:
    bsp, branch = ctx.bsp, ctx.branch
    if branch is None:
        return
    if branch.lzma_lumps is False:
        for lump, entry in bsp.iter_lumps():
            if entry.compressed:
                yield (f"lump {bsp.lump_name(lump)} is LZMA-compressed; {_branch_text(ctx)} cannot read it",
                       LumpId(lump).name)
    if branch.lzma_pak is False:
        for name in _lzma_pak_entries(ctx):
            yield f"pak entry {name} is LZMA-compressed; {_branch_text(ctx)} cannot read it", name


def _not_compressed(ctx: Context) -> Iterator[tuple[str, str]]:
    bsp = ctx.bsp
    if ctx.branch is None or not ctx.branch.lzma_lumps or bsp.endian != "<":
        return
    if not any(entry.compressed for _, entry in bsp.iter_lumps()):
        game = bsp.lump_or_none(LumpId.GAME_LUMP)
        if game is None or not any(getattr(g, "compressed", False) for g in game):
            yield f"no lump is compressed ({bsp.file_size:,} bytes) although {_branch_text(ctx)} reads LZMA lumps", ""


def _pak_lzma_limited(ctx: Context) -> Iterator[tuple[str, str]]:
    if ctx.branch is not None and ctx.branch.lzma_pak is not None:
        return  # known: fine, or SB401
    for name in _lzma_pak_entries(ctx):
        game = "the game this map is for is not known" if ctx.branch is None else f"{_branch_text(ctx)} may not read them"
        yield f"{name} is LZMA-compressed; {game}", name


def _pak_method(ctx: Context) -> Iterator[tuple[str, str]]:
    pak = _pak(ctx)
    for entry in pak.entries() if pak is not None else ():
        if entry.compress_type not in (ZIP_STORED, ZIP_LZMA):
            yield f"{entry.name} is stored with {entry.compression}, which no Source engine reads", entry.name


def _compressed_streamed(ctx: Context) -> Iterator[tuple[str, str]]:
    pak = _pak(ctx)
    for entry in pak.entries() if pak is not None else ():
        if entry.compress_type != ZIP_STORED and STREAMED.match(fold(entry.name)):
            yield f"{entry.name} is compressed ({entry.compression})", entry.name


def _output_target(ctx: Context) -> Iterator[tuple[str, str]]:
    entities = ctx.bsp.lump_or_none(LumpId.ENTITIES)
    if entities is None:
        return
    names: set[str] = set()
    for entity in entities:
        for key in ("targetname", "classname"):  # outputs may target a class name too
            value = entity.get(key)
            if value:
                names.add(value.lower())
    prefixes = tuple(names)
    for index, entity in enumerate(entities):
        for output in entity.outputs:
            target = output.target.strip().lower()
            if not target or _SPECIAL_TARGET.match(target) or target in names:
                continue
            if target.endswith("*") and any(n.startswith(target[:-1]) for n in prefixes):
                continue
            if is_entity_class(target):  # a class the game spawns itself (tf_gamerules, player)
                continue
            yield (f"entity {index} ({entity.classname}) {output.name} targets {output.target!r}, "
                   f"which no entity is named"), f"entity {index}"


def _limit_counts(ctx: Context) -> Iterator[tuple[str, int, int]]:
    bsp = ctx.bsp
    for lump, (name, limit) in LIMITS.items():
        if not bsp.has_lump(lump):
            continue
        count = bsp.count(lump)
        if count is not None:
            yield name, int(count), limit
    for lump, (name, limit) in BYTE_LIMITS.items():
        entry = bsp.entry(lump)
        size = entry.fourcc if entry.compressed else entry.filelen
        if size:
            yield name, int(size), limit
    entities = bsp.lump_or_none(LumpId.ENTITIES)
    if entities is not None:
        yield "MAX_MAP_ENTITIES", len(entities), MAX_MAP_ENTITIES


def _limit_exceeded(ctx: Context) -> Iterator[tuple[str, str]]:
    for name, count, limit in _limit_counts(ctx):
        if count > limit:
            yield f"{name}: {count:,} of {limit:,}", name


def _limit_near(ctx: Context) -> Iterator[tuple[str, str]]:
    for name, count, limit in _limit_counts(ctx):
        if 0.9 * limit <= count <= limit:
            yield f"{name}: {count:,} of {limit:,} ({count / limit:.0%})", name


def _no_visibility(ctx: Context) -> Iterator[tuple[str, str]]:
    if not ctx.bsp.has_lump(LumpId.VISIBILITY):
        yield "the map has no visibility data (not run through vvis, or it leaked)", "VISIBILITY"


def _unreferenced(ctx: Context) -> Iterator[tuple[str, str]]:
    pak = _pak(ctx)
    for name in pak.names() if pak is not None else ():
        key = fold(name)
        if key not in ctx.graph.deps and not _BUILT_CUBEMAP.match(key) and not _DEFAULT_CUBEMAP.search(key):
            yield f"{name} is packed but nothing the map uses names it", name


RULES: tuple[Rule, ...] = (
    Rule("SB001", "damaged-lump", "error", "a lump that does not decode (the other rules check the rest)",
         "rebuild the map, or repair the lump (sourcebsp info lists the damage with its file offset)",
         _damaged_lump),
    Rule("SB101", "missing-asset", "error", "a referenced asset is found nowhere",
         "add it to the game or the pakfile (sourcebsp pack), or fix the reference", _missing_asset),
    Rule("SB102", "unverified-assets", "warning",
         "referenced assets that only a search path that could not be mounted may hold (once per map)",
         "install the base game the gameinfo.txt names (|appid_N| paths), or give its folder or VPKs "
         "(--content, --vpk), to tell stock content from missing files", _unverified_assets),
    Rule("SB201", "pak-case-collision", "error", "pakfile names that differ only in case",
         "keep one of the files (sourcebsp pak MAP remove NAME)", _case_collision),
    Rule("SB202", "pak-upper-case", "warning", "pakfile names with upper-case letters",
         "re-pack with lower-case names (sourcebsp pack lower-cases them)", _upper_case),
    Rule("SB203", "stock-packed", "warning", "stock game content packed into the map",
         "remove it from the pakfile; the game already ships it", _stock_packed),
    Rule("SB204", "pak-method", "error", "pak entries stored with a method the engine cannot read",
         "store them uncompressed (sourcebsp pak, bspzip)", _pak_method),
    Rule("SB205", "pak-compressed-stream", "error", "sounds or shader caches compressed in the pakfile",
         "store sounds and .vcs files uncompressed; the engine streams them from the pak", _compressed_streamed),
    Rule("SB206", "pak-unreferenced", "info", "packed files nothing in the map names",
         "remove them, or check the reference that should name them", _unreferenced),
    Rule("SB301", "cubemaps-not-built", "warning", "env_cubemaps present but no cubemap texture built",
         "run buildcubemaps in the game (both LDR and HDR)", _cubemaps_not_built),
    Rule("SB401", "compressed-unsupported", "error", "LZMA compression the map's engine branch cannot load",
         "decompress it (sourcebsp repack MAP -o OUT --decompress); LZMA lumps and pak entries load in Source 2013 "
         "Multiplayer (TF2, CS:S, DoD:S, HL2:DM, TF2 Classic...) and Strata, neither before BSP 20, pak entries "
         "not in SDK 2013 Singleplayer nor the CS:GO branch", _compressed_unsupported),
    Rule("SB403", "pak-lzma-limited", "warning", "LZMA pak entries in a map for a game not known to read them",
         "store them uncompressed (pack without --lzma) unless the map is only for Source 2013 Multiplayer or "
         "Strata games; --game tells check which game the map is for", _pak_lzma_limited),
    Rule("SB402", "not-compressed", "info", "no lump compressed although the map's engine branch reads LZMA lumps",
         "compress it for distribution (sourcebsp repack MAP -o OUT --compress)", _not_compressed),
    Rule("SB501", "output-target-missing", "warning", "entity outputs that target no entity",
         "fix the target name (!activator, !self, !player, !caller... are allowed)", _output_target),
    Rule("SB601", "limit-exceeded", "error", "a MAX_MAP_* limit exceeded",
         "simplify the map: the engine's tables are sized by these limits", _limit_exceeded),
    Rule("SB602", "limit-near", "warning", "a MAX_MAP_* limit at 90% or more",
         "leave room: func_detail, fewer brush entities, merge textures", _limit_near),
    Rule("SB701", "no-visibility", "warning", "no visibility data (unvised or leaked)",
         "fix leaks (load the .lin pointfile in Hammer) and run vvis", _no_visibility),
)


def select_rules(select: Iterable[str] = (), ignore: Iterable[str] = ()) -> list[Rule]:
    """The rules whose id, id prefix (``SB2``), name or severity is in ``select`` (all when empty)
    and not in ``ignore``; ValueError for a selector that matches no rule."""
    def matches(rule: Rule, selector: str) -> bool:
        s = selector.strip()
        return rule.id.upper().startswith(s.upper()) or rule.name == s.lower() or rule.severity == s.lower()

    select, ignore = [s for s in select if s], [s for s in ignore if s]
    for selector in [*select, *ignore]:
        if not any(matches(rule, selector) for rule in RULES):
            raise ValueError(f"no rule matches {selector!r}")
    chosen = [r for r in RULES if not select or any(matches(r, s) for s in select)]
    return [r for r in chosen if not any(matches(r, s) for s in ignore)]


def check_map(bsp: MapReader, fs: GameFS | None = None, *, rules: Iterable[Rule] = RULES,
              map_name: str | None = None, graph: DependencyGraph | None = None,
              tags: Iterable[str] = (), engine: str | None = None) -> list[Finding]:
    """Run ``rules`` on an open map; findings in rule order.

    ``tags``: see :func:`map_dependencies`.  ``engine``: the id of the engine branch the map is
    for (:data:`~sourcebsp.content.branches.BRANCHES`), else told from the game and the map.
    """
    fs = fs if fs is not None else GameFS()
    # A lump that does not decode is a finding (SB001); the other rules run on what did.
    bsp, damaged = tolerant(bsp)
    if graph is None:
        graph = map_dependencies(bsp, fs, map_name=map_name, tags=tags)
    branch = (BRANCHES[engine], "as told") if engine is not None else map_branch(bsp, fs)
    ctx = Context(bsp, fs, graph, graph.map_name, *branch, damaged=damaged)
    rules = list(rules)
    found: dict[str, list[Finding]] = {}
    # The damage rule runs last, when every other rule has read what it needs, and is listed first.
    for rule in sorted(rules, key=lambda r: r.run is _damaged_lump):
        found[rule.id] = [Finding(rule.id, rule.name, rule.severity, message, rule.hint, where)
                          for message, where in rule.run(ctx)]
        if rule.run is not _damaged_lump:
            _add_damage(ctx.damaged, graph.damaged)
    return [finding for rule in rules for finding in found[rule.id]]


def _add_damage(into: list[Damage], more: list[Damage]) -> None:
    for damage in more:
        if not any(d.lump == damage.lump for d in into):
            into.append(damage)
