"""Model (MDL) references, read through srctools' ``srctools.mdl`` and the studio model reader.

srctools reads the key values of the ``.mdl`` and of its ``.phy`` (gibs) and
the header; :mod:`.studiomodel` reads the whole texture table, every skin
family and ``$includemodel`` names, which srctools' header reader partly
misses (eyeball iris and glint textures, textures only a later skin family
or the last skin reference names: 53 of the 123 models of a real mod).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterator

from .._extras import needs_extra
from ..errors import BspError
from .studiomodel.mdl import MdlHeader, read_mdl

__all__ = ["ModelRefs", "model_refs", "check_model"]


@dataclass
class ModelRefs:
    """What one model names."""

    has_mesh: bool  # vertices to draw: the .vvd and .vtx files are needed
    materials: list[str] = field(default_factory=list)  # candidate folders tried per texture, see ``textures``
    textures: list[str] = field(default_factory=list)  # every texture of every skin family
    # Textures of the table no skin family names (eyeball irises and glints): the engine
    # loads every texture of the table, but such materials often live in stock content.
    unreferenced: list[str] = field(default_factory=list)
    cdmaterials: list[str] = field(default_factory=list)
    included: list[str] = field(default_factory=list)  # included models (animation sets)
    gibs: list[str] = field(default_factory=list)  # break models from the key values
    problems: list[str] = field(default_factory=list)  # files read only in part


def _walk(kv: Any, inside_break: bool = False) -> Iterator[str]:
    """Model names in ``break`` blocks of model key values (``$collisiontext`` / ``prop_data``)."""
    for child in kv:
        name = child.name.lower()
        if child.has_children():
            yield from _walk(child, inside_break or name == "break")
        elif (inside_break and name == "model") or (name == "model" and child.value.lower().endswith(".mdl")):
            value = child.value.replace("\\", "/").strip("/")
            if not value.lower().startswith("models/"):
                value = "models/" + value
            if not value.lower().endswith(".mdl"):
                value += ".mdl"
            yield value


# studiohdr_t counts srctools sizes lists from, with the smallest record each counts:
# (offset of the count, record size in bytes, what).  Checked against the file's
# length first, so a hostile model cannot make srctools allocate billions of entries.
_COUNTS = ((188, 212, "sequences"), (204, 64, "textures"), (212, 4, "cdmaterials"),
           (232, 16, "body parts"), (336, 8, "included models"))
_SKINREF_COUNT, _SKIN_COUNT = 220, 224
_HEADER_SIZE = 408


def check_model(name: str, mdl: bytes) -> None:
    """BspError unless ``mdl`` is a model whose counts fit in its bytes."""
    if len(mdl) < _HEADER_SIZE or mdl[:4] != b"IDST":
        raise BspError(f"{name} is not a model ({len(mdl)} bytes)")
    for offset, size, what in _COUNTS:
        count = int.from_bytes(mdl[offset:offset + 4], "little", signed=True)
        if count < 0 or count * size > len(mdl):
            raise BspError(f"{name}: {count} {what} (at byte {offset}) cannot fit in its {len(mdl)} bytes")
    refs = int.from_bytes(mdl[_SKINREF_COUNT:_SKINREF_COUNT + 4], "little", signed=True)
    skins = int.from_bytes(mdl[_SKIN_COUNT:_SKIN_COUNT + 4], "little", signed=True)
    if refs < 0 or skins < 0 or refs * skins * 2 > len(mdl):
        raise BspError(f"{name}: a {skins} x {refs} skin table cannot fit in its {len(mdl)} bytes")


def _add_studio_names(refs: ModelRefs, header: MdlHeader) -> None:
    """Add to ``refs`` what the studio reader finds and srctools did not (names only ever added)."""
    names = [t.strip("/") for t in header.textures]
    in_skins = {names[i] for i in set(header.skins.ravel().tolist())} if header.skins.size else set(names)
    known = {t.lower() for t in refs.textures}
    refs.textures = sorted(set(refs.textures) | {t for t in in_skins if t and t.lower() not in known})
    known |= {t.lower() for t in in_skins}
    refs.unreferenced = sorted({t for t in names if t and t.lower() not in known})
    folded = {c.lower().strip("/") for c in refs.cdmaterials}
    # srctools lists the materials root ("") last: the studio reader's folders go before it.
    extra = [c for c in header.cdmaterials if c.lower().strip("/") not in folded]
    if extra:
        root = [c for c in refs.cdmaterials if not c.strip("/")]
        refs.cdmaterials = [c for c in refs.cdmaterials if c.strip("/")] + extra + root
    seen = {i.lower() for i in refs.included}
    refs.included += [i for i in header.includes if i and i.lower() not in seen]


def _srctools_model(system: Any) -> Any:
    from srctools.mdl import Model  # an optional extra (deps): imported where used
    try:
        return Model(system, system["model.mdl"])
    except Exception as exc:  # truncated or foreign files raise struct/Value errors inside srctools
        raise BspError(str(exc)) from exc


def model_refs(name: str, mdl: bytes, phy: bytes | None = None) -> ModelRefs:
    """The references of the model ``name`` (its ``.mdl`` bytes, and its ``.phy`` when there is one)."""
    with needs_extra("reading models", "deps"):
        from srctools.filesys import VirtualFileSystem
        from srctools.keyvalues import Keyvalues
    check_model(name, mdl)
    files: dict[str, bytes] = {"model.mdl": mdl}
    if phy is not None:
        files["model.phy"] = phy
    problems = []
    try:
        model = _srctools_model(VirtualFileSystem(files))
    except BspError as exc:
        if phy is None:
            raise BspError(f"cannot read the model {name}: {exc}") from exc
        # A broken .phy loses only its gibs: the model's own names are still read.
        problems.append(f"{name}: its .phy cannot be read ({exc}), its gibs are not listed")
        try:
            model = _srctools_model(VirtualFileSystem({"model.mdl": mdl}))
        except BspError as again:
            raise BspError(f"cannot read the model {name}: {again}") from again
    refs = ModelRefs(has_mesh=model.total_verts > 0, problems=problems)
    refs.cdmaterials = list(model.cdmaterials)
    refs.textures = sorted({tex for family in model.skins for tex in family if tex})
    refs.included = [inc.filename.replace("\\", "/") for inc in model.included_models if inc.filename]
    try:
        header: MdlHeader | None = read_mdl(mdl, name)
    except BspError:  # a version or layout the studio reader refuses: srctools' names only
        header = None
    if header is not None:
        _add_studio_names(refs, header)
    gibs = list(_walk(model.phys_keyvalues))
    if model.keyvalues.strip():
        try:
            gibs += _walk(Keyvalues.parse(model.keyvalues, name + ":keyvalues", allow_escapes=False))
        except Exception:  # broken key values in a model: no gibs to find there
            pass
    refs.gibs = sorted(set(gibs))
    return refs
