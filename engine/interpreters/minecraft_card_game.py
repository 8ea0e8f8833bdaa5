"""How the Mattel game looks on camera, and which moves can explain what changed.

Appearance (what a state says each zone shows, as catalog faces): a resource pile shows its top
card's face (`resource-back` when the top is not known) and its height; a craft pile shows its
top card's crafting side (`<card>/craft`); `player-N` shows every card, resources by their face,
crafted cards tool side up (`<card>/tool`) while ready and crafting side up (`<card>/craft`) once
used; `reserve-N` shows the held card's crafting side; `set-aside` its crafting side. The
discard pile shows its top card: paid and creeper-discarded resources lie face down
(`resource-back`), while a creeper or a TNT put there lies face up (it is recognisable, and the
rule sheets show them discarded openly). A pending TNT blast lies face up in zone `tnt`.

Moves proposed to the search: the ruleset's legal moves, kept only when they touch a zone the
snapshot shows differently, plus moves built from the observed difference, which the
enumerator cannot guess: a craft paid with exactly the cards that left the player's area (any
overpay, with the axes that turned to their crafting side), the cards kept from a TNT (those that
appeared in the player's area), each player's creeper discard (the card that left the area, or
the sword that turned), and `reveal` of the faces now seen on pile tops that the belief did not
know.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from itertools import combinations
from typing import Any

from engine.games.minecraft_card_game import (
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
from engine.interpret import match_spread
from engine.snapshot import ExpectedZone, SeenCard, TableSnapshot, ZoneKind

BACK = "resource-back"
FACE_UP_IN_DISCARD = frozenset({"creeper", "tnt"})
REVEAL_CHOICES = 2  # candidates of a newly seen top tried as its identity
MAX_SPLIT = 9  # beyond this many cards left an area, only the whole is tried as one payment


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
        out: dict[str, ExpectedZone] = {}
        for i, pile in enumerate(state.resource_piles):
            top: tuple[str | None, ...] = ()
            if pile:
                top = (BACK if pile[0] is None else pile[0],)
            out[f"resource-pile-{i + 1}"] = ExpectedZone(
                kind=ZoneKind.PILE, faces=top, count=len(pile)
            )
        for i, pile in enumerate(state.craft_piles):
            ctop: tuple[str | None, ...] = ()
            if pile:
                ctop = (None if pile[0] is None else self.card_face(pile[0]),)
            out[f"craft-pile-{i + 1}"] = ExpectedZone(
                kind=ZoneKind.PILE, faces=ctop, count=len(pile)
            )
        dtop: tuple[str | None, ...] = ()
        if state.discard:
            first = state.discard[0]
            dtop = (first if first in FACE_UP_IN_DISCARD else BACK,)
        out["discard"] = ExpectedZone(kind=ZoneKind.PILE, faces=dtop, count=len(state.discard))
        aside = (self.card_face(state.set_aside),) if state.set_aside else ()
        out["set-aside"] = ExpectedZone(kind=ZoneKind.PILE, faces=aside, count=len(aside))
        for p in range(1, state.players + 1):
            area = state.areas[p - 1]
            out[f"player-{p}"] = ExpectedZone(
                kind=ZoneKind.SPREAD,
                faces=tuple(
                    self.card_face(c, used=c in state.used, in_area=True) for c in area
                ),
                count=len(area),
            )
            res = state.reserves[p - 1]
            out[f"reserve-{p}"] = ExpectedZone(
                kind=ZoneKind.SPREAD, faces=tuple(self.card_face(c) for c in res), count=len(res)
            )
        out["tnt"] = ExpectedZone(kind=ZoneKind.SPREAD, faces=tuple(state.tnt), count=len(state.tnt))
        return out

    def is_forced(self, state: McgState) -> bool:
        return bool(state.tnt or state.attacks)

    # -- the observed difference of a player's area --------------------------------------------

    def _area_diff(
        self, state: McgState, snapshot: TableSnapshot, player: int
    ) -> tuple[list[str], list[SeenCard]] | None:
        """(cards of the area no seen card fits, seen cards no area card fits); None if the
        area is not settled."""
        zone = f"player-{player}"
        if zone not in snapshot.settled:
            return None
        area = state.areas[player - 1]
        faces = [self.card_face(c, used=c in state.used, in_area=True) for c in area]
        seen = snapshot.cards(zone)
        m = match_spread(faces, seen)
        return [area[i] for i in m.missing], [seen[j] for j in m.extra]

    def _seen_cards(self, card: SeenCard, limit: int = REVEAL_CHOICES) -> list[str]:
        out = []
        for c in card.candidates[:limit]:
            cid = self.card_of(c.face)
            if cid is not None and cid not in out:
                out.append(cid)
        return out

    def _reveals(
        self, state: McgState, snapshot: TableSnapshot, zones: Iterable[str]
    ) -> list[tuple[tuple[str, str], ...]]:
        """Alternative `reveal` tuples for piles whose next card (under the top that leaves) is
        not known: each names the identity seen on the new top (first or second candidate)."""
        options: list[list[tuple[str, str]]] = []
        for zone in zones:
            if zone not in snapshot.settled or not snapshot.cards(zone):
                continue
            kind, index = zone.rsplit("-pile-", 1)
            pile = (
                state.resource_piles[int(index) - 1]
                if kind == "resource"
                else state.craft_piles[int(index) - 1]
            )
            if len(pile) > 1 and pile[1] is not None:
                continue  # the next card is known: nothing to reveal
            ids = [
                c for c in self._seen_cards(snapshot.cards(zone)[0])
                if self.rules.is_craft(c) == (kind == "craft")
            ]
            if ids:
                options.append([(zone, c) for c in ids])
        if not options:
            return [()]
        # First choices together, then each zone's second choice alone.
        out: list[tuple[tuple[str, str], ...]] = [tuple(o[0] for o in options)]
        for k, o in enumerate(options):
            for alt in o[1:]:
                out.append(tuple(alt if i == k else options[i][0] for i in range(len(options))))
        return out

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
        others = any(
            z.rsplit("-", 1)[1] != str(p) for z in unexplained if z.startswith(("player-", "reserve-"))
        )
        all_piles = [f"resource-pile-{i}" for i in range(1, RESOURCE_PILES + 1)]
        for move in self.rules.legal_moves(state):
            if isinstance(move, Mine):
                zone = f"resource-pile-{move.pile}"
                if not (
                    zone in unexplained
                    or player_zone in unexplained
                    or zone not in snapshot.settled
                    or "discard" in unexplained
                ):
                    continue
                pile = state.resource_piles[move.pile - 1]
                zones = all_piles if pile and pile[0] == "tnt" else [zone]
                for reveal in self._reveals(state, snapshot, zones):
                    yield Mine(player=p, pile=move.pile, reveal=reveal)
            elif isinstance(move, Craft):
                if player_zone in unexplained or move.source in unexplained:
                    yield from self._with_craft_reveal(state, snapshot, move)
            elif isinstance(move, Reserve):
                zone = f"craft-pile-{move.pile}"
                if f"reserve-{p}" in unexplained or zone in unexplained:
                    for reveal in self._reveals(state, snapshot, [zone]):
                        yield Reserve(player=p, pile=move.pile, reveal=reveal)
            elif isinstance(move, UseTool):
                if player_zone not in unexplained:
                    continue
                if self.rules.tool(move.card) == "hoe":
                    for reveal in self._reveals(state, snapshot, all_piles):
                        yield UseTool(player=p, card=move.card, reveal=reveal)
                else:
                    yield move
            elif isinstance(move, EndTurn) and others:
                yield move
        if state.actions < state.allowed or p != state.current:
            yield from self._built_crafts(state, snapshot, p)

    def _with_craft_reveal(
        self, state: McgState, snapshot: TableSnapshot, move: Craft
    ) -> Iterator[McgMove]:
        if move.source.startswith("craft-pile-"):
            for reveal in self._reveals(state, snapshot, [move.source]):
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
                if any(
                    self.rules.payment_problem(
                        recipe,
                        tuple(c for k, c in combo[:i] + combo[i + 1 :] if k == "pay"),
                        len([c for k, c in combo[:i] + combo[i + 1 :] if k == "axe"]),
                    )
                    is None
                    for i in range(n)
                ):
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
            if gained:
                return
        yield from self.rules.legal_moves(state)

    def _creeper_proposals(self, state: McgState, snapshot: TableSnapshot) -> Iterator[McgMove]:
        zones = [f"resource-pile-{i + 1}" for i in state.attacks]
        reveal = self._reveals(state, snapshot, zones)[0]
        for move in self.rules.legal_moves(state):
            if not isinstance(move, CreeperDiscard):
                continue
            diff = self._area_diff(state, snapshot, move.player)
            if diff is not None:
                lost = set(diff[0])
                if move.card is not None and move.card not in lost:
                    continue
                if move.sword is not None and move.sword not in lost:
                    continue
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

