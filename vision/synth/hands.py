"""Procedural hands and forearms that reach over the table and hide cards.

A hand is built in its own frame (x towards the fingertips, y across the palm), from a
rounded palm, four tapered fingers that fan with `spread` and shorten as they `curl`, a thumb
and a fingernail on each finger, then placed at the wrist, turned, and lifted to its height;
the forearm runs back to the player's edge of the table, rising, bare or in a sleeve.
Skin tones span light to dark. The result is a `Solid` the renderer fills, shades at the rim,
and shadows onto the table and the cards.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

from vision.synth.noise import Array, hsv_color
from vision.synth.scene import HandPlacement
from vision.synth.shapes import Part, Solid, capsule_outline, circle_outline

# BGR skin tones from light to dark; a sample blends two neighbours.
_SKIN = np.array(
    [
        (200, 215, 245),
        (170, 195, 235),
        (135, 170, 225),
        (110, 150, 205),
        (85, 125, 180),
        (65, 100, 150),
        (50, 75, 115),
        (40, 55, 85),
    ],
    np.float64,
)

# Finger layout: (lateral position across the palm as a fraction of palm width, length as a
# fraction of hand length, width as a fraction of hand length), index to little finger.
_FINGERS = ((0.36, 0.39, 0.095), (0.12, 0.43, 0.098), (-0.12, 0.40, 0.092), (-0.35, 0.32, 0.082))
_PALM_LEN = 0.55
# How steeply the forearm rises from the wrist towards the player (height per mm).
_ARM_RISE = 0.35
_PALM_WIDTH = 0.46


def _bgr(c: tuple[int, int, int], k: float = 1.0, add: float = 0.0) -> tuple[float, float, float]:
    """A colour scaled and lifted, clipped to 0..255, as floats."""
    b, g, r = (float(min(255.0, v * k + add)) for v in c)
    return (b, g, r)


def skin_tone(rng: np.random.Generator) -> tuple[int, int, int]:
    """A random skin colour (BGR)."""
    t = rng.uniform(0, len(_SKIN) - 1)
    i = int(t)
    f = t - i
    c = _SKIN[i] * (1 - f) + _SKIN[min(i + 1, len(_SKIN) - 1)] * f
    c = c * rng.uniform(0.92, 1.06, 3)
    b, g, r = (int(v) for v in np.clip(c, 0, 255))
    return (b, g, r)


def sleeve_color(rng: np.random.Generator) -> tuple[int, int, int] | None:
    """A clothing colour, or None (a bare forearm) one time in three."""
    if rng.random() < 0.33:
        return None
    c = hsv_color(rng, s=(0.0, 0.9), v=(0.1, 0.9))
    return (int(c[0]), int(c[1]), int(c[2]))


def _to_table(local: Array, hand: HandPlacement) -> Array:
    """Hand-frame points (x forward, y across, height) → table points."""
    a = math.radians(hand.direction_deg)
    fwd = np.array([math.cos(a), math.sin(a)])
    # Seen from above, palm down, a right hand has its thumb on the left of its reach.
    side = np.array([-math.sin(a), math.cos(a)]) * (1.0 if hand.left else -1.0)
    xy = np.asarray(hand.wrist_mm) + local[:, :1] * fwd + local[:, 1:2] * side
    return np.column_stack([xy, local[:, 2]])


@lru_cache(maxsize=16)
def hand_solid(hand: HandPlacement) -> Solid:
    """The hand and forearm as filled parts, in table coordinates."""
    L = hand.length_mm
    h = hand.height_mm
    skin = _bgr(hand.skin)
    dark = _bgr(hand.skin, 0.72)
    nail = _bgr(hand.skin, 1.12, 18.0)
    parts: list[Part] = []

    # Forearm: from just inside the wrist back to the player's edge, rising.
    a = math.radians(hand.direction_deg)
    fwd = np.array([math.cos(a), math.sin(a)])
    if hand.arm_to_mm is not None:
        back = np.asarray(hand.arm_to_mm, np.float64) - np.asarray(hand.wrist_mm)
        arm_len = max(150.0, float(np.hypot(*back)))
        back_dir = back / (np.hypot(*back) or 1.0)
    else:
        arm_len = 450.0
        back_dir = -fwd
    wrist = np.array([*hand.wrist_mm, h])
    elbow = np.array([*(np.asarray(hand.wrist_mm) + back_dir * arm_len), h + _ARM_RISE * arm_len])
    arm_w0, arm_w1 = 0.30 * L, 0.42 * L
    arm = capsule_outline(elbow, wrist + np.r_[fwd * 0.08 * L, 0.0], arm_w1, arm_w0)
    parts.append(Part(outline=arm, color=skin))
    if hand.sleeve is not None:
        cuff = wrist + np.r_[back_dir * _cuff_offset(L), 0.0]
        cuff[2] = h + _ARM_RISE * float(np.hypot(*(cuff[:2] - wrist[:2])))
        sl = capsule_outline(elbow, cuff, arm_w1 * 1.25, arm_w0 * 1.35, n_cap=5)
        parts.append(Part(outline=sl, color=_bgr(hand.sleeve), edge_color=_bgr(hand.sleeve, 0.6)))

    # Palm: a rounded block from the wrist to the knuckles.
    pl, pw = _PALM_LEN * L, _PALM_WIDTH * L
    t = np.linspace(0, 2 * np.pi, 28, endpoint=False)
    ex = np.sign(np.cos(t)) * np.abs(np.cos(t)) ** 0.6 * pl / 2 + pl / 2
    ey = np.sign(np.sin(t)) * np.abs(np.sin(t)) ** 0.6 * pw / 2
    ey = ey * np.where(ex < pl * 0.3, 0.82 + 0.18 * ex / (pl * 0.3), 1.0)  # narrower at the wrist
    palm = _to_table(np.column_stack([ex, ey, np.full_like(ex, h)]), hand)
    parts.append(Part(outline=palm, color=skin))

    # Thumb, from the side of the palm near the wrist.
    th_base = np.array([0.18 * L, 0.26 * L * 0.9, h])
    th_ang = math.radians(38.0 + 25.0 * hand.spread)
    th_len = 0.30 * L * (1.0 - 0.35 * hand.curl)
    th_tip = th_base + np.array([math.cos(th_ang) * th_len, math.sin(th_ang) * th_len,
                                 -0.15 * hand.curl * h])
    thumb = capsule_outline(th_base, th_tip, 0.13 * L, 0.10 * L)
    parts.append(Part(outline=_to_table(thumb, hand), color=skin, edge_color=dark))

    # Fingers with nails.
    for i, (lat, length, width) in enumerate(_FINGERS):
        ang = math.radians((1.5 - i) * 7.0 * (0.3 + 1.7 * hand.spread))
        base = np.array([pl * 0.93, lat * pw, h])
        ln = length * L * (1.0 - 0.55 * hand.curl)
        tip = base + np.array([math.cos(ang) * ln, math.sin(ang) * ln, -0.5 * hand.curl * h])
        tip[2] = max(tip[2], 3.0)
        wd = width * L
        finger = capsule_outline(base, tip, wd * 1.05, wd * 0.92)
        parts.append(Part(outline=_to_table(finger, hand), color=skin, edge_color=dark))
        nc = base + (tip - base) * (1.0 - 0.55 * wd / max(ln, 1.0))
        nail_local = circle_outline((nc[0], nc[1]), wd * 0.3, float(nc[2]), n=12,
                                    scale_y=0.8, angle_deg=math.degrees(ang))
        parts.append(Part(outline=_to_table(nail_local, hand), color=nail))
    return Solid(parts=tuple(parts), rim_shade=0.35, occludes=True, casts_shadow=True,
                 highlight=0.1)


def _cuff_offset(length_mm: float) -> float:
    """How far back from the wrist a sleeve starts (a fixed share of the hand length)."""
    return 0.45 * length_mm


def random_hand(
    rng: np.random.Generator,
    target_mm: tuple[float, float],
    from_mm: tuple[float, float],
) -> HandPlacement:
    """A hand reaching from `from_mm` (a point on the player's edge) so its fingers cover `target_mm`."""
    d = np.asarray(target_mm, np.float64) - np.asarray(from_mm, np.float64)
    ang = math.degrees(math.atan2(d[1], d[0])) + rng.normal(0.0, 12.0)
    length = rng.uniform(165.0, 205.0)
    a = math.radians(ang)
    reach = length * rng.uniform(0.55, 0.85)
    wrist = (target_mm[0] - math.cos(a) * reach, target_mm[1] - math.sin(a) * reach)
    return HandPlacement(
        wrist_mm=wrist,
        direction_deg=ang,
        height_mm=rng.uniform(15.0, 90.0),
        length_mm=length,
        spread=float(rng.uniform(0.0, 1.0)),
        curl=float(rng.uniform(0.0, 0.8)),
        arm_to_mm=from_mm,
        skin=skin_tone(rng),
        sleeve=sleeve_color(rng),
        left=bool(rng.random() < 0.3),
    )
