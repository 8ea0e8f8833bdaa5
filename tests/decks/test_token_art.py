"""Token and die proxy art: true size, kinds told apart by colour and by shape, die faces with
the right pips, and the token pages of the mk. I print-and-play PDF."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest
from PIL import PdfParser

from engine.catalog import load_catalog
from vision.art.errors import ArtError
from vision.art.printsheet import compose_token_pages, plan_layout, px_mm, write_pdf
from vision.art.proxy import (
    DIE_EDGE_MM,
    TOKEN_DIAMETER_MM,
    render_die_face,
    render_die_net,
    render_token,
)

PPM = 300 / 25.4
KINDS = ("health", "hunger", "daylight")


def _dark_blobs(img: np.ndarray) -> int:
    dark = (cv2.cvtColor(img, cv2.COLOR_BGR2GRAY) < 80).astype(np.uint8)
    n, _ = cv2.connectedComponents(dark)
    return n - 1


def _ink(img: np.ndarray) -> np.ndarray:
    """The symbol in the middle of a disc: pixels far from the disc's own fill colour."""
    h, w = img.shape[:2]
    fill = img[h // 2, int(w * 0.12)].astype(np.int32)
    diff = np.abs(img.astype(np.int32) - fill).sum(axis=2) > 90
    yy, xx = np.mgrid[0:h, 0:w]
    inside = (xx - w / 2) ** 2 + (yy - h / 2) ** 2 < (0.38 * w) ** 2
    return diff & inside


def test_tokens_are_true_size_discs() -> None:
    for kind in KINDS:
        img = render_token(kind, PPM)
        assert img.shape[:2] == (round(TOKEN_DIAMETER_MM * PPM),) * 2
        assert tuple(img[0, 0]) == (255, 255, 255)  # outside the disc
        assert img[img.shape[0] // 2, img.shape[1] // 8].astype(int).sum() < 3 * 230  # the coloured disc


def test_token_kinds_differ_in_colour_and_in_shape() -> None:
    imgs = {k: render_token(k, PPM) for k in KINDS}
    hues = {}
    for k, img in imgs.items():
        h, w = img.shape[:2]
        hsv = cv2.cvtColor(img[h // 2 - 2 : h // 2 + 3, int(w * 0.1) : int(w * 0.14)], cv2.COLOR_BGR2HSV)
        hues[k] = float(np.median(hsv[..., 0]))
    assert hues["health"] < 8 or hues["health"] > 170  # red
    assert 8 <= hues["hunger"] <= 22  # brown / orange
    assert 22 < hues["daylight"] < 40  # yellow
    masks = {k: _ink(img) for k, img in imgs.items()}
    for a in KINDS:
        for b in KINDS:
            if a < b:
                inter = np.logical_and(masks[a], masks[b]).sum()
                union = np.logical_or(masks[a], masks[b]).sum()
                assert inter / union < 0.6, (a, b, inter / union)


@pytest.mark.parametrize("pips", range(1, 7))
def test_die_faces_show_their_pips(pips: int) -> None:
    img = render_die_face(pips, PPM)
    assert img.shape[:2] == (round(DIE_EDGE_MM * PPM),) * 2
    assert _dark_blobs(img) == pips


def test_die_face_rejects_seven() -> None:
    with pytest.raises(ArtError, match="1 to 6"):
        render_die_face(7, PPM)


def test_die_net_holds_all_six_faces() -> None:
    net = render_die_net(PPM)
    assert _dark_blobs(net) - 4 >= 21 - 1  # 21 pips (glue tab outlines may join a blob or add 4)
    h, w = net.shape[:2]
    assert px_mm(w, 300) > 4 * DIE_EDGE_MM and px_mm(h, 300) > 3 * DIE_EDGE_MM


def test_token_pages_hold_every_token_at_true_size() -> None:
    catalog = load_catalog("minecraft-mk1")
    layout = plan_layout(catalog.card_size_mm, "a4")
    pages = compose_token_pages(catalog, layout)
    pieces = [p for page in pages for p in page.pieces]
    counts = {t: sum(1 for k, _ in pieces if k == t) for t in catalog.tokens}
    assert counts == {t: tok.count for t, tok in catalog.tokens.items()}
    w, h = layout.page_px
    for tid, (x0, y0, x1, y1) in pieces:
        assert 0 < x0 < x1 < w and 0 < y0 < y1 < h
        if tid != "d6":
            assert abs(px_mm(x1 - x0, 300) - TOKEN_DIAMETER_MM) < 0.3
            assert abs(px_mm(y1 - y0, 300) - TOKEN_DIAMETER_MM) < 0.3
    # Pieces do not overlap.
    boxes = [b for _, b in pieces]
    for page in pages:
        bs = [b for _, b in page.pieces]
        for i, a in enumerate(bs):
            for b in bs[i + 1 :]:
                assert a[2] <= b[0] or b[2] <= a[0] or a[3] <= b[1] or b[3] <= a[1]
    assert boxes


def test_games_without_tokens_get_no_token_pages() -> None:
    catalog = load_catalog("minecraft-card-game")
    if catalog.tokens:
        pytest.skip("this catalog lists tokens")
    assert compose_token_pages(catalog, plan_layout(catalog.card_size_mm, "a4")) == []


def test_mk1_pdf_ends_with_the_token_pages(tmp_path: Path) -> None:
    catalog = load_catalog("minecraft-mk1")
    first = next(iter(catalog.cards))
    out = tmp_path / "mk1.pdf"
    # A one-card selection prints no tokens; the whole deck does (checked on the plan only,
    # to keep the test quick): the token pages follow the card pages.
    result = write_pdf(catalog, out, "a4", cards=[first], dpi=100)
    assert result.token_pages == 0
    layout = plan_layout(catalog.card_size_mm, "a4", 100)
    pages = compose_token_pages(catalog, layout, first_number=3)
    assert len(pages) >= 1
    parser = PdfParser.PdfParser(str(out))
    try:
        assert len(parser.pages) == 2
    finally:
        parser.close()
