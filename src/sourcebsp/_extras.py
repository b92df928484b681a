"""Optional dependencies: one way to import them and to say which extra installs them.

::

    with needs_extra("reading materials", "deps"):
        from srctools.vmt import Material

raises :class:`~sourcebsp.errors.MissingExtraError` ("reading materials needs
srctools: pip install 'sourcebsp[deps]'") when srctools is missing; the
imports stay plain ``import`` statements, so a type checker still sees them.
"""
from __future__ import annotations

import contextlib
import importlib
from types import ModuleType
from typing import Iterator

from .errors import MissingExtraError

__all__ = ["import_extra", "needs_extra"]

#: The name pip knows a package by, where it is not the name it is imported as.
_DISTRIBUTIONS = {"PIL": "Pillow"}


@contextlib.contextmanager
def needs_extra(what: str, extra: str) -> Iterator[None]:
    """Run the imports of the block; a missing module raises :class:`MissingExtraError`.

    ``what`` is what needs the module ("writing PNG images"), ``extra`` the
    extra of ``pyproject.toml`` that installs it.
    """
    try:
        yield
    except ImportError as exc:
        if isinstance(exc, MissingExtraError):
            raise
        top = (exc.name or "").split(".")[0] or "an optional package"
        raise MissingExtraError(what, _DISTRIBUTIONS.get(top, top), extra) from exc


def import_extra(module: str, what: str, extra: str) -> ModuleType:
    """``module`` imported, or :class:`MissingExtraError` naming the extra to install."""
    with needs_extra(what, extra):
        return importlib.import_module(module)
    raise AssertionError("unreachable")  # pragma: no cover - for type checkers: the block returns or raises
