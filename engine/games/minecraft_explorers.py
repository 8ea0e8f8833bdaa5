"""Ravensburger "Minecraft: Explorers" (2024): the cooperative rules as a pure ruleset.

GAMES.md §2 is the normative summary; the Persian rule sheet is `shared/seeds/002`. The table
is the truth: every move is applied as it physically happened and a broken rule is reported as
a `GameWarning`. Cards the camera cannot see are modelled honestly: a face-down mob slot or a
landscape whose identity is unknown holds `None`; a landscape whose front is seen but whose
back (the item) is not holds its landscape type (`woods`) until it is explored. Identities not
located on the table form the `unseen` pool; a move may say what turned up (`reveal`, zone id
-> card id or list of card ids), otherwise the engine draws deterministically from the pool.

Choices where the sheets are silent (each documented in docs/rules/minecraft-explorers.md):
- Hunger is one count per turn: 6 hunger cards plus food and trophy bonuses. A cost is paid
  from the bonus first, then by turning hunger cards away; what is left expires at `end-turn`.
- The turn ends only by `end-turn` (the night card): it reveals one mob, then hunger and night
  pass to the left. A move by another player is applied and raises `out-of-turn`.
- A reveal of N mobs is N draws, each continued until a mob type not yet on the table turns
  up (the overrun rule). The game-over card ends the game at once as lost; so does an empty
  mob deck when a mob must be revealed (a table set up without the game-over card).
- A completed chest defeats the table mob the move names (`defeat`), else the costliest one.
- A tool listed twice in one action is used twice (damaged, then broken); reductions add up,
  and what exceeds the cost is lost.
- Eating, trophies and item powers (crossbow, spyglass, map, armor) are not actions.
- The explorer map puts the fetched landscape in an extra display slot (`display-6`, ...); a
  refresh refills `display-1..5` and drops extra slots it did not keep.
- Scores are team-wide (every player's score is the number of chests filled); `winner()` is 0
  (the whole team) after a win and None otherwise; `outcome` says `won`, `lost` or `playing`.
"""

from __future__ import annotations

import dataclasses
import random
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from types import MappingProxyType
from typing import Any, ClassVar

from engine.catalog import Catalog, load_catalog
from engine.core import Audience, GameWarning, OptionSpec, Step, register, resolve_options
from engine.errors import MoveFormatError, SetupError, UnknownCardError
from engine.moves import decode_move, encode_move
from engine.tuples import remove_one, replace_at

GAME_ID = "minecraft-explorers"
DISPLAY_SIZE = 5
HUNGER_CARDS = 6
REMOVED_MOBS: Mapping[int, int] = MappingProxyType({1: 8, 2: 7, 3: 6, 4: 5})
GAME_OVER_DEPTH = 4  # the game-over card is shuffled into the bottom 4 cards of the mob deck
GAME_OVER = "game-over"
SPECIAL_LANDSCAPES = ("woodland-mansion", "ocean-monument")
TRADE_COST = 1
REFRESH_COST = 1
FILL_COST = 1
TROPHY_HUNGER = 1
CROSSBOW_MOBS = 2

Slot = str | None
"""A card in a deck or display slot: a card id, a landscape type (front seen, back not), or
None (nothing known)."""


class Code(StrEnum):
    """Stable warning codes of this game (public vocabulary: journal, API, overlay)."""

    OUT_OF_TURN = "out-of-turn"
    OUT_OF_HUNGER = "out-of-hunger"
    UNDERPAID = "underpaid"
    WRONG_TOOL = "wrong-tool"
    TOOL_BROKEN = "tool-broken"
    NOT_OWNED = "not-owned"
    WRONG_ITEM = "wrong-item"
    WRONG_PAYMENT = "wrong-payment"
    NOT_ON_DISPLAY = "not-on-display"
    NO_MOB = "no-mob"
    TROPHY_MISMATCH = "trophy-mismatch"
    NOT_FOOD = "not-food"
    NOT_USABLE = "not-usable"
    NOT_IN_DECK = "not-in-deck"
    NOT_A_CHEST = "not-a-chest"
    CHEST_FILLED = "chest-filled"
    CHEST_INCOMPLETE = "chest-incomplete"
    IMPOSSIBLE_CARD = "impossible-card"
    GAME_OVER = "game-over"
    DESYNC = "desync"


RULES: Mapping[Code, str] = MappingProxyType({
    Code.OUT_OF_TURN: "Players act in turn order; only the player holding the hunger and night "
    "cards acts.",
    Code.OUT_OF_HUNGER: "Every action costs hunger; with no hunger left the turn is over.",
    Code.UNDERPAID: "An action's hunger cost must be paid in full (hunger cards and food).",
    Code.WRONG_TOOL: "Pickaxes reduce landscapes with a pickaxe shield, swords those with a "
    "sword shield and mob fights.",
    Code.TOOL_BROKEN: "A tool is turned 180 degrees on its first use and discarded on its second.",
    Code.NOT_OWNED: "Players use only the items and trophies in front of them (items_pool: "
    "per-player).",
    Code.WRONG_ITEM: "A chest takes only the items printed on it.",
    Code.WRONG_PAYMENT: "A villager takes the item printed above the line, or an emerald.",
    Code.NOT_ON_DISPLAY: "Only a landscape of the display can be explored.",
    Code.NO_MOB: "Only a mob on the table can be fought.",
    Code.TROPHY_MISMATCH: "Two identical defeated mobs may be discarded for 1 hunger.",
    Code.NOT_FOOD: "Only food gives extra hunger.",
    Code.NOT_USABLE: "Only crossbows, spyglasses, explorer maps and iron armor have a power to use.",
    Code.NOT_IN_DECK: "The explorer map fetches the woodland mansion or ocean monument from the "
    "landscape deck.",
    Code.NOT_A_CHEST: "Only the chests chosen at setup are filled.",
    Code.CHEST_FILLED: "A filled chest is flipped and takes nothing more.",
    Code.CHEST_INCOMPLETE: "A chest is filled in one go (partial_fill: forbidden).",
    Code.IMPOSSIBLE_CARD: "Each card exists only as often as the deck holds it.",
    Code.GAME_OVER: "The game ends when the chests are filled or the game-over card turns up.",
    Code.DESYNC: "The table changed in a way no legal move explains.",
})


class Outcome(StrEnum):
    """Where the cooperative game stands: still playing, won by the team, or lost."""

    PLAYING = "playing"
    WON = "won"
    LOST = "lost"


class ItemsPool(StrEnum):
    PER_PLAYER = "per-player"
    SHARED = "shared"


class Difficulty(StrEnum):
    FIRST_GAME = "first-game"
    EASY = "easy"
    NORMAL = "normal"
    HARD = "hard"
    HARDCORE = "hardcore"


CHESTS_BY_DIFFICULTY: Mapping[Difficulty, int] = MappingProxyType({
    Difficulty.FIRST_GAME: 5,
    Difficulty.EASY: 5,
    Difficulty.NORMAL: 6,
    Difficulty.HARD: 7,
    Difficulty.HARDCORE: 8,
})


class ArmorCancels(StrEnum):
    EVENT = "event"
    MOB = "mob"


class DrawnSpecial(StrEnum):
    ORDINARY = "ordinary"
    EXTRA = "extra"


class PartialFill(StrEnum):
    ALLOWED = "allowed"
    FORBIDDEN = "forbidden"


OPTIONS: tuple[OptionSpec, ...] = (
    OptionSpec.of(
        "items_pool",
        ItemsPool.PER_PLAYER,
        "per-player: each player spends only the items and trophies in front of them; "
        "shared: any player's items serve the team.",
    ),
    OptionSpec.of(
        "difficulty",
        Difficulty.FIRST_GAME,
        "Chests in play: first-game = chests 01-05; easy 5, normal 6, hard 7, hardcore 8 "
        "drawn at random (a setup may list them instead).",
    ),
    OptionSpec.of(
        "armor_cancels",
        ArmorCancels.EVENT,
        "One iron armor cancels a whole reveal event (event) or one mob of it (mob).",
    ),
    OptionSpec.of(
        "drawn_special",
        DrawnSpecial.ORDINARY,
        "A woodland mansion or ocean monument drawn into the display is an ordinary "
        "display card (ordinary) or is set beside it as an extra card while the refill goes on "
        "(extra).",
    ),
    OptionSpec.of(
        "partial_fill",
        PartialFill.ALLOWED,
        "Items may wait under a chest until it is complete (allowed), or a chest must be "
        "filled in one action (forbidden).",
    ),
)


@dataclass(frozen=True, slots=True, kw_only=True)
class Options:
    items_pool: ItemsPool = ItemsPool.PER_PLAYER
    difficulty: Difficulty = Difficulty.FIRST_GAME
    armor_cancels: ArmorCancels = ArmorCancels.EVENT
    drawn_special: DrawnSpecial = DrawnSpecial.ORDINARY
    partial_fill: PartialFill = PartialFill.ALLOWED

    def to_dict(self) -> dict[str, str]:
        return {f.name: str(getattr(self, f.name).value) for f in dataclasses.fields(self)}


# --------------------------------------------------------------------------------------------
# Moves

Pairs = tuple[tuple[str, ...], ...]
"""A mapping written as rows `(key, value, value...)`: `reveal` and the chests of `fill`."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ExpMove:
    """Fields shared by every move: who made it, and cards seen turning up because of it."""

    NAME: ClassVar[str] = ""
    player: int
    reveal: Pairs = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class Explore(ExpMove):
    """Explore a display landscape (or trade at a village): pay, flip, take the item."""

    NAME: ClassVar[str] = "explore"
    landscape: str
    tools: tuple[str, ...] = ()
    food: tuple[str, ...] = ()
    pay: str | None = None
    item: str | None = None
    armor: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Trade(Explore):
    """The same as `explore`, named for villages."""

    NAME: ClassVar[str] = "trade"


@dataclass(frozen=True, slots=True, kw_only=True)
class Refresh(ExpMove):
    """1 hunger: keep some display cards, put the others under the deck, refill to 5."""

    NAME: ClassVar[str] = "refresh"
    keep: tuple[str, ...] = ()
    food: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class Fight(ExpMove):
    """Fight a table mob: pay its cost minus swords; it becomes a trophy."""

    NAME: ClassVar[str] = "fight"
    mob: str
    tools: tuple[str, ...] = ()
    food: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class Fill(ExpMove):
    """1 hunger: put items under one or several chests; a completed chest defeats a mob."""

    NAME: ClassVar[str] = "fill"
    chest: str | None = None
    items: tuple[str, ...] = ()
    chests: Pairs = ()
    defeat: tuple[str, ...] = ()
    food: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class Eat(ExpMove):
    """Discard a food item for extra hunger this turn (not an action)."""

    NAME: ClassVar[str] = "eat"
    item: str


@dataclass(frozen=True, slots=True, kw_only=True)
class TrophyMove(ExpMove):
    """Discard two identical defeated mobs for 1 hunger this turn (not an action)."""

    NAME: ClassVar[str] = "trophy"
    mobs: tuple[str, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class Use(ExpMove):
    """Discard a crossbow (defeat 2 table mobs), spyglass, explorer map or iron armor."""

    NAME: ClassVar[str] = "use"
    item: str
    mobs: tuple[str, ...] = ()
    landscape: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class EndTurn(ExpMove):
    """Play the night card (one mob is revealed) and pass hunger and night to the left."""

    NAME: ClassVar[str] = "end-turn"
    armor: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class TableChange(ExpMove):
    """A physical change nothing legal explains (or an operator correction): set a zone."""

    NAME: ClassVar[str] = "table-change"
    zone: str
    cards: tuple[str, ...] = ()


MOVE_TYPES: tuple[type[ExpMove], ...] = (
    Explore,
    Trade,
    Refresh,
    Fight,
    Fill,
    Eat,
    TrophyMove,
    Use,
    EndTurn,
    TableChange,
)
_PAIR_FIELDS = ("reveal", "chests")


# --------------------------------------------------------------------------------------------
# State


@dataclass(frozen=True, slots=True, kw_only=True)
class ExplorersState:
    """Everything on the table and whose turn it is. Players are numbered from 1."""

    players: int
    options: Options
    seed: int
    draws: int
    landscape_deck: tuple[Slot, ...]
    display: tuple[tuple[Slot, ...], ...]
    mob_deck: tuple[Slot, ...]
    mobs: tuple[str, ...]
    chests: tuple[str, ...]
    chest_items: tuple[tuple[str, ...], ...]
    filled: frozenset[str]
    areas: tuple[tuple[str, ...], ...]
    discard: tuple[str, ...]
    used: frozenset[str]  # damaged tools: turned 180 degrees after their first use
    unseen: tuple[str, ...]
    current: int
    turn: int
    spent: int  # hunger cards turned away this turn
    bonus: int  # food and trophy hunger not yet spent; expires at the end of the turn
    armored: int  # iron armor discarded this turn, waiting to cancel the next reveal
    outcome: Outcome
    move_index: int

    @property
    def hunger(self) -> int:
        """Hunger the active player can still spend this turn."""
        return HUNGER_CARDS - self.spent + self.bonus


_STATE_FIELDS = tuple(f.name for f in dataclasses.fields(ExplorersState))


class _Work:
    """A mutable scratch copy of a state used inside one `apply`; frozen again at the end."""

    __slots__ = (*_STATE_FIELDS, "warnings", "reveal")

    players: int
    options: Options
    seed: int
    draws: int
    landscape_deck: tuple[Slot, ...]
    display: tuple[tuple[Slot, ...], ...]
    mob_deck: tuple[Slot, ...]
    mobs: tuple[str, ...]
    chests: tuple[str, ...]
    chest_items: tuple[tuple[str, ...], ...]
    filled: frozenset[str]
    areas: tuple[tuple[str, ...], ...]
    discard: tuple[str, ...]
    used: frozenset[str]
    unseen: tuple[str, ...]
    current: int
    turn: int
    spent: int
    bonus: int
    armored: int
    outcome: Outcome
    move_index: int
    warnings: list[GameWarning]
    reveal: dict[str, list[str]]

    def __init__(self, state: ExplorersState, reveal: Pairs = ()) -> None:
        for name in _STATE_FIELDS:
            setattr(self, name, getattr(state, name))
        self.warnings = []
        self.reveal = {row[0]: list(row[1:]) for row in reveal if row}

    def freeze(self) -> ExplorersState:
        return ExplorersState(**{name: getattr(self, name) for name in _STATE_FIELDS})

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

    def set_area(self, player: int, cards: tuple[str, ...]) -> None:
        self.areas = replace_at(self.areas, player - 1, cards)

    def seen(self, zone: str) -> str | None:
        """The next card a move says turned up in `zone` (consumed), if it says so."""
        queue = self.reveal.get(zone)
        if not queue:
            return None
        return queue.pop(0)


def _who(n: int) -> str:
    return f"player {n}"


# --------------------------------------------------------------------------------------------
# The ruleset


class MinecraftExplorers:
    """The Ravensburger cooperative game: `apply` never refuses a move that happened."""

    id = GAME_ID
    name = "Minecraft: Explorers (Ravensburger, 2024)"
    min_players = 1
    max_players = 4
    move_types = MOVE_TYPES
    expectation_keys: tuple[str, ...] = ("outcome", "hunger", "filled", "damaged")
    # How a simulated player weighs its legal moves: fill chests when it can, rarely pass early.
    sim_weights: Mapping[str, float] = MappingProxyType({
        "fill": 60.0,
        "explore": 6.0,
        "trade": 6.0,
        "fight": 3.0,
        "refresh": 0.6,
        "eat": 0.5,
        "trophy": 2.0,
        "use": 0.5,
        "end-turn": 0.4,
    })

    def __init__(self) -> None:
        self._catalog: Catalog | None = None
        self._attrs: dict[str, Mapping[str, Any]] = {}
        self._kinds: dict[str, str] = {}
        self._by_front: dict[str, tuple[str, ...]] = {}
        self._by_item: dict[str, tuple[str, ...]] = {}
        self._face_to_type: dict[str, str] = {}
        self._back_to_item: dict[str, str] = {}

    # -- catalog helpers ----------------------------------------------------------------------

    @property
    def catalog(self) -> Catalog:
        if self._catalog is None:
            cat = load_catalog(GAME_ID)
            self._attrs = {c.id: c.attrs for c in cat.cards.values()}
            self._kinds = {c.id: c.kind for c in cat.cards.values()}
            fronts: dict[str, list[str]] = {}
            items: dict[str, list[str]] = {}
            for c in cat.cards.values():
                if c.kind == "landscape":
                    fronts.setdefault(str(c.attrs["landscape"]), []).append(c.id)
                    items.setdefault(str(c.attrs["item"]), []).append(c.id)
                    self._face_to_type[c.front] = str(c.attrs["landscape"])
                    self._back_to_item[c.back] = str(c.attrs["item"])
            self._by_front = {k: tuple(v) for k, v in fronts.items()}
            self._by_item = {k: tuple(v) for k, v in items.items()}
            self._catalog = cat
        return self._catalog

    @property
    def options(self) -> tuple[OptionSpec, ...]:
        return OPTIONS

    def kind(self, card: str) -> str:
        _ = self.catalog
        kind = self._kinds.get(card)
        if kind is None:
            self.catalog.card(card)  # raises the clear UnknownCardError
            raise AssertionError(card)
        return kind

    def attr(self, card: str, name: str, default: Any = None) -> Any:
        _ = self.catalog
        return self._attrs.get(card, {}).get(name, default)

    def is_mob(self, card: str) -> bool:
        return self._kinds.get(card) == "mob"

    def is_landscape_id(self, card: str) -> bool:
        return self._kinds.get(card) == "landscape"

    def landscape_types(self) -> tuple[str, ...]:
        _ = self.catalog
        return tuple(self._by_front)

    def cards_of_type(self, landscape: str) -> tuple[str, ...]:
        _ = self.catalog
        return self._by_front.get(landscape, ())

    def landscape_of(self, slot: Slot) -> str | None:
        """The landscape type a display/deck slot shows on its front (None: not known)."""
        if slot is None:
            return None
        if slot in self._by_front:
            return slot
        value = self.attr(slot, "landscape")
        return None if value is None else str(value)

    def item_name(self, card: str) -> str | None:
        value = self.attr(card, "item")
        return None if value is None else str(value)

    def category(self, card: str) -> str | None:
        value = self.attr(card, "category")
        return None if value is None else str(value)

    def tool(self, card: str) -> str | None:
        value = self.attr(card, "tool")
        return None if value is None else str(value)

    def food(self, card: str) -> int:
        return int(self.attr(card, "food", 0) or 0)

    def cost_of(self, card: str) -> int:
        return int(self.attr(card, "cost", 0) or 0)

    def costliest(self, mobs: Sequence[str], n: int) -> tuple[str, ...]:
        """The `n` mobs of `mobs` a free defeat takes when none is named (a crossbow's two, a
        completed chest's one): the costliest first, ties by id."""
        ranked = sorted((m for m in mobs if self.is_mob(m)), key=lambda m: (self.cost_of(m), m), reverse=True)
        return tuple(ranked[:n])

    def is_village(self, card: str) -> bool:
        return self.attr(card, "trade") is not None

    def is_special(self, slot: Slot) -> bool:
        return self.landscape_of(slot) in SPECIAL_LANDSCAPES

    def matches_need(self, card: str, need: str) -> bool:
        """Whether `card` (an item in front of a player) satisfies one chest or trade need."""
        if self.is_mob(card) or not self.is_landscape_id(card):
            return False
        return need in (self.item_name(card), self.category(card), self.tool(card))

    def chest_needs(self, chest: str) -> tuple[str, ...]:
        return tuple(str(n) for n in self.attr(chest, "needs", ()) or ())

    def assignment(self, needs: Sequence[str], items: Sequence[str]) -> list[str] | None:
        """Items left over when `items` are matched to `needs` (None: some item fits nothing
        left; the leftovers are returned when every item found a need)."""
        left = list(needs)
        # Match the most constrained items first: an item fitting fewer needs goes first.
        order = sorted(items, key=lambda c: sum(self.matches_need(c, n) for n in set(left)))
        for item in order:
            for need in left:
                if self.matches_need(item, need):
                    left.remove(need)
                    break
            else:
                return None
        return left

    # -- setup --------------------------------------------------------------------------------

    def initial_state(
        self,
        *,
        players: int,
        options: Mapping[str, object] | None = None,
        seed: int | None = None,
        setup: Mapping[str, Any] | None = None,
    ) -> ExplorersState:
        """A fresh table: dealt from `seed`, or laid out exactly as `setup` says.

        `setup` maps zone ids to card lists (decks top first): `landscape-deck`,
        `display-1..5` (one card each; a landscape type such as `woods` when only the front
        is known; `null` for a card not known), `mob-deck` (`null` for a face-down card not
        known), `mobs`, `chests`, `chest-NN` (items already under that chest), `player-N`,
        `discard`, `hunger` (the turn cards, always with the active player), and `damaged`
        (tools in front of players already turned 180 degrees). Nothing is revealed at setup.
        """
        if isinstance(players, bool) or not isinstance(players, int) or not (
            self.min_players <= players <= self.max_players
        ):
            raise SetupError(
                f"{GAME_ID} is for {self.min_players}-{self.max_players} players, got {players!r}"
            )
        raw = resolve_options(OPTIONS, options)
        opts = Options(
            items_pool=ItemsPool(str(raw["items_pool"])),
            difficulty=Difficulty(str(raw["difficulty"])),
            armor_cancels=ArmorCancels(str(raw["armor_cancels"])),
            drawn_special=DrawnSpecial(str(raw["drawn_special"])),
            partial_fill=PartialFill(str(raw["partial_fill"])),
        )
        seed = 0 if seed is None else int(seed)
        deck = list(self.catalog.deck())
        base = ExplorersState(
            players=players,
            options=opts,
            seed=seed,
            draws=0,
            landscape_deck=(),
            display=((),) * DISPLAY_SIZE,
            mob_deck=(),
            mobs=(),
            chests=(),
            chest_items=(),
            filled=frozenset(),
            areas=((),) * players,
            discard=(),
            used=frozenset(),
            unseen=(),
            current=1,
            turn=1,
            spent=0,
            bonus=0,
            armored=0,
            outcome=Outcome.PLAYING,
            move_index=0,
        )
        if setup is None:
            return self._dealt(base, deck)
        return self._explicit(base, setup, deck)

    def _chests_for(self, opts: Options, rng: random.Random) -> tuple[str, ...]:
        all_chests = sorted(c for c, k in self._kinds.items() if k == "chest")
        n = CHESTS_BY_DIFFICULTY[opts.difficulty]
        if opts.difficulty is Difficulty.FIRST_GAME:
            return tuple(c for c in all_chests if self.attr(c, "first_game"))[:n]
        picked = list(all_chests)
        rng.shuffle(picked)
        return tuple(sorted(picked[:n]))

    def _dealt(self, base: ExplorersState, deck: list[str]) -> ExplorersState:
        rng = random.Random(f"{GAME_ID}:{base.seed}")
        landscapes = [c for c in deck if self._kinds[c] == "landscape"]
        rng.shuffle(landscapes)
        mobs = [c for c in deck if self._kinds[c] == "mob"]
        rng.shuffle(mobs)
        removed = REMOVED_MOBS[base.players]
        boxed, kept = mobs[:removed], mobs[removed:]
        bottom = [*kept[-GAME_OVER_DEPTH:], GAME_OVER]
        rng.shuffle(bottom)
        mob_deck = [*kept[:-GAME_OVER_DEPTH], *bottom]
        chests = self._chests_for(base.options, rng)
        unused_chests = [c for c in deck if self._kinds[c] == "chest" and c not in chests]
        state = dataclasses.replace(
            base,
            landscape_deck=tuple(landscapes[DISPLAY_SIZE:]),
            display=tuple((c,) for c in landscapes[:DISPLAY_SIZE]),
            mob_deck=tuple(mob_deck[1:]),
            mobs=(mob_deck[0],),
            chests=chests,
            chest_items=((),) * len(chests),
            unseen=tuple(sorted((*boxed, *unused_chests))),
        )
        return state

    def _explicit(
        self, base: ExplorersState, setup: Mapping[str, Any], deck: list[str]
    ) -> ExplorersState:
        if not isinstance(setup, Mapping):
            raise SetupError("'setup' must map zone ids to lists of card ids")
        players = base.players
        display_zones = [f"display-{i}" for i in range(1, DISPLAY_SIZE + 3)]
        chest_zones = {f"chest-{n:02d}" for n in range(1, 13)}
        known = {
            "landscape-deck",
            "mob-deck",
            "mobs",
            "chests",
            "discard",
            "hunger",
            "damaged",
            *display_zones,
            *chest_zones,
            *(f"player-{p}" for p in range(1, players + 1)),
        }
        for zone in setup:
            if zone not in known:
                raise SetupError(
                    f"setup: unknown zone {zone!r} for {players} players; zones are: "
                    + ", ".join(sorted(known))
                )

        def listed(zone: str) -> list[Any]:
            value = setup.get(zone, [])
            if value is None:
                return []
            if isinstance(value, str):
                return [value]
            if not isinstance(value, Sequence):
                raise SetupError(f"setup: zone {zone!r} must be a list of card ids")
            return list(value)

        def card_id(zone: str, item: Any, kinds: tuple[str, ...]) -> str:
            if not isinstance(item, str):
                raise SetupError(f"setup: zone {zone!r} holds {item!r}, not a card id")
            card = self._canonical(item)
            if card is None:
                try:
                    self.catalog.card(item)
                except UnknownCardError as exc:
                    raise SetupError(f"setup: zone {zone!r}: {exc}") from None
                card = item
            if self._kinds[card] not in kinds:
                raise SetupError(
                    f"setup: {card!r} ({self._kinds[card]}) cannot lie in {zone!r}; it holds "
                    + " or ".join(kinds)
                    + " cards"
                )
            return card

        def landscape_slot(zone: str, item: Any) -> Slot:
            if item is None:
                return None
            if isinstance(item, str):
                front = self._front_token(item)
                if front is not None:
                    return front
            return card_id(zone, item, ("landscape",))

        ldeck = tuple(landscape_slot("landscape-deck", c) for c in listed("landscape-deck"))
        display: list[tuple[Slot, ...]] = []
        for zone in display_zones:
            cards = listed(zone)
            if len(cards) > 1:
                raise SetupError(f"setup: {zone!r} holds one landscape, got {len(cards)}")
            display.append(tuple(landscape_slot(zone, c) for c in cards))
        while len(display) > DISPLAY_SIZE and not display[-1]:
            display.pop()
        mob_deck = tuple(
            None if c is None else card_id("mob-deck", c, ("mob", "game-over"))
            for c in listed("mob-deck")
        )
        mobs = tuple(card_id("mobs", c, ("mob", "game-over")) for c in listed("mobs"))
        if "chests" in setup:
            chests = tuple(card_id("chests", c, ("chest",)) for c in listed("chests"))
        else:
            chests = self._chests_for(base.options, random.Random(f"{GAME_ID}:{base.seed}"))
        for zone in chest_zones:
            if zone in setup and zone not in chests:
                raise SetupError(f"setup: {zone!r} holds items but is not among 'chests'")
        chest_items = tuple(
            tuple(card_id(c, x, ("landscape",)) for x in listed(c)) for c in chests
        )
        areas = tuple(
            tuple(card_id(f"player-{p}", c, ("landscape", "mob")) for c in listed(f"player-{p}"))
            for p in range(1, players + 1)
        )
        discard = tuple(
            card_id("discard", c, ("landscape", "mob")) for c in listed("discard")
        )
        for c in listed("hunger"):
            card_id("hunger", c, ("turn",))
        damaged = frozenset(card_id("damaged", c, ("landscape",)) for c in listed("damaged"))
        owned = {c for a in areas for c in a}
        for c in damaged:
            if c not in owned or self.tool(c) is None:
                raise SetupError(f"setup: 'damaged' names {c!r}, which is no tool in a player area")
        placed = Counter(
            c
            for group in (ldeck, *display, mob_deck, mobs, chests, *chest_items, *areas, discard)
            for c in group
            if c is not None and c not in self._by_front
        )
        pool = Counter(c for c in deck if self._kinds[c] != "turn")
        for card, n in placed.items():
            if n > pool[card]:
                raise SetupError(
                    f"setup: {card!r} appears {n} times but the deck holds {pool[card]}"
                )
        pool.subtract(placed)
        unseen = tuple(sorted(pool.elements()))
        for front in sorted({s for group in (ldeck, *display) for s in group if s in self._by_front}):
            need = sum(1 for group in (ldeck, *display) for s in group if s == front)
            have = sum(1 for c in unseen if self.landscape_of(c) == front)
            if need > have:
                raise SetupError(
                    f"setup: {need} {front} landscapes whose back is unknown, but only {have} "
                    "are left"
                )
        return dataclasses.replace(
            base,
            landscape_deck=ldeck,
            display=tuple(display),
            mob_deck=mob_deck,
            mobs=mobs,
            chests=chests,
            chest_items=chest_items,
            areas=areas,
            discard=discard,
            used=damaged,
            unseen=unseen,
        )

    # -- names ----------------------------------------------------------------------------------

    def _front_token(self, ref: str) -> str | None:
        """The landscape type a reference names by its front (`woods`, `landscape.woods`)."""
        _ = self.catalog
        if ref in self._by_front:
            return ref
        if ref in self._face_to_type:
            return self._face_to_type[ref]
        return None

    def _canonical(self, ref: str) -> str | None:
        """A card id for a reference that names one card unambiguously (id, mob face id,
        `chest_01`), or None."""
        _ = self.catalog
        if ref in self._kinds:
            return ref
        if ref.startswith("mob.") and ref[4:] in self._kinds:
            return ref[4:]
        if ref == "mob_game_over":
            return GAME_OVER
        if ref.startswith("chest_") and ref.replace("_", "-") in self._kinds:
            return ref.replace("_", "-")
        if ref in ("card_hunger", "card_night"):
            return ref[5:]
        return None

    # -- moves --------------------------------------------------------------------------------

    def parse_move(self, data: Mapping[str, Any]) -> ExpMove:
        """Decode a plain move. `reveal` maps a zone id to the card (or list of cards) seen
        turning up there; `fill` takes `chest` + `items` or `chests: {chest: [items]}`."""
        if not isinstance(data, Mapping):
            raise MoveFormatError(f"a move must be a mapping, got {data!r}")
        fixed = dict(data)
        for key in _PAIR_FIELDS:
            value = fixed.get(key)
            if value is None:
                fixed.pop(key, None)
                continue
            fixed[key] = _rows(str(data.get("move")), key, value)
        if fixed.get("move") == "fill" and isinstance(fixed.get("items"), str):
            fixed["items"] = [fixed["items"]]
        for key in ("tools", "food", "keep", "mobs", "defeat"):
            if isinstance(fixed.get(key), str):
                fixed[key] = [fixed[key]]
        if isinstance(fixed.get("landscape"), int) and not isinstance(fixed["landscape"], bool):
            fixed["landscape"] = f"display-{fixed['landscape']}"
        move: ExpMove = decode_move(MOVE_TYPES, fixed)
        return move

    def move_to_dict(self, move: ExpMove) -> dict[str, Any]:
        blank: dict[str, Any] = {k: () for k in _PAIR_FIELDS if hasattr(move, k)}
        plain = dataclasses.replace(move, **blank)
        out = encode_move(plain)
        for key in _PAIR_FIELDS:
            rows = getattr(move, key, ())
            if rows:
                out[key] = {
                    row[0]: (row[1] if key == "reveal" and len(row) == 2 else list(row[1:]))
                    for row in rows
                }
        return out

    def validate(self, state: ExplorersState, move: ExpMove) -> tuple[GameWarning, ...]:
        """The warnings `move` would raise in `state` (empty: the move is legal)."""
        return self.apply(state, move).warnings

    def apply(self, state: ExplorersState, move: ExpMove) -> Step[ExplorersState]:
        """Apply a move as it physically happened; return the new state and its warnings."""
        if not isinstance(move, ExpMove):
            raise MoveFormatError(f"{move!r} is not a {GAME_ID} move")
        if not 1 <= move.player <= state.players:
            raise SetupError(f"player {move.player} does not exist in a {state.players}-player game")
        work = _Work(state, move.reveal)
        if state.outcome is not Outcome.PLAYING and not isinstance(move, TableChange):
            work.warn(Code.GAME_OVER, f"the game is already {state.outcome.value}", move.player)
        if not isinstance(move, TableChange) and move.player != state.current:
            work.warn(
                Code.OUT_OF_TURN,
                f"{_who(move.player)} acted during {_who(state.current)}'s turn",
                move.player,
            )
        _HANDLERS[type(move)](self, work, move)
        work.move_index += 1
        return Step(work.freeze(), tuple(work.warnings))

    # -- hunger ---------------------------------------------------------------------------------

    def _pay(self, w: _Work, player: int, cost: int, what: str) -> None:
        """Pay `cost` hunger: the bonus first, then hunger cards turned away."""
        if cost <= 0:
            return
        available = HUNGER_CARDS - w.spent + w.bonus
        if available <= 0:
            w.warn(Code.OUT_OF_HUNGER, f"{what} costs {cost} hunger but none is left", player)
        elif cost > available:
            w.warn(
                Code.UNDERPAID, f"{what} costs {cost} hunger but only {available} is left", player
            )
        from_bonus = min(w.bonus, cost)
        w.bonus -= from_bonus
        w.spent = min(HUNGER_CARDS, w.spent + cost - from_bonus)

    def _eat_all(self, w: _Work, player: int, food: Sequence[str]) -> None:
        for ref in food:
            self._eat_one(w, player, ref)

    def _eat_one(self, w: _Work, player: int, ref: str) -> None:
        card = self._take_item(w, player, ref)
        if card is None:
            return
        w.discard = (card, *w.discard)
        value = self.food(card)
        if value <= 0:
            w.warn(Code.NOT_FOOD, f"{card} is not food and gives no hunger", player)
            return
        w.bonus += value

    # -- finding cards --------------------------------------------------------------------------

    def _owners(self, w: _Work, player: int) -> list[int]:
        """The areas `player` may spend from, their own first."""
        if w.options.items_pool is ItemsPool.SHARED:
            return [player, *(p for p in range(1, w.players + 1) if p != player)]
        return [player]

    def _find(self, w: _Work, player: int, ref: str, *, anywhere: bool = False) -> tuple[int, str] | None:
        """(area owner, card id) of the item or trophy `ref` names in an area `player` may use
        (any area when `anywhere`); `ref` may be a card id, an item or mob name, or a face id."""
        canon = self._canonical(ref)
        item = self._back_to_item.get(ref, ref)
        owners = range(1, w.players + 1) if anywhere else self._owners(w, player)
        for p in owners:
            area = w.areas[p - 1]
            if canon is not None and canon in area:
                return p, canon
        if canon is None:
            for p in owners:
                for card in w.areas[p - 1]:
                    if self.item_name(card) == item:
                        return p, card
        return None

    def _take_item(self, w: _Work, player: int, ref: str) -> str | None:
        """Remove the item `ref` from the area it may be spent from; warn when it is not
        there (the card in another player's area still moves: the table is the truth)."""
        found = self._find(w, player, ref)
        if found is None:
            elsewhere = self._find(w, player, ref, anywhere=True)
            canon = self._canonical(ref)
            if canon is not None and canon in w.discard and self.tool(canon) is not None:
                w.warn(Code.TOOL_BROKEN, f"{canon} is broken and lies on the discard pile", player)
                return None
            w.warn(Code.NOT_OWNED, f"{ref} is not in front of {_who(player)}", player)
            if elsewhere is None:
                return None
            found = elsewhere
        owner, card = found
        rest = remove_one(w.areas[owner - 1], card)
        assert rest is not None
        w.set_area(owner, rest)
        return card

    def _use_tools(self, w: _Work, player: int, tools: Sequence[str], kind: str | None) -> int:
        """Use each listed tool once (a repeat uses it again): damage, then break. Returns
        the reduction earned by tools of the right kind (`kind` None: no tool helps here)."""
        reduction = 0
        for ref in tools:
            found = self._find(w, player, ref)
            if found is None:
                canon = self._canonical(ref)
                if canon is not None and canon in w.discard and self.tool(canon) is not None:
                    w.warn(Code.TOOL_BROKEN, f"{canon} is broken and cannot be used", player)
                    continue
                found = self._find(w, player, ref, anywhere=True)
                w.warn(Code.NOT_OWNED, f"{ref} is not in front of {_who(player)}", player)
                if found is None:
                    continue
            owner, card = found
            tool = self.tool(card)
            if tool is None or tool != kind:
                why = "nothing here takes a tool" if kind is None else f"this needs a {kind}"
                w.warn(Code.WRONG_TOOL, f"{card} does not help: {why}", player)
                continue
            reduction += int(self.attr(card, "reduction", 0))
            if card in w.used:
                rest = remove_one(w.areas[owner - 1], card)
                assert rest is not None
                w.set_area(owner, rest)
                w.used = w.used - {card}
                w.discard = (card, *w.discard)
            else:
                w.used = w.used | {card}
        return reduction

    # -- decks ----------------------------------------------------------------------------------

    def _draw_pool(self, w: _Work, candidates: list[str], zone: str) -> str | None:
        """A card turning up in `zone` from a face-down/unknown slot: seen, or drawn."""
        seen = w.seen(zone)
        if seen is not None:
            card = self._canonical(seen) or seen
            self.catalog.card(card)
            rest = remove_one(w.unseen, card)
            if rest is None:
                w.warn(
                    Code.IMPOSSIBLE_CARD,
                    f"{card} turned up in {zone}, but every copy of it is already elsewhere",
                )
            else:
                w.unseen = rest
            return card
        if not candidates:
            return None
        rng = random.Random(w.seed * 1_000_003 + w.draws)
        w.draws += 1
        card = candidates[rng.randrange(len(candidates))]
        rest = remove_one(w.unseen, card)
        assert rest is not None
        w.unseen = rest
        return card

    def _known_or_seen(self, w: _Work, zone: str, card: str) -> str:
        """A known card turning up: what the move says was seen wins (with `desync`)."""
        seen = w.seen(zone)
        if seen is None:
            return card
        seen_id = self._canonical(seen) or self._front_token(seen) or seen
        if seen_id == card or seen_id == self.landscape_of(card):
            return card
        self.catalog.card(seen_id)
        w.warn(Code.DESYNC, f"{zone} shows {seen_id} where {card} was expected")
        rest = remove_one(w.unseen, seen_id)
        if rest is None:
            w.warn(Code.IMPOSSIBLE_CARD, f"{seen_id} turned up in {zone} but is elsewhere")
            rest = w.unseen
        w.unseen = tuple(sorted((*rest, card)))
        return seen_id

    def _resolve_landscape(self, w: _Work, slot: Slot, zone: str, hint: str | None) -> str | None:
        """The full card id of a landscape slot whose back turns up (explored)."""
        if hint is not None:
            w.reveal.setdefault(zone, []).insert(0, hint)
        if slot is not None and slot not in self._by_front:
            seen = w.seen(zone)
            if seen is None:
                return slot
            card = self._landscape_ref(seen, slot)
            if card == slot:
                return slot
            w.warn(Code.DESYNC, f"{zone} turned up {card} where {slot} was expected")
            rest = remove_one(w.unseen, card)
            if rest is None:
                w.warn(Code.IMPOSSIBLE_CARD, f"{card} turned up in {zone} but is elsewhere")
                rest = w.unseen
            w.unseen = tuple(sorted((*rest, slot)))
            return card
        pool = [c for c in w.unseen if self.is_landscape_id(c)]
        if slot is not None:
            pool = [c for c in pool if self.landscape_of(c) == slot]
        seen = w.seen(zone)
        if seen is not None:
            card = self._landscape_ref(seen, slot)
            if slot is not None and self.landscape_of(card) != slot:
                w.warn(Code.DESYNC, f"{zone} turned up {card} under a {slot} front")
            rest = remove_one(w.unseen, card)
            if rest is None:
                w.warn(Code.IMPOSSIBLE_CARD, f"{card} turned up in {zone} but is elsewhere")
            else:
                w.unseen = rest
            return card
        return self._draw_pool(w, pool, zone)

    def _landscape_ref(self, ref: str, slot: Slot) -> str:
        """A landscape card id from a reference seen on a flipped landscape: a card id, an
        item name or item face (with the slot's front narrowing it down)."""
        if ref in self._kinds:
            return ref
        item = self._back_to_item.get(ref, ref)
        front = self.landscape_of(slot)
        options = [
            c for c in self._by_item.get(item, ())
            if front is None or self.landscape_of(c) == front
        ]
        if not options:
            raise MoveFormatError(
                f"{ref!r} is neither a landscape card id nor an item found under "
                f"{front or 'a landscape'}"
            )
        return options[0]

    def _refill_slot(self, w: _Work, index: int) -> bool:
        """Turn the landscape deck's top into display slot `index`; False when the deck is
        empty. A drawn mansion or monument goes to an extra slot under `drawn_special: extra`."""
        zone = f"display-{index + 1}"
        if not w.landscape_deck:
            return False
        top, w.landscape_deck = w.landscape_deck[0], w.landscape_deck[1:]
        card: Slot
        if top is None:
            seen = w.seen(zone)
            if seen is not None and self._front_token(seen) is not None:
                card = self._front_token(seen)
            else:
                if seen is not None:
                    w.reveal.setdefault(zone, []).insert(0, seen)
                card = self._draw_pool(
                    w, [c for c in w.unseen if self.is_landscape_id(c)], zone
                )
        elif top in self._by_front:
            seen = w.seen(zone)
            card = top
            if seen is not None:
                token = self._front_token(seen)
                if token is not None and token != top:
                    w.warn(Code.DESYNC, f"{zone} shows {token} where {top} was expected")
                    card = token
                elif token is None:
                    full = self._canonical(seen) or seen
                    self.catalog.card(full)
                    rest = remove_one(w.unseen, full)
                    if rest is None:
                        w.warn(Code.IMPOSSIBLE_CARD, f"{full} turned up in {zone} but is elsewhere")
                    else:
                        w.unseen = rest
                    card = full
        else:
            card = self._known_or_seen(w, zone, top)
        if (
            w.options.drawn_special is DrawnSpecial.EXTRA
            and card is not None
            and self.is_special(card)
        ):
            w.display = (*w.display, (card,))
            return self._refill_slot(w, index)
        w.display = replace_at(w.display, index, (card,))
        return True

    def _mob_candidates(self, w: _Work) -> list[str]:
        pool = [c for c in w.unseen if self._kinds.get(c) in ("mob", "game-over")]
        known_end = GAME_OVER in w.mob_deck or GAME_OVER in w.mobs or GAME_OVER in w.discard
        if known_end or len(w.mob_deck) > GAME_OVER_DEPTH + 1:
            pool = [c for c in pool if c != GAME_OVER]
        return pool

    def _draw_mob(self, w: _Work) -> str | None:
        """The top card of the mob deck, turned up (None: the deck is empty)."""
        if not w.mob_deck:
            return None
        top = w.mob_deck[0]
        if top is None:
            card = self._draw_pool(w, self._mob_candidates(w), "mobs")
        else:
            card = self._known_or_seen(w, "mobs", top)
        w.mob_deck = w.mob_deck[1:]
        return card

    def _reveal_mobs(self, w: _Work, player: int, count: int, armor: str | None) -> None:
        """A reveal event of `count` mobs; iron armor (given here or used before) cancels it
        (or one mob of it, `armor_cancels: mob`). Each mob is drawn until a new type shows."""
        if count <= 0 or w.outcome is not Outcome.PLAYING:
            if armor is not None:
                self._discard_armor(w, player, armor)
            return
        if armor is not None and self._discard_armor(w, player, armor):
            w.armored += 1
        if w.armored > 0:
            if w.options.armor_cancels is ArmorCancels.EVENT:
                w.armored -= 1
                return
            cancelled = min(w.armored, count)
            w.armored -= cancelled
            count -= cancelled
        for _ in range(count):
            while w.outcome is Outcome.PLAYING:
                card = self._draw_mob(w)
                if card is None:
                    w.outcome = Outcome.LOST
                    break
                if card == GAME_OVER:
                    w.mobs = (*w.mobs, card)
                    w.outcome = Outcome.LOST
                    break
                new = card not in w.mobs
                w.mobs = (*w.mobs, card)
                if new:
                    break

    def _discard_armor(self, w: _Work, player: int, ref: str) -> bool:
        card = self._take_item(w, player, ref)
        if card is None:
            return False
        w.discard = (card, *w.discard)
        if self.category(card) != "armor":
            w.warn(Code.NOT_USABLE, f"{card} is no iron armor and cancels nothing", player)
            return False
        return True

    # -- display --------------------------------------------------------------------------------

    def _display_index(self, w: _Work, ref: str) -> int | None:
        """The display slot `ref` names: `display-N`, a number, a card id or a landscape type."""
        if ref.startswith("display-") and ref[8:].isdigit():
            i = int(ref[8:]) - 1
            return i if 0 <= i < len(w.display) else None
        if ref.isdigit():
            i = int(ref) - 1
            return i if 0 <= i < len(w.display) else None
        canon = self._canonical(ref)
        front = self._front_token(ref) or (self.landscape_of(canon) if canon else None)
        for i, slot in enumerate(w.display):
            if slot and canon is not None and slot[0] == canon:
                return i
        for i, slot in enumerate(w.display):
            if slot and front is not None and slot[0] == front:
                return i
        for i, slot in enumerate(w.display):
            if slot and front is not None and self.landscape_of(slot[0]) == front:
                return i
        for i, slot in enumerate(w.display):
            if slot and slot[0] is None:
                return i
        return None

    # -- move handlers --------------------------------------------------------------------------

    def _explore(self, w: _Work, move: Explore) -> None:
        p = move.player
        self._eat_all(w, p, move.food)
        index = self._display_index(w, move.landscape)
        zone = f"display-{index + 1}" if index is not None else move.landscape
        if index is None or not w.display[index]:
            w.warn(Code.NOT_ON_DISPLAY, f"{move.landscape} is not in the display", p)
            return
        slot = w.display[index][0]
        card = self._resolve_landscape(w, slot, zone, move.item)
        if card is None:
            w.warn(Code.IMPOSSIBLE_CARD, f"nothing is left that could lie in {zone}", p)
            return
        w.display = replace_at(w.display, index, ())
        w.display = _trim(w.display)
        if self.is_village(card):
            trade = self.attr(card, "trade")
            if move.tools:
                self._use_tools(w, p, move.tools, None)
            self._pay(w, p, TRADE_COST, f"trading at {self.landscape_of(card)}")
            self._pay_trade(w, p, card, str(trade["pay"]), move.pay)
        else:
            if move.pay is not None:
                w.warn(Code.WRONG_PAYMENT, f"{self.landscape_of(card)} is no village", p)
            shield = self.attr(card, "shield")
            reduction = self._use_tools(w, p, move.tools, None if shield is None else str(shield))
            cost = max(0, self.cost_of(card) - reduction)
            self._pay(w, p, cost, f"exploring {self.landscape_of(card)}")
        w.set_area(p, (*w.areas[p - 1], card))
        self._reveal_mobs(w, p, int(self.attr(card, "reveal", 0) or 0), move.armor)

    def _pay_trade(self, w: _Work, p: int, village: str, need: str, ref: str | None) -> None:
        if ref is None:
            w.warn(Code.WRONG_PAYMENT, f"the villager wants {need} or an emerald; nothing was paid", p)
            return
        card = self._take_item(w, p, ref)
        if card is None:
            return
        w.discard = (card, *w.discard)
        if not (self.matches_need(card, need) or self.category(card) == "emerald"):
            w.warn(
                Code.WRONG_PAYMENT,
                f"{self.landscape_of(village)} wants {need} or an emerald, got {card}",
                p,
            )
        w.used = w.used - {card}

    def _refresh(self, w: _Work, move: Refresh) -> None:
        p = move.player
        self._eat_all(w, p, move.food)
        self._pay(w, p, REFRESH_COST, "refreshing the display")
        kept: set[int] = set()
        for ref in move.keep:
            i = self._display_index(w, ref)
            if i is None or not w.display[i] or i in kept:
                w.warn(Code.NOT_ON_DISPLAY, f"{ref} is not in the display", p)
                continue
            kept.add(i)
        bottom: list[Slot] = []
        for i, slot in enumerate(w.display):
            if slot and i not in kept:
                bottom.append(slot[0])
                w.display = replace_at(w.display, i, ())
        w.landscape_deck = (*w.landscape_deck, *bottom)
        display = list(w.display[:DISPLAY_SIZE]) + [
            s for i, s in enumerate(w.display[DISPLAY_SIZE:], DISPLAY_SIZE) if s
        ]
        while len(display) < DISPLAY_SIZE:
            display.append(())
        w.display = tuple(display)
        for i in range(DISPLAY_SIZE):
            if not w.display[i] and not self._refill_slot(w, i):
                break

    def _fight(self, w: _Work, move: Fight) -> None:
        p = move.player
        self._eat_all(w, p, move.food)
        mob = self._canonical(move.mob) or move.mob
        self.catalog.card(mob)
        reduction = self._use_tools(w, p, move.tools, "sword")
        cost = max(0, self.cost_of(mob) - reduction)
        self._pay(w, p, cost, f"fighting a {mob}")
        rest = remove_one(w.mobs, mob)
        if rest is None or not self.is_mob(mob):
            w.warn(Code.NO_MOB, f"no {mob} is on the table", p)
            return
        w.mobs = rest
        w.set_area(p, (*w.areas[p - 1], mob))

    def _defeat_free(self, w: _Work, player: int, ref: str | None) -> None:
        """A free defeat (crossbow, completed chest): the named table mob, else the costliest."""
        if ref is None:
            first = self.costliest(w.mobs, 1)
            if not first:
                return
            mob = first[0]
        else:
            mob = self._canonical(ref) or ref
            self.catalog.card(mob)
        rest = remove_one(w.mobs, mob)
        if rest is None or not self.is_mob(mob):
            w.warn(Code.NO_MOB, f"no {mob} is on the table", player)
            return
        w.mobs = rest
        w.set_area(player, (*w.areas[player - 1], mob))

    def _fill(self, w: _Work, move: Fill) -> None:
        p = move.player
        self._eat_all(w, p, move.food)
        rows: list[tuple[str, tuple[str, ...]]] = []
        if move.chest is not None:
            rows.append((move.chest, move.items))
        elif move.items:
            raise MoveFormatError("move 'fill': 'items' needs a 'chest' (or use 'chests')")
        rows.extend((row[0], row[1:]) for row in move.chests if row)
        if not rows:
            raise MoveFormatError("move 'fill': name a 'chest' with its 'items', or 'chests'")
        self._pay(w, p, FILL_COST, "filling chests")
        defeats = list(move.defeat)
        for ref, items in rows:
            chest = self._chest_id(ref)
            if chest not in w.chests:
                w.warn(Code.NOT_A_CHEST, f"{chest} is not one of the chests in play", p)
                for item in items:
                    card = self._take_item(w, p, item)
                    if card is not None:
                        w.discard = (card, *w.discard)
                continue
            ci = w.chests.index(chest)
            if chest in w.filled:
                w.warn(Code.CHEST_FILLED, f"{chest} is already filled", p)
            under = list(w.chest_items[ci])
            needs = self.chest_needs(chest)
            for item in items:
                card = self._take_item(w, p, item)
                if card is None:
                    continue
                w.used = w.used - {card}
                if chest not in w.filled and self.assignment(needs, [*under, card]) is None:
                    w.warn(Code.WRONG_ITEM, f"{chest} does not take {card} (needs {', '.join(needs)})", p)
                under.append(card)
            w.chest_items = replace_at(w.chest_items, ci, tuple(under))
            if chest in w.filled:
                continue
            left = self.assignment(needs, under)
            if left == []:
                w.filled = w.filled | {chest}
                self._defeat_free(w, p, defeats.pop(0) if defeats else None)
            elif w.options.partial_fill is PartialFill.FORBIDDEN and left is not None:
                w.warn(Code.CHEST_INCOMPLETE, f"{chest} still needs {', '.join(left)}", p)
        self._check_win(w)

    def _chest_id(self, ref: str) -> str:
        canon = self._canonical(ref)
        if canon is not None and self._kinds[canon] == "chest":
            return canon
        digits = ref.removeprefix("chest").lstrip("-_ ")
        if digits.isdigit() and 1 <= int(digits) <= 12:
            return f"chest-{int(digits):02d}"
        raise MoveFormatError(f"move 'fill': {ref!r} is not a chest; chests are chest-01..chest-12")

    def _check_win(self, w: _Work) -> None:
        if w.outcome is Outcome.PLAYING and w.chests and len(w.filled & set(w.chests)) >= len(w.chests) - 1:
            w.outcome = Outcome.WON

    def _eat(self, w: _Work, move: Eat) -> None:
        self._eat_one(w, move.player, move.item)

    def _trophy(self, w: _Work, move: TrophyMove) -> None:
        p = move.player
        taken = [c for c in (self._take_item(w, p, ref) for ref in move.mobs) if c is not None]
        w.discard = (*reversed(taken), *w.discard)
        if len(move.mobs) != 2 or len(taken) != 2 or taken[0] != taken[1] or not self.is_mob(taken[0]):
            w.warn(
                Code.TROPHY_MISMATCH,
                f"a trophy is two identical defeated mobs, got {', '.join(move.mobs) or 'none'}",
                p,
            )
        w.bonus += TROPHY_HUNGER

    def _use(self, w: _Work, move: Use) -> None:
        p = move.player
        card = self._take_item(w, p, move.item)
        if card is None:
            return
        category = self.category(card)
        if category not in ("crossbow", "spyglass", "map", "armor"):
            w.warn(Code.NOT_USABLE, f"{card} has no power to use", p)
            w.set_area(p, (*w.areas[p - 1], card))  # it stays where it was
            return
        w.discard = (card, *w.discard)
        if category == "crossbow":
            targets: list[str | None] = list(move.mobs[:CROSSBOW_MOBS])
            if len(move.mobs) > CROSSBOW_MOBS:
                w.warn(Code.NO_MOB, f"a crossbow defeats {CROSSBOW_MOBS} mobs, not {len(move.mobs)}", p)
            if not move.mobs:
                targets = [None] * CROSSBOW_MOBS
            for ref in targets:
                self._defeat_free(w, p, ref)
        elif category == "map":
            self._fetch_special(w, p, move.landscape)
        elif category == "armor":
            w.armored += 1

    def _fetch_special(self, w: _Work, player: int, ref: str | None) -> None:
        wanted: tuple[str, ...] = SPECIAL_LANDSCAPES
        if ref is not None:
            canon = self._canonical(ref)
            front = self._front_token(ref) or (self.landscape_of(canon) if canon else None)
            if front not in SPECIAL_LANDSCAPES:
                raise MoveFormatError(
                    f"move 'use': an explorer map fetches {' or '.join(SPECIAL_LANDSCAPES)}, "
                    f"not {ref!r}"
                )
            wanted = (front,)
        for front in wanted:
            for i, slot in enumerate(w.landscape_deck):
                if slot is not None and self.landscape_of(slot) == front:
                    w.landscape_deck = w.landscape_deck[:i] + w.landscape_deck[i + 1 :]
                    self._place_extra(w, slot)
                    return
        for front in wanted:
            cards = [c for c in w.unseen if self.landscape_of(c) == front]
            if cards and None in w.landscape_deck:
                i = w.landscape_deck.index(None)
                w.landscape_deck = w.landscape_deck[:i] + w.landscape_deck[i + 1 :]
                rest = remove_one(w.unseen, cards[0])
                assert rest is not None
                w.unseen = rest
                self._place_extra(w, cards[0])
                return
        w.warn(Code.NOT_IN_DECK, f"no {' or '.join(wanted)} is left in the landscape deck", player)

    def _place_extra(self, w: _Work, card: str) -> None:
        display = list(w.display)
        while len(display) < DISPLAY_SIZE:
            display.append(())
        display.append((card,))
        w.display = tuple(display)

    def _end_turn(self, w: _Work, move: EndTurn) -> None:
        self._reveal_mobs(w, move.player, 1, move.armor)
        w.current = w.current % w.players + 1
        w.turn += 1
        w.spent = 0
        w.bonus = 0
        w.armored = 0

    def _table_change(self, w: _Work, move: TableChange) -> None:
        cards = tuple(self._canonical(c) or c for c in move.cards)
        for c in cards:
            self.catalog.card(c)
        zone = move.zone
        w.warn(Code.DESYNC, f"{zone} was set to {', '.join(cards) or 'nothing'} by hand")
        old: tuple[Slot, ...]
        if zone == "landscape-deck":
            old, w.landscape_deck = w.landscape_deck, cards
        elif zone == "mob-deck":
            old, w.mob_deck = w.mob_deck, cards
        elif zone == "mobs":
            old, w.mobs = w.mobs, cards
        elif zone == "discard":
            old, w.discard = w.discard, cards
        elif zone.startswith("display-") and zone[8:].isdigit() and 1 <= int(zone[8:]) <= 7:
            i = int(zone[8:]) - 1
            display = list(w.display)
            while len(display) <= i:
                display.append(())
            old = display[i]
            display[i] = cards[:1]
            w.display = _trim(tuple(display))
        elif zone.startswith("player-") and zone[7:].isdigit() and 1 <= int(zone[7:]) <= w.players:
            i = int(zone[7:])
            old = w.areas[i - 1]
            w.set_area(i, cards)
            w.used = w.used & set(cards) | (w.used - set(old))
        else:
            raise SetupError(
                f"table-change: zone {zone!r} cannot be set; use landscape-deck, display-N, "
                "mob-deck, mobs, discard or player-N"
            )
        pool = Counter(w.unseen)
        pool.update(c for c in old if c is not None and c not in self._by_front)
        for c in cards:
            if pool[c] > 0:
                pool[c] -= 1
            else:
                w.warn(Code.IMPOSSIBLE_CARD, f"{c} is on the table more often than the deck holds it")
        w.unseen = tuple(sorted(pool.elements()))
        if GAME_OVER in w.mobs and w.outcome is Outcome.PLAYING:
            w.outcome = Outcome.LOST

    # -- reading a state ------------------------------------------------------------------------

    def filled_count(self, state: ExplorersState) -> int:
        return len(state.filled & set(state.chests))

    def scores(self, state: ExplorersState) -> tuple[int, ...]:
        """Team-wide: every player's score is the number of chests the team has filled."""
        return (self.filled_count(state),) * state.players

    def winner(self, state: ExplorersState) -> int | None:
        """0 (the whole team) after a win; None while playing and after a loss."""
        return 0 if state.outcome is Outcome.WON else None

    def is_over(self, state: ExplorersState) -> bool:
        return state.outcome is not Outcome.PLAYING

    def check_expectation(self, state: ExplorersState, key: str, want: Any) -> str | None:
        """A scenario expectation of this game: None when it holds, else what differs.

        `outcome` (won / lost / playing), `hunger` (hunger left this turn), `filled` (chest
        ids, any order), `damaged` (tools turned 180 degrees, any order)."""
        got: Any
        if key in ("filled", "damaged") and isinstance(want, str):
            want = [want]
        if key == "outcome":
            got = state.outcome.value
            want = "playing" if want is None else str(want)
        elif key == "hunger":
            got = state.hunger
        elif key == "filled":
            got = sorted(state.filled)
            want = sorted(self._chest_id(str(c)) for c in (want or []))
        elif key == "damaged":
            got = sorted(state.used)
            want = sorted(self._canonical(str(c)) or str(c) for c in (want or []))
        else:
            raise KeyError(key)
        return None if got == want else f"{key} expected {want}, got {got}"

    def zones(self, state: ExplorersState) -> dict[str, tuple[Slot, ...]]:
        """Zone id -> cards (decks top first; None = not known; a landscape type = front only)."""
        out: dict[str, tuple[Slot, ...]] = {"landscape-deck": state.landscape_deck}
        for i in range(max(DISPLAY_SIZE, len(state.display))):
            out[f"display-{i + 1}"] = state.display[i] if i < len(state.display) else ()
        out["mob-deck"] = state.mob_deck
        out["mobs"] = state.mobs
        out["chests"] = (*state.chests, *(c for items in state.chest_items for c in items))
        out["hunger"] = ("hunger",) * HUNGER_CARDS + ("night",)
        out["discard"] = state.discard
        for p in range(1, state.players + 1):
            out[f"player-{p}"] = state.areas[p - 1]
        return out

    def view(
        self, state: ExplorersState, audience: Audience, player: int | None = None
    ) -> dict[str, Any]:
        """What a viewer may know. Everyone sees the fronts of the landscape deck's top and the
        display, the mobs, chests and items; the backs of landscapes not yet explored and the
        mob deck stay hidden from everyone but the operator."""
        zones = self.zones(state)
        shown: dict[str, list[str | None]] = {}
        for zone, cards in zones.items():
            if audience is Audience.OPERATOR:
                shown[zone] = list(cards)
            elif zone == "landscape-deck":
                top = [self.landscape_of(cards[0])] if cards else []
                shown[zone] = [*top, *([None] * (len(cards) - len(top)))]
            elif zone.startswith("display-"):
                shown[zone] = [self.landscape_of(c) for c in cards]
            elif zone == "mob-deck":
                shown[zone] = [None] * len(cards)
            else:
                shown[zone] = list(cards)
        return {
            "game": GAME_ID,
            "players": state.players,
            "current": state.current,
            "turn": state.turn,
            "hunger": state.hunger,
            "hunger_cards_spent": state.spent,
            "food_bonus": state.bonus,
            "chests": list(state.chests),
            "filled": sorted(state.filled),
            "to_win": max(0, len(state.chests) - 1),
            "scores": list(self.scores(state)),
            "outcome": state.outcome.value,
            "winner": self.winner(state),
            "over": self.is_over(state),
            "zones": shown,
            "damaged_tools": sorted(state.used),
            "chest_progress": [
                {
                    "chest": chest,
                    "needs": list(self.chest_needs(chest)),
                    "items": list(items),
                    "filled": chest in state.filled,
                }
                for chest, items in zip(state.chests, state.chest_items, strict=False)
            ],
            "game_over_chance": self.game_over_chance(state),
        }

    def game_over_chance(self, state: ExplorersState) -> float:
        """The chance that the next mob revealed is the game-over card, from what the table
        shows. At setup the game-over card is shuffled with the last `GAME_OVER_DEPTH` mobs,
        so it lies among the bottom `GAME_OVER_DEPTH + 1` cards of the mob deck with equal
        chance. While more cards than that remain, the top card cannot be it (0); once `n` of
        those bottom cards remain and it has not turned up, it is any of them alike (1/n). It
        is 0 when the card already turned up (mobs, discard), when the deck is empty, and when
        the table was set up without it (not in the deck, not among the unseen cards, and no
        card of the deck unknown)."""
        n = len(state.mob_deck)
        if n == 0 or GAME_OVER in state.mobs or GAME_OVER in state.discard:
            return 0.0
        possible = (
            GAME_OVER in state.mob_deck or GAME_OVER in state.unseen or None in state.mob_deck
        )
        if not possible or n > GAME_OVER_DEPTH + 1:
            return 0.0
        return 1.0 / n

    # -- enumerating legal moves (simulation, interpretation) ----------------------------------

    def legal_moves(self, state: ExplorersState) -> Iterator[ExpMove]:
        """Legal moves of the active player (one representative payment each)."""
        if state.outcome is not Outcome.PLAYING:
            return
        p = state.current
        hunger = state.hunger
        mine = [c for q in self._owners_of(state, p) for c in state.areas[q - 1]]
        tools = {k: sorted({c for c in mine if self.tool(c) == k}) for k in ("pickaxe", "sword")}
        seen_moves: set[ExpMove] = set()

        def once(move: ExpMove) -> Iterator[ExpMove]:
            if move not in seen_moves:
                seen_moves.add(move)
                yield move

        for i, slot in enumerate(state.display):
            if not slot or slot[0] is None or slot[0] in self._by_front:
                continue
            card = slot[0]
            zone = f"display-{i + 1}"
            if self.is_village(card):
                if hunger < TRADE_COST:
                    continue
                need = str(self.attr(card, "trade")["pay"])
                payers = sorted(
                    {c for c in mine if self.matches_need(c, need) or self.category(c) == "emerald"}
                )
                for pay in payers:
                    yield from once(Trade(player=p, landscape=zone, pay=pay))
                continue
            cost = self.cost_of(card)
            if cost <= hunger:
                yield from once(Explore(player=p, landscape=zone))
            shield = self.attr(card, "shield")
            for tool in tools.get(str(shield), []) if shield else []:
                if max(0, cost - int(self.attr(tool, "reduction", 0))) <= hunger:
                    yield from once(Explore(player=p, landscape=zone, tools=(tool,)))
        if hunger >= REFRESH_COST and (state.landscape_deck or any(state.display)):
            yield Refresh(player=p)
        for mob in sorted({m for m in state.mobs if self.is_mob(m)}):
            cost = self.cost_of(mob)
            if cost <= hunger:
                yield Fight(player=p, mob=mob)
            for sword in tools["sword"]:
                if max(0, cost - int(self.attr(sword, "reduction", 0))) <= hunger:
                    yield Fight(player=p, mob=mob, tools=(sword,))
        if hunger >= FILL_COST:
            for ci, chest in enumerate(state.chests):
                if chest in state.filled:
                    continue
                items = self.completion(state.chest_items[ci], self.chest_needs(chest), mine)
                if items is not None:
                    yield Fill(player=p, chest=chest, items=items)
        # A special landscape the explorer map can fetch: one known in the deck, or one of the
        # cards not seen yet where the deck holds cards not seen (`_fetch_special`).
        fetchable = any(self.is_special(s) for s in state.landscape_deck) or (
            None in state.landscape_deck and any(self.is_special(c) for c in state.unseen)
        )
        for card in sorted(set(mine)):
            if self.food(card) > 0:
                yield Eat(player=p, item=card)
            category = self.category(card)
            if (category == "crossbow" and any(self.is_mob(m) for m in state.mobs)) or category == "spyglass" or (
                category == "map" and fetchable
            ):
                yield Use(player=p, item=card)
        trophies = Counter(c for c in mine if self.is_mob(c))
        for mob, n in sorted(trophies.items()):
            if n >= 2:
                yield TrophyMove(player=p, mobs=(mob, mob))
        yield EndTurn(player=p)
        armor = sorted({c for c in mine if self.category(c) == "armor"})
        if armor:
            yield EndTurn(player=p, armor=armor[0])

    def _owners_of(self, state: ExplorersState, player: int) -> list[int]:
        if state.options.items_pool is ItemsPool.SHARED:
            return list(range(1, state.players + 1))
        return [player]

    def completion(
        self, under: Sequence[str], needs: Sequence[str], mine: Sequence[str]
    ) -> tuple[str, ...] | None:
        """Items from `mine` that complete a chest already holding `under`, or None."""
        left = self.assignment(needs, under)
        if left is None:
            return None
        pool = list(mine)
        picked: list[str] = []
        for need in left:
            choice = next((c for c in sorted(pool) if self.matches_need(c, need)), None)
            if choice is None:
                return None
            pool.remove(choice)
            picked.append(choice)
        if self.assignment(needs, [*under, *picked]) != []:
            return None
        return tuple(picked)


def _trim(display: tuple[tuple[Slot, ...], ...]) -> tuple[tuple[Slot, ...], ...]:
    """Drop empty extra slots beyond display-5."""
    out = list(display)
    while len(out) > DISPLAY_SIZE and not out[-1]:
        out.pop()
    return tuple(out)


def _rows(move: str, key: str, value: Any) -> list[list[Any]]:
    """A mapping `{zone: card or [cards]}` (or a list of rows) as rows `[key, values...]`."""
    if isinstance(value, Mapping):
        rows: list[list[Any]] = []
        for k, v in value.items():
            if not isinstance(k, str):
                raise MoveFormatError(f"move {move!r} field {key!r}: keys must be ids, got {k!r}")
            cards = v if isinstance(v, list | tuple) else [v]
            rows.append([k, *cards])
        return rows
    if isinstance(value, Sequence) and not isinstance(value, str):
        return [list(row) if isinstance(row, list | tuple) else [row] for row in value]
    raise MoveFormatError(
        f"move {move!r} field {key!r}: expected a mapping of ids to cards, got {value!r}"
    )


_HANDLERS: dict[type[ExpMove], Any] = {
    Explore: MinecraftExplorers._explore,
    Trade: MinecraftExplorers._explore,
    Refresh: MinecraftExplorers._refresh,
    Fight: MinecraftExplorers._fight,
    Fill: MinecraftExplorers._fill,
    Eat: MinecraftExplorers._eat,
    TrophyMove: MinecraftExplorers._trophy,
    Use: MinecraftExplorers._use,
    EndTurn: MinecraftExplorers._end_turn,
    TableChange: MinecraftExplorers._table_change,
}

RULESET = MinecraftExplorers()
register(RULESET)
