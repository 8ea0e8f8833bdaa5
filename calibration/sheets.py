"""Printable sheets at true size: the four table markers and the ChArUco lens board.

Pages are drawn as bitmaps at a known resolution with Pillow (A4 210×297 mm or Letter
215.9×279.4 mm) and written as a PDF whose page size is the paper size, so printing at
"actual size" / 100 % gives true millimetres. Each table marker is a cut-out tile: the marker,
a white quiet zone one cell wide, a label band with its id, its table corner and an arrow
that must point to the top of the camera image, ticks on the marker's centre lines (the
table size is measured between marker centres) and dashed cut lines. Every page carries a
100 mm scale bar to check the print and a short how-to. Bitmaps are saved 1-bit (lossless
CCITT in the PDF), never JPEG, so marker edges stay sharp.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

import cv2
import numpy as np
from PIL import Image, ImageDraw, ImageFont

from calibration.errors import CalibrationError
from calibration.layout import QUIET_ZONE_MM
from calibration.lens import BoardSpec
from calibration.markers import (
    DEFAULT_MARKER_MM,
    TABLE_DICTIONARY,
    TABLE_DICTIONARY_NAME,
    TableCorner,
)

MM_PER_INCH = 25.4
DEFAULT_DPI = 300
PAGE_MARGIN_MM = 12.0
LABEL_BAND_MM = 13.0
CUT_MARGIN_MM = 4.0


class Paper(StrEnum):
    """Supported paper sizes."""

    A4 = "a4"
    LETTER = "letter"

    @property
    def size_mm(self) -> tuple[float, float]:
        """(width, height) in millimetres, portrait."""
        return (210.0, 297.0) if self is Paper.A4 else (215.9, 279.4)


@dataclass(frozen=True, slots=True, kw_only=True)
class PlacedMarker:
    """Where a marker was drawn: page index and its square in page pixels (x, y, side)."""

    marker_id: int
    page: int
    x: int
    y: int
    side_px: int


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class Sheet:
    """Rendered pages (mode 'L', white background) at `dpi`, and what was placed on them."""

    pages: tuple[Image.Image, ...]
    dpi: int
    paper: Paper
    markers: tuple[PlacedMarker, ...] = ()
    board_box_px: tuple[int, int, int, int] | None = None  # page 0: x, y, w, h


def mm_to_px(mm: float, dpi: int) -> int:
    """Millimetres → whole pixels at `dpi`."""
    return round(mm / MM_PER_INCH * dpi)


def _font(size_px: int) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    return ImageFont.load_default(size=max(8, size_px))


def _blank_page(paper: Paper, dpi: int) -> Image.Image:
    w, h = paper.size_mm
    return Image.new("L", (mm_to_px(w, dpi), mm_to_px(h, dpi)), 255)


def _dashed_rect(draw: ImageDraw.ImageDraw, box: Sequence[int], dash: int, width: int) -> None:
    x0, y0, x1, y1 = box
    for a, b, fixed, horizontal in ((x0, x1, y0, True), (x0, x1, y1, True), (y0, y1, x0, False), (y0, y1, x1, False)):
        for s in range(a, b, 2 * dash):
            e = min(s + dash, b)
            if horizontal:
                draw.line([(s, fixed), (e, fixed)], fill=0, width=width)
            else:
                draw.line([(fixed, s), (fixed, e)], fill=0, width=width)


def _scale_bar(draw: ImageDraw.ImageDraw, x: int, y: int, dpi: int) -> int:
    """A 100 mm bar with 10 mm ticks; returns the y below it."""
    length = mm_to_px(100.0, dpi)
    thick = max(2, mm_to_px(0.6, dpi))
    tick = mm_to_px(3.0, dpi)
    draw.rectangle([x, y, x + length, y + thick], fill=0)
    for k in range(11):
        tx = x + round(k * length / 10)
        draw.rectangle([tx - thick // 2, y - tick, tx + thick // 2, y + thick], fill=0)
    font = _font(mm_to_px(3.2, dpi))
    draw.text((x + length + mm_to_px(3, dpi), y - tick), "100 mm: check with a ruler", fill=0, font=font)
    return y + thick + mm_to_px(3, dpi)


def _text_block(draw: ImageDraw.ImageDraw, x: int, y: int, lines: Sequence[str], size_mm: float, dpi: int) -> int:
    font = _font(mm_to_px(size_mm, dpi))
    step = mm_to_px(size_mm * 1.45, dpi)
    for line in lines:
        draw.text((x, y), line, fill=0, font=font)
        y += step
    return y


def _arrow_up(draw: ImageDraw.ImageDraw, cx: int, top: int, height: int) -> None:
    w = max(3, height // 3)
    shaft = max(2, height // 8)
    draw.polygon([(cx, top), (cx - w, top + w), (cx + w, top + w)], fill=0)
    draw.rectangle([cx - shaft // 2, top + w - 1, cx + shaft // 2, top + height], fill=0)


MARKER_HOWTO = (
    "Table markers for cardtrack: ArUco {dictionary}, ids 0-3, {marker:g} mm.",
    "1. Print at 100 % / actual size (no 'fit to page'); the bar below must measure 100 mm.",
    "2. Cut along the dashed lines; keep the white border around each marker.",
    "3. Lay one marker flat at each corner of the play area, arrow towards the top of the camera",
    "   image: 0 top-left, 1 top-right, 2 bottom-right, 3 bottom-left, as the camera sees them.",
    "4. Measure the distance between marker centres (the ticks) across and down, then run:",
    "   cardtrack calibrate table --source <camera image or video> --game <game> --players <n>",
    "       --table-size <across>x<down>",
)


def render_marker_sheet(
    paper: Paper = Paper.A4, *, marker_mm: float = DEFAULT_MARKER_MM, dpi: int = DEFAULT_DPI
) -> Sheet:
    """The four table markers at true size, with labels, centre ticks and cut lines."""
    if not 20.0 <= marker_mm <= 180.0:
        raise CalibrationError(f"--marker-mm must be between 20 and 180 mm, got {marker_mm:g}")
    if not 150 <= dpi <= 1200:
        raise CalibrationError(f"--dpi must be between 150 and 1200, got {dpi}")
    page_w, page_h = paper.size_mm
    tile = marker_mm + 2 * QUIET_ZONE_MM
    piece_w = tile + 2 * CUT_MARGIN_MM
    piece_h = tile + LABEL_BAND_MM + 2 * CUT_MARGIN_MM
    usable_w = page_w - 2 * PAGE_MARGIN_MM
    header_mm = 50.0
    cols = int(usable_w // piece_w)
    if cols < 1 or piece_h > page_h - 2 * PAGE_MARGIN_MM - header_mm:
        raise CalibrationError(
            f"markers of {marker_mm:g} mm do not fit on {paper} paper; use --marker-mm "
            f"{int(min(usable_w, page_h - 2 * PAGE_MARGIN_MM - header_mm - LABEL_BAND_MM) - 2 * (QUIET_ZONE_MM + CUT_MARGIN_MM))} or less"
        )
    rows = int((page_h - 2 * PAGE_MARGIN_MM - header_mm) // piece_h)
    per_page = cols * rows
    dictionary = cv2.aruco.getPredefinedDictionary(TABLE_DICTIONARY)
    side_px = round(marker_mm / MM_PER_INCH * dpi / 6) * 6
    pages: list[Image.Image] = []
    placed: list[PlacedMarker] = []
    ids = [int(c) for c in TableCorner]
    for start in range(0, len(ids), per_page):
        page = _blank_page(paper, dpi)
        draw = ImageDraw.Draw(page)
        y = _text_block(
            draw, mm_to_px(PAGE_MARGIN_MM, dpi), mm_to_px(PAGE_MARGIN_MM, dpi),
            [line.format(dictionary=TABLE_DICTIONARY_NAME, marker=marker_mm) for line in MARKER_HOWTO],
            2.9, dpi,
        )
        _scale_bar(draw, mm_to_px(PAGE_MARGIN_MM, dpi), y + mm_to_px(4, dpi), dpi)
        grid_w = cols * piece_w
        left = PAGE_MARGIN_MM + (usable_w - grid_w) / 2
        top = PAGE_MARGIN_MM + header_mm
        for slot, marker_id in enumerate(ids[start:start + per_page]):
            r, c = divmod(slot, cols)
            px0, py0 = left + c * piece_w, top + r * piece_h
            placed.append(_draw_tile(page, draw, dictionary, marker_id, px0, py0, marker_mm, side_px, dpi, len(pages)))
        pages.append(page)
    return Sheet(pages=tuple(pages), dpi=dpi, paper=paper, markers=tuple(placed))


def _draw_tile(
    page: Image.Image, draw: ImageDraw.ImageDraw, dictionary: cv2.aruco.Dictionary, marker_id: int,
    x_mm: float, y_mm: float, marker_mm: float, side_px: int, dpi: int, page_index: int,
) -> PlacedMarker:
    tile = marker_mm + 2 * QUIET_ZONE_MM
    cut = [mm_to_px(x_mm, dpi), mm_to_px(y_mm, dpi),
           mm_to_px(x_mm + tile + 2 * CUT_MARGIN_MM, dpi),
           mm_to_px(y_mm + tile + LABEL_BAND_MM + 2 * CUT_MARGIN_MM, dpi)]
    _dashed_rect(draw, cut, dash=mm_to_px(2.0, dpi), width=max(1, mm_to_px(0.25, dpi)))
    mx = mm_to_px(x_mm + CUT_MARGIN_MM + QUIET_ZONE_MM, dpi)
    my = mm_to_px(y_mm + CUT_MARGIN_MM + QUIET_ZONE_MM, dpi)
    marker = cv2.aruco.generateImageMarker(dictionary, marker_id, side_px)
    page.paste(Image.fromarray(marker), (mx, my))
    centre_x, centre_y = mx + side_px // 2, my + side_px // 2
    tick = mm_to_px(CUT_MARGIN_MM - 0.8, dpi)
    width = max(1, mm_to_px(0.35, dpi))
    # Centre-line ticks in the cut margin: outside the quiet zone, so they never touch it.
    tile_x0, tile_y0 = mm_to_px(x_mm + CUT_MARGIN_MM, dpi), mm_to_px(y_mm + CUT_MARGIN_MM, dpi)
    tile_x1, tile_y1 = mm_to_px(x_mm + CUT_MARGIN_MM + tile, dpi), mm_to_px(y_mm + CUT_MARGIN_MM + tile, dpi)
    draw.line([(centre_x, tile_y0 - tick), (centre_x, tile_y0)], fill=0, width=width)
    draw.line([(tile_x0 - tick, centre_y), (tile_x0, centre_y)], fill=0, width=width)
    draw.line([(tile_x1, centre_y), (tile_x1 + tick, centre_y)], fill=0, width=width)
    band_top = tile_y1 + mm_to_px(1.5, dpi)
    band_h = mm_to_px(LABEL_BAND_MM - 3.0, dpi)
    _arrow_up(draw, tile_x0 + mm_to_px(6, dpi), band_top, band_h)
    font = _font(mm_to_px(4.2, dpi))
    small = _font(mm_to_px(2.8, dpi))
    label = f"{marker_id}  {TableCorner(marker_id).label}"
    draw.text((tile_x0 + mm_to_px(12, dpi), band_top), label, fill=0, font=font)
    draw.text((tile_x0 + mm_to_px(12, dpi), band_top + mm_to_px(5.6, dpi)),
              "arrow: top of camera image", fill=0, font=small)
    draw.line([(centre_x, tile_y1), (centre_x, tile_y1 + mm_to_px(1.2, dpi))], fill=0, width=width)
    return PlacedMarker(marker_id=marker_id, page=page_index, x=mx, y=my, side_px=side_px)


BOARD_HOWTO = (
    "Lens board for cardtrack: ChArUco {sx}x{sy} squares of {square:g} mm, markers {marker:g} mm, {dictionary}.",
    "Print at 100 % / actual size and check the 100 mm bar; glue flat onto stiff card.",
    "Record 15-30 s of video (or 10-20 photos) at the resolution you will play at: hold the board",
    "flat and fully in view, tilt it up to about 45 degrees, and bring it into every part of the",
    "image, the corners too. Then: cardtrack calibrate lens --source <video or folder> --out lens.json",
)


def render_board_sheet(paper: Paper = Paper.A4, *, spec: BoardSpec | None = None, dpi: int = DEFAULT_DPI) -> Sheet:
    """The ChArUco board at true size on one page, with a scale bar and a how-to."""
    spec = spec or BoardSpec()
    if not 150 <= dpi <= 1200:
        raise CalibrationError(f"--dpi must be between 150 and 1200, got {dpi}")
    page_w, page_h = paper.size_mm
    bw, bh = spec.size_mm
    header_mm = 36.0
    if bw > page_w - 2 * PAGE_MARGIN_MM or bh > page_h - 2 * PAGE_MARGIN_MM - header_mm:
        raise CalibrationError(
            f"a {bw:g}×{bh:g} mm board does not fit on {paper} paper with margins; use fewer or smaller squares"
        )
    page = _blank_page(paper, dpi)
    draw = ImageDraw.Draw(page)
    y = _text_block(
        draw, mm_to_px(PAGE_MARGIN_MM, dpi), mm_to_px(PAGE_MARGIN_MM, dpi),
        [line.format(sx=spec.squares_x, sy=spec.squares_y, square=spec.square_mm,
                     marker=spec.marker_mm, dictionary=spec.dictionary) for line in BOARD_HOWTO],
        3.0, dpi,
    )
    _scale_bar(draw, mm_to_px(PAGE_MARGIN_MM, dpi), y + mm_to_px(4, dpi), dpi)
    square_px = mm_to_px(spec.square_mm, dpi)
    size = (spec.squares_x * square_px, spec.squares_y * square_px)
    board = spec.board().generateImage(size, marginSize=0, borderBits=1)
    x = mm_to_px(PAGE_MARGIN_MM + (page_w - 2 * PAGE_MARGIN_MM - bw) / 2, dpi)
    top = mm_to_px(PAGE_MARGIN_MM + header_mm + (page_h - 2 * PAGE_MARGIN_MM - header_mm - bh) / 2, dpi)
    page.paste(Image.fromarray(board), (x, top))
    return Sheet(pages=(page,), dpi=dpi, paper=paper, board_box_px=(x, top, size[0], size[1]))


def save_pdf(sheet: Sheet, path: Path) -> None:
    """Write the sheet's pages as one PDF, page size = paper size (1-bit, lossless)."""
    pages = [p.point(lambda v: 255 if v >= 128 else 0).convert("1") for p in sheet.pages]
    first, rest = pages[0], pages[1:]
    first.save(Path(path), "PDF", resolution=float(sheet.dpi), save_all=bool(rest), append_images=rest)


def pdf_page_sizes_mm(path: Path) -> list[tuple[float, float]]:
    """The MediaBox of each page of a PDF written by `save_pdf`, in millimetres."""
    data = Path(path).read_bytes()
    boxes = re.findall(rb"/MediaBox\s*\[\s*([-\d.]+)\s+([-\d.]+)\s+([-\d.]+)\s+([-\d.]+)\s*\]", data)
    if not boxes:
        raise CalibrationError(f"{path}: no page size (MediaBox) found; is it a PDF?")
    return [
        ((float(x1) - float(x0)) * MM_PER_INCH / 72.0, (float(y1) - float(y0)) * MM_PER_INCH / 72.0)
        for x0, y0, x1, y1 in boxes
    ]


def measure_dark_square(page: Image.Image, box: tuple[int, int, int, int]) -> tuple[int, int]:
    """Width and height in pixels of the dark pixels' bounding box inside `box` (x, y, w, h)
    of `page`: how a printed marker's true size is checked in the raster."""
    x, y, w, h = box
    arr = np.asarray(page.convert("L"))[y:y + h, x:x + w] < 128
    cols = np.flatnonzero(arr.any(axis=0))
    rows = np.flatnonzero(arr.any(axis=1))
    if cols.size == 0 or rows.size == 0:
        return 0, 0
    return int(cols[-1] - cols[0] + 1), int(rows[-1] - rows[0] + 1)
