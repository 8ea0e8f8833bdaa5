""""Minecraft: The Card Game, Official Manual mk. I" (fan-made): the rules as a pure ruleset.

GAMES.md §3 is the normative summary; the rule sheet is `shared/seeds/001`. Each turn the
active player gains health when well fed, loses a hunger token, rolls the die at night (armor
in the hotbar re-rolls a hit), then takes ONE action. The table is the truth: every move is
applied as it physically happened and a broken rule is a `GameWarning`. Die rolls are inputs
(`roll: [..]` on the move, in the order the die was rolled); a roll not given is drawn from
the state's seed, so `apply` stays pure. Inventories are hands: a card whose identity the
camera never saw is kept as an unknown slot tagged with the pile it came from, and is
identified when it reappears (played to the hotbar, crafted with, traded); a card played from
a hand that cannot hold it raises `not-owned`.

Choices where the sheets are silent (each documented in docs/rules/minecraft-mk1.md):
- Deck by player count (`deck: scaled`): the seed's per-player list; leather (12) and armor
  (6) are not in that list and are all used; food follows `food` (default all 20). Cards not
  used lie in the `box`.
- Every pile lies face down; the starting deal (1 tree, 2 food) goes into the inventory.
  Cards taken from piles (mining, hunting, drawing, crafting, harvest yields) go into the
  inventory; a crafted item too.
- The turn passes after the one action; a move by another player is `out-of-turn` (applied,
  counted for nobody, no turn steps). Weather counts player turns (`weather_counts`): it is
  in effect for the 3 turns after the one it was activated in, then incinerated.
- A generator ages by one at the start of each of its owner's turns while in the hotbar
  (not under storm); it is ready at age 2 (1 under rain). Trees are generators that yield
  wood like saplings (`tree`). A ready generator may be harvested under storm.
- Shelter exempts its owner from every weather effect (`shelter_scope`); a trade is banned
  unless both players are sheltered. Water doubles every generator yield. Armor always
  re-rolls a night hit. An axe counts wherever its owner holds it (`axe_in`).
- Effect cards pay their cost each time they enter the hotbar (`move`); shelter pays 4 wood,
  else 2 stone, unless `pay` says which.
- Hunger at 0 costs nothing more (`starving`). Rain's discard is owed by every unsheltered
  player holding a card; it is made with `discard` (not an action) before the next action.
- A second weather card activated while one is active replaces it (`weather-active`); the old
  one is incinerated. Death (health 0) respawns at once: every card returns to the bottom of
  its pile, then the starting deal is taken from the piles.
- The game ends when a player holds the target number of shinies (`shinies_to_win`, 20),
  counted in hotbar and inventory.
- A seeded deal knows every pile's order (the simulator plays from it); an explicit setup
  may leave pile cards unknown (`null`), and those stay unknown until taken or seen.
- `legal_moves` offers a plain survival-and-mining plan (tiers), not every legal move, so
  that simulated games end; `candidate_moves` lists every kind of action.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from types import MappingProxyType
from typing import Any, ClassVar

from engine.catalog import Catalog, load_catalog
from engine.core import Audience, GameWarning, OptionSpec, Step, register, resolve_options
from engine.errors import MoveFormatError, SetupError, UnknownCardError
from engine.moves import decode_move, encode_move

GAME_ID = "minecraft-mk1"
PILES: tuple[str, ...] = (
    "wood",
    "sticks",
    "mining",
    "hunting",
    "gardening",
    "sword",
    "axe",
    "pickaxe",
    "armor",
    "effects-weather",
)
HOTBAR_SLOTS = 3
INVENTORY_SLOTS = 5
CAP = 8
START_HEALTH = 6
START_HUNGER = 6
DAYLIGHT = 4
WEATHER_TURNS = 3
READY_AGE = 2
READY_AGE_RAIN = 1
WELL_FED = 7
STORM_DAMAGE = 4
FOOD_HUNGER = 2
FOOD_HUNGER_FURNACE = 4
START_DEAL: tuple[str, ...] = ("tree", "food", "food")
MATERIALS = frozenset({"wood", "stick", "stone", "shiny", "food", "leather"})
GENERATORS = frozenset({"sapling", "seed", "tree"})
EFFECTS = frozenset({"furnace", "shelter", "water", "armor"})
WEATHER = frozenset({"storm", "rain"})
TOOLS = frozenset({"sword", "axe", "pickaxe"})
RECIPES: Mapping[str, Mapping[str, int]] = MappingProxyType(
    {
        "stick": MappingProxyType({"wood": 2}),
        "sword": MappingProxyType({"stick": 1, "stone": 2}),
        "axe": MappingProxyType({"stick": 2, "stone": 3}),
        "pickaxe": MappingProxyType({"stick": 2, "wood": 3}),
        "armor": MappingProxyType({"leather": 4}),
    }
)
FURNACE_COST: Mapping[str, int] = MappingProxyType({"stone": 4, "wood": 2})
FURNACE_HEALTH = 1
SHELTER_COSTS: tuple[Mapping[str, int], ...] = (
    MappingProxyType({"wood": 4}),
    MappingProxyType({"stone": 2}),
)
PLACES = ("hotbar", "inventory")

Slot = str | None
"""A card in a pile or hand: its id, or None for a card whose identity is not known."""


class Code(StrEnum):
    """Stable warning codes of this game (public vocabulary: journal, API, overlay)."""

    OUT_OF_TURN = "out-of-turn"
    GAME_OVER = "game-over"
    NOT_OWNED = "not-owned"
    NOT_IN_HOTBAR = "not-in-hotbar"
    WRONG_CARD = "wrong-card"
    NOT_READY = "not-ready"
    NO_PICKAXE = "no-pickaxe"
    WEATHER_BAN = "weather-ban"
    WEATHER_ACTIVE = "weather-active"
    UNDERPAID = "underpaid"
    NO_ROOM = "no-room"
    EMPTY_PILE = "empty-pile"
    WHOLE_STACK = "whole-stack"
    RAIN_DISCARD_MISSING = "rain-discard-missing"
    IMPOSSIBLE_CARD = "impossible-card"
    DESYNC = "desync"


RULES: Mapping[Code, str] = {
    Code.OUT_OF_TURN: "Players take turns in seat order, one action each.",
    Code.GAME_OVER: "The game ends when a player holds all the shinies.",
    Code.NOT_OWNED: "Players play only cards they hold (hotbar or inventory).",
    Code.NOT_IN_HOTBAR: "Food is eaten and generators are harvested from the hotbar.",
    Code.WRONG_CARD: "That card cannot do this (eat food, harvest generators, activate weather, "
    "craft stick/sword/axe/pickaxe/armor).",
    Code.NOT_READY: "A generator is harvested after 2 turns in the hotbar (1 under rain).",
    Code.NO_PICKAXE: "Mining needs a pickaxe in the hotbar.",
    Code.WEATHER_BAN: "No hunting under storm, no mining under rain, no trading under any weather.",
    Code.WEATHER_ACTIVE: "Only one weather card can be active at a time.",
    Code.UNDERPAID: "Crafting and playing furnace or shelter cost the listed materials.",
    Code.NO_ROOM: "The hotbar holds 3 cards or stacks, the inventory 5; materials stack.",
    Code.EMPTY_PILE: "An empty pile has nothing to take.",
    Code.WHOLE_STACK: "Incinerate ONE card, not a whole stack of materials.",
    Code.RAIN_DISCARD_MISSING: "When rain is played, every player discards 1 card at once.",
    Code.IMPOSSIBLE_CARD: "Each card exists only as often as the deck holds it.",
    Code.DESYNC: "The table changed in a way no legal move explains.",
}


class DeckMode(StrEnum):
    SCALED = "scaled"
    FULL = "full"


class FoodCount(StrEnum):
    ALL = "all"
    PER_PLAYER = "per-player"


class TreeRule(StrEnum):
    GENERATOR = "generator"
    GROWN = "grown"


class HarvestYield(StrEnum):
    GENERATOR = "generator"
    DRAWN_CARD = "drawn-card"


class AxeIn(StrEnum):
    ANYWHERE = "anywhere"
    HOTBAR = "hotbar"


class WeatherCounts(StrEnum):
    PLAYER_TURNS = "player-turns"
    ROUNDS = "rounds"


class Starving(StrEnum):
    NOTHING = "nothing"
    LOSE_HEALTH = "lose-health"


class ShelterScope(StrEnum):
    ALL = "all"
    IMMEDIATE = "immediate"


OPTIONS: tuple[OptionSpec, ...] = (
    OptionSpec.of(
        "deck",
        DeckMode.SCALED,
        "scaled: the seed's per-player deck list; full: every card of the box.",
    ),
    OptionSpec.of(
        "food",
        FoodCount.ALL,
        "all: all 20 food at every player count; per-player: 6 per player (at most 20).",
    ),
    OptionSpec.of(
        "tree",
        TreeRule.GENERATOR,
        "generator: a tree in the hotbar grows and yields wood like a sapling; "
        "grown: a tree is ready to harvest at once.",
    ),
    OptionSpec.of(
        "harvest_yield",
        HarvestYield.GENERATOR,
        "generator: the harvested card decides the yield (sapling/tree: wood, seed: food); "
        "drawn-card: the card taken from the gardening pile decides (tree: wood, seed: food, "
        "sapling: nothing).",
    ),
    OptionSpec.of(
        "axe_in",
        AxeIn.ANYWHERE,
        "Where an axe must be for 2 wood + 1 stick per tree harvested: anywhere held, or "
        "in the hotbar.",
    ),
    OptionSpec.of(
        "weather_counts",
        WeatherCounts.PLAYER_TURNS,
        "A weather card lasts 3 player turns, or 3 rounds, after the turn it was played.",
    ),
    OptionSpec.of(
        "starving",
        Starving.NOTHING,
        "What a turn costs a player with no hunger token left: nothing, or 1 health.",
    ),
    OptionSpec.of(
        "shelter_scope",
        ShelterScope.ALL,
        "all: shelter cancels every weather effect for its owner (damage, discards, bans, "
        "generator changes); immediate: only the effects when the weather is played.",
    ),
    OptionSpec(
        name="shinies_to_win",
        default=20,
        help="Shinies a player must hold to win (the seed: all 20).",
    ),
)


@dataclass(frozen=True, slots=True, kw_only=True)
class Options:
    deck: DeckMode = DeckMode.SCALED
    food: FoodCount = FoodCount.ALL
    tree: TreeRule = TreeRule.GENERATOR
    harvest_yield: HarvestYield = HarvestYield.GENERATOR
    axe_in: AxeIn = AxeIn.ANYWHERE
    weather_counts: WeatherCounts = WeatherCounts.PLAYER_TURNS
    starving: Starving = Starving.NOTHING
    shelter_scope: ShelterScope = ShelterScope.ALL
    shinies_to_win: int = 20

    def to_dict(self) -> dict[str, str | int]:
        return {
            "deck": self.deck.value,
            "food": self.food.value,
            "tree": self.tree.value,
            "harvest_yield": self.harvest_yield.value,
            "axe_in": self.axe_in.value,
            "weather_counts": self.weather_counts.value,
            "starving": self.starving.value,
            "shelter_scope": self.shelter_scope.value,
            "shinies_to_win": self.shinies_to_win,
        }


# --------------------------------------------------------------------------------------------
# Moves


@dataclass(frozen=True, slots=True, kw_only=True)
class Mk1Move:
    """Fields shared by every move: who made it, and the die values rolled during it (night
    roll first, then the armor re-roll, then a seed harvest's roll)."""

    NAME: ClassVar[str] = ""
    player: int
    roll: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class Sleep(Mk1Move):
    """Sleep: when every player sleeps during a night round, it is day again."""

    NAME: ClassVar[str] = "sleep"


@dataclass(frozen=True, slots=True, kw_only=True)
class MoveCard(Mk1Move):
    """Move one card (or a stack of materials) between the hotbar and the inventory."""

    NAME: ClassVar[str] = "move"
    card: str
    to: str | None = None
    slot: int | str | None = None
    count: int | None = None
    pay: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class Incinerate(Mk1Move):
    """Return one card to the bottom of its pile."""

    NAME: ClassVar[str] = "incinerate"
    card: str
    source: str | None = field(default=None, metadata={"key": "from"})
    slot: int | str | None = None
    count: int = 1


@dataclass(frozen=True, slots=True, kw_only=True)
class Eat(Mk1Move):
    """Eat one food from the hotbar: +2 hunger (+4 with a furnace in the hotbar)."""

    NAME: ClassVar[str] = "eat"
    card: str = "food"
    slot: int | str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Harvest(Mk1Move):
    """Harvest a ready generator from the hotbar (`drawn`: the gardening card taken)."""

    NAME: ClassVar[str] = "harvest"
    card: str | None = None
    slot: int | str | None = None
    drawn: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Activate(Mk1Move):
    """Activate a weather card: it lies next to the daylight tokens for 3 turns."""

    NAME: ClassVar[str] = "activate"
    card: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Craft(Mk1Move):
    """Craft an item: incinerate its materials, take one card of it into the inventory."""

    NAME: ClassVar[str] = "craft"
    card: str
    pay: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class Mine(Mk1Move):
    """Go mining (pickaxe in the hotbar): take the top card of the mining pile."""

    NAME: ClassVar[str] = "mine"
    card: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Hunt(Mk1Move):
    """Go hunting: take 1 card of the hunting pile (2 with a sword in the hotbar)."""

    NAME: ClassVar[str] = "hunt"
    cards: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class Draw(Mk1Move):
    """Draw the top card of the effect/weather pile into the inventory."""

    NAME: ClassVar[str] = "draw"
    card: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Discard(Mk1Move):
    """Discard one card from the inventory (to the bottom of its pile); also rain's discard."""

    NAME: ClassVar[str] = "discard"
    card: str
    source: str | None = field(default=None, metadata={"key": "from"})


@dataclass(frozen=True, slots=True, kw_only=True)
class Trade(Mk1Move):
    """Trade with one other player: `give` goes to them, `take` comes from them."""

    NAME: ClassVar[str] = "trade"
    partner: int = field(metadata={"key": "with"})
    give: tuple[str, ...] = ()
    take: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class TableChange(Mk1Move):
    """A physical change nothing legal explains (or an operator correction): set a zone.
    Card zones take `cards`; token zones and the die take `count`. Setting `daylight` to all
    its tokens makes it day, to none night."""

    NAME: ClassVar[str] = "table-change"
    zone: str
    cards: tuple[str, ...] = ()
    count: int | None = None


MOVE_TYPES: tuple[type[Mk1Move], ...] = (
    Sleep,
    MoveCard,
    Incinerate,
    Eat,
    Harvest,
    Activate,
    Craft,
    Mine,
    Hunt,
    Draw,
    Discard,
    Trade,
    TableChange,
)

# Other names a table might use for the same moves.
ALIASES: Mapping[str, str] = MappingProxyType(
    {
        "go-mining": "mine",
        "go-hunting": "hunt",
        "activate-weather": "activate",
        "play-weather": "activate",
        "eat-food": "eat",
        "draw-card": "draw",
        "harvest-generator": "harvest",
        "move-card": "move",
        "discard-card": "discard",
        "incinerate-card": "incinerate",
    }
)


# --------------------------------------------------------------------------------------------
# State


Hotbar = tuple[tuple[str, ...], ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class Mk1State:
    """Everything on the table and whose turn it is. Players are numbered from 1.

    `inventories` hold the known cards of each hand; `hidden` the pile ids of the cards a hand
    holds whose identity is not known (each is one of `unseen`, of that pile's kinds).
    `ages[p][i]` is how many turns the generator in hotbar slot i has grown."""

    players: int
    options: Options
    seed: int
    draws: int
    piles: tuple[tuple[Slot, ...], ...]
    box: tuple[str, ...]
    unseen: tuple[str, ...]
    hotbars: tuple[Hotbar, ...]
    ages: tuple[tuple[int, ...], ...]
    inventories: tuple[tuple[str, ...], ...]
    hidden: tuple[tuple[str, ...], ...]
    health: tuple[int, ...]
    hunger: tuple[int, ...]
    daylight: int
    night: bool
    die: int
    weather: str | None
    weather_left: int
    owed: tuple[int, ...]
    slept: tuple[bool, ...]
    current: int
    turn: int
    round: int
    winner: int | None
    over: bool
    move_index: int


_STATE_FIELDS = tuple(Mk1State.__dataclass_fields__)


class _Work:
    """A mutable scratch copy of a state used inside one `apply`; frozen again at the end."""

    def __init__(self, state: Mk1State, rolls: Sequence[int] = ()) -> None:
        self.players = state.players
        self.options = state.options
        self.seed = state.seed
        self.draws = state.draws
        self.piles: dict[str, list[Slot]] = {
            name: list(pile) for name, pile in zip(PILES, state.piles, strict=True)
        }
        self.box = list(state.box)
        self.unseen: Counter[str] = Counter(state.unseen)
        self.hotbars = [[list(s) for s in hb] for hb in state.hotbars]
        self.ages = [list(a) for a in state.ages]
        self.inv = [list(i) for i in state.inventories]
        self.hidden = [list(h) for h in state.hidden]
        self.health = list(state.health)
        self.hunger = list(state.hunger)
        self.daylight = state.daylight
        self.night = state.night
        self.die = state.die
        self.weather = state.weather
        self.weather_left = state.weather_left
        self.owed = list(state.owed)
        self.slept = list(state.slept)
        self.current = state.current
        self.turn = state.turn
        self.round = state.round
        self.winner = state.winner
        self.over = state.over
        self.move_index = state.move_index
        self.rolls = list(rolls)
        self.warnings: list[GameWarning] = []

    def freeze(self) -> Mk1State:
        return Mk1State(
            players=self.players,
            options=self.options,
            seed=self.seed,
            draws=self.draws,
            piles=tuple(tuple(self.piles[name]) for name in PILES),
            box=tuple(sorted(self.box)),
            unseen=tuple(sorted(self.unseen.elements())),
            hotbars=tuple(tuple(tuple(s) for s in hb) for hb in self.hotbars),
            ages=tuple(tuple(a) for a in self.ages),
            inventories=tuple(tuple(sorted(i)) for i in self.inv),
            hidden=tuple(tuple(sorted(h)) for h in self.hidden),
            health=tuple(self.health),
            hunger=tuple(self.hunger),
            daylight=self.daylight,
            night=self.night,
            die=self.die,
            weather=self.weather,
            weather_left=self.weather_left,
            owed=tuple(self.owed),
            slept=tuple(self.slept),
            current=self.current,
            turn=self.turn,
            round=self.round,
            winner=self.winner,
            over=self.over,
            move_index=self.move_index,
        )

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

    def rng(self) -> random.Random:
        r = random.Random(self.seed * 1_000_003 + self.draws)
        self.draws += 1
        return r

    def roll(self) -> int:
        """The next die value: the one the move says was seen, else drawn from the seed."""
        value = self.rolls.pop(0) if self.rolls else self.rng().randint(1, 6)
        self.die = value
        return value


def _name(p: int) -> str:
    return f"player {p}"


def slots_used(cards: Iterable[str]) -> int:
    """Slots a set of known cards fills: one per material type, one per other card."""
    kinds: set[str] = set()
    n = 0
    for c in cards:
        if c in MATERIALS:
            kinds.add(c)
        else:
            n += 1
    return n + len(kinds)


# --------------------------------------------------------------------------------------------
# The ruleset


class MinecraftMk1:
    """The fan-made mk. I game: `apply` never refuses a move that physically happened."""

    id = GAME_ID
    name = "Minecraft: The Card Game, Official Manual mk. I (fan-made)"
    min_players = 2
    max_players = 6
    move_types = MOVE_TYPES
    # How a simulated player weighs its (sensible) legal moves.
    sim_weights: Mapping[str, float] = MappingProxyType(
        {
            "mine": 60.0,
            "eat": 30.0,
            "craft": 25.0,
            "harvest": 25.0,
            "trade": 20.0,
            "move": 6.0,
            "hunt": 4.0,
            "draw": 0.3,
            "activate": 0.5,
            "sleep": 0.5,
            "discard": 1.0,
            "incinerate": 0.3,
        }
    )

    def __init__(self) -> None:
        self._catalog: Catalog | None = None
        self._pile_of: dict[str, str] = {}
        self._pile_kinds: dict[str, frozenset[str]] = {}

    # -- catalog helpers ----------------------------------------------------------------------

    @property
    def catalog(self) -> Catalog:
        if self._catalog is None:
            cat = load_catalog(GAME_ID)
            self._pile_of = {c.id: str(c.attrs["pile"]) for c in cat.cards.values()}
            kinds: dict[str, set[str]] = {}
            for cid, pile in self._pile_of.items():
                kinds.setdefault(pile, set()).add(cid)
            self._pile_kinds = {p: frozenset(k) for p, k in kinds.items()}
            self._catalog = cat
        return self._catalog

    @property
    def options(self) -> tuple[OptionSpec, ...]:
        return OPTIONS

    def pile_of(self, card: str) -> str:
        """The pile a card returns to (its back)."""
        _ = self.catalog
        try:
            return self._pile_of[card]
        except KeyError:
            self.catalog.card(card)  # raises the clear UnknownCardError
            raise

    def pile_kinds(self, pile: str) -> frozenset[str]:
        _ = self.catalog
        return self._pile_kinds[pile]

    def check_card(self, card: str, field_name: str = "card") -> str:
        try:
            self.catalog.card(card)
        except UnknownCardError as exc:
            raise MoveFormatError(f"field {field_name!r}: {exc}") from None
        return card

    # -- setup --------------------------------------------------------------------------------

    def deck_for(self, players: int, options: Options) -> Counter[str]:
        """The cards in play for a player count (the rest of the box is set aside)."""
        cat = self.catalog
        full = Counter(cat.deck())
        if options.deck is DeckMode.FULL:
            return full
        out: Counter[str] = Counter()
        for card in cat.cards.values():
            a = card.attrs
            if card.id == "food":
                n = card.count if options.food is FoodCount.ALL else 6 * players
            elif "per_player" in a:
                n = int(a["per_player"]) * players
            elif "per_player_minus_one" in a:
                n = int(a["per_player_minus_one"]) * (players - 1)
            else:
                n = card.count  # fixed cards, and leather/armor the per-player list omits
            out[card.id] = min(n, card.count)
        return out

    def initial_state(
        self,
        *,
        players: int,
        options: Mapping[str, object] | None = None,
        seed: int | None = None,
        setup: Mapping[str, Any] | None = None,
    ) -> Mk1State:
        """A fresh table: dealt from `seed`, or laid out as `setup` says (docs/rules)."""
        if isinstance(players, bool) or not isinstance(players, int) or not (
            self.min_players <= players <= self.max_players
        ):
            raise SetupError(
                f"{GAME_ID} is for {self.min_players}-{self.max_players} players, got {players!r}"
            )
        raw = resolve_options(OPTIONS, options)
        target = raw["shinies_to_win"]
        if isinstance(target, bool) or not isinstance(target, int) or not 1 <= target <= 20:
            raise SetupError("option 'shinies_to_win' must be a whole number from 1 to 20")
        opts = Options(
            deck=DeckMode(str(raw["deck"])),
            food=FoodCount(str(raw["food"])),
            tree=TreeRule(str(raw["tree"])),
            harvest_yield=HarvestYield(str(raw["harvest_yield"])),
            axe_in=AxeIn(str(raw["axe_in"])),
            weather_counts=WeatherCounts(str(raw["weather_counts"])),
            starving=Starving(str(raw["starving"])),
            shelter_scope=ShelterScope(str(raw["shelter_scope"])),
            shinies_to_win=target,
        )
        seed = 0 if seed is None else int(seed)
        in_play = self.deck_for(players, opts)
        box = Counter(self.catalog.deck()) - in_play
        base = dict(
            players=players,
            options=opts,
            seed=seed,
            draws=0,
            ages=((0,) * HOTBAR_SLOTS,) * players,
            hidden=((),) * players,
            die=0,
            weather_left=0,
            owed=(0,) * players,
            slept=(False,) * players,
            turn=1,
            round=1,
            winner=None,
            over=False,
            move_index=0,
        )
        if setup is None:
            rng = random.Random(seed)
            rest = in_play.copy()
            inventories = []
            for _ in range(players):
                inventories.append(tuple(sorted(START_DEAL)))
                rest.subtract(START_DEAL)
            piles: list[tuple[Slot, ...]] = []
            for name in PILES:
                cards = sorted(c for c in rest.elements() if self.pile_of(c) == name)
                rng.shuffle(cards)
                piles.append(tuple(cards))
            return Mk1State(
                piles=tuple(piles),
                box=tuple(sorted(box.elements())),
                unseen=(),
                hotbars=(((),) * HOTBAR_SLOTS,) * players,
                inventories=tuple(inventories),
                health=(START_HEALTH,) * players,
                hunger=(START_HUNGER,) * players,
                daylight=DAYLIGHT,
                night=False,
                weather=None,
                current=1,
                **base,  # type: ignore[arg-type]
            )
        return self._explicit_setup(setup, players, opts, in_play, box, base)

    def _explicit_setup(
        self,
        setup: Mapping[str, Any],
        players: int,
        opts: Options,
        in_play: Counter[str],
        box: Counter[str],
        base: Mapping[str, Any],
    ) -> Mk1State:
        if not isinstance(setup, Mapping):
            raise SetupError("'setup' must map zone ids to lists of card ids")
        seats = range(1, players + 1)
        card_zones = {
            *PILES,
            "weather",
            *(f"hotbar-{p}" for p in seats),
            *(f"hotbar-{p}-{i}" for p in seats for i in range(1, HOTBAR_SLOTS + 1)),
            *(f"inventory-{p}" for p in seats),
        }
        count_zones = {
            "daylight",
            "die",
            "weather-turns",
            *(f"health-{p}" for p in seats),
            *(f"hunger-{p}" for p in seats),
        }
        # `box` (the cards the player count sets aside) follows from the deck option; a setup
        # written from `zones()` names it, and it is accepted as given by that rule.
        other = {"night", "current", "ages", "box"}
        for zone in setup:
            if zone not in card_zones | count_zones | other:
                raise SetupError(
                    f"setup: unknown zone {zone!r} for {players} players; zones are: "
                    + ", ".join(sorted(card_zones | count_zones | other))
                )

        def cards_of(zone: str, allow_unknown: bool) -> list[Slot]:
            value = setup.get(zone, [])
            if value is None:
                value = []
            if isinstance(value, str):
                value = [value]
            if not isinstance(value, Sequence):
                raise SetupError(f"setup: zone {zone!r} must be a list of card ids")
            out: list[Slot] = []
            for item in value:
                if item is None:
                    if not allow_unknown:
                        raise SetupError(
                            f"setup: zone {zone!r} cannot hold an unknown card (null); "
                            "name each card"
                        )
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

        def count_of(zone: str, default: int, low: int, high: int) -> int:
            value = setup.get(zone, default)
            if isinstance(value, list):
                value = len(value)
            if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
                raise SetupError(
                    f"setup: {zone!r} must be a whole number from {low} to {high}, got {value!r}"
                )
            return value

        placed: Counter[str] = Counter()
        hotbars: list[list[list[str]]] = []
        inventories: list[list[str]] = []
        for p in seats:
            slots: list[list[str]] = [[] for _ in range(HOTBAR_SLOTS)]
            for i in range(HOTBAR_SLOTS):
                slots[i] = [c for c in cards_of(f"hotbar-{p}-{i + 1}", False) if c is not None]
            for c in cards_of(f"hotbar-{p}", False):
                assert c is not None
                target = _stack_slot(slots, c)
                if target is None:
                    raise SetupError(f"setup: hotbar-{p} has no room for {c!r} (3 slots)")
                slots[target].append(c)
            hotbars.append(slots)
            hand = [c for c in cards_of(f"inventory-{p}", False) if c is not None]
            inventories.append(hand)
            placed.update(c for s in slots for c in s)
            placed.update(hand)
        weather = [c for c in cards_of("weather", False) if c is not None]
        if len(weather) > 1 or (weather and weather[0] not in WEATHER):
            raise SetupError("setup: 'weather' holds at most one weather card (storm or rain)")
        placed.update(weather)
        given_piles: dict[str, list[Slot]] = {}
        for name in PILES:
            if name in setup:
                pile = cards_of(name, True)
                for c in pile:
                    if c is not None and self.pile_of(c) != name:
                        raise SetupError(
                            f"setup: {c!r} belongs in pile {self.pile_of(c)!r}, not {name!r}"
                        )
                given_piles[name] = pile
                placed.update(c for c in pile if c is not None)
        for card, n in placed.items():
            if n > in_play[card]:
                raise SetupError(
                    f"setup: {card!r} appears {n} times but a {players}-player deck holds "
                    f"{in_play[card]}"
                )
        rest = in_play - placed
        piles: list[tuple[Slot, ...]] = []
        unseen: Counter[str] = Counter()
        for name in PILES:
            mine = sorted(c for c in rest.elements() if self.pile_of(c) == name)
            if name in given_piles:
                pile = given_piles[name]
                unknown = sum(1 for c in pile if c is None)
                if unknown > len(mine):
                    raise SetupError(
                        f"setup: pile {name!r} has {unknown} unknown cards but only "
                        f"{len(mine)} of its cards are left in the deck"
                    )
                if unknown and len(self.pile_kinds(name)) == 1:
                    only = next(iter(self.pile_kinds(name)))
                    pile = [only if c is None else c for c in pile]
                    mine = mine[unknown:]
                    unknown = 0
                # The unknown cards are some of those not placed: all of them stay unseen
                # (candidates); without unknown cards the rest is out of play, in the box.
                if unknown:
                    unseen.update(mine)
                else:
                    box.update(mine)
                piles.append(tuple(pile))
            elif len(self.pile_kinds(name)) == 1 or not mine:
                piles.append(tuple(mine))
            else:
                unseen.update(mine)
                piles.append((None,) * len(mine))
        ages_raw = setup.get("ages", {}) or {}
        if not isinstance(ages_raw, Mapping):
            raise SetupError("setup: 'ages' must map hotbar slots (hotbar-N-I) to turns grown")
        ages = [[0] * HOTBAR_SLOTS for _ in seats]
        for zone, value in ages_raw.items():
            p, i = _slot_zone(str(zone), players)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise SetupError(f"setup: ages.{zone} must be a whole number of turns")
            ages[p - 1][i] = value
        current = count_of("current", 1, 1, players)
        night = setup.get("night", False)
        if not isinstance(night, bool):
            raise SetupError("setup: 'night' must be true or false")
        daylight = count_of("daylight", 0 if night else DAYLIGHT, 0, DAYLIGHT)
        die = count_of("die", 0, 0, 6)
        weather_left = count_of("weather-turns", WEATHER_TURNS if weather else 0, 0, 99)
        fields = dict(base)
        fields.update(
            ages=tuple(tuple(a) for a in ages),
            die=die,
            weather_left=weather_left,
            current=current,
        )
        return Mk1State(
            piles=tuple(piles),
            box=tuple(sorted(box.elements())),
            unseen=tuple(sorted(unseen.elements())),
            hotbars=tuple(tuple(tuple(s) for s in hb) for hb in hotbars),
            inventories=tuple(tuple(sorted(i)) for i in inventories),
            health=tuple(count_of(f"health-{p}", START_HEALTH, 0, CAP) for p in seats),
            hunger=tuple(count_of(f"hunger-{p}", START_HUNGER, 0, CAP) for p in seats),
            daylight=daylight,
            night=night,
            weather=weather[0] if weather else None,
            **fields,
        )

    # -- moves --------------------------------------------------------------------------------

    def parse_move(self, data: Mapping[str, Any]) -> Mk1Move:
        """Decode a plain move. Liberal where it costs nothing: move-name aliases, `roll` as
        one number, `partner` for `with`, `card` for a hunt's `cards`, `slot` as a zone id."""
        if not isinstance(data, Mapping):
            raise MoveFormatError(f"a move must be a mapping, got {data!r}")
        data = dict(data)
        name = data.get("move")
        if isinstance(name, str) and name in ALIASES:
            data["move"] = name = ALIASES[name]
        roll = data.get("roll")
        if isinstance(roll, int) and not isinstance(roll, bool):
            data["roll"] = [roll]
        if "partner" in data and "with" not in data:
            data["with"] = data.pop("partner")
        if name == "hunt" and "card" in data and "cards" not in data:
            card = data.pop("card")
            data["cards"] = [] if card is None else [card]
        move: Mk1Move = decode_move(MOVE_TYPES, data)
        for value in move.roll:
            if not 1 <= value <= 6:
                raise MoveFormatError(
                    f"move {name!r} field 'roll': a die value is 1-6, got {value}"
                )
        for attr in ("card", "drawn"):
            one = getattr(move, attr, None)
            if isinstance(one, str):
                self.check_card(one, attr)
        for attr in ("cards", "pay", "give", "take"):
            for item in getattr(move, attr, ()) or ():
                self.check_card(item, attr)
        for attr in ("to", "source"):
            place = getattr(move, attr, None)
            if place is not None and place not in PLACES:
                key = "from" if attr == "source" else attr
                raise MoveFormatError(
                    f"move {name!r} field {key!r}: must be hotbar or inventory, got {place!r}"
                )
        return move

    def move_to_dict(self, move: Mk1Move) -> dict[str, Any]:
        return encode_move(move)

    def validate(self, state: Mk1State, move: Mk1Move) -> tuple[GameWarning, ...]:
        """The warnings `move` would raise in `state` (empty: the move is legal)."""
        return self.apply(state, move).warnings

    def apply(self, state: Mk1State, move: Mk1Move) -> Step[Mk1State]:
        """Apply a move as it physically happened; return the new state and its warnings."""
        w = _Work(state, move.roll)
        p = move.player
        if not 1 <= p <= state.players:
            raise MoveFormatError(
                f"player {p} does not exist in a {state.players}-player game"
            )
        if isinstance(move, TableChange):
            self._table_change(w, move)
        elif isinstance(move, Discard) and w.owed[p - 1] > 0:
            self._over_warning(w, p)
            self._rain_discard(w, move)
        else:
            self._over_warning(w, p)
            self._close_rain(w)
            if p == w.current:
                self._turn_start(w, p)
                self._action(w, move)
                self._turn_end(w, p, isinstance(move, Sleep))
            else:
                w.warn(
                    Code.OUT_OF_TURN,
                    f"{_name(p)} acted during {_name(w.current)}'s turn",
                    p,
                )
                self._action(w, move)
        self._check_win(w, p)
        w.move_index += 1
        return Step(w.freeze(), tuple(w.warnings))

    def _over_warning(self, w: _Work, p: int) -> None:
        if w.over:
            w.warn(Code.GAME_OVER, "the game is already over", p)

    def _action(self, w: _Work, move: Mk1Move) -> None:
        handler = _HANDLERS[type(move)]
        handler(self, w, move)

    # -- the turn -------------------------------------------------------------------------------

    def sheltered(self, w: _Work | Mk1State, p: int, *, immediate: bool = False) -> bool:
        """Whether weather leaves player `p` alone (shelter active in their hotbar)."""
        hotbar = w.hotbars[p - 1]
        has = any("shelter" in s for s in hotbar)
        if not has:
            return False
        opts = w.options
        return immediate or opts.shelter_scope is ShelterScope.ALL

    def _turn_start(self, w: _Work, p: int) -> None:
        """Steps 1-3 of the turn, and generators growing."""
        if w.hunger[p - 1] >= WELL_FED:
            w.health[p - 1] = min(CAP, w.health[p - 1] + 1)
        if w.hunger[p - 1] > 0:
            w.hunger[p - 1] -= 1
        elif w.options.starving is Starving.LOSE_HEALTH:
            self._damage(w, p, 1)
        if w.night:
            hit = w.roll() <= 3
            if hit and self.has_in_hotbar(w, p, "armor"):
                hit = w.roll() <= 3
            if hit:
                self._damage(w, p, 1)
        frozen = w.weather == "storm" and not self.sheltered(w, p)
        if not frozen:
            for i, slot in enumerate(w.hotbars[p - 1]):
                if slot and slot[0] in GENERATORS:
                    w.ages[p - 1][i] += 1

    def _turn_end(self, w: _Work, p: int, slept: bool) -> None:
        if slept:
            w.slept[p - 1] = True
        if w.weather is not None and w.options.weather_counts is WeatherCounts.PLAYER_TURNS:
            self._tick_weather(w)
        if p == w.players:
            self._round_end(w)
        w.current = p % w.players + 1
        w.turn += 1

    def _tick_weather(self, w: _Work) -> None:
        if w.weather is None:
            return
        w.weather_left -= 1
        if w.weather_left <= 0:
            self._to_pile(w, w.weather)
            w.weather = None
            w.weather_left = 0

    def _round_end(self, w: _Work) -> None:
        if w.weather is not None and w.options.weather_counts is WeatherCounts.ROUNDS:
            self._tick_weather(w)
        if w.night:
            if all(w.slept):
                w.night, w.daylight = False, DAYLIGHT
            else:
                w.daylight = min(DAYLIGHT, w.daylight + 1)
                if w.daylight == DAYLIGHT:
                    w.night = False
        else:
            w.daylight = max(0, w.daylight - 1)
            if w.daylight == 0:
                w.night = True
        w.slept = [False] * w.players
        w.round += 1

    def _damage(self, w: _Work, p: int, n: int) -> None:
        w.health[p - 1] = max(0, w.health[p - 1] - n)
        if w.health[p - 1] == 0:
            self._respawn(w, p)

    def _respawn(self, w: _Work, p: int) -> None:
        """Death: every card back to the bottom of its pile, then the starting deal."""
        for slot in w.hotbars[p - 1]:
            for c in slot:
                self._to_pile(w, c)
        for c in w.inv[p - 1]:
            self._to_pile(w, c)
        for tag in w.hidden[p - 1]:
            w.piles[tag].append(None)
        w.hotbars[p - 1] = [[] for _ in range(HOTBAR_SLOTS)]
        w.ages[p - 1] = [0] * HOTBAR_SLOTS
        w.inv[p - 1] = []
        w.hidden[p - 1] = []
        w.owed[p - 1] = 0
        for card in START_DEAL:
            got = self._take_kind(w, self.pile_of(card), card, p)
            if got is not None:
                w.inv[p - 1].append(got)
        w.health[p - 1] = START_HEALTH
        w.hunger[p - 1] = START_HUNGER

    def _gain_hunger(self, w: _Work, p: int, n: int) -> None:
        w.hunger[p - 1] = min(CAP, w.hunger[p - 1] + n)

    # -- where cards are ------------------------------------------------------------------------

    def has_in_hotbar(self, w: _Work | Mk1State, p: int, card: str) -> bool:
        return any(card in s for s in w.hotbars[p - 1])

    def holds(self, w: _Work | Mk1State, p: int, card: str) -> bool:
        inv = w.inv[p - 1] if isinstance(w, _Work) else w.inventories[p - 1]
        return card in inv or self.has_in_hotbar(w, p, card)

    def _to_pile(self, w: _Work, card: str) -> None:
        """Incinerate: the card goes to the bottom of its pile."""
        w.piles[self.pile_of(card)].append(card)

    def _could_hide(self, w: _Work, p: int, card: str) -> str | None:
        """The tag of an unknown card of `p`'s hand that may be `card`, if any."""
        if w.unseen[card] <= 0:
            return None
        tag = self.pile_of(card)
        return tag if tag in w.hidden[p - 1] else None

    def _take_from_hand(
        self,
        w: _Work,
        p: int,
        card: str,
        where: str | None,
        *,
        slot: int | None = None,
        warn: bool = True,
    ) -> str | None:
        """Remove one `card` from `p`'s hotbar or inventory (`where`; None: inventory, then
        hotbar). An unknown card of the hand that may be it is identified as it. Returns the
        place it came from; when the player cannot hold it, `not-owned` (with `warn`) and
        "unseen" if it came from out of sight, None if no copy is left (`impossible-card`)."""
        order = [where] if where else ["inventory", "hotbar"]
        for place in order:
            if place == "hotbar":
                indices = [slot] if slot is not None else list(range(HOTBAR_SLOTS))
                for i in indices:
                    stack = w.hotbars[p - 1][i]
                    if card in stack:
                        stack.remove(card)
                        if not stack:
                            w.ages[p - 1][i] = 0
                        return "hotbar"
            else:
                if card in w.inv[p - 1]:
                    w.inv[p - 1].remove(card)
                    return "inventory"
        if where in (None, "inventory"):
            tag = self._could_hide(w, p, card)
            if tag is not None:
                w.hidden[p - 1].remove(tag)
                w.unseen[card] -= 1
                w.unseen = +w.unseen
                return "inventory"
        if warn:
            place = f"{_name(p)}'s {where}" if where else f"{_name(p)}'s hotbar or inventory"
            w.warn(Code.NOT_OWNED, f"{card} is not in {place}, nor can it be", p)
        if not warn:
            return None
        # The table is the truth: the card came from out of sight, or it is an impossible copy.
        if w.unseen[card] > 0:
            w.unseen[card] -= 1
            w.unseen = +w.unseen
            self._fix_unknowns(w, self.pile_of(card))
            return "unseen"
        w.warn(Code.IMPOSSIBLE_CARD, f"every {card} is already elsewhere", p)
        return None

    def _fix_unknowns(self, w: _Work, pile: str) -> None:
        """Keep no more unknown slots of a pile's kinds than unseen cards of those kinds (a
        card located elsewhere cannot be one of them any more)."""
        left = sum(n for c, n in w.unseen.items() if self.pile_of(c) == pile)
        while w.piles[pile].count(None) + sum(h.count(pile) for h in w.hidden) > left:
            if None in w.piles[pile]:
                w.piles[pile].remove(None)
                continue
            for hand in w.hidden:
                if pile in hand:
                    hand.remove(pile)
                    break

    def _add_to_inventory(self, w: _Work, p: int, cards: Iterable[str], *, check: bool = True) -> None:
        for c in cards:
            w.inv[p - 1].append(c)
        if check and self.inventory_slots(w, p) > INVENTORY_SLOTS:
            w.warn(
                Code.NO_ROOM,
                f"{_name(p)}'s inventory holds more than {INVENTORY_SLOTS} cards or stacks",
                p,
            )

    def inventory_slots(self, w: _Work | Mk1State, p: int) -> int:
        """The fewest inventory slots the hand can fill (unknown materials may stack)."""
        inv = w.inv[p - 1] if isinstance(w, _Work) else w.inventories[p - 1]
        n = slots_used(inv)
        for tag, k in Counter(w.hidden[p - 1]).items():
            kinds = self.pile_kinds(tag)
            if kinds <= MATERIALS:
                if not any(c in kinds for c in inv):
                    n += 1
            else:
                n += k
        return n

    def hotbar_used(self, w: _Work | Mk1State, p: int) -> int:
        return sum(1 for s in w.hotbars[p - 1] if s)

    def _take_top(self, w: _Work, pile: str, named: str | None, p: int) -> tuple[bool, Slot]:
        """Take the top card of a pile: (whether there was one, its identity or None if not
        known). `named`: what the move says was taken."""
        cards = w.piles[pile]
        if not cards:
            w.warn(Code.EMPTY_PILE, f"the {pile} pile is empty", p)
            return False, None
        top = cards[0]
        if named is None or named == top:
            cards.pop(0)
            return True, top
        if self.pile_of(named) != pile:
            w.warn(Code.DESYNC, f"{named} cannot come from the {pile} pile", p)
        if top is None:
            cards.pop(0)
            if w.unseen[named] > 0:
                w.unseen[named] -= 1
                w.unseen = +w.unseen
            else:
                w.warn(Code.IMPOSSIBLE_CARD, f"{named} cannot be in the {pile} pile", p)
            return True, named
        # A known top, but the table says another card was taken.
        if named in cards:
            cards.remove(named)
        else:
            cards.pop(0)
            w.warn(Code.DESYNC, f"{named} was taken from the {pile} pile whose top is {top}", p)
        return True, named

    def _take_kind(self, w: _Work, pile: str, card: str, p: int) -> str | None:
        """Take one `card` from anywhere in a pile (a yield of a given kind)."""
        cards = w.piles[pile]
        if card in cards:
            cards.remove(card)
            return card
        if None in cards and w.unseen[card] > 0:
            cards.remove(None)
            w.unseen[card] -= 1
            w.unseen = +w.unseen
            return card
        w.warn(Code.EMPTY_PILE, f"no {card} is left in the {pile} pile", p)
        return None

    def _receive(self, w: _Work, p: int, pile: str, taken: Slot) -> None:
        """A card taken from a pile goes into the hand (unknown: tagged with its pile)."""
        if taken is None:
            w.hidden[p - 1].append(pile)
            if self.inventory_slots(w, p) > INVENTORY_SLOTS:
                w.warn(Code.NO_ROOM, f"{_name(p)}'s inventory is full", p)
        else:
            self._add_to_inventory(w, p, [taken])

    # -- actions --------------------------------------------------------------------------------

    def _sleep(self, w: _Work, move: Sleep) -> None:
        return

    def _place(self, w: _Work, p: int, card: str, slot: int | None) -> int:
        """Put a card into `p`'s hotbar (a matching stack, a free slot, or `slot`)."""
        slots = w.hotbars[p - 1]
        target = slot if slot is not None else _stack_slot(slots, card)
        if target is None:
            w.warn(Code.NO_ROOM, f"{_name(p)}'s hotbar has no room for {card}", p)
            target = HOTBAR_SLOTS - 1
        elif slots[target] and not (card in MATERIALS and slots[target][0] == card):
            w.warn(Code.NO_ROOM, f"hotbar slot {target + 1} of {_name(p)} is taken", p)
        if not slots[target]:
            w.ages[p - 1][target] = 0
        slots[target].append(card)
        return target

    def _move(self, w: _Work, move: MoveCard) -> None:
        p, card = move.player, move.card
        slot = _slot_index(move.slot, p, w.players)
        to = move.to
        if to is None:
            in_hotbar = (
                self.has_in_hotbar(w, p, card) if slot is None else card in w.hotbars[p - 1][slot]
            )
            to = "inventory" if in_hotbar and card not in w.inv[p - 1] else "hotbar"
        source = "inventory" if to == "hotbar" else "hotbar"
        src_slot = slot if source == "hotbar" else None
        if source == "hotbar" and src_slot is None:
            src_slot = next((i for i, s in enumerate(w.hotbars[p - 1]) if card in s), None)
        if card in MATERIALS:
            if source == "inventory":
                have = w.inv[p - 1].count(card)
            else:
                have = w.hotbars[p - 1][src_slot].count(card) if src_slot is not None else 0
            count = move.count if move.count is not None else max(1, have)
        else:
            if (move.count or 1) > 1:
                w.warn(Code.WHOLE_STACK, f"only materials stack; {card} moves one at a time", p)
            count = 1
        moved = 0
        for k in range(count):
            got = self._take_from_hand(w, p, card, source, slot=src_slot, warn=k == 0)
            if got is None and k > 0:
                break  # fewer copies than said: the rest were never there
            moved += 1
        if to == "inventory":
            self._add_to_inventory(w, p, [card] * moved)
            return
        target = slot
        for _ in range(moved):
            target = self._place(w, p, card, target)
        if card == "furnace":
            self._pay(w, p, FURNACE_COST, move.pay, "the furnace")
            self._damage(w, p, FURNACE_HEALTH)
        elif card == "shelter":
            self._pay(w, p, self._shelter_cost(w, p, move.pay), move.pay, "the shelter")

    def _shelter_cost(self, w: _Work, p: int, pay: Sequence[str]) -> Mapping[str, int]:
        if pay:
            given = Counter(pay)
            for cost in SHELTER_COSTS:
                if given == Counter(cost):
                    return cost
            return SHELTER_COSTS[0]
        for cost in SHELTER_COSTS:
            if self._can_pay(w, p, cost):
                return cost
        return SHELTER_COSTS[0]

    def _can_pay(self, w: _Work | Mk1State, p: int, cost: Mapping[str, int]) -> bool:
        inv = w.inv[p - 1] if isinstance(w, _Work) else w.inventories[p - 1]
        have = Counter(inv)
        for s in w.hotbars[p - 1]:
            have.update(s)
        return all(have[c] >= n for c, n in cost.items())

    def _pay(
        self, w: _Work, p: int, cost: Mapping[str, int], pay: Sequence[str], what: str
    ) -> None:
        """Incinerate the materials paid (`pay`, or the cost taken from the holdings)."""
        cards = list(pay) if pay else [c for c, n in sorted(cost.items()) for _ in range(n)]
        paid: Counter[str] = Counter()
        for c in cards:
            if self._take_from_hand(w, p, c, None, warn=bool(pay)) is not None:
                self._to_pile(w, c)
                paid[c] += 1
        if any(paid[c] < n for c, n in cost.items()):
            w.warn(Code.UNDERPAID, f"{_name(p)} did not pay the full cost of {what}", p)

    def _incinerate(self, w: _Work, move: Incinerate) -> None:
        p = move.player
        if move.count > 1:
            w.warn(Code.WHOLE_STACK, f"{_name(p)} incinerated {move.count} cards at once", p)
        slot = _slot_index(move.slot, p, w.players)
        where = "hotbar" if slot is not None else move.source
        for _ in range(max(1, move.count)):
            if self._take_from_hand(w, p, move.card, where, slot=slot) is not None:
                self._to_pile(w, move.card)

    def _eat(self, w: _Work, move: Eat) -> None:
        p = move.player
        if move.card != "food":
            w.warn(Code.WRONG_CARD, f"{move.card} is not food", p)
            return
        slot = _slot_index(move.slot, p, w.players)
        if self._take_from_hand(w, p, "food", "hotbar", slot=slot, warn=False) is None:
            w.warn(Code.NOT_IN_HOTBAR, f"{_name(p)} ate food that was not in the hotbar", p)
            if self._take_from_hand(w, p, "food", "inventory") is None:
                return
        self._to_pile(w, "food")
        furnace = self.has_in_hotbar(w, p, "furnace")
        self._gain_hunger(w, p, FOOD_HUNGER_FURNACE if furnace else FOOD_HUNGER)

    def ready_age(self, w: _Work | Mk1State, p: int, card: str) -> int:
        if card == "tree" and w.options.tree is TreeRule.GROWN:
            return 0
        if w.weather == "rain" and not self.sheltered(w, p):
            return READY_AGE_RAIN
        return READY_AGE

    def _harvest(self, w: _Work, move: Harvest) -> None:
        p = move.player
        slot = _slot_index(move.slot, p, w.players)
        card = move.card
        slots = w.hotbars[p - 1]
        if card is None:
            candidates = [
                i for i, s in enumerate(slots) if s and s[0] in GENERATORS and (slot in (None, i))
            ]
            ready = [i for i in candidates if w.ages[p - 1][i] >= self.ready_age(w, p, slots[i][0])]
            picks: list[int | None] = [*ready, *candidates, None]
            pick = picks[0]
            if pick is None:
                w.warn(Code.NOT_IN_HOTBAR, f"{_name(p)} has no generator in the hotbar", p)
                return
            slot, card = pick, slots[pick][0]
        if card not in GENERATORS:
            w.warn(Code.WRONG_CARD, f"{card} is not a generator (sapling, seed or tree)", p)
            return
        if slot is None:
            found = [i for i, s in enumerate(slots) if card in s]
            ready = [i for i in found if w.ages[p - 1][i] >= self.ready_age(w, p, card)]
            found_slots: list[int | None] = [*ready, *found, None]
            slot = found_slots[0]
        if slot is None or card not in slots[slot]:
            w.warn(Code.NOT_IN_HOTBAR, f"{card} is not in {_name(p)}'s hotbar", p)
            self._take_from_hand(w, p, card, "inventory")
        else:
            if w.ages[p - 1][slot] < self.ready_age(w, p, card):
                w.warn(
                    Code.NOT_READY,
                    f"{card} has grown {w.ages[p - 1][slot]} turn(s); it needs "
                    f"{self.ready_age(w, p, card)}",
                    p,
                )
            slots[slot].remove(card)
            w.ages[p - 1][slot] = 0
        self._to_pile(w, card)
        ok, drawn = self._take_top(w, "gardening", move.drawn, p)
        if ok and drawn is None and w.options.harvest_yield is HarvestYield.DRAWN_CARD:
            # The yield depends on the drawn card: it must be known to apply the rule.
            drawn = self._identify_drawn(w)
        if ok:
            self._receive(w, p, "gardening", drawn)
        source = card if w.options.harvest_yield is HarvestYield.GENERATOR else drawn
        times = 2 if self.has_in_hotbar(w, p, "water") else 1
        if source in ("sapling", "tree") and not (
            w.options.harvest_yield is HarvestYield.DRAWN_CARD and source == "sapling"
        ):
            axe = (
                self.has_in_hotbar(w, p, "axe")
                if w.options.axe_in is AxeIn.HOTBAR
                else self.holds(w, p, "axe")
            )
            wood, sticks = (2, 1) if axe else (1, 0)
            self._yield(w, p, "wood", wood * times)
            self._yield(w, p, "stick", sticks * times)
        elif source == "seed":
            value = w.roll()
            food = 1 if value <= 2 else 2 if value <= 4 else 3
            self._yield(w, p, "food", food * times)

    def _identify_drawn(self, w: _Work) -> str | None:
        choices = sorted(c for c in w.unseen.elements() if self.pile_of(c) == "gardening")
        if not choices:
            return None
        card = choices[w.rng().randrange(len(choices))]
        w.unseen[card] -= 1
        w.unseen = +w.unseen
        return card

    def _yield(self, w: _Work, p: int, card: str, n: int) -> None:
        got = []
        for _ in range(n):
            c = self._take_kind(w, self.pile_of(card), card, p)
            if c is None:
                break
            got.append(c)
        if got:
            self._add_to_inventory(w, p, got)

    def _activate(self, w: _Work, move: Activate) -> None:
        p, card = move.player, move.card
        if card not in WEATHER:
            w.warn(Code.WRONG_CARD, f"{card} is not a weather card (storm or rain)", p)
            return
        self._take_from_hand(w, p, card, None)
        if w.weather is not None:
            w.warn(Code.WEATHER_ACTIVE, f"{w.weather} was still active when {card} was played", p)
            self._to_pile(w, w.weather)
        w.weather = card
        # The turn (or round) it is played in ends with a tick that is not one of the 3.
        w.weather_left = WEATHER_TURNS + 1
        if card == "storm":
            for q in range(1, w.players + 1):
                if not self.sheltered(w, q, immediate=True):
                    self._damage(w, q, STORM_DAMAGE)
        else:
            for q in range(1, w.players + 1):
                if self.sheltered(w, q, immediate=True):
                    continue
                holding = bool(w.inv[q - 1] or w.hidden[q - 1] or any(w.hotbars[q - 1]))
                w.owed[q - 1] = 1 if holding else 0

    def _rain_discard(self, w: _Work, move: Discard) -> None:
        p = move.player
        if self._take_from_hand(w, p, move.card, move.source) is not None:
            self._to_pile(w, move.card)
        w.owed[p - 1] = 0

    def _close_rain(self, w: _Work) -> None:
        for q in range(1, w.players + 1):
            if w.owed[q - 1] > 0:
                w.warn(
                    Code.RAIN_DISCARD_MISSING,
                    f"{_name(q)} did not discard a card to the rain",
                    q,
                )
        w.owed = [0] * w.players

    def _craft(self, w: _Work, move: Craft) -> None:
        p, card = move.player, move.card
        recipe = RECIPES.get(card)
        if recipe is None:
            w.warn(
                Code.WRONG_CARD,
                f"{card} cannot be crafted (stick, sword, axe, pickaxe, armor can)",
                p,
            )
            return
        self._pay(w, p, recipe, move.pay, card)
        ok, got = self._take_top(w, self.pile_of(card), card, p)
        if ok:
            self._receive(w, p, self.pile_of(card), got)

    def banned(self, w: _Work | Mk1State, p: int, action: str) -> bool:
        """Whether the active weather bans `action` for player `p`."""
        if w.weather is None or self.sheltered(w, p):
            return False
        return (action == "hunt" and w.weather == "storm") or (
            action == "mine" and w.weather == "rain"
        ) or action == "trade"

    def _mine(self, w: _Work, move: Mine) -> None:
        p = move.player
        if not self.has_in_hotbar(w, p, "pickaxe"):
            w.warn(Code.NO_PICKAXE, f"{_name(p)} went mining without a pickaxe in the hotbar", p)
        if self.banned(w, p, "mine"):
            w.warn(Code.WEATHER_BAN, "nobody can go mining under rain", p)
        ok, got = self._take_top(w, "mining", move.card, p)
        if ok:
            self._receive(w, p, "mining", got)

    def _hunt(self, w: _Work, move: Hunt) -> None:
        p = move.player
        if self.banned(w, p, "hunt"):
            w.warn(Code.WEATHER_BAN, "nobody can go hunting under storm", p)
        n = 2 if self.has_in_hotbar(w, p, "sword") else 1
        named = list(move.cards)
        if len(named) > n:
            w.warn(Code.NO_ROOM, f"{_name(p)} took {len(named)} cards from hunting; {n} allowed", p)
            n = len(named)
        for i in range(n):
            ok, got = self._take_top(w, "hunting", named[i] if i < len(named) else None, p)
            if not ok:
                break
            self._receive(w, p, "hunting", got)

    def _draw(self, w: _Work, move: Draw) -> None:
        p = move.player
        ok, got = self._take_top(w, "effects-weather", move.card, p)
        if ok:
            self._receive(w, p, "effects-weather", got)

    def _discard(self, w: _Work, move: Discard) -> None:
        p = move.player
        where = move.source or "inventory"
        if self._take_from_hand(w, p, move.card, where) is not None:
            self._to_pile(w, move.card)

    def _trade(self, w: _Work, move: Trade) -> None:
        p, q = move.player, move.partner
        if not 1 <= q <= w.players or q == p:
            raise MoveFormatError(
                f"move 'trade' field 'with': another player from 1 to {w.players}, got {q}"
            )
        if self.banned(w, p, "trade") or self.banned(w, q, "trade"):
            w.warn(Code.WEATHER_BAN, "nobody can trade while a weather card is in effect", p, q)
        gave = self._take_many_from(w, p, move.give)
        took = self._take_many_from(w, q, move.take)
        self._add_to_inventory(w, q, gave, check=False)
        self._add_to_inventory(w, p, took, check=False)
        for who in (p, q):
            if self.inventory_slots(w, who) + self.hotbar_used(w, who) > (
                INVENTORY_SLOTS + HOTBAR_SLOTS
            ):
                w.warn(Code.NO_ROOM, f"{_name(who)} has no room for the cards traded", who)

    def _take_many_from(self, w: _Work, p: int, cards: Sequence[str]) -> list[str]:
        out = []
        for c in cards:
            self._take_from_hand(w, p, c, None)
            out.append(c)
        return out

    def _table_change(self, w: _Work, move: TableChange) -> None:
        zone = move.zone
        counts = {"daylight": (0, DAYLIGHT), "die": (0, 6)}
        for q in range(1, w.players + 1):
            counts[f"health-{q}"] = (0, CAP)
            counts[f"hunger-{q}"] = (0, CAP)
        if zone in counts:
            value = move.count if move.count is not None else len(move.cards)
            low, high = counts[zone]
            if not low <= value <= high:
                raise MoveFormatError(
                    f"table-change: {zone} must be set to {low}-{high}, got {value}"
                )
            w.warn(Code.DESYNC, f"{zone} was set to {value} by hand")
            if zone == "daylight":
                # The tokens tell day from night at their ends: all out is day (a night
                # ended, however), none is night; between, the time of day stays as it was.
                w.daylight = value
                if value == DAYLIGHT:
                    w.night = False
                elif value == 0:
                    w.night = True
            elif zone == "die":
                w.die = value
            else:
                kind, seat = zone.rsplit("-", 1)
                (w.health if kind == "health" else w.hunger)[int(seat) - 1] = value
            return
        cards = [self.check_card(c, "cards") for c in move.cards]
        old: list[str] = []
        touched: set[str] = set()
        if zone in PILES:
            old = [c for c in w.piles[zone] if c is not None]
            w.piles[zone] = list(cards)
        elif zone == "weather":
            old = [w.weather] if w.weather else []
            w.weather = cards[0] if cards else None
            w.weather_left = WEATHER_TURNS if cards else 0
        elif zone.startswith("hotbar-"):
            parts = zone.split("-")
            q = _seat(parts[1], w.players, zone)
            if len(parts) == 3:
                i = _slot_index(zone, q, w.players)
                assert i is not None
                old = list(w.hotbars[q - 1][i])
                w.hotbars[q - 1][i] = list(cards)
                w.ages[q - 1][i] = 0
            else:
                old = [c for s in w.hotbars[q - 1] for c in s]
                slots: list[list[str]] = [[] for _ in range(HOTBAR_SLOTS)]
                for c in cards:
                    t = _stack_slot(slots, c)
                    slots[HOTBAR_SLOTS - 1 if t is None else t].append(c)
                w.ages[q - 1] = [
                    w.ages[q - 1][i] if slots[i] == w.hotbars[q - 1][i] else 0
                    for i in range(HOTBAR_SLOTS)
                ]
                w.hotbars[q - 1] = slots
        elif zone.startswith("inventory-"):
            q = _seat(zone.split("-", 1)[1], w.players, zone)
            old = list(w.inv[q - 1])
            touched.update(w.hidden[q - 1])
            w.hidden[q - 1] = []
            w.inv[q - 1] = list(cards)
        else:
            raise MoveFormatError(f"table-change: unknown zone {zone!r}")
        w.warn(Code.DESYNC, f"{zone} was set to {', '.join(cards) or 'nothing'} by hand")
        # Cards that left are out of sight now (the box); cards that came are taken from what
        # was not located (box or unseen), or they are impossible copies.
        w.box.extend(old)
        for c in cards:
            if c in w.box:
                w.box.remove(c)
            elif w.unseen[c] > 0:
                w.unseen[c] -= 1
                w.unseen = +w.unseen
                touched.add(self.pile_of(c))
            else:
                w.warn(
                    Code.IMPOSSIBLE_CARD, f"{c} is on the table more often than the deck holds it"
                )
        for pile in sorted(touched):
            self._fix_unknowns(w, pile)

    # -- winning ---------------------------------------------------------------------------------

    def shinies(self, state: Mk1State | _Work, p: int) -> int:
        inv = state.inv[p - 1] if isinstance(state, _Work) else state.inventories[p - 1]
        return inv.count("shiny") + sum(s.count("shiny") for s in state.hotbars[p - 1])

    def _check_win(self, w: _Work, mover: int) -> None:
        if w.over:
            return
        order = [mover] + [q for q in range(1, w.players + 1) if q != mover]
        for q in order:
            if self.shinies(w, q) >= w.options.shinies_to_win:
                w.winner, w.over = q, True
                return

    # -- reading a state ------------------------------------------------------------------------

    def scores(self, state: Mk1State) -> tuple[int, ...]:
        """Shinies held by each player (hotbar and known inventory)."""
        return tuple(self.shinies(state, p) for p in range(1, state.players + 1))

    def winner(self, state: Mk1State) -> int | None:
        return state.winner

    # Scenario expectations of this game beyond the common ones (docs/rules/minecraft-mk1.md).
    expectation_keys: tuple[str, ...] = ("night", "weather_turns", "round", "ages")

    def check_expectation(self, state: Mk1State, key: str, want: Any) -> str | None:
        """None when `state` meets the expectation `key: want`, else what differs."""
        got: Any
        if key == "night":
            got = state.night
        elif key == "weather_turns":
            got = _weather_turns_left(state)
        elif key == "round":
            got = state.round
        elif key == "ages":
            if not isinstance(want, Mapping):
                return "ages: expected a mapping of hotbar slots (hotbar-N-I) to turns grown"
            got = {}
            for zone in want:
                p, i = _slot_zone(str(zone), state.players)
                got[zone] = state.ages[p - 1][i]
            want = dict(want)
        else:
            return f"unknown expectation {key!r}"
        return None if got == want else f"{key} expected {want!r}, got {got!r}"

    def is_over(self, state: Mk1State) -> bool:
        return state.over

    def zones(self, state: Mk1State) -> dict[str, tuple[Slot, ...]]:
        """Zone id -> cards (piles top first; None = not known). Token zones (`health-N`,
        `hunger-N`, `daylight`) hold the token id once per token; `die` holds `d6` once per pip
        of the face last rolled (empty before the first roll)."""
        out: dict[str, tuple[Slot, ...]] = {}
        for name, pile in zip(PILES, state.piles, strict=True):
            out[name] = pile
        out["weather"] = (state.weather,) if state.weather else ()
        out["daylight"] = ("daylight",) * state.daylight
        out["die"] = ("d6",) * state.die
        for p in range(1, state.players + 1):
            hb = state.hotbars[p - 1]
            out[f"hotbar-{p}"] = tuple(c for s in hb for c in s)
            for i, s in enumerate(hb):
                out[f"hotbar-{p}-{i + 1}"] = s
            out[f"inventory-{p}"] = (*state.inventories[p - 1], *(None,) * len(state.hidden[p - 1]))
            out[f"health-{p}"] = ("health",) * state.health[p - 1]
            out[f"hunger-{p}"] = ("hunger",) * state.hunger[p - 1]
        out["box"] = state.box
        return out

    def view(
        self, state: Mk1State, audience: Audience, player: int | None = None
    ) -> dict[str, Any]:
        """What a viewer may know. Piles lie face down and inventories are hands: the public
        sees pile heights and hand sizes; a player also sees their own hand; the operator sees
        the engine's whole belief (unknown cards as null)."""
        zones = self.zones(state)
        shown: dict[str, list[str | None]] = {}
        for zone, cards in zones.items():
            hidden = zone in PILES or zone == "box"
            if zone.startswith("inventory-"):
                hidden = not (audience is Audience.PLAYER and zone == f"inventory-{player}")
            if audience is Audience.OPERATOR:
                hidden = False
            shown[zone] = [None] * len(cards) if hidden else list(cards)
        return {
            "game": GAME_ID,
            "players": state.players,
            "current": state.current,
            "turn": state.turn,
            "round": state.round,
            "night": state.night,
            "daylight": state.daylight,
            "die": state.die,
            "weather": state.weather,
            "weather_turns_left": _weather_turns_left(state),
            "health": list(state.health),
            "hunger": list(state.hunger),
            "generator_ages": [list(a) for a in state.ages],
            "rain_discards_owed": [p + 1 for p, n in enumerate(state.owed) if n],
            "scores": list(self.scores(state)),
            "target": state.options.shinies_to_win,
            "winner": state.winner,
            "over": state.over,
            "zones": shown,
        }

    # -- enumerating legal moves (simulation, interpretation) ----------------------------------

    def legal_moves(self, state: Mk1State) -> Iterator[Mk1Move]:
        """The sensible legal moves of whoever must act now, each raising no warning.

        Rain discards come first. For the active player the moves follow a plain plan in
        tiers, so that simulated games end: sleep at night, eat when hungry and keep food in
        the hotbar;
        then harvest, craft armor and a pickaxe, mine, and gather shinies by trade; then grow
        wood and sticks and hunt; then anything else that keeps the hand tidy. The first tier
        with a legal move is offered. `candidate_moves` lists every kind of action."""
        if state.over:
            return
        for tier in self._plan(state):
            legal = [m for m in tier if not self.apply(state, m).warnings]
            if legal:
                yield from legal
                return
        for move in self.candidate_moves(state):
            if not self.apply(state, move).warnings:
                yield move

    def _plan(self, state: Mk1State) -> list[list[Mk1Move]]:
        owing = [q for q in range(1, state.players + 1) if state.owed[q - 1]]
        if owing:
            out: list[Mk1Move] = []
            for q in owing:
                places = self._held(state, q)
                junk = [(c, w) for c, w in places if c not in ("shiny", "pickaxe", "armor")]
                for card, where in junk or places:
                    out.append(Discard(player=q, card=card, source=where))
            return [out]
        p = state.current
        inv = state.inventories[p - 1]
        hotbar = state.hotbars[p - 1]
        held: Counter[str] = Counter(inv)
        for s in hotbar:
            held.update(s)
        free = HOTBAR_SLOTS - self.hotbar_used(state, p)
        hungry = state.hunger[p - 1] <= CAP - FOOD_HUNGER
        has_pick = held["pickaxe"] > 0
        if state.night:
            return [[Sleep(player=p)]]  # everybody sleeping ends the night
        urgent: list[Mk1Move] = []
        main: list[Mk1Move] = []
        if hungry:
            main.append(Eat(player=p))
        if state.hunger[p - 1] <= 3:
            urgent.append(Eat(player=p))
            if "food" in inv and not self.has_in_hotbar(state, p, "food"):
                urgent.append(MoveCard(player=p, card="food", to="hotbar"))
        for i, s in enumerate(hotbar):
            if s and s[0] in GENERATORS:
                main.append(Harvest(player=p, card=s[0], slot=i + 1))
        for tool in ("pickaxe", "armor"):
            if tool in inv and not self.has_in_hotbar(state, p, tool):
                main.append(MoveCard(player=p, card=tool, to="hotbar"))
                if not free:
                    for i, s in enumerate(hotbar):
                        if s and s[0] not in ("food", "armor", "pickaxe"):
                            main.append(MoveCard(player=p, card=s[0], to="inventory", slot=i + 1))
            if not held[tool]:
                main.append(Craft(player=p, card=tool))
        main.append(Mine(player=p))
        main.extend(self._trades(state, p))
        grow: list[Mk1Move] = []
        if not has_pick:
            if held["stick"] < 2 and held["wood"] >= 2:
                grow.append(Craft(player=p, card="stick"))
            if free > 1:
                for card in sorted(GENERATORS & set(inv)):
                    grow.append(MoveCard(player=p, card=card, to="hotbar"))
        if held["food"] < 3 or (not held["armor"] and held["leather"] < 4):
            grow.append(Hunt(player=p))
        rest: list[Mk1Move] = [Sleep(player=p)]
        if self.inventory_slots(state, p) >= INVENTORY_SLOTS - 1:
            keep = {"shiny", "pickaxe", "food", "armor"} | (set() if has_pick else {"wood", "stick"})
            for card in sorted(set(inv) - keep):
                rest.append(Discard(player=p, card=card))
        if state.weather is None:
            for card in sorted(WEATHER & set(inv)):
                rest.append(Activate(player=p, card=card))
        return [urgent, main, grow, rest]

    def candidate_moves(self, state: Mk1State) -> Iterator[Mk1Move]:
        """Every kind of action of whoever must act now, with natural parameters (legal or
        not: `legal_moves` keeps the ones that raise no warning)."""
        if state.over:
            return
        owing = [p for p in range(1, state.players + 1) if state.owed[p - 1]]
        if owing:
            for p in owing:
                for card, where in self._held(state, p):
                    if card != "shiny" or len(self._held(state, p)) == 1:
                        yield Discard(player=p, card=card, source=where)
            return
        p = state.current
        yield Sleep(player=p)
        inv = state.inventories[p - 1]
        hotbar = state.hotbars[p - 1]
        inv_room = self.inventory_slots(state, p) < INVENTORY_SLOTS
        slots = [list(s) for s in hotbar]
        for card in sorted(set(inv)):
            if _stack_slot(slots, card) is None:
                continue
            if card == "furnace" and not self._can_pay(state, p, FURNACE_COST):
                continue
            if card == "shelter" and not any(self._can_pay(state, p, c) for c in SHELTER_COSTS):
                continue
            if card in WEATHER:
                continue
            yield MoveCard(player=p, card=card, to="hotbar")
        for i, s in enumerate(hotbar):
            if s and (inv_room or s[0] in inv):
                if s[0] in GENERATORS and state.ages[p - 1][i] > 0:
                    continue
                yield MoveCard(player=p, card=s[0], to="inventory", slot=i + 1)
        if state.hunger[p - 1] <= CAP - FOOD_HUNGER and self.has_in_hotbar(state, p, "food"):
            yield Eat(player=p)
        for i, s in enumerate(hotbar):
            if s and s[0] in GENERATORS and state.ages[p - 1][i] >= self.ready_age(state, p, s[0]):
                yield Harvest(player=p, card=s[0], slot=i + 1)
        if state.weather is None:
            for card in sorted(WEATHER & set(inv)):
                yield Activate(player=p, card=card)
        for item, recipe in RECIPES.items():
            if state.piles[PILES.index(self.pile_of(item))] and self._can_pay(state, p, recipe):
                if item != "stick" and self.holds(state, p, item):
                    continue
                yield Craft(player=p, card=item)
        mining = state.piles[PILES.index("mining")]
        if mining and self.has_in_hotbar(state, p, "pickaxe") and not self.banned(state, p, "mine"):
            yield Mine(player=p)
        if state.piles[PILES.index("hunting")] and not self.banned(state, p, "hunt"):
            yield Hunt(player=p)
        if state.piles[PILES.index("effects-weather")] and inv_room:
            yield Draw(player=p)
        for card in sorted(set(inv) - {"shiny"}):
            yield Discard(player=p, card=card)
        for card, where in self._held(state, p):
            if card != "shiny":
                yield Incinerate(player=p, card=card, source=where)
        if not self.banned(state, p, "trade"):
            yield from self._trades(state, p)

    def _held(self, state: Mk1State, p: int) -> list[tuple[str, str]]:
        out = [(c, "inventory") for c in sorted(set(state.inventories[p - 1]))]
        out += [(c, "hotbar") for c in sorted({c for s in state.hotbars[p - 1] for c in s})]
        return out

    def _trades(self, state: Mk1State, p: int) -> Iterator[Mk1Move]:
        """Trades that gather shinies: one shiny from the player who holds fewer, for one
        card of the other's choice."""
        mine = self.shinies(state, p)
        for q in range(1, state.players + 1):
            if q == p or self.banned(state, q, "trade"):
                continue
            theirs = self.shinies(state, q)
            if theirs and mine >= theirs:
                for card in sorted(set(state.inventories[p - 1]) - {"shiny"})[:2]:
                    yield Trade(player=p, partner=q, give=(card,), take=("shiny",))
            elif mine and theirs > mine:
                for card in sorted(set(state.inventories[q - 1]) - {"shiny"})[:2]:
                    yield Trade(player=p, partner=q, give=("shiny",), take=(card,))


def _weather_turns_left(state: Mk1State) -> int:
    if state.weather is None:
        return 0
    return min(WEATHER_TURNS, state.weather_left)


def _stack_slot(slots: Sequence[Sequence[str]], card: str) -> int | None:
    """Where `card` goes in a hotbar: onto a stack of the same material, else a free slot."""
    if card in MATERIALS:
        for i, s in enumerate(slots):
            if s and s[0] == card:
                return i
    for i, s in enumerate(slots):
        if not s:
            return i
    return None


def _seat(text: str, players: int, zone: str) -> int:
    if not text.isdigit() or not 1 <= int(text) <= players:
        raise MoveFormatError(f"zone {zone!r}: no player {text} in a {players}-player game")
    return int(text)


def _slot_zone(zone: str, players: int) -> tuple[int, int]:
    parts = zone.split("-")
    if len(parts) != 3 or parts[0] != "hotbar" or not parts[2].isdigit():
        raise SetupError(f"{zone!r} is not a hotbar slot (hotbar-N-1..{HOTBAR_SLOTS})")
    p = int(parts[1]) if parts[1].isdigit() else 0
    i = int(parts[2])
    if not 1 <= p <= players or not 1 <= i <= HOTBAR_SLOTS:
        raise SetupError(f"{zone!r} is not a hotbar slot of a {players}-player game")
    return p, i - 1


def _slot_index(slot: int | str | None, player: int, players: int) -> int | None:
    """A move's `slot` (1-3, or a zone id `hotbar-N-I` of the player) as a 0-based index."""
    if slot is None:
        return None
    if isinstance(slot, int):
        if not 1 <= slot <= HOTBAR_SLOTS:
            raise MoveFormatError(f"field 'slot': 1-{HOTBAR_SLOTS}, got {slot}")
        return slot - 1
    if slot.isdigit():
        return _slot_index(int(slot), player, players)
    try:
        p, i = _slot_zone(slot, players)
    except SetupError as exc:
        raise MoveFormatError(f"field 'slot': {exc}") from None
    if p != player:
        raise MoveFormatError(f"field 'slot': {slot} is not player {player}'s hotbar")
    return i


_HANDLERS: dict[type[Mk1Move], Any] = {
    Sleep: MinecraftMk1._sleep,
    MoveCard: MinecraftMk1._move,
    Incinerate: MinecraftMk1._incinerate,
    Eat: MinecraftMk1._eat,
    Harvest: MinecraftMk1._harvest,
    Activate: MinecraftMk1._activate,
    Craft: MinecraftMk1._craft,
    Mine: MinecraftMk1._mine,
    Hunt: MinecraftMk1._hunt,
    Draw: MinecraftMk1._draw,
    Discard: MinecraftMk1._discard,
    Trade: MinecraftMk1._trade,
}

RULESET = MinecraftMk1()
register(RULESET)
