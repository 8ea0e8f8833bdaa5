"""Random card designs, so the card finder learns "a card" rather than one publisher's deck.

Each design is drawn from a seed: a background (flat, gradient or photo-like noise), often a
border frame, a title bar of text or text-like glyph blocks, a picture made of random blobs
and shapes, corner indices, and a body of text lines; some designs are card backs (a
symmetric repeated pattern with an emblem). Sizes vary among the common formats 59×91,
63×88 and 57×89 mm, in portrait or landscape.

A second style, *full bleed* (`random_design(..., full_bleed=True)`), prints the picture to
the card's edge inside a thin border, most often black, with a few solid labels over it, as
many commercial decks do: a card whose edge is a dark line on a dark picture, which the pale
printed style rarely shows. It draws from its own random stream, so the printed designs of a
family stay what they were.
"""

from __future__ import annotations

import string
from dataclasses import dataclass

import cv2
import numpy as np

from vision.synth.noise import Array, colorize, fbm, hsv_color, normalise, to_u8, value_noise

CARD_FORMATS_MM: tuple[tuple[float, float], ...] = ((59.0, 91.0), (63.0, 88.0), (57.0, 89.0))
DESIGN_PX_PER_MM = 6.0
_FONTS = (
    cv2.FONT_HERSHEY_SIMPLEX,
    cv2.FONT_HERSHEY_DUPLEX,
    cv2.FONT_HERSHEY_COMPLEX,
    cv2.FONT_HERSHEY_TRIPLEX,
    cv2.FONT_HERSHEY_COMPLEX_SMALL,
    cv2.FONT_HERSHEY_SCRIPT_SIMPLEX,
)


@dataclass(frozen=True, slots=True, kw_only=True)
class CardDesign:
    """One generated face: its id, BGR image and printed size (width, height) in mm."""

    face_id: str
    image: Array
    size_mm: tuple[float, float]


def random_card_size(rng: np.random.Generator) -> tuple[float, float]:
    """A common card format, landscape one time in four."""
    w, h = CARD_FORMATS_MM[int(rng.integers(len(CARD_FORMATS_MM)))]
    return (h, w) if rng.random() < 0.25 else (w, h)


def _contrast(c: Array) -> Array:
    """A colour that reads on `c` (dark on light, light on dark)."""
    lum = float(0.114 * c[0] + 0.587 * c[1] + 0.299 * c[2])
    return np.array([20, 20, 20], np.float32) if lum > 128 else np.array([240, 240, 240], np.float32)


def _background(rng: np.random.Generator, h: int, w: int) -> Array:
    c0 = hsv_color(rng, s=(0.0, 1.0), v=(0.15, 1.0))
    kind = rng.integers(4)
    if kind == 0:
        img = np.empty((h, w, 3), np.float32)
        img[:] = c0
        return img
    c1 = hsv_color(rng, s=(0.0, 1.0), v=(0.15, 1.0))
    if kind == 1:
        ang = rng.uniform(0, 2 * np.pi)
        ys, xs = np.mgrid[0:h, 0:w].astype(np.float32)
        t = normalise(xs * np.cos(ang) + ys * np.sin(ang))
        return colorize(t, c0, c1)
    if kind == 2:  # photo-like: fractal noise in two colours
        t = normalise(fbm(rng, (h, w), cell=rng.uniform(20, 120), octaves=5))
        return colorize(t, c0, c1)
    ys, xs = np.mgrid[0:h, 0:w].astype(np.float32)
    r = np.hypot(xs - w * rng.uniform(0.2, 0.8), ys - h * rng.uniform(0.2, 0.8))
    return colorize(normalise(r), c0, c1)


def _blob_picture(rng: np.random.Generator, h: int, w: int) -> Array:
    """A picture-like patch: layered thresholded noise blobs and shapes."""
    img = _background(rng, h, w)
    for _ in range(int(rng.integers(2, 5))):
        field = fbm(rng, (h, w), cell=rng.uniform(10, 60), octaves=3)
        mask = (field > rng.uniform(-0.1, 0.35)).astype(np.float32)
        mask = cv2.GaussianBlur(mask, (0, 0), rng.uniform(0.5, 2.0))
        col = hsv_color(rng, s=(0.2, 1.0), v=(0.1, 1.0))
        img = img * (1 - mask[..., None]) + col * mask[..., None]
    for _ in range(int(rng.integers(0, 6))):
        col = hsv_color(rng, s=(0.0, 1.0), v=(0.0, 1.0)).tolist()
        cx, cy = int(rng.uniform(0, w)), int(rng.uniform(0, h))
        r = int(rng.uniform(0.05, 0.3) * min(h, w)) + 1
        shape = rng.integers(3)
        if shape == 0:
            cv2.circle(img, (cx, cy), r, col, -1, cv2.LINE_AA)
        elif shape == 1:
            n = int(rng.integers(3, 9))
            ang = rng.uniform(0, 2 * np.pi) + np.linspace(0, 2 * np.pi, n, endpoint=False)
            rr = r * (rng.uniform(0.5, 1.0, n) if rng.random() < 0.5 else 1.0)
            pts = np.stack([cx + rr * np.cos(ang), cy + rr * np.sin(ang)], 1).astype(np.int32)
            cv2.fillPoly(img, [pts], col, cv2.LINE_AA)
        else:
            x2, y2 = cx + int(rng.uniform(-2, 2) * r), cy + int(rng.uniform(-2, 2) * r)
            cv2.line(img, (cx, cy), (x2, y2), col, max(1, r // 4), cv2.LINE_AA)
    return img


def _glyph_line(rng: np.random.Generator, img: Array, x0: int, y0: int, x1: int,
                height: int, color: list[float]) -> None:
    """A line of text-like blocks (words of varied width)."""
    x = x0
    while x < x1:
        word = int(rng.uniform(1.5, 6.0) * height)
        if x + word > x1:
            word = x1 - x
        if word <= 1:
            break
        top = y0 + int(rng.uniform(0.0, 0.25) * height)
        cv2.rectangle(img, (x, top), (x + word, y0 + height), color, -1)
        x += word + max(2, int(0.6 * height))


def _text(rng: np.random.Generator, img: Array, x0: int, y0: int, x1: int, height: int,
          color: list[float]) -> None:
    """A line of real characters in a Hershey font, fitted to the width."""
    font = _FONTS[int(rng.integers(len(_FONTS)))]
    n = int(rng.integers(3, 14))
    chars = string.ascii_letters + string.digits + "  "
    text = "".join(chars[int(i)] for i in rng.integers(0, len(chars), n)).strip() or "Card"
    scale = cv2.getFontScaleFromHeight(font, max(4, height))
    (tw, _), _ = cv2.getTextSize(text, font, scale, 1)
    if tw > x1 - x0:
        scale *= (x1 - x0) / tw
    thick = max(1, int(scale * rng.uniform(1.0, 2.5)))
    cv2.putText(img, text, (x0, y0 + height), font, scale, color, thick, cv2.LINE_AA)


def _front(rng: np.random.Generator, h: int, w: int) -> Array:
    img = to_u8(_background(rng, h, w))
    s = min(h, w)
    m = 0
    if rng.random() < 0.75:  # a printed frame
        m = int(rng.uniform(0.03, 0.09) * s)
        frame = to_u8(hsv_color(rng, s=(0.0, 0.9), v=(0.0, 1.0)))
        if rng.random() < 0.4:
            frame = to_u8(np.array([245, 245, 245], np.float32) * rng.uniform(0.85, 1.0))
        img[:m] = frame
        img[-m:] = frame
        img[:, :m] = frame
        img[:, -m:] = frame
    inner = (m, m, w - m, h - m)
    ink = _contrast(img[h // 2, w // 2].astype(np.float32)).tolist()
    # Title bar.
    tb = int(rng.uniform(0.07, 0.13) * h)
    y = inner[1] + int(0.02 * h)
    if rng.random() < 0.8:
        bar = hsv_color(rng, s=(0.0, 1.0), v=(0.2, 1.0))
        cv2.rectangle(img, (inner[0] + 3, y), (inner[2] - 3, y + tb), bar.tolist(), -1)
        tink = _contrast(bar).tolist()
        writer = _text if rng.random() < 0.6 else _glyph_line
        writer(rng, img, inner[0] + tb // 3, y + tb // 5, inner[2] - tb // 3, int(tb * 0.6), tink)
        y += tb
    # Picture.
    if rng.random() < 0.9:
        ph = int(rng.uniform(0.3, 0.55) * h)
        px0, px1 = inner[0] + int(0.04 * w), inner[2] - int(0.04 * w)
        py0 = y + int(0.02 * h)
        py1 = min(inner[3] - 4, py0 + ph)
        if px1 - px0 > 8 and py1 - py0 > 8:
            pic = _blob_picture(rng, py1 - py0, px1 - px0)
            img[py0:py1, px0:px1] = to_u8(pic)
            if rng.random() < 0.6:
                cv2.rectangle(img, (px0, py0), (px1, py1), ink, max(1, s // 120))
            y = py1
    # Body text.
    lh = int(rng.uniform(0.025, 0.045) * h)
    y += lh
    for _ in range(int(rng.integers(0, 7))):
        if y + lh > inner[3] - lh:
            break
        writer = _text if rng.random() < 0.4 else _glyph_line
        x1 = inner[2] - int(rng.uniform(0.05, 0.3) * w)
        writer(rng, img, inner[0] + int(0.06 * w), y, x1, int(lh * 0.8), ink)
        y += int(lh * 1.5)
    # Corner indices (number-like glyphs or small icons).
    if rng.random() < 0.6:
        size = int(rng.uniform(0.06, 0.12) * s)
        col = hsv_color(rng, s=(0.3, 1.0), v=(0.2, 0.9)).tolist()
        label = str(int(rng.integers(1, 20)))
        font = _FONTS[int(rng.integers(len(_FONTS) - 1))]
        scale = cv2.getFontScaleFromHeight(font, size)
        for cx, cy in ((inner[0] + 4, inner[1] + 4), (inner[2] - size - 4, inner[3] - size - 4)):
            if rng.random() < 0.5:
                cv2.circle(img, (cx + size // 2, cy + size // 2), size // 2, col, -1, cv2.LINE_AA)
            else:
                cv2.putText(img, label, (cx, cy + size), font, scale, col, 2, cv2.LINE_AA)
    return img


def _back(rng: np.random.Generator, h: int, w: int) -> Array:
    c0 = hsv_color(rng, s=(0.3, 1.0), v=(0.15, 0.8))
    c1 = hsv_color(rng, s=(0.0, 1.0), v=(0.3, 1.0))
    # A quarter pattern mirrored both ways: card backs are symmetric.
    qh, qw = (h + 1) // 2, (w + 1) // 2
    kind = rng.integers(3)
    if kind == 0:
        t = normalise(fbm(rng, (qh, qw), cell=rng.uniform(8, 40), octaves=3))
        t = (t > 0.5).astype(np.float32) * 0.8 + 0.2 * t
    elif kind == 1:
        ys, xs = np.mgrid[0:qh, 0:qw].astype(np.float32)
        p = rng.uniform(6, 25)
        t = 0.5 + 0.5 * np.sin(xs * 2 * np.pi / p) * np.sin(ys * 2 * np.pi / p)
    else:
        ys, xs = np.mgrid[0:qh, 0:qw].astype(np.float32)
        p = rng.uniform(8, 30)
        t = ((np.floor((xs + ys) / p) + np.floor((xs - ys) / p)) % 2).astype(np.float32)
    quarter = colorize(t, c0, c1)
    top = np.concatenate([quarter, quarter[:, ::-1]], axis=1)[:, :w]
    img = to_u8(np.concatenate([top, top[::-1]], axis=0)[:h])
    s = min(h, w)
    m = int(rng.uniform(0.03, 0.08) * s)
    border = hsv_color(rng, s=(0.0, 1.0), v=(0.0, 1.0)).tolist()
    cv2.rectangle(img, (0, 0), (w - 1, h - 1), border, 2 * m)
    if rng.random() < 0.7:  # emblem
        r = int(rng.uniform(0.15, 0.3) * s)
        col = hsv_color(rng, s=(0.0, 1.0), v=(0.0, 1.0)).tolist()
        cv2.ellipse(img, (w // 2, h // 2), (r, int(r * rng.uniform(0.6, 1.4))), 0, 0, 360,
                    col, -1, cv2.LINE_AA)
        _text(rng, img, w // 2 - r, h // 2 - r // 4, w // 2 + r, r // 2, _contrast(np.array(col)).tolist())
    return img


def _full_bleed(rng: np.random.Generator, h: int, w: int) -> Array:
    """A picture to the edge (photo-like noise under blobs and shapes, mostly dark), one to
    three solid labels with text, and a thin border (black two times in three)."""
    c0 = hsv_color(rng, s=(0.1, 1.0), v=(0.02, 0.45))
    c1 = hsv_color(rng, s=(0.0, 1.0), v=(0.2, 0.95))
    t = normalise(fbm(rng, (h, w), cell=rng.uniform(15, 90), octaves=4))
    img = colorize(t, c0, c1)
    ph, pw = int(h * rng.uniform(0.4, 0.8)), int(w * rng.uniform(0.5, 0.9))
    y0, x0 = int(rng.uniform(0.1, 0.9) * (h - ph)), int(rng.uniform(0.1, 0.9) * (w - pw))
    soft = np.zeros((h, w), np.float32)
    cv2.ellipse(soft, (x0 + pw // 2, y0 + ph // 2), (pw // 2, ph // 2), 0, 0, 360, 1.0, -1)
    soft = cv2.GaussianBlur(soft, (0, 0), 0.08 * min(h, w))[..., None]
    picture = np.zeros_like(img)
    picture[y0:y0 + ph, x0:x0 + pw] = _blob_picture(rng, ph, pw)
    img = img * (1 - soft) + picture * soft
    img = img * rng.uniform(0.5, 1.0)  # most such art is dark
    s = min(h, w)
    for _ in range(int(rng.integers(1, 4))):  # labels: a cost, a name, a bonus
        lw, lh = int(rng.uniform(0.25, 0.6) * w), int(rng.uniform(0.06, 0.12) * h)
        lx = int(rng.uniform(0.05, 0.95) * (w - lw))
        ly = int(rng.uniform(0.04, 0.15) * h) if rng.random() < 0.5 else h - lh - int(rng.uniform(0.04, 0.15) * h)
        col = hsv_color(rng, s=(0.5, 1.0), v=(0.6, 1.0))
        slant = int(rng.uniform(0.0, 0.5) * lh)
        pts = np.array([[lx, ly], [lx + lw, ly], [lx + lw - slant, ly + lh], [lx, ly + lh]], np.int32)
        cv2.fillPoly(img, [pts], col.tolist(), cv2.LINE_AA)
        _glyph_line(rng, img, lx + lh // 3, ly + lh // 5, lx + lw - lh // 2, int(lh * 0.6), _contrast(col).tolist())
    m = max(2, int(rng.uniform(0.02, 0.06) * s))
    if rng.random() < 2 / 3:
        frame = np.array([20, 20, 20], np.float32) * rng.uniform(0.3, 1.5)
    else:
        frame = hsv_color(rng, s=(0.0, 1.0), v=(0.0, 1.0))
    cv2.rectangle(img, (0, 0), (w - 1, h - 1), frame.tolist(), 2 * m)
    return img


def random_design(seed: int, index: int, *, back: bool | None = None, full_bleed: bool = False) -> CardDesign:
    """Design number `index` of the family `seed` (same arguments, same pixels); with
    `full_bleed`, the front of that number in the full-bleed style (see the module notes)."""
    if full_bleed:
        rng = np.random.default_rng([seed, index, 0xB1EED])
        size = random_card_size(rng)
        w, h = round(size[0] * DESIGN_PX_PER_MM), round(size[1] * DESIGN_PX_PER_MM)
        img = _full_bleed(rng, h, w) * (1.0 + 0.03 * value_noise(rng, (h, w), cell=2.0))[..., None]
        return CardDesign(face_id=f"random-{seed}-{index}-bleed", image=to_u8(img), size_mm=size)
    rng = np.random.default_rng([seed, index, 0xCA4D])
    size = random_card_size(rng)
    w = round(size[0] * DESIGN_PX_PER_MM)
    h = round(size[1] * DESIGN_PX_PER_MM)
    is_back = bool(rng.random() < 0.2) if back is None else back
    img = _back(rng, h, w) if is_back else _front(rng, h, w)
    # A little print texture so flat areas are not perfectly flat.
    img = img * (1.0 + 0.03 * value_noise(rng, (h, w), cell=2.0))[..., None]
    kind = "back" if is_back else "front"
    return CardDesign(face_id=f"random-{seed}-{index}-{kind}", image=to_u8(img), size_mm=size)
