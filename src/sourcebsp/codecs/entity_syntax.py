"""The entity lump's grammar shared by its parser, and the explanation of a syntax error.

:mod:`sourcebsp.codecs.entities` matches whole blocks with one pattern; when a
block does not match, the tokenizer here walks the text from that block to
find and name the first error (with its byte offset, line and column).
"""
from __future__ import annotations

import re
from typing import NoReturn

from ..errors import BspFormatError

__all__ = ["ENCODING", "WS", "EntitySyntaxError", "raise_syntax_error"]

# Entity text is UTF-8; bytes that are not are kept through surrogate escapes.
ENCODING = ("utf-8", "surrogateescape")

# Whitespace between tokens.  The engine skips any byte <= ' '; vbsp writes
# only newlines and spaces, and the strict reading accepts the usual five.
WS = r"[ \t\r\n\f\v]"

# The tokens of entity text, used only to explain why a block did not match (so
# compiled on first use).
TOKEN = (rf'{WS}*(?:(?P<open>\{{)|(?P<close>\}})|"(?P<string>[^"]*)"|(?P<unterminated>")'
         rf'|(?P<bare>[^ \t\r\n\f\v{{}}"]+))')


class EntitySyntaxError(BspFormatError):
    """Malformed entity text.

    Besides ``lump`` and ``offset`` (the absolute file offset of the bad
    byte), it carries ``line`` and ``column`` (1-based, in the lump text) and
    ``lump_offset`` (the byte offset inside the lump).
    """

    def __init__(self, message: str, *, line: int, column: int, lump_offset: int,
                 lump: str | None = None, offset: int | None = None) -> None:
        self.line = line
        self.column = column
        self.lump_offset = lump_offset
        super().__init__(f"line {line}, column {column}: {message}", lump=lump, offset=offset)


def raise_syntax_error(text: str, pos: int, lump: str, file_offset: int) -> NoReturn:
    """Find the first syntax error at or after ``pos`` (where a block failed to
    parse) and raise it with its offset, line and column."""
    at, reason = _diagnose(text, pos)
    byte_offset = len(text[:at].encode(*ENCODING))
    line = text.count("\n", 0, at) + 1
    column = at - (text.rfind("\n", 0, at) + 1) + 1
    raise EntitySyntaxError(
        f"{reason} (byte {byte_offset} of the entity lump)",
        line=line, column=column, lump_offset=byte_offset, lump=lump, offset=file_offset + byte_offset,
    )


def _line(text: str, at: int) -> int:
    return text.count("\n", 0, at) + 1


def _diagnose(text: str, pos: int) -> tuple[int, str]:
    opened: int | None = None  # position of the '{' of the entity being read
    key_at: int | None = None  # position of a key still waiting for its value
    key = ""
    for m in re.compile(TOKEN).finditer(text, pos):
        kind = m.lastgroup or "bare"
        at = m.start(kind) - (kind == "string")  # a string's position is that of its opening quote
        if kind == "open":
            if opened is not None:
                return at, (f"unbalanced braces: '{{' inside the entity opened at line "
                            f"{_line(text, opened)}, which has no '}}'")
            opened = at
        elif kind == "close":
            if opened is None:
                return at, "unbalanced braces: '}' with no '{' before it"
            if key_at is not None:
                return key_at, f"key {key!r} has no value"
            opened = None
        elif kind == "string":
            if opened is None:
                return at, f"text outside braces: {m.group(kind)[:40]!r}"
            if key_at is None:
                key_at, key = at, m.group(kind)
            else:
                key_at = None
        elif kind == "unterminated":
            return at, "unterminated quoted string (no closing '\"' before the end of the text)"
        else:
            where = "outside braces" if opened is None else "inside an entity (strings must be quoted)"
            return at, f"text {where}: {m.group(kind)[:40]!r}"
    if key_at is not None:
        return key_at, f"key {key!r} has no value and its entity has no '}}'"
    if opened is not None:
        return opened, "unbalanced braces: this '{' is never closed"
    return pos, "malformed entity"  # pragma: no cover - _BLOCK and TOKEN agree
