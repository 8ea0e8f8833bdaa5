"""Mattel "Minecraft Card Game?" (DJY41, 2015): the complete rules as a pure ruleset.

GAMES.md §1 is the normative summary; the rule sheets are in `shared/seeds/000` and `003`.
The table is the truth: every move is applied as it physically happened, and a broken rule is
reported as a `GameWarning`. Cards the camera cannot see are modelled honestly: a face-down slot
holds `None`, and the identities not yet located on the table form the `unseen` pool. When a
face-down card is turned up, the move may carry what was seen (`reveal`, zone id -> card id);
without it the engine draws the card deterministically from the pool (seeded by the state, so
`apply` stays pure and replay reproduces it).

Choices where the sheets are silent (each documented in docs/rules/minecraft-card-game.md):
- The turn passes when the next player acts after the current player used all their actions,
  or after an explicit `end-turn`; a player whose shovel penalties leave them no action is
  skipped. Any other player acting is `out-of-turn` (applied, not counted for anyone's turn).
- A creeper exposed under the TNT's own pile, or under a creeper that just left after its
  attack, counts as exposed by mining.
- Each player answers every attacking creeper once (a resource discard, or a sword that
  cancels one), never discarding more cards than they hold; a player with none owes nothing.
- A creeper turned up by a re-deal was exposed by the re-deal, not by the mine that emptied
  the pile; at setup only `creeper_at_setup` decides whether a creeper attacks.
- When every craft pile is empty and no card waits in a holder, nobody can score any more: the
  game ends and the highest score wins (a tie is a draw).
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from itertools import combinations, product
from operator import attrgetter
from types import MappingProxyType
from typing import Any, ClassVar

from engine.catalog import Catalog, load_catalog
from engine.core import Audience, GameWarning, OptionSpec, Step, register, resolve_options
from engine.errors import MoveFormatError, SetupError, UnknownCardError
from engine.moves import decode_move, encode_move
from engine.tuples import remove_one, replace_at

GAME_ID = "minecraft-card-game"
RESOURCE_PILES = 5
CRAFT_PILES = 4
PILE_SIZE = 15
CRAFT_PILE_SIZE = 6
WIN_POINTS: Mapping[int, int] = {2: 24, 3: 20, 4: 16}
BASE_ACTIONS = 2
KEEP_FROM_TNT = 2
AXE_WOOD = 2

Slot = str | None
"""A card in a pile: its id, or None for a face-down card whose identity is not known."""


class Code(StrEnum):
    """Stable warning codes of this game (public vocabulary: journal, API, overlay)."""

    OUT_OF_TURN = "out-of-turn"
    TOO_MANY_ACTIONS = "too-many-actions"
    NOT_ON_TOP = "not-on-top"
    UNDERPAID = "underpaid"
    WILD_SPLIT = "wild-split"
    INVALID_PAYMENT = "invalid-payment"
    RESERVE_FULL = "reserve-full"
    TOOL_USED = "tool-used"
    WRONG_TOOL = "wrong-tool"
    NOT_OWNED = "not-owned"
    TNT_KEEP_INVALID = "tnt-keep-invalid"
    CREEPER_DISCARD_MISSING = "creeper-discard-missing"
    NO_CREEPER = "no-creeper"
    EMPTY_PILE = "empty-pile"
    IMPOSSIBLE_CARD = "impossible-card"
    GAME_OVER = "game-over"
    DESYNC = "desync"


RULES: Mapping[Code, str] = {
    Code.OUT_OF_TURN: "Players act in turn order; the turn passes after the active player's actions.",
    Code.TOO_MANY_ACTIONS: "A turn has 2 actions (+1 per pickaxe used, -1 per shovel received).",
    Code.NOT_ON_TOP: "Only the top card of a pile may be mined, crafted or reserved.",
    Code.UNDERPAID: "The resources paid must cover the recipe (overpaying is allowed).",
    Code.WILD_SPLIT: "A wild card counts as one resource type at its full value; it is never split.",
    Code.INVALID_PAYMENT: "Only resource and wild cards from your own area pay for a craft.",
    Code.RESERVE_FULL: "A card holder keeps one card.",
    Code.TOOL_USED: "Each tool is used once; a used tool shows its crafting side.",
    Code.WRONG_TOOL: "That tool has no such power (axes pay for crafts, swords cancel creepers).",
    Code.NOT_OWNED: "Players use only cards in front of them.",
    Code.TNT_KEEP_INVALID: "From a TNT blast keep at most 2 resource or wild cards; the rest is discarded.",
    Code.CREEPER_DISCARD_MISSING: "When a creeper is exposed, every player discards one resource card.",
    Code.NO_CREEPER: "Creeper discards happen only when a creeper is exposed.",
    Code.EMPTY_PILE: "An empty pile has nothing to take.",
    Code.IMPOSSIBLE_CARD: "Each card exists only as often as the deck holds it.",
    Code.GAME_OVER: "The game ends as soon as a player reaches the winning score.",
    Code.DESYNC: "The table changed in a way no legal move explains.",
}


class SetupMode(StrEnum):
    TOP_CARD = "top-card"
    ALL_FACE_UP = "all-face-up"


class CreeperAtSetup(StrEnum):
    DISCARD_NO_ATTACK = "discard-no-attack"
    ATTACK = "attack"


class CreeperTrigger(StrEnum):
    MINE_ONLY = "mine-only"
    ANY_EXPOSURE = "any-exposure"


OPTIONS: tuple[OptionSpec, ...] = (
    OptionSpec.of(
        "setup",
        SetupMode.TOP_CARD,
        "top-card: piles face down with the top card turned up (sheet G2); "
        "all-face-up: whole piles face up (sheet G1).",
    ),
    OptionSpec.of(
        "creeper_at_setup",
        CreeperAtSetup.DISCARD_NO_ATTACK,
        "A creeper turned up while setting up is discarded without an attack, or attacks.",
    ),
    OptionSpec.of(
        "creeper_trigger",
        CreeperTrigger.MINE_ONLY,
        "Only a creeper exposed by mining attacks (one exposed by TNT, hoe or re-deal is "
        "just discarded), or any exposed creeper attacks.",
    ),
)


@dataclass(frozen=True, slots=True, kw_only=True)
class Options:
    setup: SetupMode = SetupMode.TOP_CARD
    creeper_at_setup: CreeperAtSetup = CreeperAtSetup.DISCARD_NO_ATTACK
    creeper_trigger: CreeperTrigger = CreeperTrigger.MINE_ONLY

    def to_dict(self) -> dict[str, str]:
        return {
            "setup": self.setup.value,
            "creeper_at_setup": self.creeper_at_setup.value,
            "creeper_trigger": self.creeper_trigger.value,
        }


# --------------------------------------------------------------------------------------------
# Moves


Reveal = tuple[tuple[str, str], ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class McgMove:
    """Fields shared by every move: who made it, and cards seen turning up because of it."""

    NAME: ClassVar[str] = ""
    player: int
    reveal: Reveal = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class Mine(McgMove):
    """Take the top card of resource pile 1-5 (`card`: what was taken, when seen)."""

    NAME: ClassVar[str] = "mine"
    pile: int
    card: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class TntKeep(McgMove):
    """After mining a TNT: the (at most 2) resource or wild cards kept from the blast."""

    NAME: ClassVar[str] = "tnt-keep"
    cards: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class CreeperDiscard(McgMove):
    """A player's answer to a creeper: discard one resource card, or use a sword to cancel."""

    NAME: ClassVar[str] = "creeper-discard"
    card: str | None = None
    sword: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Craft(McgMove):
    """Craft a card from a craft pile top or from the player's holder."""

    NAME: ClassVar[str] = "craft"
    card: str
    source: str = field(metadata={"key": "from"})
    pay: tuple[str, ...] = ()
    axes: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class Reserve(McgMove):
    """Put the top card of craft pile 1-4 into the player's card holder."""

    NAME: ClassVar[str] = "reserve"
    pile: int
    card: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class UseTool(McgMove):
    """Use a ready shovel (target: a player), pickaxe or hoe; not an action."""

    NAME: ClassVar[str] = "use-tool"
    card: str
    target: int | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class EndTurn(McgMove):
    """The active player ends the turn, giving up any actions left."""

    NAME: ClassVar[str] = "end-turn"


@dataclass(frozen=True, slots=True, kw_only=True)
class TableChange(McgMove):
    """A physical change nothing legal explains (or an operator correction): set a zone."""

    NAME: ClassVar[str] = "table-change"
    zone: str
    cards: tuple[str, ...] = ()


MOVE_TYPES: tuple[type[McgMove], ...] = (
    Mine,
    TntKeep,
    CreeperDiscard,
    Craft,
    Reserve,
    UseTool,
    EndTurn,
    TableChange,
)
ACTIONS: tuple[type[McgMove], ...] = (Mine, Craft, Reserve)


# --------------------------------------------------------------------------------------------
# State


@dataclass(frozen=True, slots=True, kw_only=True)
class McgState:
    """Everything on the table and whose turn it is. Players are numbered from 1."""

    players: int
    options: Options
    seed: int
    draws: int
    resource_piles: tuple[tuple[Slot, ...], ...]
    craft_piles: tuple[tuple[Slot, ...], ...]
    discard: tuple[str, ...]
    set_aside: str | None
    areas: tuple[tuple[str, ...], ...]  # per player, in the order the cards came (`zones` lists them latest first)
    reserves: tuple[tuple[str, ...], ...]
    used: frozenset[str]
    unseen: tuple[str, ...]
    current: int
    actions: int
    allowed: int
    turn_over: bool
    skip: tuple[int, ...]
    attacks: tuple[int, ...]
    owed: tuple[int, ...]
    tnt: tuple[str, ...]
    tnt_player: int
    winner: int | None
    over: bool
    turn: int
    move_index: int


class _Work:
    """A mutable scratch copy of a state used inside one `apply`; frozen again at the end."""

    __slots__ = (*McgState.__dataclass_fields__, "warnings", "catalog", "reveal")

    players: int
    options: Options
    seed: int
    draws: int
    resource_piles: tuple[tuple[Slot, ...], ...]
    craft_piles: tuple[tuple[Slot, ...], ...]
    discard: tuple[str, ...]
    set_aside: str | None
    areas: tuple[tuple[str, ...], ...]
    reserves: tuple[tuple[str, ...], ...]
    used: frozenset[str]
    unseen: tuple[str, ...]
    current: int
    actions: int
    allowed: int
    turn_over: bool
    skip: tuple[int, ...]
    attacks: tuple[int, ...]
    owed: tuple[int, ...]
    tnt: tuple[str, ...]
    tnt_player: int
    winner: int | None
    over: bool
    turn: int
    move_index: int
    warnings: list[GameWarning]
    catalog: Catalog
    reveal: dict[str, list[str]]

    def __init__(self, state: McgState, catalog: Catalog, reveal: Reveal = ()) -> None:
        # Slot by slot, as `setattr` by name would (see `freeze`): every field of the state.
        for put, value in zip(_WORK_SLOTS, _read_fields(state), strict=True):
            put(self, value)
        self.warnings = []
        self.catalog = catalog
        # A zone may be named more than once: the cards turned up there in order (a creeper
        # exposed and discarded, then the card under it).
        self.reveal = {}
        for zone, card in reveal:
            self.reveal.setdefault(zone, []).append(card)

    def seen(self, zone: str) -> str | None:
        """The next card the move says turned up in `zone` (None when it says nothing)."""
        cards = self.reveal.get(zone)
        if not cards:
            return None
        card = cards.pop(0)
        if not cards:
            del self.reveal[zone]
        return card

    def freeze(self) -> McgState:
        """The state this scratch copy now holds. Built field by field as the dataclass's own
        `__init__` builds it (`object.__setattr__` on each slot; `McgState` has no
        `__post_init__`), without passing two dozen keywords: the interpreter's search
        applies tens of thousands of moves per read."""
        state = object.__new__(McgState)
        for put, value in zip(_STATE_SLOTS, _read_fields(self), strict=True):
            put(state, value)
        return state

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

    # -- small helpers on tuples -------------------------------------------------------------

    def set_area(self, player: int, cards: tuple[str, ...]) -> None:
        self.areas = replace_at(self.areas, player - 1, cards)

    def set_rpile(self, index: int, cards: tuple[Slot, ...]) -> None:
        self.resource_piles = replace_at(self.resource_piles, index, cards)

    def set_cpile(self, index: int, cards: tuple[Slot, ...]) -> None:
        self.craft_piles = replace_at(self.craft_piles, index, cards)


_STATE_FIELDS = tuple(McgState.__dataclass_fields__)
_read_fields = attrgetter(*_STATE_FIELDS)
_STATE_SLOTS = tuple(getattr(McgState, name).__set__ for name in _STATE_FIELDS)
_WORK_SLOTS = tuple(getattr(_Work, name).__set__ for name in _STATE_FIELDS)
if hasattr(McgState, "__post_init__"):  # `_Work.freeze` would skip it
    raise TypeError("McgState gained a __post_init__: build it with McgState(...) in _Work.freeze")


def _player_name(n: int) -> str:
    return f"player {n}"


# --------------------------------------------------------------------------------------------
# The ruleset


class MinecraftCardGame:
    """The Mattel game: `apply` never refuses a move that physically happened."""

    id = GAME_ID
    name = "Minecraft Card Game? (Mattel, 2015)"
    min_players = 2
    max_players = 4
    move_types = MOVE_TYPES
    # How a simulated player weighs its legal moves: craft when it can, rarely pass early.
    sim_weights: Mapping[str, float] = MappingProxyType(
        {"craft": 40.0, "mine": 3.0, "reserve": 0.5, "use-tool": 0.5, "end-turn": 0.02}
    )

    def __init__(self) -> None:
        self._catalog: Catalog | None = None
        self._attrs: dict[str, Mapping[str, Any]] = {}
        self._kinds: dict[str, str] = {}

    # -- catalog helpers ----------------------------------------------------------------------

    @property
    def catalog(self) -> Catalog:
        if self._catalog is None:
            cat = load_catalog(GAME_ID)
            self._attrs = {c.id: c.attrs for c in cat.cards.values()}
            self._kinds = {c.id: c.kind for c in cat.cards.values()}
            self._catalog = cat
        return self._catalog

    @property
    def options(self) -> tuple[OptionSpec, ...]:
        return OPTIONS

    def kind(self, card: str) -> str:
        if not self._kinds:
            _ = self.catalog
        try:
            return self._kinds[card]
        except KeyError:
            self.catalog.card(card)  # raises the clear UnknownCardError
            raise

    # The two tests below run in every move of a search: they look the kind up directly and
    # call `kind` (which loads the catalog or raises) only for a card not known yet. A kind
    # is never empty, so `or` falls through only when the card is missing.

    def is_craft(self, card: str) -> bool:
        return (self._kinds.get(card) or self.kind(card)) == "craft"

    def is_resource(self, card: str) -> bool:
        """Resource or wild: cards with a quantity that can pay and be discarded to creepers."""
        return (self._kinds.get(card) or self.kind(card)) in ("resource", "wild")

    def points(self, card: str) -> int:
        return int(self._attrs[card]["points"]) if self.is_craft(card) else 0

    def tool(self, card: str) -> str:
        return str(self._attrs[card]["tool"])

    # -- setup --------------------------------------------------------------------------------

    def initial_state(
        self,
        *,
        players: int,
        options: Mapping[str, object] | None = None,
        seed: int | None = None,
        setup: Mapping[str, Any] | None = None,
    ) -> McgState:
        """A fresh table: dealt from `seed`, or laid out exactly as `setup` says.

        `setup` maps zone ids to card lists (piles top first; `None` for a face-down card not
        known; a player's area latest first, the card on top of it first, as `zones` lists it):
        `resource-pile-1..5`, `craft-pile-1..4`, `set-aside`, `discard`, `player-N`,
        `reserve-N`. Cards the setup does not place are out of sight (the unseen pool).
        """
        if not isinstance(players, int) or not (
            self.min_players <= players <= self.max_players
        ):
            raise SetupError(
                f"{GAME_ID} is for {self.min_players}-{self.max_players} players, got {players!r}"
            )
        raw = resolve_options(OPTIONS, options)
        opts = Options(
            setup=SetupMode(str(raw["setup"])),
            creeper_at_setup=CreeperAtSetup(str(raw["creeper_at_setup"])),
            creeper_trigger=CreeperTrigger(str(raw["creeper_trigger"])),
        )
        seed = 0 if seed is None else int(seed)
        catalog = self.catalog
        deck = list(catalog.deck())
        if setup is None:
            rng = random.Random(seed)
            resources = [c for c in deck if not self.is_craft(c)]
            crafts = [c for c in deck if self.is_craft(c)]
            rng.shuffle(resources)
            rng.shuffle(crafts)
            rpiles: tuple[tuple[Slot, ...], ...] = tuple(
                tuple(resources[i * PILE_SIZE : (i + 1) * PILE_SIZE]) for i in range(RESOURCE_PILES)
            )
            cpiles: tuple[tuple[Slot, ...], ...] = tuple(
                tuple(crafts[i * CRAFT_PILE_SIZE : (i + 1) * CRAFT_PILE_SIZE])
                for i in range(CRAFT_PILES)
            )
            set_aside: str | None = crafts[CRAFT_PILES * CRAFT_PILE_SIZE]
            discard: tuple[str, ...] = ()
            areas: tuple[tuple[str, ...], ...] = ((),) * players
            reserves: tuple[tuple[str, ...], ...] = ((),) * players
            unseen: tuple[str, ...] = ()
        else:
            rpiles, cpiles, set_aside, discard, areas, reserves, unseen = self._explicit_setup(
                setup, players, deck
            )
        state = McgState(
            players=players,
            options=opts,
            seed=seed,
            draws=0,
            resource_piles=rpiles,
            craft_piles=cpiles,
            discard=discard,
            set_aside=set_aside,
            areas=areas,
            reserves=reserves,
            used=frozenset(),
            unseen=unseen,
            current=1,
            actions=0,
            allowed=BASE_ACTIONS,
            turn_over=False,
            skip=(0,) * players,
            attacks=(),
            owed=(0,) * players,
            tnt=(),
            tnt_player=0,
            winner=None,
            over=False,
            turn=1,
            move_index=0,
        )
        # Turn up the top of every pile; creepers found there follow `creeper_at_setup`.
        work = _Work(state, catalog)
        for i in range(RESOURCE_PILES):
            self._reveal_top(work, "resource", i)
        for i in range(CRAFT_PILES):
            self._reveal_top(work, "craft", i)
        attack = opts.creeper_at_setup is CreeperAtSetup.ATTACK
        for i in range(RESOURCE_PILES):
            self._settle_pile(work, i, attacking=attack, at_setup=True)
        self._resolve_attacks_if_settled(work)
        return work.freeze()

    def _explicit_setup(
        self, setup: Mapping[str, Any], players: int, deck: list[str]
    ) -> tuple[
        tuple[tuple[Slot, ...], ...],
        tuple[tuple[Slot, ...], ...],
        str | None,
        tuple[str, ...],
        tuple[tuple[str, ...], ...],
        tuple[tuple[str, ...], ...],
        tuple[str, ...],
    ]:
        if not isinstance(setup, Mapping):
            raise SetupError("'setup' must map zone ids to lists of card ids")
        known = {
            *(f"resource-pile-{i}" for i in range(1, RESOURCE_PILES + 1)),
            *(f"craft-pile-{i}" for i in range(1, CRAFT_PILES + 1)),
            "set-aside",
            "discard",
            *(f"player-{p}" for p in range(1, players + 1)),
            *(f"reserve-{p}" for p in range(1, players + 1)),
        }
        for zone in setup:
            if zone not in known:
                raise SetupError(
                    f"setup: unknown zone {zone!r} for {players} players; zones are: "
                    + ", ".join(sorted(known))
                )

        def cards_of(zone: str, allow_unknown: bool) -> tuple[Slot, ...]:
            value = setup.get(zone, [])
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
            return tuple(out)

        rpiles = tuple(cards_of(f"resource-pile-{i}", True) for i in range(1, RESOURCE_PILES + 1))
        cpiles = tuple(cards_of(f"craft-pile-{i}", True) for i in range(1, CRAFT_PILES + 1))
        aside = cards_of("set-aside", False)
        if len(aside) > 1:
            raise SetupError("setup: 'set-aside' holds one craft card")
        # The camera sees the discard pile's top only: cards under it not known (None) are
        # left out (a setup read off the table with two creepers discarded at the deal).
        discard = tuple(c for c in cards_of("discard", True) if c is not None)
        areas = tuple(
            tuple(reversed([c for c in cards_of(f"player-{p}", False) if c is not None]))
            for p in range(1, players + 1)
        )
        reserves = tuple(
            tuple(c for c in cards_of(f"reserve-{p}", False) if c is not None)
            for p in range(1, players + 1)
        )
        for zone, pile in (
            *((f"resource-pile-{i + 1}", p) for i, p in enumerate(rpiles)),
            ("discard", discard),
            *((f"player-{i + 1}", a) for i, a in enumerate(areas)),
        ):
            for card in pile:
                if card is not None and self.is_craft(card) and not zone.startswith("player"):
                    raise SetupError(f"setup: craft card {card!r} cannot lie in {zone!r}")
        for i, pile in enumerate(cpiles):
            for card in pile:
                if card is not None and not self.is_craft(card):
                    raise SetupError(
                        f"setup: {card!r} is not a craft card but lies in 'craft-pile-{i + 1}'"
                    )
        placed = Counter(
            c
            for group in (*rpiles, *cpiles, aside, discard, *areas, *reserves)
            for c in group
            if c is not None
        )
        pool = Counter(deck)
        for card, n in placed.items():
            if n > pool[card]:
                raise SetupError(
                    f"setup: {card!r} appears {n} times but the deck holds {pool[card]}"
                )
        pool.subtract(placed)
        unseen = tuple(sorted(pool.elements()))
        hidden_res = sum(1 for p in rpiles for c in p if c is None)
        hidden_craft = sum(1 for p in cpiles for c in p if c is None)
        if hidden_res > sum(1 for c in unseen if not self.is_craft(c)):
            raise SetupError("setup: more face-down resource cards than the deck has left")
        if hidden_craft > sum(1 for c in unseen if self.is_craft(c)):
            raise SetupError("setup: more face-down craft cards than the deck has left")
        return (
            rpiles,
            cpiles,
            aside[0] if aside else None,
            discard,
            areas,
            reserves,
            unseen,
        )

    # -- moves --------------------------------------------------------------------------------

    def parse_move(self, data: Mapping[str, Any]) -> McgMove:
        """Decode a plain move; `reveal` is a mapping zone id -> card id (a list of pairs is
        accepted too)."""
        reveal = data.get("reveal") if isinstance(data, Mapping) else None
        if isinstance(reveal, Mapping):
            for zone in reveal:
                if not isinstance(zone, str):
                    raise MoveFormatError(
                        f"move {data.get('move')!r} field 'reveal': keys must be zone ids, got {zone!r}"
                    )
            data = {**data, "reveal": [[zone, card] for zone, card in sorted(reveal.items())]}
        move: McgMove = decode_move(MOVE_TYPES, data)
        return move

    def move_to_dict(self, move: McgMove) -> dict[str, Any]:
        out = encode_move(move)
        zones = [zone for zone, _ in move.reveal]
        if len(set(zones)) < len(zones):
            # Two cards turned up in one zone (a creeper, then the card under it): a mapping
            # cannot hold both, the list of pairs `parse_move` also reads can.
            out["reveal"] = [[zone, card] for zone, card in move.reveal]
        return out

    def validate(self, state: McgState, move: McgMove) -> tuple[GameWarning, ...]:
        """The warnings `move` would raise in `state` (empty: the move is legal)."""
        return self.apply(state, move).warnings

    def apply(self, state: McgState, move: McgMove) -> Step[McgState]:
        """Apply a move as it physically happened; return the new state and its warnings."""
        work = _Work(state, self.catalog, move.reveal)
        if not 1 <= move.player <= state.players and not isinstance(move, TableChange):
            raise SetupError(f"player {move.player} does not exist in a {state.players}-player game")
        if state.over and not isinstance(move, TableChange):
            work.warn(Code.GAME_OVER, "the game is already over", move.player)
        handler = _HANDLERS[type(move)]
        handler(self, work, move)
        self._resolve_attacks_if_settled(work)
        work.move_index += 1
        return Step(work.freeze(), tuple(work.warnings))

    # Pending obligations (TNT keep, creeper discards) are closed before anything else happens.

    def _close_pending(self, w: _Work, move: McgMove) -> None:
        if w.tnt and not isinstance(move, TntKeep):
            w.warn(
                Code.TNT_KEEP_INVALID,
                f"{_player_name(w.tnt_player)} did not choose the cards to keep from the TNT; "
                "all of it is discarded",
                w.tnt_player,
            )
            self._finish_tnt(w, ())
        if w.attacks and not isinstance(move, CreeperDiscard | UseTool | TntKeep):
            missing = [
                p for p in range(1, w.players + 1) if self._owing(w.areas, w.owed, p) > 0
            ]
            for p in missing:
                w.warn(
                    Code.CREEPER_DISCARD_MISSING,
                    f"{_player_name(p)} did not discard a resource card to the creeper",
                    p,
                )
            w.owed = (0,) * w.players
            self._resolve_attacks_if_settled(w)

    def _take_turn(self, w: _Work, player: int) -> bool:
        """Make `player` the active player if the turn order allows it; warn if not.

        The turn passes from each player who is done (all actions taken, or `end-turn`); a
        player left with no action by shovels is passed over.
        """
        if player == w.current and not (w.turn_over or w.actions >= w.allowed):
            return True
        cur, actions, allowed, done = w.current, w.actions, w.allowed, w.turn_over
        skip = list(w.skip)
        turn = w.turn
        passed = False
        for _ in range(w.players):
            if not (done or actions >= allowed):
                break
            cur = cur % w.players + 1
            allowed = max(0, BASE_ACTIONS - skip[cur - 1])
            skip[cur - 1] = 0
            actions, done = 0, False
            turn += 1
            passed = True
            if cur == player or allowed > 0:
                break
        if cur != player or (player == w.current and not passed):
            if player == w.current:
                return True  # still this player's turn: too-many-actions is counted by the caller
            w.warn(
                Code.OUT_OF_TURN,
                f"{_player_name(player)} acted during {_player_name(w.current)}'s turn",
                player,
            )
            return False
        w.current, w.actions, w.allowed, w.turn_over = cur, actions, allowed, done
        w.skip, w.turn = tuple(skip), turn
        return True

    def _begin_action(self, w: _Work, player: int) -> None:
        """Count an action for `player`, passing the turn or warning as the rules say."""
        if not self._take_turn(w, player):
            return
        if w.turn_over or w.actions >= w.allowed:
            w.warn(
                Code.TOO_MANY_ACTIONS,
                f"{_player_name(player)} took action {w.actions + 1} of a turn that allows "
                f"{w.allowed}",
                player,
            )
        w.actions += 1

    # -- card movements -----------------------------------------------------------------------

    def _draw_unseen(self, w: _Work, zone: str, craft: bool) -> str | None:
        """The identity of a face-down card turning up in `zone` (seen, or drawn)."""
        seen = w.seen(zone)
        if seen is not None:
            self.catalog.card(seen)
            rest = remove_one(w.unseen, seen)
            if rest is None:
                w.warn(
                    Code.IMPOSSIBLE_CARD,
                    f"{seen} turned up in {zone}, but every copy of it is already elsewhere",
                )
            else:
                w.unseen = rest
            return seen
        candidates = [c for c in w.unseen if self.is_craft(c) == craft]
        if not candidates:
            return None
        rng = random.Random(w.seed * 1_000_003 + w.draws)
        w.draws += 1
        card = candidates[rng.randrange(len(candidates))]
        rest = remove_one(w.unseen, card)
        assert rest is not None
        w.unseen = rest
        return card

    def _reveal_top(self, w: _Work, kind: str, index: int) -> None:
        """Make sure the top of a pile is known, honouring what the move says was seen."""
        zone = f"{kind}-pile-{index + 1}"
        pile = w.resource_piles[index] if kind == "resource" else w.craft_piles[index]
        if not pile:
            w.seen(zone)
            return
        top = pile[0]
        if top is None:
            card = self._draw_unseen(w, zone, craft=kind == "craft")
            if card is None:
                return
        else:
            seen = w.seen(zone)
            if seen is None or seen == top:
                return
            self.catalog.card(seen)
            w.warn(Code.DESYNC, f"{zone} shows {seen} where {top} was expected")
            rest = remove_one(w.unseen, seen)
            if rest is None:
                w.warn(
                    Code.IMPOSSIBLE_CARD,
                    f"{seen} turned up in {zone}, but every copy of it is already elsewhere",
                )
                rest = w.unseen
            w.unseen = tuple(sorted((*rest, top)))
            card = seen
        new = (card, *pile[1:])
        if kind == "resource":
            w.set_rpile(index, new)
        else:
            w.set_cpile(index, new)

    def _redeal(self, w: _Work, index: int) -> bool:
        """An empty resource pile is rebuilt from the shuffled discard pile (max 15 cards);
        whether that happened."""
        if w.resource_piles[index] or not w.discard:
            return False
        n = min(PILE_SIZE, len(w.discard))
        moved = w.discard[:n]
        w.discard = w.discard[n:]
        # Shuffled face down: which card is where is unknown until each turns up.
        w.unseen = tuple(sorted((*w.unseen, *moved)))
        w.set_rpile(index, (None,) * n)
        return True

    def _settle_pile(
        self, w: _Work, index: int, *, attacking: bool, at_setup: bool = False
    ) -> None:
        """After a resource pile's top left: re-deal if empty, turn up the top, meet creepers.

        A creeper on top either starts an attack (`attacking`, or any exposure under
        `creeper_trigger: any-exposure` except at setup, which `creeper_at_setup` governs) and
        stays until the discards are made, or goes straight to the discard pile and the next
        card turns up. A creeper turned up by a re-deal was exposed by the re-deal, not by
        mining.
        """
        for _ in range(PILE_SIZE * 8):  # bounded: each pass removes a creeper
            if self._redeal(w, index):
                attacking = False
            self._reveal_top(w, "resource", index)
            pile = w.resource_piles[index]
            if not pile or pile[0] != "creeper":
                return
            if index in w.attacks:
                return
            if attacking or (
                not at_setup and w.options.creeper_trigger is CreeperTrigger.ANY_EXPOSURE
            ):
                # Every player answers each attacking creeper once (a discard or a sword);
                # what they must still discard is capped by the resources they hold.
                w.attacks = (*w.attacks, index)
                w.owed = tuple(n + 1 for n in w.owed)
                return
            w.set_rpile(index, pile[1:])
            w.discard = ("creeper", *w.discard)

    def _owing(self, areas: Sequence[Sequence[str]], owed: Sequence[int], player: int) -> int:
        """How many resource cards `player` must still discard to the attacking creepers."""
        held = sum(1 for c in areas[player - 1] if self.is_resource(c))
        return min(owed[player - 1], held)

    def _resolve_attacks_if_settled(self, w: _Work) -> None:
        """When nobody owes a discard any more, attacking creepers go to the discard pile.

        Not while a TNT choice is pending: the blast is settled first, then the creeper."""
        while (
            w.attacks
            and not w.tnt
            and not any(self._owing(w.areas, w.owed, p) for p in range(1, w.players + 1))
        ):
            w.owed = (0,) * w.players
            index = w.attacks[0]
            w.attacks = w.attacks[1:]
            pile = w.resource_piles[index]
            if pile and pile[0] == "creeper":
                w.set_rpile(index, pile[1:])
                w.discard = ("creeper", *w.discard)
            # The card under an attacking creeper was exposed by the same mine.
            self._settle_pile(w, index, attacking=True)

    def _take_from_pile(
        self, w: _Work, kind: str, index: int, card: str | None, player: int
    ) -> str | None:
        """Remove the top card (or `card`, wherever it lies in the pile) and return it."""
        zone = f"{kind}-pile-{index + 1}"
        pile = w.resource_piles[index] if kind == "resource" else w.craft_piles[index]
        if not pile:
            w.warn(Code.EMPTY_PILE, f"{zone} is empty", player)
            return None
        top = pile[0]
        if card is None or card == top:
            if top is None:
                top = self._draw_unseen(w, zone, craft=kind == "craft")
            taken, rest = top, pile[1:]
        else:
            self.catalog.card(card)
            if card in pile[1:]:
                w.warn(Code.NOT_ON_TOP, f"{card} was taken from under the top of {zone}", player)
                i = pile.index(card, 1)
                taken, rest = card, pile[:i] + pile[i + 1 :]
            elif top is None:
                taken, rest = card, pile[1:]
                left = remove_one(w.unseen, card)
                if left is None:
                    w.warn(Code.IMPOSSIBLE_CARD, f"{card} cannot be in {zone}", player)
                else:
                    w.unseen = left
            else:
                # Something else than the known top was taken: the table is the truth.
                w.warn(Code.DESYNC, f"{card} was taken from {zone} whose top is {top}", player)
                left = remove_one(w.unseen, card)
                if left is None:
                    w.warn(Code.IMPOSSIBLE_CARD, f"{card} cannot be in {zone}", player)
                    left = w.unseen
                w.unseen = tuple(sorted((*left, top)))
                taken, rest = card, pile[1:]
        if kind == "resource":
            w.set_rpile(index, rest)
        else:
            w.set_cpile(index, rest)
        return taken

    # -- move handlers ------------------------------------------------------------------------

    def _mine(self, w: _Work, move: Mine) -> None:
        self._close_pending(w, move)
        if not 1 <= move.pile <= RESOURCE_PILES:
            raise SetupError(f"mine: pile must be 1-{RESOURCE_PILES}, got {move.pile}")
        self._begin_action(w, move.player)
        index = move.pile - 1
        card = self._take_from_pile(w, "resource", index, move.card, move.player)
        if card is None:
            return
        if card == "tnt":
            taken = ["tnt"]
            self._settle_pile(w, index, attacking=True)
            for other in range(RESOURCE_PILES):
                if other == index or not w.resource_piles[other]:
                    continue
                top = self._take_from_pile(w, "resource", other, None, move.player)
                if top is not None:
                    taken.append(top)
                self._settle_pile(w, other, attacking=False)
            w.tnt = tuple(taken)
            w.tnt_player = move.player
        elif card == "creeper":
            # A creeper taken by hand is not kept: it goes to the discard pile.
            w.discard = ("creeper", *w.discard)
            self._settle_pile(w, index, attacking=True)
        else:
            w.set_area(move.player, (*w.areas[move.player - 1], card))
            self._settle_pile(w, index, attacking=True)

    def _finish_tnt(self, w: _Work, keep: Sequence[str]) -> None:
        rest = list(w.tnt)
        kept: list[str] = []
        for card in keep:
            if card in rest:
                rest.remove(card)
                kept.append(card)
        p = w.tnt_player
        w.set_area(p, (*w.areas[p - 1], *kept))
        # TNT first: it goes down with the rest, the TNT on top.
        rest.sort(key=lambda c: c != "tnt")
        w.discard = (*rest, *w.discard)
        w.tnt = ()
        w.tnt_player = 0

    def _tnt_keep(self, w: _Work, move: TntKeep) -> None:
        self._close_pending(w, move)
        if not w.tnt:
            w.warn(Code.TNT_KEEP_INVALID, "no TNT blast is waiting for a choice", move.player)
            return
        if move.player != w.tnt_player:
            w.warn(
                Code.OUT_OF_TURN,
                f"{_player_name(move.player)} chose from {_player_name(w.tnt_player)}'s TNT",
                move.player,
            )
        pool = list(w.tnt)
        valid: list[str] = []
        for card in move.cards:
            self.catalog.card(card)
            if card not in pool:
                w.warn(Code.TNT_KEEP_INVALID, f"{card} was not in the TNT blast", move.player)
                continue
            if not self.is_resource(card):
                w.warn(
                    Code.TNT_KEEP_INVALID,
                    f"{card} cannot be kept from a TNT blast (only resource or wild cards)",
                    move.player,
                )
                continue
            pool.remove(card)
            valid.append(card)
        if len(valid) > KEEP_FROM_TNT:
            w.warn(
                Code.TNT_KEEP_INVALID,
                f"{len(valid)} cards kept from a TNT blast; at most {KEEP_FROM_TNT}",
                move.player,
            )
        # The table is the truth: what was physically kept stays kept (minus impossibilities).
        self._finish_tnt(w, valid)

    def _creeper_discard(self, w: _Work, move: CreeperDiscard) -> None:
        self._close_pending(w, move)
        p = move.player
        if not w.attacks:
            w.warn(Code.NO_CREEPER, "no creeper is attacking", p)
        if move.sword is not None:
            self.catalog.card(move.sword)
            if self._check_tool(w, p, move.sword, "sword"):
                w.used = w.used | {move.sword}
        elif move.card is not None:
            self.catalog.card(move.card)
            rest = remove_one(w.areas[p - 1], move.card)
            if rest is None:
                w.warn(Code.NOT_OWNED, f"{move.card} is not in {_player_name(p)}'s area", p)
            elif not self.is_resource(move.card):
                w.warn(Code.INVALID_PAYMENT, f"{move.card} is not a resource card", p)
            else:
                w.set_area(p, rest)
                w.discard = (move.card, *w.discard)
        else:
            raise SetupError("creeper-discard needs either 'card' or 'sword'")
        if w.owed[p - 1] > 0:
            w.owed = replace_at(w.owed, p - 1, w.owed[p - 1] - 1)
        self._resolve_attacks_if_settled(w)

    def _check_tool(self, w: _Work, player: int, card: str, tool: str | None) -> bool:
        """Whether `card` is a ready tool of `player` (of type `tool` if given); warn if not."""
        if not self.is_craft(card) or card not in w.areas[player - 1]:
            w.warn(Code.NOT_OWNED, f"{card} is not a crafted tool in front of {_player_name(player)}", player)
            return False
        if tool is not None and self.tool(card) != tool:
            w.warn(Code.WRONG_TOOL, f"{card} is not a {tool}", player)
            return False
        if card in w.used:
            w.warn(Code.TOOL_USED, f"{card} was already used", player)
            return False
        return True

    def payment_problem(
        self, recipe: Mapping[str, int], pay: Sequence[str], axes: int
    ) -> Code | None:
        """None when `pay` (+ 2 wood per axe) covers `recipe`; else UNDERPAID or WILD_SPLIT."""
        have: Counter[str] = Counter()
        wilds: list[int] = []
        for card in pay:
            attrs = self._attrs[card]
            if self.kind(card) == "wild":
                wilds.append(int(attrs["quantity"]))
            elif self.kind(card) == "resource":
                have[str(attrs["resource"])] += int(attrs["quantity"])
        have["wood"] += AXE_WOOD * axes
        deficits = {r: n - have[r] for r, n in recipe.items() if n > have[r]}
        if not deficits:
            return None
        if sum(wilds) < sum(deficits.values()):
            return Code.UNDERPAID
        types = tuple(deficits)
        for assignment in product(types, repeat=len(wilds)):
            got: Counter[str] = Counter()
            for value, t in zip(wilds, assignment, strict=True):
                got[t] += value
            if all(got[t] >= d for t, d in deficits.items()):
                return None
        return Code.WILD_SPLIT

    def to_spare(self, recipe: Mapping[str, int], pay: Sequence[str], axes: int) -> bool:
        """Whether a payment that covers `recipe` holds a card to spare: one of `pay`, or one of
        the `axes`, could be left out and the rest would still cover it (players pay what a
        recipe asks; `find_payment` pays none to spare)."""
        if any(self.payment_problem(recipe, [*pay[:i], *pay[i + 1:]], axes) is None for i in range(len(pay))):
            return True
        return axes > 0 and self.payment_problem(recipe, pay, axes - 1) is None

    def _craft(self, w: _Work, move: Craft) -> None:
        self._close_pending(w, move)
        p = move.player
        card = move.card
        self.catalog.card(card)
        if not self.is_craft(card):
            raise SetupError(f"craft: {card!r} is not a craft card")
        self._begin_action(w, p)
        source = move.source
        if source == "reserve":
            rest = remove_one(w.reserves[p - 1], card)
            if rest is None:
                w.warn(Code.NOT_OWNED, f"{card} is not in {_player_name(p)}'s card holder", p)
                # The table is the truth: the card came from out of sight, or it is a copy
                # the deck does not have.
                unseen = remove_one(w.unseen, card)
                if unseen is None:
                    w.warn(Code.IMPOSSIBLE_CARD, f"{card} is already elsewhere on the table", p)
                else:
                    w.unseen = unseen
            else:
                w.reserves = replace_at(w.reserves, p - 1, rest)
        elif source.startswith("craft-pile-") and source[11:].isdigit():
            index = int(source[11:]) - 1
            if not 0 <= index < CRAFT_PILES:
                raise SetupError(f"craft: 'from' must be craft-pile-1..{CRAFT_PILES} or reserve")
            self._take_from_pile(w, "craft", index, card, p)
            self._reveal_top(w, "craft", index)
        else:
            raise SetupError(
                f"craft: 'from' must be craft-pile-1..{CRAFT_PILES} or reserve, got {source!r}"
            )
        # Pay: the cards leave the area face down onto the discard pile.
        area = w.areas[p - 1]
        paid: list[str] = []
        for c in move.pay:
            self.catalog.card(c)
            rest = remove_one(area, c)
            if rest is None:
                w.warn(Code.NOT_OWNED, f"{c} was paid but is not in {_player_name(p)}'s area", p)
                continue
            if not self.is_resource(c):
                w.warn(Code.INVALID_PAYMENT, f"{c} cannot pay for a craft", p)
                continue
            area = rest
            paid.append(c)
        w.set_area(p, area)
        w.discard = (*reversed(paid), *w.discard)
        axes = 0
        for axe in move.axes:
            self.catalog.card(axe)
            if self._check_tool(w, p, axe, "axe"):
                w.used = w.used | {axe}
                axes += 1
        problem = self.payment_problem(self._attrs[card]["recipe"], paid, axes)
        if problem is Code.UNDERPAID:
            w.warn(Code.UNDERPAID, f"the payment does not cover the recipe of {card}", p)
        elif problem is Code.WILD_SPLIT:
            w.warn(Code.WILD_SPLIT, f"{card} was paid only by splitting a wild card", p)
        w.set_area(p, (*w.areas[p - 1], card))
        w.used = w.used - {card}
        self._check_end(w, p)

    def _check_end(self, w: _Work, player: int) -> None:
        if w.over:
            return
        target = WIN_POINTS[w.players]
        if self._score(w.areas[player - 1]) >= target:
            w.winner, w.over = player, True
            return
        if not any(w.craft_piles) and not any(w.reserves):
            scores = [self._score(a) for a in w.areas]
            best = max(scores)
            leaders = [i + 1 for i, s in enumerate(scores) if s == best]
            w.over = True
            w.winner = leaders[0] if len(leaders) == 1 else None

    def _reserve(self, w: _Work, move: Reserve) -> None:
        self._close_pending(w, move)
        p = move.player
        if not 1 <= move.pile <= CRAFT_PILES:
            raise SetupError(f"reserve: pile must be 1-{CRAFT_PILES}, got {move.pile}")
        self._begin_action(w, p)
        if w.reserves[p - 1]:
            w.warn(Code.RESERVE_FULL, f"{_player_name(p)}'s card holder is already full", p)
        card = self._take_from_pile(w, "craft", move.pile - 1, move.card, p)
        self._reveal_top(w, "craft", move.pile - 1)
        if card is not None:
            w.reserves = replace_at(w.reserves, p - 1, (*w.reserves[p - 1], card))
        self._check_end(w, p)

    def _use_tool(self, w: _Work, move: UseTool) -> None:
        self._close_pending(w, move)
        p, card = move.player, move.card
        self.catalog.card(card)
        if not self._check_tool(w, p, card, None):
            return
        tool = self.tool(card)
        if tool in ("axe", "sword"):
            w.warn(
                Code.WRONG_TOOL,
                f"an {tool} is used while crafting" if tool == "axe" else "a sword is used against a creeper",
                p,
            )
            return
        w.used = w.used | {card}
        if tool == "pickaxe":
            # +1 action for its owner's turn (the turn passes to them if it is theirs next).
            if p == w.current or self._take_turn(w, p):
                w.allowed += 1
        elif tool == "shovel":
            target = move.target
            if target is None or not 1 <= target <= w.players or target == p:
                w.warn(Code.WRONG_TOOL, "a shovel targets one opponent", p)
            else:
                w.skip = replace_at(w.skip, target - 1, w.skip[target - 1] + 1)
        elif tool == "hoe":
            for i in range(RESOURCE_PILES):
                pile = w.resource_piles[i]
                if not pile:
                    continue
                top = self._take_from_pile(w, "resource", i, None, p)
                if top is not None:
                    w.discard = (top, *w.discard)
                self._settle_pile(w, i, attacking=False)

    def _end_turn(self, w: _Work, move: EndTurn) -> None:
        self._close_pending(w, move)
        if move.player == w.current or self._take_turn(w, move.player):
            w.turn_over = True

    def _table_change(self, w: _Work, move: TableChange) -> None:
        cards = tuple(move.cards)
        for c in cards:
            self.catalog.card(c)
        zone = move.zone
        w.warn(Code.DESYNC, f"{zone} was set to {', '.join(cards) or 'nothing'} by hand")
        old: tuple[Slot, ...]
        if zone.startswith("resource-pile-"):
            i = int(zone.rsplit("-", 1)[1]) - 1
            old = w.resource_piles[i]
            w.set_rpile(i, cards)
        elif zone.startswith("craft-pile-"):
            i = int(zone.rsplit("-", 1)[1]) - 1
            old = w.craft_piles[i]
            w.set_cpile(i, cards)
        elif zone.startswith("player-"):
            i = int(zone.rsplit("-", 1)[1]) - 1
            old = w.areas[i]
            w.set_area(i + 1, cards)
        elif zone.startswith("reserve-"):
            i = int(zone.rsplit("-", 1)[1]) - 1
            old = w.reserves[i]
            w.reserves = replace_at(w.reserves, i, cards)
        elif zone == "discard":
            old, w.discard = w.discard, cards
        else:
            raise SetupError(f"table-change: unknown zone {zone!r}")
        # Cards that left go to the unseen pool; cards that came are taken from it.
        pool = Counter(w.unseen)
        pool.update(c for c in old if c is not None)
        for c in cards:
            if pool[c] > 0:
                pool[c] -= 1
            else:
                w.warn(Code.IMPOSSIBLE_CARD, f"{c} is on the table more often than the deck holds it")
        w.unseen = tuple(sorted(pool.elements()))

    # -- reading a state ------------------------------------------------------------------------

    def _score(self, area: Sequence[str]) -> int:
        return sum(self.points(c) for c in area if self.is_craft(c))

    def scores(self, state: McgState) -> tuple[int, ...]:
        return tuple(self._score(a) for a in state.areas)

    def winner(self, state: McgState) -> int | None:
        return state.winner

    def is_over(self, state: McgState) -> bool:
        return state.over

    def zones(self, state: McgState) -> dict[str, tuple[Slot, ...]]:
        """Zone id -> cards (piles top first; None = face down, not known). A player's area is
        listed latest first: a card put in it lies on top of the ones before, as on a table, and
        whatever lays the table out from this (synthetic footage, a setup read off a camera)
        puts the first card listed on top, as for every other zone."""
        out: dict[str, tuple[Slot, ...]] = {}
        for i, pile in enumerate(state.resource_piles):
            out[f"resource-pile-{i + 1}"] = pile
        for i, pile in enumerate(state.craft_piles):
            out[f"craft-pile-{i + 1}"] = pile
        out["discard"] = state.discard
        out["set-aside"] = (state.set_aside,) if state.set_aside else ()
        for p in range(1, state.players + 1):
            out[f"player-{p}"] = tuple(reversed(state.areas[p - 1]))
            out[f"reserve-{p}"] = state.reserves[p - 1]
        out["tnt"] = state.tnt
        return out

    def view(
        self, state: McgState, audience: Audience, player: int | None = None
    ) -> dict[str, Any]:
        """What a viewer may know. Only face-down cards are hidden in this game: the public
        and the players see pile tops and open cards; the operator sees the engine's belief."""
        zones = self.zones(state)
        face_up_piles = state.options.setup is SetupMode.ALL_FACE_UP
        shown: dict[str, list[str | None]] = {}
        for zone, cards in zones.items():
            hidden_below = zone.startswith("craft-pile") or (
                zone.startswith("resource-pile") and not face_up_piles
            )
            if audience is not Audience.OPERATOR and (hidden_below or zone == "discard"):
                # Pile tops are face up; the rest of a pile and the discard pile are face down
                # (creepers and TNT go to the discard pile face up, but are then covered).
                top = [cards[0]] if cards and zone != "discard" else []
                shown[zone] = [*top, *([None] * (len(cards) - len(top)))]
            else:
                shown[zone] = list(cards)
        return {
            "game": GAME_ID,
            "players": state.players,
            "current": state.current,
            "actions": state.actions,
            "allowed": state.allowed,
            "turn": state.turn,
            "scores": list(self.scores(state)),
            "target": WIN_POINTS[state.players],
            "winner": state.winner,
            "over": state.over,
            "zones": shown,
            "used_tools": sorted(state.used),
            "creeper_attack": bool(state.attacks),
            "owed": [
                self._owing(state.areas, state.owed, p) for p in range(1, state.players + 1)
            ],
            "tnt_pending": bool(state.tnt),
        }

    # -- enumerating legal moves (simulation, interpretation) ----------------------------------

    def legal_moves(self, state: McgState) -> Iterator[McgMove]:
        """Every legal move of the player(s) who must act now (one payment per craft)."""
        if state.over:
            return
        if state.tnt:
            p = state.tnt_player
            keepable = sorted({c for c in state.tnt if self.is_resource(c)})
            counts = Counter(c for c in state.tnt if self.is_resource(c))
            n = min(KEEP_FROM_TNT, sum(counts.values()))
            seen: set[tuple[str, ...]] = set()
            for combo in combinations(sorted(counts.elements()), n):
                if combo not in seen:
                    seen.add(combo)
                    yield TntKeep(player=p, cards=combo)
            if not keepable:
                yield TntKeep(player=p, cards=())
            return
        if state.attacks:
            for p in range(1, state.players + 1):
                if self._owing(state.areas, state.owed, p) <= 0:
                    continue
                for card in sorted({c for c in state.areas[p - 1] if self.is_resource(c)}):
                    yield CreeperDiscard(player=p, card=card)
                for card in state.areas[p - 1]:
                    if self.is_craft(card) and self.tool(card) == "sword" and card not in state.used:
                        yield CreeperDiscard(player=p, sword=card)
            return
        p, actions_left = self.active_player(state)
        area = state.areas[p - 1]
        ready = [c for c in area if self.is_craft(c) and c not in state.used]
        for card in ready:
            tool = self.tool(card)
            if tool in ("pickaxe", "hoe"):
                yield UseTool(player=p, card=card)
            elif tool == "shovel":
                for target in range(1, state.players + 1):
                    if target != p:
                        yield UseTool(player=p, card=card, target=target)
        if actions_left > 0:
            for i, pile in enumerate(state.resource_piles):
                if pile:
                    yield Mine(player=p, pile=i + 1)
            axes = tuple(c for c in ready if self.tool(c) == "axe")
            options: list[tuple[str, str]] = [
                (pile[0], f"craft-pile-{i + 1}")
                for i, pile in enumerate(state.craft_piles)
                if pile and pile[0] is not None
            ]
            options += [(c, "reserve") for c in state.reserves[p - 1]]
            for card, source in options:
                if not self.is_craft(card):
                    continue  # a resource set there by a table change is nothing to craft
                payment = self.find_payment(self._attrs[card]["recipe"], area, axes)
                if payment is not None:
                    pay, used_axes = payment
                    yield Craft(player=p, card=card, source=source, pay=pay, axes=used_axes)
            if not state.reserves[p - 1]:
                for i, pile in enumerate(state.craft_piles):
                    if pile:
                        yield Reserve(player=p, pile=i + 1)
        yield EndTurn(player=p)

    def active_player(self, state: McgState) -> tuple[int, int]:
        """Who acts next and how many actions they have left: the current player while they
        have actions, else the next player the turn would pass to."""
        if not state.turn_over and state.actions < state.allowed:
            return state.current, state.allowed - state.actions
        cur = state.current
        for _ in range(state.players):
            cur = cur % state.players + 1
            allowed = max(0, BASE_ACTIONS - state.skip[cur - 1])
            if allowed > 0 or cur == state.current:
                return cur, allowed
        return cur, 0

    def find_payment(
        self, recipe: Mapping[str, int], area: Sequence[str], axes: Sequence[str]
    ) -> tuple[tuple[str, ...], tuple[str, ...]] | None:
        """A payment from `area` (and axes) that covers `recipe`, preferring little overpay,
        with no card to spare (players pay what a recipe asks) and keeping wilds and axes for
        later; None when the area cannot pay."""
        by_type: dict[str, list[tuple[int, str]]] = {}
        wilds: list[tuple[int, str]] = []
        for card in area:
            if self.kind(card) == "resource":
                a = self._attrs[card]
                by_type.setdefault(str(a["resource"]), []).append((int(a["quantity"]), card))
            elif self.kind(card) == "wild":
                wilds.append((int(self._attrs[card]["quantity"]), card))
        pay: list[str] = []
        used_axes: list[str] = []
        for resource, need in sorted(recipe.items()):
            have = sorted(by_type.get(resource, []))
            left = need
            if resource == "wood":
                for axe in axes:
                    if left <= 0:
                        break
                    if left >= AXE_WOOD or not have:
                        used_axes.append(axe)
                        left -= AXE_WOOD
            # Take the largest cards that do not overshoot, then the smallest that finishes.
            picked: list[tuple[int, str, bool]] = []  # (quantity, card, a wild)
            while left > 0 and have:
                fitting = [h for h in have if h[0] <= left]
                pick = fitting[-1] if fitting else have[0]
                have.remove(pick)
                picked.append((*pick, False))
                left -= pick[0]
            while left > 0 and wilds:
                wilds.sort()
                fitting = [h for h in wilds if h[0] <= left]
                pick = fitting[-1] if fitting else wilds[0]
                wilds.remove(pick)
                picked.append((*pick, True))
                left -= pick[0]
            if left > 0:
                return None
            # No card to spare: a small card taken before a larger one that covered the rest
            # alone (wood 2 from a 1 and a 3) goes back, smallest first.
            for entry in sorted(picked):
                if -left >= entry[0]:
                    picked.remove(entry)
                    left += entry[0]
                    if entry[2]:
                        wilds.append(entry[:2])
            pay.extend(card for _, card, _ in picked)
        return tuple(pay), tuple(used_axes)


_HANDLERS: dict[type[McgMove], Any] = {
    Mine: MinecraftCardGame._mine,
    TntKeep: MinecraftCardGame._tnt_keep,
    CreeperDiscard: MinecraftCardGame._creeper_discard,
    Craft: MinecraftCardGame._craft,
    Reserve: MinecraftCardGame._reserve,
    UseTool: MinecraftCardGame._use_tool,
    EndTurn: MinecraftCardGame._end_turn,
    TableChange: MinecraftCardGame._table_change,
}

RULESET = MinecraftCardGame()
register(RULESET)
