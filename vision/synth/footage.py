"""Footage of whole games: a simulated game played out by hands on a rendered table, with truth.

The engine plays a random legal game (`engine.simulate`); after each move the engine's zones
(`Ruleset.zones`, piles top first) are compared with the physical table kept here, card by
card, which yields what physically happened: cards carried from one zone to another (a mined
card, a paid resource, a re-dealt pile, carried together as a stack) and cards turned over or
turned round in place (the next pile card revealed, a tool used). Each is acted out at the
clip's frame rate by the active player's hand: it reaches in from the player's edge, picks the
card up, carries it in an arc, puts it down and leaves; then the table rests a moment. Zones
come from the game's layout (`calibration.layout`): piles stack with visible thickness, spreads
lay cards in overlapping rows from persistent slots, a holder stands its card up. How each game
lays its cards out is its `Staging`: which face shows (a pile shows only its top card's front
unless the game keeps it face down), which cards lie turned 180 degrees, how many cards a
spread holds per row, and arrangements of its own (Explorers: items tucked under their chest;
Angry Birds: a structure of two verticals, a horizontal and a pig). The truth file records
every frame, a checkpoint with every zone's settled contents after each move, each move with
the frame where its last card was put down, and the engine's final state. Counter zones (token
areas, the die) are kept apart by `vision.synth.tokens.TokenTable`: a changed count is acted out
by the hand reaching to the zone, and each checkpoint carries the counts. `game_stills` shoots
single scenes of such games (a random point of a random game, its own camera each) for
training the card finder.
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, ClassVar

import cv2
import numpy as np
from tqdm import tqdm

from calibration.errors import LayoutError
from calibration.layout import Layout, Stacking, ZoneKind, build_layout
from engine import get_game
from engine.catalog import Catalog
from engine.core import Audience, Ruleset
from engine.errors import EngineError
from engine.scenario import parse_scenario
from engine.simulate import simulate_game
from vision.synth.camera import Camera, sample_camera
from vision.synth.clutter import random_clutter
from vision.synth.effects import RenderStyle, sample_style
from vision.synth.errors import SynthError
from vision.synth.faces import FaceLibrary
from vision.synth.hands import skin_tone, sleeve_color
from vision.synth.render import RenderResult, SceneRenderer, camera_truth
from vision.synth.scene import (
    CARD_THICKNESS_MM,
    CardPlacement,
    ClutterItem,
    HandPlacement,
    MarkerPlacement,
    Scene,
    TableSpec,
    table_markers,
)
from vision.synth.surfaces import TABLE_KINDS
from vision.synth.tokens import TokenTable, split_counters, token_gesture
from vision.synth.truth import (
    Checkpoint,
    ClipInfo,
    FrameTruth,
    MediaRef,
    MoveTruth,
    Truth,
    ZoneCard,
    write_truth,
)

GENERATOR = "cardtrack synth footage"
END_REST_SECONDS = 1.5  # still table after the last move
HOLDER_TILT_DEG = 68.0
_SPREAD_PER_ROW = 10


@dataclass(frozen=True, slots=True, kw_only=True)
class FootageConfig:
    """Options of one clip."""

    game: str
    players: int
    seed: int = 0
    moves: int | None = None
    fps: float = 30.0
    size: tuple[int, int] = (1280, 720)
    effects: float = 1.0
    drift: bool = True
    video: bool = True
    jpeg_quality: int = 90
    compress_truth: bool = False
    script: Mapping[str, Any] | None = None
    """A scenario document (docs/scenarios.md) to film instead of a simulated game."""


# --- which face shows -----------------------------------------------------------------------


FaceRule = Callable[[str, int, str, Any], str]


def generic_face(catalog: Catalog, layout: Layout) -> FaceRule:
    """A pile shows its top card's front and the others' backs; other zones show fronts."""
    piles = {z.id for z in layout.zones if z.stacking is Stacking.TOP_VISIBLE}

    def rule(zone: str, from_top: int, card: str, state: Any) -> str:
        ct = catalog.card(card)
        if zone in piles and from_top > 0:
            return ct.back
        return ct.front

    return rule


def mattel_face(catalog: Catalog, layout: Layout) -> FaceRule:
    """Minecraft Card Game (GAMES.md §1): resource piles face down under a face-up top card
    (all face up with setup `all-face-up`), craft piles and holders crafting side up, paid
    resources face down on the discard pile, a crafted card tool side up until its tool is
    used."""

    def rule(zone: str, from_top: int, card: str, state: Any) -> str:
        ct = catalog.card(card)
        if zone.startswith("resource-pile"):
            all_up = str(getattr(getattr(state, "options", None), "setup", "")) == "all-face-up"
            return ct.front if from_top == 0 or all_up else ct.back
        if zone == "discard":
            return ct.front if ct.kind == "craft" else ct.back
        if zone.startswith("player-") and ct.kind == "craft":
            used = getattr(state, "used", frozenset())
            return ct.front if card in used else ct.back
        return ct.front

    return rule


FACE_RULES: Mapping[str, Callable[[Catalog, Layout], FaceRule]] = {
    "minecraft-card-game": mattel_face,
}


# --- how each game lays its cards out ---------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class Spot:
    """Where a game puts one card within its zone, beyond the zone's stacking: a fixed spread
    `slot` (None: the first free one), an offset `du` (along the zone's facing: to the owner's
    right) and `dv` (away from the owner) in mm, an extra `turn_deg`, and an absolute height
    `z_mm` (None: from the stacking)."""

    slot: int | None = None
    du: float = 0.0
    dv: float = 0.0
    turn_deg: float = 0.0
    z_mm: float | None = None


class Staging:
    """How a game lays its cards out on camera. The base staging: the face rule given (the
    generic one by default), nothing turned, ten cards per spread row, spreads re-laid by the
    engine's order (cards after a change are picked up and put down again)."""

    stable_spreads = False  # keep the cards of a spread where they lie when others come or go

    def __init__(self, catalog: Catalog, layout: Layout, face_rule: FaceRule | None = None) -> None:
        self.catalog = catalog
        self.layout = layout
        self.face_rule = face_rule or generic_face(catalog, layout)

    def face(self, zone: str, from_top: int, card: str, state: Any) -> str:
        return self.face_rule(zone, from_top, card, state)

    def turn(self, zone: str, from_top: int, card: str, state: Any) -> float:
        """Degrees the card lies turned from its zone's facing (a damaged tool: 180)."""
        return 0.0

    def spot(self, zone: str, card: str, state: Any) -> Spot:
        return Spot()

    def per_row(self, zone: str) -> int:
        """Cards a spread lays side by side before it starts another row."""
        return _SPREAD_PER_ROW

    def offstage(self, zone: str) -> bool:
        """Whether the engine's `zone` is off the table: a player's hand (`hand-N`,
        `inventory-N`) or the box of cards out of play. Its cards are never drawn; a card
        going there is carried off the table by the player's hand, one coming from there is
        brought in from the player's edge."""
        return zone == "box" or _HAND_ZONE.fullmatch(zone) is not None


class ExplorersStaging(Staging):
    """Minecraft: Explorers (GAMES.md §2): the landscape deck and the display front up (a
    landscape's front, landscape format), the mob deck face down, table mobs, trophies and
    chests front up, a filled chest flipped to its back, explored landscapes item side up in
    the player areas and on the discard pile, a damaged tool turned 180 degrees, the hunger
    cards spent this turn turned 180 degrees, items tucked under their chest. Table mobs and
    a player's items and trophies lie side by side, as the layout's all-visible zones say, as
    many as the zone holds (6 mobs in 431 mm, 8 cards in a player's 560 mm) before a new row
    starts over the first; the chests and the turn cards are fanned."""

    stable_spreads = True
    _PER_ROW: ClassVar[Mapping[str, int]] = {"mobs": 6, "hunger": 7, "chests": 8, "player": 8}

    def _item_side(self, card: str) -> str:
        ct = self.catalog.card(card)
        return ct.back if ct.kind == "landscape" else ct.front

    def face(self, zone: str, from_top: int, card: str, state: Any) -> str:
        ct = self.catalog.card(card)
        if zone == "landscape-deck" or zone.startswith("display-"):
            return ct.front
        if zone == "mob-deck":
            return ct.back
        if zone == "chests" and ct.kind == "chest":
            return ct.back if card in getattr(state, "filled", frozenset()) else ct.front
        return self._item_side(card)

    def turn(self, zone: str, from_top: int, card: str, state: Any) -> float:
        if zone.startswith("player-") and card in getattr(state, "used", frozenset()):
            return 180.0
        if zone == "hunger" and card == "hunger" and from_top < int(getattr(state, "spent", 0)):
            return 180.0
        return 0.0

    def spot(self, zone: str, card: str, state: Any) -> Spot:
        if zone != "chests":
            return Spot()
        chests = tuple(getattr(state, "chests", ()))
        if card in chests:
            k = chests.index(card)
            return Spot(slot=k, z_mm=(8 * k + 5) * CARD_THICKNESS_MM)
        for k, items in enumerate(getattr(state, "chest_items", ())):
            if card in items:
                # Tucked under its chest: a sliver shows below it.
                j = list(items).index(card)
                return Spot(slot=k, dv=-4.0 - j, z_mm=(8 * k + min(j, 4)) * CARD_THICKNESS_MM)
        return Spot()

    def per_row(self, zone: str) -> int:
        return self._PER_ROW.get("player" if zone.startswith("player-") else zone, _SPREAD_PER_ROW)


class AngryBirdsStaging(Staging):
    """Angry Birds Power Cards (GAMES.md §4): decks face down (the structure part on the back
    shows), the round's cards face up in `battle-N`, the pot face down, and each structure
    built back side up: two verticals side by side, the horizontal beam across their tops, the
    pig on the beam."""

    stable_spreads = True
    # Per part of a structure, bottom first: (du, dv, turn, height in cards).
    _PARTS = ((-31.0, -15.0, 0.0, 0), (31.0, -15.0, 0.0, 1), (0.0, 23.0, 90.0, 2), (0.0, 60.0, 0.0, 3))
    _STRUCTURE_STEP_MM = 130.0

    def face(self, zone: str, from_top: int, card: str, state: Any) -> str:
        ct = self.catalog.card(card)
        return ct.front if zone.startswith("battle-") else ct.back

    def per_row(self, zone: str) -> int:
        return 1 if zone.startswith("structure-") else _SPREAD_PER_ROW

    def spot(self, zone: str, card: str, state: Any) -> Spot:
        if not zone.startswith("structure-"):
            return Spot()
        p = int(zone.rsplit("-", 1)[1])
        structures = getattr(state, "structures", ())
        own = structures[p - 1] if 0 < p <= len(structures) else ()
        for k, parts in enumerate(own):
            if card in parts:
                i = min(list(parts).index(card), len(self._PARTS) - 1)
                du, dv, turn, h = self._PARTS[i]
                return Spot(slot=0, du=du + k * self._STRUCTURE_STEP_MM, dv=dv, turn_deg=turn,
                            z_mm=(4 * k + h) * CARD_THICKNESS_MM)
        return Spot(slot=0)


STAGINGS: Mapping[str, Callable[[Catalog, Layout], Staging]] = {
    "minecraft-card-game": lambda c, lay: Staging(c, lay, mattel_face(c, lay)),
    "minecraft-explorers": ExplorersStaging,
    "angry-birds-power-cards": AngryBirdsStaging,
}


_HAND_ZONE = re.compile(r"(hand|inventory)-\d+")


def staging_for(game: str, catalog: Catalog, layout: Layout) -> Staging:
    """The game's staging (the generic one for a game without its own)."""
    make = STAGINGS.get(game)
    return make(catalog, layout) if make is not None else Staging(catalog, layout)


# --- the physical table ---------------------------------------------------------------------


@dataclass(slots=True)
class PhysCard:
    """One physical card on the table (mutable bookkeeping of the clip generator)."""

    track: int
    card: str
    zone: str
    face: str
    pose: CardPlacement
    slot: int = 0
    turn: float = 0.0


@dataclass(frozen=True, slots=True, kw_only=True)
class Carry:
    """Cards taken together from one zone to another: their poses before and after."""

    tracks: tuple[int, ...]
    src: tuple[CardPlacement, ...]
    dst: tuple[CardPlacement, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class Flip:
    """A card turned over (or turned round) where it lies."""

    track: int
    before: CardPlacement
    after: CardPlacement


@dataclass
class TableModel:
    """Cards per zone (bottom first) with stable tracks and poses, kept in step with the engine."""

    layout: Layout
    catalog: Catalog
    staging: Staging
    rng: np.random.Generator
    zones: dict[str, list[PhysCard]] = field(default_factory=dict)
    next_track: int = 0
    spare: np.ndarray | None = None
    _stacking: dict[str, Stacking] = field(default_factory=dict)
    _aggregates: frozenset[str] = frozenset()

    def __post_init__(self) -> None:
        self._stacking = {z.id: z.stacking for z in self.layout.zones}
        # A zone others nest in (mk. I's hotbar around its slots) lists their cards again.
        self._aggregates = frozenset(z.parent for z in self.layout.zones if z.parent)

    def _laid_elsewhere(self, zone: str) -> bool:
        """Whether the engine's `zone` is not laid out by itself: off the table (a hand, the
        box) or the sum of the zones nested in it."""
        return zone in self._aggregates or self.staging.offstage(zone)

    def _free_spot(self) -> np.ndarray:
        """A point clear of every zone and marker, near the table centre (transient zones)."""
        w, h = self.layout.table_mm
        ys, xs = np.mgrid[0:h:10.0, 0:w:10.0]
        pts = np.column_stack([xs.ravel(), ys.ravel()])
        clear = np.ones(len(pts), bool)
        for dx in (-55.0, 0.0, 55.0):
            for dy in (-55.0, 0.0, 55.0):
                hit = self.layout.assign_zones(pts + np.array([dx, dy]))
                clear &= np.array([z is None for z in hit])
        k = self.layout.keepout_mm
        for mx, my in ((0.0, 0.0), (w, 0.0), (w, h), (0.0, h)):
            clear &= np.hypot(pts[:, 0] - mx, pts[:, 1] - my) > k + 60.0
        clear &= (pts[:, 0] > 50) & (pts[:, 0] < w - 50) & (pts[:, 1] > 50) & (pts[:, 1] < h - 50)
        if not clear.any():
            return np.array([w / 2, h / 2])
        cand = pts[clear]
        return cand[int(np.argmin(np.hypot(cand[:, 0] - w / 2, cand[:, 1] - h / 2)))]

    def _zone_frame(self, zone_id: str) -> tuple[np.ndarray, float, Any]:
        """Centre, card turn (deg) and layout zone (None for a zone the layout lacks)."""
        try:
            z = self.layout.zone(zone_id)
        except KeyError:
            # A transient zone (the cards a TNT blast took): on a free spot of the table.
            if self.spare is None:
                self.spare = self._free_spot()
            return self.spare, 0.0, None
        facing = 0.0
        if z.player is not None:
            facing = next(s.facing_deg for s in self.layout.seats if s.player == z.player)
        return np.asarray(z.center, np.float64), facing, z

    def _pose(self, zone_id: str, index: int, slot: int, spot: Spot, turn_deg: float) -> CardPlacement:
        centre, facing, z = self._zone_frame(zone_id)
        size = self.catalog.card_size_mm
        jitter = self.rng.normal(0.0, 0.7, 2)
        turn = facing + float(self.rng.normal(0.0, 1.2)) + turn_deg
        a = math.radians(facing)
        along = np.array([math.cos(a), math.sin(a)])
        inward = np.array([math.sin(a), -math.cos(a)])  # away from the player
        offset = along * spot.du + inward * spot.dv
        if z is not None and z.kind is ZoneKind.HOLDER:
            # Standing in its holder, face towards the table's middle.
            return CardPlacement(face_id="", center_mm=(float(centre[0]), float(centre[1])),
                                 rotation_deg=facing + 180.0, tilt_deg=HOLDER_TILT_DEG)
        if z is not None and z.stacking in (Stacking.ALL_VISIBLE, Stacking.FANNED):
            x0, y0, x1, y1 = z.bounds
            long_x = (x1 - x0) >= (y1 - y0)
            length = (x1 - x0) if long_x else (y1 - y0)
            w = min(size)
            per_row = max(1, self.staging.per_row(zone_id))
            step = min(w + 6.0, max(12.0, (length - w) / max(1, per_row - 1)))
            row, col = divmod(slot, per_row)
            start = centre - along * (length / 2 - w / 2) if per_row > 1 else centre
            p = start + along * (col * step) + inward * (row * 22.0) + offset + jitter
            zmm = (row * per_row + col) * CARD_THICKNESS_MM if spot.z_mm is None else spot.z_mm
            return CardPlacement(face_id="", center_mm=(float(p[0]), float(p[1])), rotation_deg=turn,
                                 z_mm=zmm)
        p = centre + offset + jitter
        zmm = index * CARD_THICKNESS_MM if spot.z_mm is None else spot.z_mm
        return CardPlacement(face_id="", center_mm=(float(p[0]), float(p[1])), rotation_deg=turn, z_mm=zmm)

    def _free_slot(self, zone: str, exclude: PhysCard | None = None) -> int:
        used = {c.slot for c in self.zones.get(zone, []) if c is not exclude}
        s = 0
        while s in used:
            s += 1
        return s

    def _place(self, pc: PhysCard, zone: str, index: int, state: Any, from_top: int) -> None:
        pc.zone = zone
        spot = self.staging.spot(zone, pc.card, state)
        mine = pc if self.staging.stable_spreads else None
        pc.slot = spot.slot if spot.slot is not None else self._free_slot(zone, exclude=mine)
        pc.turn = self.staging.turn(zone, from_top, pc.card, state)
        pose = self._pose(zone, index, pc.slot, spot, pc.turn)
        pc.face = self.staging.face(zone, from_top, pc.card, state)
        pc.pose = replace(pose, face_id=pc.face, zone=zone, track=pc.track, card=pc.card)

    def _stable(self, zone: str) -> bool:
        return self.staging.stable_spreads and self._stacking.get(zone) in (Stacking.ALL_VISIBLE, Stacking.FANNED)

    def load(self, engine_zones: Mapping[str, Sequence[str | None]], state: Any) -> None:
        """Lay out the initial table."""
        self.zones = {}
        for zone, top_first in engine_zones.items():
            if self._laid_elsewhere(zone):
                continue
            cards = list(reversed([c for c in top_first if c is not None]))
            self.zones[zone] = []
            for i, card in enumerate(cards):
                pc = PhysCard(track=self.next_track, card=card, zone=zone, face="",
                              pose=CardPlacement(face_id="", center_mm=(0.0, 0.0)))
                self.next_track += 1
                self.zones[zone].append(pc)
                self._place(pc, zone, i, state, len(cards) - 1 - i)

    def sync(self, engine_zones: Mapping[str, Sequence[str | None]], state: Any) -> tuple[list[Carry], list[Flip]]:
        """Bring the table to the engine's zones; returns the carries and flips that did it."""
        removed: dict[str, list[PhysCard]] = {}
        added: dict[str, list[tuple[int, str]]] = {}
        new_lists: dict[str, list[str]] = {}
        # In zone order, not a set's: which of two cards with the same id is taken from the
        # departures below (and so every track id after it) must not depend on the hash seed.
        for zone in sorted(set(self.zones) | set(engine_zones)):
            if self._laid_elsewhere(zone):
                continue  # hands and the box (what leaves the table goes there, unseen), sums
            new = list(reversed([c for c in engine_zones.get(zone, ()) if c is not None]))
            new_lists[zone] = new
            old = self.zones.get(zone, [])
            if self._stable(zone):
                # A spread: the cards still there stay where they lie; only newcomers are placed.
                want = Counter(new)
                kept: list[PhysCard] = []
                gone: list[PhysCard] = []
                for pc in old:
                    if want[pc.card] > 0:
                        want[pc.card] -= 1
                        kept.append(pc)
                    else:
                        gone.append(pc)
                have = Counter(pc.card for pc in kept)
                arrivals: list[tuple[int, str]] = []
                for i, card in enumerate(new):
                    if have[card] > 0:
                        have[card] -= 1
                    else:
                        arrivals.append((i, card))
                removed[zone] = gone
                added[zone] = arrivals
                self.zones[zone] = kept
                continue
            k = 0
            while k < len(old) and k < len(new) and old[k].card == new[k]:
                k += 1
            removed[zone] = old[k:]
            added[zone] = [(i, new[i]) for i in range(k, len(new))]
            self.zones[zone] = old[:k]
        # Match arrivals to departures by card id.
        pool: dict[str, list[PhysCard]] = {}
        for cards in removed.values():
            for pc in cards:
                pool.setdefault(pc.card, []).append(pc)
        groups: dict[tuple[str, str], list[tuple[PhysCard, CardPlacement, int]]] = {}
        before_flip = {pc.track: (pc.face, pc.turn) for cards in self.zones.values() for pc in cards}
        for zone in sorted(added):
            for index, card in added[zone]:
                candidates = pool.get(card, [])
                if candidates:
                    pc = candidates.pop()
                else:  # a card the table did not show yet: it appears where the engine says
                    pc = PhysCard(track=self.next_track, card=card, zone=zone, face="",
                                  pose=CardPlacement(face_id="", center_mm=(0.0, 0.0)))
                    self.next_track += 1
                src_zone, src_pose = pc.zone, pc.pose
                self.zones[zone].append(pc)
                self._place(pc, zone, index, state, len(new_lists[zone]) - 1 - index)
                groups.setdefault((src_zone, zone), []).append((pc, src_pose, index))
        # Cards that left the table for a hand or the box: carried off by the player's hand.
        departures: dict[str, list[PhysCard]] = {}
        for pc in sorted((pc for cards in pool.values() for pc in cards), key=lambda pc: pc.track):
            departures.setdefault(pc.zone, []).append(pc)
        for zone in list(self.zones):
            if self._stable(zone):
                self.zones[zone] = _in_engine_order(self.zones[zone], new_lists.get(zone, []))
        # Faces and turns of cards that stayed may change (a new pile top, a used tool).
        flips: list[Flip] = []
        for zone, cards in self.zones.items():
            n = len(cards)
            for i, pc in enumerate(cards):
                face = self.staging.face(zone, n - 1 - i, pc.card, state)
                turn = self.staging.turn(zone, n - 1 - i, pc.card, state)
                if face == pc.face and turn == pc.turn:
                    continue
                before = pc.pose
                pc.pose = replace(pc.pose, face_id=face, rotation_deg=pc.pose.rotation_deg + turn - pc.turn)
                pc.face, pc.turn = face, turn
                if pc.track in before_flip:
                    flips.append(Flip(track=pc.track, before=before, after=pc.pose))
        carries = []
        for (_src, _dst), items in groups.items():
            items.sort(key=lambda t: t[2])
            carries.append(Carry(tracks=tuple(pc.track for pc, _, _ in items),
                                 src=tuple(p for _, p, _ in items),
                                 dst=tuple(pc.pose for pc, _, _ in items)))
        for _src, cards in sorted(departures.items()):
            # No pose on the table afterwards (face ""): the gesture takes them off the edge.
            carries.append(Carry(tracks=tuple(pc.track for pc in cards), src=tuple(pc.pose for pc in cards),
                                 dst=tuple(replace(pc.pose, face_id="") for pc in cards)))
        return carries, flips

    def placements(self, exclude: frozenset[int] = frozenset()) -> tuple[CardPlacement, ...]:
        """Every card at rest, in drawing order (lowest first)."""
        cards = [pc for zone in self.zones.values() for pc in zone if pc.track not in exclude]
        cards.sort(key=lambda pc: (pc.pose.z_mm + (50.0 if pc.pose.tilt_deg else 0.0), pc.track))
        return tuple(pc.pose for pc in cards)

    def checkpoint(self, frame: int, engine_zones: Mapping[str, Sequence[str | None]]) -> Checkpoint:
        out = {}
        for zone in engine_zones:
            cards = self.zones.get(zone, [])
            out[zone] = tuple(ZoneCard(face=pc.face, card=pc.card, track=pc.track) for pc in reversed(cards))
        return Checkpoint(frame=frame, zones=out)


def _in_engine_order(cards: list[PhysCard], bottom_first: Sequence[str]) -> list[PhysCard]:
    """The zone's cards listed as the engine lists them (bottom first)."""
    pool: dict[str, list[PhysCard]] = {}
    for pc in cards:
        pool.setdefault(pc.card, []).append(pc)
    out = [pool[c].pop(0) for c in bottom_first if pool.get(c)]
    out += [pc for rest in pool.values() for pc in rest]
    return out


# --- motion ---------------------------------------------------------------------------------


def _smooth(t: float) -> float:
    t = min(1.0, max(0.0, t))
    return t * t * (3.0 - 2.0 * t)


def _lerp(a: np.ndarray, b: np.ndarray, t: float) -> np.ndarray:
    return a + (b - a) * t


def _angle_lerp(a: float, b: float, t: float) -> float:
    d = (b - a + 180.0) % 360.0 - 180.0
    return a + d * t


@dataclass(frozen=True, slots=True, kw_only=True)
class FrameState:
    """What moves in one frame: carried cards and the hand."""

    moving: tuple[CardPlacement, ...] = ()
    hands: tuple[HandPlacement, ...] = ()
    hidden: frozenset[int] = frozenset()
    released: bool = False  # the frame where a carried or flipped card is put down


class Animator:
    """Turns carries and flips into frames of hand motion for one player."""

    def __init__(self, layout: Layout, fps: float, rng: np.random.Generator) -> None:
        self.layout = layout
        self.fps = fps
        self.rng = rng
        self.skins = {s.player: skin_tone(rng) for s in layout.seats}
        self.sleeves = {s.player: sleeve_color(rng) for s in layout.seats}

    def n(self, seconds: float) -> int:
        return max(1, round(seconds * self.fps))

    def seat_point(self, player: int) -> np.ndarray:
        w, h = self.layout.table_mm
        seat = next((s for s in self.layout.seats if s.player == player), self.layout.seats[0])
        edge = str(seat.edge)
        at = seat.at
        return {"bottom": np.array([at * w, h + 320.0]), "top": np.array([at * w, -320.0]),
                "left": np.array([-320.0, at * h]), "right": np.array([w + 320.0, at * h])}[edge]

    def hand_at(self, player: int, target: np.ndarray, height: float, curl: float) -> HandPlacement:
        origin = self.seat_point(player)
        d = target - origin
        ang = math.degrees(math.atan2(d[1], d[0]))
        a = math.radians(ang)
        reach = 0.72 * 185.0
        wrist = target - np.array([math.cos(a), math.sin(a)]) * reach
        return HandPlacement(wrist_mm=(float(wrist[0]), float(wrist[1])), direction_deg=ang,
                             height_mm=height, length_mm=185.0, spread=0.25, curl=curl,
                             arm_to_mm=(float(origin[0]), float(origin[1])),
                             skin=self.skins.get(player, (120, 160, 215)),
                             sleeve=self.sleeves.get(player))

    def _travel(self, player: int, a: np.ndarray, b: np.ndarray, seconds: float, height: tuple[float, float],
                curl: float, carried: Callable[[float], tuple[CardPlacement, ...]] | None,
                hidden: frozenset[int]) -> Iterator[FrameState]:
        n = self.n(seconds)
        for i in range(1, n + 1):
            t = _smooth(i / n)
            p = _lerp(a, b, t)
            h = height[0] + (height[1] - height[0]) * t + 35.0 * math.sin(math.pi * t)
            moving = carried(t) if carried else ()
            yield FrameState(moving=moving, hands=(self.hand_at(player, p, h, curl),), hidden=hidden)

    def gesture(self, player: int, carries: Sequence[Carry], flips: Sequence[Flip]) -> Iterator[FrameState]:
        """Frames of one move: reach, carry each group, turn cards over, leave."""
        start = self.seat_point(player)
        pos = start
        w, h = self.layout.table_mm
        edge = np.clip(start, [0.0, 0.0], [w, h])
        off = edge + (start - edge) * (90.0 / max(float(np.hypot(*(start - edge))), 1e-6))
        for c in carries:
            # A card from a hidden hand (no pose on the table yet) comes in from the player's edge;
            # one going to a hand (no pose on the table afterwards) leaves over it.
            c = replace(c, src=tuple(replace(d, center_mm=(float(edge[0]), float(edge[1])), z_mm=0.0)
                                     if not s.face_id else s for s, d in zip(c.src, c.dst, strict=True)))
            c = replace(c, dst=tuple(replace(s, center_mm=(float(off[0]), float(off[1])), z_mm=0.0)
                                     if not d.face_id else d for s, d in zip(c.src, c.dst, strict=True)))
            src_c = np.mean([p.center_mm for p in c.src], axis=0)
            dst_c = np.mean([p.center_mm for p in c.dst], axis=0)
            hidden = frozenset(c.tracks)
            held = c.src
            yield from self._travel(player, pos, src_c, 0.5, (70.0, 25.0), 0.1, lambda t, h=held: h, hidden)
            for _ in range(self.n(0.12)):
                yield FrameState(moving=held, hands=(self.hand_at(player, src_c, 22.0, 0.45),), hidden=hidden)

            def carried(t: float, c: Carry = c) -> tuple[CardPlacement, ...]:
                out = []
                lift = 30.0 * math.sin(math.pi * t)
                for s, d in zip(c.src, c.dst, strict=True):
                    centre = _lerp(np.asarray(s.center_mm), np.asarray(d.center_mm), t)
                    face = s.face_id if t < 0.5 else d.face_id
                    out.append(replace(d, face_id=face, zone=None, center_mm=(float(centre[0]), float(centre[1])),
                                       rotation_deg=_angle_lerp(s.rotation_deg, d.rotation_deg, t),
                                       tilt_deg=s.tilt_deg + (d.tilt_deg - s.tilt_deg) * t,
                                       z_mm=s.z_mm + (d.z_mm - s.z_mm) * t + lift + 2.0))
                return tuple(out)

            path = list(self._travel(player, src_c, dst_c, 0.7, (22.0, 22.0), 0.45, carried, hidden))
            path[-1] = replace(path[-1], released=True)
            yield from path
            pos = dst_c
        for f in flips:
            target = np.asarray(f.before.center_mm)
            hidden = frozenset({f.track})
            yield from self._travel(player, pos, target, 0.45, (60.0, 25.0), 0.1,
                                    lambda t, f=f: (f.before,), hidden)
            n = self.n(0.3)
            for i in range(n):
                t = (i + 1) / n
                card = f.before if t < 0.5 else f.after
                lift = 25.0 * math.sin(math.pi * t)
                turn = _angle_lerp(f.before.rotation_deg, f.after.rotation_deg, t)
                yield FrameState(moving=(replace(card, z_mm=card.z_mm + lift, rotation_deg=turn),),
                                 hands=(self.hand_at(player, target, 25.0 + lift, 0.4),), hidden=hidden,
                                 released=i == n - 1)  # a flipped card is put down too
            pos = target
        if carries or flips:
            yield from self._travel(player, pos, start, 0.5, (30.0, 90.0), 0.2, None, frozenset())


# --- the clip -------------------------------------------------------------------------------


def _clutter_off_zones(rng: np.random.Generator, layout: Layout, count: int) -> tuple[ClutterItem, ...]:
    """Up to `count` things on or beside the table, none in a zone, none near a marker. A
    mug stands on the table by its whole base: no card can be laid under it, so no point of
    its base lies in a zone (its body may still lean over a zone's cards in the picture).
    Flat things lie under the cards and are kept off the zones by their centre."""
    w, h = layout.table_mm
    out: list[ClutterItem] = []
    rim = np.linspace(0.0, 2.0 * math.pi, 16, endpoint=False)
    for item in random_clutter(rng, (-150.0, -150.0, w + 150.0, h + 150.0), count * 4):
        x, y = item.center_mm
        near_marker = any(math.hypot(x - mx, y - my) < 110.0 for mx, my in ((0, 0), (w, 0), (w, h), (0, h)))
        footprint = [(x, y)]
        if item.kind.value == "mug":
            r = item.size_mm[0] / 2.0
            footprint += [(x + r * math.cos(a), y + r * math.sin(a)) for a in rim]
        on_zone = any(
            0.0 <= px <= w and 0.0 <= py <= h and layout.zone_at((px, py)) is not None
            for px, py in footprint
        )
        if on_zone or near_marker:
            continue
        out.append(replace(item, over_cards=item.kind.value == "mug"))
        if len(out) == count:
            break
    return tuple(out)


@dataclass(frozen=True, slots=True)
class _Dressing:
    """What surrounds a game's cards in a shot: markers, camera, look, table, clutter."""

    markers: tuple[MarkerPlacement, ...]
    camera: Camera
    style: RenderStyle
    table: TableSpec
    clutter: tuple[ClutterItem, ...]


def _dress(rng: np.random.Generator, layout: Layout, size: tuple[int, int], effects: float) -> _Dressing:
    w_mm, h_mm = layout.table_mm
    markers = table_markers(w_mm, h_mm)
    camera = sample_camera(rng, (-40.0, -40.0, w_mm + 40.0, h_mm + 40.0), size)
    style = sample_style(rng, strength=effects)
    tspec = TableSpec(surface=TABLE_KINDS[int(rng.integers(len(TABLE_KINDS)))], seed=int(rng.integers(1000)),
                      extent_mm=(-260.0, -260.0, w_mm + 260.0, h_mm + 260.0))
    clutter = _clutter_off_zones(rng, layout, int(rng.integers(1, 5)))
    return _Dressing(markers, camera, style, tspec, clutter)


def game_stills(game: str, lib: FaceLibrary, *, seed: int, count: int, size: tuple[int, int] = (1280, 720),
                effects: float = 1.0, per_game: int = 4) -> Iterator[tuple[Scene, Camera, RenderStyle]]:
    """`count` single shots of random games of `game`, laid out as footage lays them: the table
    after a random number of moves, about half of them with a hand in the middle of a move.
    Every shot has its own camera, look, table surface and clutter; `per_game` shots come from
    each simulated game. Training data for the card finder that looks like a game in play."""
    try:
        ruleset: Ruleset[Any, Any] = get_game(game)
    except EngineError as exc:
        raise SynthError(f"stills: {exc}") from None
    rng = np.random.default_rng([seed, 0x5711])
    made = 0
    while made < count:
        players = int(rng.integers(ruleset.min_players, ruleset.max_players + 1))
        try:
            layout = build_layout(game, players)
        except LayoutError as exc:
            raise SynthError(f"stills: {exc}") from None
        sim = simulate_game(ruleset, players=players, seed=int(rng.integers(2**31)))
        state = ruleset.initial_state(players=players, seed=sim.seed, options=sim.options)
        table = TableModel(layout=layout, catalog=ruleset.catalog,
                           staging=staging_for(game, ruleset.catalog, layout), rng=rng)
        card_zones, counts = split_counters(layout, ruleset.zones(state))
        table.load(card_zones, state)
        tokens = TokenTable(layout=layout, rng=rng)
        tokens.load(counts)
        animator = Animator(layout, 15.0, rng)
        k = min(per_game, count - made, len(sim.moves) + 1)
        shots = set(rng.choice(len(sim.moves) + 1, size=k, replace=False).tolist())
        for i in range(max(shots) + 1):
            frame = FrameState()
            if i > 0:
                move = sim.moves[i - 1]
                state = ruleset.apply(state, move).state
                card_zones, counts = split_counters(layout, ruleset.zones(state))
                carries, flips = table.sync(card_zones, state)
                for zone in tokens.changes(counts):
                    tokens.apply(zone, *counts[zone])
                if i in shots and rng.random() < 0.5 and (carries or flips):
                    player = _move_player(ruleset.move_to_dict(move), 1)
                    frames = list(animator.gesture(player, carries, flips))
                    frame = frames[int(rng.integers(len(frames)))]
            if i not in shots:
                continue
            dressing = _dress(rng, layout, size, effects)
            scene = Scene(table=dressing.table, cards=table.placements(frame.hidden), moving_cards=frame.moving,
                          hands=frame.hands, clutter=dressing.clutter, markers=dressing.markers,
                          tokens=tokens.placements())
            yield scene, dressing.camera, dressing.style
            made += 1


def _move_player(move: Mapping[str, Any], default: int) -> int:
    p = move.get("player")
    return int(p) if isinstance(p, int) and not isinstance(p, bool) else default


def make_footage(
    config: FootageConfig,
    lib: FaceLibrary,
    out_dir: str | Path,
    *,
    art: tuple[str, ...] = (),
    progress: bool = True,
) -> Truth:
    """Simulate, animate and render a clip into `out_dir` (clip.mp4 or frames/, truth.json)."""
    try:
        ruleset: Ruleset[Any, Any] = get_game(config.game)
    except EngineError as exc:
        raise SynthError(f"footage: {exc} (only games with a ruleset can be animated)") from None
    try:
        layout = build_layout(config.game, config.players)
    except LayoutError as exc:
        raise SynthError(f"footage: {exc}") from None
    catalog = ruleset.catalog
    missing = sorted({f for c in catalog.cards.values() for f in (c.front, c.back)} - set(lib.ids()))
    if missing:
        raise SynthError(
            f"the art has no image for {len(missing)} faces of {config.game} "
            f"(e.g. {', '.join(missing[:4])}); use --art proxy or complete the pack"
        )
    if config.script is not None:
        try:
            scenario = parse_scenario(config.script, "footage script")
            if scenario.game != config.game or scenario.players != config.players:
                raise SynthError(
                    f"footage: the script is a {scenario.players}-player {scenario.game} game, "
                    f"not {config.players}-player {config.game}"
                )
            state = ruleset.initial_state(players=scenario.players, options=scenario.options,
                                          seed=scenario.seed, setup=scenario.setup)
            scripted = [ruleset.parse_move(m) for m in scenario.moves]
        except EngineError as exc:
            raise SynthError(f"footage: {exc}") from None
        total_moves = len(scripted)
    else:
        game = simulate_game(ruleset, players=config.players, seed=config.seed)
        state = ruleset.initial_state(players=config.players, seed=game.seed, options=game.options)
        scripted = list(game.moves)
        total_moves = len(game.moves)
    moves = scripted if config.moves is None else scripted[: config.moves]
    rng = np.random.default_rng([config.seed, 0xF007])
    staging = staging_for(config.game, catalog, layout)
    table = TableModel(layout=layout, catalog=catalog, staging=staging, rng=rng)
    card_zones, counts = split_counters(layout, ruleset.zones(state))
    table.load(card_zones, state)
    tokens = TokenTable(layout=layout, rng=np.random.default_rng([config.seed, 0x70C]))
    tokens.load(counts)

    dressing = _dress(rng, layout, config.size, config.effects)
    markers, camera, tspec, clutter = dressing.markers, dressing.camera, dressing.table, dressing.clutter
    style = replace(dressing.style, jpeg_quality=None, motion_blur_px=0.0)  # the video codec compresses
    animator = Animator(layout, config.fps, rng)
    renderer = SceneRenderer(lib, canvas_margin=0.02 if config.drift else 0.0, noise_seed=config.seed)

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    writer = None
    frames_dir = out / "frames"
    if config.video:
        writer = cv2.VideoWriter(str(out / "clip.mp4"), cv2.VideoWriter_fourcc(*"mp4v"), config.fps,  # type: ignore[attr-defined]
                                 config.size)
        if not writer.isOpened():
            raise SynthError(f"{out / 'clip.mp4'}: cannot open an MP4 writer; pass --frames to write images")
    else:
        frames_dir.mkdir(exist_ok=True)

    frames: list[FrameTruth] = []
    checkpoints: list[Checkpoint] = []
    move_truths: list[MoveTruth] = []

    def emit(fs: FrameState) -> int:
        i = len(frames)
        cam: Camera = camera
        if config.drift:
            t = i / config.fps
            cam = camera.rotated(np.array([0.0015 * math.sin(0.31 * t), 0.0012 * math.sin(0.23 * t + 1.0),
                                           0.0008 * math.sin(0.17 * t + 2.0)]))
        scene = Scene(table=tspec, cards=table.placements(fs.hidden), moving_cards=fs.moving,
                      hands=fs.hands, clutter=clutter, markers=markers, tokens=tokens.placements())
        result: RenderResult = renderer.render(scene, cam, style, seed=(config.seed, i))
        name = None
        if writer is not None:
            writer.write(result.image)
        else:
            name = f"frames/{i:06d}.jpg"
            cv2.imwrite(str(out / name), result.image, [cv2.IMWRITE_JPEG_QUALITY, config.jpeg_quality])
        frames.append(FrameTruth(index=i, time_s=i / config.fps, image=name, camera=camera_truth(cam),
                                 cards=result.cards, markers=result.markers, hands=result.hands))
        return i

    def rest(seconds: float) -> None:
        for _ in range(animator.n(seconds)):
            emit(FrameState())

    bar = tqdm(total=len(moves), desc="synth footage", unit="move", disable=not progress)
    try:
        rest(1.0)
        checkpoints.append(replace(table.checkpoint(len(frames) - 1, card_zones),
                                   counts=tokens.checkpoint_counts()))
        for move in moves:
            step = ruleset.apply(state, move)
            state = step.state
            card_zones, counts = split_counters(layout, ruleset.zones(state))
            carries, flips = table.sync(card_zones, state)
            mdict = ruleset.move_to_dict(move)
            player = _move_player(mdict, 1)
            # A move completes when its last card is put down; a move that changes nothing
            # on the table (an end of turn) completes where it happens.
            done = max(len(frames) - 1, 0)
            for fs in animator.gesture(player, carries, flips):
                i = emit(fs)
                if fs.released:
                    done = i
            changed = tokens.changes(counts)
            if changed:  # tokens taken, added or the die rolled: the hand reaches to each zone
                for hand in token_gesture(animator.hand_at, animator.seat_point(player), player, changed,
                                          tokens, counts, animator.n):
                    done = emit(FrameState(hands=(hand,)))
            move_truths.append(MoveTruth(frame=done, move=mdict))
            rest(float(rng.uniform(0.4, 0.9)))
            checkpoints.append(replace(table.checkpoint(len(frames) - 1, card_zones),
                                       counts=tokens.checkpoint_counts()))
            bar.update(1)
        # The table rests at the end long enough for a camera to read the last move (a zone
        # settles a quarter second after the hand left).
        rest(END_REST_SECONDS)
    finally:
        bar.close()
        if writer is not None:
            writer.release()
    final = json.loads(json.dumps(ruleset.view(state, Audience.OPERATOR), default=str))
    truth = Truth(
        clip=ClipInfo(game=config.game, players=config.players, fps=config.fps, frame_size=config.size,
                      source="synthetic",
                      media=MediaRef(kind="video", path="clip.mp4") if config.video
                      else MediaRef(kind="frames", path="frames"),
                      generator=GENERATOR, seed=config.seed, art=art,
                      extra={"moves_in_game": total_moves, "moves_shown": len(moves),
                             "scripted": config.script is not None}),
        frames=tuple(frames),
        checkpoints=tuple(checkpoints),
        moves=tuple(move_truths),
        final_state=final,
    )
    write_truth(truth, out / ("truth.json.gz" if config.compress_truth else "truth.json"))
    return truth

