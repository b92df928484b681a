"""The ``.mdl`` file (studio header): what the mesh files need, and the model's names.

Structs of ``public/studio.h`` (Source SDK 2013), MDL versions 44 to 49, which
share these layouts: ``studiohdr_t`` (408 bytes), ``mstudiobodyparts_t`` (16),
``mstudiomodel_t`` (148), ``mstudiomesh_t`` (116), ``mstudiotexture_t`` (64),
``mstudiomodelgroup_t`` (8, an ``$includemodel``).  Every ``*index`` field is a
byte offset from the start of the struct that holds it, except the header's,
which count from the file's start.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ._common import ModelFormatError, Tables, cstring
from ...errors import UnsupportedError

__all__ = ["STUDIOHDR", "BODYPARTS", "MODEL", "MESH", "TEXTURE", "MODELGROUP", "VERSIONS", "MdlHeader",
           "MdlBodyPart", "MdlModel", "read_mdl"]

VERSIONS = range(44, 50)
_I = "<i4"
_V3 = ("<f4", (3,))

STUDIOHDR = np.dtype([
    ("id", "S4"), ("version", _I), ("checksum", _I), ("name", "S64"), ("length", _I),
    ("eyeposition", _V3), ("illumposition", _V3), ("hull_min", _V3), ("hull_max", _V3),
    ("view_bbmin", _V3), ("view_bbmax", _V3), ("flags", _I),
    ("numbones", _I), ("boneindex", _I), ("numbonecontrollers", _I), ("bonecontrollerindex", _I),
    ("numhitboxsets", _I), ("hitboxsetindex", _I), ("numlocalanim", _I), ("localanimindex", _I),
    ("numlocalseq", _I), ("localseqindex", _I), ("activitylistversion", _I), ("eventsindexed", _I),
    ("numtextures", _I), ("textureindex", _I), ("numcdtextures", _I), ("cdtextureindex", _I),
    ("numskinref", _I), ("numskinfamilies", _I), ("skinindex", _I),
    ("numbodyparts", _I), ("bodypartindex", _I), ("numlocalattachments", _I), ("localattachmentindex", _I),
    ("numlocalnodes", _I), ("localnodeindex", _I), ("localnodenameindex", _I),
    ("numflexdesc", _I), ("flexdescindex", _I), ("numflexcontrollers", _I), ("flexcontrollerindex", _I),
    ("numflexrules", _I), ("flexruleindex", _I), ("numikchains", _I), ("ikchainindex", _I),
    ("nummouths", _I), ("mouthindex", _I), ("numlocalposeparameters", _I), ("localposeparamindex", _I),
    ("surfacepropindex", _I), ("keyvalueindex", _I), ("keyvaluesize", _I),
    ("numlocalikautoplaylocks", _I), ("localikautoplaylockindex", _I), ("mass", "<f4"), ("contents", _I),
    ("numincludemodels", _I), ("includemodelindex", _I), ("virtualModel", _I),
    ("szanimblocknameindex", _I), ("numanimblocks", _I), ("animblockindex", _I), ("animblockModel", _I),
    ("bonetablebynameindex", _I), ("pVertexBase", _I), ("pIndexBase", _I),
    ("constdirectionallightdot", "u1"), ("rootLOD", "u1"), ("numAllowedRootLODs", "u1"), ("unused", "u1"),
    ("unused4", _I), ("numflexcontrollerui", _I), ("flexcontrolleruiindex", _I),
    ("flVertAnimFixedPointScale", "<f4"), ("unused3", _I), ("studiohdr2index", _I), ("unused2", _I),
])
BODYPARTS = np.dtype([("sznameindex", _I), ("nummodels", _I), ("base", _I), ("modelindex", _I)])
MODEL = np.dtype([
    ("name", "S64"), ("type", _I), ("boundingradius", "<f4"), ("nummeshes", _I), ("meshindex", _I),
    ("numvertices", _I), ("vertexindex", _I), ("tangentsindex", _I), ("numattachments", _I),
    ("attachmentindex", _I), ("numeyeballs", _I), ("eyeballindex", _I),
    ("pVertexData", _I), ("pTangentData", _I),  # mstudio_modelvertexdata_t: two run-time pointers
    ("unused", _I, (8,)),
])
MESH = np.dtype([
    ("material", _I), ("modelindex", _I), ("numvertices", _I), ("vertexoffset", _I), ("numflexes", _I),
    ("flexindex", _I), ("materialtype", _I), ("materialparam", _I), ("meshid", _I), ("center", _V3),
    ("modelvertexdata", _I), ("numLODVertexes", _I, (8,)),  # mstudio_meshvertexdata_t
    ("unused", _I, (8,)),
])
TEXTURE = np.dtype([("sznameindex", _I), ("flags", _I), ("used", _I), ("unused1", _I), ("material", _I),
                    ("clientmaterial", _I), ("unused", _I, (10,))])
MODELGROUP = np.dtype([("szlabelindex", _I), ("sznameindex", _I)])
VERTEX_SIZE = 48  # sizeof(mstudiovertex_t): mstudiomodel_t.vertexindex is a byte offset in these


@dataclass
class MdlModel:
    """One ``mstudiomodel_t``: a choice of a body part."""

    name: str
    first_vertex: int  # in the LOD 0 vertices of the .vvd (after fixups)
    num_vertices: int
    meshes: np.ndarray  # MESH records


@dataclass
class MdlBodyPart:
    name: str
    base: int
    models: list[MdlModel]


@dataclass
class MdlHeader:
    """What the ``.mdl`` says about its mesh and names."""

    version: int
    checksum: int
    name: str
    flags: int
    hull: tuple[tuple[float, float, float], tuple[float, float, float]]
    textures: list[str]
    cdmaterials: list[str]
    skins: np.ndarray  # (families, skin references) int16: texture index per family and reference
    bodyparts: list[MdlBodyPart]
    includes: list[str] = field(default_factory=list)
    surfaceprop: str = ""
    num_bones: int = 0
    view: tuple[tuple[float, float, float], tuple[float, float, float]] = ((0.0, 0.0, 0.0), (0.0, 0.0, 0.0))
    illumposition: tuple[float, float, float] = (0.0, 0.0, 0.0)  # where the model is lit from, model space


def _name(value: bytes) -> str:
    return value.split(b"\0", 1)[0].decode("utf-8", errors="replace")


def read_mdl(buf: bytes | memoryview, file: str) -> MdlHeader:
    """The header facts of an ``.mdl`` file (``file`` names it in errors)."""
    tables = Tables(buf, file)
    hdr = tables(0, 1, STUDIOHDR, "studiohdr_t")[0]
    if hdr["id"] != b"IDST":
        raise ModelFormatError(f"not a studio model (starts {bytes(hdr['id'])!r}, not b'IDST')", file=file, offset=0)
    version = int(hdr["version"])
    if version not in VERSIONS:
        raise UnsupportedError(f"{file}: MDL version {version} (versions {VERSIONS[0]}-{VERSIONS[-1]} are read)",
                               offset=4)
    textures = tables(int(hdr["textureindex"]), int(hdr["numtextures"]), TEXTURE, "textures")
    base = int(hdr["textureindex"])
    texture_names = [cstring(buf, base + i * TEXTURE.itemsize + int(t["sznameindex"]), f"texture {i} name", file)
                     .replace("\\", "/") for i, t in enumerate(textures)]
    cd = tables(int(hdr["cdtextureindex"]), int(hdr["numcdtextures"]), np.dtype(_I), "cdmaterials")
    cdmaterials = [cstring(buf, int(o), f"cdmaterials {i}", file).replace("\\", "/") for i, o in enumerate(cd)]
    refs, families = int(hdr["numskinref"]), int(hdr["numskinfamilies"])
    if refs < 0 or families < 0:
        raise ModelFormatError(f"skin table of {families} x {refs}", file=file, offset=220)
    skins = tables(int(hdr["skinindex"]), refs * families, np.dtype("<i2"), "skin table")
    skins = skins.reshape(families, refs)
    bad = (skins < 0) | (skins >= max(len(textures), 1))
    if len(textures) and bad.any():
        raise ModelFormatError(f"skin table names texture {int(skins[bad][0])} of {len(textures)}", file=file,
                               offset=int(hdr["skinindex"]) + 2 * int(np.flatnonzero(bad.ravel())[0]))
    bodyparts = []
    bp_base = int(hdr["bodypartindex"])
    for i, bp in enumerate(tables(bp_base, int(hdr["numbodyparts"]), BODYPARTS, "bodyparts")):
        at = bp_base + i * BODYPARTS.itemsize
        name = cstring(buf, at + int(bp["sznameindex"]), f"bodypart {i} name", file)
        models = []
        m_base = at + int(bp["modelindex"])
        for j, model in enumerate(tables(m_base, int(bp["nummodels"]), MODEL, f"bodypart {i} models")):
            m_at = m_base + j * MODEL.itemsize
            meshes = tables(m_at + int(model["meshindex"]), int(model["nummeshes"]), MESH,
                           f"bodypart {i} model {j} meshes")
            vertexindex = int(model["vertexindex"])
            if vertexindex < 0 or vertexindex % VERTEX_SIZE or int(model["numvertices"]) < 0:
                raise ModelFormatError(f"bodypart {i} model {j}: vertex index {vertexindex} is not a whole "
                                       f"vertex", file=file, offset=m_at + 84)
            models.append(MdlModel(_name(bytes(model["name"])), vertexindex // VERTEX_SIZE,
                                   int(model["numvertices"]), meshes))
        bodyparts.append(MdlBodyPart(name, int(bp["base"]), models))
    groups = tables(int(hdr["includemodelindex"]), int(hdr["numincludemodels"]), MODELGROUP, "includemodels")
    g_base = int(hdr["includemodelindex"])
    includes = [cstring(buf, g_base + i * MODELGROUP.itemsize + int(g["sznameindex"]), f"includemodel {i}", file)
                .replace("\\", "/") for i, g in enumerate(groups)]
    surfaceprop = ""
    if int(hdr["surfacepropindex"]) > 0:
        surfaceprop = cstring(buf, int(hdr["surfacepropindex"]), "surfaceprop", file)
    low, high = (hdr[key].tolist() for key in ("hull_min", "hull_max"))
    hull = ((low[0], low[1], low[2]), (high[0], high[1], high[2]))
    low, high = (hdr[key].tolist() for key in ("view_bbmin", "view_bbmax"))
    view = ((low[0], low[1], low[2]), (high[0], high[1], high[2]))
    illum = hdr["illumposition"].tolist()
    return MdlHeader(version, int(hdr["checksum"]), _name(bytes(hdr["name"])), int(hdr["flags"]),
                     hull, texture_names, cdmaterials, skins, bodyparts, includes,
                     surfaceprop, int(hdr["numbones"]), view, (illum[0], illum[1], illum[2]))
