"""Solid shapes the renderer fills: hands, arms, mugs, pens, coins — outlines in table space.

A `Part` is a closed 3-D outline (table millimetres with a height per point) and how to paint
it: a colour, an optional darker outline that separates it from a part drawn before it (a
finger over the palm), how strongly its rim is shaded (rounded things look darker at their
silhouette), and whether it hides what lies beneath for the truth's visibility count. Shapes
are grouped into a `Solid` (one hand, one mug) that is shaded and shadowed as a whole.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from vision.synth.noise import Array


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class Part:
    """One filled outline `(n, 3)` (x, y, height in mm), painted `color` (BGR).

    `hull` fills the convex hull of the projected points instead (a cylinder seen from any
    angle is the hull of its two end circles).
    """

    outline: Array
    color: tuple[float, float, float]
    edge_color: tuple[float, float, float] | None = None
    hull: bool = False


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class Solid:
    """Parts drawn together, shaded darker towards the silhouette by `rim_shade` (0..1).

    `occludes` counts it as hiding cards in the truth; `casts_shadow` draws its shadow.
    """

    parts: tuple[Part, ...]
    rim_shade: float = 0.3
    occludes: bool = True
    casts_shadow: bool = True
    highlight: float = 0.0


def circle_outline(center: tuple[float, float], radius: float, height: float,
                   n: int = 28, *, scale_y: float = 1.0, angle_deg: float = 0.0) -> Array:
    """A circle (or ellipse) of points at a given height."""
    t = np.linspace(0.0, 2 * np.pi, n, endpoint=False)
    x = radius * np.cos(t)
    y = radius * scale_y * np.sin(t)
    a = np.radians(angle_deg)
    xr = center[0] + x * np.cos(a) - y * np.sin(a)
    yr = center[1] + x * np.sin(a) + y * np.cos(a)
    return np.stack([xr, yr, np.full(n, height)], axis=1)


def capsule_outline(a: Array, b: Array, width_a: float, width_b: float, *, n_cap: int = 7) -> Array:
    """A tapered capsule from 3-D point `a` to `b` (widths in mm), rounded at `b`, flat at `a`."""
    a = np.asarray(a, np.float64)
    b = np.asarray(b, np.float64)
    d = b[:2] - a[:2]
    ln = float(np.hypot(*d)) or 1.0
    d = d / ln
    nrm = np.array([-d[1], d[0]])
    pts = [np.r_[a[:2] + nrm * width_a / 2, a[2]]]
    pts.append(np.r_[b[:2] + nrm * width_b / 2, b[2]])
    for t in np.linspace(0.0, np.pi, n_cap)[1:-1]:
        off = nrm * np.cos(t) * width_b / 2 + d * np.sin(t) * width_b / 2
        pts.append(np.r_[b[:2] + off, b[2]])
    pts.append(np.r_[b[:2] - nrm * width_b / 2, b[2]])
    pts.append(np.r_[a[:2] - nrm * width_a / 2, a[2]])
    return np.array(pts)
