"""Printed sheets are true to size: PDF page = paper size, markers and board squares measured
in the raster before saving are within half a millimetre, and they decode as intended."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest

from calibration.errors import CalibrationError
from calibration.lens import BoardSpec
from calibration.markers import detect_markers
from calibration.sheets import (
    MM_PER_INCH,
    Paper,
    measure_dark_square,
    pdf_page_sizes_mm,
    render_board_sheet,
    render_marker_sheet,
    save_pdf,
)

TOLERANCE_MM = 0.5


@pytest.mark.parametrize("paper", list(Paper))
def test_marker_sheet_is_true_size(paper: Paper, tmp_path: Path) -> None:
    dpi = 200
    sheet = render_marker_sheet(paper, marker_mm=60.0, dpi=dpi)
    assert len(sheet.pages) == 1
    assert sorted(m.marker_id for m in sheet.markers) == [0, 1, 2, 3]
    for placed in sheet.markers:
        pad = placed.side_px // 10
        box = (placed.x - pad, placed.y - pad, placed.side_px + 2 * pad, placed.side_px + 2 * pad)
        w_px, h_px = measure_dark_square(sheet.pages[placed.page], box)
        for size_px in (w_px, h_px):
            assert abs(size_px / dpi * MM_PER_INCH - 60.0) <= TOLERANCE_MM
    path = tmp_path / "markers.pdf"
    save_pdf(sheet, path)
    assert path.read_bytes().startswith(b"%PDF")
    (w, h), = pdf_page_sizes_mm(path)
    assert abs(w - paper.size_mm[0]) <= TOLERANCE_MM and abs(h - paper.size_mm[1]) <= TOLERANCE_MM


def test_printed_markers_decode_upright_with_their_ids() -> None:
    sheet = render_marker_sheet(Paper.A4, dpi=150)
    page = np.asarray(sheet.pages[0])
    found = detect_markers(page, refine=False)
    assert sorted(found.ids.tolist()) == [0, 1, 2, 3]
    for marker_id, corners in found.by_id().items():
        placed = next(m for m in sheet.markers if m.marker_id == marker_id)
        # Detection order starts at the printed top-left corner: the arrow points up.
        assert np.allclose(corners[0], (placed.x - 0.5, placed.y - 0.5), atol=1.5)
        assert corners[1][0] > corners[0][0] and corners[3][1] > corners[0][1]


def test_big_markers_spread_over_several_pages(tmp_path: Path) -> None:
    sheet = render_marker_sheet(Paper.LETTER, marker_mm=120.0, dpi=150)
    assert len(sheet.pages) == 4
    assert [m.page for m in sheet.markers] == [0, 1, 2, 3]
    path = tmp_path / "big.pdf"
    save_pdf(sheet, path)
    sizes = pdf_page_sizes_mm(path)
    assert len(sizes) == 4
    assert all(abs(w - 215.9) <= TOLERANCE_MM and abs(h - 279.4) <= TOLERANCE_MM for w, h in sizes)
    with pytest.raises(CalibrationError, match="do not fit on a4 paper"):
        render_marker_sheet(Paper.A4, marker_mm=179.0)
    with pytest.raises(CalibrationError, match="--marker-mm must be between"):
        render_marker_sheet(Paper.A4, marker_mm=5.0)


@pytest.mark.parametrize("paper", list(Paper))
def test_board_sheet_is_true_size_and_detectable(paper: Paper, tmp_path: Path) -> None:
    dpi = 200
    spec = BoardSpec()
    sheet = render_board_sheet(paper, spec=spec, dpi=dpi)
    assert sheet.board_box_px is not None
    x, y, w, h = sheet.board_box_px
    assert abs(w / dpi * MM_PER_INCH - spec.size_mm[0]) <= TOLERANCE_MM
    assert abs(h / dpi * MM_PER_INCH - spec.size_mm[1]) <= TOLERANCE_MM
    # Its outer squares are black and reach the box edges: the raster holds the true board.
    dark_w, dark_h = measure_dark_square(sheet.pages[0], (x - 5, y - 5, w + 10, h + 10))
    assert abs(dark_w - w) <= 1 and abs(dark_h - h) <= 1
    gray = np.asarray(sheet.pages[0])
    small = cv2.resize(gray, None, fx=0.5, fy=0.5, interpolation=cv2.INTER_AREA)
    detector = cv2.aruco.CharucoDetector(spec.board())
    _corners, ids, _, _ = detector.detectBoard(small)
    assert ids is not None and len(ids) == (spec.squares_x - 1) * (spec.squares_y - 1)
    path = tmp_path / "board.pdf"
    save_pdf(sheet, path)
    (pw, ph), = pdf_page_sizes_mm(path)
    assert abs(pw - paper.size_mm[0]) <= TOLERANCE_MM and abs(ph - paper.size_mm[1]) <= TOLERANCE_MM
