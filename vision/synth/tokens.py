"""Tokens and the die in synthetic scenes: their printed art, where they lie in a zone, and how
a clip's counters follow the game.

`token_art` gives the renderer each token's top (the proxy art of `vision.art.proxy`, a disc or
a die face) with its alpha mask, cached per token. `scatter_tokens` lays `n` tokens loosely in a
zone's rectangle, the way players drop them: scattered, sometimes touching, now and then one
lying a little over another, never far outside the zone. `die_in_zone` places the die. A
`TokenTable` keeps the tokens of every counter zone of a clip (the layout's `counted` zones:
health-N, hunger-N, daylight, die) in step with the engine's zones (a token id repeated once per
token; `die` repeats `d6` once per pip); counts that change are acted out by a hand reaching to
the zone (`token_gesture`), and each checkpoint of the truth carries the counts.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import cv2
import numpy as np

from calibration.layout import Layout, Stacking, ZoneKind
from vision.art.proxy import DIE_EDGE_MM, TOKEN_DIAMETER_MM, render_die_face, render_token
from vision.synth.noise import Array
from vision.synth.scene import TokenPlacement

ART_PX_PER_MM = 6.0
TOKEN_HEIGHT_MM = 2.5
DIE_TOKEN = "d6"


@lru_cache(maxsize=64)
def token_art(token: str, pips: int | None) -> tuple[Array, Array]:
    """(BGR image, 8-bit alpha) of a token's top face: a disc, or a die face with `pips`."""
    if pips is not None:
        img = render_die_face(pips, ART_PX_PER_MM)
        h, w = img.shape[:2]
        mask = np.zeros((h, w), np.uint8)
        r = max(1, round(0.12 * w))
        cv2.rectangle(mask, (r, 0), (w - 1 - r, h - 1), 255, -1)
        cv2.rectangle(mask, (0, r), (w - 1, h - 1 - r), 255, -1)
        for cx, cy in ((r, r), (w - 1 - r, r), (r, h - 1 - r), (w - 1 - r, h - 1 - r)):
            cv2.circle(mask, (cx, cy), r, 255, -1, cv2.LINE_AA)
    else:
        img = render_token(token, ART_PX_PER_MM)
        h, w = img.shape[:2]
        mask = np.zeros((h * 4, w * 4), np.uint8)
        cv2.circle(mask, (w * 2, h * 2), w * 2 - 2, 255, -1, cv2.LINE_AA)
        mask = cv2.resize(mask, (w, h), interpolation=cv2.INTER_AREA)
    img.setflags(write=False)
    mask.setflags(write=False)
    return img, mask


def side_colour(token: str, pips: int | None) -> tuple[int, int, int]:
    """The BGR colour of a token's edge (the rim of the disc, the die's sides)."""
    img, _ = token_art(token, pips)
    if pips is not None:
        return (222, 224, 224)
    edge = img[img.shape[0] // 2, 1]
    return (int(edge[0] * 0.8), int(edge[1] * 0.8), int(edge[2] * 0.8))


def zone_frame(layout: Layout, zone_id: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(centre, unit u along the zone's long side, half sizes (along u, across)) in mm."""
    z = layout.zone(zone_id)
    pts = np.asarray(z.polygon, np.float64)
    c = pts.mean(axis=0)
    e0, e1 = pts[1] - pts[0], pts[2] - pts[1]
    u = e0 if np.hypot(*e0) >= np.hypot(*e1) else e1
    u = u / max(1e-9, float(np.hypot(*u)))
    v = np.array([-u[1], u[0]])
    half = np.array([np.abs((pts - c) @ u).max(), np.abs((pts - c) @ v).max()])
    return c, u, half


def scatter_tokens(rng: np.random.Generator, token: str, n: int, centre: np.ndarray, u: np.ndarray,
                   half: np.ndarray, *, zone: str | None = None, overlap: float = 0.12,
                   avoid: Sequence[tuple[float, float]] = ()) -> tuple[TokenPlacement, ...]:
    """`n` discs scattered in the rectangle (`centre`, axis `u`, `half` sizes): centres at
    least `(1 - overlap)` diameters apart where room allows (closer in a crowded zone, one
    then lying a little over another), kept inside the zone by a few millimetres."""
    d = TOKEN_DIAMETER_MM
    v = np.array([-u[1], u[0]])
    lim = np.maximum(half - d * 0.35, 1.0)
    placed: list[np.ndarray] = [np.asarray(a, np.float64) for a in avoid]
    out: list[TokenPlacement] = []
    for _ in range(n):
        best, best_gap = None, -1.0
        for _try in range(40):
            a, b = rng.uniform(-lim[0], lim[0]), rng.uniform(-lim[1], lim[1])
            p = centre + u * a + v * b
            gap = min((float(np.hypot(*(p - q))) for q in placed), default=1e9)
            if gap >= d * (1.0 - overlap) * rng.uniform(0.92, 1.1):
                best, best_gap = p, gap
                break
            if gap > best_gap:
                best, best_gap = p, gap
        assert best is not None
        z = 0.0 if best_gap >= d else TOKEN_HEIGHT_MM * 0.9
        placed.append(best)
        out.append(TokenPlacement(token=token, center_mm=(float(best[0]), float(best[1])),
                                  rotation_deg=float(rng.uniform(-180, 180)), z_mm=z,
                                  size_mm=d * float(rng.uniform(0.98, 1.02)),
                                  height_mm=TOKEN_HEIGHT_MM, zone=zone))
    # Lower tokens first, so one lying over another is drawn after it.
    return tuple(sorted(out, key=lambda t: t.z_mm))


def die_in_zone(rng: np.random.Generator, pips: int, centre: np.ndarray, u: np.ndarray, half: np.ndarray,
                *, zone: str | None = None) -> TokenPlacement:
    """The die lying in the zone with `pips` on top, turned at random."""
    v = np.array([-u[1], u[0]])
    lim = np.maximum(half - DIE_EDGE_MM, 1.0)
    p = centre + u * rng.uniform(-lim[0], lim[0]) + v * rng.uniform(-lim[1], lim[1])
    return TokenPlacement(token=DIE_TOKEN, center_mm=(float(p[0]), float(p[1])),
                          rotation_deg=float(rng.uniform(-45, 45)), size_mm=DIE_EDGE_MM,
                          height_mm=DIE_EDGE_MM, pips=pips, zone=zone)


# --- a clip's counters ------------------------------------------------------------------------


def counter_zones(layout: Layout) -> tuple[str, ...]:
    """The layout's counted zones (token areas and the die)."""
    return tuple(z.id for z in layout.zones
                 if z.stacking is Stacking.COUNTED or z.kind in (ZoneKind.TOKEN_AREA, ZoneKind.DIE))


def split_counters(layout: Layout, engine_zones: Mapping[str, Sequence[str | None]]
                   ) -> tuple[dict[str, Sequence[str | None]], dict[str, tuple[str, int]]]:
    """The engine's zones split into card zones and counters: zone -> (token id, count)."""
    counted = set(counter_zones(layout))
    cards: dict[str, Sequence[str | None]] = {}
    counts: dict[str, tuple[str, int]] = {}
    for zone, items in engine_zones.items():
        if zone in counted:
            ids = [i for i in items if i is not None]
            counts[zone] = (ids[0] if ids else "", len(ids))
        else:
            cards[zone] = items
    return cards, counts


@dataclass(slots=True)
class TokenTable:
    """The tokens lying in each counter zone, kept in step with the engine's counts.

    `shown` is what the camera sees now (a gesture updates a zone when the hand gets there).
    """

    layout: Layout
    rng: np.random.Generator
    shown: dict[str, tuple[TokenPlacement, ...]] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)
    kinds: dict[str, str] = field(default_factory=dict)

    def _lay(self, zone: str, token: str, n: int, keep: tuple[TokenPlacement, ...]) -> tuple[TokenPlacement, ...]:
        centre, u, half = zone_frame(self.layout, zone)
        if token == DIE_TOKEN or zone == "die":
            return (die_in_zone(self.rng, n, centre, u, half, zone=zone),) if n > 0 else ()
        if n <= len(keep):
            drop = set(self.rng.choice(len(keep), size=len(keep) - n, replace=False).tolist())
            return tuple(t for i, t in enumerate(keep) if i not in drop)
        more = scatter_tokens(self.rng, token, n - len(keep), centre, u, half, zone=zone,
                              avoid=[t.center_mm for t in keep])
        return tuple(sorted(keep + more, key=lambda t: t.z_mm))

    def load(self, counts: Mapping[str, tuple[str, int]]) -> None:
        """Lay out the opening counts."""
        for zone, (token, n) in counts.items():
            self.kinds[zone] = token or self.kinds.get(zone, "")
            self.counts[zone] = n
            self.shown[zone] = self._lay(zone, token, n, ())

    def changes(self, counts: Mapping[str, tuple[str, int]]) -> list[str]:
        """Zones whose count differs from what lies on the table."""
        return [z for z, (_t, n) in counts.items() if self.counts.get(z, 0) != n]

    def apply(self, zone: str, token: str, n: int) -> None:
        """Put the table's `zone` at `n` tokens (the die: rolled to `n`)."""
        token = token or self.kinds.get(zone, "")
        self.kinds[zone] = token
        keep = self.shown.get(zone, ())
        if zone == "die" or token == DIE_TOKEN:
            keep = ()
        self.shown[zone] = self._lay(zone, token, n, keep)
        self.counts[zone] = n

    def placements(self) -> tuple[TokenPlacement, ...]:
        out = [t for ts in self.shown.values() for t in ts]
        return tuple(sorted(out, key=lambda t: t.z_mm))

    def checkpoint_counts(self) -> dict[str, int]:
        return dict(self.counts)


def token_gesture(hand_at: Callable[[int, np.ndarray, float, float], Any], seat: np.ndarray, player: int,
                  zones: Sequence[str], table: TokenTable, counts: Mapping[str, tuple[str, int]],
                  frames: Callable[[float], int]) -> Iterator[Any]:
    """Hands (one per frame) of a player reaching to each changed counter zone in turn, the
    zone's tokens changing while the hand is over it, then leaving. Yields `HandPlacement`s."""
    pos = seat
    for zone in zones:
        target = np.asarray(table.layout.zone(zone).center, np.float64)
        n = frames(0.45)
        for i in range(1, n + 1):
            t = i / n
            s = t * t * (3 - 2 * t)
            p = pos + (target - pos) * s
            yield hand_at(player, p, 70.0 + (25.0 - 70.0) * s + 30 * math.sin(math.pi * s), 0.2)
        token, count = counts[zone]
        table.apply(zone, token, count)
        for _ in range(frames(0.25)):
            yield hand_at(player, target, 25.0, 0.35)
        pos = target
    n = frames(0.45)
    for i in range(1, n + 1):
        t = i / n
        s = t * t * (3 - 2 * t)
        yield hand_at(player, pos + (seat - pos) * s, 25.0 + 65.0 * s, 0.2)
