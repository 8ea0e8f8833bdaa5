"""Print-and-play PDF: layouts, true-size cards on the page raster, duplex mirroring, page
sizes in the written PDF, and `cardtrack deck print`.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from PIL import PdfParser

from cardtrack.cli import main
from engine.catalog import available_games, load_catalog
from vision.art.errors import PrintLayoutError
from vision.art.printsheet import (
    Paper,
    Side,
    compose_pages,
    plan_layout,
    proxy_images,
    px_mm,
    write_pdf,
)
from vision.art.proxy import render_face

MM_PER_PT = 25.4 / 72
PAPERS = {"a4": (210.0, 297.0), "letter": (215.9, 279.4)}


def media_boxes(pdf: Path) -> list[tuple[float, float]]:
    """(width, height) mm of the MediaBox of every page, read through the PDF's page tree."""
    parser = PdfParser.PdfParser(str(pdf))
    try:
        boxes = [parser.read_indirect(ref).MediaBox for ref in parser.pages]
    finally:
        parser.close()
    return [((x1 - x0) * MM_PER_PT, (y1 - y0) * MM_PER_PT) for x0, y0, x1, y1 in boxes]


def ink_box(page: np.ndarray, region: tuple[int, int, int, int]) -> tuple[int, int, int, int]:
    """Bounding box (x0, y0, x1, y1), exclusive, of the non-white pixels inside `region`."""
    x0, y0, x1, y1 = region
    ink = np.any(page[y0:y1, x0:x1] < 245, axis=2)
    ys, xs = np.nonzero(ink)
    return (x0 + int(xs.min()), y0 + int(ys.min()), x0 + int(xs.max()) + 1, y0 + int(ys.max()) + 1)


@pytest.mark.parametrize(("paper", "per_page"), [("a4", 9), ("letter", 9)])
def test_mattel_layout_fits_nine_true_size_cards(paper: str, per_page: int) -> None:
    layout = plan_layout((63, 88), paper)
    assert layout.per_page == per_page and not layout.turned
    w_mm, h_mm = PAPERS[paper]
    assert abs(px_mm(layout.page_px[0], 300) - w_mm) < 0.5 and abs(px_mm(layout.page_px[1], 300) - h_mm) < 0.5
    for i in range(layout.per_page):
        for side in Side:
            x0, y0, x1, y1 = layout.slot_box(i, side)
            assert abs(px_mm(x1 - x0, 300) - 63) < 0.5 and abs(px_mm(y1 - y0, 300) - 88) < 0.5
            assert x0 > 0 and x1 < layout.page_px[0] and y0 > 0 and y1 < layout.page_px[1]


def test_taller_cards_on_letter_lie_turned() -> None:
    layout = plan_layout((59, 91), Paper.LETTER)
    assert layout.turned and (layout.cols, layout.rows) == (2, 4)
    assert plan_layout((59, 91), Paper.A4).per_page == 9


def test_impossible_layouts_are_refused() -> None:
    with pytest.raises(PrintLayoutError, match="does not fit on a4"):
        plan_layout((250, 320), "a4")
    with pytest.raises(PrintLayoutError, match="paper must be one of a4, letter"):
        plan_layout((63, 88), "a3")


def test_cards_on_the_page_raster_are_true_size_and_backs_mirrored() -> None:
    catalog = load_catalog("minecraft-card-game")
    layout = plan_layout(catalog.card_size_mm, "a4")
    front, back = list(compose_pages(catalog, layout, proxy_images(catalog), cards=["diamond-pickaxe"]))
    gx0, gy0, gx1, gy1 = layout.grid_px
    grid = (gx0 - 2, gy0 - 2, gx1 + 2, gy1 + 2)  # cut marks start 1 mm outside the grid
    fr = np.asarray(front.image)
    x0, y0, x1, y1 = ink_box(fr, grid)
    assert abs(px_mm(x1 - x0, 300) - 63) < 0.5 and abs(px_mm(y1 - y0, 300) - 88) < 0.5
    assert (x0, y0) == layout.slot_box(0)[:2]  # top-left slot on the front
    bk = np.asarray(back.image)
    bx0, by0, bx1, by1 = ink_box(bk, grid)
    assert abs(px_mm(bx1 - bx0, 300) - 63) < 0.5 and abs(px_mm(by1 - by0, 300) - 88) < 0.5
    assert (bx0, by0) == layout.slot_box(2)[:2] == layout.slot_box(0, Side.BACK)[:2]
    # Mirrored about the page's vertical centre line: it lands behind the front.
    assert abs((x0 + x1) / 2 + (bx0 + bx1) / 2 - layout.page_px[0]) <= 1
    tool = render_face(catalog, "diamond-pickaxe/tool", 300)
    assert np.array_equal(bk[by0:by1, bx0:bx1], tool[:, :, ::-1])
    assert (front.side, back.side, front.number, back.number) == (Side.FRONT, Side.BACK, 1, 2)


def test_landscape_faces_turn_into_upright_slots() -> None:
    if "minecraft-explorers" not in available_games():
        pytest.skip("no Explorers catalog")
    catalog = load_catalog("minecraft-explorers")
    card = next(c for c in catalog.cards.values() if catalog.faces[c.front].orientation == "landscape")
    layout = plan_layout(catalog.card_size_mm, "a4", dpi=100)
    assert not layout.turned
    front, _ = list(compose_pages(catalog, layout, proxy_images(catalog, 100), cards=[card.id]))
    x0, y0, x1, y1 = layout.slot_box(0)
    face = render_face(catalog, card.front, 100)
    turned = np.rot90(face, k=-1)  # clockwise
    assert np.array_equal(np.asarray(front.image)[y0:y1, x0:x1], turned[:, :, ::-1])


@pytest.mark.parametrize("paper", ["a4", "letter"])
def test_pdf_pages_are_the_paper_size(tmp_path: Path, paper: str) -> None:
    catalog = load_catalog("minecraft-card-game")
    cards = list(catalog.deck())[:11]  # two sheets
    out = tmp_path / f"deck-{paper}.pdf"
    result = write_pdf(catalog, out, paper, cards=cards)
    assert (result.pages, result.sheets, result.cards, result.per_page) == (4, 2, 11, 9)
    boxes = media_boxes(out)
    assert len(boxes) == 4
    for w, h in boxes:
        assert abs(w - PAPERS[paper][0]) < 0.5 and abs(h - PAPERS[paper][1]) < 0.5
    assert not list(tmp_path.glob(".*part"))


def test_bad_output_paths(tmp_path: Path) -> None:
    catalog = load_catalog("minecraft-card-game")
    with pytest.raises(PrintLayoutError, match=r"must end in \.pdf"):
        write_pdf(catalog, tmp_path / "deck.png", cards=["tnt"])
    with pytest.raises(PrintLayoutError, match="does not exist; create it first"):
        write_pdf(catalog, tmp_path / "no" / "deck.pdf", cards=["tnt"])
    with pytest.raises(ValueError, match="unknown card 'tnt2'"):
        write_pdf(catalog, tmp_path / "deck.pdf", cards=["tnt2"])


def test_deck_print_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "birds.pdf"
    code = main(["deck", "print", "--game", "angry-birds-power-cards", "--paper", "letter", "--out", str(out), "-q"])
    assert code == 0
    catalog = load_catalog("angry-birds-power-cards")
    total = catalog.total
    sheets = -(-total // plan_layout(catalog.card_size_mm, "letter").per_page)
    assert len(media_boxes(out)) == 2 * sheets
    printed = capsys.readouterr().out
    assert f"{total} cards on {sheets} sheets" in printed and "actual size" in printed
