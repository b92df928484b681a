"""The pakfile's zip structures (``public/zip_uncompressed.h``) and its central directory.

The directory is read as the engine steps through it (``zip_utils.cpp``):
the end record found where ``zipfile`` looks for it too, then each entry's
fixed header, name, and (XZip format 1 only) extra field and comment.  The
fixed headers are unpacked together (``struct.iter_unpack``); names, dates
and offsets come out as ``zipfile`` gives them, so that neither ``zipfile``
nor numpy need be imported to list a map's files (``zipfile`` is opened to
read one).  Also here: the
rebuilding of an XZP2 directory for ``zipfile`` and the moving of every
offset of an archive.
"""
from __future__ import annotations

import struct
from operator import itemgetter
from typing import NamedTuple

from .base import fields_struct, fields_unpack

__all__ = [
    "EOCD",
    "EOCD_FIELDS",
    "FILE_HEADER",
    "FILE_HEADER_FIELDS",
    "LOCAL_FILE_HEADER_SIZE",
    "MAX_COMMENT",
    "BadDirectory",
    "EndRecord",
    "Member",
    "counts_from_file_start",
    "directory_entries",
    "end_counts_from_file_start",
    "end_record",
    "read_members",
    "shift_offsets",
    "xzp2_as_standard_zip",
]

# The structures as (field, struct code) pairs, little-endian and packed: the standard library
# reads them, so that listing a map's files imports neither numpy nor zipfile.
EOCD_FIELDS = (
    ("signature", "I"),  # unsigned int signature ('PK\5\6')
    ("number_of_this_disk", "H"),  # unsigned short numberOfThisDisk
    ("number_of_the_disk_with_start_of_central_directory", "H"),
    ("n_central_directory_entries_this_disk", "H"),  # nCentralDirectoryEntries_ThisDisk
    ("n_central_directory_entries_total", "H"),  # nCentralDirectoryEntries_Total
    ("central_directory_size", "I"),  # unsigned int centralDirectorySize
    ("start_of_central_dir_offset", "I"),  # unsigned int startOfCentralDirOffset
    ("comment_length", "H"),  # unsigned short commentLength
)
EOCD = fields_struct(EOCD_FIELDS)  # ZIP_EndOfCentralDirRecord, 22 bytes
FILE_HEADER_FIELDS = (
    ("signature", "I"),  # unsigned int signature ('PK\1\2')
    ("version_made_by", "H"),  # unsigned short versionMadeBy
    ("version_needed_to_extract", "H"),  # unsigned short versionNeededToExtract
    ("flags", "H"),  # unsigned short flags
    ("compression_method", "H"),  # unsigned short compressionMethod
    ("last_modified_time", "H"),  # unsigned short lastModifiedTime
    ("last_modified_date", "H"),  # unsigned short lastModifiedDate
    ("crc32", "I"),  # unsigned int crc32
    ("compressed_size", "I"),  # unsigned int compressedSize
    ("uncompressed_size", "I"),  # unsigned int uncompressedSize
    ("file_name_length", "H"),  # unsigned short fileNameLength
    ("extra_field_length", "H"),  # unsigned short extraFieldLength
    ("file_comment_length", "H"),  # unsigned short fileCommentLength
    ("disk_number_start", "H"),  # unsigned short diskNumberStart
    ("internal_file_attribs", "H"),  # unsigned short internalFileAttribs
    ("external_file_attribs", "I"),  # unsigned int externalFileAttribs
    ("relative_offset_of_local_header", "I"),  # unsigned int relativeOffsetOfLocalHeader
)
FILE_HEADER = fields_struct(FILE_HEADER_FIELDS)  # ZIP_FileHeader, 46 bytes
_AT = {name: index for index, (name, _) in enumerate(FILE_HEADER_FIELDS)}  # field -> index in an unpacked entry
LOCAL_FILE_HEADER_SIZE = 30  # sizeof(ZIP_LocalFileHeader), packed
_EOCD_SIGNATURE = b"PK\x05\x06"
_FILE_HEADER_SIGNATURE = b"PK\x01\x02"
MAX_COMMENT = 0xFFFF
# file_name_length, extra_field_length, file_comment_length: adjacent in FILE_HEADER, read while stepping.
_LENGTHS = struct.Struct("<3H")
_LENGTHS_AT = fields_struct(FILE_HEADER_FIELDS[:_AT["file_name_length"]]).size
_UTF8_NAME = 0x800  # general purpose flag bit 11: the name is UTF-8 (else code page 437)
_MAX_EXTRACT_VERSION = 63  # zip 6.3, the newest "version needed to extract" zipfile reads


# ---- the zip directory, as the engine reads it -------------------------------------------------
class EndRecord(NamedTuple):
    position: int  # of the end record within the lump
    fields: dict[str, int]  # EOCD's, by name
    comment: bytes

    @property
    def num_entries(self) -> int:
        return self.fields["n_central_directory_entries_total"]

    @property
    def cd_size(self) -> int:
        return self.fields["central_directory_size"]

    @property
    def cd_offset(self) -> int:
        return self.fields["start_of_central_dir_offset"]

    def packed(self, **changes: int) -> bytes:
        """The end record's 22 bytes, with ``changes`` to its fields."""
        return EOCD.pack(*dict(self.fields, **changes).values())

    @property
    def compatible(self) -> bool:
        """False for XZip format 2 (ParseXZipCommentString: ``"XZP"`` then ``'2'``)."""
        return not (self.comment[:3].upper() == b"XZP" and self.comment[3:4] == b"2")


def end_record(data: bytes) -> EndRecord | None:
    """The last end-of-central-directory record, where ``zipfile`` looks for it too."""
    position = data.rfind(_EOCD_SIGNATURE, max(0, len(data) - EOCD.size - MAX_COMMENT))
    if position < 0 or position + EOCD.size > len(data):
        return None
    fields = fields_unpack(EOCD_FIELDS, data, position)
    start = position + EOCD.size
    return EndRecord(position, fields, data[start : start + fields["comment_length"]])


def end_counts_from_file_start(end: EndRecord, file_offset: int) -> bool:
    """Whether the directory lies where it says only when offsets count from the file start."""
    return end.cd_offset + end.cd_size != end.position and \
        end.cd_offset - file_offset + end.cd_size == end.position


def counts_from_file_start(data: bytes | memoryview, file_offset: int) -> bool:
    """Whether the pakfile lump ``data``, at ``file_offset`` in its file, has file-relative offsets.

    Looks at the end record only (a damaged archive answers False), so that a
    map can be re-laid without reading its pakfile.
    """
    end = end_record(bytes(data[-(EOCD.size + MAX_COMMENT):]))
    if end is None:
        return False
    # The end record was found in the tail: its position counts from the tail's start.
    tail_start = max(0, len(data) - (EOCD.size + MAX_COMMENT))
    end = EndRecord(end.position + tail_start, end.fields, end.comment)
    return end_counts_from_file_start(end, file_offset)


class BadDirectory(ValueError):
    """The central directory does not hold what its end record says, at ``position`` in the lump."""

    def __init__(self, message: str, position: int) -> None:
        super().__init__(message)
        self.position = position


def directory_entries(data: bytes, start: int, count: int, compatible: bool) -> tuple[list[int], int]:
    """Positions of the central directory entries, stepping as the engine does, and where the last one ends.

    Format 1 skips name, extra field and comment after each fixed header;
    format 2 (XZP2) writes no extra field or comment there, whatever the
    lengths say.  Each entry is checked to lie in ``data`` and to start with
    its signature.
    """
    positions: list[int] = []
    position = start
    for index in range(count):
        if position < 0 or position + FILE_HEADER.size > len(data):
            raise BadDirectory(f"central directory entry {index} lies past the end", min(max(position, 0), len(data)))
        if data[position : position + 4] != _FILE_HEADER_SIGNATURE:
            raise BadDirectory(f"bad signature of central directory entry {index}", position)
        positions.append(position)
        name, extra, comment = _LENGTHS.unpack_from(data, position + _LENGTHS_AT)
        position += FILE_HEADER.size + name + (extra + comment if compatible else 0)
    return positions, position


class Member(NamedTuple):
    """One file of the archive as its central directory entry lists it."""

    ordinal: int  # in the directory (and in zipfile's infolist())
    name: str
    flag_bits: int
    compress_type: int
    date_time: tuple[int, int, int, int, int, int]
    crc: int
    compress_size: int
    file_size: int
    header_offset: int  # of the local header within the lump (moved as zipfile moves it)


def read_members(data: bytes, end: EndRecord) -> list[Member]:
    """The files of the archive, read from its central directory as ``zipfile`` reads them.

    The fixed fields of every entry are unpacked in one call;
    names are decoded as zipfile decodes them (UTF-8 with flag bit 11, else
    code page 437, cut at a NUL) and offsets moved by the distance between
    where the directory lies and where the end record says it starts (which
    is how old file-relative pakfiles still read).
    """
    start = end.position - end.cd_size
    positions, stop = directory_entries(data, start, end.num_entries, end.compatible)
    if end.compatible and stop != end.position:  # zipfile reads entries until the stated size is used up
        raise BadDirectory(f"the end record lists {end.num_entries} files in a {end.cd_size}-byte central "
                            f"directory, whose entries end {stop - end.position:+d} bytes from its end", end.position)
    if not positions:
        return []
    # The fixed headers side by side, unpacked in one call.
    headers = list(FILE_HEADER.iter_unpack(b"".join([data[p : p + FILE_HEADER.size] for p in positions])))
    versions = [header[_AT["version_needed_to_extract"]] & 0xFF for header in headers]
    if max(versions) > _MAX_EXTRACT_VERSION:
        index = max(range(len(versions)), key=versions.__getitem__)
        raise NotImplementedError(f"zip file version {versions[index] / 10:.1f} (entry {index})")
    concat = end.position - end.cd_size - end.cd_offset
    fields = itemgetter(*(_AT[name] for name in (
        "file_name_length", "flags", "last_modified_date", "last_modified_time", "compression_method", "crc32",
        "compressed_size", "uncompressed_size", "relative_offset_of_local_header")))
    members = []
    for ordinal, (position, header) in enumerate(zip(positions, headers)):
        name_length, flag, date, time, method, crc, stored, size, local = fields(header)
        first = position + FILE_HEADER.size
        text = data[first : first + name_length]
        name = text.decode("utf-8" if flag & _UTF8_NAME else "ascii" if text.isascii() else "cp437")
        when = ((date >> 9) + 1980, (date >> 5) & 0xF, date & 0x1F, time >> 11, (time >> 5) & 0x3F, (time & 0x1F) * 2)
        members.append(Member(ordinal, name.split("\0", 1)[0], flag, method, when, crc, stored, size, local + concat))
    return members


def xzp2_as_standard_zip(data: bytes, end: EndRecord) -> bytes:
    """A copy of an XZP2 archive whose central directory standard readers understand.

    The local headers and file data are kept as they are (so offsets into
    them stay valid); the directory entries lose their phantom extra field and
    comment lengths, and the end record its directory padding.
    """
    start = end.position - end.cd_size
    entries, _ = directory_entries(data, start, end.num_entries, compatible=False)
    parts = [data[:start]]
    for position in entries:
        header = list(FILE_HEADER.unpack_from(data, position))
        name_length = header[_AT["file_name_length"]]
        header[_AT["extra_field_length"]] = header[_AT["file_comment_length"]] = 0
        parts.append(FILE_HEADER.pack(*header))
        parts.append(data[position + FILE_HEADER.size : position + FILE_HEADER.size + name_length])
    directory_size = sum(len(p) for p in parts[1:])
    parts.append(end.packed(central_directory_size=directory_size))
    parts.append(end.comment)
    return b"".join(parts)


def shift_offsets(data: bytes, end: EndRecord, delta: int) -> bytes:
    """The archive with every offset (local headers, central directory) moved by ``delta``.

    An offset that points outside the archive's old place is junk, not an offset
    into it: it stays as it is (moved, it could leave the field's range)."""
    out = bytearray(data)
    start = end.position - end.cd_size
    base = end.cd_offset - start  # where the archive's offsets count from, in the old file
    local_at = _AT["relative_offset_of_local_header"]
    for position in directory_entries(data, start, end.num_entries, end.compatible)[0]:
        header = list(FILE_HEADER.unpack_from(out, position))
        if base <= header[local_at] < base + len(data):
            header[local_at] += delta
            FILE_HEADER.pack_into(out, position, *header)
    out[end.position : end.position + EOCD.size] = end.packed(start_of_central_dir_offset=end.cd_offset + delta)
    return bytes(out)
