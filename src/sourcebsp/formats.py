"""What a file that is not a Source engine map is, from its first bytes.

A map of another BSP format (GoldSrc, Quake, id Tech 3, BSP2, Respawn's rBSP)
or a file of another kind given by mistake is named in one line, so that the
user learns what they have rather than "unknown ident".  The idents and
versions are the formats' own (Quake ``bspfile.h``: version 29; Half-Life:
30; Quake 2 ``qfiles.h``: ``IBSP`` 38; Quake 3 ``qfiles.h``: ``IBSP`` 46;
the BSP2 extension of Quake: ``BSP2`` and its older ``2PSB``; Respawn's
``rBSP`` header: 29 Titanfall, 37 Titanfall 2, 47 and later Apex Legends).
"""
from __future__ import annotations

import struct

__all__ = ["RESPAWN_HINT", "describe_foreign"]

_SOURCE_HINT = "sourcebsp reads Source engine maps"
#: What reads a Titanfall map, for the refusals of what does not (the Source container, and
#: the commands built on it).
RESPAWN_HINT = ("sourcebsp reads Source engine maps here (Titanfall maps: sourcebsp.open(path), "
                "and the commands info, entities, "
                "edit-entities, props, pak list/extract, repack, export, decompile, render and scan)")

# Versions of the formats whose first four bytes are the version number itself.
_BARE_VERSIONS = {
    29: "a Quake (BSP 29) map",
    30: "a GoldSrc (BSP 30) map",
}

_IDENT_VERSIONS: dict[bytes, dict[int, str]] = {
    b"IBSP": {38: "a Quake 2 (IBSP 38) map", 46: "a Quake 3 (IBSP 46) map",
              47: "an id Tech 3 (IBSP 47: Quake Live, Wolfenstein: Enemy Territory) map",
              59: "a Call of Duty (IBSP 59) map"},
    b"rBSP": {29: "a Titanfall (rBSP 29) map", 37: "a Titanfall 2 (rBSP 37) map"},
    b"RBSP": {1: "a Raven id Tech 3 (RBSP 1: Jedi Knight, Soldier of Fortune 2) map"},
}

# Idents that name the format whatever follows.
_IDENTS: dict[bytes, str] = {
    b"BSP2": "a Quake BSP2 map",
    b"2PSB": "a Quake BSP2 (2PSB) map",
    b"FAKK": "a Heavy Metal: F.A.K.K. 2 (FAKK) map",
    b"EF2!": "a Star Trek: Elite Force 2 map",
    b"VBSP": "",  # Source: not foreign (unknown versions are reported by the header reader)
    b"PSBV": "",
}

# Other kinds of file a user may pass for a map, by their magic bytes.
_MAGICS: tuple[tuple[bytes, str], ...] = (
    (b"BZh", "a bzip2-compressed file"),
    (b"\x1f\x8b", "a gzip-compressed file"),
    (b"PK\x03\x04", "a ZIP archive"),
    (b"7z\xbc\xaf\x27\x1c", "a 7-Zip archive"),
    (b"\x34\x12\xaa\x55", "a Valve VPK archive"),
    (b"IDST", "a Source studio model (.mdl)"),
    (b"VTF\x00", "a Valve texture (.vtf)"),
    (b"LZMA", "an LZMA-compressed Source lump, not a map"),
    (b"versioninfo", "a Hammer map source (.vmf): compile it with vbsp first"),
    (b"\x89PNG", "a PNG image"),
    (b"glTF", "a glTF binary model"),
)


def describe_foreign(head: bytes) -> str | None:
    """What ``head`` (the file's first bytes, at least 8 when the file has them) is when
    it is not a Source map: one line ending in what sourcebsp reads; None when nothing
    is recognised or the file is a Source map (``VBSP``/``PSBV``)."""
    ident = bytes(head[:4])
    if ident in _IDENTS:
        found = _IDENTS[ident]
        return f"{found}: {_SOURCE_HINT}" if found else None
    if len(head) >= 8 and ident in _IDENT_VERSIONS:
        version = struct.unpack_from("<i", head, 4)[0]
        known = _IDENT_VERSIONS[ident].get(version)
        if ident == b"rBSP":
            if known is None and version >= 47:
                known = f"an Apex Legends (rBSP {version}) map"
            if known is not None and version >= 47:
                return f"{known}: sourcebsp reads Source engine maps, not Respawn's rBSP yet"
            if known is not None:  # sourcebsp.respawn reads these; the Source container and its commands do not
                return f"{known}: {RESPAWN_HINT}"
            return f"a Respawn rBSP map of version {version}: {_SOURCE_HINT}"
        if known is None:
            known = f"an {ident.decode()} map of version {version}"
        return f"{known}: {_SOURCE_HINT}"
    if len(head) >= 4:
        bare = struct.unpack_from("<i", head)[0]
        if bare in _BARE_VERSIONS:
            return f"{_BARE_VERSIONS[bare]}: {_SOURCE_HINT}"
    text = bytes(head).lstrip(b"\xef\xbb\xbf \t\r\n")  # a VMF may start with a byte order mark or blanks
    for magic, what in _MAGICS:
        if bytes(head[:len(magic)]) == magic or (magic == b"versioninfo" and text.startswith(magic)):
            return f"{what}; {_SOURCE_HINT}" if ":" in what else f"{what}: {_SOURCE_HINT}"
    return None
