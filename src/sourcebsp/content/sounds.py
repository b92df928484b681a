"""Soundscripts and soundscapes, read through srctools (``srctools.sndscript``,
``srctools.keyvalues``).  The one module that parses them: swap it here."""
from __future__ import annotations

from typing import Any, Iterator

from .._extras import needs_extra
from ..errors import BspError
from .gamefs import parse_keyvalues

__all__ = ["sound_file", "soundscript_entries", "soundscape_entries", "manifest_files"]

# Characters the engine strips from the front of a sound name (CHAR_STREAM, CHAR_SPATIALSTEREO, ...).
_SOUND_CHARS = "*#@><^)}$!?&~`+%("


def sound_file(name: str) -> str:
    """``sound/<name>`` with the engine's prefix characters removed."""
    bare = name.replace("\\", "/").lstrip(_SOUND_CHARS).lstrip("/")
    return bare if bare.lower().startswith("sound/") else "sound/" + bare


def soundscript_entries(text: str, name: str = "") -> dict[str, list[str]]:
    """{entry name (lower case): its wave files (``sound/...``)} of a soundscript."""
    with needs_extra("reading soundscripts", "deps"):
        from srctools.sndscript import Sound
    root = parse_keyvalues(text, name)
    try:
        sounds = Sound.parse(root)
    except Exception as exc:  # srctools raises ValueError/KeyError on malformed entries
        raise BspError(f"cannot parse the soundscript {name}: {exc}") from exc
    return {key.lower(): [sound_file(w) for w in sound.sounds if w] for key, sound in sounds.items()}


def _waves(kv: Any) -> Iterator[str]:
    for child in kv:
        if child.has_children():
            yield from _waves(child)
        elif child.name.lower() == "wave" and child.value:
            yield sound_file(child.value)


def soundscape_entries(text: str, name: str = "") -> dict[str, list[str]]:
    """{soundscape name (lower case): the wave files it plays} of a soundscape file."""
    root = parse_keyvalues(text, name)
    return {kv.name.lower(): sorted(set(_waves(kv))) for kv in root if kv.has_children()}


def manifest_files(text: str, name: str = "") -> list[str]:
    """The files a manifest lists (``game_sounds_manifest.txt``, ``particles_manifest.txt``,
    ``soundscapes_manifest.txt``): every leaf value of its single block."""
    root = parse_keyvalues(text, name)
    files: list[str] = []
    for block in root:
        if block.has_children():
            files += [child.value.replace("\\", "/").lstrip("!") for child in block if not child.has_children()]
    return files
