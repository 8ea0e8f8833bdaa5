"""Tactic "Angry Birds Power Cards": stat rounds, structures and slingshot rounds as a pure ruleset.

GAMES.md §4 is the normative summary; the rule sheet (English and French) is `shared/seeds/004`.
Players hold their deck face down; for the camera each player lays the top card face up in
`battle-N`, tied cards wait in `pot`, and structures are built in `structure-N` (back side up:
two vertical beams, a horizontal beam, a pig on top). A deck slot holds `None` when the card is
not known; the identities not located on the table form the `unseen` pool. The referee
(`round_result`) computes a round's outcome from the catalog stats as soon as every card lies in
its slot; the cards move when a player collects them (`take`, `to-pot`), or when the next round
simply starts. The table is the truth: every move is applied as it physically happened and a
broken rule is reported as a `GameWarning`.

Choices where the sheets are silent (each shown by a scenario, see
docs/rules/angry-birds-power-cards.md):
- A leftover card of the deal lies in `pot` and goes with the first round's cards to its winner
  (after a tie, to the winner of the replay).
- On a tie every card of the round goes to the pot (not only the tied ones); only the tied
  players replay, with the same stat, and the replay's winner takes the pot. A tied player who
  has no card left is out; when one tied player is left they take the pot without a replay; when
  none is left the pot waits for the next round's winner.
- The camera cannot hear the stat. A round may be played with its stat unnamed (`possible`
  lists what it may still be); the referee then gives the outcome under each possible stat
  (`by_stat`). A `to-pot` with every card laid is right when the cards tie under at least one
  possible stat, and the replay keeps the stat unnamed: still possible are the stats the round
  really tied under (one left: that is the stat), each with the players tied under it
  (`tied_under`); the players tied under at least one of them may lay a card. A card laid by a
  player not tied under a stat rules it out (one left: that is the stat, and only its tied
  players replay). The replay is complete under a stat once every player tied under it has
  laid; the referee announces as soon as it is complete under one stat still possible, and a
  card still due under another stat belongs to the replay, not to a new round. The replay needs
  no naming: it is collected by a player who wins under a stat it is complete under, goes to the
  pot again on a tie under one (narrowing further), and naming a stat outside them is
  `stat-changed`. A `take` before the stat is named in a new round stays `round-not-finished`.
- Won cards go to the bottom of the winner's deck in an order nobody can see: the engine keeps
  the order of the cards it knows from the deal or the setup, and accepts any of the won cards
  once the play reaches them (`not-top-card` only where the order is known).
- A player's battle card still counts as theirs (`scores`: cards in deck, structures and battle
  slot) until the round is settled.
- `name-stat` once every card of a settled round lies on the table starts the next round.
- Parts laid in one `build` are placed bottom to top (verticals, horizontal, pig) whatever the
  order they are listed in; a build may follow `take` or replace it (the round is settled first).
- Building is allowed after any won round, slingshot rounds included.
- A slingshot round starts only when the pig tops a structure that has its horizontal beam; in
  it the pig's owner lays no card. Challengers tied for the best value (the pig not above them)
  replay with the slingshot value; the pig and their cards wait in the pot.
- A player is out when, after a round is settled, they have no card in their deck, structures
  or battle slot. With one player left the game is over and that player wins.
- In the quick variant the winner is the player with most cards (deck and structures) once
  someone has two pig-topped structures; equal counts are a draw.
"""

from __future__ import annotations

import csv
import io
import random
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from types import MappingProxyType
from typing import Any, ClassVar

from engine.catalog import Catalog, load_catalog
from engine.core import Audience, GameWarning, OptionSpec, Step, register, resolve_options
from engine.errors import CatalogError, MoveFormatError, SetupError, UnknownCardError
from engine.moves import decode_move, encode_move

GAME_ID = "angry-birds-power-cards"
QUICK_STRUCTURES = 2

Slot = str | None
"""A card in a deck: its id, or None for a face-down card whose identity is not known."""


class Stat(StrEnum):
    """The qualities printed on a card's front; `slingshot` is only for slingshot rounds."""

    POWER = "power"
    DISTANCE = "distance"
    AIM = "aim"
    RARITY = "rarity"
    SLINGSHOT = "slingshot"


NAMEABLE: tuple[Stat, ...] = (Stat.POWER, Stat.DISTANCE, Stat.AIM, Stat.RARITY)
STAT_ALIASES: Mapping[str, Stat] = MappingProxyType(
    {
        **{s.value: s for s in Stat},
        "puissance": Stat.POWER,
        "portee": Stat.DISTANCE,
        "portée": Stat.DISTANCE,
        "range": Stat.DISTANCE,
        "precision": Stat.AIM,
        "précision": Stat.AIM,
        "accuracy": Stat.AIM,
        "rarete": Stat.RARITY,
        "rareté": Stat.RARITY,
        "lance-pierre": Stat.SLINGSHOT,
    }
)


class Part(StrEnum):
    """What a card's back shows: a structure part."""

    VERTICAL = "vertical"
    HORIZONTAL = "horizontal"
    PIG = "pig"


PART_ORDER: Mapping[Part, int] = MappingProxyType({Part.VERTICAL: 0, Part.HORIZONTAL: 1, Part.PIG: 2})
MATERIALS = ("wood", "stone", "ice")


class RoundKind(StrEnum):
    STAT = "stat"
    TIEBREAK = "tiebreak"
    SLINGSHOT = "slingshot"


class Code(StrEnum):
    """Stable warning codes of this game (public vocabulary: journal, API, overlay)."""

    OUT_OF_TURN = "out-of-turn"
    NOT_IN_ROUND = "not-in-round"
    ALREADY_PLAYED = "already-played"
    NOT_TOP_CARD = "not-top-card"
    NOT_OWN_CARD = "not-own-card"
    INVALID_STAT = "invalid-stat"
    STAT_CHANGED = "stat-changed"
    ROUND_NOT_FINISHED = "round-not-finished"
    WRONG_WINNER = "wrong-winner"
    BUILD_NOT_ALLOWED = "build-not-allowed"
    NOT_WON_CARD = "not-won-card"
    WRONG_ORDER = "wrong-order"
    MIXED_MATERIAL = "mixed-material"
    TOO_MANY_STRUCTURES = "too-many-structures"
    INVALID_TAKE_BACK = "invalid-take-back"
    QUICK_VARIANT_NOT_ALLOWED = "quick-variant-not-allowed"
    IMPOSSIBLE_CARD = "impossible-card"
    GAME_OVER = "game-over"
    DESYNC = "desync"


RULES: Mapping[Code, str] = {
    Code.OUT_OF_TURN: "The player who won the previous round names the stat of the new round.",
    Code.NOT_IN_ROUND: "Only the players in the round lay a card (tied players in a replay; "
    "not the pig's owner in a slingshot round; never a player who is out).",
    Code.ALREADY_PLAYED: "Each player lays one card per round.",
    Code.NOT_TOP_CARD: "Players play the top card of their deck (or of their structure when the "
    "deck is empty).",
    Code.NOT_OWN_CARD: "Players play cards from their own deck.",
    Code.INVALID_STAT: "The stat is power, distance, aim or rarity; the slingshot value only "
    "counts in a slingshot round.",
    Code.STAT_CHANGED: "A tie is replayed with the same stat; a named stat stands.",
    Code.ROUND_NOT_FINISHED: "Cards are collected once every player has laid a card and the "
    "stat is named.",
    Code.WRONG_WINNER: "The highest value takes every card of the round and the pot; a tie "
    "sends the cards to the pot.",
    Code.BUILD_NOT_ALLOWED: "Structures are built by the player who has just won a round, "
    "before the next round starts.",
    Code.NOT_WON_CARD: "Structures are built from the cards just won (the winning card "
    "included).",
    Code.WRONG_ORDER: "A structure is two vertical beams, then a horizontal beam, then a pig "
    "on top.",
    Code.MIXED_MATERIAL: "Every structure is of one material (wood, stone or ice).",
    Code.TOO_MANY_STRUCTURES: "One structure in progress per player; in the quick variant "
    "no more than two structures per player.",
    Code.INVALID_TAKE_BACK: "Only a player with an empty deck takes a card back, from the top "
    "of their structure.",
    Code.QUICK_VARIANT_NOT_ALLOWED: "The quick ending is chosen when only two players are "
    "left and no card lies on the table.",
    Code.IMPOSSIBLE_CARD: "Each card exists only as often as the deck holds it.",
    Code.GAME_OVER: "The game ends when one player is left with cards (quick variant: two "
    "pig-topped structures).",
    Code.DESYNC: "The table changed in a way no legal move explains.",
}


class SlingshotTie(StrEnum):
    AGAINST_PIG = "against-pig"
    PIG_WINS = "pig-wins"


class StructureRule(StrEnum):
    ONE_IN_PROGRESS = "one-in-progress"
    ONE_PER_MATERIAL = "one-per-material"


class Leader(StrEnum):
    ROUND_WINNER = "round-winner"
    NEXT_SEAT = "next-seat"


class Variant(StrEnum):
    CLASSIC = "classic"
    QUICK = "quick"


OPTIONS: tuple[OptionSpec, ...] = (
    OptionSpec.of(
        "slingshot_tie",
        SlingshotTie.AGAINST_PIG,
        "A challenger equal to the pig's slingshot value beats it (against-pig), or the "
        "pig wins ties (pig-wins).",
    ),
    OptionSpec.of(
        "structures",
        StructureRule.ONE_IN_PROGRESS,
        "One structure in progress per player (a beam of another material is a "
        "mixed-material warning), or one in progress per material.",
    ),
    OptionSpec.of(
        "leader",
        Leader.ROUND_WINNER,
        "Who names the next stat: the previous round's winner (the sheet), or the next "
        "player in seat order.",
    ),
    OptionSpec.of(
        "variant",
        Variant.CLASSIC,
        "classic: slingshot rounds, last player with cards wins; quick: (2 players) no "
        "slingshot rounds, the game ends at two pig-topped structures, most cards wins.",
    ),
    OptionSpec(
        name="first_player",
        default=1,
        help="The player who names the first stat (the sheet: the youngest).",
    ),
)


@dataclass(frozen=True, slots=True, kw_only=True)
class Options:
    slingshot_tie: SlingshotTie = SlingshotTie.AGAINST_PIG
    structures: StructureRule = StructureRule.ONE_IN_PROGRESS
    leader: Leader = Leader.ROUND_WINNER
    variant: Variant = Variant.CLASSIC
    first_player: int = 1


# --------------------------------------------------------------------------------------------
# Moves


@dataclass(frozen=True, slots=True, kw_only=True)
class AbMove:
    """Fields shared by every move. `player` 0 means "as the referee says" where allowed."""

    NAME: ClassVar[str] = ""
    player: int = 0


@dataclass(frozen=True, slots=True, kw_only=True)
class Play(AbMove):
    """Lay the top card of the deck face up in `battle-N` (`card`: what was seen there)."""

    NAME: ClassVar[str] = "play"
    card: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class NameStat(AbMove):
    """The active player names the stat of the round."""

    NAME: ClassVar[str] = "name-stat"
    stat: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Take(AbMove):
    """A player collects the round's cards (and the pot) to the bottom of their deck."""

    NAME: ClassVar[str] = "take"
    cards: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class ToPot(AbMove):
    """The round's cards go to the pot after a tie."""

    NAME: ClassVar[str] = "to-pot"


@dataclass(frozen=True, slots=True, kw_only=True)
class Build(AbMove):
    """Place won cards on the player's structure (back side up)."""

    NAME: ClassVar[str] = "build"
    cards: tuple[str, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class TakeBack(AbMove):
    """A player with an empty deck picks up the top card of their structure."""

    NAME: ClassVar[str] = "take-back"
    card: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class QuickVariant(AbMove):
    """The two players left agree to the quicker ending."""

    NAME: ClassVar[str] = "quick-variant"


@dataclass(frozen=True, slots=True, kw_only=True)
class TableChange(AbMove):
    """A physical change nothing legal explains (or an operator correction): set a zone."""

    NAME: ClassVar[str] = "table-change"
    zone: str
    cards: tuple[str, ...] = ()


MOVE_TYPES: tuple[type[AbMove], ...] = (
    Play,
    NameStat,
    Take,
    ToPot,
    Build,
    TakeBack,
    QuickVariant,
    TableChange,
)

MOVE_ALIASES: Mapping[str, str] = MappingProxyType(
    {
        "lay": "play",
        "play-card": "play",
        "battle": "play",
        "name": "name-stat",
        "choose-stat": "name-stat",
        "call-stat": "name-stat",
        "stat": "name-stat",
        "collect": "take",
        "win": "take",
        "take-cards": "take",
        "tie": "to-pot",
        "pot": "to-pot",
        "place": "build",
        "build-structure": "build",
        "pick-up": "take-back",
        "takeback": "take-back",
        "quick-ending": "quick-variant",
        "quick": "quick-variant",
    }
)


# --------------------------------------------------------------------------------------------
# State and the referee's result


@dataclass(frozen=True, slots=True, kw_only=True)
class AbState:
    """Everything on the table and where the round stands. Players are numbered from 1.

    `decks` are top first; the first `ordered[p]` cards of a deck are in known order, the rest
    (cards won and put under the deck) in an order nobody saw. `structures` hold each player's
    structures oldest first, each bottom first. `battle` holds each player's laid card(s), the
    latest first; `pot` is top first.

    `stat` is the stat named for the round (None while nobody was heard naming it: the camera
    cannot hear). `possible` lists the stats an unnamed stat may still be: every nameable stat
    in a new round; in the replay of a tie whose stat was not named, only the stats under which
    that tie really was a tie (see `_settle`); empty once the stat is named and in a slingshot
    round.

    `tied_under` says, in the replay of a tie whose stat was not named, who tied under each
    stat still possible (`(stat, players)` pairs, the order of `possible`): the players who
    really replay are those of the stat it was. A card laid by a player not tied under a stat
    rules that stat out (`possible` narrows as the cards come). Empty otherwise.
    """

    players: int
    options: Options
    seed: int
    draws: int
    decks: tuple[tuple[Slot, ...], ...]
    ordered: tuple[int, ...]
    battle: tuple[tuple[str, ...], ...]
    pot: tuple[str, ...]
    structures: tuple[tuple[tuple[str, ...], ...], ...]
    unseen: tuple[str, ...]
    out: tuple[int, ...]
    current: int
    kind: RoundKind
    stat: Stat | None
    possible: tuple[Stat, ...]
    tied_under: tuple[tuple[Stat, tuple[int, ...]], ...] = ()
    participants: tuple[int, ...]
    pig_owner: int
    pig: str | None
    builder: int
    won: tuple[str, ...]
    quick: bool
    winner: int | None
    over: bool
    turn: int
    move_index: int


@dataclass(frozen=True, slots=True, kw_only=True)
class RoundResult:
    """The referee's reading of the round on the table (before anyone counts).

    `complete`: every player of the round has laid a card and the stat is known. `winner` or
    `tied` (two or more players) is set only then; `by_stat` gives both for every stat still
    possible (`AbState.possible`: every nameable stat in a new round, fewer in the replay of a
    tie whose stat was not named) while the stat is not named yet, once every card is laid,
    and `values_by_stat` each card's value under it. In the replay of a tie whose stat was not
    named, `by_stat` holds only the stats the replay is complete under (every player tied
    under it has laid, and no one else), `complete` is set when they agree on the outcome, and
    `waiting` is empty once there is one.
    `pot` lists the cards already waiting in the pot.
    """

    kind: RoundKind
    stat: Stat | None
    cards: Mapping[int, str]
    values: Mapping[int, int]
    waiting: tuple[int, ...]
    complete: bool
    winner: int | None
    tied: tuple[int, ...]
    pot: tuple[str, ...]
    pig_owner: int = 0
    by_stat: Mapping[str, Mapping[str, Any]] = field(
        default_factory=lambda: MappingProxyType({})
    )
    values_by_stat: Mapping[str, Mapping[int, int]] = field(
        default_factory=lambda: MappingProxyType({})
    )

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "kind": self.kind.value,
            "stat": self.stat.value if self.stat else None,
            "cards": {str(p): c for p, c in self.cards.items()},
            "values": {str(p): v for p, v in self.values.items()},
            "waiting": list(self.waiting),
            "complete": self.complete,
            "winner": self.winner,
            "tied": list(self.tied),
            "pot": list(self.pot),
        }
        if self.pig_owner:
            out["pig_owner"] = self.pig_owner
        if self.by_stat:
            out["by_stat"] = {k: dict(v) for k, v in self.by_stat.items()}
        if self.values_by_stat:
            out["values_by_stat"] = {
                k: {str(p): v for p, v in vals.items()} for k, vals in self.values_by_stat.items()
            }
        return out


_STATE_FIELDS = tuple(AbState.__dataclass_fields__)


class _Work:
    """A mutable scratch copy of a state used inside one `apply`; frozen again at the end."""

    def __init__(self, state: AbState) -> None:
        self.players = state.players
        self.options = state.options
        self.seed = state.seed
        self.draws = state.draws
        self.decks = [list(d) for d in state.decks]
        self.ordered = list(state.ordered)
        self.battle = [list(b) for b in state.battle]
        self.pot = list(state.pot)
        self.structures = [[list(s) for s in ss] for ss in state.structures]
        self.unseen = list(state.unseen)
        self.out = list(state.out)
        self.current = state.current
        self.kind = state.kind
        self.stat = state.stat
        self.possible = list(state.possible)
        self.tied_under = {s: list(ps) for s, ps in state.tied_under}
        self.participants = list(state.participants)
        self.pig_owner = state.pig_owner
        self.pig = state.pig
        self.builder = state.builder
        self.won = list(state.won)
        self.quick = state.quick
        self.winner = state.winner
        self.over = state.over
        self.turn = state.turn
        self.move_index = state.move_index
        self.warnings: list[GameWarning] = []

    def freeze(self) -> AbState:
        return AbState(
            players=self.players,
            options=self.options,
            seed=self.seed,
            draws=self.draws,
            decks=tuple(tuple(d) for d in self.decks),
            ordered=tuple(self.ordered),
            battle=tuple(tuple(b) for b in self.battle),
            pot=tuple(self.pot),
            structures=tuple(tuple(tuple(s) for s in ss) for ss in self.structures),
            unseen=tuple(sorted(self.unseen)),
            out=tuple(self.out),
            current=self.current,
            kind=self.kind,
            stat=self.stat,
            possible=tuple(self.possible),
            tied_under=tuple(
                (s, tuple(self.tied_under[s])) for s in self.possible if s in self.tied_under
            ),
            participants=tuple(self.participants),
            pig_owner=self.pig_owner,
            pig=self.pig,
            builder=self.builder,
            won=tuple(self.won),
            quick=self.quick,
            winner=self.winner,
            over=self.over,
            turn=self.turn,
            move_index=self.move_index,
        )

    def name(self, stat: Stat) -> None:
        """The stat is known (named, or the only one left): nothing else is possible. In the
        replay of an unheard tie, the players who replay are then those tied under it."""
        group = self.tied_under.get(stat)
        if group is not None:
            self.participants = list(group)
        self.stat, self.possible, self.tied_under = stat, [], {}

    def unnamed(
        self, possible: Sequence[Stat], tied_under: Mapping[Stat, Sequence[int]] | None = None
    ) -> None:
        """The stat is not named; it is one of `possible` (when only one is left, that one).
        `tied_under`: in a replay, who tied under each of them."""
        self.tied_under = {s: list(tied_under[s]) for s in possible} if tied_under else {}
        if len(possible) == 1:
            self.name(possible[0])
        else:
            self.stat, self.possible = None, list(possible)

    def warn(self, code: Code, message: str, *players: int) -> None:
        self.warnings.append(
            GameWarning(
                code=code.value,
                message=message,
                rule=RULES[code],
                move_index=self.move_index,
                players=tuple(players),
            )
        )

    def alive(self) -> list[int]:
        return [p for p in range(1, self.players + 1) if p not in self.out]

    def structure_cards(self, player: int) -> list[str]:
        return [c for s in self.structures[player - 1] for c in s]

    def holds_cards(self, player: int) -> bool:
        return bool(
            self.decks[player - 1] or self.structure_cards(player) or self.battle[player - 1]
        )

    def can_play(self, player: int) -> bool:
        return bool(self.decks[player - 1] or self.structure_cards(player))


def parse_stat(value: object, where: str) -> Stat:
    """A stat from its name (English or French, any case); a clear error otherwise."""
    if isinstance(value, str):
        stat = STAT_ALIASES.get(value.strip().lower())
        if stat is not None:
            return stat
    allowed = ", ".join(s.value for s in NAMEABLE)
    raise MoveFormatError(f"{where}: unknown stat {value!r}; name one of: {allowed}")


def _p(n: int) -> str:
    return f"player {n}"


# --------------------------------------------------------------------------------------------
# The ruleset


class AngryBirdsPowerCards:
    """The Tactic game: `apply` never refuses a move that physically happened."""

    id = GAME_ID
    name = "Angry Birds Power Cards (Tactic)"
    min_players = 2
    max_players = 4
    move_types = MOVE_TYPES
    # Simulated players settle rounds at once and build whenever they can.
    sim_weights: Mapping[str, float] = MappingProxyType(
        {"build": 50.0, "take": 20.0, "to-pot": 20.0, "take-back": 20.0, "quick-variant": 0.05}
    )

    def __init__(self) -> None:
        self._catalog: Catalog | None = None
        self._attrs: dict[str, Mapping[str, Any]] = {}

    # -- catalog helpers ----------------------------------------------------------------------

    @property
    def catalog(self) -> Catalog:
        if self._catalog is None:
            cat = load_catalog(GAME_ID)
            self._attrs = {c.id: c.attrs for c in cat.cards.values()}
            self._catalog = cat
        return self._catalog

    @property
    def options(self) -> tuple[OptionSpec, ...]:
        return OPTIONS

    expectation_keys = ("round", "out", "stat", "possible", "in_round", "tied_under")

    def check_expectation(self, state: AbState, key: str, want: Any) -> str | None:
        """Scenario expectations of this game: `round` (the referee's result: any of
        winner, tied, stat, complete, kind, by_stat), `out` (players out, in any order), `stat`,
        `possible` (the stats an unnamed stat may still be, in any order) and `in_round` (the
        players of the round, in any order), `tied_under` (in the replay of an unheard tie: who
        tied under each stat still possible, a mapping of stat to players in any order)."""
        if key == "out":
            got_out = sorted(state.out)
            return None if got_out == sorted(want or []) else f"out expected {want}, got {got_out}"
        if key == "possible":
            if not isinstance(want, list | tuple):
                return "possible: expected a list of stats (power, distance, aim, rarity)"
            got_possible = sorted(s.value for s in state.possible)
            want_possible = sorted(parse_stat(v, "expect 'possible'").value for v in want)
            return None if got_possible == want_possible else (
                f"possible expected {want_possible}, got {got_possible}"
            )
        if key == "tied_under":
            if not isinstance(want, Mapping):
                return "tied_under: expected a mapping of stat to players, e.g. {power: [1, 2]}"
            got_groups = {s.value: sorted(ps) for s, ps in state.tied_under}
            want_groups = {
                parse_stat(k, "expect 'tied_under'").value: sorted(v or []) for k, v in want.items()
            }
            return None if got_groups == want_groups else (
                f"tied_under expected {want_groups}, got {got_groups}"
            )
        if key == "in_round":
            got_in = sorted(state.participants)
            return None if got_in == sorted(want or []) else (
                f"in_round expected {want}, got {got_in}"
            )
        if key == "stat":
            got_stat = state.stat.value if state.stat else None
            return None if got_stat == want else f"stat expected {want}, got {got_stat}"
        result = self.round_result(state).to_dict()
        if not isinstance(want, Mapping):
            return "round: expected a mapping of winner, tied, stat, complete, kind"
        diffs = [
            f"{k} expected {v!r}, got {result.get(k)!r}"
            for k, v in want.items()
            if (sorted(v) if k == "tied" else v) != result.get(k)
        ]
        return "round: " + "; ".join(diffs) if diffs else None

    def import_deck_csv(self, text: str, source: str = "<csv>") -> dict[str, Any]:
        """A catalog document from a CSV of a real deck (see `catalog_from_csv`)."""
        return catalog_from_csv(text, source)

    def attrs(self, card: str) -> Mapping[str, Any]:
        if not self._attrs:
            _ = self.catalog
        try:
            return self._attrs[card]
        except KeyError:
            self.catalog.card(card)  # raises the clear UnknownCardError
            raise

    def value(self, card: str, stat: Stat) -> int:
        return int(self.attrs(card).get(stat.value, 0))

    def part(self, card: str) -> Part:
        a = self.attrs(card)
        if a.get("back_part") == "pig":
            return Part.PIG
        return Part.HORIZONTAL if a.get("beam") == "horizontal" else Part.VERTICAL

    def material(self, card: str) -> str | None:
        m = self.attrs(card).get("material")
        return None if m is None else str(m)

    # -- setup --------------------------------------------------------------------------------

    def initial_state(
        self,
        *,
        players: int,
        options: Mapping[str, object] | None = None,
        seed: int | None = None,
        setup: Mapping[str, Any] | None = None,
    ) -> AbState:
        """A fresh table: dealt from `seed`, or laid out exactly as `setup` says.

        `setup` maps zone ids to card lists: `deck-N` (top first; `null` for a card not known,
        or a number of unknown cards), `battle-N`, `pot` (also `leftover`), `structure-N`
        (top first: pig, horizontal, verticals). Cards the setup does not place are out of the
        game (the unseen pool).
        """
        if not isinstance(players, int) or not self.min_players <= players <= self.max_players:
            raise SetupError(
                f"{GAME_ID} is for {self.min_players}-{self.max_players} players, got {players!r}"
            )
        raw = resolve_options(OPTIONS, options)
        first = raw["first_player"]
        if isinstance(first, bool) or not isinstance(first, int) or not 1 <= first <= players:
            raise SetupError(f"option 'first_player' must be a player number 1-{players}")
        opts = Options(
            slingshot_tie=SlingshotTie(str(raw["slingshot_tie"])),
            structures=StructureRule(str(raw["structures"])),
            leader=Leader(str(raw["leader"])),
            variant=Variant(str(raw["variant"])),
            first_player=first,
        )
        if opts.variant is Variant.QUICK and players != 2:
            raise SetupError("option 'variant: quick' is for 2 players")
        seed = 0 if seed is None else int(seed)
        deck = list(self.catalog.deck())
        structures: list[list[list[str]]] = [[] for _ in range(players)]
        battle: list[list[str]] = [[] for _ in range(players)]
        if setup is None:
            rng = random.Random(seed)
            rng.shuffle(deck)
            each = len(deck) // players
            decks: list[list[Slot]] = [list(deck[i * each : (i + 1) * each]) for i in range(players)]
            pot = deck[players * each :]
            unseen: list[str] = []
        else:
            decks, battle, pot, structures, unseen = self._explicit_setup(setup, players, deck)
        state = AbState(
            players=players,
            options=opts,
            seed=seed,
            draws=0,
            decks=tuple(tuple(d) for d in decks),
            ordered=tuple(len(d) for d in decks),
            battle=tuple(tuple(b) for b in battle),
            pot=tuple(pot),
            structures=tuple(tuple(tuple(s) for s in ss) for ss in structures),
            unseen=tuple(sorted(unseen)),
            out=(),
            current=first,
            kind=RoundKind.STAT,
            stat=None,
            possible=NAMEABLE,
            participants=tuple(range(1, players + 1)),
            pig_owner=0,
            pig=None,
            builder=0,
            won=(),
            quick=opts.variant is Variant.QUICK,
            winner=None,
            over=False,
            turn=1,
            move_index=0,
        )
        w = _Work(state)
        w.participants = [p for p in w.alive() if w.holds_cards(p)]
        self._eliminate(w)
        return w.freeze()

    def _explicit_setup(
        self, setup: Mapping[str, Any], players: int, deck: list[str]
    ) -> tuple[
        list[list[Slot]], list[list[str]], list[str], list[list[list[str]]], list[str]
    ]:
        if not isinstance(setup, Mapping):
            raise SetupError("'setup' must map zone ids to lists of card ids")
        known = {
            "pot",
            "leftover",
            *(f"{z}-{p}" for z in ("deck", "battle", "structure") for p in range(1, players + 1)),
        }
        for zone in setup:
            if zone not in known:
                raise SetupError(
                    f"setup: unknown zone {zone!r} for {players} players; zones are: "
                    + ", ".join(sorted(known))
                )

        def cards_of(zone: str, allow_unknown: bool) -> list[Slot]:
            value = setup.get(zone, [])
            if value is None:
                value = []
            if isinstance(value, int) and not isinstance(value, bool) and allow_unknown:
                if value < 0:
                    raise SetupError(f"setup: zone {zone!r} cannot hold {value} cards")
                return [None] * value
            if isinstance(value, str):
                value = [value]
            if not isinstance(value, Sequence):
                raise SetupError(f"setup: zone {zone!r} must be a list of card ids")
            out: list[Slot] = []
            for item in value:
                if item is None and allow_unknown:
                    out.append(None)
                    continue
                if not isinstance(item, str):
                    raise SetupError(f"setup: zone {zone!r} holds {item!r}, not a card id")
                try:
                    self.catalog.card(item)
                except UnknownCardError as exc:
                    raise SetupError(f"setup: zone {zone!r}: {exc}") from None
                out.append(item)
            return out

        decks = [cards_of(f"deck-{p}", True) for p in range(1, players + 1)]
        battle = [
            [c for c in cards_of(f"battle-{p}", False) if c is not None]
            for p in range(1, players + 1)
        ]
        pot = [c for z in ("pot", "leftover") for c in cards_of(z, False) if c is not None]
        structures: list[list[list[str]]] = []
        for p in range(1, players + 1):
            listed = [c for c in cards_of(f"structure-{p}", False) if c is not None]
            structures.append(self._split_structures(list(reversed(listed))))
        groups: list[Sequence[Slot]] = [*decks, *battle, pot]
        groups.extend(s for ss in structures for s in ss)
        placed = Counter(c for group in groups for c in group if c is not None)
        pool = Counter(deck)
        for card, n in placed.items():
            if n > pool[card]:
                raise SetupError(
                    f"setup: {card!r} appears {n} times but the deck holds {pool[card]}"
                )
        pool.subtract(placed)
        unseen = sorted(pool.elements())
        hidden = sum(1 for d in decks for c in d if c is None)
        if hidden > len(unseen):
            raise SetupError(
                f"setup: {hidden} unknown deck cards but only {len(unseen)} cards are left"
            )
        return decks, battle, pot, structures, unseen

    def _split_structures(self, bottom_first: list[str]) -> list[list[str]]:
        """A flat bottom-first list of parts as structures: a new one starts after a pig."""
        out: list[list[str]] = []
        current: list[str] = []
        for card in bottom_first:
            current.append(card)
            if self.part(card) is Part.PIG:
                out.append(current)
                current = []
        if current:
            out.append(current)
        return out

    # -- moves --------------------------------------------------------------------------------

    def parse_move(self, data: Mapping[str, Any]) -> AbMove:
        """Decode a plain move, accepting the aliases documented in the rules page."""
        if not isinstance(data, Mapping):
            raise MoveFormatError(f"a move must be a mapping, got {data!r}")
        d = dict(data)
        name = d.get("move")
        if isinstance(name, str):
            key = name.strip().lower().replace("_", "-").replace(" ", "-")
            d["move"] = name = MOVE_ALIASES.get(key, key)
        if name in ("build", "take") and "card" in d and "cards" not in d:
            card = d.pop("card")
            d["cards"] = [card] if card is not None else []
        if name == "build" and isinstance(d.get("cards"), str):
            d["cards"] = [d["cards"]]
        if name == "name-stat":
            if "stat" not in d:
                for alt in ("quality", "value"):
                    if alt in d:
                        d["stat"] = d.pop(alt)
            if "stat" in d:
                d["stat"] = parse_stat(d["stat"], "move 'name-stat' field 'stat'").value
        if name in ("play", "take-back") and isinstance(d.get("card"), list):
            cards = d["card"]
            if len(cards) != 1:
                raise MoveFormatError(f"move {name!r} field 'card': one card id, got {cards!r}")
            d["card"] = cards[0]
        move: AbMove = decode_move(MOVE_TYPES, d)
        for card in (*getattr(move, "cards", ()), getattr(move, "card", None)):
            if card is not None:
                self.catalog.card(card)
        if move.player < 0 or move.player > self.max_players:
            raise MoveFormatError(f"move {name!r}: no player {move.player}")
        if move.player == 0 and isinstance(move, Play | NameStat | Build | TakeBack):
            raise MoveFormatError(f"move {name!r}: missing field 'player'")
        return move

    def move_to_dict(self, move: AbMove) -> dict[str, Any]:
        return encode_move(move)

    def validate(self, state: AbState, move: AbMove) -> tuple[GameWarning, ...]:
        """The warnings `move` would raise in `state` (empty: the move is legal)."""
        return self.apply(state, move).warnings

    def apply(self, state: AbState, move: AbMove) -> Step[AbState]:
        """Apply a move as it physically happened; return the new state and its warnings."""
        if move.player > state.players:
            raise SetupError(
                f"player {move.player} does not exist in a {state.players}-player game"
            )
        w = _Work(state)
        if state.over and not isinstance(move, TableChange):
            w.warn(Code.GAME_OVER, "the game is already over", move.player)
        _HANDLERS[type(move)](self, w, move)
        w.move_index += 1
        return Step(w.freeze(), tuple(w.warnings))

    # -- the referee ----------------------------------------------------------------------------

    def round_result(self, state: AbState) -> RoundResult:
        """The outcome of the round on the table, computed from the catalog stats."""
        return self._result(
            state.kind,
            state.stat,
            state.possible,
            dict(state.tied_under),
            state.participants,
            [list(b) for b in state.battle],
            state.pot,
            state.pig_owner,
            state.pig,
            state.options.slingshot_tie,
        )

    def _result_of(self, w: _Work) -> RoundResult:
        return self._result(
            w.kind, w.stat, w.possible, w.tied_under, w.participants, w.battle, w.pot,
            w.pig_owner, w.pig, w.options.slingshot_tie,
        )

    def _result(
        self,
        kind: RoundKind,
        stat: Stat | None,
        possible: Sequence[Stat],
        tied_under: Mapping[Stat, Sequence[int]],
        participants: Sequence[int],
        battle: Sequence[Sequence[str]],
        pot: Sequence[str],
        pig_owner: int,
        pig: str | None,
        slingshot_tie: SlingshotTie,
    ) -> RoundResult:
        cards = {p: battle[p - 1][0] for p in participants if battle[p - 1]}
        waiting = tuple(p for p in participants if not battle[p - 1])
        lone = kind is RoundKind.TIEBREAK and len(participants) == 1
        if kind is RoundKind.TIEBREAK and stat is None and tied_under and not lone:
            return self._open_replay(possible, tied_under, participants, cards, pot)
        if kind is RoundKind.SLINGSHOT and pig is not None:
            cards = {pig_owner: pig, **cards}
        if lone:
            waiting = ()
        by_stat: dict[str, Mapping[str, Any]] = {}
        values_by_stat: dict[str, Mapping[int, int]] = {}
        if stat is None and not lone:
            if not waiting and cards:
                for s in possible or NAMEABLE:
                    vals = {p: self.value(c, s) for p, c in cards.items()}
                    win, even = self._decide(vals, 0, slingshot_tie)
                    by_stat[s.value] = MappingProxyType({"winner": win, "tied": list(even)})
                    values_by_stat[s.value] = MappingProxyType(vals)
            return RoundResult(
                kind=kind, stat=None, cards=MappingProxyType(cards), values=MappingProxyType({}),
                waiting=waiting, complete=False, winner=None, tied=(), pot=tuple(pot),
                pig_owner=pig_owner, by_stat=MappingProxyType(by_stat),
                values_by_stat=MappingProxyType(values_by_stat),
            )
        values = {} if stat is None else {p: self.value(c, stat) for p, c in cards.items()}
        complete = not waiting and (bool(cards) or lone)
        winner: int | None = None
        tied: tuple[int, ...] = ()
        if complete:
            if lone:
                winner = participants[0]
            else:
                owner = pig_owner if kind is RoundKind.SLINGSHOT else 0
                winner, tied = self._decide(values, owner, slingshot_tie)
        return RoundResult(
            kind=kind, stat=stat, cards=MappingProxyType(cards),
            values=MappingProxyType(values), waiting=waiting, complete=complete,
            winner=winner, tied=tied, pot=tuple(pot), pig_owner=pig_owner,
        )

    def _open_replay(
        self,
        possible: Sequence[Stat],
        tied_under: Mapping[Stat, Sequence[int]],
        participants: Sequence[int],
        cards: Mapping[int, str],
        pot: Sequence[str],
    ) -> RoundResult:
        """The replay of a tie whose stat was not named, judged under each stat still possible.

        A stat is consistent with the table while every card laid is by a player tied under it;
        the replay is complete under it once every player tied under it has laid (a player
        tied alone under it takes the pot without a replay). The referee announces as soon as
        the replay is complete under one consistent stat: `by_stat` for those stats only, and
        `complete`, `winner`, `tied` when they agree.
        """
        laid = set(cards)
        groups = {s: tuple(tied_under.get(s, participants)) for s in possible}
        consistent = [s for s in possible if laid <= set(groups[s])] or list(possible)
        done = [s for s in consistent if len(groups[s]) == 1 or set(groups[s]) <= laid]
        by_stat: dict[str, Mapping[str, Any]] = {}
        values_by_stat: dict[str, Mapping[int, int]] = {}
        outcomes: list[tuple[int | None, tuple[int, ...]]] = []
        for s in done:
            vals = {p: self.value(c, s) for p, c in cards.items() if p in groups[s]}
            win: int | None
            even: tuple[int, ...]
            if len(groups[s]) == 1:
                win, even = groups[s][0], ()
            else:
                win, even = self._decide(vals, 0, SlingshotTie.AGAINST_PIG)
            outcomes.append((win, even))
            by_stat[s.value] = MappingProxyType({"winner": win, "tied": list(even)})
            values_by_stat[s.value] = MappingProxyType(vals)
        pending = {p for s in consistent for p in groups[s]} - laid
        waiting = () if done else tuple(p for p in participants if p in pending)
        agree = bool(outcomes) and all(o == outcomes[0] for o in outcomes)
        winner, tied = outcomes[0] if agree else (None, ())
        return RoundResult(
            kind=RoundKind.TIEBREAK, stat=None, cards=MappingProxyType(dict(cards)),
            values=MappingProxyType({}), waiting=waiting, complete=agree, winner=winner,
            tied=tied, pot=tuple(pot), by_stat=MappingProxyType(by_stat),
            values_by_stat=MappingProxyType(values_by_stat),
        )

    @staticmethod
    def _decide(
        values: Mapping[int, int], pig_owner: int, slingshot_tie: SlingshotTie
    ) -> tuple[int | None, tuple[int, ...]]:
        """(winner, ()) or (None, tied players); the pig's owner loses or wins ties by option."""
        if not values:
            return None, ()
        best = max(values.values())
        top = sorted(p for p, v in values.items() if v == best)
        if pig_owner in top and len(top) > 1:
            if slingshot_tie is SlingshotTie.PIG_WINS:
                return pig_owner, ()
            top = [p for p in top if p != pig_owner]
        if len(top) == 1:
            return top[0], ()
        return None, tuple(top)

    def _complete(self, w: _Work) -> bool:
        return self._result_of(w).complete

    def _started(self, w: _Work) -> bool:
        """Something of the current round already happened (a card laid, a stat named)."""
        if any(w.battle[p - 1] for p in w.participants):
            return True
        return w.kind is RoundKind.STAT and w.stat is not None

    # -- settling a round ------------------------------------------------------------------------

    @staticmethod
    def _open_outcomes(result: RoundResult) -> dict[Stat, tuple[int | None, tuple[int, ...]]]:
        """While the stat is not named and every card is laid: (winner, tied players) under each
        stat still possible; empty otherwise."""
        if result.stat is not None:
            return {}
        return {
            Stat(s): (o.get("winner"), tuple(o.get("tied", ())))
            for s, o in result.by_stat.items()
        }

    def _settle(self, w: _Work, taker: int | None, to_pot: bool, explicit: bool) -> None:
        """Move the round's cards: to `taker` (None: the referee's winner), or to the pot.

        While the stat is not named (the camera cannot hear it) the round is judged under every
        stat still possible. A `to-pot` is then right when the cards tie under at least one of
        them, and the replay keeps the stat unnamed: the stats still possible are those the
        round really tied under, and the players who replay are those tied under at least one
        of them. Taking them all (rather than those tied under every possible stat) never
        refuses a player who really replays; a player who does not simply lays no card, and the
        cards laid rule out the stats whose tied players did not lay them. In the replay of
        such a tie (no need to name the stat again) a `take` is right when the taker wins under
        at least one stat the replay is complete under, as it would be once the right stat
        were named.
        """
        result = self._result_of(w)
        outcomes = self._open_outcomes(result)
        # The replay of a tie with its stat unnamed, or a pot while it is: judged per stat.
        open_call = bool(outcomes) and (to_pot or w.kind is RoundKind.TIEBREAK)
        if explicit and not result.complete and not open_call:
            w.warn(
                Code.ROUND_NOT_FINISHED,
                "the cards were collected before "
                + ("the stat was named" if result.stat is None and not result.waiting
                   else "every player laid a card"),
                *([taker] if taker else []),
            )
        if not to_pot and taker is None:
            if result.winner is not None:
                taker = result.winner
            elif result.tied or not result.complete:
                to_pot = True
        stats = " or ".join(s.value for s in outcomes)
        if explicit and open_call:
            if to_pot and not any(tied for _, tied in outcomes.values()):
                w.warn(
                    Code.WRONG_WINNER,
                    f"the cards went to the pot, but the round is a tie under none of the stats "
                    f"it may be played with ({stats})",
                )
            elif not to_pot and taker is not None and not any(
                win == taker for win, _ in outcomes.values()
            ):
                w.warn(
                    Code.WRONG_WINNER,
                    f"{_p(taker)} took the cards, but wins under none of the stats the tie may "
                    f"be replayed with ({stats})",
                    taker,
                )
        if explicit and result.complete and not open_call:
            if to_pot and result.winner is not None:
                w.warn(
                    Code.WRONG_WINNER,
                    f"{_p(result.winner)} won the round, but the cards went to the pot",
                    result.winner,
                )
            elif not to_pot and taker is not None and taker != result.winner:
                if result.tied:
                    why = "the round was a tie between " + " and ".join(map(_p, result.tied))
                else:
                    why = f"{_p(result.winner or 0)} won the round"
                w.warn(Code.WRONG_WINNER, f"{_p(taker)} took the cards, but {why}", taker)
        laid = [c for p in range(1, w.players + 1) for c in reversed(w.battle[p - 1])]
        w.battle = [[] for _ in range(w.players)]
        kind, stat, possible = w.kind, w.stat, list(w.possible)
        if to_pot:
            if kind is RoundKind.SLINGSHOT and w.pig is not None:
                self._remove_from_structures(w, w.pig)
                laid.append(w.pig)
            w.pot = [*reversed(laid), *w.pot]
            tie_stats = [s for s, (_, even) in outcomes.items() if even]
            groups: dict[Stat, list[int]] = {}
            if tie_stats:
                # What the table told: the stat is one the round tied under.
                possible = tie_stats
                groups = {s: list(outcomes[s][1]) for s in tie_stats}
                tied = sorted({p for g in groups.values() for p in g})
            elif result.tied:
                tied = list(result.tied)
            else:
                tied = [
                    p for p in w.participants
                    if result.cards.get(p) is not None and p != w.pig_owner
                ]
            w.pig_owner, w.pig = 0, None
            w.builder, w.won = 0, []
            self._eliminate(w)
            if w.over:
                return
            able = [p for p in tied if p not in w.out and w.can_play(p)]
            w.turn += 1
            if able:
                w.kind = RoundKind.TIEBREAK
                w.participants = able
                if stat is not None:
                    w.name(stat)
                else:
                    possible = possible or list(NAMEABLE)
                    # Who replays under each stat it may be (a stat none of whose tied players
                    # can play any more is dropped while another is left).
                    replays = {s: [p for p in groups.get(s, tied) if p in able] for s in possible}
                    possible = [s for s in possible if replays[s]] or possible
                    w.unnamed(possible, replays)
                    if w.stat is None:
                        w.participants = [
                            p for p in able if any(p in replays[s] for s in w.possible)
                        ]
                if w.current not in w.participants:
                    w.current = w.participants[0]
            else:
                self._new_round(w, w.current, after_win=False)
            return
        assert taker is not None
        gained = list(laid)
        if kind is RoundKind.SLINGSHOT and w.pig is not None:
            if taker == w.pig_owner:
                for p in range(1, w.players + 1):
                    gained.extend(w.structure_cards(p))
                    w.structures[p - 1] = []
            else:
                self._remove_from_structures(w, w.pig)
                gained.append(w.pig)
        gained.extend(reversed(w.pot))
        w.pot = []
        w.decks[taker - 1].extend(gained)
        w.pig_owner, w.pig = 0, None
        w.builder, w.won = taker, gained
        self._eliminate(w)
        if not w.over:
            w.turn += 1
            self._new_round(w, taker, after_win=True)

    def _new_round(self, w: _Work, winner: int, *, after_win: bool) -> None:
        alive = w.alive()
        if after_win and w.options.leader is Leader.ROUND_WINNER and winner in alive:
            w.current = winner
        elif after_win or w.current not in alive:
            seat = w.current
            for _ in range(w.players):
                seat = seat % w.players + 1
                if seat in alive:
                    break
            w.current = seat
        w.kind = RoundKind.STAT
        w.unnamed(NAMEABLE)
        w.participants = [p for p in alive if w.can_play(p)]

    def _eliminate(self, w: _Work) -> None:
        for p in w.alive():
            if not w.holds_cards(p):
                w.out.append(p)
        alive = w.alive()
        if len(alive) <= 1 and not w.over:
            w.over = True
            w.winner = alive[0] if alive else None
        w.participants = [p for p in w.participants if p in alive]

    def _settle_if_complete(self, w: _Work) -> None:
        """A move of the next round settles a finished round as the referee computed it."""
        if self._complete(w):
            self._settle(w, None, False, explicit=False)

    # -- card movements -------------------------------------------------------------------------

    def _remove_from_structures(self, w: _Work, card: str) -> bool:
        for ss in w.structures:
            for s in ss:
                if card in s:
                    s.remove(card)
                    ss[:] = [x for x in ss if x]
                    return True
        return False

    def _remove_from_deck(self, w: _Work, player: int, index: int) -> Slot:
        deck = w.decks[player - 1]
        card = deck.pop(index)
        if index < w.ordered[player - 1]:
            w.ordered[player - 1] -= 1
        return card

    def _remove_anywhere(self, w: _Work, card: str, skip_player: int = 0) -> str | None:
        """Take a known card out of whatever zone holds it; the zone id, or None if unseen."""
        for p in range(1, w.players + 1):
            if p != skip_player and card in w.decks[p - 1]:
                self._remove_from_deck(w, p, w.decks[p - 1].index(card))
                return f"deck-{p}"
        for p in range(1, w.players + 1):
            if card in w.battle[p - 1]:
                w.battle[p - 1].remove(card)
                return f"battle-{p}"
        if card in w.pot:
            w.pot.remove(card)
            return "pot"
        for p in range(1, w.players + 1):
            if card in w.structure_cards(p):
                self._remove_from_structures(w, card)
                if card == w.pig:
                    w.pig = None
                return f"structure-{p}"
        if card in w.unseen:
            w.unseen.remove(card)
            return None
        w.warn(Code.IMPOSSIBLE_CARD, f"{card} is on the table more often than the deck holds it")
        return None

    def _draw_unknown(self, w: _Work) -> str | None:
        if not w.unseen:
            return None
        rng = random.Random(w.seed * 1_000_003 + w.draws)
        w.draws += 1
        return w.unseen.pop(rng.randrange(len(w.unseen)))

    def _top_structure_card(self, w: _Work, player: int) -> str | None:
        for s in reversed(w.structures[player - 1]):
            if s:
                return s[-1]
        return None

    def _take_back(self, w: _Work, player: int, card: str | None) -> None:
        top = self._top_structure_card(w, player)
        if top is None:
            w.warn(Code.INVALID_TAKE_BACK, f"{_p(player)} has no structure to take back from", player)
            return
        if card is not None and card != top:
            w.warn(
                Code.NOT_TOP_CARD,
                f"{_p(player)} took back {card}, but the top of the structure is {top}",
                player,
            )
            if card not in w.structure_cards(player):
                where = self._remove_anywhere(w, card)
                w.warn(Code.NOT_OWN_CARD, f"{card} came from {where or 'out of sight'}", player)
                w.decks[player - 1].insert(0, card)
                w.ordered[player - 1] += 1
                return
            top = card
        self._remove_from_structures(w, top)
        if top == w.pig:
            w.pig = None
        w.decks[player - 1].insert(0, top)
        w.ordered[player - 1] += 1

    def _take_from_deck(self, w: _Work, player: int, card: str | None) -> str | None:
        """The card a player lays: from the top of their deck (as seen, when `card` is given)."""
        deck = w.decks[player - 1]
        if not deck and self._top_structure_card(w, player) is not None:
            self._take_back(w, player, card if card in w.structure_cards(player) else None)
            deck = w.decks[player - 1]
        if card is None:
            if not deck:
                w.warn(Code.NOT_OWN_CARD, f"{_p(player)} has no card to lay", player)
                return None
            top = self._remove_from_deck(w, player, 0)
            if top is None:
                top = self._draw_unknown(w)
            return top
        ordered = w.ordered[player - 1]
        if deck and ordered > 0 and deck[0] == card:
            self._remove_from_deck(w, player, 0)
            return card
        if card in deck:
            index = deck.index(card)
            if ordered > 0:
                w.warn(
                    Code.NOT_TOP_CARD,
                    f"{_p(player)} laid {card} from inside the deck; the top card is "
                    f"{deck[0] or 'face down'}",
                    player,
                )
            self._remove_from_deck(w, player, index)
            return card
        # Not where the deck's known cards are: a face-down card of the deck, or someone else's.
        if card in w.unseen and None in deck:
            w.unseen.remove(card)
            index = deck.index(None)
            if ordered > 0 and index > 0 and any(c is not None for c in deck[:index]):
                w.warn(
                    Code.NOT_TOP_CARD,
                    f"{_p(player)} laid {card} from inside the deck; the top card is {deck[0]}",
                    player,
                )
            self._remove_from_deck(w, player, index)
            return card
        where = self._remove_anywhere(w, card, skip_player=0)
        w.warn(
            Code.NOT_OWN_CARD,
            f"{_p(player)} laid {card}, which is not in their deck (it was "
            f"{'in ' + where if where else 'out of the game'})",
            player,
        )
        return card

    # -- handlers ---------------------------------------------------------------------------------

    @staticmethod
    def _open_replay_of(w: _Work) -> bool:
        """The replay of a tie whose stat was not named is under way."""
        return w.kind is RoundKind.TIEBREAK and w.stat is None and bool(w.tied_under)

    def _replay_card_due(self, w: _Work, player: int) -> bool:
        """`player` may still lay a card in the replay of an unheard tie (they are tied under
        a stat still possible and have not laid): their card belongs to this replay, even when
        the replay is already complete under another stat, and does not start a new round."""
        return self._open_replay_of(w) and player in w.participants and not w.battle[player - 1]

    def _narrow(self, w: _Work, player: int) -> None:
        """A card laid by `player` in the replay of an unheard tie rules out every stat they
        were not tied under; the players who replay are those tied under a stat still left."""
        keep = [s for s in w.possible if player in w.tied_under.get(s, ())]
        if not keep or keep == w.possible:
            return
        groups = {s: w.tied_under[s] for s in keep}
        w.participants = [q for q in w.participants if any(q in g for g in groups.values())]
        w.unnamed(keep, groups)

    def _play(self, w: _Work, move: Play) -> None:
        p = move.player
        replay_card = self._replay_card_due(w, p)
        if not replay_card:
            self._settle_if_complete(w)
        w.builder, w.won = 0, []
        if p in w.out:
            w.warn(Code.NOT_IN_ROUND, f"{_p(p)} is out of the game", p)
        elif p not in w.participants:
            if w.kind is RoundKind.SLINGSHOT and p == w.pig_owner:
                why = "the pig's owner lays no card in the slingshot round"
            elif w.kind is RoundKind.TIEBREAK:
                why = "only " + " and ".join(map(_p, w.participants)) + " replay the tie"
            else:
                why = f"{_p(p)} has no card to play"
            w.warn(Code.NOT_IN_ROUND, f"{_p(p)} laid a card: {why}", p)
        elif w.battle[p - 1]:
            w.warn(Code.ALREADY_PLAYED, f"{_p(p)} laid a second card this round", p)
        card = self._take_from_deck(w, p, move.card)
        if card is not None:
            w.battle[p - 1].insert(0, card)
            if replay_card:
                self._narrow(w, p)

    def _name_stat(self, w: _Work, move: NameStat) -> None:
        p = move.player
        stat = parse_stat(move.stat, "move 'name-stat' field 'stat'")
        # In the replay of an unheard tie, naming a stat says which it was: not a new round.
        if self._complete(w) and not self._open_replay_of(w):
            self._settle(w, None, False, explicit=False)
        if w.builder and not self._started(w):
            w.builder, w.won = 0, []
        if w.kind is RoundKind.SLINGSHOT:
            if stat is not Stat.SLINGSHOT:
                w.warn(
                    Code.INVALID_STAT,
                    f"{_p(p)} named {stat.value} in a slingshot round; slingshot values count",
                    p,
                )
            return
        if w.kind is RoundKind.TIEBREAK:
            # Unnamed: naming one of the stats the tie may be replayed with only says which.
            same = stat is w.stat if w.stat is not None else stat in w.possible
            if not same:
                was = w.stat.value if w.stat else " or ".join(s.value for s in w.possible)
                w.warn(
                    Code.STAT_CHANGED,
                    f"the tie is replayed with {was}, but {_p(p)} named {stat.value}",
                    p,
                )
            w.name(stat)
            return
        if p != w.current:
            w.warn(Code.OUT_OF_TURN, f"{_p(p)} named the stat; it is {_p(w.current)}'s call", p)
        if stat is Stat.SLINGSHOT:
            w.warn(Code.INVALID_STAT, "the slingshot value is not named in a normal round", p)
        if w.stat is not None and w.stat is not stat:
            w.warn(
                Code.STAT_CHANGED, f"{w.stat.value} was named; {_p(p)} named {stat.value}", p
            )
        w.name(stat)

    def _take(self, w: _Work, move: Take) -> None:
        taker = move.player or None
        if not self._started(w) and not w.pot and not (
            w.kind is RoundKind.TIEBREAK and len(w.participants) == 1
        ):
            w.warn(Code.ROUND_NOT_FINISHED, "there is no card on the table to take", move.player)
            return
        result = self._result_of(w)
        if taker is None and result.winner is None:
            outcomes = self._open_outcomes(result) if w.kind is RoundKind.TIEBREAK else {}
            winners = {win for win, _ in outcomes.values()}
            if result.tied or winners == {None}:
                self._settle(w, None, True, explicit=True)
                return
            if len(winners) == 1:
                taker = winners.pop()
            else:
                why = " (the stats it may be replayed with disagree)" if outcomes else ""
                w.warn(Code.ROUND_NOT_FINISHED, f"the round has no winner yet{why}", move.player)
                return
        self._settle(w, taker, False, explicit=True)
        strange = Counter(move.cards) - Counter(w.won)
        if strange:
            w.warn(
                Code.DESYNC,
                f"{_p(taker or 0)} collected {', '.join(sorted(strange.elements()))}, which "
                "were not among the round's cards",
                taker or 0,
            )

    def _to_pot(self, w: _Work, move: ToPot) -> None:
        if not self._started(w):
            w.warn(Code.ROUND_NOT_FINISHED, "there is no card of this round on the table", move.player)
            return
        self._settle(w, None, True, explicit=True)

    def _build(self, w: _Work, move: Build) -> None:
        p = move.player
        self._settle_if_complete(w)
        if w.builder != p or self._started(w):
            w.warn(
                Code.BUILD_NOT_ALLOWED,
                f"{_p(p)} built without having just won a round",
                p,
            )
        cards = sorted(move.cards, key=lambda c: PART_ORDER[self.part(c)])
        for card in cards:
            if card in w.won:
                w.won.remove(card)
                deck = w.decks[p - 1]
                if card in deck:
                    self._remove_from_deck(w, p, len(deck) - 1 - deck[::-1].index(card))
                else:
                    self._remove_anywhere(w, card)
            else:
                if w.builder == p:
                    w.warn(Code.NOT_WON_CARD, f"{card} is not among the cards {_p(p)} just won", p)
                if card in w.decks[p - 1]:
                    self._remove_from_deck(w, p, w.decks[p - 1].index(card))
                else:
                    where = self._remove_anywhere(w, card)
                    if where is None and None in w.decks[p - 1]:
                        self._remove_from_deck(w, p, w.decks[p - 1].index(None))
            self._place(w, p, card)

    def _place(self, w: _Work, p: int, card: str) -> None:
        """Put one part on the player's structure, warning when the order or material is off."""
        part = self.part(card)
        material = self.material(card)
        structs = w.structures[p - 1]
        in_progress = [s for s in structs if not any(self.part(c) is Part.PIG for c in s)]
        target: list[str] | None = None
        if w.options.structures is StructureRule.ONE_PER_MATERIAL:
            if part is Part.PIG:
                ready = [s for s in in_progress if any(self.part(c) is Part.HORIZONTAL for c in s)]
                choices = ready or in_progress
                target = choices[0] if choices else None
            else:
                same = [s for s in in_progress if self._material_of(s) in (material, None)]
                target = same[0] if same else None
        elif in_progress:
            target = in_progress[-1]
        if target is None:
            limit = QUICK_STRUCTURES if w.quick else None
            if limit is not None and len(structs) >= limit:
                w.warn(
                    Code.TOO_MANY_STRUCTURES,
                    f"{_p(p)} started structure {len(structs) + 1}; at most {limit} are built",
                    p,
                )
            target = []
            structs.append(target)
        nv = sum(1 for c in target if self.part(c) is Part.VERTICAL)
        nh = sum(1 for c in target if self.part(c) is Part.HORIZONTAL)
        need = (
            Part.VERTICAL if nv < 2 and nh == 0 else Part.HORIZONTAL if nh == 0 else Part.PIG
        )
        if part is not need:
            w.warn(
                Code.WRONG_ORDER,
                f"{_p(p)} put {card} ({part.value}) on a structure that needs a {need.value}"
                + (" beam" if need is not Part.PIG else ""),
                p,
            )
        existing = self._material_of(target)
        if part is not Part.PIG and existing is not None and material != existing:
            w.warn(
                Code.MIXED_MATERIAL,
                f"{_p(p)} put a {material} beam ({card}) on a {existing} structure",
                p,
            )
        target.append(card)
        if part is Part.PIG:
            w.builder, w.won = 0, []
            if nh >= 1 and not w.quick and len(w.alive()) > 1:
                w.kind = RoundKind.SLINGSHOT
                w.name(Stat.SLINGSHOT)
                w.pig_owner, w.pig = p, card
                w.participants = [q for q in w.alive() if q != p and w.can_play(q)]
            elif nh >= 1 and w.quick:
                self._check_quick_end(w)

    def _material_of(self, structure: Sequence[str]) -> str | None:
        for c in structure:
            if self.part(c) is not Part.PIG:
                return self.material(c)
        return None

    def _check_quick_end(self, w: _Work) -> None:
        for p in w.alive():
            done = sum(
                1
                for s in w.structures[p - 1]
                if s and self.part(s[-1]) is Part.PIG
                and any(self.part(c) is Part.HORIZONTAL for c in s)
            )
            if done >= QUICK_STRUCTURES:
                counts = {q: len(w.decks[q - 1]) + len(w.structure_cards(q)) for q in w.alive()}
                best = max(counts.values())
                leaders = [q for q, n in counts.items() if n == best]
                w.over = True
                w.winner = leaders[0] if len(leaders) == 1 else None
                return

    def _take_back_move(self, w: _Work, move: TakeBack) -> None:
        p = move.player
        if not self._replay_card_due(w, p):
            self._settle_if_complete(w)
        if w.decks[p - 1] and self._top_structure_card(w, p) is not None:
            w.warn(
                Code.INVALID_TAKE_BACK,
                f"{_p(p)} took a card back while their deck still holds "
                f"{len(w.decks[p - 1])}",
                p,
            )
        self._take_back(w, p, move.card)

    def _quick_variant(self, w: _Work, move: QuickVariant) -> None:
        self._settle_if_complete(w)
        alive = w.alive()
        on_table = any(w.battle) or w.pot or any(w.structure_cards(p) for p in alive)
        if len(alive) != 2 or on_table:
            why = (
                f"{len(alive)} players are left" if len(alive) != 2 else "cards lie on the table"
            )
            w.warn(Code.QUICK_VARIANT_NOT_ALLOWED, f"the quick ending was chosen but {why}")
        w.quick = True
        if w.kind is RoundKind.SLINGSHOT:
            w.kind = RoundKind.STAT
            w.unnamed(NAMEABLE)
            w.participants = [q for q in alive if w.can_play(q)]
            w.pig_owner, w.pig = 0, None

    def _table_change(self, w: _Work, move: TableChange) -> None:
        zone = move.zone
        cards = list(move.cards)
        for c in cards:
            self.catalog.card(c)
        w.warn(Code.DESYNC, f"{zone} was set to {', '.join(cards) or 'nothing'} by hand")
        old: list[Slot]
        kind, _, num = zone.rpartition("-")
        if zone == "pot":
            old, w.pot = list(w.pot), list(cards)
        elif kind in ("deck", "battle", "structure") and num.isdigit() and 1 <= int(num) <= w.players:
            i = int(num) - 1
            if kind == "deck":
                old = list(w.decks[i])
                w.decks[i] = list(cards)
                w.ordered[i] = len(cards)
            elif kind == "battle":
                old = list(w.battle[i])
                w.battle[i] = list(cards)
            else:
                old = list(w.structure_cards(i + 1))
                if w.pig in old:
                    w.pig = None
                w.structures[i] = self._split_structures(list(reversed(cards)))
        else:
            raise SetupError(
                f"table-change: unknown zone {zone!r}; zones are deck-N, battle-N, "
                "structure-N and pot"
            )
        held = Counter(c for c in old if c is not None)
        left = held - Counter(cards)  # cards the zone held and holds no more
        pool = Counter(w.unseen) + held
        for c in cards:
            pool[c] -= 1
        for c in [c for c in cards if pool[c] < 0]:
            pool[c] += 1
            if not self._take_believed(w, c, zone, pool, left):
                w.warn(Code.IMPOSSIBLE_CARD, f"{c} is on the table more often than the deck holds it")
        if kind == "structure":
            # Parts believed built that are not: unused won cards, which go under the deck.
            for c in sorted(left.elements()):
                if pool[c] > 0 and not self._anywhere(w, c):
                    pool[c] -= 1
                    w.decks[int(num) - 1].append(c)
        w.unseen = sorted(pool.elements())

    @staticmethod
    def _anywhere(w: _Work, card: str) -> bool:
        """Whether a card lies in some deck, battle slot, structure or the pot."""
        return card in w.pot or any(
            card in w.decks[i] or card in w.battle[i] or card in w.structure_cards(i + 1)
            for i in range(w.players)
        )

    def _take_believed(
        self, w: _Work, card: str, zone: str, pool: Counter[str], left: Counter[str]
    ) -> bool:
        """A card set in `zone` by a `table-change` that the belief holds where nobody sees its
        face (a deck, a structure, the pot): the belief was wrong, the card is taken from there.
        In a deck, a card the zone held and holds no more (`left`) takes its place: the two were
        mistaken for each other. False when the card is nowhere to be taken: face up in a
        battle slot, or in the zone itself."""
        for p in range(1, w.players + 1):
            deck = w.decks[p - 1]
            if zone == f"deck-{p}" or card not in deck:
                continue
            index = deck.index(card)
            swap = min((c for c in left.elements() if not self._anywhere(w, c)), default=None)
            if swap is None:
                self._remove_from_deck(w, p, index)
            else:
                deck[index] = swap
                left[swap] -= 1
                pool[swap] -= 1
            return True
        if zone != "pot" and card in w.pot:
            w.pot.remove(card)
            return True
        for p in range(1, w.players + 1):
            if zone != f"structure-{p}" and card in w.structure_cards(p):
                self._remove_from_structures(w, card)
                if card == w.pig:
                    w.pig = None
                return True
        return False

    # -- reading a state ------------------------------------------------------------------------

    def cards_held(self, state: AbState, player: int) -> int:
        i = player - 1
        return (
            len(state.decks[i])
            + sum(len(s) for s in state.structures[i])
            + len(state.battle[i])
        )

    def scores(self, state: AbState) -> tuple[int, ...]:
        """Cards each player holds: deck, structures and the card in their battle slot."""
        return tuple(self.cards_held(state, p) for p in range(1, state.players + 1))

    def winner(self, state: AbState) -> int | None:
        return state.winner

    def is_over(self, state: AbState) -> bool:
        return state.over

    def zones(self, state: AbState) -> dict[str, tuple[Slot, ...]]:
        """Zone id -> cards (decks, pot and structures top first; None = not known)."""
        out: dict[str, tuple[Slot, ...]] = {}
        for p in range(1, state.players + 1):
            out[f"deck-{p}"] = state.decks[p - 1]
            out[f"battle-{p}"] = state.battle[p - 1]
            out[f"structure-{p}"] = tuple(
                c for s in reversed(state.structures[p - 1]) for c in reversed(s)
            )
        out["pot"] = state.pot
        return out

    def view(
        self, state: AbState, audience: Audience, player: int | None = None
    ) -> dict[str, Any]:
        """What a viewer may know. Decks are face down: the public sees their height only, a
        player also the top card of their own deck (held character side up); the operator
        sees the engine's whole belief. Battle slots, pot and structures are open."""
        shown: dict[str, list[str | None]] = {}
        for zone, cards in self.zones(state).items():
            if zone.startswith("deck-") and audience is not Audience.OPERATOR:
                own = audience is Audience.PLAYER and zone == f"deck-{player}"
                top = [cards[0]] if own and cards else []
                shown[zone] = [*top, *([None] * (len(cards) - len(top)))]
            else:
                shown[zone] = list(cards)
        result = self.round_result(state)
        pending: dict[str, Any] | None = None
        if result.cards or result.complete:
            pending = result.to_dict()
        return {
            "game": GAME_ID,
            "players": state.players,
            "current": state.current,
            "turn": state.turn,
            "round": state.kind.value,
            "stat": state.stat.value if state.stat else None,
            "possible_stats": [s.value for s in state.possible],
            "tied_under": {s.value: list(ps) for s, ps in state.tied_under},
            "in_round": list(state.participants),
            "pig_owner": state.pig_owner or None,
            "builder": state.builder or None,
            "quick": state.quick,
            "out": list(state.out),
            "scores": list(self.scores(state)),
            "winner": state.winner,
            "over": state.over,
            "zones": shown,
            "pending_round": pending,
        }

    # -- enumerating legal moves (simulation, interpretation) ----------------------------------

    def legal_moves(self, state: AbState) -> Iterator[AbMove]:
        """The legal moves of the moment: settle a finished round, build, lay cards, name the
        stat, take a card back, or agree to the quick ending."""
        if state.over:
            return
        result = self.round_result(state)
        if result.complete:
            if result.winner is not None:
                yield Take(player=result.winner)
            else:
                yield ToPot()
            return
        if state.kind is RoundKind.TIEBREAK and result.by_stat:
            # The replay of a tie whose stat nobody heard: any outcome of a possible stat.
            outcomes = self._open_outcomes(result)
            for p in sorted({win for win, _ in outcomes.values() if win is not None}):
                yield Take(player=p)
            if any(tied for _, tied in outcomes.values()):
                yield ToPot()
            # The players tied under a stat the replay is not complete under may still lay.
            yield from self._play_moves(state)
            return
        started = bool(result.cards) or (state.kind is RoundKind.STAT and state.stat is not None)
        if state.kind is RoundKind.SLINGSHOT:
            started = any(state.battle[p - 1] for p in state.participants)
        if state.builder and not started:
            yield from self._build_moves(state, state.builder)
            if (
                len([p for p in range(1, state.players + 1) if p not in state.out]) == 2
                and not state.quick
                and not any(state.battle) and not state.pot
                and not any(any(ss) for ss in state.structures)
            ):
                yield QuickVariant(player=state.builder)
        if state.kind is not RoundKind.SLINGSHOT and state.stat is None:
            for s in state.possible:
                yield NameStat(player=state.current, stat=s.value)
        yield from self._play_moves(state)

    def _play_moves(self, state: AbState) -> Iterator[AbMove]:
        """A card (or a card taken back) by each player of the round who has not laid one."""
        for p in state.participants:
            if state.battle[p - 1]:
                continue
            if not state.decks[p - 1]:
                yield TakeBack(player=p)
                continue
            top = state.decks[p - 1][0]
            yield Play(player=p, card=top if state.ordered[p - 1] > 0 else None)

    def _build_moves(self, state: AbState, p: int) -> Iterator[AbMove]:
        """Single-card builds that follow the structure rules."""
        structs = [list(s) for s in state.structures[p - 1]]
        for card in dict.fromkeys(state.won):
            w = _Work(state)
            w.warnings = []
            self._place(w, p, card)
            if not w.warnings and (not state.quick or len(structs) <= QUICK_STRUCTURES):
                yield Build(player=p, cards=(card,))


_HANDLERS: dict[type[AbMove], Any] = {
    Play: AngryBirdsPowerCards._play,
    NameStat: AngryBirdsPowerCards._name_stat,
    Take: AngryBirdsPowerCards._take,
    ToPot: AngryBirdsPowerCards._to_pot,
    Build: AngryBirdsPowerCards._build,
    TakeBack: AngryBirdsPowerCards._take_back_move,
    QuickVariant: AngryBirdsPowerCards._quick_variant,
    TableChange: AngryBirdsPowerCards._table_change,
}


# --------------------------------------------------------------------------------------------
# An owner's deck: a CSV of the real cards to a catalog document


class DeckImportError(CatalogError):
    """A deck CSV row or column that cannot become a catalog entry."""


CSV_COLUMNS = ("id", "name", "power", "distance", "aim", "rarity", "slingshot", "part", "material")
CSV_OPTIONAL = ("count", "character")
CSV_ALIASES: Mapping[str, str] = MappingProxyType(
    {"back": "part", "back_part": "part", "back part": "part", "kind": "part"}
)
STAT_RANGE = (0, 99)


def catalog_from_csv(text: str, source: str = "<csv>") -> dict[str, Any]:
    """A catalog document (engine/catalog.py format) from a CSV of a real deck.

    Columns (header row, any order, case-insensitive): id, name, power, distance, aim, rarity,
    slingshot (whole numbers), part (vertical, horizontal or pig; also `back`), material (wood,
    stone or ice; empty for a pig); optional count (copies, default 1) and character. Every
    error names the file, the line and the column.
    """
    reader = csv.reader(io.StringIO(text))
    rows = list(reader)
    if not rows:
        raise DeckImportError(f"{source}: the file is empty; the first line must name the columns")
    header = [CSV_ALIASES.get(h.strip().lower(), h.strip().lower()) for h in rows[0]]
    missing = [c for c in CSV_COLUMNS if c not in header]
    if missing:
        raise DeckImportError(
            f"{source}: line 1: missing column(s) {', '.join(missing)}; the columns are "
            f"{', '.join(CSV_COLUMNS)} (optional: {', '.join(CSV_OPTIONAL)})"
        )
    unknown = [h for h in header if h not in CSV_COLUMNS + CSV_OPTIONAL]
    if unknown:
        raise DeckImportError(
            f"{source}: line 1: unknown column(s) {', '.join(unknown)}; allowed: "
            f"{', '.join(CSV_COLUMNS + CSV_OPTIONAL)}"
        )
    col = {name: header.index(name) for name in header}
    backs: dict[str, dict[str, Any]] = {}
    fronts: list[dict[str, Any]] = []
    cards: list[dict[str, Any]] = []
    seen: dict[str, int] = {}
    for line, row in enumerate(rows[1:], start=2):
        if not any(cell.strip() for cell in row):
            continue
        if len(row) != len(header):
            raise DeckImportError(
                f"{source}: line {line}: {len(row)} values for {len(header)} columns"
            )

        def cell(name: str, row: list[str] = row) -> str:
            return row[col[name]].strip() if name in col else ""

        def whole(name: str, lo: int, hi: int, line: int = line, row: list[str] = row) -> int:
            raw = row[col[name]].strip() if name in col else ""
            try:
                value = int(raw)
            except ValueError:
                raise DeckImportError(
                    f"{source}: line {line} column {name!r}: {raw!r} is not a whole number"
                ) from None
            if not lo <= value <= hi:
                raise DeckImportError(
                    f"{source}: line {line} column {name!r}: {value} is outside {lo}-{hi}"
                )
            return value

        cid = cell("id").lower()
        if not cid or not cid[0].isalnum() or any(
            not (ch.isalnum() or ch in "._+-") for ch in cid
        ) or not cid.isascii():
            raise DeckImportError(
                f"{source}: line {line} column 'id': {cell('id')!r} is not a valid id; use "
                "lower case letters, digits and . _ + -"
            )
        if cid.startswith("back."):
            raise DeckImportError(
                f"{source}: line {line} column 'id': ids starting with 'back.' name card backs"
            )
        if cid in seen:
            raise DeckImportError(
                f"{source}: line {line} column 'id': {cid!r} is already used on line {seen[cid]}"
            )
        seen[cid] = line
        name = cell("name") or cid
        stats = {s: whole(s, *STAT_RANGE) for s in ("power", "distance", "aim", "rarity", "slingshot")}
        part = cell("part").lower()
        if part not in (p.value for p in Part):
            raise DeckImportError(
                f"{source}: line {line} column 'part': {cell('part')!r}; use vertical, "
                "horizontal or pig"
            )
        material = cell("material").lower()
        if part == Part.PIG.value:
            if material:
                raise DeckImportError(
                    f"{source}: line {line} column 'material': a pig has no material; "
                    "leave it empty"
                )
            back_id = "back.pig"
            back_attrs: dict[str, Any] = {"part": "pig"}
            card_attrs: dict[str, Any] = {"back_part": "pig"}
        else:
            if material not in MATERIALS:
                raise DeckImportError(
                    f"{source}: line {line} column 'material': {cell('material')!r}; use "
                    + ", ".join(MATERIALS)
                )
            back_id = f"back.{material}-{part}"
            back_attrs = {"part": "beam", "material": material, "beam": part}
            card_attrs = {"back_part": "beam", "material": material, "beam": part}
        count = whole("count", 1, 99) if cell("count") else 1
        character = cell("character") or cid.rsplit("-", 1)[0]
        backs.setdefault(
            back_id,
            {
                "id": back_id,
                "name": "Pig" if part == "pig" else f"{material.title()} {part} beam",
                "side": "back",
                "attrs": back_attrs,
            },
        )
        front_attrs = {"character": character, **stats}
        fronts.append({"id": cid, "name": name, "side": "front", "attrs": front_attrs})
        cards.append(
            {
                "id": cid,
                "name": name,
                "kind": "pig" if part == "pig" else "part",
                "count": count,
                "front": cid,
                "back": back_id,
                "attrs": {**front_attrs, **card_attrs},
            }
        )
    if not cards:
        raise DeckImportError(f"{source}: no card rows after the header line")
    return {
        "schema": 1,
        "game": GAME_ID,
        "name": "Angry Birds Power Cards",
        "publisher": "Tactic",
        "card_size_mm": [59, 91],
        "total": sum(int(c["count"]) for c in cards),
        "placeholder": False,
        "notes": f"Imported from {source.rsplit('/', 1)[-1]} with `cardtrack deck import`.",
        "faces": [*backs.values(), *fronts],
        "cards": cards,
    }


RULESET = AngryBirdsPowerCards()
register(RULESET)
