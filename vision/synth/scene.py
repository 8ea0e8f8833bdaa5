"""What is on the table: card placements, hands, clutter, markers and the table itself.

A scene is plain data in table millimetres (the `calibration` frame: origin at the centre of
marker 0, x right, y down the image, heights above the table). Cards are drawn in list order,
so a later card lies on an earlier one; a pile is a run of cards with rising `z_mm`. A card
standing in a holder is tilted about its bottom edge. Helpers build the common arrangements
(a pile with visible thickness, a fanned spread, a row). The geometry of a placement — its
four corners in 3-D, in the card's own order top-left, top-right, bottom-right, bottom-left —
is computed here and nowhere else, so the renderer and the truth always agree.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from enum import StrEnum

import numpy as np

from vision.synth.errors import SynthError
from vision.synth.noise import Array
from vision.synth.surfaces import SurfaceKind

CARD_THICKNESS_MM = 0.32
DEFAULT_CORNER_RADIUS_MM = 3.0


@dataclass(frozen=True, slots=True, kw_only=True)
class CardPlacement:
    """One physical card on the table.

    `face_id` is the face the camera sees (the back when the card lies face down).
    `rotation_deg` turns the card about the table normal, clockwise as seen in the top-down
    layout (0: the card's top edge towards -y). `z_mm` is the height of its underside.
    `tilt_deg` stands the card up about its bottom edge (0 flat, 90 upright), its face towards
    the card's own bottom (+y at rotation 0); `center_mm` is where its centre would be if it lay
    flat, so the bottom edge stays put. `size_mm` defaults to the face's printed size. `track`
    names the physical card across the frames of a clip; `card` is its catalog card id.
    """

    face_id: str
    center_mm: tuple[float, float]
    rotation_deg: float = 0.0
    z_mm: float = 0.0
    tilt_deg: float = 0.0
    size_mm: tuple[float, float] | None = None
    zone: str | None = None
    track: int | None = None
    card: str | None = None
    sleeve: bool = False
    corner_radius_mm: float = DEFAULT_CORNER_RADIUS_MM

    def corners_3d(self, size_mm: tuple[float, float]) -> Array:
        """`(4, 3)` (x, y, height): the card's own TL, TR, BR, BL corners on the table."""
        w, h = self.size_mm or size_mm
        th = math.radians(self.rotation_deg)
        u = np.array([math.cos(th), math.sin(th)])  # along the card's width
        v = np.array([-math.sin(th), math.cos(th)])  # down the card's height
        c = np.asarray(self.center_mm, np.float64)
        a = math.radians(self.tilt_deg)
        bottom_mid = c + v * (h / 2.0)
        out = np.zeros((4, 3))
        for i, (su, top) in enumerate(((-1, True), (1, True), (1, False), (-1, False))):
            s = h if top else 0.0  # distance from the bottom edge, along the card
            xy = bottom_mid + u * (su * w / 2.0) - v * (s * math.cos(a))
            out[i, :2] = xy
            out[i, 2] = self.z_mm + s * math.sin(a)
        return out

    def normal_up(self) -> float:
        """How much the card faces straight up (1 flat, 0 upright)."""
        return math.cos(math.radians(self.tilt_deg))


@dataclass(frozen=True, slots=True, kw_only=True)
class HandPlacement:
    """A hand over the table, reaching along `direction_deg` (table angle, 0 = +x, 90 = +y).

    `wrist_mm` is the wrist on the table plane and `height_mm` the palm's height above it.
    `spread` (0..1) opens the fingers, `curl` (0..1) bends them under (a grip looks shorter).
    The forearm runs back from the wrist to `arm_to_mm` (the player's edge of the table), rising.
    `skin` and `sleeve` are BGR colours; `sleeve` None is a bare arm. `left` mirrors the thumb.
    """

    wrist_mm: tuple[float, float]
    direction_deg: float
    height_mm: float = 60.0
    length_mm: float = 185.0
    spread: float = 0.3
    curl: float = 0.0
    arm_to_mm: tuple[float, float] | None = None
    skin: tuple[int, int, int] = (120, 160, 215)
    sleeve: tuple[int, int, int] | None = None
    left: bool = False


class ClutterKind(StrEnum):
    """Things on a table that are not cards."""

    MUG = "mug"
    PEN = "pen"
    COIN = "coin"
    PAPER = "paper"
    TOKEN = "token"
    DIE = "die"


@dataclass(frozen=True, slots=True, kw_only=True)
class ClutterItem:
    """A non-card object: `size_mm` is (length, width) — a mug's (diameter, height), a coin's
    (diameter, thickness). `over_cards` draws it above the cards (it then hides them)."""

    kind: ClutterKind
    center_mm: tuple[float, float]
    rotation_deg: float = 0.0
    size_mm: tuple[float, float] = (80.0, 95.0)
    color: tuple[int, int, int] = (200, 200, 200)
    seed: int = 0
    over_cards: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class TokenPlacement:
    """A game token (a printed disc) or a die lying on the table.

    `token` is the catalog's token id. A disc is `size_mm` across and `height_mm` thick; a die
    (`pips` set: the face on top, 1..6) is a cube of edge `size_mm`. `z_mm` is its underside
    (a token lying partly on another is a little higher). `rotation_deg` as for cards.
    """

    token: str
    center_mm: tuple[float, float]
    rotation_deg: float = 0.0
    z_mm: float = 0.0
    size_mm: float = 20.0
    height_mm: float = 2.5
    pips: int | None = None
    zone: str | None = None

    def __post_init__(self) -> None:
        if self.pips is not None and not 1 <= self.pips <= 6:
            raise SynthError(f"token {self.token!r}: a die shows 1..6 pips, got {self.pips}")

    @property
    def is_die(self) -> bool:
        return self.pips is not None

    @property
    def top_mm(self) -> float:
        """Height of its top face above the table."""
        return self.z_mm + (self.size_mm if self.is_die else self.height_mm)

    def top_center_3d(self) -> Array:
        """`(1, 3)` the centre of its top face (what the camera reads)."""
        return np.array([[self.center_mm[0], self.center_mm[1], self.top_mm]])

    def square_3d(self, height_mm: float) -> Array:
        """`(4, 3)` the square around its footprint (TL, TR, BR, BL) at `height_mm`."""
        pl = CardPlacement(face_id="", center_mm=self.center_mm, rotation_deg=self.rotation_deg,
                           z_mm=height_mm)
        return pl.corners_3d((self.size_mm, self.size_mm))


@dataclass(frozen=True, slots=True, kw_only=True)
class MarkerPlacement:
    """A printed ArUco marker (DICT_4X4_50) lying on the table, `size_mm` its black square.

    `rotation_deg` as for cards; 0 = upright (its own top edge towards -y)."""

    marker_id: int
    center_mm: tuple[float, float]
    size_mm: float = 60.0
    rotation_deg: float = 0.0

    def corners_3d(self) -> Array:
        s = self.size_mm
        pl = CardPlacement(face_id="", center_mm=self.center_mm, rotation_deg=self.rotation_deg)
        return pl.corners_3d((s, s))


@dataclass(frozen=True, slots=True, kw_only=True)
class TableSpec:
    """The table top: a surface texture covering `extent_mm` = (x0, y0, x1, y1).

    `color` set draws a flat colour instead of the procedural texture (clean test scenes).
    Past the table edge lies the floor, `floor_depth_mm` below.
    """

    surface: SurfaceKind = SurfaceKind.WOOD
    seed: int = 0
    extent_mm: tuple[float, float, float, float] = (-300.0, -250.0, 1100.0, 750.0)
    color: tuple[int, int, int] | None = None
    floor_depth_mm: float = 740.0
    px_per_mm: float = 1.0


@dataclass(frozen=True, slots=True, kw_only=True)
class Scene:
    """Everything on the table for one frame; `moving_cards` are drawn above `cards`, `tokens`
    (counted tokens and the die) above the cards at rest.

    Cards a hand is carrying go in `moving_cards`: the static part (table, clutter under the
    cards, markers, `cards`) is what the renderer caches between frames of a clip.
    """

    table: TableSpec = field(default_factory=TableSpec)
    cards: tuple[CardPlacement, ...] = ()
    moving_cards: tuple[CardPlacement, ...] = ()
    hands: tuple[HandPlacement, ...] = ()
    clutter: tuple[ClutterItem, ...] = ()
    markers: tuple[MarkerPlacement, ...] = ()
    tokens: tuple[TokenPlacement, ...] = ()

    def all_cards(self) -> tuple[CardPlacement, ...]:
        return self.cards + self.moving_cards


def table_markers(width_mm: float, height_mm: float, size_mm: float = 60.0) -> tuple[MarkerPlacement, ...]:
    """The four calibration markers, ids 0..3 at TL, TR, BR, BL of a `width × height` play area."""
    if width_mm <= 2 * size_mm or height_mm <= 2 * size_mm:
        raise SynthError(f"markers of {size_mm} mm do not fit a {width_mm}×{height_mm} mm area")
    pos = ((0.0, 0.0), (width_mm, 0.0), (width_mm, height_mm), (0.0, height_mm))
    return tuple(
        MarkerPlacement(marker_id=i, center_mm=p, size_mm=size_mm) for i, p in enumerate(pos)
    )


def pile(
    faces: Sequence[str],
    center_mm: tuple[float, float],
    *,
    rng: np.random.Generator,
    rotation_deg: float = 0.0,
    jitter_mm: float = 0.8,
    jitter_deg: float = 1.5,
    z0_mm: float = 0.0,
    zone: str | None = None,
    first_track: int | None = None,
    cards: Sequence[str | None] | None = None,
) -> tuple[CardPlacement, ...]:
    """A stack, bottom card first: each card a card-thickness higher, slightly offset and turned."""
    out = []
    for i, fid in enumerate(faces):
        dx, dy = rng.normal(0.0, jitter_mm, 2)
        out.append(
            CardPlacement(
                face_id=fid,
                center_mm=(center_mm[0] + dx, center_mm[1] + dy),
                rotation_deg=rotation_deg + rng.normal(0.0, jitter_deg),
                z_mm=z0_mm + i * CARD_THICKNESS_MM,
                zone=zone,
                track=None if first_track is None else first_track + i,
                card=None if cards is None else cards[i],
            )
        )
    return tuple(out)


def fan(
    faces: Sequence[str],
    pivot_mm: tuple[float, float],
    *,
    card_size_mm: tuple[float, float],
    rotation_deg: float = 0.0,
    spread_deg: float = 40.0,
    z0_mm: float = 0.0,
    zone: str | None = None,
    first_track: int | None = None,
) -> tuple[CardPlacement, ...]:
    """A fanned spread turning about a point near the cards' bottom edges (like a held hand)."""
    n = len(faces)
    _, h = card_size_mm
    out = []
    for i, fid in enumerate(faces):
        a = rotation_deg + (spread_deg * (i / (n - 1) - 0.5) if n > 1 else 0.0)
        r = math.radians(a)
        # The card's centre sits 0.4 h above the pivot along its own up direction.
        cx = pivot_mm[0] + math.sin(r) * 0.4 * h
        cy = pivot_mm[1] - math.cos(r) * 0.4 * h
        out.append(CardPlacement(face_id=fid, center_mm=(cx, cy), rotation_deg=a,
                                 z_mm=z0_mm + i * CARD_THICKNESS_MM, zone=zone,
                                 track=None if first_track is None else first_track + i))
    return tuple(out)


def row(
    faces: Sequence[str],
    start_mm: tuple[float, float],
    *,
    step_mm: tuple[float, float],
    rng: np.random.Generator,
    rotation_deg: float = 0.0,
    jitter_mm: float = 2.0,
    jitter_deg: float = 3.0,
    zone: str | None = None,
) -> tuple[CardPlacement, ...]:
    """Cards laid side by side (overlapping when the step is shorter than a card)."""
    out = []
    for i, fid in enumerate(faces):
        dx, dy = rng.normal(0.0, jitter_mm, 2)
        out.append(
            CardPlacement(
                face_id=fid,
                center_mm=(start_mm[0] + i * step_mm[0] + dx, start_mm[1] + i * step_mm[1] + dy),
                rotation_deg=rotation_deg + rng.normal(0.0, jitter_deg),
                z_mm=i * CARD_THICKNESS_MM * 0.5,
                zone=zone,
            )
        )
    return tuple(out)


def with_tracks(cards: Sequence[CardPlacement], first: int = 0) -> tuple[CardPlacement, ...]:
    """Number the cards that have no `track` yet, in order."""
    out = []
    n = first
    for c in cards:
        if c.track is None:
            c = replace(c, track=n)
        n = max(n, c.track + 1) if c.track is not None else n
        out.append(c)
    return tuple(out)
