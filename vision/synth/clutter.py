"""Things on the table that are not cards: mugs, pens, coins, tokens, dice and paper scraps.

They teach the card finder what *not* to report. Solid objects become `Solid`s (a mug is the
hull of its base and rim circles, with its rim, contents and handle); paper scraps are flat,
card-like sheets of the wrong aspect (receipts, sticky notes, torn scraps) drawn with a small
generated texture like a card, but never listed in the truth as one.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import lru_cache

import cv2
import numpy as np

from vision.synth.noise import Array, hsv_color, to_u8, value_noise
from vision.synth.scene import ClutterItem, ClutterKind
from vision.synth.shapes import Part, Solid, capsule_outline, circle_outline

_METALS = ((60, 170, 210), (190, 190, 195), (70, 110, 185))  # gold, silver, copper (BGR)


def _rgb(c: Sequence[float] | Array, k: float = 1.0) -> tuple[float, float, float]:
    return (float(c[0]) * k, float(c[1]) * k, float(c[2]) * k)


@lru_cache(maxsize=256)
def clutter_solid(item: ClutterItem) -> Solid | None:
    """The filled parts of a solid clutter item; None for flat sheets (drawn as textures)."""
    cx, cy = item.center_mm
    col = item.color
    rot = item.rotation_deg
    if item.kind is ClutterKind.MUG:
        d, h = item.size_mm
        r = d / 2
        base = circle_outline((cx, cy), r, 0.0, 32)
        top = circle_outline((cx, cy), r, h, 32)
        a = math.radians(rot)
        out = np.array([math.cos(a), math.sin(a)])
        handle_pts = []
        for t in np.linspace(0, np.pi, 9):  # a C-shaped loop in the vertical plane
            rr = r + 28.0 * math.sin(t)
            zz = h * 0.5 + 0.32 * h * math.cos(t)
            handle_pts.append(np.r_[np.array([cx, cy]) + out * rr, zz])
        for t in np.linspace(np.pi, 0, 9):
            rr = r + 16.0 * math.sin(t)
            zz = h * 0.5 + 0.22 * h * math.cos(t)
            handle_pts.append(np.r_[np.array([cx, cy]) + out * rr, zz])
        handle = np.array(handle_pts)
        # Thicken the handle sideways so it reads from above.
        side = np.r_[np.array([-out[1], out[0]]) * 5.0, 0.0]
        handle = np.concatenate([handle + side, (handle - side)[::-1]])
        inside = (25, 35, 50) if item.seed % 3 == 0 else _rgb(col, 0.55)
        return Solid(
            parts=(
                Part(outline=handle, color=_rgb(col), edge_color=_rgb(col, 0.7), hull=True),
                Part(outline=np.concatenate([base, top]), color=_rgb(col), hull=True),
                Part(outline=top, color=_rgb(col, 1.1), edge_color=_rgb(col, 0.8)),
                Part(outline=circle_outline((cx, cy), r - 4.0, h, 32), color=_rgb(inside)),
            ),
            rim_shade=0.4,
            occludes=True,
            highlight=0.25,
        )
    if item.kind is ClutterKind.PEN:
        length, width = item.size_mm
        a = math.radians(rot)
        axis = np.array([math.cos(a), math.sin(a)])
        half = axis * length / 2
        p0 = np.r_[np.array([cx, cy]) - half, width / 2]
        p1 = np.r_[np.array([cx, cy]) + half, width / 2]
        tip = p1 + np.r_[axis * 12.0, 0.0]
        clip_a = p0 + np.r_[axis * 8.0, width * 0.6]
        clip_b = p0 + np.r_[axis * 45.0, width * 0.6]
        return Solid(
            parts=(
                Part(outline=capsule_outline(p0, p1, width, width), color=_rgb(col)),
                Part(outline=capsule_outline(p1, tip, width * 0.8, 1.5), color=(40, 40, 40)),
                Part(outline=capsule_outline(clip_a, clip_b, 2.5, 2.5), color=_rgb(col, 0.6)),
            ),
            rim_shade=0.5,
            occludes=True,
            highlight=0.3,
        )
    if item.kind in (ClutterKind.COIN, ClutterKind.TOKEN):
        d, t = item.size_mm
        metal = _METALS[item.seed % len(_METALS)] if item.kind is ClutterKind.COIN else col
        return Solid(
            parts=(
                Part(outline=np.concatenate([circle_outline((cx, cy), d / 2, 0.0, 24),
                                             circle_outline((cx, cy), d / 2, t, 24)]),
                     color=_rgb(metal, 0.7), hull=True),
                Part(outline=circle_outline((cx, cy), d / 2, t, 24), color=_rgb(metal),
                     edge_color=_rgb(metal, 0.75)),
                Part(outline=circle_outline((cx, cy), d / 2 * 0.72, t, 20), color=_rgb(metal, 0.9)),
            ),
            rim_shade=0.3,
            occludes=True,
            highlight=0.4 if item.kind is ClutterKind.COIN else 0.1,
        )
    if item.kind is ClutterKind.DIE:
        s, _ = item.size_mm
        a = math.radians(rot)
        u = np.array([math.cos(a), math.sin(a)]) * s / 2
        v = np.array([-math.sin(a), math.cos(a)]) * s / 2
        c = np.array([cx, cy])
        sq = np.array([c - u - v, c + u - v, c + u + v, c - u + v])
        bottom = np.column_stack([sq, np.zeros(4)])
        top = np.column_stack([sq, np.full(4, s)])
        parts = [
            Part(outline=np.concatenate([bottom, top]), color=_rgb(col, 0.7), hull=True),
            Part(outline=top, color=_rgb(col), edge_color=_rgb(col, 0.8)),
        ]
        pip = (20.0, 20.0, 20.0) if sum(col) > 300 else (240.0, 240.0, 240.0)
        n = item.seed % 6 + 1
        spots = {1: [(0, 0)], 2: [(-1, -1), (1, 1)], 3: [(-1, -1), (0, 0), (1, 1)],
                 4: [(-1, -1), (1, -1), (1, 1), (-1, 1)],
                 5: [(-1, -1), (1, -1), (0, 0), (1, 1), (-1, 1)],
                 6: [(-1, -1), (1, -1), (-1, 0), (1, 0), (1, 1), (-1, 1)]}[n]
        for sx, sy in spots:
            p = c + u * 0.55 * sx + v * 0.55 * sy
            parts.append(Part(outline=circle_outline((p[0], p[1]), s * 0.09, s, 10), color=pip))
        return Solid(parts=tuple(parts), rim_shade=0.2, occludes=True, highlight=0.1)
    return None


@lru_cache(maxsize=64)
def paper_texture(item: ClutterItem, px_per_mm: float = 4.0) -> Array:
    """A paper scrap's face: off-white or coloured, with ruled or printed lines, BGR uint8."""
    rng = np.random.default_rng([item.seed, 0x9A9E])
    w = max(8, round(item.size_mm[0] * px_per_mm))
    h = max(8, round(item.size_mm[1] * px_per_mm))
    if rng.random() < 0.6:
        base = np.array([235, 240, 242], np.float32) * rng.uniform(0.85, 1.0)
    else:  # sticky-note colours
        base = hsv_color(rng, h=(0, 180), s=(0.3, 0.7), v=(0.8, 1.0))
    img = np.empty((h, w, 3), np.float32)
    img[:] = base
    img *= (1.0 + 0.03 * value_noise(rng, (h, w), cell=3.0))[..., None]
    img8 = to_u8(img)
    ink = tuple(int(v) for v in hsv_color(rng, s=(0.0, 0.8), v=(0.05, 0.5)))
    step = int(rng.uniform(4.0, 8.0) * px_per_mm)
    y = step
    ruled = rng.random() < 0.4
    while y < h - step // 2:
        if ruled:
            cv2.line(img8, (0, y), (w - 1, y), (200, 170, 150), 1, cv2.LINE_AA)
        else:
            x0 = int(rng.uniform(0.05, 0.15) * w)
            x1 = int(rng.uniform(0.5, 0.95) * w)
            cv2.line(img8, (x0, y), (x1, y), ink, max(1, int(px_per_mm * 0.6)), cv2.LINE_AA)
        y += step
    return img8


def random_clutter(
    rng: np.random.Generator, area_mm: tuple[float, float, float, float], count: int
) -> tuple[ClutterItem, ...]:
    """`count` random items scattered over `area_mm` = (x0, y0, x1, y1)."""
    x0, y0, x1, y1 = area_mm
    kinds = (ClutterKind.MUG, ClutterKind.PEN, ClutterKind.COIN, ClutterKind.PAPER,
             ClutterKind.TOKEN, ClutterKind.DIE)
    weights = np.array([0.15, 0.2, 0.2, 0.25, 0.12, 0.08])
    out = []
    for _ in range(count):
        kind = kinds[int(rng.choice(len(kinds), p=weights / weights.sum()))]
        c = (float(rng.uniform(x0, x1)), float(rng.uniform(y0, y1)))
        cb, cg, cr = (int(v) for v in hsv_color(rng, s=(0.0, 0.9), v=(0.2, 0.95)))
        seed = int(rng.integers(0, 2**31))
        over = bool(rng.random() < 0.5)
        if kind is ClutterKind.MUG:
            size = (rng.uniform(70, 95), rng.uniform(80, 110))
            over = True
        elif kind is ClutterKind.PEN:
            size = (rng.uniform(110, 150), rng.uniform(7, 11))
        elif kind is ClutterKind.COIN:
            size = (rng.uniform(16, 28), rng.uniform(1.5, 2.5))
        elif kind is ClutterKind.TOKEN:
            size = (rng.uniform(14, 30), rng.uniform(2, 4))
        elif kind is ClutterKind.DIE:
            size = (rng.uniform(12, 18), 0.0)
        else:
            # Card-like but the wrong aspect: long receipts, squares, wide notes.
            aspect = float(rng.choice([0.35, 1.0, 1.9, 2.6]) * rng.uniform(0.9, 1.1))
            w = rng.uniform(40, 110)
            size = (w, w * aspect)
        out.append(ClutterItem(kind=kind, center_mm=c, rotation_deg=float(rng.uniform(0, 360)),
                               size_mm=(float(size[0]), float(size[1])), color=(cb, cg, cr),
                               seed=seed, over_cards=over))
    return tuple(out)
