"""Shared fixtures: the real map corpus and small synthetic maps.

The corpus is found through ``SOURCEBSP_CORPUS`` (default ``../shared/corpus``
relative to the project root).  Without it the corpus tests are skipped on a
developer's machine, but fail when ``CI=true``.
"""
from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CORPUS = Path(os.environ.get("SOURCEBSP_CORPUS", ROOT.parent / "shared" / "corpus")).resolve()
MAPS = sorted(CORPUS.glob("*.bsp"))
VMF_DIR = CORPUS / "vmf"
IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")

if IN_CI and not MAPS:
    raise RuntimeError(
        f"CI=true but the map corpus is missing: no .bsp files in {CORPUS} "
        "(set SOURCEBSP_CORPUS to its folder)"
    )


def corpus_maps() -> list:
    """pytest params: one per corpus map, named after the file."""
    if not MAPS:
        return [pytest.param(None, marks=pytest.mark.skip(reason=f"no corpus at {CORPUS}"))]
    return [pytest.param(path, id=path.stem) for path in MAPS]


def corpus_map(name: str) -> Path:
    path = CORPUS / name
    if not path.exists():
        if IN_CI:
            raise FileNotFoundError(path)
        pytest.skip(f"corpus map {name} not found")
    return path


def corpus_vmf(name: str) -> Path:
    """The Hammer source ``vmf/<name>`` of a corpus map (skip, or fail in CI, if missing)."""
    path = VMF_DIR / name
    if not path.exists():
        if IN_CI:
            raise FileNotFoundError(path)
        pytest.skip(f"Hammer source {name} not found in {VMF_DIR}")
    return path


@pytest.fixture(params=corpus_maps())
def map_path(request: pytest.FixtureRequest) -> Path:
    """Each corpus map in turn (read-only: copy before writing)."""
    return request.param  # type: ignore[no-any-return]


@pytest.fixture(scope="session")
def all_maps() -> list[Path]:
    """Every corpus map at once (skips, or fails in CI, when there is none)."""
    if not MAPS:
        pytest.skip(f"no corpus at {CORPUS}")
    return MAPS


@pytest.fixture(scope="session")
def vmf_dir() -> Path:
    if not VMF_DIR.is_dir():
        if IN_CI:
            raise FileNotFoundError(VMF_DIR)
        pytest.skip(f"no Hammer sources at {VMF_DIR}")
    return VMF_DIR


@pytest.fixture(scope="session")
def corpus_file():
    """A function giving the path of a named corpus map (skip, or fail in CI, if missing)."""
    return corpus_map


# Tests that take seconds (whole-corpus conversions, comparisons with srctools,
# subprocess runs), measured with ``--durations``: ``python -m pytest -m "not slow"``
# leaves them out for a run in under a minute; CI runs everything.  Tests in
# tests/cli carry ``@pytest.mark.slow`` themselves; these are listed here so the
# modules of other areas need no edit (tests/cli/test_output.py checks that each exists).
SLOW_TESTS = {
    "tests/codecs/test_entities.py::test_corpus_brush_entities_link_to_models",
    "tests/codecs/test_entities.py::test_corpus_edits_survive_save_and_reopen",
    "tests/codecs/test_entities.py::test_corpus_entities_equal_srctools",
    "tests/codecs/test_entities.py::test_corpus_output_separator_as_found",
    "tests/codecs/test_pakfile.py::test_add_save_reopen",
    "tests/codecs/test_physics.py::test_physcollide_matches_srctools",
    "tests/codecs/test_staticprops.py::test_move_add_remove_survive_save",
    "tests/codecs/test_staticprops.py::test_static_props_equal_srctools",
    "tests/codecs/test_visibility.py::test_vvis_layout_is_rebuilt_byte_for_byte",
    "tests/converters/test_decompile.py::test_displacement_vertices_match_the_map",
    "tests/converters/test_decompile.py::test_entities_of_the_lump_keep_their_keys_and_outputs",
    "tests/converters/test_decompile.py::test_every_brush_of_the_map_is_written_or_reported",
    "tests/converters/test_decompile.py::test_output_parses_with_unique_ids_and_closed_convex_solids",
    "tests/converters/test_decompile.py::test_overlay_sides_hold_the_overlay_faces",
    "tests/converters/test_decompile.py::test_props_cubemaps_and_overlays_match_the_lumps",
    "tests/converters/test_decompile.py::test_texture_axes_follow_the_map_faces",
    "tests/converters/test_gltf.py::test_brush_entity_nodes_placed",
    "tests/converters/test_gltf.py::test_glb_structure_and_counts",
    "tests/converters/test_gltf.py::test_khronos_validator",
    "tests/converters/test_gltf.py::test_static_prop_nodes",
    "tests/converters/test_obj.py::test_obj_export",
    "tests/converters/test_render.py::test_render_covers_the_frame",
    "tests/converters/test_render.py::test_pvs_culling_hides_nothing_that_shows",
    "tests/model/test_brushes.py::test_polygons_match_vertex_enumeration",
    "tests/model/test_geometry.py::test_polygons_match_srctools",
    "tests/model/test_lightmaps.py::test_png_written",
    "tests/test_benchmark_script.py::test_every_operation_in_process",
    "tests/test_benchmark_script.py::test_whole_processes_report_time_and_peak_rss",
    "tests/test_benchmark_script.py::test_missing_and_failing_libraries_are_reported",
    "tests/test_corpus.py::test_compress_then_decompress_restores_contents",
    "tests/test_queries.py::test_leaf_at_matches_srctools",
    "tests/test_typing.py::test_mypy_is_clean",
    "tests/test_typing.py::test_package_passes_strict",
    "tests/test_typing.py::test_container_satisfies_its_protocol",
    "tests/converters/test_decompile_fidelity.py::test_every_side_lies_on_its_bsp_plane",
    "tests/converters/test_decompile_fidelity.py::test_no_texture_axis_is_perpendicular_to_its_face",
    "tests/converters/test_decompile_fidelity.py::test_the_vmf_is_ready_to_compile",
    "tests/fuzz/test_reproducers.py::test_regression_keeps_the_promise",
    "tests/fuzz/test_reproducers.py::test_reproducer_keeps_the_promise",
    "tests/fuzz/test_campaign.py::test_a_short_fuzzing_run_finds_nothing",
    "tests/converters/test_decompile_visclusters.py::test_corpus_visclusters_parse_check_and_count",
    "tests/test_resources.py::test_real_maps_keep_the_rule_with_a_small_allowance",
    "tests/converters/test_decompile_entities.py::test_format_sets_the_output_separator",
    "tests/cli/test_decompile_batch.py::test_report_on_stdout_and_options",
    "tests/converters/test_gltf_memory.py::test_glb_export_from_path_peak_memory",
    "tests/converters/test_render.py::test_player_view_starts_at_a_spawn",
    "tests/converters/test_render_memory.py::test_render_peak_memory",
}


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if item.nodeid.split("[", 1)[0] in SLOW_TESTS:
            item.add_marker(pytest.mark.slow)
