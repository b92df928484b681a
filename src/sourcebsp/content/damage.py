"""Reading what decodes of a damaged map: the linter and the dependency walk go on past a bad lump.

A map the game still loads may hold a lump that does not decode (4 stray bytes
after the detail props): :class:`TolerantReader` answers for that lump as for a
missing one and records the damage (lump, file offset, reason), so that every
other rule still runs on what did decode and the damage itself is reported.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, cast

from ..codecs.gamelumps import GameLumps
from ..codecs.staticprops import StaticProps
from ..errors import BspError

if TYPE_CHECKING:
    from ..protocols import MapReader

__all__ = ["Damage", "TolerantReader", "tolerant"]


@dataclass(frozen=True)
class Damage:
    """A part of the map that did not decode."""

    lump: str
    offset: int | None
    reason: str

    def text(self) -> str:
        where = f" at file offset {self.offset}" if self.offset is not None else ""
        return f"lump {self.lump}{where} does not decode: {self.reason}"

    def to_json(self) -> dict[str, Any]:
        return {"lump": self.lump, "offset": self.offset, "error": self.reason}


def _neutral_static_props(bsp: MapReader) -> Any:
    return StaticProps.empty(bsp_version=bsp.version, endian=bsp.endian)


def _neutral_game_lumps(bsp: MapReader) -> Any:
    return GameLumps()


# What a damaged part reads as: what a map without that part gives.
def _no_detail_props(bsp: MapReader) -> None:
    return None


_PROPERTIES: dict[str, Callable[["MapReader"], Any]] = {
    "detail_props": _no_detail_props,
    "static_props": _neutral_static_props,
    "game_lumps": _neutral_game_lumps,
}
_METHODS = frozenset({"lump_or_none", "count"})


class TolerantReader:
    """A map reader that reads a part that fails to decode as absent, recording why in ``damage``.

    ``lump_or_none`` and ``count`` give None for a damaged lump;
    ``static_props``, ``detail_props`` and ``game_lumps`` what a map without
    them gives.  Everything else is the map's own.
    """

    def __init__(self, bsp: MapReader) -> None:
        self._bsp = bsp
        self.damage: list[Damage] = []

    def _record(self, exc: BspError, fallback: str) -> None:
        found = Damage(exc.lump or fallback, exc.offset, exc.reason)
        if not any(d.lump == found.lump for d in self.damage):
            self.damage.append(found)

    def __getattr__(self, name: str) -> Any:
        bsp = self._bsp
        if name in _PROPERTIES:
            try:
                return getattr(bsp, name)
            except BspError as exc:
                self._record(exc, name)
                return _PROPERTIES[name](bsp)
        value = getattr(bsp, name)
        if name not in _METHODS:
            return value

        def guarded(key: Any, *args: Any) -> Any:
            try:
                return value(key, *args)
            except BspError as exc:
                self._record(exc, bsp.lump_name(key))
                return None

        return guarded


def tolerant(bsp: MapReader) -> tuple[MapReader, list[Damage]]:
    """``bsp`` read tolerantly (the same reader when it already is), and its damage list."""
    reader = bsp if isinstance(bsp, TolerantReader) else TolerantReader(bsp)
    return cast("MapReader", reader), reader.damage
