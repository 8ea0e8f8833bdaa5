"""Procedural noise and small raster helpers shared by the table surfaces, card designs and effects.

Everything here is drawn from an explicit `numpy.random.Generator`, so a seed reproduces the
same pixels. Smooth noise is made the cheap way: a small grid of random values enlarged with
cubic interpolation (value noise), summed over octaves for a fractal ("fbm") texture; this is
fast enough to build a metre of table at one pixel per millimetre in a few tens of
milliseconds.
"""

from __future__ import annotations

import cv2
import numpy as np

Array = np.ndarray


def value_noise(rng: np.random.Generator, shape: tuple[int, int], cell: float) -> Array:
    """Smooth noise in [-1, 1] of `shape` (h, w) with features about `cell` pixels wide."""
    h, w = shape
    gh = max(2, int(np.ceil(h / max(cell, 1.0))) + 2)
    gw = max(2, int(np.ceil(w / max(cell, 1.0))) + 2)
    grid = rng.uniform(-1.0, 1.0, (gh, gw)).astype(np.float32)
    big = cv2.resize(grid, (int(gw * cell), int(gh * cell)), interpolation=cv2.INTER_CUBIC)
    oy = int(rng.integers(0, max(1, big.shape[0] - h + 1)))
    ox = int(rng.integers(0, max(1, big.shape[1] - w + 1)))
    out = big[oy : oy + h, ox : ox + w]
    if out.shape != (h, w):
        out = cv2.resize(out, (w, h), interpolation=cv2.INTER_LINEAR)
    return np.ascontiguousarray(np.clip(out, -1.0, 1.0))


def fbm(
    rng: np.random.Generator,
    shape: tuple[int, int],
    cell: float,
    octaves: int = 4,
    persistence: float = 0.5,
) -> Array:
    """Fractal value noise, normalised to about [-1, 1]."""
    total = np.zeros(shape, np.float32)
    amp, norm = 1.0, 0.0
    size = cell
    for _ in range(octaves):
        total += amp * value_noise(rng, shape, max(size, 1.5))
        norm += amp
        amp *= persistence
        size /= 2.0
    return total / norm


def normalise(a: Array) -> Array:
    """Stretch an array to [0, 1] (a constant array becomes 0.5)."""
    lo, hi = float(a.min()), float(a.max())
    if hi - lo < 1e-9:
        return np.full_like(a, 0.5, dtype=np.float32)
    return ((a - lo) / (hi - lo)).astype(np.float32)


def colorize(t: Array, c0: Array, c1: Array) -> Array:
    """Blend two BGR colours by a [0, 1] field; returns float32 (h, w, 3) in 0..255."""
    t3 = t[..., None].astype(np.float32)
    return (1.0 - t3) * np.asarray(c0, np.float32) + t3 * np.asarray(c1, np.float32)


def hsv_color(rng: np.random.Generator, *, s: tuple[float, float], v: tuple[float, float],
              h: tuple[float, float] = (0.0, 180.0)) -> Array:
    """A random BGR colour (float32, 0..255) from hue / saturation / value ranges (OpenCV HSV)."""
    hsv = np.array(
        [[[rng.uniform(*h), rng.uniform(*s) * 255.0, rng.uniform(*v) * 255.0]]], np.float32
    )
    hsv[..., 0] = np.mod(hsv[..., 0], 180.0)
    bgr = cv2.cvtColor(hsv.astype(np.uint8), cv2.COLOR_HSV2BGR)
    return bgr[0, 0].astype(np.float32)


def to_u8(a: Array) -> Array:
    """Clip to 0..255 and convert to uint8."""
    return np.clip(a, 0.0, 255.0).astype(np.uint8)
