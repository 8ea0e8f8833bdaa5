"""Which zone each tracked card lies in, which card is on top, and the zones as image polygons.

The calibration puts every track's centre in table millimetres; the game's layout
(`calibration.layout`) names the innermost zone under it. A card on the table but outside every
zone of the layout goes to the game's *loose* zone when it has one (the Mattel game lays the
cards of a TNT blast out on a free spot of the table: its engine zone `tnt`), and is otherwise
left out (a card carried over the table by a hand, a card pushed off its zone). Within a zone
the cards are listed top first: for a pile (top-visible or single stacking) the newest track is
on top, because a card put on a pile is seen as a new track while the one it covers is lost to
the camera; a spread lists every card, newest first. A card's `rotated_180` says whether it
lies turned round for the zone's owner (a damaged tool in Explorers): the identifier reads the
turn against the crop, the track's corners say how the crop lay on the table, and the zone's
seat (`Seat.facing_deg`; the table's top edge for a shared zone) says which way is up.
`zone_polygons_image` projects the zones into the image for the settle gate; the loose zone is
the whole table there, so it is read only when no hand is anywhere over the table. Loose zones
are per-game data (`LOOSE_ZONES`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from types import MappingProxyType

import cv2
import numpy as np

from calibration.layout import Layout, Stacking
from engine.snapshot import Candidate, SeenCard
from vision.tracker import Track

# Games whose engine knows a zone the layout leaves to a free spot of the table.
LOOSE_ZONES: Mapping[str, str] = MappingProxyType({"minecraft-card-game": "tnt"})
# Games whose spreads stack cards over one another (`ZoningConfig.unnamed_frames`): frames.
UNNAMED_FRAMES: Mapping[str, int] = MappingProxyType({"angry-birds-power-cards": 30, "minecraft-explorers": 30})
# Of those, the games where a card not named lying on a named one is covered at once
# (`ZoningConfig.overlap_share`): share.
OVERLAP_SHARES: Mapping[str, float] = MappingProxyType({"angry-birds-power-cards": 0.5})
# Games whose all-visible zones truly lie side by side (`ZoningConfig.straddle_share`): share.
# The Mattel layout calls a player's area all-visible, but players fan it.
STRADDLE_SHARES: Mapping[str, float] = MappingProxyType({"minecraft-explorers": 0.25})

PointMap = Callable[[np.ndarray], np.ndarray]


class ZoningError(ValueError):
    """A zoning configuration or input that cannot be used; the message names the field."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ZoningConfig:
    """Zone assignment parameters.

    - `loose_zone`: zone id given to cards lying on the table outside every layout zone (None:
      such cards are left out). Only for games whose engine has such a zone (`LOOSE_ZONES`).
    - `table_margin_mm`: how far beyond the table's marker rectangle a loose card may lie.
      Larger keeps a card pushed to the edge; smaller ignores objects beside the table.
    - `sure_score`: the finder confidence (a track's peak) from which a card is surely a card.
      A weaker one counts only once the identifier names it: until then it does not hold its
      zone back from being read, so that a faint false detection on the cloth freezes nothing,
      while a faint real card (small, far from the camera) is still read once it is named.
    - `faces_once`: faces only one card of the deck shows (`Catalog.faces_once`). Two cards of
      a pile or a one-card zone named as such a face are one card seen twice (the finder laid
      a second quad on it, a few pixels off, or an old track of it lingers): the zone keeps
      the one on top. In a spread (cards side by side or fanned) so only when their centres
      lie less than `seen_twice` of the card's short side apart (`Layout.card_mm`): farther
      apart they are two cards of the spread, one of them misnamed for now, and both are
      kept for the identifier to settle.
    - `unnamed_frames`: in a spread, a card found with confidence that the identifier has not
      named after this many frames on the table (2 s at 15 frames a second), among named
      cards of its zone (an Angry Birds structure's vertical half under its beam), stops
      holding the zone back: the zone is read without it, as a card too covered to be named,
      where it would otherwise never be read again; the snapshot counts it
      (`ZoneContents.unnamed`). With no named card beside it, such a
      card still holds its zone back (a card under a mug is not read as gone). None (the
      default; `for_game` sets it for the games in `UNNAMED_FRAMES`): never. Where cards of a
      spread only overlap (a fanned hand), a card not yet named is better waited for.
    - `overlap_share`: with `unnamed_frames` set, a card not named that lies at least this
      share of its area (in the picture) on a named card of its spread is covered at once,
      without waiting `unnamed_frames`: it is a card under the named one, or the finder's
      second quad on the named card itself, a few pixels off (a sheet of paper beside the
      card draws it out), and either would otherwise keep the zone from being read while it
      lies there. In a one-card slot that holds a named card, any card not named is covered
      at once: the slot holds no second card. None: neither, a card not named waits
      `unnamed_frames` wherever it lies. `for_game` sets it for the games in
      `OVERLAP_SHARES` only: in an Explorers row a mob just turned up lies half on the last
      one and is named a few frames later, and a card read past is counted as a card not
      named (`TableSnapshot.unnamed`), which the rules read as any card of the row.
    - `straddle_share`: in a zone whose cards lie side by side (`Stacking.ALL_VISIBLE`), a card
      lying at least this share of its area (in the picture) on each of two other cards of
      the zone, both found with more confidence (`Track.peak_score`), is no card: it is the
      finder's quad over the gap between the two (half of one card, half of the next; an
      Explorers mob row read with five mobs for four, the fifth named as a spider), and it is
      left out of the zone. A card really laid across two is found surer than either, being
      whole and on top. None (the default; `for_game` sets it for the games in
      `STRADDLE_SHARES`): never. Where cards overlap by design (fans, piles) a card lying on
      two neighbours is an ordinary sight.
    """

    loose_zone: str | None = None
    table_margin_mm: float = 0.0
    sure_score: float = 0.5
    faces_once: frozenset[str] = frozenset()
    seen_twice: float = 0.3
    unnamed_frames: int | None = None
    overlap_share: float | None = 0.5
    straddle_share: float | None = None

    def __post_init__(self) -> None:
        if self.loose_zone is not None and not self.loose_zone:
            raise ZoningError("ZoningConfig.loose_zone: a zone id or None, not an empty string")
        if self.table_margin_mm < 0:
            raise ZoningError("ZoningConfig.table_margin_mm: must be 0 or more")
        if not 0.0 <= self.sure_score <= 1.0:
            raise ZoningError("ZoningConfig.sure_score: must lie in [0, 1]")
        if not 0.0 <= self.seen_twice <= 1.0:
            raise ZoningError("ZoningConfig.seen_twice: a fraction of the card's short side, in [0, 1]")
        if self.unnamed_frames is not None and self.unnamed_frames < 1:
            raise ZoningError("ZoningConfig.unnamed_frames: a number of frames, 1 or more, or None")
        if self.overlap_share is not None and not 0.0 < self.overlap_share <= 1.0:
            raise ZoningError("ZoningConfig.overlap_share: a share of a card's area, in (0, 1], or None")
        if self.straddle_share is not None and not 0.0 < self.straddle_share <= 1.0:
            raise ZoningError("ZoningConfig.straddle_share: a share of a card's area, in (0, 1], or None")

    @classmethod
    def for_game(cls, game: str) -> ZoningConfig:
        """The defaults for `game` (its loose zone, if it has one; the faces its deck shows
        once; how long an unnamed card may hold a spread back, if that ends, and whether one
        lying on a named card stops at once; whether a card over the gap between two others of
        a side-by-side zone is left out)."""
        from engine import get_game

        return cls(loose_zone=LOOSE_ZONES.get(game), faces_once=get_game(game).catalog.faces_once(),
                   unnamed_frames=UNNAMED_FRAMES.get(game), overlap_share=OVERLAP_SHARES.get(game),
                   straddle_share=STRADDLE_SHARES.get(game))


@dataclass(frozen=True, slots=True, kw_only=True)
class ZonedCard:
    """One tracked card in a zone."""

    track_id: int
    zone: str
    first_frame: int
    candidates: tuple[Candidate, ...]  # identity evidence, best first; empty: not identified
    rotated_180: bool
    turn_known: bool = True  # the way round read with the card's current look (`Track.turn_known`)
    sure: bool = True  # found with confidence (`ZoningConfig.sure_score`); else counts once named
    covered: bool = False  # in a spread, unnamed for long beside, or lying on, a named card (`ZoningConfig.unnamed_frames`)

    @property
    def identified(self) -> bool:
        return bool(self.candidates)

    def seen(self) -> SeenCard:
        """The card as the engine's snapshot holds it (needs at least one candidate)."""
        if not self.candidates:
            raise ZoningError(f"track {self.track_id}: not identified yet, it has no candidates")
        return SeenCard(candidates=self.candidates, track_id=self.track_id, rotated_180=self.rotated_180,
                        turn_known=self.turn_known)


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class ZoneContents:
    """Every zone's cards, top (newest) first, and the tracks that lie in no zone."""

    zones: Mapping[str, tuple[ZonedCard, ...]]
    outside: tuple[int, ...]  # track ids off every zone

    def cards(self, zone: str) -> tuple[ZonedCard, ...]:
        return self.zones.get(zone, ())

    def ready(self, zone: str) -> bool:
        """True when every card of the zone has been identified (the zone can be read); a
        faint detection not named yet (`ZonedCard.sure` false) or a card too covered to be
        named (`ZonedCard.covered`) does not count."""
        return all(c.identified or not c.sure or c.covered for c in self.cards(zone))

    def unnamed(self, zone: str) -> int:
        """How many cards of the zone are read without a name (`ZonedCard.covered`): found
        surely, never named, read past."""
        return sum(1 for c in self.cards(zone) if c.covered and c.sure and not c.identified)

    def signature(self, zone: str) -> tuple[tuple[int, str | None], ...]:
        """What the zone shows, for noticing a change: its tracks and their best faces."""
        return tuple((c.track_id, c.candidates[0].face if c.candidates else None) for c in self.cards(zone))

    def seen(self, zone: str) -> tuple[SeenCard, ...]:
        """The zone's identified cards as snapshot cards, top first."""
        return tuple(c.seen() for c in self.cards(zone) if c.identified)


def zone_ids(layout: Layout, config: ZoningConfig) -> tuple[str, ...]:
    """The layout's zone ids, then the loose zone if any."""
    ids = layout.ids()
    if config.loose_zone is not None and config.loose_zone not in ids:
        return (*ids, config.loose_zone)
    return ids


def table_polygon(layout: Layout, margin_mm: float = 0.0) -> np.ndarray:
    """(4, 2) the table's marker rectangle in mm, grown by `margin_mm`."""
    w, h = layout.table_mm
    m = margin_mm
    return np.array([[-m, -m], [w + m, -m], [w + m, h + m], [-m, h + m]], np.float64)


def zone_facing(layout: Layout) -> dict[str, float]:
    """Zone id -> the direction (deg, as `Seat.facing_deg`) of a card lying upright for the
    zone's owner; 0 (the table's top edge) for a shared zone."""
    seats = {s.player: s.facing_deg for s in layout.seats}
    return {z.id: seats.get(z.player, 0.0) if z.player is not None else 0.0 for z in layout.zones}


def turned_round(track: Track, facing_deg: float) -> bool:
    """Whether the track's card lies turned more than a quarter from `facing_deg`: its width
    runs along the crop's first edge (`angle_deg`) when that edge is the short one, along the
    last edge reversed for a landscape crop (read turned a quarter clockwise), and the other
    way when the identifier read the crop upside down. Which edge the crop took as the short
    one is how it was cut (`Track.cut_wide`), not the longer edge in the image, which a steep
    view of a far card gets wrong. A card no crop has named yet has no turn read (False)."""
    if track.cut_wide is None:
        return False
    theta = track.angle_deg - (90.0 if track.cut_wide else 0.0) + (180.0 if track.rotated_180 else 0.0)
    rel = (theta - facing_deg + 180.0) % 360.0 - 180.0
    return abs(rel) > 90.0


def _seen_once(cards: tuple[ZonedCard, ...], centres: Mapping[int, np.ndarray], once: frozenset[str],
               within_mm: float | None) -> tuple[ZonedCard, ...]:
    """`cards` (top first) without the lower ones named as a face that only one card of the
    deck shows, already named by a card above them whose centre lies within `within_mm`
    (None: anywhere in the zone)."""
    if not once or len(cards) < 2:
        return cards
    kept: list[ZonedCard] = []
    for card in cards:
        face = card.candidates[0].face if card.candidates else None
        if face is not None and face in once and any(
            k.candidates and k.candidates[0].face == face
            and (within_mm is None
                 or float(np.hypot(*(centres[k.track_id] - centres[card.track_id]))) < within_mm)
            for k in kept
        ):
            continue
        kept.append(card)
    return tuple(kept)


def _on_named(cards: list[ZonedCard], corners: Mapping[int, np.ndarray], share: float) -> list[ZonedCard]:
    """`cards` with each sure card not named that lies at least `share` of its area on a named
    card of the same zone marked `covered` (see `ZoningConfig.overlap_share`); with `share` 0,
    every such card beside a named one. `corners`: each track's (4, 2) image corners."""
    waiting = {c.track_id for c in cards if c.sure and not c.identified and not c.covered}
    named = [c.track_id for c in cards if c.identified]
    if not waiting or not named:
        return cards  # the common case, every frame: nothing to measure

    def hull(track_id: int) -> np.ndarray:
        return cv2.convexHull(np.asarray(corners[track_id], np.float32))

    others = [hull(t) for t in named] if share else []

    def lies_on_named(track_id: int) -> bool:
        if not share:
            return True
        quad = hull(track_id)
        area = float(cv2.contourArea(quad))
        return area > 0 and any(float(cv2.intersectConvexConvex(quad, o)[0]) >= share * area for o in others)

    return [replace(c, covered=True) if c.track_id in waiting and lies_on_named(c.track_id) else c for c in cards]


def _straddling(cards: list[ZonedCard], tracks: Mapping[int, Track], share: float) -> list[ZonedCard]:
    """`cards` without those lying at least `share` of their area (in the picture) on each of
    two other cards of the zone found with more confidence (see `ZoningConfig.straddle_share`)."""
    if len(cards) < 3:
        return cards
    hulls = {c.track_id: cv2.convexHull(np.asarray(tracks[c.track_id].corners, np.float32)) for c in cards}
    boxes = {k: cv2.boundingRect(h) for k, h in hulls.items()}

    def touch(a: int, b: int) -> bool:
        ax, ay, aw, ah = boxes[a]
        bx, by, bw, bh = boxes[b]
        return ax < bx + bw and bx < ax + aw and ay < by + bh and by < ay + ah

    def straddles(card: ZonedCard) -> bool:
        me = card.track_id
        area = float(cv2.contourArea(hulls[me]))
        if area <= 0:
            return False
        peak = tracks[me].peak_score
        under = 0
        for other in cards:
            k = other.track_id
            if k == me or tracks[k].peak_score <= peak or not touch(me, k):
                continue
            if float(cv2.intersectConvexConvex(hulls[me], hulls[k])[0]) >= share * area:
                under += 1
        return under >= 2

    return [c for c in cards if not straddles(c)]


def _named_beside(cards: list[ZonedCard]) -> list[ZonedCard]:
    """`cards` with the `covered` mark kept only where a named card lies beside it (see
    `ZoningConfig.unnamed_frames`): alone, an unnamed card still holds its zone back."""
    if not any(c.covered for c in cards) or any(c.identified for c in cards):
        return cards
    return [replace(c, covered=False) for c in cards]


def _top_first(cards: list[ZonedCard]) -> tuple[ZonedCard, ...]:
    # Piles and spreads alike: the newest card was put down last, so it lies on top / is the
    # most recent. A pile shows only that one; the engine reads only the first card of a pile.
    return tuple(sorted(cards, key=lambda c: (-c.first_frame, -c.track_id)))


def assign_cards(layout: Layout, tracks: Sequence[Track], config: ZoningConfig) -> ZoneContents:
    """Put each track in the innermost zone under its centre (table mm), top first per zone."""
    names = zone_ids(layout, config)
    spreads = {z.id for z in layout.zones if z.stacking in (Stacking.ALL_VISIBLE, Stacking.FANNED)}
    spreads.add(config.loose_zone or "")  # the loose zone lays its cards out side by side
    found: dict[str, list[ZonedCard]] = {name: [] for name in names}
    outside: list[int] = []
    centres_by_id: dict[int, np.ndarray] = {}
    if tracks:
        centres = np.array([t.center_mm for t in tracks], np.float64).reshape(-1, 2)
        centres_by_id = {t.track_id: c for t, c in zip(tracks, centres, strict=True)}
        hits = layout.assign_zones(centres)
        facing = zone_facing(layout)
        w, h = layout.table_mm
        m = config.table_margin_mm
        on_table = (
            (centres[:, 0] >= -m) & (centres[:, 0] <= w + m) & (centres[:, 1] >= -m) & (centres[:, 1] <= h + m)
        )
        frames = config.unnamed_frames
        for track, zone, inside in zip(tracks, hits, on_table, strict=True):
            if zone is None and config.loose_zone is not None and bool(inside):
                zone = config.loose_zone
            if zone is None:
                outside.append(track.track_id)
                continue
            found[zone].append(
                ZonedCard(
                    track_id=track.track_id,
                    zone=zone,
                    first_frame=track.first_frame,
                    candidates=track.candidates,
                    rotated_180=turned_round(track, facing.get(zone, 0.0)),
                    turn_known=track.turn_known,
                    sure=track.peak_score >= config.sure_score,
                    covered=(
                        frames is not None and not track.candidates and zone in spreads
                        and track.last_frame - track.first_frame >= frames
                    ),
                )
            )
    if config.straddle_share is not None:
        by_id = {t.track_id: t for t in tracks}
        for zone in layout.zones:
            if zone.stacking is Stacking.ALL_VISIBLE and zone.id in found:
                found[zone.id] = _straddling(found[zone.id], by_id, config.straddle_share)
    if config.unnamed_frames is not None and config.overlap_share is not None:
        corners = {t.track_id: t.corners for t in tracks}
        singles = {z.id for z in layout.zones if z.stacking is Stacking.SINGLE}
        for name in (spreads | singles) & found.keys():
            # A one-card slot holding a named card holds no second card: any other found in
            # it lies on that one (or is the finder's quad half on it, half on the cloth).
            share = 0.0 if name in singles else config.overlap_share
            found[name] = _on_named(found[name], corners, share)
    within_mm = config.seen_twice * min(layout.card_mm)
    return ZoneContents(
        zones=MappingProxyType(
            {name: _seen_once(_top_first(_named_beside(cards)), centres_by_id, config.faces_once,
                              within_mm if name in spreads else None)
             for name, cards in found.items()}
        ),
        outside=tuple(outside),
    )


def zone_polygons_image(layout: Layout, to_image: PointMap, config: ZoningConfig) -> dict[str, np.ndarray]:
    """Every zone's polygon in image pixels (the loose zone: the whole table), for the settle
    gate. `to_image` maps `(n, 2)` table mm to `(n, 2)` image pixels (the calibration)."""
    out: dict[str, np.ndarray] = {}
    for zone in layout.zones:
        out[zone.id] = _mapped(to_image, np.asarray(zone.polygon, np.float64), zone.id)
    if config.loose_zone is not None and config.loose_zone not in out:
        out[config.loose_zone] = _mapped(to_image, table_polygon(layout, config.table_margin_mm), config.loose_zone)
    return out


def _mapped(to_image: PointMap, polygon_mm: np.ndarray, name: str) -> np.ndarray:
    pts = np.asarray(to_image(polygon_mm), np.float64)
    if pts.shape != polygon_mm.shape or not np.isfinite(pts).all():
        raise ZoningError(
            f"zone {name!r}: the calibration maps its polygon to {pts.shape} points or to "
            "non-finite pixels; check the table profile (calibrate again)"
        )
    return pts
