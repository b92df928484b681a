"""Entity classes looked for in an entity lump's bytes, without parsing the lump.

Branch detection (:func:`sourcebsp.detection.refine_by_entities`) only asks whether a map
holds an entity of some game's own classes, so it searches the raw text for
``"classname" "NAME"`` pairs instead of building entities.

A class spec is an exact class name, or, ending in ``_``, a prefix (``asw_``: every Alien
Swarm class).  Names compare without regard to case, as the engine looks them up (the SDK's
``CEntityFactoryDictionary`` keeps its factories in a case-insensitive ``CUtlDict``), so Zeno
Clash's ``NPC_Zeno_FatherMother_Finale`` is found however a map spells it.
"""
from __future__ import annotations

import functools
import re
from typing import Iterable

__all__ = ["class_matches", "found_classes"]

# Source's entity class names are short identifiers (the engine's own are under 64
# characters); a longer quoted value is no class of a spec.
_MAX_CLASS = 128


def _is_prefix(spec: str) -> bool:
    return spec.endswith("_")


def class_matches(name: str, specs: Iterable[str]) -> bool:
    """Whether the class ``name`` is one of ``specs`` (exact names, or prefixes ending in ``_``)."""
    name = name.lower()
    return any(name.startswith(spec.lower()) if _is_prefix(spec) else name == spec.lower() for spec in specs)


@functools.lru_cache(maxsize=64)
def _pattern(specs: frozenset[str]) -> "re.Pattern[bytes]":
    # Longest first, so that a class is not taken for a shorter exact name it starts with.
    exact = sorted((s for s in specs if not _is_prefix(s)), key=len, reverse=True)
    prefixes = sorted((s for s in specs if _is_prefix(s)), key=len, reverse=True)
    choices = [re.escape(s.encode()) for s in exact]
    choices += [re.escape(s.encode()) + rb'[^"\n]{0,%d}' % _MAX_CLASS for s in prefixes]
    # The key is matched as written (the fast literal search); only the class ignores case.
    return re.compile(rb'"classname"[ \t]*"(?i:(' + b"|".join(choices) + rb'))"')


def found_classes(data: bytes | memoryview, specs: Iterable[str]) -> set[str]:
    """The specs of which ``data`` (an entity lump's text) holds an entity, as given.

    Linear in the lump's length (every repetition in the pattern is bounded); bytes that are
    not UTF-8 are simply not matched."""
    wanted = frozenset(specs)
    if not wanted:
        return set()
    exact = {spec.lower(): spec for spec in wanted if not _is_prefix(spec)}
    prefixes = [(spec.lower(), spec) for spec in wanted if _is_prefix(spec)]
    seen: set[bytes] = set()
    found: set[str] = set()
    for match in _pattern(wanted).finditer(data):
        raw = match.group(1)
        if raw in seen:  # a map holds many entities of a class: each name is looked at once
            continue
        seen.add(raw)
        name = raw.decode("ascii", "replace").lower()
        if name in exact:
            found.add(exact[name])
        found.update(spec for low, spec in prefixes if name.startswith(low))
        if found == wanted:
            break
    return found
