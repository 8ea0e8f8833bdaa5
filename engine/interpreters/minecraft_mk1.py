"""How mk. I looks on camera, and which moves can explain what changed.

Appearance (what a state says each zone shows, as catalog faces): every draw pile lies face
down, all its cards show the same back (`back.<pile>`), so a pile is a counter of its height
(compared exactly when the snapshot gives one), and a hand that reached into it tells that its
cards changed (`ExpectedZone.signature`: a card put under it and another taken off); a hotbar
slot `hotbar-N-I` shows the card on top of it (card ids are their front faces) and the height
of a material stack; the hotbar area `hotbar-N` itself holds no card (a card between two slots
is unexplained); the weather slot shows the active weather card. Token areas (`health-N`,
`hunger-N`, `daylight`) and the die are counters: the snapshot carries their numbers in
`TableSnapshot.counts` (the number of tokens; the die's face) and they must match exactly.
Inventories are hands: the camera never sees them.

Moves proposed to the search are those of the active player (or the rain discards owed),
built from what the camera can tell: every kind of action from the ruleset's candidates,
cards that appeared in a hotbar slot moved there from the hand (the card is the face seen,
even when the hand held it unseen; a material as the whole stack the hand most likely holds,
unseen cards more likely it than not included, first: the camera sees only a stack's top), a
weather card seen in the weather slot, effects played with the materials that left the
hotbar, a stack's height set right when the slot shows it was wrong, day set when the
daylight tokens show it came though the belief has a player awake (a sleep read as another
unseen move), and, for every move, the die values the snapshot implies: the face shown is the
last roll of the move; at night a hit or a miss before it is tried (and the armor re-roll),
and the health counter decides.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import replace
from typing import Any

from engine.games.minecraft_mk1 import (
    DAYLIGHT,
    GENERATORS,
    HOTBAR_SLOTS,
    MATERIALS,
    PILES,
    WEATHER,
    Activate,
    Discard,
    Harvest,
    MinecraftMk1,
    Mk1Move,
    Mk1State,
    MoveCard,
    Sleep,
    TableChange,
)
from engine.snapshot import ExpectedZone, SeenCard, TableSnapshot, ZoneKind

COUNTER_ZONES = ("daylight", "die")
HIT, MISS = 1, 6  # a night roll that hurts, one that does not


class Mk1Interpreter:
    """The `GameInterpreter` of minecraft-mk1."""

    def __init__(self, ruleset: Any) -> None:
        if not isinstance(ruleset, MinecraftMk1):
            raise TypeError("Mk1Interpreter needs the minecraft-mk1 ruleset")
        self.rules = ruleset
        cat = ruleset.catalog
        self._card_of_face = {card.front: card.id for card in cat.cards.values()}

    # -- appearance -----------------------------------------------------------------------------

    def card_of(self, face: str) -> str | None:
        """The card id a face belongs to (None for a pile back)."""
        return self._card_of_face.get(face)

    def appearance(self, state: Mk1State) -> dict[str, ExpectedZone]:
        out: dict[str, ExpectedZone] = {}
        for name, pile in zip(PILES, state.piles, strict=True):
            # Every card of a pile shows the same back: only its height tells anything, and
            # the hands (a card put back under it and another taken off leave the height).
            out[name] = ExpectedZone(
                kind=ZoneKind.COUNTER, faces=(), count=len(pile), signature=hash(pile)
            )
        weather = (state.weather,) if state.weather else ()
        out["weather"] = ExpectedZone(kind=ZoneKind.SPREAD, faces=weather, count=len(weather))
        out["daylight"] = ExpectedZone(kind=ZoneKind.COUNTER, faces=(), count=state.daylight)
        out["die"] = ExpectedZone(kind=ZoneKind.COUNTER, faces=(), count=state.die)
        for p in range(1, state.players + 1):
            out[f"hotbar-{p}"] = ExpectedZone(kind=ZoneKind.SPREAD, faces=(), count=0)
            for i, stack in enumerate(state.hotbars[p - 1]):
                out[f"hotbar-{p}-{i + 1}"] = ExpectedZone(
                    kind=ZoneKind.PILE, faces=stack[:1], count=len(stack)
                )
            out[f"health-{p}"] = ExpectedZone(
                kind=ZoneKind.COUNTER, faces=(), count=state.health[p - 1]
            )
            out[f"hunger-{p}"] = ExpectedZone(
                kind=ZoneKind.COUNTER, faces=(), count=state.hunger[p - 1]
            )
        return out

    def is_forced(self, state: Mk1State) -> bool:
        return any(state.owed)

    def unusual(self, state: Mk1State, move: Mk1Move) -> bool:
        return False

    def turn_of(self, state: Mk1State) -> int | None:
        return None

    def merged(self, state: Mk1State, moves: Sequence[Any]) -> tuple[Any, ...] | None:
        """No move of this game is read as two others when seen half done."""
        return None

    # -- proposals ------------------------------------------------------------------------------

    def _seen_card(self, card: SeenCard) -> str | None:
        return self.card_of(card.best.face)

    def _slot_gains(
        self, state: Mk1State, snapshot: TableSnapshot, p: int
    ) -> list[tuple[str, int, int]]:
        """(card, slot, how many more) for each hotbar slot of `p` that shows more of a card
        than the state has there."""
        out = []
        for i, stack in enumerate(state.hotbars[p - 1]):
            zone = f"hotbar-{p}-{i + 1}"
            if zone not in snapshot.settled or not snapshot.cards(zone):
                continue
            card = self._seen_card(snapshot.cards(zone)[0])
            if card is None:
                continue
            seen_n = snapshot.counts.get(zone, 1)
            have = len(stack) if stack and stack[0] == card else 0
            if seen_n > have:
                out.append((card, i + 1, seen_n - have))
        return out

    def _whole_stack(self, state: Mk1State, p: int, card: str) -> int:
        """How many `card` player `p`'s hand most likely holds: the known ones, and each
        unseen card (taken from a pile unseen) more likely to be one than not, by what is
        left unseen of its pile's kinds (a hunted card is food or leather)."""
        known = state.inventories[p - 1].count(card)
        left = state.unseen.count(card)
        likely = 0
        for tag in state.hidden[p - 1]:
            kinds = self.rules.pile_kinds(tag)
            pool = sum(state.unseen.count(k) for k in kinds)
            if card in kinds and likely < left and 2 * left >= pool > 0:
                likely += 1
        return known + likely

    def _rolls(self, state: Mk1State, snapshot: TableSnapshot, move: Mk1Move) -> list[tuple[int, ...]]:
        """Die values a move may have rolled. The face the snapshot shows is the last roll of
        the last move; a move before it may have rolled anything, so a hit and a miss are
        tried at night (the health counter decides), and one value per food count for a
        seed harvest."""
        face = snapshot.counts.get("die", 0) if "die" in snapshot.settled else 0
        p = move.player
        seed_harvest = isinstance(move, Harvest) and self._harvests_seed(state, move)
        harvest: list[tuple[int, ...]] = [()]
        if seed_harvest:
            harvest = [(v,) for v in dict.fromkeys((face, 1, 3, 5)) if 1 <= v <= 6]
        night: list[tuple[int, ...]] = [()]
        if state.night and p == state.current:
            if self.rules.has_in_hotbar(state, p, "armor"):
                night = [(MISS,), (HIT, HIT)]
                if 1 <= face <= 6:
                    night.insert(0, (face,) if face >= 4 else (face, face))
            else:
                night = [(MISS,), (HIT,)]
                if 1 <= face <= 6:
                    night.insert(0, (face,))
        out = [n + h for n in night for h in harvest]
        return list(dict.fromkeys(out))

    def _harvests_seed(self, state: Mk1State, move: Harvest) -> bool:
        if move.card is not None:
            return move.card == "seed"
        return any(s and s[0] == "seed" for s in state.hotbars[move.player - 1])

    def proposals(
        self,
        state: Mk1State,
        snapshot: TableSnapshot,
        unexplained: frozenset[str],
        appearance: Mapping[str, ExpectedZone],
    ) -> Iterator[Mk1Move]:
        if state.over:
            return
        seen: set[Mk1Move] = set()
        for move in self._base_moves(state, snapshot):
            # A table change is no turn: it rolls nothing.
            rolls = [()] if isinstance(move, TableChange) else self._rolls(state, snapshot, move)
            for roll in rolls:
                candidate = replace(move, roll=roll)
                if candidate not in seen:
                    seen.add(candidate)
                    yield candidate

    def _base_moves(self, state: Mk1State, snapshot: TableSnapshot) -> Iterator[Mk1Move]:
        if any(state.owed):
            yield from self._rain_discards(state)
            return
        p = state.current
        gains = [g for g in self._slot_gains(state, snapshot, p) if g[0] not in WEATHER]
        for card, slot, n in gains:
            whole = self._whole_stack(state, p, card)
            if n == 1 and whole > 1 and card in MATERIALS:
                # A material moves as the whole stack the hand holds, unseen cards likely to be
                # it included: the camera sees only the top of the stack it makes. First, so
                # that it wins the tie with the known cards alone.
                yield MoveCard(player=p, card=card, to="hotbar", slot=slot, count=whole)
        yield from self.rules.candidate_moves(state)
        yield Sleep(player=p)
        for card, slot, n in gains:
            yield MoveCard(player=p, card=card, to="hotbar", slot=slot, count=n if n > 1 else None)
        weather = snapshot.cards("weather") if "weather" in snapshot.settled else ()
        if weather:
            shown = self._seen_card(weather[0])
            if shown is not None and shown in WEATHER and shown != state.weather:
                yield Activate(player=p, card=shown)
        for i, stack in enumerate(state.hotbars[p - 1]):
            if stack and stack[0] in GENERATORS:
                yield Harvest(player=p, card=stack[0], slot=i + 1)
        yield from self._stack_heights(state, snapshot, p)
        yield from self._daybreak(state, snapshot, p)

    def _stack_heights(self, state: Mk1State, snapshot: TableSnapshot, p: int) -> Iterator[Mk1Move]:
        """Corrections of a material stack's height in `p`'s hotbar, which the camera never
        sees (a stack moved with an unseen card guessed wrong), each a `table-change` raising
        `desync`, so that the move that takes from the stack (eating) explains what is seen:
        a stack believed higher whose slot is seen empty was one card (never empty at once:
        that would explain away the move itself); a card believed alone whose slot still
        shows it was two cards. Where the hands were is not asked: a palm is often placed a
        zone away."""
        for i, stack in enumerate(state.hotbars[p - 1]):
            zone = f"hotbar-{p}-{i + 1}"
            if not stack or stack[0] not in MATERIALS or zone not in snapshot.settled:
                continue
            if len(stack) > 1 and not snapshot.cards(zone):
                yield TableChange(player=p, zone=zone, cards=stack[:1])
            elif len(stack) == 1 and self._may_show(snapshot, zone, stack[0]):
                yield TableChange(player=p, zone=zone, cards=stack * 2)

    def _daybreak(self, state: Mk1State, snapshot: TableSnapshot, p: int) -> Iterator[Mk1Move]:
        """At night, all the daylight tokens seen out: day came, though the belief has not
        every player asleep. A sleep shows nothing on the table but where the hands rest, so
        an earlier one may have been read as an unseen move (a draw, a discard from the hand)
        that a palm on a pile explained better; the tokens put out at the round's end prove
        it was a sleep. Offered as a `table-change` raising `desync` (the earlier read stands
        in the journal, for the operator to correct), so that the move that ends the round,
        and the die and tokens of the turns after it, are read at once instead of waiting
        for the belief to catch up."""
        if (
            state.night and state.daylight < DAYLIGHT and "daylight" in snapshot.settled
            and snapshot.counts.get("daylight") == DAYLIGHT
        ):
            yield TableChange(player=p, zone="daylight", count=DAYLIGHT)

    def _may_show(self, snapshot: TableSnapshot, zone: str, card: str) -> bool:
        """Whether the top card seen in `zone` may be `card`: one of its two best candidates
        (the card under it in a stack can make the face read a close call)."""
        seen = snapshot.cards(zone)
        return bool(seen) and any(self.card_of(c.face) == card for c in seen[0].candidates[:2])

    def _rain_discards(self, state: Mk1State) -> Iterator[Mk1Move]:
        for q in range(1, state.players + 1):
            if not state.owed[q - 1]:
                continue
            for i in range(HOTBAR_SLOTS):
                stack = state.hotbars[q - 1][i]
                if stack:
                    yield Discard(player=q, card=stack[0], source="hotbar")
            for card in sorted(set(state.inventories[q - 1])):
                yield Discard(player=q, card=card, source="inventory")
            for tag in sorted(set(state.hidden[q - 1])):
                for card in sorted(self.rules.pile_kinds(tag)):
                    yield Discard(player=q, card=card, source="inventory")

    # -- corrections ----------------------------------------------------------------------------

    def corrections(
        self, state: Mk1State, snapshot: TableSnapshot, zones: Iterable[str]
    ) -> tuple[Mk1Move, ...]:
        """`table-change` moves for what the camera can tell: hotbar slots (the card seen,
        as many as the stack's height), the weather slot, token counts and the die. Piles
        keep their believed cards (their backs do not tell them)."""
        out: list[Mk1Move] = []
        counters = {*COUNTER_ZONES}
        for p in range(1, state.players + 1):
            counters.update((f"health-{p}", f"hunger-{p}"))
        for zone in zones:
            if zone in counters:
                if zone in snapshot.counts:
                    out.append(
                        TableChange(player=state.current, zone=zone, count=snapshot.counts[zone])
                    )
                continue
            cards = snapshot.cards(zone)
            ids = [c for c in (self._seen_card(s) for s in cards) if c is not None]
            if zone.startswith("hotbar-") and zone.count("-") == 2:
                n = snapshot.counts.get(zone, len(ids))
                stack = tuple(ids[:1]) * max(n, 1) if ids else ()
                out.append(TableChange(player=state.current, zone=zone, cards=stack))
            elif zone == "weather":
                out.append(
                    TableChange(player=state.current, zone=zone, cards=tuple(ids[:1]))
                )
        return tuple(out)
