"""The README and the manual in docs/ as written: the README's first line runs twice in a row and
its examples run as written; every Python block of a page, as one file, type-checks under
``mypy --strict`` and runs on the example map; every ``sourcebsp`` command line they show names
a real command and real options; every link between the pages reaches its page and heading."""
from __future__ import annotations

import ast
import contextlib
import gzip
import importlib.util
import io
import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from mypy import api  # in the test extra

from sourcebsp.cli import COMMANDS
from sourcebsp.cli import main as cli_main
from sourcebsp.examples import example_map_bytes

from .content._studiomodels import box_spec, write_model

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
PAGES = [ROOT / "README.md", *sorted(DOCS.glob("*.md"))]
README = PAGES[0].read_text(encoding="utf-8")
# The pages for users; the design guide is for contributors and names private modules.
USER_PAGES = [page for page in PAGES if page.name != "design.md"]
# One cache per checkout: mypy took another checkout's cached modules for this one's.
CACHE = ["--cache-dir", str(ROOT / ".mypy_cache" / "tests")]


def _text(page: Path) -> str:
    return page.read_text(encoding="utf-8")


def _blocks(text: str, language: str) -> list[str]:
    return re.findall(rf"^```{language}\n(.*?)^```", text, re.S | re.M)


def _script_name(page: Path) -> str:
    """One module name per page, so mypy checks them side by side."""
    return "readme_blocks.py" if page.parent == ROOT else f"docs_{page.stem}_blocks.py"


PYTHON_PAGES = [page for page in PAGES if _blocks(_text(page), "python")]


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")])}


def test_first_command_runs_twice_in_a_row(tmp_path: Path) -> None:
    """The first shell line (after its pip install) works again in the same folder."""
    first = README.split("```sh\n", 1)[1].split("```", 1)[0].strip()
    assert first.startswith("pip install ") and " && sourcebsp example" in first
    commands = [shlex.split(part) for part in first.split(" && ")[1:]]
    assert [c[:2] for c in commands] == [["sourcebsp", "example"], ["sourcebsp", "info"]]
    for run in (1, 2):
        for command in commands:
            done = subprocess.run([sys.executable, "-m", *command], cwd=tmp_path, env=_env(),
                                  capture_output=True, text=True, timeout=120)
            assert done.returncode == 0, (run, command, done.stderr)
    assert (tmp_path / "example.bsp").read_bytes() == example_map_bytes()
    assert "already holds the example map" in done.stdout or "entities" in done.stdout


def test_readme_is_for_newcomers() -> None:
    """Short, and every page of the manual is one link away."""
    assert len(README.splitlines()) <= 200
    linked = set(re.findall(r"\]\(docs/([\w-]+\.md)\)", README))
    assert linked == {page.name for page in DOCS.glob("*.md")}


def test_user_pages_name_no_private_names() -> None:
    """A dotted name with a private part (``variants._BUILTIN``) is the code's business."""
    private = re.compile(r"\b[a-z]\w*(?:\.\w+)*\._[a-zA-Z]\w*")
    found = [f"{page.name}: {m.group(0)}" for page in USER_PAGES for m in private.finditer(_text(page))]
    assert not found, found


def _slug(heading: str) -> str:
    """GitHub's anchor of a heading."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def test_links_reach_their_pages_and_headings() -> None:
    for page in PAGES:
        for target in re.findall(r"\]\(([^)\s]+)\)", _text(page)):
            if re.match(r"[a-z]+:", target):
                continue
            file, _, anchor = target.partition("#")
            linked = (page.parent / file).resolve() if file else page
            assert linked.exists(), f"{page.name}: {target}"
            if anchor:
                headings = re.findall(r"^#+ (.*)$", _text(linked), re.M)
                assert anchor in {_slug(h) for h in headings}, f"{page.name}: {target}"


def test_python_blocks_type_check(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Under --strict, so every lump attribute the examples read is seen with its type; each
    page's blocks as one file, all pages in one run."""
    assert [p.name for p in PYTHON_PAGES][:1] == ["README.md"] and len(PYTHON_PAGES) >= 5
    everything = "\n".join(b for page in PYTHON_PAGES for b in _blocks(_text(page), "python"))
    assert "budget(" in everything and "bsp.planes" in everything and "bsp.entities" in everything
    monkeypatch.setenv("MYPYPATH", str(ROOT / "src"))  # this checkout's package, not an installed one
    scripts = []
    for page in PYTHON_PAGES:
        script = tmp_path / _script_name(page)
        script.write_text("\n".join(_blocks(_text(page), "python")), encoding="utf-8")
        scripts.append(str(script))
    out, err, status = api.run(["--strict", "--follow-imports=silent", "--config-file", "", *scripts, *CACHE])
    assert status == 0, out + err


GAMEINFO = """"GameInfo"
{
    game "My mod"
    FileSystem { SteamAppId 243750 SearchPaths { game |gameinfo_path|. } }
}
"""


def _folder(tmp_path: Path) -> Path:
    """What the pages' examples expect: the example map (under the names they use), a home
    folder with ``~/mymod`` (an empty mod), and the studio model examples' barrel, a small
    model built in code, beside the map, under ``models/props`` and in the mod."""
    for name in ("example.bsp", "de_example.bsp"):
        (tmp_path / name).write_bytes(example_map_bytes())
    (tmp_path / "mymod").mkdir()
    (tmp_path / "mymod" / "gameinfo.txt").write_text(GAMEINFO, encoding="utf-8")
    for folder in (tmp_path, tmp_path / "models" / "props", tmp_path / "mymod" / "models" / "props"):
        write_model(folder, "barrel01", box_spec())
    return tmp_path


# What each page's blocks print or write, beyond running without an error.
EXPECTED = {
    "README.md": ["orange_box 34 4\n"],
    "library.md": ["20 orange_box\n", "titanfall2 1\n", "mygame"],
    # The example's oil drum (a stock model) is in no search path of an empty mod.
    "content.md": ["SB101 error models/props_c17/oildrum001.mdl (model) is in no search path"],
}
WRITTEN = {"library.md": ["example_edited.bsp", "example.glb", "example.vmf", "mp_room.bsp"],
           "scan.md": ["tables/maps.parquet", "tables/entities.parquet"]}


@pytest.mark.parametrize("page", PYTHON_PAGES, ids=lambda p: p.name)
def test_python_blocks_run_on_the_example_map(page: Path, tmp_path: Path) -> None:
    """A page's blocks in order, in one interpreter, in a folder made by ``_folder``."""
    folder = _folder(tmp_path)
    script = folder / _script_name(page)
    script.write_text("\n".join(_blocks(_text(page), "python")), encoding="utf-8")
    done = subprocess.run([sys.executable, str(script)], cwd=folder, env={**_env(), "HOME": str(folder)},
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    for printed in EXPECTED.get(page.name, []):
        assert printed in done.stdout, (printed, done.stdout)
    for written in WRITTEN.get(page.name, []):
        assert (folder / written).stat().st_size > 1000, written


def _command_lines(text: str) -> list[str]:
    """Every ``sourcebsp`` command of the shell blocks (comments cut) and of inline code."""
    lines = [line.split("  #", 1)[0].strip() for block in _blocks(text, "sh") for line in block.splitlines()]
    lines += re.findall(r"`(sourcebsp [a-z][^`]*)`", text)
    return [line for line in lines if line.startswith("sourcebsp ")]


def _help(argv: list[str]) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        try:
            code = cli_main([*argv, "--help"])
        except SystemExit as exit:
            code = exit.code
    assert code == 0, argv
    return out.getvalue()


def test_shown_commands_name_real_options() -> None:
    """Every command line of README and docs (shell blocks and inline code, the reference's
    synopses too) names a command that exists and options its ``--help`` lists."""
    helps: dict[str, str] = {}
    seen = set()
    for page in PAGES:
        for line in _command_lines(_text(page)):
            words = line.replace("[", " ").replace("]", " ").replace("|", " ").split()
            command = words[1]
            if command.startswith("-"):  # `sourcebsp --help`, `--version`
                continue
            if command not in helps:
                text = _help([command])
                for action in re.findall(r"^    (\w+) {2,}", text, re.M):  # pak's and lump's actions
                    text += _help([command, "MAP", action])
                helps[command] = text
            for option in re.findall(r"(?<![\w-])(--?[a-zA-Z][\w-]*)", " ".join(words[2:])):
                assert re.search(rf"(?<![\w-]){re.escape(option)}\b", helps[command]), (page.name, line, option)
            seen.add(command)
    # The reference has a section for every command, and every command is shown somewhere.
    assert set(re.findall(r"^### ([a-z-]+)$", _text(DOCS / "cli.md"), re.M)) == set(COMMANDS) <= seen


def test_readme_examples_run_as_written(tmp_path: Path) -> None:
    """The README's example of each command, line by line, in a shell, in the folder the
    Python blocks run in (``~`` is its home)."""
    block = next(b for b in _blocks(README, "sh") if "sourcebsp vis " in b)
    folder = _folder(tmp_path)
    python = shlex.quote(sys.executable)
    printed = {}
    for line in block.splitlines():
        command = line.split("  #", 1)[0].strip()
        assert command.startswith("sourcebsp ")
        done = subprocess.run(f"{python} -m {command}", shell=True, cwd=folder, env={**_env(), "HOME": str(folder)},
                              capture_output=True, text=True, timeout=300)
        # check's exit code 1 means "a finding reached --fail-on", as the line's comment says.
        expected = 1 if command.startswith("sourcebsp check ") else 0
        assert done.returncode == expected, (command, done.stdout[-2000:], done.stderr)
        assert "Traceback" not in done.stderr, (command, done.stderr)
        printed[command.split()[1]] = done.stdout
    assert '"rule": "SB101"' in printed["check"] and '"variant": "orange_box"' in printed["info"]
    for written in ("small.bsp", "lit.bsp", "example_l_0.lmp", "example.glb", "atlas.png", "example.png",
                    "example.vmf", "packed.bsp", "tables/maps.parquet"):
        assert (folder / written).stat().st_size > 0, written


def test_benchmark_page_holds_the_table_of_the_stored_run(tmp_path: Path) -> None:
    """docs/benchmarks.md's table is what benchmarks/readme_table.py prints for the run it names."""
    page = _text(DOCS / "benchmarks.md")
    run = re.search(r"`(benchmarks/runs/[\w.-]+\.json\.gz)`", page)
    assert run is not None
    spec = importlib.util.spec_from_file_location("sourcebsp_readme_table", ROOT / "benchmarks" / "readme_table.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    with gzip.open(ROOT / run.group(1), "rt", encoding="utf-8") as f:
        table = module.table(json.load(f))
    assert table in page


def _layers() -> dict[str, int]:
    """docs/design.md's layout table: dotted module or package name -> layer."""
    text = _text(DOCS / "design.md").split("## Layout of the code as it stands", 1)[1]
    layers = {}
    for layer, modules in re.findall(r"^\| (\d+) \| (.*?) \|", text, re.M):
        for name in re.findall(r"`([\w/]+)`", modules):
            dotted = name.strip("/").replace("/", ".")
            layers["sourcebsp" if dotted == "__init__" else f"sourcebsp.{dotted}"] = int(layer)
    return layers


def _runtime_imports(path: Path, module: str) -> set[str]:
    """The sourcebsp modules a module imports when it runs (``if TYPE_CHECKING:`` left out)."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: set[str] = set()

    def visit(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
                for other in child.orelse:
                    visit(other)
                continue
            if isinstance(child, ast.ImportFrom):
                base = package.split(".")[: len(package.split(".")) - child.level + 1] if child.level else []
                target = ".".join(base + ([child.module] if child.module else []))
                for alias in child.names:  # ``from . import x``: x may be a module
                    sub = f"{target}.{alias.name}"
                    is_module = any((ROOT / "src" / sub.replace(".", "/")).with_suffix(s).exists() for s in (".py", ""))
                    found.add(sub if is_module else target)
            elif isinstance(child, ast.Import):
                found.update(alias.name for alias in child.names)
            visit(child)

    visit(ast.parse(path.read_text(encoding="utf-8")))
    return {name for name in found if name == "sourcebsp" or name.startswith("sourcebsp.")}


def test_design_layout_holds_every_module_and_no_import_runs_up() -> None:
    layers = _layers()
    assert len(set(layers.values())) >= 9

    def layer(module: str) -> int | None:
        while module not in layers and "." in module:
            module = module.rpartition(".")[0]
        return layers.get(module)

    source = ROOT / "src"
    unplaced, upward = [], []
    for path in sorted((source / "sourcebsp").rglob("*.py")):
        parts = path.relative_to(source).with_suffix("").parts
        module = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        own = layer(module) if module != "sourcebsp" else layers.get("sourcebsp")
        if own is None:
            unplaced.append(module)
            continue
        for imported in _runtime_imports(path, module):
            theirs = layer(imported) if imported != "sourcebsp" else layers.get("sourcebsp")
            if theirs is not None and theirs > own:
                upward.append(f"{module} ({own}) imports {imported} ({theirs})")
    assert not unplaced, f"modules docs/design.md does not place: {unplaced}"
    assert not upward, upward
