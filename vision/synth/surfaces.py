"""Procedural table surfaces: wood grain, felt, cloth weave, patterned tablecloths and more.

A surface is a top-down texture of the table at a fixed resolution (pixels per millimetre),
generated from a seed and cached per `(kind, seed, size, resolution)`, so every frame of a
clip (and every still that reuses a seed) pays for it once. Textures are plain BGR uint8
images; the renderer warps them into the camera view with the table homography. The floor
beneath the table is a surface too (`FLOOR`), seen past the table edge at a steep camera.
"""

from __future__ import annotations

from enum import StrEnum
from functools import lru_cache

import cv2
import numpy as np

from vision.synth.noise import Array, colorize, fbm, hsv_color, normalise, to_u8, value_noise


class SurfaceKind(StrEnum):
    """The families of table surfaces the renderer can draw."""

    WOOD = "wood"
    FELT = "felt"
    WEAVE = "weave"
    GINGHAM = "gingham"
    STRIPES = "stripes"
    DOTS = "dots"
    FLORAL = "floral"
    LAMINATE = "laminate"
    MARBLE = "marble"
    PLAIN = "plain"
    FLOOR = "floor"


# Surfaces a random scene may use for the table (PLAIN is for clean test scenes, FLOOR is
# what lies beyond the table edge).
TABLE_KINDS: tuple[SurfaceKind, ...] = (
    SurfaceKind.WOOD,
    SurfaceKind.WOOD,
    SurfaceKind.FELT,
    SurfaceKind.WEAVE,
    SurfaceKind.GINGHAM,
    SurfaceKind.STRIPES,
    SurfaceKind.DOTS,
    SurfaceKind.FLORAL,
    SurfaceKind.LAMINATE,
    SurfaceKind.MARBLE,
)

_WOOD_TONES = (  # BGR light / dark pairs: pine, oak, walnut, cherry, white-washed, ebony
    ((140, 190, 225), (70, 120, 170)),
    ((95, 150, 195), (45, 90, 140)),
    ((60, 90, 125), (25, 45, 70)),
    ((70, 110, 175), (35, 60, 115)),
    ((200, 210, 215), (150, 160, 170)),
    ((45, 50, 60), (20, 22, 28)),
)


def _wood(rng: np.random.Generator, h: int, w: int, ppm: float) -> Array:
    light, dark = (np.array(c, np.float32) for c in _WOOD_TONES[rng.integers(len(_WOOD_TONES))])
    light = light * rng.uniform(0.9, 1.1)
    dark = dark * rng.uniform(0.9, 1.1)
    along_x = bool(rng.random() < 0.5)
    H, W = (h, w) if along_x else (w, h)
    plank = rng.uniform(70.0, 220.0) * ppm
    ys = np.arange(H, dtype=np.float32)[:, None]
    xs = np.arange(W, dtype=np.float32)[None, :]
    plank_idx = np.floor(ys / plank)
    # Each plank: its own grain phase, ring period and tone.
    n_planks = int(np.ceil(H / plank)) + 1
    phase = rng.uniform(0, 1000, n_planks).astype(np.float32)
    tone = rng.uniform(-0.12, 0.12, n_planks).astype(np.float32)
    period = rng.uniform(4.0, 14.0) * ppm
    stretch = rng.uniform(12.0, 30.0)
    # Anisotropic noise: long along the grain, short across it.
    small = fbm(rng, (H, max(8, int(W / stretch))), cell=max(2.0, 20.0 * ppm), octaves=4)
    turb = cv2.resize(small, (W, H), interpolation=cv2.INTER_LINEAR)
    idx = plank_idx.astype(np.int64).clip(0, n_planks - 1)
    rings = np.sin(
        (ys + phase[idx] + turb * rng.uniform(15.0, 40.0) * ppm + xs * 0.0) * (2 * np.pi / period)
    )
    t = 0.5 + 0.35 * rings * rng.uniform(0.5, 1.0) + 0.25 * turb + tone[idx]
    fine = cv2.resize(
        value_noise(rng, (H, max(8, int(W / 40))), cell=1.5), (W, H), interpolation=cv2.INTER_LINEAR
    )
    t = np.clip(t + 0.12 * fine, 0.0, 1.0)
    img = colorize(t, dark, light)
    # Seams between planks, and staggered butt joints.
    seam = (np.mod(ys, plank) < max(1.0, 1.2 * ppm)).astype(np.float32)
    img *= (1.0 - 0.45 * seam)[..., None]
    img *= (1.0 + 0.06 * fbm(rng, (H, W), cell=250.0 * ppm, octaves=2))[..., None]
    if not along_x:
        img = np.ascontiguousarray(img.transpose(1, 0, 2))
    return img


def _felt(rng: np.random.Generator, h: int, w: int, ppm: float) -> Array:
    base = hsv_color(rng, h=(0, 180), s=(0.35, 0.9), v=(0.2, 0.65))
    if rng.random() < 0.5:  # classic card-table green
        base = hsv_color(rng, h=(50, 80), s=(0.5, 0.9), v=(0.25, 0.55))
    grain = value_noise(rng, (h, w), cell=1.2)
    low = fbm(rng, (h, w), cell=120.0 * ppm, octaves=3)
    shade = 1.0 + 0.10 * grain + 0.08 * low
    return base[None, None, :] * shade[..., None]


def _weave_field(rng: np.random.Generator, h: int, w: int, ppm: float) -> Array:
    pitch = rng.uniform(0.8, 2.5) * ppm
    ys = np.arange(h, dtype=np.float32)[:, None]
    xs = np.arange(w, dtype=np.float32)[None, :]
    wx = np.sin(xs * (2 * np.pi / pitch))
    wy = np.sin(ys * (2 * np.pi / pitch))
    checker = ((np.floor(xs / pitch) + np.floor(ys / pitch)) % 2).astype(np.float32)
    weave = checker * wx + (1 - checker) * wy
    return weave.astype(np.float32) * 0.5


def _folds(rng: np.random.Generator, h: int, w: int, ppm: float) -> Array:
    """Soft shading ridges of a cloth that is not perfectly flat."""
    ang = rng.uniform(0, np.pi)
    ys, xs = np.mgrid[0:h, 0:w].astype(np.float32)
    proj = xs * np.cos(ang) + ys * np.sin(ang)
    warp = fbm(rng, (h, w), cell=200.0 * ppm, octaves=2) * 80.0 * ppm
    return np.sin((proj + warp) * (2 * np.pi / (rng.uniform(150, 400) * ppm))).astype(np.float32)


def _cloth(rng: np.random.Generator, base: Array, ppm: float) -> Array:
    h, w = base.shape[:2]
    weave = _weave_field(rng, h, w, ppm)
    folds = _folds(rng, h, w, ppm)
    shade = 1.0 + 0.12 * weave + rng.uniform(0.0, 0.08) * folds
    shade += 0.05 * value_noise(rng, (h, w), cell=1.5)
    return base * shade[..., None]


def _weave(rng: np.random.Generator, h: int, w: int, ppm: float) -> Array:
    base = hsv_color(rng, s=(0.05, 0.6), v=(0.35, 0.9))
    img = np.broadcast_to(base, (h, w, 3)).astype(np.float32)
    return _cloth(rng, img, ppm)


def _gingham(rng: np.random.Generator, h: int, w: int, ppm: float) -> Array:
    c = hsv_color(rng, s=(0.5, 0.95), v=(0.35, 0.8))
    white = np.array([235, 238, 240], np.float32) * rng.uniform(0.85, 1.0)
    period = rng.uniform(12.0, 40.0) * ppm
    ys = np.arange(h, dtype=np.float32)[:, None]
    xs = np.arange(w, dtype=np.float32)[None, :]
    sx = (np.mod(xs, period) < period / 2).astype(np.float32)
    sy = (np.mod(ys, period) < period / 2).astype(np.float32)
    t = np.clip(0.5 * sx + 0.5 * sy, 0, 1)
    img = colorize(t, white, c)
    return _cloth(rng, img, ppm)


def _stripes(rng: np.random.Generator, h: int, w: int, ppm: float) -> Array:
    n = int(rng.integers(2, 5))
    colors = [hsv_color(rng, s=(0.1, 0.9), v=(0.3, 0.95)) for _ in range(n)]
    widths = rng.uniform(5.0, 60.0, n) * ppm
    period = float(widths.sum())
    ang = rng.uniform(0, np.pi)
    ys, xs = np.mgrid[0:h, 0:w].astype(np.float32)
    pos = np.mod(xs * np.cos(ang) + ys * np.sin(ang), period)
    img = np.zeros((h, w, 3), np.float32)
    edge = 0.0
    for col, wd in zip(colors, widths, strict=True):
        m = (pos >= edge) & (pos < edge + wd)
        img[m] = col
        edge += wd
    return _cloth(rng, img, ppm)


def _dots(rng: np.random.Generator, h: int, w: int, ppm: float) -> Array:
    bg = hsv_color(rng, s=(0.0, 0.7), v=(0.4, 0.95))
    fg = hsv_color(rng, s=(0.2, 0.9), v=(0.15, 0.95))
    img = np.empty((h, w, 3), np.float32)
    img[:] = bg
    spacing = rng.uniform(15.0, 50.0) * ppm
    radius = spacing * rng.uniform(0.12, 0.35)
    stagger = bool(rng.random() < 0.6)
    canvas = img.copy()
    for row, y in enumerate(np.arange(0, h + spacing, spacing)):
        off = spacing / 2 if (stagger and row % 2) else 0.0
        for x in np.arange(-off, w + spacing, spacing):
            cv2.circle(canvas, (int(x), int(y)), int(radius), fg.tolist(), -1, cv2.LINE_AA)
    return _cloth(rng, canvas, ppm)


def _floral(rng: np.random.Generator, h: int, w: int, ppm: float) -> Array:
    bg = hsv_color(rng, s=(0.0, 0.5), v=(0.6, 0.97))
    palette = [hsv_color(rng, s=(0.3, 0.9), v=(0.3, 0.9)) for _ in range(4)]
    img = np.empty((h, w, 3), np.float32)
    img[:] = bg
    n = int(h * w / (ppm * ppm) / rng.uniform(900.0, 3000.0))
    for _ in range(n):
        cx, cy = int(rng.uniform(0, w)), int(rng.uniform(0, h))
        r = rng.uniform(4.0, 18.0) * ppm
        col = palette[int(rng.integers(len(palette)))].tolist()
        petals = int(rng.integers(4, 8))
        for k in range(petals):
            a = 2 * np.pi * k / petals + rng.uniform(-0.2, 0.2)
            px, py = cx + np.cos(a) * r * 0.6, cy + np.sin(a) * r * 0.6
            cv2.ellipse(img, (int(px), int(py)), (max(1, int(r * 0.5)), max(1, int(r * 0.25))),
                        float(np.degrees(a)), 0, 360, col, -1, cv2.LINE_AA)
        cv2.circle(img, (cx, cy), max(1, int(r * 0.22)), palette[0].tolist(), -1, cv2.LINE_AA)
    return _cloth(rng, img, ppm)


def _laminate(rng: np.random.Generator, h: int, w: int, ppm: float) -> Array:
    base = hsv_color(rng, s=(0.0, 0.4), v=(0.3, 0.95))
    shade = 1.0 + 0.025 * value_noise(rng, (h, w), cell=1.5)
    shade += 0.04 * fbm(rng, (h, w), cell=150.0 * ppm, octaves=2)
    return base[None, None, :] * shade[..., None]


def _marble(rng: np.random.Generator, h: int, w: int, ppm: float) -> Array:
    light = hsv_color(rng, s=(0.0, 0.12), v=(0.75, 0.97))
    dark = hsv_color(rng, s=(0.0, 0.3), v=(0.25, 0.6))
    turb = fbm(rng, (h, w), cell=150.0 * ppm, octaves=5)
    ang = rng.uniform(0, np.pi)
    ys, xs = np.mgrid[0:h, 0:w].astype(np.float32)
    proj = (xs * np.cos(ang) + ys * np.sin(ang)) / (rng.uniform(60, 200) * ppm)
    veins = np.abs(np.sin(proj + 5.0 * turb)) ** rng.uniform(0.15, 0.4)
    t = normalise(veins)
    return colorize(t, dark, light)


def _plain(rng: np.random.Generator, h: int, w: int, ppm: float) -> Array:
    base = hsv_color(rng, s=(0.0, 0.5), v=(0.1, 0.5))
    img = np.empty((h, w, 3), np.float32)
    img[:] = base
    return img


def _floor(rng: np.random.Generator, h: int, w: int, ppm: float) -> Array:
    base = hsv_color(rng, s=(0.0, 0.5), v=(0.08, 0.45))
    shade = 1.0 + 0.25 * fbm(rng, (h, w), cell=80.0 * ppm, octaves=4)
    img = base[None, None, :] * shade[..., None]
    return cv2.GaussianBlur(img, (0, 0), 2.0 * ppm)


_MAKERS = {
    SurfaceKind.WOOD: _wood,
    SurfaceKind.FELT: _felt,
    SurfaceKind.WEAVE: _weave,
    SurfaceKind.GINGHAM: _gingham,
    SurfaceKind.STRIPES: _stripes,
    SurfaceKind.DOTS: _dots,
    SurfaceKind.FLORAL: _floral,
    SurfaceKind.LAMINATE: _laminate,
    SurfaceKind.MARBLE: _marble,
    SurfaceKind.PLAIN: _plain,
    SurfaceKind.FLOOR: _floor,
}


@lru_cache(maxsize=24)
def surface_texture(
    kind: SurfaceKind, seed: int, size_mm: tuple[int, int], px_per_mm: float = 1.0
) -> Array:
    """The top-down texture of a surface `size_mm` = (width, height), BGR uint8, cached.

    The returned array is shared by the cache: treat it as read-only.
    """
    w = max(8, round(size_mm[0] * px_per_mm))
    h = max(8, round(size_mm[1] * px_per_mm))
    rng = np.random.default_rng([seed, list(_MAKERS).index(kind), 0x5EED])
    img = to_u8(_MAKERS[kind](rng, h, w, px_per_mm))
    img.setflags(write=False)
    return img


def plain_texture(color_bgr: tuple[int, int, int], size_mm: tuple[int, int],
                  px_per_mm: float = 1.0) -> Array:
    """A flat single-colour surface (clean test scenes)."""
    w = max(8, round(size_mm[0] * px_per_mm))
    h = max(8, round(size_mm[1] * px_per_mm))
    img = np.empty((h, w, 3), np.uint8)
    img[:] = color_bgr
    return img
