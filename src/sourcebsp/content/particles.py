"""Particle files (PCF), read through srctools' ``srctools.particles``.

The one module that parses PCF files: swap it here.
"""
from __future__ import annotations

import io
import re

from .._extras import needs_extra
from ..errors import BspError

__all__ = ["particle_systems"]

_HEADER = re.compile(rb"^<!-- dmx encoding binary (\d+) format \S+ \d+ -->\n\0")


def _check_string_count(data: bytes, name: str) -> None:
    """The string table count of a binary DMX, checked against the file's length before
    srctools sizes a list by it (a hostile file could ask for billions)."""
    header = _HEADER.match(data)
    if header is None:
        return  # not binary DMX: srctools rejects it without sizing anything
    version, start = int(header.group(1)), header.end()
    if version >= 4 and len(data) >= start + 4:
        count = int.from_bytes(data[start:start + 4], "little", signed=True)
        if count < 0 or count > len(data) - start:
            raise BspError(f"cannot parse the particle file {name}: {count} strings in {len(data)} bytes")


def particle_systems(data: bytes, name: str = "") -> dict[str, list[str]]:
    """{system name (lower case): materials (``.vmt`` paths under ``materials/``) and
    models (``models/...mdl``) it draws} of one PCF file."""
    with needs_extra("reading particles", "deps"):
        from srctools.particles import Particle
    _check_string_count(data, name)
    try:
        systems = Particle.parse(io.BytesIO(data))
    except Exception as exc:  # srctools' DMX reader raises ValueError/KeyError/struct.error
        raise BspError(f"cannot parse the particle file {name}: {exc}") from exc
    result: dict[str, list[str]] = {}
    for key, system in systems.items():
        files: list[str] = []
        material = system.options.get("material")
        if material is not None and material.val_str:
            path = material.val_str.replace("\\", "/")
            files.append(path if path.lower().startswith("materials/") else "materials/" + path)
        for op in system.renderers + system.initializers + system.operators:
            for attr in op.options.values():
                try:
                    values = list(attr.iter_str()) if attr.is_array else [attr.val_str]
                except (ValueError, TypeError):  # not a string attribute
                    continue
                files += [v.replace("\\", "/") for v in values if v.lower().endswith(".mdl")]
        result[key.lower()] = files
    return result
