"""The package type-checks (it ships ``py.typed``), and so does the README's library example."""
from __future__ import annotations

import re
from pathlib import Path

from mypy import api  # in the test extra

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "src" / "sourcebsp"
CACHE = ["--cache-dir", "/tmp/sourcebsp-mypy-cache"]
# Modules held to --strict now; the whole package follows.
STRICT_MODULES = ["sourcebsp.container", "sourcebsp.codecs.base", "sourcebsp.header", "sourcebsp.variants",
                  "sourcebsp.compression", "sourcebsp.writeplan", "sourcebsp.lump_ids", "sourcebsp.errors"]


def _mypy(*args: str) -> None:
    out, err, status = api.run([*args, "--no-error-summary", *CACHE])
    assert status == 0, out + err


def test_mypy_is_clean() -> None:
    _mypy(str(PACKAGE))


def test_core_modules_pass_strict(monkeypatch) -> None:
    monkeypatch.setenv("MYPYPATH", str(ROOT / "src"))
    _mypy("--strict", "--follow-imports=silent", *[arg for m in STRICT_MODULES for arg in ("-m", m)])


def test_readme_library_examples_pass_strict(tmp_path: Path, monkeypatch) -> None:
    """The examples under "## Library" see every lump attribute with its type."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Library", 1)[1].split("\n## ", 1)[0]
    examples = re.findall(r"```python\n(.*?)```", section, re.S)
    assert len(examples) >= 2 and "bsp.planes" in examples[0] and "bsp.entities" in examples[0]
    for number, code in enumerate(examples):
        script = tmp_path / f"readme_example_{number}.py"
        script.write_text(code, encoding="utf-8")
    monkeypatch.setenv("MYPYPATH", str(ROOT / "src"))
    _mypy("--strict", "--follow-imports=silent", *map(str, sorted(tmp_path.glob("readme_example_*.py"))))


def test_lump_types_are_seen_by_mypy(tmp_path: Path, monkeypatch) -> None:
    """reveal_type of lump attributes and typed get_lump / find_lump."""
    script = tmp_path / "reveal.py"
    script.write_text(
        "import sourcebsp\nfrom sourcebsp import LumpId\n"
        "bsp = sourcebsp.open('x.bsp')\n"
        "reveal_type(bsp.planes)\nreveal_type(bsp.entities)\nreveal_type(bsp.pakfile)\n"
        "reveal_type(bsp.get_lump(LumpId.ENTITIES))\nreveal_type(bsp.find_lump(LumpId.PLANES))\n"
        "reveal_type(bsp.static_props)\n",
        encoding="utf-8")
    monkeypatch.setenv("MYPYPATH", str(ROOT / "src"))
    out, err, status = api.run(["--follow-imports=silent", str(script), *CACHE])
    revealed = re.findall(r'Revealed type is "(.*)"', out)
    assert len(revealed) == 6, out + err
    assert revealed[0].startswith("numpy.ndarray")
    assert revealed[1] == "sourcebsp.codecs.entities.Entities"
    assert revealed[2] == "sourcebsp.codecs.pakfile.Pakfile"
    assert revealed[3] == "sourcebsp.codecs.entities.Entities | sourcebsp.codecs.base.RawLump"
    assert revealed[4].startswith("numpy.ndarray") and revealed[4].endswith("| None")
    assert revealed[5] == "sourcebsp.codecs.staticprops.StaticProps"
