"""What the commands share (:mod:`sourcebsp.cli._common`)."""
from __future__ import annotations

import pytest

from sourcebsp.cli import _common
@pytest.mark.parametrize("columns", [None, "50", "132", "0", "x"])
def test_help_is_as_wide_as_argparse_makes_it(monkeypatch: pytest.MonkeyPatch, columns: str | None) -> None:
    """The help width measured without shutil is the one argparse measures with it."""
    import argparse
    import shutil

    if columns is None:
        monkeypatch.delenv("COLUMNS", raising=False)
    else:
        monkeypatch.setenv("COLUMNS", columns)
    assert _common._help_width() == shutil.get_terminal_size().columns - 2
    ours = _common.parser("info", "Describe maps. " * 20)
    theirs = argparse.ArgumentParser(prog="sourcebsp info", description="Describe maps. " * 20)
    for ap in (ours, theirs):
        ap.add_argument("maps", nargs="+", metavar="MAP", help="the maps, or folders of them " * 5)
    assert ours.format_help() == theirs.format_help()


@pytest.mark.parametrize("values", [
    [],
    [{}],
    [[]],
    [1, "two", None, 3.5],
    [{"path": "maps/a\nb.bsp", "text": "tab\t quote\" back\\ é ☃", "empty": [], "nested": {"x": [1, {"y": {}}]}}],
    [{"lumps": [{"index": i, "name": f"L{i}", "count": None} for i in range(3)]}, {"error": "unreadable"}],
])
def test_a_list_printed_from_its_items_json_is_the_list_printed_whole(
        values: list[object], capsys: pytest.CaptureFixture[str]) -> None:
    """``print_json_texts`` (workers encode their maps' reports) prints byte for byte what
    ``print_json`` of the whole list prints."""
    import json

    _common.print_json(values)
    whole = capsys.readouterr().out
    _common.print_json_texts([json.dumps(value, indent=2) for value in values])
    assert capsys.readouterr().out == whole
