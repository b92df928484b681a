"""The entity lump (lump 0): the map's entities as key/value text.

The lump is NUL-terminated text, a sequence of blocks::

    {
    "classname" "worldspawn"
    "skyname" "sky_day01_01"
    }
    {
    "classname" "trigger_once"
    "model" "*3"
    "OnTrigger" "door,Open,,0,-1"
    "OnTrigger" "door,Close,,5,-1"
    }

Keys may repeat (outputs such as ``OnTrigger`` do, and their order matters),
so an :class:`Entity` is an ordered list of ``(key, value)`` pairs, not a
dict.  Strings have no escapes: a value runs from one double quote to the
next, and is kept as that exact text.  Output values hold five fields,
separated by commas in older games and by ESC (0x1B) since Left 4 Dead;
:class:`Output` is a parsed view of them, the text stays the truth.

Bytes are decoded as UTF-8 with ``surrogateescape``, so any byte that is not
UTF-8 survives the round trip.  Each entity keeps the text it was read from
(and the whitespace after it) and writes that text again while it is not
changed, so an untouched lump encodes to the bytes it was decoded from.

Decoding checks the syntax of every block but builds no strings: the lump's
bytes are held once (the memory-mapped file itself when they cannot change)
and an entity is only the span of its block in them, until its pairs are read
or it is changed.  Saving writes untouched blocks straight from those bytes.
"""
from __future__ import annotations

import mmap
import re
import sys
from array import array
from typing import Any, Callable, Iterable, Iterator, Mapping, NamedTuple, Sequence, cast, overload

from ..lump_ids import LumpId
from .base import LumpContext
from .entity_syntax import ENCODING as _ENCODING
from .entity_syntax import WS as _WS
from .entity_syntax import EntitySyntaxError, raise_syntax_error

__all__ = [
    "ESC",
    "Entity",
    "Entities",
    "EntitiesCodec",
    "EntitySyntaxError",
    "Output",
    "iter_entities",
    "parse_entities",
]

ESC = "\x1b"  # the output field separator of Left 4 Dead and later games
# One well-formed entity and the whitespace after it.  Group 1: the key/value
# pairs; group 2: the trailing whitespace.  A string holds anything but '"'.
# The pairs are matched in an atomic group (Python 3.11+): a block that does not close
# then fails at once, instead of backtracking through every pair it read, which
# took a second and tens of bytes of regex stack per byte of an unclosed block.  An
# atomic group, not a possessive repeat of the group ``(...)*+``: CPython 3.11.2's
# possessive group repeat matched ``{"k" "v" "lonely"}`` as if whole (fixed in later
# 3.11 releases; tests/codecs/test_entities.py has such blocks).
_PAIRS = rf'(?>(?:{_WS}*+"[^"]*+"{_WS}*+"[^"]*+")*)' if sys.version_info >= (3, 11) else \
    rf'(?:{_WS}*"[^"]*"{_WS}*"[^"]*")*'
# The syntax is ASCII and UTF-8 never puts an ASCII byte inside a character, so
# the patterns run on the lump's bytes and match what they would on its text.
# The whitespace after a block may hold NULs when more blocks follow (Tactical Intervention's
# lumps: see _lump_source).
_BLOCK = re.compile(rf'\{{({_PAIRS}){_WS}*\}}((?:{_WS}|\x00)*)'.encode())
_SPACE = re.compile(rf"{_WS}*".encode())
_NUL = re.compile(b"\0")
_MORE_BLOCKS = re.compile(rf"\x00(?:{_WS}|\x00)*\{{".encode())  # NULs, then another block




# ---- values -----------------------------------------------------------------------
def _format_number(value: float) -> str:
    number = float(value)
    return str(int(number)) if number.is_integer() else repr(number)


def _to_text(value: Any, what: str) -> str:
    """A key or value as entity text: strings as given, numbers and vectors formatted."""
    if isinstance(value, str):
        text = value
    elif isinstance(value, bool):
        text = "1" if value else "0"
    elif isinstance(value, int):
        text = str(value)
    elif isinstance(value, float):
        text = _format_number(value)
    elif isinstance(value, Iterable):
        text = " ".join(_to_text(v, what) for v in value)
    else:
        raise TypeError(f"entity {what} must be a string, a number or a sequence of numbers, "
                        f"not {type(value).__name__}")
    if '"' in text or "\0" in text:
        # Entity strings have no escapes: a quote would end the string early
        # and a NUL would end the lump.
        raise ValueError(f"entity {what} {text!r} contains a double quote or a NUL, "
                         "which the entity lump cannot hold")
    return text


class Output(NamedTuple):
    """A parsed view of one output key/value (``"OnTrigger" "door,Open,,0,-1"``).

    ``text`` is the value exactly as stored; the other fields are read from it.
    Vampire: Bloodlines appends extra comma fields, kept in ``extra``.
    """

    name: str  # the key: OnTrigger, OnStartTouch, ...
    target: str
    input: str
    parameter: str
    delay: float
    times: int  # -1: fire every time
    separator: str  # "," or ESC
    text: str
    extra: tuple[str, ...] = ()

    @classmethod
    def parse(cls, key: str, value: str) -> "Output | None":
        """The output held by a key/value, or None when the value is not one.

        A value is an output when it has five ESC-separated fields, or five
        comma-separated fields (more on Vampire maps), with a number in the
        fourth (delay) and an integer in the fifth (times to fire).
        """
        if ESC in value:
            separator = ESC
        elif value.count(",") >= 4:
            separator = ","
        else:
            return None
        fields = value.split(separator)
        if len(fields) < 5 or (len(fields) > 5 and separator == ESC):
            return None
        try:
            delay = float(fields[3])
            times = int(fields[4])
        except ValueError:
            return None
        return cls(key, fields[0], fields[1], fields[2], delay, times, separator, value,
                   tuple(fields[5:]))

    @classmethod
    def make(cls, name: str, target: str, input: str, parameter: str = "",
             delay: float | str = 0, times: int | str = -1, separator: str = ESC) -> "Output":
        """A new output; ``delay`` and ``times`` may be given as text to keep their spelling."""
        if separator not in (",", ESC):
            raise ValueError(f"output separator must be ',' or ESC (0x1B), not {separator!r}")
        delay_text = delay if isinstance(delay, str) else _format_number(delay)
        times_text = times if isinstance(times, str) else str(int(times))
        fields = [_to_text(f, "output field") for f in (target, input, parameter, delay_text, times_text)]
        if separator == "," and any("," in f for f in fields):
            raise ValueError(f"output fields {fields!r} contain a comma, the separator of this map's outputs")
        text = separator.join(fields)
        parsed = cls.parse(_to_text(name, "key"), text)
        if parsed is None:
            raise ValueError(f"delay {delay_text!r} or times {times_text!r} is not a number")
        return parsed


# ---- one entity -------------------------------------------------------------------
class Entity:
    """One entity: an ordered list of ``(key, value)`` pairs; keys may repeat.

    Key lookups ignore case, as the engine does.  Reading a key gives its last
    value (the one the engine ends up with); :meth:`get_all` gives every value.
    Change pairs only through the methods, which drop the cached source text.

    Examples
    --------
    >>> ent = Entity(classname="info_target", targetname="spot", origin=(0, 0, 64))
    >>> ent["origin"]
    '0 0 64'
    >>> ent.add("OnUser1", "door,Open,,0,-1"); ent.outputs[0].input
    'Open'
    """

    # An entity read from a lump holds the bytes it was read from (``_src``, shared
    # with every entity of the lump) and its block's span in them, ``_start`` to
    # ``_end`` (the trailing whitespace included).  Its pairs (``_kv``) are built
    # when first read; ``_trail`` is None while it is the source's.  A changed or
    # new entity has no source.
    __slots__ = ("_kv", "_trail", "_src", "_start", "_end")

    def __init__(self, pairs: Mapping[str, Any] | Iterable[tuple[str, Any]] = (), /,
                 **keyvalues: Any) -> None:
        items = pairs.items() if isinstance(pairs, Mapping) else pairs
        self._kv: list[tuple[str, str]] | None = [
            (_to_text(k, "key"), _to_text(v, "value")) for k, v in [*items, *keyvalues.items()]
        ]
        self._trail: str | None = "\n"
        self._src: memoryview | None = None
        self._start = self._end = 0

    @classmethod
    def _lazy(cls, src: memoryview, start: int, end: int) -> "Entity":
        """The entity whose block (already matched by ``_BLOCK``) spans ``src[start:end]``."""
        entity = cls.__new__(cls)
        entity._kv = None
        entity._trail = None
        entity._src = src
        entity._start = start
        entity._end = end
        return entity

    def _source_text(self) -> tuple[str, int]:
        """The source text of the block and its trail, and where the trail begins
        (after the last '}': the trail is only whitespace)."""
        assert self._src is not None
        text = str(self._src[self._start : self._end], *_ENCODING)
        return text, text.rindex("}") + 1

    @property
    def _pairs(self) -> list[tuple[str, str]]:
        if self._kv is None:
            assert self._src is not None
            # The block matched _BLOCK when the lump was decoded, so its quotes pair
            # up: splitting on them gives ['{' space, key, space, value, space, key,
            # ..., space '}' trail].
            parts = str(self._src[self._start : self._end], *_ENCODING).split('"')
            self._kv = list(zip(parts[1::4], parts[3::4]))
        return self._kv

    @_pairs.setter
    def _pairs(self, pairs: list[tuple[str, str]]) -> None:
        self._kv = pairs

    def _detach(self) -> None:
        """Forget the source: the entity was changed and is written afresh."""
        if self._src is not None:
            self._kv = self._pairs
            self._trail = self.trail
            self._src = None

    @property
    def trail(self) -> str:
        """The whitespace written after the closing brace."""
        if self._trail is None:
            text, close = self._source_text()
            return text[close:]
        return self._trail

    @trail.setter
    def trail(self, value: str) -> None:
        self._trail = value

    def __getstate__(self) -> dict[str, Any]:
        # Pickled with its own block's bytes, not the whole lump (nor a memoryview).
        source = None if self._src is None else bytes(self._src[self._start : self._end])
        return {"_kv": self._kv, "_trail": self._trail, "_src": source}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self._kv, self._trail, source = state["_kv"], state["_trail"], state["_src"]
        self._src = None if source is None else memoryview(source)
        self._start, self._end = 0, len(source or b"")

    def copy(self) -> "Entity":
        """A new entity with the same pairs (it is written afresh)."""
        twin = Entity(self._pairs)
        twin.trail = self.trail
        return twin

    def __repr__(self) -> str:
        name = self.targetname
        named = f" {name!r}" if name else ""
        return f"<Entity {self.classname}{named} ({len(self._pairs)} keys)>"

    # ---- reading ------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self._pairs)

    def __contains__(self, key: object) -> bool:
        if not isinstance(key, str):
            return False
        folded = key.casefold()
        return any(k.casefold() == folded for k, _ in self._pairs)

    def __getitem__(self, key: str) -> str:
        folded = key.casefold()
        for k, v in reversed(self._pairs):
            if k.casefold() == folded:
                return v
        raise KeyError(key)

    def get(self, key: str, default: Any = None) -> Any:
        """The last value of ``key`` (ignoring case), or ``default``."""
        try:
            return self[key]
        except KeyError:
            return default

    def get_all(self, key: str) -> list[str]:
        """Every value of ``key`` (ignoring case), in file order."""
        folded = key.casefold()
        return [v for k, v in self._pairs if k.casefold() == folded]

    def items(self) -> list[tuple[str, str]]:
        """Every ``(key, value)`` pair, in order (a copy)."""
        return list(self._pairs)

    def keys(self) -> list[str]:
        return [k for k, _ in self._pairs]

    def values(self) -> list[str]:
        return [v for _, v in self._pairs]

    @property
    def classname(self) -> str | None:
        value: str | None = self.get("classname")
        return value

    @classname.setter
    def classname(self, value: str) -> None:
        self.set("classname", value)

    @property
    def targetname(self) -> str | None:
        value: str | None = self.get("targetname")
        return value

    @targetname.setter
    def targetname(self, value: str) -> None:
        self.set("targetname", value)

    @property
    def model_index(self) -> int | None:
        """N for a brush entity's ``"model" "*N"`` (an index into the models lump), else None."""
        model = self.get("model")
        if model and model.startswith("*") and model[1:].isdigit():
            return int(model[1:])
        return None

    @property
    def origin(self) -> tuple[float, float, float] | None:
        """``origin`` as three floats, or None when absent or not three numbers."""
        text = self.get("origin")
        if text is None:
            return None
        parts = text.split()
        try:
            x, y, z = (float(p) for p in parts)
        except ValueError:
            return None
        return (x, y, z)

    @property
    def outputs(self) -> list[Output]:
        """The pairs that hold outputs, parsed (see :meth:`Output.parse`)."""
        found = (Output.parse(k, v) for k, v in self._pairs)
        return [o for o in found if o is not None]

    # ---- changing -----------------------------------------------------------------
    def set(self, key: str, value: Any) -> None:
        """Give ``key`` one value: the first pair with that key (ignoring case) is
        changed in place and any later ones removed; a new key is appended."""
        key, value = _to_text(key, "key"), _to_text(value, "value")
        folded = key.casefold()
        kept: list[tuple[str, str]] = []
        done = False
        for pair in self._pairs:
            if pair[0].casefold() != folded:
                kept.append(pair)
            elif not done:
                kept.append((pair[0], value))
                done = True
        if not done:
            kept.append((key, value))
        self._pairs = kept
        self._detach()

    __setitem__ = set

    def add(self, key: str, value: Any) -> None:
        """Append a pair, even when the key exists already (as outputs do)."""
        self._pairs.append((_to_text(key, "key"), _to_text(value, "value")))
        self._detach()

    def add_output(self, name: str, target: str, input: str, parameter: str = "",
                   delay: float | str = 0, times: int | str = -1, separator: str | None = None) -> Output:
        """Append an output.  ``separator`` defaults to that of the entity's other
        outputs, or ESC; :attr:`Entities.output_separator` gives the map's."""
        if separator is None:
            existing = self.outputs
            separator = existing[-1].separator if existing else ESC
        output = Output.make(name, target, input, parameter, delay, times, separator)
        self.add(output.name, output.text)
        return output

    def delete(self, key: str) -> int:
        """Remove every pair with ``key`` (ignoring case); returns how many.  KeyError if none."""
        folded = key.casefold()
        kept = [p for p in self._pairs if p[0].casefold() != folded]
        removed = len(self._pairs) - len(kept)
        if not removed:
            raise KeyError(key)
        self._pairs = kept
        self._detach()
        return removed

    def __delitem__(self, key: str) -> None:
        self.delete(key)

    def rename(self, old: str, new: str) -> int:
        """Rename every ``old`` key (ignoring case) to ``new``, in place; returns how many."""
        new = _to_text(new, "key")
        folded = old.casefold()
        count = 0
        pairs = []
        for k, v in self._pairs:
            if k.casefold() == folded:
                k, count = new, count + 1
            pairs.append((k, v))
        if not count:
            raise KeyError(old)
        self._pairs = pairs
        self._detach()
        return count

    def remove_pair(self, key: str, value: str) -> None:
        """Remove the first pair equal to ``(key, value)`` (exact text, e.g. one output)."""
        try:
            self._pairs.remove((key, value))
        except ValueError:
            raise KeyError((key, value)) from None
        self._detach()

    # ---- writing ------------------------------------------------------------------
    @property
    def changed(self) -> bool:
        """Whether the entity will be written afresh, not from its source text."""
        return self._src is None

    def to_text(self, newline: str = "\n") -> str:
        """The ``{ ... }`` block: the source text while unchanged, else written anew."""
        if self._src is not None:
            text, close = self._source_text()
            return text[:close]
        body = "".join(f'"{k}" "{v}"{newline}' for k, v in self._pairs)
        return f"{{{newline}{body}}}"


# ---- the lump ---------------------------------------------------------------------
def _matcher(pattern: str) -> Callable[[str | None], bool]:
    """Case-insensitive match; ``*`` matches any run of characters (as the engine's
    ``targetname*`` wildcard does)."""
    if "*" in pattern:
        regex = re.compile(".*".join(re.escape(p) for p in pattern.split("*")), re.IGNORECASE | re.DOTALL)
        return lambda value: value is not None and regex.fullmatch(value) is not None
    folded = pattern.casefold()
    return lambda value: value is not None and value.casefold() == folded


class Entities(Sequence[Entity]):
    """The entity lump: the entities in file order, worldspawn first.

    A sequence of :class:`Entity`; also :meth:`add`, :meth:`remove`,
    ``del entities[i]``, :meth:`find` and :meth:`first`.

    Examples
    --------
    >>> ents = parse_entities(b'{\\n"classname" "worldspawn"\\n}\\n\\x00')
    >>> ents.add(classname="info_target", targetname="x", origin="0 0 0")
    <Entity info_target 'x' (3 keys)>
    >>> [e.classname for e in ents.find(targetname="x")]
    ['info_target']
    >>> ents.to_bytes()[-20:]
    b'"origin" "0 0 0"\\n}\\n\\x00'
    """

    def __init__(self, entities: Iterable[Entity] = (), *, bsp_version: int | None = None) -> None:
        # None in _list: entity i not yet asked for; its block is _src[_starts[i]:_starts[i + 1]].
        # Entries move only after _all() has made every one an Entity.
        self._list: list[Entity | None] = list(entities)
        self._src = memoryview(b"")  # the lump's text bytes
        self._starts = array("q")
        self._pending = False  # some of _list is still None
        self.bsp_version = bsp_version
        self.newline = "\n"
        self._head = ""  # whitespace before the first entity
        self._terminated = False  # the source ended its text with NUL
        self._after = b""  # bytes after the NUL (kept as found)
        self._changed = True  # the list itself (not one entity) was changed

    @classmethod
    def from_bytes(cls, data: bytes | memoryview, *, lump: str = "ENTITIES", file_offset: int = 0,
                   bsp_version: int | None = None) -> "Entities":
        """Parse entity lump bytes.

        Every block's syntax is checked now; the strings of an entity are
        built when it is first read.  Bytes that cannot change (``bytes``, a
        read-only memory map) are held, not copied.

        Raises
        ------
        EntitySyntaxError
            (a :class:`BspFormatError`) for an unbalanced brace, an unterminated
            quote, a key without a value or text outside the braces; its message
            names the absolute file offset (``file_offset`` + position) and line.
        """
        src, nul = _lump_source(data)
        self = cls(bsp_version=bsp_version)
        self._terminated = nul >= 0
        self._after = b"" if nul < 0 else bytes(data[nul + 1 :])
        self._changed = False
        # 16 KB of bytes hold at least the first 4096 characters.
        if "\r\n" in str(src[:16384], *_ENCODING)[:4096]:
            self.newline = "\r\n"
        pos = _SPACE.match(src).end()  # type: ignore[union-attr]
        self._head = str(src[:pos], *_ENCODING)
        self._src = src
        self._starts = array("q", _block_starts(src, pos, lump, file_offset))
        self._list = [None] * (len(self._starts) - 1)
        self._pending = bool(self._list)
        return self

    def _at(self, index: int) -> Entity:
        entity = self._list[index]
        if entity is None:
            index = range(len(self._list))[index]
            entity = Entity._lazy(self._src, self._starts[index], self._starts[index + 1])
            self._list[index] = entity
        return entity

    def _all(self) -> list[Entity]:
        """The list, every entry an Entity (whose pairs may still be unread)."""
        if self._pending:
            src, starts, lazy = self._src, self._starts, Entity._lazy
            self._list = [lazy(src, starts[i], starts[i + 1]) if entity is None else entity
                          for i, entity in enumerate(self._list)]
            self._pending = False
        return cast("list[Entity]", self._list)

    def __getstate__(self) -> dict[str, Any]:
        # A memoryview cannot be pickled; the bytes it shows can.
        return {**self.__dict__, "_src": bytes(self._src)}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state, _src=memoryview(state["_src"]))

    def __repr__(self) -> str:
        return f"<Entities: {len(self._list)} entities>"

    # ---- sequence -----------------------------------------------------------------
    def __len__(self) -> int:
        return len(self._list)

    def __iter__(self) -> Iterator[Entity]:
        return iter(self._all())

    @overload
    def __getitem__(self, index: int) -> Entity: ...

    @overload
    def __getitem__(self, index: slice) -> list[Entity]: ...

    def __getitem__(self, index: int | slice) -> Entity | list[Entity]:
        if isinstance(index, slice):
            return self._all()[index]
        return self._at(index)

    def __setitem__(self, index: int, entity: Entity) -> None:
        if not isinstance(entity, Entity):
            raise TypeError(f"expected an Entity, not {type(entity).__name__}")
        self._list[index] = entity
        self._changed = True

    def __delitem__(self, index: int | slice) -> None:
        del self._all()[index]
        self._changed = True

    def __contains__(self, entity: object) -> bool:
        return isinstance(entity, Entity) and any(e is entity for e in self._list)

    def index(self, entity: Any, start: int = 0, stop: int | None = None) -> int:
        """Position of this very entity object (identity, not equal pairs)."""
        for i, e in enumerate(self._list[start:stop], start):
            if e is entity and isinstance(e, Entity):
                return i
        raise ValueError(f"{entity!r} is not in the entity list")

    # ---- lookup -------------------------------------------------------------------
    @property
    def worldspawn(self) -> Entity | None:
        """The first entity (worldspawn in every compiled map), or None when empty."""
        return self._at(0) if self._list else None

    def iter_find(self, classname: str | None = None, targetname: str | None = None,
                  **keys: str) -> Iterator[Entity]:
        """Entities whose keys match, lazily (see :meth:`find`)."""
        tests = [(k, _matcher(v)) for k, v in (("classname", classname), ("targetname", targetname))
                 if v is not None]
        tests += [(k, _matcher(v)) for k, v in keys.items()]
        for entity in self._all():
            if all(test(entity.get(key)) for key, test in tests):
                yield entity

    def find(self, classname: str | None = None, targetname: str | None = None,
             **keys: str) -> list[Entity]:
        """Entities whose classname, targetname and other keys all match, in file order.

        Matching ignores case; ``*`` in a pattern matches any run of characters
        (``find(classname="info_player_*")``).  With no criteria: every entity.
        """
        return list(self.iter_find(classname, targetname, **keys))

    def first(self, classname: str | None = None, targetname: str | None = None,
              **keys: str) -> Entity | None:
        """The first entity :meth:`find` would return, or None."""
        return next(self.iter_find(classname, targetname, **keys), None)

    def by_model(self, model_index: int) -> Entity | None:
        """The entity whose ``model`` is ``*N`` (model 0 is worldspawn's)."""
        if model_index == 0:
            return self.worldspawn
        return next((e for e in self._all() if e.model_index == model_index), None)

    @property
    def output_separator(self) -> str:
        """The output field separator this map uses: found in its outputs, else
        guessed from the BSP version (ESC from version 21, and when unknown)."""
        for entity in self._all():
            for output in entity.outputs:
                return output.separator
        if self.bsp_version is not None and self.bsp_version < 21:
            return ","
        return ESC

    # ---- changing -----------------------------------------------------------------
    def add(self, entity: Entity | Mapping[str, Any] | Iterable[tuple[str, Any]] | None = None, /,
            **keyvalues: Any) -> Entity:
        """Append an entity (given, or built from pairs / keyword arguments) and return it."""
        if isinstance(entity, Entity):
            if keyvalues:
                raise TypeError("give either an Entity or key/values, not both")
            new = entity
        else:
            new = Entity(entity if entity is not None else (), **keyvalues)
        if self._list and not self._at(-1).trail:
            self._at(-1).trail = self.newline  # keep one block per line
        new.trail = new.trail or self.newline
        self._list.append(new)
        self._changed = True
        return new

    def insert(self, index: int, entity: Entity) -> None:
        if not isinstance(entity, Entity):
            raise TypeError(f"expected an Entity, not {type(entity).__name__}")
        self._all().insert(index, entity)
        self._changed = True

    def remove(self, entity: Entity) -> None:
        """Remove this very entity object."""
        del self[self.index(entity)]

    def remove_all(self, entities: Iterable[Entity]) -> int:
        """Remove these entity objects; returns how many were removed."""
        doomed = {id(e) for e in entities}
        kept = [e for e in self._all() if id(e) not in doomed]
        removed = len(self._list) - len(kept)
        if removed:
            self._list = list(kept)
            self._changed = True
        return removed

    # ---- writing ------------------------------------------------------------------
    @property
    def changed(self) -> bool:
        """Whether encoding would differ from the source text."""
        return self._changed or any(e is not None and e._src is None for e in self._list)

    def _pieces(self) -> list[bytes | memoryview]:
        """The lump text's bytes in pieces: untouched blocks as runs of the source
        (views, not copies), the others written anew."""
        newline, starts = self.newline, self._starts
        pieces: list[bytes | memoryview] = [self._head.encode(*_ENCODING)]
        run_src, run_start, run_end = self._src, 0, 0  # a run of source bytes not yet in pieces
        for index, entity in enumerate(self._list):
            if entity is None:
                src, start, end = self._src, starts[index], starts[index + 1]
            elif entity._src is not None and entity._trail is None:
                src, start, end = entity._src, entity._start, entity._end
            else:
                pieces.append(run_src[run_start:run_end])
                run_start = run_end
                pieces.append((entity.to_text(newline) + entity.trail).encode(*_ENCODING))
                continue
            if src is not run_src or start != run_end:
                pieces.append(run_src[run_start:run_end])
                run_src, run_start = src, start
            run_end = end
        pieces.append(run_src[run_start:run_end])
        return pieces

    def to_text(self) -> str:
        """The lump text (without the terminating NUL)."""
        return str(b"".join(self._pieces()), *_ENCODING)

    def to_bytes(self) -> bytes:
        """The lump: the text, a NUL, and whatever followed the NUL in the source.

        An edited lump always ends its text with NUL; an untouched one is
        written as found.
        """
        pieces = self._pieces()
        if self._terminated or self.changed:
            pieces.append(b"\0")
        pieces.append(self._after)
        return b"".join(pieces)


def iter_entities(data: bytes | memoryview, *, lump: str = "ENTITIES", file_offset: int = 0) -> Iterator[Entity]:
    """The entities of entity lump bytes, one at a time, without keeping them.

    The same parser as :meth:`Entities.from_bytes`, for a reader that needs a
    few keys of each entity: only the lump's bytes and the current entity are
    held, never the whole list.  A syntax error is raised when the parser
    reaches it, after the entities before it were yielded.
    """
    src, _ = _lump_source(data)
    start = _SPACE.match(src).end()  # type: ignore[union-attr]
    for end in _block_starts(src, start, lump, file_offset, first=False):
        yield Entity._lazy(src, start, end)
        start = end


def _lump_source(data: bytes | memoryview) -> tuple[memoryview, int]:
    """The bytes before the terminating NUL, and the NUL's position (-1 without one).

    The terminating NUL is the first one that no other block follows: Tactical
    Intervention's lumps hold NULs between blocks, and the entities after them are
    the map's too (Tsuey/Tactically-Decompiled's README: readers that stop at the
    first NUL miss hundreds of entities in each map).

    A view of ``data`` when its bytes cannot change (``bytes``, a read-only
    memory map: a mapped lump is not copied), else a copy.
    """
    view = memoryview(data)
    held = view.readonly and view.contiguous and view.ndim == 1 and view.itemsize == 1
    if not (held and isinstance(view.obj, (bytes, mmap.mmap))):
        view = memoryview(bytes(view))
    found = _NUL.search(view)
    while found is not None:
        more = _MORE_BLOCKS.match(view, found.start())
        if more is None:
            break
        found = _NUL.search(view, more.end())
    nul = -1 if found is None else found.start()
    return view[: len(view) if nul < 0 else nul], nul


def _block_starts(src: memoryview, pos: int, lump: str, file_offset: int, *, first: bool = True) -> Iterator[int]:
    """Check the blocks of ``src`` from ``pos`` (at a block's opening brace) to its
    end; yield where each begins (``first``) and where the last one ends."""
    end = len(src)
    block_match = _BLOCK.match
    if first:
        yield pos
    while pos < end:
        m = block_match(src, pos)
        if m is None:
            raise_syntax_error(str(src, *_ENCODING), len(str(src[:pos], *_ENCODING)), lump, file_offset)
        pos = m.end()
        yield pos


def parse_entities(data: bytes | memoryview, *, file_offset: int = 0, bsp_version: int | None = None) -> Entities:
    """Parse entity lump bytes (see :meth:`Entities.from_bytes`)."""
    return Entities.from_bytes(data, file_offset=file_offset, bsp_version=bsp_version)


class EntitiesCodec:
    """Lump 0: :class:`Entities` from the text and back."""

    mutable = True

    def decode(self, data: memoryview, ctx: LumpContext) -> Entities:
        return Entities.from_bytes(data, lump=ctx.name, file_offset=ctx.file_offset, bsp_version=ctx.bsp_version)

    def encode(self, value: Entities, ctx: LumpContext) -> bytes:
        return value.to_bytes()

    def count(self, value: Entities) -> int:
        return len(value)


LAYOUTS = {LumpId.ENTITIES: {None: EntitiesCodec()}}
