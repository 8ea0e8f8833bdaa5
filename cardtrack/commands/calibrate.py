"""`cardtrack calibrate`: print markers and the lens board, calibrate the table and the lens,
show a game's zone layout, and check a saved profile.

Subcommands: `markers` and `board` write true-size PDFs; `table` turns camera frames (an
image, a folder of images or a video) into a table profile plus a preview PNG with the
game's zones drawn on the camera image; `lens` fits the lens from views of the board;
`layout` prints or draws a game's zones for a player count; `check` loads a profile and
reports what it holds; `selftest` measures accuracy and speed on synthetic frames. The library does the work (`calibration.*`); this module parses
options, supplies the creation time and prints the results.
"""

from __future__ import annotations

import argparse
from datetime import UTC, datetime
from pathlib import Path

import cv2
import numpy as np

from calibration.draw import annotate_profile, render_layout
from calibration.errors import CalibrationError
from calibration.homography import TableGeometry
from calibration.layout import (
    available_games,
    build_layout,
    layout_json,
    layout_summary,
    load_template,
)
from calibration.lens import BoardSpec, DistortionModel, calibrate_lens, load_lens, save_lens
from calibration.markers import DEFAULT_MARKER_MM, TableCorner
from calibration.profile import TableProfile, load_profile, save_profile
from calibration.selftest import run_selftest
from calibration.sheets import (
    DEFAULT_DPI,
    Paper,
    pdf_page_sizes_mm,
    render_board_sheet,
    render_marker_sheet,
    save_pdf,
)
from calibration.sources import open_frames
from calibration.table import (
    calibrate_from_corners,
    calibrate_table,
    collect_markers,
    parse_corners,
)

WARN_MM = 2.0


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add `calibrate` and its subcommands."""
    parser = subparsers.add_parser(
        "calibrate",
        help="print markers, calibrate the table and lens, show zone layouts",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = parser.add_subparsers(dest="calibrate_command", metavar="STEP", required=True)

    p = sub.add_parser("markers", help="write the four table markers as a true-size PDF")
    p.add_argument("--paper", choices=[str(x) for x in Paper], default="a4")
    p.add_argument("--out", type=Path, default=Path("markers.pdf"), help="PDF to write")
    p.add_argument("--marker-mm", type=float, default=DEFAULT_MARKER_MM, help="printed marker side (default 60)")
    p.add_argument("--dpi", type=int, default=DEFAULT_DPI)
    p.set_defaults(func=_markers)

    p = sub.add_parser("board", help="write the ChArUco lens board as a true-size PDF")
    p.add_argument("--paper", choices=[str(x) for x in Paper], default="a4")
    p.add_argument("--out", type=Path, default=Path("board.pdf"), help="PDF to write")
    p.add_argument("--dpi", type=int, default=DEFAULT_DPI)
    p.set_defaults(func=_board)

    games = list(available_games())
    p = sub.add_parser("table", help="fit the camera-to-table mapping and write a profile")
    p.add_argument("--source", type=Path, required=True, help="image, folder of images or video")
    p.add_argument("--game", choices=games, required=True)
    p.add_argument("--players", type=int, required=True)
    p.add_argument("--out", type=Path, default=Path("table.json"), help="profile to write")
    p.add_argument("--table-size", help="WxH mm between marker centres (default: the layout's size)")
    p.add_argument("--marker-mm", type=float, default=DEFAULT_MARKER_MM, help="printed marker side")
    p.add_argument("--lens", type=Path, help="lens file from `cardtrack calibrate lens`")
    p.add_argument("--corners", help="x1,y1,...,x4,y4: table corners in image pixels instead of markers "
                   "(top-left, top-right, bottom-right, bottom-left)")
    p.add_argument("--max-frames", type=int, default=30, help="frames read from a folder or video")
    p.add_argument("--preview", type=Path, help="preview PNG (default: next to --out)")
    p.set_defaults(func=_table)

    p = sub.add_parser("lens", help="fit the lens from views of the printed ChArUco board")
    p.add_argument("--source", type=Path, required=True, help="video or folder of images of the board")
    p.add_argument("--out", type=Path, default=Path("lens.json"), help="lens file to write")
    p.add_argument("--max-frames", type=int, default=60)
    p.add_argument("--model", choices=[str(m) for m in DistortionModel], default=str(DistortionModel.STANDARD),
                   help="distortion coefficients to fit")
    p.set_defaults(func=_lens)

    p = sub.add_parser("layout", help="print (and draw) a game's zones for a player count")
    p.add_argument("--game", choices=games, required=True)
    p.add_argument("--players", type=int, required=True)
    p.add_argument("--table-size", help="WxH mm between marker centres (default: the layout's size)")
    p.add_argument("--json", action="store_true", help="print the layout as JSON")
    p.add_argument("--out", type=Path, help="PNG plan of the layout to write")
    p.add_argument("--scale", type=float, default=1.0, help="PNG pixels per millimetre")
    p.set_defaults(func=_layout)

    p = sub.add_parser("check", help="load a table profile and say what it holds")
    p.add_argument("profile", type=Path)
    p.set_defaults(func=_check)

    p = sub.add_parser("selftest", help="measure calibration accuracy and speed on synthetic frames")
    p.add_argument("--poses", type=int, default=20, help="random camera poses to try")
    p.add_argument("--max-tilt", type=float, default=45.0, help="steepest camera tilt, degrees")
    p.add_argument("--seed", type=int, default=0)
    p.set_defaults(func=_selftest)


def parse_size(text: str) -> tuple[float, float]:
    """'1000x750' (or ×, X, comma) → (1000.0, 750.0) millimetres."""
    for sep in ("x", "X", "×", ","):
        if sep in text:
            parts = text.split(sep)
            break
    else:
        parts = []
    try:
        w, h = (float(p) for p in parts)
    except ValueError:
        w = h = -1.0
    if not (np.isfinite(w) and np.isfinite(h) and w > 0 and h > 0):
        raise CalibrationError(f"--table-size {text!r}: give WxH in millimetres, e.g. 1000x750")
    return w, h


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def _markers(args: argparse.Namespace) -> int:
    sheet = render_marker_sheet(Paper(args.paper), marker_mm=args.marker_mm, dpi=args.dpi)
    save_pdf(sheet, args.out)
    w, h = pdf_page_sizes_mm(args.out)[0]
    print(f"wrote {args.out}: {len(sheet.pages)} page(s) of {w:.1f}×{h:.1f} mm, markers 0–3 of "
          f"{args.marker_mm:g} mm. Print at 100 % / actual size and check the 100 mm bar.")
    return 0


def _board(args: argparse.Namespace) -> int:
    spec = BoardSpec()
    sheet = render_board_sheet(Paper(args.paper), spec=spec, dpi=args.dpi)
    save_pdf(sheet, args.out)
    bw, bh = spec.size_mm
    print(f"wrote {args.out}: ChArUco {spec.squares_x}×{spec.squares_y} squares of {spec.square_mm:g} mm "
          f"({bw:g}×{bh:g} mm). Print at 100 %, glue flat, then film it for `cardtrack calibrate lens`.")
    return 0


def _table(args: argparse.Namespace) -> int:
    template = load_template(args.game)
    template.check_players(args.players)
    table_mm = parse_size(args.table_size) if args.table_size else template.recommended_table(args.players)
    try:
        geometry = TableGeometry(table_mm=table_mm, marker_mm=args.marker_mm)
    except ValueError as exc:
        raise CalibrationError(f"--table-size / --marker-mm: {exc}") from None
    # The layout must fit this table before any frame is read.
    layout = build_layout(args.game, args.players, table_mm, marker_mm=args.marker_mm)
    lens = load_lens(args.lens) if args.lens else None
    frames = open_frames(args.source, args.max_frames)
    print(f"source: {frames.describe()}")
    if args.corners:
        corners = parse_corners(args.corners)
        first = next(iter(frames))
        profile = calibrate_from_corners(
            corners, image_size=(first.shape[1], first.shape[0]), game=args.game, players=args.players,
            geometry=geometry, lens=lens, created=_now(),
        )
        image = first
    else:
        survey = collect_markers(frames, total=len(frames), progress=len(frames) > 1)
        for corner in TableCorner:
            obs = next((o for o in survey.observations if o.id == int(corner)), None)
            if obs is None:
                print(f"  marker {int(corner)} {corner.label}: not seen")
            else:
                print(f"  marker {int(corner)} {corner.label}: seen in {obs.frames} of {survey.frames} "
                      f"frame(s), spread {obs.spread_px:.2f} px")
        profile = calibrate_table(
            survey, game=args.game, players=args.players, geometry=geometry, lens=lens, created=_now()
        )
        image = survey.first_frame
        turned = [o for o in profile.observations if o.rotation]
        for o in turned:
            print(f"  note: marker {o.id} lies turned by {o.rotation * 90}°; that is fine")
    _report_fit(profile)
    save_profile(profile, args.out)
    preview = args.preview or args.out.with_suffix(".preview.png")
    if not cv2.imwrite(str(preview), annotate_profile(image, profile, layout)):
        raise CalibrationError(f"{preview}: could not write the preview image")
    print(f"wrote {args.out} and {preview} (check that the zone outlines sit on the table)")
    return 0


def _report_fit(profile: TableProfile) -> None:
    e = profile.errors
    how = (f"{len(profile.observations)} markers ({4 * len(profile.observations)} corners)"
           if profile.observations else "4 corners given by hand")
    if e is None:
        return
    print(f"fit from {how}: error rms {e.rms_px:.2f} px / {e.rms_mm:.2f} mm, "
          f"max {e.max_px:.2f} px / {e.max_mm:.2f} mm; scale {profile.px_per_mm():.2f} px/mm at the centre")
    if e.max_mm > WARN_MM:
        print(f"warning: marker corners disagree with the table model by up to {e.max_mm:.1f} mm: check "
              "--table-size (between marker centres), --marker-mm (measure a printed marker) and that "
              "the markers lie flat")


def _lens(args: argparse.Namespace) -> int:
    frames = open_frames(args.source, args.max_frames)
    print(f"source: {frames.describe()}")
    result = calibrate_lens(frames, model=DistortionModel(args.model), total=len(frames), progress=len(frames) > 1)
    save_lens(result, args.out, created=_now())
    k = result.lens.camera_matrix
    print(f"board found in {result.views_used} of {result.frames_seen} frames; reprojection rms "
          f"{result.rms_px:.3f} px")
    print(f"focal {k[0, 0]:.1f}×{k[1, 1]:.1f} px, centre ({k[0, 2]:.1f}, {k[1, 2]:.1f}), distortion "
          f"{np.array2string(result.lens.distortion, precision=4)}")
    if result.rms_px > 1.0:
        print("warning: rms above 1 px: the board may be bent, blurred or not flat; record it again")
    print(f"wrote {args.out}; use it with `cardtrack calibrate table --lens {args.out}`")
    return 0


def _layout(args: argparse.Namespace) -> int:
    table_mm = parse_size(args.table_size) if args.table_size else None
    layout = build_layout(args.game, args.players, table_mm)
    if args.json:
        print(layout_json(layout))
    else:
        for line in layout_summary(layout):
            print(line)
    if args.out:
        if not 0.2 <= args.scale <= 5.0:
            raise CalibrationError(f"--scale must be between 0.2 and 5 pixels per mm, got {args.scale:g}")
        if not cv2.imwrite(str(args.out), render_layout(layout, px_per_mm=args.scale)):
            raise CalibrationError(f"{args.out}: could not write the image")
        if not args.json:
            print(f"wrote {args.out}")
    return 0


def _check(args: argparse.Namespace) -> int:
    profile = load_profile(args.profile)
    w, h = profile.table_mm
    print(f"{args.profile}: {profile.game}, {profile.players} players, table {w:g}×{h:g} mm, "
          f"image {profile.image_size[0]}×{profile.image_size[1]} px, method {profile.method}, "
          f"lens {'yes' if profile.lens is not None else 'no'}, created {profile.created or 'unknown'}")
    _report_fit(profile)
    layout = profile.layout()
    seen = ", ".join(str(o.id) for o in profile.observations) or "none (corners given by hand)"
    print(f"markers fitted: {seen}; layout: {len(layout.zones)} zones fit the table")
    return 0


def _selftest(args: argparse.Namespace) -> int:
    if not 1 <= args.poses <= 500:
        raise CalibrationError(f"--poses must be between 1 and 500, got {args.poses}")
    if not 0.0 <= args.max_tilt <= 60.0:
        raise CalibrationError(f"--max-tilt must be between 0 and 60 degrees, got {args.max_tilt:g}")
    report = run_selftest(poses=args.poses, seed=args.seed, max_tilt_deg=args.max_tilt, progress=True)

    def spread(values: tuple[float, ...]) -> str:
        arr = np.asarray(values)
        return (f"median {np.median(arr):.3f}, 95th percentile {np.percentile(arr, 95):.3f}, "
                f"max {arr.max():.3f} mm")

    print(f"{report.poses} synthetic 1280×720 views, tilt 0–{report.max_tilt_deg:g}°, largest error over "
          "the table per fit:")
    print(f"  all four markers:    {spread(report.all_markers_mm)}")
    print(f"  one marker hidden:   {spread(report.one_hidden_mm)} ({len(report.one_hidden_mm)} fits)")
    print(f"timings (median): detect markers {report.detect_ms:.1f} ms, bump check {report.bump_check_ms:.1f} ms, "
          f"zones for 100 points {report.assign_100_ms:.2f} ms")
    return 0
