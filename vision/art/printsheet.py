"""Print-and-play sheets: every physical card of a deck at true size on duplex pages.

`plan_layout` fits card slots on A4 or US Letter (upright or turned a quarter, whichever holds
more cards) with the grid centred left to right, so that a back page, mirrored left-right,
lands behind its front page when the printer flips on the long edge. `compose_pages` yields
page rasters (front sheet 1, back sheet 1, front sheet 2...) with cut marks in the margins and
a footer naming the game, the page and "print at 100% / actual size"; `write_pdf` saves them
page by page into one PDF at the raster's resolution, so every page is exactly the paper size.
A face whose shape does not match the slot (a landscape face in an upright slot) is turned a
quarter: fronts clockwise, backs anticlockwise, so both tops lie along the same card edge.
A catalog with tokens gets one-sided token pages after the cards (`compose_token_pages`): each
token as a true-size disc with a cut circle, as many as the catalog counts, and a die as a
printable net to cut, fold and glue.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Final

import cv2
import numpy as np
from PIL import Image, ImageDraw, ImageFont
from tqdm import tqdm

from engine.catalog import Catalog
from vision.art.errors import PrintLayoutError
from vision.art.pack import ImageSource
from vision.art.proxy import (
    MM_PER_INCH,
    render_die_net,
    render_face,
    render_token,
    safe_text,
    token_kind,
)

PRINT_DPI: Final = 300
SIDE_MARGIN_MM: Final = 5.0  # least margin left, right and top (most printers reach 4-5 mm)
FOOTER_MM: Final = 9.0  # band kept free at the bottom for the footer
CUT_GAP_MM: Final = 1.0  # cut marks start this far from the card edge
CUT_LEN_MM: Final = 4.0
CUT_WIDTH_MM: Final = 0.25
SCALE_BAR_MM: Final = 50.0
JPEG_QUALITY: Final = 92


class Paper(StrEnum):
    """Supported paper sizes."""

    A4 = "a4"
    LETTER = "letter"


PAPER_MM: Final = {Paper.A4: (210.0, 297.0), Paper.LETTER: (215.9, 279.4)}


class Side(StrEnum):
    FRONT = "front"
    BACK = "back"


def mm_px(mm: float, dpi: float) -> int:
    return round(mm * dpi / MM_PER_INCH)


def px_mm(px: float, dpi: float) -> float:
    return px * MM_PER_INCH / dpi


@dataclass(frozen=True, slots=True, kw_only=True)
class SheetLayout:
    """Where card slots lie on a page, in pixels at `dpi`."""

    paper: Paper
    dpi: int
    page_px: tuple[int, int]
    slot_mm: tuple[float, float]  # (width, height) of a slot as placed on the page
    slot_px: tuple[int, int]
    cols: int
    rows: int
    origin_px: tuple[int, int]  # top-left of the grid
    turned: bool  # slots are the card turned a quarter (landscape on the page)

    @property
    def per_page(self) -> int:
        return self.cols * self.rows

    def slot_box(self, index: int, side: Side = Side.FRONT) -> tuple[int, int, int, int]:
        """(x0, y0, x1, y1) px of slot `index`; on a back page the columns are mirrored."""
        if not 0 <= index < self.per_page:
            raise IndexError(f"slot {index} outside 0..{self.per_page - 1}")
        row, col = divmod(index, self.cols)
        if side is Side.BACK:
            col = self.cols - 1 - col
        x0 = self.origin_px[0] + col * self.slot_px[0]
        y0 = self.origin_px[1] + row * self.slot_px[1]
        return (x0, y0, x0 + self.slot_px[0], y0 + self.slot_px[1])

    @property
    def grid_px(self) -> tuple[int, int, int, int]:
        x0, y0 = self.origin_px
        return (x0, y0, x0 + self.cols * self.slot_px[0], y0 + self.rows * self.slot_px[1])


def plan_layout(card_size_mm: tuple[float, float], paper: Paper | str, dpi: int = PRINT_DPI) -> SheetLayout:
    """The slot grid holding the most cards of this size on the paper."""
    try:
        paper = Paper(paper)
    except ValueError:
        raise PrintLayoutError(
            f"paper must be one of {', '.join(p.value for p in Paper)}, got {paper!r}"
        ) from None
    page_w, page_h = PAPER_MM[paper]
    usable_w = page_w - 2 * SIDE_MARGIN_MM
    usable_h = page_h - SIDE_MARGIN_MM - FOOTER_MM
    w, h = min(card_size_mm), max(card_size_mm)
    best: tuple[int, bool, float, float] | None = None
    for turned, (sw, sh) in ((False, (w, h)), (True, (h, w))):
        count = int(usable_w // sw) * int(usable_h // sh)
        if count and (best is None or count > best[0]):
            best = (count, turned, sw, sh)
    if best is None:
        raise PrintLayoutError(
            f"a {w:g}×{h:g} mm card does not fit on {paper.value} paper with "
            f"{SIDE_MARGIN_MM:g} mm margins"
        )
    _, turned, sw, sh = best
    cols, rows = int(usable_w // sw), int(usable_h // sh)
    slot_px = (mm_px(sw, dpi), mm_px(sh, dpi))
    page_px = (mm_px(page_w, dpi), mm_px(page_h, dpi))
    grid_w, grid_h = cols * slot_px[0], rows * slot_px[1]
    top_min = mm_px(SIDE_MARGIN_MM, dpi)
    free_h = mm_px(page_h - FOOTER_MM, dpi) - top_min - grid_h
    origin = ((page_px[0] - grid_w) // 2, top_min + free_h // 2)
    return SheetLayout(
        paper=paper,
        dpi=dpi,
        page_px=page_px,
        slot_mm=(sw, sh),
        slot_px=slot_px,
        cols=cols,
        rows=rows,
        origin_px=origin,
        turned=turned,
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class Page:
    """One page raster (RGB) and what is on it."""

    image: Image.Image
    side: Side
    sheet: int  # 1-based
    number: int  # 1-based page number in the document
    cards: tuple[str, ...]  # card ids in slot order (front order)
    boxes: tuple[tuple[int, int, int, int], ...]  # the slot box of each card on this page


def physical_cards(catalog: Catalog, cards: Sequence[str] | None = None) -> list[str]:
    """Card ids of every physical card (copies repeated), or the given selection checked."""
    if cards is None:
        return list(catalog.deck())
    for cid in cards:
        catalog.card(cid)  # a clear error for an unknown id
    return list(cards)


def _fit_to_slot(image: np.ndarray, slot_px: tuple[int, int], side: Side) -> np.ndarray:
    """Turn a face a quarter when its shape does not match the slot, then size it exactly."""
    h, w = image.shape[:2]
    slot_w, slot_h = slot_px
    if (w > h) != (slot_w > slot_h) and w != h:
        rot = cv2.ROTATE_90_CLOCKWISE if side is Side.FRONT else cv2.ROTATE_90_COUNTERCLOCKWISE
        image = cv2.rotate(image, rot)
        h, w = image.shape[:2]
    if (w, h) != (slot_w, slot_h):
        interp = cv2.INTER_AREA if w > slot_w else cv2.INTER_CUBIC
        image = cv2.resize(image, (slot_w, slot_h), interpolation=interp)
    return image


def _cut_marks(draw: ImageDraw.ImageDraw, layout: SheetLayout) -> None:
    dpi = layout.dpi
    gap, length = mm_px(CUT_GAP_MM, dpi), mm_px(CUT_LEN_MM, dpi)
    width = max(1, mm_px(CUT_WIDTH_MM, dpi))
    gx0, gy0, gx1, gy1 = layout.grid_px
    top_room = gy0 - gap
    # Marks below the grid stop short of the footer line.
    bottom_room = layout.page_px[1] - mm_px(FOOTER_MM - 2.0, dpi) - (gy1 + gap)
    xs = [gx0 + c * layout.slot_px[0] for c in range(layout.cols + 1)]
    ys = [gy0 + r * layout.slot_px[1] for r in range(layout.rows + 1)]
    black = (0, 0, 0)
    for x in xs:
        x = min(x, layout.page_px[0] - 1)
        up = min(length, max(0, top_room))
        down = min(length, max(0, bottom_room))
        if up:
            draw.rectangle((x - width // 2, gy0 - gap - up, x - width // 2 + width - 1, gy0 - gap), fill=black)
        if down:
            draw.rectangle((x - width // 2, gy1 + gap, x - width // 2 + width - 1, gy1 + gap + down), fill=black)
    side_room = min(gx0 - gap, layout.page_px[0] - gx1 - gap)
    across = min(length, max(0, side_room))
    for y in ys:
        y = min(y, layout.page_px[1] - 1)
        if across:
            draw.rectangle((gx0 - gap - across, y - width // 2, gx0 - gap, y - width // 2 + width - 1), fill=black)
            draw.rectangle((gx1 + gap, y - width // 2, gx1 + gap + across, y - width // 2 + width - 1), fill=black)


def _footer(draw: ImageDraw.ImageDraw, layout: SheetLayout, text: str) -> None:
    dpi = layout.dpi
    _page_w, page_h = layout.page_px
    y = page_h - mm_px(FOOTER_MM / 2 + 0.5, dpi)
    x0 = layout.grid_px[0]
    x1 = layout.grid_px[2]
    # A 50 mm scale bar on the right: measure it to check the print was not scaled.
    bar = mm_px(SCALE_BAR_MM, dpi)
    tick = mm_px(1.2, dpi)
    line = max(1, mm_px(0.3, dpi))
    bx1 = x1
    bx0 = bx1 - bar
    black = (0, 0, 0)
    draw.rectangle((bx0, y - line // 2, bx1, y - line // 2 + line - 1), fill=black)
    for i in range(6):
        tx = bx0 + round(i * bar / 5)
        tx = min(tx, bx1 - line)
        draw.rectangle((tx, y - tick, tx + line - 1, y), fill=black)
    size = mm_px(2.4, dpi)
    font = ImageFont.load_default(size=size)
    label = f"{SCALE_BAR_MM:g} mm"
    draw.text((bx0 - mm_px(1.5, dpi), y), label, font=font, fill=black, anchor="rm")
    room = bx0 - mm_px(3.5, dpi) - int(draw.textlength(label, font=font)) - x0
    text = safe_text(text)
    while size > 8 and draw.textlength(text, font=font) > room:
        size -= 1
        font = ImageFont.load_default(size=size)
    draw.text((x0, y), text, font=font, fill=black, anchor="lm")


def compose_pages(
    catalog: Catalog,
    layout: SheetLayout,
    image_for: ImageSource,
    cards: Sequence[str] | None = None,
) -> Iterator[Page]:
    """Front and back page rasters, sheet by sheet (front 1, back 1, front 2, back 2...)."""
    deck = physical_cards(catalog, cards)
    per = layout.per_page
    sheets = max(1, -(-len(deck) // per))
    total_pages = 2 * sheets
    for s in range(sheets):
        chunk = deck[s * per : (s + 1) * per]
        for side in (Side.FRONT, Side.BACK):
            page = Image.new("RGB", layout.page_px, (255, 255, 255))
            boxes = []
            for i, cid in enumerate(chunk):
                card = catalog.card(cid)
                face = card.front if side is Side.FRONT else card.back
                img = _fit_to_slot(image_for(face), layout.slot_px, side)
                box = layout.slot_box(i, side)
                page.paste(Image.fromarray(np.ascontiguousarray(img[:, :, ::-1])), box[:2])
                boxes.append(box)
            draw = ImageDraw.Draw(page)
            _cut_marks(draw, layout)
            number = 2 * s + (1 if side is Side.FRONT else 2)
            footer = (
                f"{catalog.game} · sheet {s + 1}/{sheets} {side.value}s · page {number}/{total_pages}"
                " · print at 100% / actual size · duplex, flip on long edge"
            )
            _footer(draw, layout, footer)
            yield Page(
                image=page,
                side=side,
                sheet=s + 1,
                number=number,
                cards=tuple(chunk),
                boxes=tuple(boxes),
            )


TOKEN_GAP_MM: Final = 3.0


@dataclass(frozen=True, slots=True, kw_only=True)
class TokenPage:
    """One page of tokens: its raster and each piece's (token id, pixel box)."""

    image: Image.Image
    pieces: tuple[tuple[str, tuple[int, int, int, int]], ...]


def compose_token_pages(catalog: Catalog, layout: SheetLayout, first_number: int = 1,
                        total_pages: int | None = None) -> list[TokenPage]:
    """Pages of the catalog's tokens at true size: discs in rows (the catalog's count of each)
    then every die as a net. Empty when the catalog lists no tokens."""
    if not catalog.tokens:
        return []
    dpi = layout.dpi
    ppm = dpi / MM_PER_INCH
    w, h = layout.page_px
    x_min, y_min = mm_px(SIDE_MARGIN_MM, dpi), mm_px(SIDE_MARGIN_MM, dpi)
    x_max, y_max = w - x_min, h - mm_px(FOOTER_MM + 1.0, dpi)
    pieces: list[tuple[str, np.ndarray]] = []
    for tid, token in catalog.tokens.items():
        if token_kind(catalog, tid) == "die":
            pieces += [(tid, render_die_net(ppm))] * token.count
        else:
            pieces += [(tid, render_token(tid, ppm))] * token.count
    gap = mm_px(TOKEN_GAP_MM, dpi)
    pages: list[list[tuple[str, tuple[int, int, int, int], np.ndarray]]] = [[]]
    x, y, row_h = x_min, y_min, 0
    for tid, img in pieces:
        ph, pw = img.shape[:2]
        if x + pw > x_max:
            x, y, row_h = x_min, y + row_h + gap, 0
        if y + ph > y_max:
            pages.append([])
            x, y, row_h = x_min, y_min, 0
        pages[-1].append((tid, (x, y, x + pw, y + ph), img))
        x += pw + gap
        row_h = max(row_h, ph)
    total = total_pages if total_pages is not None else first_number - 1 + len(pages)
    out = []
    for k, items in enumerate(pages):
        page = Image.new("RGB", layout.page_px, (255, 255, 255))
        for _tid, box, img in items:
            page.paste(Image.fromarray(np.ascontiguousarray(img[:, :, ::-1])), box[:2])
        draw = ImageDraw.Draw(page)
        for tid, box, _img in items:
            if token_kind(catalog, tid) == "disc":
                draw.ellipse(box, outline=(120, 120, 120), width=max(1, mm_px(0.2, dpi)))
        _footer(draw, layout, f"{catalog.game} · tokens {k + 1}/{len(pages)} · page "
                f"{first_number + k}/{total} · one-sided · print at 100% / actual size")
        out.append(TokenPage(image=page, pieces=tuple((t, b) for t, b, _ in items)))
    return out


@dataclass(frozen=True, slots=True, kw_only=True)
class PrintResult:
    """What `write_pdf` produced."""

    path: Path
    pages: int
    sheets: int
    cards: int
    per_page: int
    paper: Paper
    token_pages: int = 0


def proxy_images(catalog: Catalog, dpi: int = PRINT_DPI) -> ImageSource:
    """A face id -> proxy image function that renders each face once."""
    cache: dict[str, np.ndarray] = {}

    def image_for(face_id: str) -> np.ndarray:
        if face_id not in cache:
            cache[face_id] = render_face(catalog, face_id, dpi)
        return cache[face_id]

    return image_for


def write_pdf(
    catalog: Catalog,
    out: str | Path,
    paper: Paper | str = Paper.A4,
    *,
    image_for: ImageSource | None = None,
    cards: Sequence[str] | None = None,
    dpi: int = PRINT_DPI,
    progress: bool = False,
) -> PrintResult:
    """Lay out the deck and write a multi-page PDF, one page raster at a time."""
    out = Path(out)
    if out.suffix.lower() != ".pdf":
        raise PrintLayoutError(f"{out}: the output file must end in .pdf")
    if not out.parent.is_dir():
        raise PrintLayoutError(f"{out}: folder {out.parent} does not exist; create it first")
    layout = plan_layout(catalog.card_size_mm, paper, dpi)
    source = image_for or proxy_images(catalog, dpi)
    deck = physical_cards(catalog, cards)
    sheets = max(1, -(-len(deck) // layout.per_page))
    tmp = out.with_name(f".{out.name}.part")
    try:
        bar = tqdm(total=2 * sheets, desc=f"printing {catalog.game}", unit="page", disable=not progress)
        for page in compose_pages(catalog, layout, source, deck):
            page.image.save(
                tmp, "PDF", resolution=float(dpi), append=page.number > 1, quality=JPEG_QUALITY,
                title=f"{catalog.name} print-and-play", creator="cardtrack",
            )  # fmt: skip
            bar.update(1)
        bar.close()
        token_pages = compose_token_pages(catalog, layout, first_number=2 * sheets + 1) if cards is None else []
        for tp in token_pages:
            tp.image.save(tmp, "PDF", resolution=float(dpi), append=True, quality=JPEG_QUALITY)
        os.replace(tmp, out)
    finally:
        if tmp.exists():
            tmp.unlink()
    return PrintResult(
        path=out,
        pages=2 * sheets,
        sheets=sheets,
        cards=len(deck),
        per_page=layout.per_page,
        paper=layout.paper,
        token_pages=len(token_pages),
    )
