"""The commands reach the converters through public names only: a private module or name of
``sourcebsp.converters`` (``converters/_common``, ``gltf._Blob``) imported by ``cli/`` is a
helper that has no public home yet."""
from __future__ import annotations

import ast

from ..conftest import ROOT


def _converter_imports() -> list[tuple[str, str, list[str]]]:
    """(command module, imported module, names) of every import of a converters module in ``cli/``."""
    found = []
    for source in sorted((ROOT / "src" / "sourcebsp" / "cli").glob("*.py")):
        for node in ast.walk(ast.parse(source.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.level == 2 and (node.module or "").startswith("converters"):
                found.append((source.name, node.module or "", [alias.name for alias in node.names]))
    return found


def test_cli_imports_only_public_converter_names() -> None:
    imports = _converter_imports()
    assert {"export.py", "model.py"} <= {name for name, _, _ in imports}  # the walk finds them
    private = [(name, module, names) for name, module, names in imports
               if any(part.startswith("_") for part in module.split(".")) or any(n.startswith("_") for n in names)]
    assert private == []
