"""What the camera hands the rules: per zone, the visible cards with ranked face candidates.

Vision never decides which card it sees; it says which faces of the catalog a card may show and
how strongly (`Candidate`), best first. A `TableSnapshot` groups the cards per zone (a pile shows
its top card, a spread area such as a player's area shows every card), an optional estimate of
how many cards a zone holds, the set of zones that were still and free of hands when the
frame was taken (only those may be read) and, when the camera watched for it, the zones a hand
reached into since the last read (`reached`: what tells a card taken off a face-down pile from
nothing at all). `ExpectedZone` is the other side of the comparison:
what a game state says the camera should see in one zone.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from types import MappingProxyType

from engine.errors import EngineError


class SnapshotError(EngineError):
    """A snapshot whose candidates, zones or counts do not hold together."""


class ZoneKind(StrEnum):
    """How a zone shows its cards: a pile shows its top card, a spread shows every card, a
    counter shows a number only (tokens counted in an area, the face of a die), carried in
    `TableSnapshot.counts` and compared exactly."""

    PILE = "pile"
    SPREAD = "spread"
    COUNTER = "counter"


@dataclass(frozen=True, slots=True, kw_only=True)
class Candidate:
    """One face a seen card may show, with the identifier's score in (0, 1]."""

    face: str
    score: float

    def __post_init__(self) -> None:
        if not self.face:
            raise SnapshotError("candidate: 'face' must be a face id of the game's catalog")
        if not (isinstance(self.score, int | float) and math.isfinite(self.score)):
            raise SnapshotError(f"candidate {self.face!r}: 'score' must be a finite number")
        if not 0.0 < self.score <= 1.0:
            raise SnapshotError(
                f"candidate {self.face!r}: 'score' must lie in (0, 1], got {self.score}"
            )


@dataclass(frozen=True, slots=True, kw_only=True)
class SeenCard:
    """A card the camera sees: its face candidates (best first), its tracker id, whether it
    lies turned 180 degrees and whether that was read with the card as it looks now
    (`turn_known` false: its look changed and it could not be named again, so the turn read
    before may be stale)."""

    candidates: tuple[Candidate, ...]
    track_id: int | None = None
    rotated_180: bool = False
    turn_known: bool = True

    def __post_init__(self) -> None:
        if not self.candidates:
            raise SnapshotError("seen card: 'candidates' must hold at least one face")
        scores = [c.score for c in self.candidates]
        if any(a < b for a, b in itertools.pairwise(scores)):
            raise SnapshotError(
                "seen card: 'candidates' must be sorted best first (descending score)"
            )

    @property
    def best(self) -> Candidate:
        return self.candidates[0]

    def score_of(self, face: str) -> float | None:
        """The score of `face` among the candidates, or None when it is not one of them."""
        for c in self.candidates:
            if c.face == face:
                return c.score
        return None

    def rank_of(self, face: str) -> int | None:
        """0 for the best candidate, 1 for the second...; None when `face` is not listed."""
        for i, c in enumerate(self.candidates):
            if c.face == face:
                return i
        return None


def _frozen_zones(zones: Mapping[str, tuple[SeenCard, ...]]) -> Mapping[str, tuple[SeenCard, ...]]:
    return MappingProxyType({str(k): tuple(v) for k, v in zones.items()})


@dataclass(frozen=True, slots=True, kw_only=True)
class TableSnapshot:
    """The table at one frame: visible cards per zone (top / most recent first).

    `reached` names the zones a hand reached into since they were last read; `renewed` the
    zones whose cards are all other cards than the ones seen there when the zone was last
    read (the tracker lost those and found these: a card taken away and another put down,
    though it may look the same); `reread` the zones that hold the very cards (tracks) they
    held when the table was last taken in, some of them read as another face now: nothing
    was put down or taken away there, the camera read a card otherwise (a card first read
    from a poor cut, read again). None: not watched. `unnamed` counts, per zone, the cards
    seen there besides `zones`' that the camera could not name (a card whose cut the
    identifier does not know, among named ones): a card lies there, its face unknown.
    """

    frame: int
    time: float
    zones: Mapping[str, tuple[SeenCard, ...]] = field(
        default_factory=lambda: MappingProxyType({})
    )
    counts: Mapping[str, int] = field(default_factory=lambda: MappingProxyType({}))
    settled: frozenset[str] = frozenset()
    reached: frozenset[str] | None = None  # None: hands were not watched
    renewed: frozenset[str] | None = None  # None: the cards' tracks were not watched
    reread: frozenset[str] | None = None  # None: the cards' tracks were not watched
    unnamed: Mapping[str, int] = field(default_factory=lambda: MappingProxyType({}))

    def __post_init__(self) -> None:
        object.__setattr__(self, "zones", _frozen_zones(self.zones))
        object.__setattr__(self, "counts", MappingProxyType(dict(self.counts)))
        object.__setattr__(self, "unnamed", MappingProxyType({z: n for z, n in self.unnamed.items() if n}))
        object.__setattr__(self, "settled", frozenset(self.settled))
        if self.reached is not None:
            object.__setattr__(self, "reached", frozenset(self.reached))
        if self.renewed is not None:
            object.__setattr__(self, "renewed", frozenset(self.renewed))
        if self.reread is not None:
            object.__setattr__(self, "reread", frozenset(self.reread))
        for zone, cards in self.zones.items():
            for card in cards:
                if not isinstance(card, SeenCard):
                    raise SnapshotError(
                        f"snapshot frame {self.frame}: zone {zone!r} holds {card!r}, "
                        "not a SeenCard"
                    )
        for what, numbers in (("count", self.counts), ("unnamed count", self.unnamed)):
            for zone, n in numbers.items():
                if not isinstance(n, int) or n < 0:
                    raise SnapshotError(
                        f"snapshot frame {self.frame}: {what} of zone {zone!r} must be a "
                        f"non-negative integer, got {n!r}"
                    )

    def cards(self, zone: str) -> tuple[SeenCard, ...]:
        """The visible cards of `zone` (empty when the camera saw none there)."""
        return self.zones.get(zone, ())


@dataclass(frozen=True, slots=True, kw_only=True)
class ExpectedZone:
    """What a state says one zone should look like.

    `faces` are top / most recent first; a pile lists only its top face. `None` stands for a
    face-up card whose identity the state does not know (any face fits it). `count` is the
    number of cards in the zone (a pile's height). `soft` marks a zone the state cannot be
    sure of (e.g. a face-down pile whose order was only partly seen): a mismatch there costs
    score but leaves the zone explained. `ordered` says a spread's faces are in the order the
    camera lists them (most recent first), so that the order itself is evidence. `signature`
    fingerprints what a counter zone holds unseen (a face-down pile's cards), so that a card
    put on it and another taken off counts as a change where the count alone would not
    (None: the count says it all). `covered` lists the spread's faces (by index) that lie
    under another card of the zone (an Angry Birds structure's beams under its pig): the camera
    may see too little of them to find them, so one not seen costs `hidden_penalty` and still
    matches, where any other card not seen leaves the zone unexplained. `by_hands` marks a pile
    whose height the camera does not see change (cards slipped under an Angry Birds deck): as
    for a counter zone without a count, whether a hand reached it (`TableSnapshot.reached`)
    tells whether it changed. `steady` marks a zone whose cards never turn over where they lie
    (an Explorers table mob): when the tracker says it holds the very cards it held
    (`TableSnapshot.reread`) and one reads as a face the zone does not expect, the earlier
    read was wrong, and the zone is set as it reads now instead of being explained by moves.
    `turned` is how many of a spread's cards lie turned 180 degrees by the state (the
    Explorers hunger cards spent this turn), where the turn is game information the faces do
    not show: cards seen turned (`SeenCard.rotated_180`) that the state does not account for,
    or turned cards it expects beyond those the unseen cards may be (a card whose turn is not
    known, `SeenCard.turn_known`, counts as unseen), cost as a zone that does not match
    (`zone_penalty`, and `card_penalty` each), though a soft zone stays explained (None: the
    turn is not read).
    """

    kind: ZoneKind
    faces: tuple[str | None, ...]
    count: int
    soft: bool = False
    ordered: bool = False
    signature: int | None = None
    covered: frozenset[int] = frozenset()
    by_hands: bool = False
    steady: bool = False
    turned: int | None = None

    @property
    def counted(self) -> bool:
        """Whether the zone shows a number rather than cards the camera tells apart: a counter
        zone, or a pile whose height changes unseen (`by_hands`); the hands tell its changes
        when the snapshot gives no count."""
        return self.kind is ZoneKind.COUNTER or (self.by_hands and self.kind is ZoneKind.PILE)


Appearance = Mapping[str, ExpectedZone]
"""Zone id -> expected appearance of that zone."""
