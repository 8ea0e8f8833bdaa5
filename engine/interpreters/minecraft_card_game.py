"""How the Mattel game looks on camera, and which moves can explain what changed.

Appearance (what a state says each zone shows, as catalog faces): a resource pile shows its top
card's face (`resource-back` when the top is not known) and its height, whose change the hands
tell (`by_hands`: the card under a mined top may show the same face); a craft pile shows its
top card's crafting side (`<card>/craft`); `player-N` shows every card, most recent first (as
the camera lists a spread), resources by their face, crafted cards tool side up (`<card>/tool`)
while ready and crafting side up (`<card>/craft`) once used; `reserve-N` shows the held card's
crafting side; `set-aside` its crafting side. The
discard pile shows its top card: paid and creeper-discarded resources lie face down
(`resource-back`), while a creeper or a TNT put there lies face up (it is recognisable, and the
rule sheets show them discarded openly), but the interpreter does not compare that top: which
card ends on top when several are discarded at once is not certain. A pending TNT blast's cards
lie in zone `tnt`, face up, but how the player lays them out while choosing the keep (spread,
piled, in hand) is not certain: that look never holds the mine back.

Moves proposed to the search: the ruleset's legal moves, kept only when they touch a zone the
snapshot shows differently, plus moves built from the observed difference, which the
enumerator cannot guess: a craft paid with exactly the cards that left the player's area (any
overpay, with the axes that turned to their crafting side), the cards kept from a TNT (those that
appeared in the player's area), each player's creeper discard (the card that left the area, or
the sword that turned), and `reveal` of the faces now seen on pile tops that the belief did not
know: the first or second candidate, a creeper that passed through the top on its way to the
discard pile (when the discard pile shows one), or a card seen in an area that passed through
the top between two takes from one pile. A player whose area changed while the belief has the
turn elsewhere is tried as acting out of turn; the turn ended unseen is tried too, but not a
turn given up whole when the one who just played acts again (an action too many: nothing on the
table shows a turn given up), and an end of turn is unusual (`unusual`), as is a blast kept
from with fewer cards than it offers. Creeper answers, which players give in any order, are
tried for the first player in seat order who owes one and for every other whose area lost a
card.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from itertools import combinations
from typing import Any

from engine.games.minecraft_card_game import (
    CRAFT_PILES,
    KEEP_FROM_TNT,
    RESOURCE_PILES,
    Craft,
    CreeperDiscard,
    EndTurn,
    McgMove,
    McgState,
    Mine,
    MinecraftCardGame,
    Reserve,
    TableChange,
    TntKeep,
    UseTool,
)
from engine.interpret import WEAK_RATIO, match_spread
from engine.snapshot import ExpectedZone, SeenCard, TableSnapshot, ZoneKind

BACK = "resource-back"
FACE_UP_IN_DISCARD = frozenset({"creeper", "tnt"})
REVEAL_CHOICES = 2  # candidates of a newly seen top tried as its identity
MAX_SPLIT = 9  # beyond this many cards left an area, only the whole is tried as one payment
LOOKS_KEPT = 50_000  # zone looks remembered before the store starts again (`_new_look`)
_RESOURCE_ZONES = tuple(f"resource-pile-{i}" for i in range(1, RESOURCE_PILES + 1))
_CRAFT_ZONES = tuple(f"craft-pile-{i}" for i in range(1, CRAFT_PILES + 1))
# A pile zone's place in a state: (0: resource piles, 1: craft piles; index).
_PILE_OF: dict[str, tuple[int, int]] = {
    **{z: (0, i) for i, z in enumerate(_RESOURCE_ZONES)},
    **{z: (1, i) for i, z in enumerate(_CRAFT_ZONES)},
}


class McgInterpreter:
    """The `GameInterpreter` of minecraft-card-game."""

    def __init__(self, ruleset: Any) -> None:
        if not isinstance(ruleset, MinecraftCardGame):
            raise TypeError("McgInterpreter needs the minecraft-card-game ruleset")
        self.rules = ruleset
        cat = ruleset.catalog
        self._card_of_face: dict[str, str] = {}
        for card in cat.cards.values():
            if card.kind == "craft":
                self._card_of_face[card.front] = card.id
                self._card_of_face[card.back] = card.id
            else:
                self._card_of_face[card.front] = card.id
        # What one zone looks like depends on a little of the state only (a pile's top and
        # height, an area's cards and which are used): each zone's look is made once (see
        # `_new_look`).
        self._looks: dict[tuple[Any, ...], ExpectedZone] = {}
        # Per snapshot (the one last asked about, kept so that it is the same object): how
        # each area and holder compares with it (see `_snapshot_memo`).
        self._memo_of: TableSnapshot | None = None
        self._memo: dict[tuple[Any, ...], Any] = {}

    # -- appearance -----------------------------------------------------------------------------

    def card_face(self, card: str, *, used: bool = False, in_area: bool = False) -> str:
        """The face a card shows where it lies (crafted cards in an area: tool side if ready)."""
        if self.rules.is_craft(card):
            return f"{card}/craft" if (used or not in_area) else f"{card}/tool"
        return card

    def card_of(self, face: str) -> str | None:
        """The card id a face belongs to (None for a shared back such as `resource-back`)."""
        return self._card_of_face.get(face)

    def appearance(self, state: McgState) -> dict[str, ExpectedZone]:
        # Each zone's look is found by what it depends on (`_new_look` makes it the first
        # time): the search renders thousands of states that share most zones.
        looks, new = self._looks, self._new_look
        out: dict[str, ExpectedZone] = {}
        for i, pile in enumerate(state.resource_piles):
            key: tuple[Any, ...] = ("resource", pile[0] if pile else None, len(pile))
            out[_RESOURCE_ZONES[i]] = looks.get(key) or new(key)
        for i, pile in enumerate(state.craft_piles):
            key = ("craft", pile[0] if pile else None, len(pile))
            out[_CRAFT_ZONES[i]] = looks.get(key) or new(key)
        # The discard pile's top is not compared (any face fits): cards that pass through a
        # pile top unseen (a creeper exposed by a blast, under the TNT that covers it) and the
        # order in which a table lays several discards at once leave it unsure; soft, as
        # even whether it is empty then is.
        key = ("discard", len(state.discard))
        out["discard"] = looks.get(key) or new(key)
        key = ("set-aside", state.set_aside)
        out["set-aside"] = looks.get(key) or new(key)
        for p in range(1, state.players + 1):
            key = ("area", state.areas[p - 1], state.used)
            out[f"player-{p}"] = looks.get(key) or new(key)
            key = ("reserve", state.reserves[p - 1])
            out[f"reserve-{p}"] = looks.get(key) or new(key)
        key = ("tnt", state.tnt)
        out["tnt"] = looks.get(key) or new(key)
        return out

    def _new_look(self, key: tuple[Any, ...]) -> ExpectedZone:
        """The look of one zone from what it depends on (`key`: the kind of zone, then its
        cards), made once and kept for `appearance`: looks are immutable, and equal keys make
        equal looks. The store is emptied when it grows large (a long session meets ever new
        areas)."""
        if len(self._looks) >= LOOKS_KEPT:
            self._looks.clear()
        look = self._make_look(key)
        self._looks[key] = look
        return look

    def _make_look(self, key: tuple[Any, ...]) -> ExpectedZone:
        """What `appearance` says a zone shows (see the module docstring), from `key`."""
        kind = key[0]
        if kind == "resource":
            _, top, n = key
            return ExpectedZone(
                kind=ZoneKind.PILE, faces=(BACK if top is None else top,) if n else (), count=n,
                by_hands=True,
            )
        if kind == "craft":
            _, top, n = key
            ctop: tuple[str | None, ...] = ()
            if n:
                ctop = (None if top is None else self.card_face(top),)
            return ExpectedZone(kind=ZoneKind.PILE, faces=ctop, count=n)
        if kind == "discard":
            n = key[1]
            return ExpectedZone(kind=ZoneKind.PILE, faces=(None,) if n else (), count=n, soft=True)
        if kind == "set-aside":
            aside = (self.card_face(key[1]),) if key[1] else ()
            return ExpectedZone(kind=ZoneKind.PILE, faces=aside, count=len(aside))
        if kind == "area":
            _, area, used = key
            return ExpectedZone(
                kind=ZoneKind.SPREAD,
                faces=tuple(self.card_face(c, used=c in used, in_area=True) for c in reversed(area)),
                count=len(area),
                ordered=True,
                # The resources under the latest card lie half hidden and may go unseen
                # (`InterpretConfig.hidden_penalty`); a crafted card must show, whichever
                # side is up (a tool used, flipped where it lies, is read by its face).
                covered=frozenset(i for i, c in enumerate(reversed(area)) if i and self.rules.is_resource(c)),
            )
        if kind == "reserve":
            res = key[1]
            return ExpectedZone(
                kind=ZoneKind.SPREAD, faces=tuple(self.card_face(c) for c in res), count=len(res)
            )
        tnt = key[1]
        # How a player lays out a blast's cards while choosing what to keep is not certain (a
        # spread face up, a pile with the TNT on top, cards in hand): a pending blast's look
        # scores, but never holds its mine back, and its cards but the TNT may lie under it
        # unseen (`covered`, at `hidden_penalty` each, though the belief never had them: the
        # look is soft). Counted as cards missing, a blast piled under its TNT cost the mine
        # more than a made-up second mine and keep, and the mine was read with its keep.
        faces = tuple(reversed(tnt))
        return ExpectedZone(kind=ZoneKind.SPREAD, faces=faces, count=len(tnt), soft=bool(tnt),
                            covered=frozenset(i for i, c in enumerate(faces) if c != "tnt"))

    def table_look(self, state: McgState) -> dict[str, ExpectedZone]:
        """The appearance with the discard pile's top as it lies: a creeper or a TNT face up,
        anything else face down (for rendering a state as the camera would see it)."""
        out = self.appearance(state)
        if state.discard:
            first = state.discard[0]
            out["discard"] = ExpectedZone(
                kind=ZoneKind.PILE,
                faces=(first if first in FACE_UP_IN_DISCARD else BACK,),
                count=len(state.discard),
            )
        return out

    def is_forced(self, state: McgState) -> bool:
        return bool(state.tnt or state.attacks)

    def unusual(self, state: McgState, move: McgMove) -> bool:
        """An end of turn (actions given up), a craft paid with a card to spare (the recipe
        still covered without it), and a TNT blast kept from with fewer cards than it allows.

        Players take the actions their turn allows: a turn ended early, or passed with
        nothing done, is rare, and a misread area of another player explained by every turn
        between given up made that player the active one, so that each later move of the
        rightful players was read with more turns given up. Players pay what a recipe asks:
        such a payment mostly takes in a covered card the camera did not see this time,
        which stays in the area. Players keep the two resources a blast offers: a blast
        kept from with nothing explains any change of the piles' tops with no card put
        anywhere (the whole blast goes face down to the discard pile), and was read for
        another player's plain mine whose card the camera lost in a far area."""
        if isinstance(move, EndTurn):
            return True
        if isinstance(move, TntKeep):
            keepable = sum(1 for c in state.tnt if self.rules.is_resource(c))
            return len(move.cards) < min(KEEP_FROM_TNT, keepable)
        if not isinstance(move, Craft):
            return False
        recipe = self.rules.catalog.card(move.card).attrs.get("recipe")
        return recipe is not None and self.rules.to_spare(recipe, move.pay, len(move.axes))

    def turn_of(self, state: McgState) -> int | None:
        return None

    def merged(self, state: McgState, moves: Sequence[McgMove]) -> tuple[McgMove, ...] | None:
        """A craft read in two parts: the crafter takes the card off its craft pile, lays the
        payment, then puts the card down. Read between the first part and the last, the pile
        shows its next card and the card is nowhere (in the hand): a reserve whose holder
        card is not seen, and the end of the craft then reads as a craft from the holder. A
        reserve followed at once by the same player's craft of that card from the holder
        costs two actions where the craft from the pile costs one and leaves the same table:
        players do not play it, so it is written as that craft. (A move between them, another
        player's turn included, keeps them apart.)"""
        for i in range(len(moves) - 1):
            first, then = moves[i], moves[i + 1]
            if not (isinstance(first, Reserve) and isinstance(then, Craft) and then.source == "reserve"
                    and then.player == first.player and first.card in (None, then.card)):
                continue
            craft = Craft(player=then.player, card=then.card, source=f"craft-pile-{first.pile}", pay=then.pay,
                          axes=then.axes, reveal=(*first.reveal, *then.reveal))
            return (*moves[:i], craft, *moves[i + 2:])
        return None

    # -- the observed difference of a player's area --------------------------------------------

    def _snapshot_memo(self, snapshot: TableSnapshot) -> dict[tuple[Any, ...], Any]:
        """A store for what is worked out against `snapshot` alone (how an area compares with
        it): the search asks the same of every state that shares the area. It is emptied when
        another snapshot is asked about; the one kept is held, so it cannot be mistaken for a
        new object at the same address."""
        if self._memo_of is not snapshot:
            self._memo_of = snapshot
            self._memo = {}
        return self._memo

    def _area_diff(
        self, state: McgState, snapshot: TableSnapshot, player: int
    ) -> tuple[tuple[str, ...], tuple[SeenCard, ...]] | None:
        """(cards of the area no seen card fits, seen cards no area card fits); None if the
        area is not settled."""
        zone = f"player-{player}"
        if zone not in snapshot.settled:
            return None
        area = state.areas[player - 1]
        memo = self._snapshot_memo(snapshot)
        key = ("area", player, area, state.used)
        found: tuple[tuple[str, ...], tuple[SeenCard, ...]] | None = memo.get(key)
        if found is None:
            faces = [self.card_face(c, used=c in state.used, in_area=True) for c in area]
            seen = snapshot.cards(zone)
            m = match_spread(faces, seen)
            found = tuple(area[i] for i in m.missing), tuple(seen[j] for j in m.extra)
            memo[key] = found
        return found

    def _reserve_extra(
        self, state: McgState, snapshot: TableSnapshot, player: int
    ) -> tuple[SeenCard, ...]:
        """Seen cards of a settled holder that no card the state holds there fits."""
        reserve = state.reserves[player - 1]
        memo = self._snapshot_memo(snapshot)
        key = ("reserve", player, reserve)
        found: tuple[SeenCard, ...] | None = memo.get(key)
        if found is None:
            faces = [self.card_face(c) for c in reserve]
            seen = snapshot.cards(f"reserve-{player}")
            found = tuple(seen[j] for j in match_spread(faces, seen).extra)
            memo[key] = found
        return found

    def _gained(
        self, state: McgState, snapshot: TableSnapshot, players: Iterable[int] | None = None
    ) -> list[str]:
        """Cards seen in the areas or holders of `players` (default: all) that the state does
        not place there: the card between two takes from one pile went to one of them."""
        out: list[str] = []
        extra: list[SeenCard] = []
        for player in players or range(1, state.players + 1):
            diff = self._area_diff(state, snapshot, player)
            extra += list(diff[1]) if diff is not None else []
            if f"reserve-{player}" in snapshot.settled:
                extra += self._reserve_extra(state, snapshot, player)
        for card in extra:
            for cid in self._seen_cards(card):
                if cid not in out:
                    out.append(cid)
        return out

    def _seen_cards(self, card: SeenCard, limit: int = REVEAL_CHOICES) -> list[str]:
        out = []
        for c in card.candidates[:limit]:
            if c.score < WEAK_RATIO * card.best.score:
                break
            cid = self.card_of(c.face)
            if cid is not None and cid not in out:
                out.append(cid)
        return out

    def _reveals(
        self,
        state: McgState,
        snapshot: TableSnapshot,
        zones: Iterable[str],
        between: Iterable[str] = (),
    ) -> list[tuple[tuple[str, str], ...]]:
        """Alternative `reveal` tuples for piles whose next card (under the top that leaves) is
        not known: each names the identity seen on the new top (first or second candidate),
        or one of `between` (cards seen elsewhere that may have passed over the top when the
        pile was taken from twice).

        Of the state, the answer depends only on whether a creeper is unseen and on which of
        `zones` have their next card known: it is kept per snapshot under those (see
        `_snapshot_memo`). The list returned is shared: not to be changed."""
        zones = tuple(zones)
        between = tuple(between)
        if any(z not in _PILE_OF for z in zones):
            return self._new_reveals(state, snapshot, zones, between)  # not a pile: as asked
        creeper_unseen = "creeper" in state.unseen
        piles = state.resource_piles, state.craft_piles
        known = tuple(
            len(pile) > 1 and pile[1] is not None
            for pile in (piles[_PILE_OF[z][0]][_PILE_OF[z][1]] for z in zones)
        )
        memo = self._snapshot_memo(snapshot)
        key = ("reveals", zones, between, creeper_unseen, known)
        found: list[tuple[tuple[str, str], ...]] | None = memo.get(key)
        if found is None:
            found = self._new_reveals(state, snapshot, zones, between)
            memo[key] = found
        return found

    def _new_reveals(
        self,
        state: McgState,
        snapshot: TableSnapshot,
        zones: Iterable[str],
        between: Iterable[str] = (),
    ) -> list[tuple[tuple[str, str], ...]]:
        """`_reveals` worked out (see there)."""
        options: list[list[tuple[tuple[str, str], ...]]] = []
        creeper_between = "creeper" in state.unseen and self._discard_shows(snapshot, "creeper")
        between = list(between)
        for zone in zones:
            if zone not in snapshot.settled:
                continue
            kind, index = zone.rsplit("-pile-", 1)
            pile = (
                state.resource_piles[int(index) - 1]
                if kind == "resource"
                else state.craft_piles[int(index) - 1]
            )
            if len(pile) > 1 and pile[1] is not None:
                continue  # the next card is known: nothing to reveal
            top = snapshot.cards(zone)
            ids = [
                c for c in (self._seen_cards(top[0]) if top else [])
                if self.rules.is_craft(c) == (kind == "craft")
            ]
            alts: list[tuple[tuple[str, str], ...]] = [((zone, c),) for c in ids]
            alts += [
                ((zone, c),) for c in between
                if c not in ids and self.rules.is_craft(c) == (kind == "craft")
            ]
            if not alts:
                continue
            if creeper_between and ids and kind == "resource" and ids[0] != "creeper":
                # A creeper turned up and went to the discard pile, then the card seen now.
                alts.append(((zone, "creeper"), (zone, ids[0])))
            options.append(alts)
        if not options:
            return [()]
        # First choices together, then each zone's other choices alone.
        out: list[tuple[tuple[str, str], ...]] = [sum((o[0] for o in options), ())]
        for k, o in enumerate(options):
            for alt in o[1:]:
                out.append(
                    sum((alt if i == k else options[i][0] for i in range(len(options))), ())
                )
        return out

    def _discard_shows(self, snapshot: TableSnapshot, face: str) -> bool:
        """Whether the discard pile's seen top may be `face` (first or second candidate)."""
        if "discard" not in snapshot.settled or not snapshot.cards("discard"):
            return False
        top = snapshot.cards("discard")[0]
        return any(c.face == face for c in top.candidates[:REVEAL_CHOICES])

    # -- proposals ------------------------------------------------------------------------------

    def proposals(
        self,
        state: McgState,
        snapshot: TableSnapshot,
        unexplained: frozenset[str],
        appearance: Mapping[str, ExpectedZone],
    ) -> Iterator[McgMove]:
        if state.over:
            return
        if state.tnt:
            yield from self._tnt_proposals(state, snapshot)
            return
        if state.attacks:
            yield from self._creeper_proposals(state, snapshot)
            return
        p, _ = self.rules.active_player(state)
        player_zone = f"player-{p}"
        others = {
            int(z.rsplit("-", 1)[1]) for z in unexplained if z.startswith(("player-", "reserve-"))
        } - {p}
        # Another player acted: the turn may have been ended unseen. After an action, early; a
        # turn given up whole only when someone other than the one who just played acted: that
        # one acting again took an action too many (tried below, with the warning a referee
        # calls), since nothing on the table shows a turn given up.
        ended_unseen = bool(others) and (
            state.actions > 0 if p == state.current else bool(others - {state.current})
        )
        all_piles = list(_RESOURCE_ZONES)
        # What the areas gained depends on the state and the snapshot only: worked out once
        # for every move that asks (the active player's, everyone's), when first asked.
        gained_p: list[str] | None = None
        gained_all: list[str] | None = None
        for move in self.rules.legal_moves(state):
            if isinstance(move, Mine):
                zone = f"resource-pile-{move.pile}"
                pile = state.resource_piles[move.pile - 1]
                # A TNT takes the top of every pile: its own pile may look as it was (a second
                # TNT under the first) while the others changed.
                zones = all_piles if pile and pile[0] == "tnt" else [zone]
                if not (
                    any(z in unexplained for z in zones)
                    or player_zone in unexplained
                    or zone not in snapshot.settled
                    or "discard" in unexplained
                ):
                    continue
                # Mined twice in a turn: the card between was seen only in the area it went
                # to (a craft pile's card between may go to another player's area instead).
                if gained_p is None:
                    gained_p = self._gained(state, snapshot, [p])
                for reveal in self._reveals(state, snapshot, zones, gained_p):
                    yield Mine(player=p, pile=move.pile, reveal=reveal)
            elif isinstance(move, Craft):
                if player_zone in unexplained or move.source in unexplained:
                    yield from self._with_craft_reveal(state, snapshot, move)
            elif isinstance(move, Reserve):
                zone = f"craft-pile-{move.pile}"
                if f"reserve-{p}" in unexplained or zone in unexplained:
                    if gained_all is None:
                        gained_all = self._gained(state, snapshot)
                    for reveal in self._reveals(state, snapshot, [zone], gained_all):
                        yield Reserve(player=p, pile=move.pile, reveal=reveal)
            elif isinstance(move, UseTool):
                hoe = self.rules.tool(move.card) == "hoe"
                # A hoe shows on every pile even when its own turn is misread.
                if player_zone not in unexplained and not (
                    hoe and any(z in unexplained for z in all_piles)
                ):
                    continue
                if hoe:
                    if gained_p is None:
                        gained_p = self._gained(state, snapshot, [p])
                    for reveal in self._reveals(state, snapshot, all_piles, gained_p):
                        yield UseTool(player=p, card=move.card, reveal=reveal)
                else:
                    yield move
            elif isinstance(move, EndTurn) and ended_unseen:
                yield move
        if state.actions < state.allowed or p != state.current:
            yield from self._built_crafts(state, snapshot, p)
        # Another player's area changed: that player may have acted when the belief has the
        # turn elsewhere (a turn passed unseen); tried at the cost of its out-of-turn warning.
        for q in range(1, state.players + 1):
            if q == p or f"player-{q}" not in unexplained:
                continue
            for i in range(1, RESOURCE_PILES + 1):
                zone = f"resource-pile-{i}"
                if zone in unexplained and state.resource_piles[i - 1]:
                    for reveal in self._reveals(state, snapshot, [zone]):
                        yield Mine(player=q, pile=i, reveal=reveal)
            yield from self._built_crafts(state, snapshot, q)

    def _with_craft_reveal(
        self, state: McgState, snapshot: TableSnapshot, move: Craft
    ) -> Iterator[McgMove]:
        if move.source.startswith("craft-pile-"):
            between = self._gained(state, snapshot)
            for reveal in self._reveals(state, snapshot, [move.source], between):
                yield Craft(
                    player=move.player,
                    card=move.card,
                    source=move.source,
                    pay=move.pay,
                    axes=move.axes,
                    reveal=reveal,
                )
        else:
            yield move

    def _built_crafts(self, state: McgState, snapshot: TableSnapshot, p: int) -> Iterator[McgMove]:
        """Crafts paid with exactly what left the area (overpay and axes included)."""
        diff = self._area_diff(state, snapshot, p)
        if diff is None:
            return
        lost, gained = diff
        pay = tuple(sorted(c for c in lost if self.rules.is_resource(c)))
        axes = tuple(
            sorted(
                c for c in state.areas[p - 1]
                if self.rules.is_craft(c)
                and self.rules.tool(c) == "axe"
                and c not in state.used
                and c in lost
            )
        )
        if not pay and not axes:
            return
        sources: dict[str, str] = {}
        for i, pile in enumerate(state.craft_piles):
            if pile and pile[0] is not None:
                sources[pile[0]] = f"craft-pile-{i + 1}"
        for c in state.reserves[p - 1]:
            sources.setdefault(c, "reserve")
        tried: set[str] = set()
        for card in gained:
            for cid in self._seen_cards(card):
                if cid in tried or cid not in sources or not self.rules.is_craft(cid):
                    continue
                tried.add(cid)
                for pay_part, axes_part in self._payments(cid, pay, axes):
                    yield from self._with_craft_reveal(
                        state,
                        snapshot,
                        Craft(
                            player=p, card=cid, source=sources[cid], pay=pay_part, axes=axes_part
                        ),
                    )

    def _payments(
        self, card: str, pay: tuple[str, ...], axes: tuple[str, ...]
    ) -> list[tuple[tuple[str, ...], tuple[str, ...]]]:
        """Ways the cards that left an area may have paid for `card`: everything, and each
        part that covers the recipe and has no card to spare (several crafts in one turn
        share what left)."""
        recipe = self.rules.catalog.card(card).attrs["recipe"]
        out = [(pay, axes)]
        if len(pay) + len(axes) > MAX_SPLIT:
            return out
        seen = {(pay, axes)}
        items = [("pay", c) for c in pay] + [("axe", c) for c in axes]
        for n in range(1, len(items) + 1):
            for combo in combinations(items, n):
                part = tuple(c for k, c in combo if k == "pay")
                used = tuple(c for k, c in combo if k == "axe")
                key = (part, used)
                if key in seen or self.rules.payment_problem(recipe, part, len(used)):
                    continue
                if self.rules.to_spare(recipe, part, len(used)):
                    continue  # a card to spare: not minimal
                seen.add(key)
                out.append(key)
        return out

    def _tnt_proposals(self, state: McgState, snapshot: TableSnapshot) -> Iterator[McgMove]:
        p = state.tnt_player
        diff = self._area_diff(state, snapshot, p)
        if diff is not None:
            pool = Counter(c for c in state.tnt if self.rules.is_resource(c))
            gained: list[str] = []
            for card in diff[1]:
                for cid in self._seen_cards(card):
                    if pool[cid] > 0:
                        pool[cid] -= 1
                        gained.append(cid)
                        break
            # Cards mined in the same turn also appear: try every choice of two, and all.
            choices = {tuple(sorted(gained))}
            choices.update(combinations(sorted(gained), min(KEEP_FROM_TNT, len(gained))))
            for kept in sorted(choices):
                yield TntKeep(player=p, cards=kept)
            # A kept card may leave again in the same read: paid for a craft, or discarded to
            # a creeper that attacks as well. The other legal choices follow.
            for move in self.rules.legal_moves(state):
                if isinstance(move, TntKeep) and tuple(sorted(move.cards)) in choices:
                    continue
                yield move
            return
        yield from self.rules.legal_moves(state)

    def _creeper_proposals(self, state: McgState, snapshot: TableSnapshot) -> Iterator[McgMove]:
        zones = [f"resource-pile-{i + 1}" for i in state.attacks]
        # The last answer settles the attack: what turns up then is seen (maybe a second
        # creeper that attacks in turn, then the card under it).
        reveals = self._reveals(state, snapshot, zones, self._gained(state, snapshot))
        # The table does not show who answered first, and players answer in any order: the
        # first player in seat order who still owes an answer is tried, and every other one
        # whose area shows a card gone (or a sword turned). Players whose areas show nothing
        # new are not tried, so the search does not spend itself on orders.
        first: int | None = None
        for move in self.rules.legal_moves(state):
            if not isinstance(move, CreeperDiscard):
                continue
            if first is None:
                first = move.player
            diff = self._area_diff(state, snapshot, move.player)
            if move.player != first and (diff is None or not diff[0]):
                continue
            if diff is not None:
                lost = set(diff[0])
                if move.card is not None and move.card not in lost:
                    continue
                if move.sword is not None and move.sword not in lost:
                    continue
            for reveal in reveals:
                yield CreeperDiscard(
                    player=move.player, card=move.card, sword=move.sword, reveal=reveal
                )

    # -- corrections ----------------------------------------------------------------------------

    def corrections(
        self, state: McgState, snapshot: TableSnapshot, zones: Iterable[str]
    ) -> tuple[McgMove, ...]:
        """`table-change` moves for the zones it can set from what is seen (piles, areas,
        holders). The discard pile, the set-aside card and a TNT blast are left as believed:
        their faces do not tell the cards."""
        out: list[McgMove] = []
        for zone in zones:
            seen = snapshot.cards(zone)
            ids = [self.card_of(c.best.face) for c in seen]
            if zone.startswith(("resource-pile-", "craft-pile-")):
                kind, index = zone.rsplit("-pile-", 1)
                piles = state.resource_piles if kind == "resource" else state.craft_piles
                below = [c for c in piles[int(index) - 1][1:] if c is not None]
                top = [c for c in ids[:1] if c is not None]
                out.append(
                    TableChange(player=state.current, zone=zone, cards=(*top, *below))
                )
            elif zone.startswith(("player-", "reserve-")):
                out.append(
                    TableChange(
                        player=state.current,
                        zone=zone,
                        cards=tuple(c for c in ids if c is not None),
                    )
                )
        return tuple(out)

