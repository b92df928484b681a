"""``sourcebsp render MAP|DIR|GLOB -o OUT [--view overview|top|player] [--size WxH] ...``: preview pictures.

One map gives one picture at ``-o`` (format by extension: .png, .jpg,
.webp).  A folder, a glob pattern or several maps give one picture per map
in the folder ``-o`` (``--format`` picks the extension), with a progress
bar and a summary.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, Sequence

from .._io import atomic_write
from . import _common
from ._maps import MapList, find_maps, run_batch
from ._progress import steps

if TYPE_CHECKING:
    from ..converters.render import RenderResult

# The renderer (numpy) is imported where a map is drawn: ``render --help`` stays light.
_DEFAULT_SIZE = {"overview": (1024, 1024), "top": (1024, 1024), "player": (1280, 720)}


def _size(text: str) -> tuple[int, int]:
    try:
        w, h = (int(v) for v in text.lower().split("x"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected WIDTHxHEIGHT such as 1024x768, not {text!r}") from None
    if not (1 <= w <= 16384 and 1 <= h <= 16384):
        raise argparse.ArgumentTypeError(f"width and height must be 1-16384, not {text!r}")
    return w, h


def _parser() -> argparse.ArgumentParser:
    ap = _common.parser("render", "Draw preview pictures of maps on the CPU: radar overviews, top views, "
                                  "player views.")
    ap.add_argument("maps", nargs="+", metavar="MAP", help="a .bsp file, a folder of them, or a glob pattern")
    ap.add_argument("-o", "--output", required=True,
                    help="the picture to write (.png, .jpg, .webp); for several maps, a folder")
    ap.add_argument("--view", choices=("overview", "top", "player"), default=None,
                    help="overview: radar of the playable floors (default); top: the whole map from above; "
                         "player: perspective from a player start")
    ap.add_argument("--size", type=_size, default=None,
                    help="WIDTHxHEIGHT in pixels (default 1024x1024 from above, 1280x720 player)")
    ap.add_argument("--fov", type=float, default=90.0, help="horizontal field of view of the player view, degrees")
    ap.add_argument("--camera", type=float, nargs="+", metavar="N",
                    help="X Y Z PITCH YAW [ROLL]: a fixed camera (player view)")
    ap.add_argument("--at", metavar="TARGETNAME", help="look from the entity with this targetname (player view)")
    ap.add_argument("--height-range", type=float, nargs=2, metavar=("LOW", "HIGH"),
                    help="overview: the world heights to show instead of the ones worked out")
    ap.add_argument("--markers", action="store_true", help="overview and top views: mark spawns, bomb sites, control points")
    ap.add_argument("--overview-txt", action="store_true",
                    help="overview: write the overview file games read (pos_x, pos_y, scale) beside the picture")
    ap.add_argument("--sections", action="store_true",
                    help="overview: a picture per floor level (OUT_levelN) and CS:GO vertical sections in the "
                         "overview file (implies --overview-txt)")
    ap.add_argument("--game", metavar="DIR", help="a game folder (gameinfo.txt) or content folder for textures "
                                                 "and models")
    ap.add_argument("--no-textures", action="store_true", help="average texture colours only")
    ap.add_argument("--no-props", action="store_true", help="do not draw static props (their meshes, boxes or markers)")
    ap.add_argument("--include-tools", action="store_true", help="draw tool, nodraw and sky faces too")
    ap.add_argument("--format", choices=("png", "jpg", "webp"), default="png",
                    help="picture format when writing several maps to a folder (default png)")
    _common.overwrite_option(ap, "picture")
    return ap


def main(argv: Sequence[str] | None = None) -> int:
    ap = _parser()
    _common.variant_option(ap)
    args = ap.parse_args(argv)
    view = args.view or ("player" if args.camera or args.at else "overview")
    if args.camera is not None and len(args.camera) not in (5, 6):
        ap.error("--camera takes X Y Z PITCH YAW [ROLL]")
    size = args.size or _DEFAULT_SIZE[view]
    options: dict[str, Any] = dict(
        view=view, size=size, fov=args.fov, camera=args.camera, at=args.at, height_range=args.height_range,
        markers=args.markers, game=args.game, textures=not args.no_textures, props=not args.no_props,
        include_tools=args.include_tools)

    def body() -> int:
        from ..converters import render as rd

        found = find_maps(args.maps)
        maps = found.paths
        if found.batch:
            return _batch(found, Path(args.output), args, options)
        out = Path(args.output)
        _common.check_output(out, overwrite=args.overwrite, inputs=[maps[0]])
        try:
            rd.image_format(out)
        except ValueError as exc:
            print(f"sourcebsp: error: {exc}", file=sys.stderr)
            return 1
        try:
            with steps("render", rd.RENDER_STEPS) as progress:
                result = rd.render(maps[0], progress=progress, **options)
        except (ImportError, ValueError) as exc:
            print(f"sourcebsp: error: {exc}", file=sys.stderr)
            return 1
        rd.save_image(result, out)
        txt = _write_overview_txt(result, out, maps[0], args, options) \
            if args.overview_txt or args.sections else None
        for warning in result.warnings:
            print(f"sourcebsp: warning: {maps[0].name}: {warning}", file=sys.stderr)
        print(_summary(out, result) + (f"; overview file {txt}" if txt else ""))
        return 0

    return _common.run(body, args)


def _summary(out: Path, result: RenderResult) -> str:
    h, w = result.image.shape[:2]
    shading = "lightmaps" if result.lit else "face normals"
    colour = "textures" if result.textured else "average texture colours"
    text = (f"{out}: {w}x{h} {result.view} view, {result.triangles} triangles, {result.covered:.0%} covered, "
            f"coloured by {colour}, shaded by {shading}")
    if result.props or result.props_missing:
        text += f", {result.props} props drawn ({result.props_missing} without model files)"
    if result.overview is not None and result.view == "overview":
        text += f", heights {result.overview.z_min:.0f}..{result.overview.z_max:.0f}"
    if result.camera_source:
        source = result.camera_source  # "entity x", "--camera", "above a floor", "outside the map"
        text += f", camera {source}" if source.startswith(("above ", "outside ")) else f", camera at {source}"
    if result.warnings:
        text += f", {len(result.warnings)} warning{'s' if len(result.warnings) > 1 else ''}"
    return text


def _write_overview_txt(result: RenderResult, out: Path, bsp_path: Path, args: argparse.Namespace,
                        options: dict[str, Any]) -> Path | None:
    """The overview file beside the picture, and with ``--sections`` a picture per lower level."""
    from ..converters import render as rd

    if result.overview is None:
        print("sourcebsp: warning: --overview-txt applies to overview and top views only", file=sys.stderr)
        return None
    txt = out.with_suffix(".txt")
    if txt.exists() and not args.overwrite:
        print(f"sourcebsp: warning: {txt} exists (use --overwrite to replace it); not written", file=sys.stderr)
        return None
    sections = rd.level_sections(result) if args.sections and result.view == "overview" else []
    for name, _, _, level in sections:
        if level is None:
            continue
        picture = out.with_name(f"{out.stem}_{name}{out.suffix}")
        if picture.exists() and not args.overwrite:
            print(f"sourcebsp: warning: {picture} exists (use --overwrite to replace it); not written",
                  file=sys.stderr)
            continue
        rd.save_image(rd.render(bsp_path, **{**options, "level": level}), picture)
        print(f"{picture}: level {name}, floors {level[0]:.0f}..{level[1]:.0f}")
    text = rd.overview_text(result, bsp_path.stem, [(n, lo, hi) for n, lo, hi, _ in sections] or None)
    atomic_write(txt, text.encode())
    return txt


def _batch(found: MapList, folder: Path, args: argparse.Namespace, options: dict[str, Any]) -> int:
    from ..converters import render as rd

    maps = found.paths
    folder.mkdir(parents=True, exist_ok=True)

    def one(path: Path) -> RenderResult:
        out = found.output(path, folder, f".{args.format}")
        _common.check_output(out, overwrite=args.overwrite, inputs=[path])
        result = rd.render(path, **options)
        rd.save_image(result, out)
        if args.overview_txt or args.sections:
            _write_overview_txt(result, out, path, args, options)
        print(_summary(out, result))
        return result

    batch = run_batch("render", maps, one)
    warned = [(r.path, r.value.warnings) for r in batch.results if r.value is not None and r.value.warnings]
    print(f"{len(batch.results) - len(batch.failed)} of {len(maps)} maps rendered to {folder}, "
          f"{len(warned)} with warnings, {len(batch.failed)} failed")
    for path, warnings in warned:
        print(f"sourcebsp: warning: {path}: {'; '.join(warnings)}", file=sys.stderr)
    if batch.interrupted:
        print("sourcebsp: interrupted", file=sys.stderr)
        return _common.INTERRUPTED
    return 1 if batch.failed else 0
