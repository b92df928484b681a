"""One way to say that a feature needs an optional dependency: ``sourcebsp._extras``."""
from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

import sourcebsp
from sourcebsp._extras import import_extra, needs_extra
from sourcebsp.errors import BspError, MissingExtraError

PACKAGE = Path(sourcebsp.__file__).resolve().parent


def test_missing_module_names_the_package_and_the_extra(monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "PIL", None)  # "import PIL" now fails as if not installed
    with pytest.raises(MissingExtraError) as exc:
        with needs_extra("writing PNG images", "export"):
            from PIL import Image  # noqa: F401
    assert str(exc.value) == "writing PNG images needs Pillow: pip install 'sourcebsp[export]'"
    assert (exc.value.package, exc.value.extra) == ("Pillow", "export")
    assert isinstance(exc.value, BspError) and isinstance(exc.value, ImportError)  # caught either way
    assert isinstance(exc.value.__cause__, ImportError)


def test_every_optional_import_of_the_package_goes_through_it(monkeypatch) -> None:
    """With srctools missing, the content readers raise the one exception type."""
    from sourcebsp.content.materials import material_refs
    from sourcebsp.content.sounds import soundscript_entries

    for name in [n for n in sys.modules if n == "srctools" or n.startswith("srctools.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "srctools", None)
    for call, what in ((lambda: material_refs('"LightmappedGeneric" {}'), "reading materials"),
                       (lambda: soundscript_entries(""), "reading soundscripts")):
        with pytest.raises(MissingExtraError, match=re.escape(f"{what} needs srctools: pip install 'sourcebsp[deps]'")):
            call()
    with pytest.raises(MissingExtraError, match=r"glTF export needs srctools"):
        import_extra("srctools.vmt", "glTF export", "export")
    assert import_extra("json", "x", "y") is sys.modules["json"]


def test_no_hand_written_install_hint_is_left() -> None:
    """"pip install" is spelled once, in MissingExtraError; zip method numbers once, in the pakfile codec."""
    hinted = [p.relative_to(PACKAGE) for p in PACKAGE.rglob("*.py")
              if re.search(r"raise [^\n]*(\n[^\n]*)?pip install", p.read_text(encoding="utf-8"))]
    assert hinted == [], hinted
    errors = (PACKAGE / "errors.py").read_text(encoding="utf-8")
    assert "pip install 'sourcebsp[{extra}]'" in errors
    lint = (PACKAGE / "content" / "lint.py").read_text(encoding="utf-8")
    assert "from ..codecs.pakfile import ZIP_LZMA, ZIP_STORED" in lint and not re.search(r"= *0, *14", lint)
