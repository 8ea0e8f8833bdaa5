"""How Minecraft: Explorers looks on camera, and which moves can explain what changed.

Appearance (what a state says each zone shows, as catalog faces): the landscape deck shows its
top card's front (`landscape.<type>`, any face when nothing is known) and its height; a display
slot its landscape's front; the mob deck the uniform `mob_back`; `mobs` every table mob's face;
`chests` each chest's front, or `chest_filled` once flipped (items tucked under a chest are
hidden); `hunger` the six hunger cards and the night card; `discard` its top card (an item by
its item side, a mob by its face); `player-N` every item by its item side (`item.<x>`, the back
of the explored landscape) and every trophy by its mob face.

A damaged tool lies turned 180 degrees: the faces do not change, so the turn is read from the
seen cards' `rotated_180` flags. Moves proposed to the search: the ruleset's legal moves that
touch a zone the snapshot shows differently, plus moves built from the observed difference,
which the enumerator cannot guess: the landscape that left the display with the item that
appeared in the player's area (its back, when only the front was known) and the tools newly
turned or gone (damaged or broken), the payment that left the area at a village, the new mobs
seen on the table (`reveal: {mobs: [...]}`), the fronts that appeared in refilled display slots
(a slot that shows the same front on another card, `TableSnapshot.renewed`, refilled too),
a fight or crossbow whose mobs moved into the area, an explorer map whose special landscape
shows in an extra display slot, and a fill whose chests were flipped.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import replace
from typing import Any

from engine.games.minecraft_explorers import (
    DISPLAY_SIZE,
    HUNGER_CARDS,
    SPECIAL_LANDSCAPES,
    EndTurn,
    Explore,
    ExplorersState,
    ExpMove,
    Fight,
    Fill,
    MinecraftExplorers,
    Outcome,
    Refresh,
    TableChange,
    Trade,
    TrophyMove,
    Use,
)
from engine.interpret import match_spread, out_of_order
from engine.snapshot import ExpectedZone, SeenCard, TableSnapshot, ZoneKind

MOB_BACK = "mob_back"
CHEST_FILLED = "chest_filled"
CHOICES = 2  # candidates of a seen card tried as its identity
REVEAL_CHOICES = 3  # candidates of a mob turned up tried as its identity when the first cannot end the reveal


def _row(faces: tuple[str | None, ...], *, ordered: bool = False) -> ExpectedZone:
    """A spread laid as a row, `faces` oldest card first, listed newest first as
    `ExpectedZone.faces` are: each card but the newest may lie partly under the next one
    (players squeeze a long row, chests hide the items tucked under them), too little of it
    seen to be found or named, so one not seen costs `InterpretConfig.hidden_penalty` and
    still matches (`ExpectedZone.covered`), when the belief had it there already
    (`InterpretConfig.hidden_known`). `ordered`: the order the tracker lists the row
    (newest first) is evidence, for a player's row: of two cards that show the same item,
    the one left lies where the older or the newer did."""
    return ExpectedZone(
        kind=ZoneKind.SPREAD,
        faces=faces[::-1],
        count=len(faces),
        covered=frozenset(range(1, len(faces))),
        ordered=ordered,
    )


class ExplorersInterpreter:
    """The `GameInterpreter` of minecraft-explorers."""

    def __init__(self, ruleset: Any) -> None:
        if not isinstance(ruleset, MinecraftExplorers):
            raise TypeError("ExplorersInterpreter needs the minecraft-explorers ruleset")
        self.rules = ruleset
        cat = ruleset.catalog
        self._front_of_type: dict[str, str] = {}
        self._type_of_front: dict[str, str] = {}
        self._face: dict[str, str] = {}
        self._mob_of_face: dict[str, str] = {}
        self._mob_ids = frozenset(c.id for c in cat.cards.values() if c.kind == "mob")
        for card in cat.cards.values():
            if card.kind == "landscape":
                kind = str(card.attrs["landscape"])
                self._front_of_type[kind] = card.front
                self._type_of_front[card.front] = kind
                self._face[card.id] = card.back  # in an area or a chest: the item side
            else:
                self._face[card.id] = card.front
                if card.kind in ("mob", "game-over"):
                    self._mob_of_face[card.front] = card.id

    # -- appearance -----------------------------------------------------------------------------

    def card_face(self, card: str) -> str:
        """The face a card shows in an area, a chest, the discard pile or the table mobs."""
        return self._face[card]

    def front_face(self, slot: str | None) -> str | None:
        """The front a deck or display slot shows (None: not known)."""
        kind = self.rules.landscape_of(slot)
        return None if kind is None else self._front_of_type[kind]

    def appearance(self, state: ExplorersState) -> dict[str, ExpectedZone]:
        out: dict[str, ExpectedZone] = {}
        deck = state.landscape_deck
        out["landscape-deck"] = ExpectedZone(
            kind=ZoneKind.PILE, faces=(self.front_face(deck[0]),) if deck else (), count=len(deck)
        )
        for i in range(max(DISPLAY_SIZE, len(state.display))):
            slot = state.display[i] if i < len(state.display) else ()
            out[f"display-{i + 1}"] = ExpectedZone(
                kind=ZoneKind.PILE,
                faces=tuple(self.front_face(c) for c in slot),
                count=len(slot),
            )
        # Every mob back looks the same and the deck's height changes too little to see: only
        # a hand that reached into it tells that mobs were turned up (`by_hands`), not the
        # cost of a fight made up after an end of turn nobody played.
        out["mob-deck"] = ExpectedZone(
            kind=ZoneKind.PILE,
            faces=(MOB_BACK,) if state.mob_deck else (),
            count=len(state.mob_deck),
            by_hands=True,
        )
        # A table mob never turns over where it lies: the same card read otherwise is a misread.
        out["mobs"] = replace(_row(tuple(self.card_face(m) for m in state.mobs)), steady=True)
        out["chests"] = _row(
            tuple(CHEST_FILLED if c in state.filled else self.card_face(c) for c in state.chests)
        )
        # The turn cards show the same faces in every state and never hold an explanation
        # back; the hunger cards spent this turn lie turned (`turned`), which tells how much
        # the turn has spent, and that it has not ended, where the camera reads their turn.
        out["hunger"] = ExpectedZone(
            kind=ZoneKind.SPREAD,
            faces=("card_hunger",) * HUNGER_CARDS + ("card_night",),
            count=HUNGER_CARDS + 1,
            soft=True,
            turned=state.spent,
        )
        out["discard"] = ExpectedZone(
            kind=ZoneKind.PILE,
            faces=(self.card_face(state.discard[0]),) if state.discard else (),
            count=len(state.discard),
        )
        for p in range(1, state.players + 1):
            area = state.areas[p - 1]
            out[f"player-{p}"] = _row(tuple(self.card_face(c) for c in area), ordered=True)
        return out

    def is_forced(self, state: ExplorersState) -> bool:
        return False

    def unusual(self, state: ExplorersState, move: ExpMove) -> bool:
        """A turn ended with nothing done in it: no hunger spent or gained (a player who
        fights for free with swords and ends the turn is counted too; that is rare as well)."""
        return isinstance(move, EndTurn) and state.spent == 0 and state.bonus == 0

    def turn_of(self, state: ExplorersState) -> int | None:
        return state.turn

    def merged(self, state: ExplorersState, moves: Sequence[Any]) -> tuple[Any, ...] | None:
        """No move of this game is read as two others when seen half done."""
        return None

    # -- the observed difference ----------------------------------------------------------------

    def _area_diff(
        self, state: ExplorersState, snapshot: TableSnapshot, player: int
    ) -> tuple[list[str], list[SeenCard], list[SeenCard]]:
        """(cards of the area no seen card fits, seen cards no area card fits, every seen
        card paired with an area card, in area order); empty when the area is not settled."""
        zone = f"player-{player}"
        if zone not in snapshot.settled:
            return [], [], []
        area = state.areas[player - 1]
        seen = snapshot.cards(zone)
        faces = [self.card_face(c) for c in area]
        m = match_spread(faces, seen)
        pairs, missing = _twins_in_order(faces, m.pairs, m.missing)
        paired = [seen[j] for _, j in pairs]
        return [area[i] for i in missing], [seen[j] for j in m.extra], paired

    def _discarded(self, state: ExplorersState, snapshot: TableSnapshot, player: int) -> list[str]:
        """Cards of the player's area that the discard pile's new top may be, when the area
        itself is not read (an arm still over it after the player paid a village): the pile
        shows what went there. Empty when the area is read (its own difference tells) or the
        pile's top looks as believed."""
        if f"player-{player}" in snapshot.settled or "discard" not in snapshot.settled:
            return []
        seen = snapshot.cards("discard")
        if not seen:
            return []
        top = seen[0]
        if state.discard and top.best.face == self.card_face(state.discard[0]):
            return []
        faces = {c.face for c in top.candidates[:CHOICES]}
        return [c for c in dict.fromkeys(state.areas[player - 1]) if self.card_face(c) in faces]

    def _tool_evidence(
        self, state: ExplorersState, snapshot: TableSnapshot, player: int
    ) -> list[str]:
        """Tools the snapshot shows used since `state`: a ready tool now turned 180 degrees
        (once), a damaged tool gone from the area (its second use, broken)."""
        zone = f"player-{player}"
        if zone not in snapshot.settled:
            return []
        area = state.areas[player - 1]
        seen = snapshot.cards(zone)
        m = match_spread([self.card_face(c) for c in area], seen)
        used: list[str] = []
        for i, j in m.pairs:
            card = area[i]
            if self.rules.tool(card) is not None and seen[j].rotated_180 and card not in state.used:
                used.append(card)
        for i in m.missing:
            card = area[i]
            if self.rules.tool(card) is not None and card in state.used:
                used.append(card)
        return used

    def _ids_of(self, card: SeenCard) -> list[str]:
        """Mob ids a seen card may be (best first)."""
        out: list[str] = []
        for c in card.candidates[:CHOICES]:
            mob = self._mob_of_face.get(c.face)
            if mob is not None and mob not in out:
                out.append(mob)
        return out

    def _mobs_as_read(self, state: ExplorersState, snapshot: TableSnapshot) -> tuple[str, ...]:
        """The table mobs as a snapshot that holds the very cards believed there reads them
        (`TableSnapshot.reread`). A seen card whose first face no believed mob shows replaces
        a believed mob that no card shows, newest first (the newest of a row lies on top and is
        seen; an older one not seen may lie under it), so that the row's unseen cards stay;
        when more cards are seen than that leaves room for, the mobs seen."""
        seen = snapshot.cards("mobs")
        firsts = [replace(c, candidates=c.candidates[:1]) for c in seen]
        m = match_spread([self.card_face(c) for c in state.mobs], firsts)
        ids = [self._ids_of(seen[j])[:1] for j in m.extra]
        if m.extra and len(m.extra) <= len(m.missing) and all(ids):
            mobs = list(state.mobs)
            for i, one in zip(reversed(m.missing), ids, strict=False):
                mobs[i] = one[0]
            return tuple(x for x in mobs if x is not None)
        return self._mobs_seen(snapshot)

    def _mobs_seen(self, snapshot: TableSnapshot) -> tuple[str, ...]:
        """The table mobs the snapshot shows, each as its first candidate, oldest first as the
        state keeps them (the snapshot lists a row newest first)."""
        return tuple(i for c in reversed(snapshot.cards("mobs")) for i in self._ids_of(c)[:1])

    def _turned_up(self, state: ExplorersState, snapshot: TableSnapshot) -> list[SeenCard]:
        """Mob cards seen on the table that the state does not hold there, in the order they
        were turned up: by tracker id when every one has an id (a card seen later gets a
        higher one), else as listed."""
        if "mobs" not in snapshot.settled:
            return []
        seen = snapshot.cards("mobs")
        m = match_spread([self.card_face(c) for c in state.mobs], seen)
        extra = list(m.extra)
        if all(seen[j].track_id is not None for j in extra):
            extra.sort(key=lambda j: seen[j].track_id or 0)
        return [seen[j] for j in extra]

    def _new_mobs(self, state: ExplorersState, snapshot: TableSnapshot) -> tuple[str, ...]:
        """The mobs turned up (`_turned_up`), each as its first candidate, in an order the
        rules can draw them: a reveal draws until a type not yet on the table shows, so before
        each new type come the cards of types already there (`_draw_order`)."""
        out = [ids[0] for ids in (self._ids_of(c) for c in self._turned_up(state, snapshot)) if ids]
        return _draw_order(state.mobs, out)

    def _mob_reveals(self, state: ExplorersState, snapshot: TableSnapshot) -> list[tuple[tuple[str, ...], ...]]:
        """The reveals that may have turned up the mobs seen: each card as its first candidate
        (`_new_mobs`), and, where that leaves the reveal drawing on for a card no one sees (the
        last card turned up is of a type already on the table), each card of such a type read
        instead as one of its other candidates (up to `REVEAL_CHOICES`) of a new type: a
        skeleton read as a creeper at 0.4, a skeleton at 0.08, is the skeleton the night card
        turned up, not a creeper followed by a mob nobody saw."""
        first = self._new_mobs(state, snapshot)
        out: list[tuple[tuple[str, ...], ...]] = [(("mobs", *first),)] if first else [()]
        unnamed = self._unnamed_mobs(state, snapshot, first)
        if unnamed:
            out.insert(0, (("mobs", *first, *unnamed),))
        present = set(state.mobs)
        if not first or first[-1] not in present | set(first[:-1]):
            return out
        cards = self._turned_up(state, snapshot)
        firsts = [ids[0] if ids else None for ids in (self._ids_of(c) for c in cards)]
        for k, card in enumerate(cards):
            if firsts[k] is not None and firsts[k] not in present and firsts.count(firsts[k]) == 1:
                continue  # a new type read once: it may well end a reveal
            for c in card.candidates[1:REVEAL_CHOICES]:
                mob = self._mob_of_face.get(c.face)
                if mob is None or mob in present or mob in firsts:
                    continue
                read = [*firsts[:k], mob, *firsts[k + 1:]]
                alt = _draw_order(state.mobs, [x for x in read if x is not None])
                if (("mobs", *alt),) not in out:
                    out.append((("mobs", *alt),))
        return out

    def _unnamed_mobs(
        self, state: ExplorersState, snapshot: TableSnapshot, named: Sequence[str]
    ) -> tuple[str, ...]:
        """Mobs that may stand for the cards of the row the camera could not name
        (`TableSnapshot.unnamed`), as reveals after the `named` ones turned up: a type not on
        the table each, so that each ends its draw (the overrun rule draws on past a type
        already there, and an unknown deck's draw is a guess: three mobs made up where one card
        lies unnamed), the type of which the most copies are unseen first. Only while the mob
        deck's next cards are not known (a spyglass showed none)."""
        count = snapshot.unnamed.get("mobs", 0) if "mobs" in snapshot.settled else 0
        if not count:
            return ()
        ahead = state.mob_deck[len(named):len(named) + count]
        if len(ahead) < count or any(c is not None for c in ahead):
            return ()
        present = {*state.mobs, *named}
        pool = Counter(
            c for c in state.unseen if c in self._mob_ids and c not in present
        )
        return tuple(c for c, _ in sorted(pool.items(), key=lambda kv: (-kv[1], kv[0]))[:count])

    def _gone_mobs(self, state: ExplorersState, snapshot: TableSnapshot) -> list[str]:
        if "mobs" not in snapshot.settled:
            return []
        m = match_spread([self.card_face(c) for c in state.mobs], snapshot.cards("mobs"))
        return [state.mobs[i] for i in m.missing]

    # -- proposals ------------------------------------------------------------------------------

    def proposals(
        self,
        state: ExplorersState,
        snapshot: TableSnapshot,
        unexplained: frozenset[str],
        appearance: Mapping[str, ExpectedZone],
    ) -> Iterator[ExpMove]:
        if state.outcome is not Outcome.PLAYING:
            return
        p = state.current
        area_zone = f"player-{p}"
        display_changed = any(z.startswith("display-") for z in unexplained)
        reveals = self._mob_reveals(state, snapshot)
        built = list(self._built(state, snapshot, p, unexplained, reveals))
        yield from built
        shown = set(built)
        for move in self.rules.legal_moves(state):
            if move in shown:
                continue
            if isinstance(move, Explore | Trade | Refresh):
                if display_changed:
                    yield move
            elif isinstance(move, Fight | Use | TrophyMove):
                if area_zone in unexplained or "mobs" in unexplained or "discard" in unexplained:
                    yield move
            elif isinstance(move, EndTurn):
                if "mobs" in unexplained or "mob-deck" in unexplained:
                    for reveal in reveals:
                        yield EndTurn(player=move.player, armor=move.armor, reveal=reveal)
                elif any(z.startswith("player-") and z != area_zone for z in unexplained):
                    # Another player's area changed and the mobs did not: the night turned
                    # up no mob the camera sees (iron armor cancelled it, or it is not read
                    # yet), and the turn ended all the same.
                    yield move
            elif area_zone in unexplained or "discard" in unexplained or "chests" in unexplained:
                yield move

    def _built(
        self,
        state: ExplorersState,
        snapshot: TableSnapshot,
        p: int,
        unexplained: frozenset[str],
        reveals: list[tuple[tuple[str, ...], ...]],
    ) -> Iterator[ExpMove]:
        """Moves built from the difference itself; `reveals`: the ways the mobs seen may
        have turned up (`_mob_reveals`), the first the likeliest."""
        lost, gained, _ = self._area_diff(state, snapshot, p)
        tools = self._tool_evidence(state, snapshot, p)
        armor = next((c for c in lost if self.rules.category(c) == "armor"), None)
        # Explore / trade: a display slot emptied and an item appeared in the area.
        for i, slot in enumerate(state.display):
            zone = f"display-{i + 1}"
            if not slot or zone not in snapshot.settled or snapshot.cards(zone):
                continue
            card = slot[0]
            for item in self._items_for(state, card, gained):
                kind_tools = self._tools_for(state, card if item is None else item, tools)
                pays: list[str | None] = [None]
                villages = self._villages(card)
                village = bool(villages)
                if villages:
                    needs = {str(self.rules.attr(v, "trade")["pay"]) for v in villages}
                    pays = [
                        c for c in dict.fromkeys([*lost, *self._discarded(state, snapshot, p)])
                        if any(self.rules.matches_need(c, need) for need in needs)
                        or self.rules.category(c) == "emerald"
                    ] or [None]
                move_type = Trade if village else Explore  # one move, named as players say it
                for pay in pays:
                    for reveal in reveals:
                        yield move_type(
                            player=p,
                            landscape=zone,
                            tools=kind_tools,
                            pay=pay,
                            item=item,
                            armor=armor,
                            reveal=reveal,
                        )
        # Refresh: display slots now show other fronts, and those that show the same front
        # on another card (`TableSnapshot.renewed`: bottomed and refilled with the same type).
        changed = [
            i for i in range(DISPLAY_SIZE)
            if f"display-{i + 1}" in unexplained and snapshot.cards(f"display-{i + 1}")
        ]
        if changed and snapshot.renewed:
            changed += [
                i for i in range(min(DISPLAY_SIZE, len(state.display)))
                if i not in changed and state.display[i] and f"display-{i + 1}" in snapshot.renewed
                and snapshot.cards(f"display-{i + 1}")
            ]
            changed.sort()
        if changed:
            keep = tuple(
                f"display-{i + 1}" for i in range(min(DISPLAY_SIZE, len(state.display)))
                if state.display[i] and i not in changed
            )
            rows = []
            for i in changed:
                front = snapshot.cards(f"display-{i + 1}")[0].best.face
                kind = self._type_of_front.get(front)
                if kind is not None:
                    rows.append((f"display-{i + 1}", kind))
            yield Refresh(player=p, keep=keep, reveal=tuple(rows))
        # Fights and crossbows: mobs that left the table for the area.
        gone = self._gone_mobs(state, snapshot)
        swords = tuple(t for t in tools if self.rules.tool(t) == "sword")
        for mob in dict.fromkeys(gone):
            yield Fight(player=p, mob=mob, tools=swords)
        for bow in (c for c in lost if self.rules.category(c) == "crossbow"):
            # Unnamed targets first: when the mobs gone are the ones the rules pick anyway (the
            # costliest), the move is written as players make it, without naming them.
            # Named only when they are not that pick: the same mobs named in another order
            # differ from it only by the order their trophies lie in, put down at once.
            yield Use(player=p, item=bow)
            named = tuple(gone[:2])
            if sorted(named) != sorted(self.rules.costliest(state.mobs, 2)):
                yield Use(player=p, item=bow, mobs=named)
        # An explorer map that left the area: the special landscape it fetched shows in an
        # extra display slot (when the deck is not known, the rules' own pick may be the
        # other one). Unnamed first, as players say it, for when it is the rules' pick.
        fetched = []
        for i in range(DISPLAY_SIZE, DISPLAY_SIZE + 2):
            zone = f"display-{i + 1}"
            cards = snapshot.cards(zone) if zone in snapshot.settled else ()
            kind = self._type_of_front.get(cards[0].best.face) if cards else None
            if kind in SPECIAL_LANDSCAPES and (i >= len(state.display) or not state.display[i]):
                fetched.append(kind)
        for chart in dict.fromkeys(c for c in lost if self.rules.category(c) == "map") if fetched else ():
            yield Use(player=p, item=chart)
            for kind in dict.fromkeys(fetched):
                yield Use(player=p, item=chart, landscape=kind)
        # Fill: chests now flipped, completed from the items that left the area.
        if "chests" in unexplained and "chests" in snapshot.settled:
            yield from self._built_fill(state, snapshot, p, lost, gone)
        # End of turn with the mobs that turned up, or with none when iron armor that left
        # the area cancelled the night's reveal.
        for reveal in reveals:
            if reveal or armor is not None:
                yield EndTurn(player=p, armor=armor, reveal=reveal)

    def _villages(self, card: str | None) -> tuple[str, ...]:
        """The village cards a display slot may hold: the card itself, or, when only its
        landscape type is known (its front), every card of that type if all are villages
        (a village of unknown back is still traded at, not explored)."""
        if card is None:
            return ()
        if card in self.rules.landscape_types():
            kinds = self.rules.cards_of_type(card)
            return kinds if kinds and all(self.rules.is_village(c) for c in kinds) else ()
        return (card,) if self.rules.is_village(card) else ()

    def _items_for(
        self, state: ExplorersState, slot: str | None, gained: list[SeenCard]
    ) -> list[str | None]:
        """Cards the explored `slot` may be, from the item sides that appeared in the area."""
        if slot is not None and self.rules.is_landscape_id(slot):
            return [None]  # already known
        kind = self.rules.landscape_of(slot)
        pool = [c for c in state.unseen if self.rules.is_landscape_id(c)]
        out: list[str | None] = []
        for seen in gained:
            for cand in seen.candidates[:CHOICES]:
                for c in pool:
                    fits = kind is None or self.rules.landscape_of(c) == kind
                    if self._face[c] == cand.face and fits and c not in out:
                        out.append(c)
        return out or [None]

    def _tools_for(self, state: ExplorersState, slot: str | None, tools: list[str]) -> tuple[str, ...]:
        if slot is None:
            return ()
        card = slot if self.rules.is_landscape_id(slot) else None
        shield = self.rules.attr(card, "shield") if card else None
        if shield is None and card is None:
            kinds = {self.rules.attr(c, "shield") for c in self.rules.cards_of_type(slot)}
            shield = next(iter(kinds)) if len(kinds) == 1 else None
        return tuple(t for t in tools if shield is not None and self.rules.tool(t) == shield)

    def _built_fill(
        self,
        state: ExplorersState,
        snapshot: TableSnapshot,
        p: int,
        lost: list[str],
        gone: list[str],
    ) -> Iterator[ExpMove]:
        seen = snapshot.cards("chests")
        flipped = sum(1 for c in seen if c.best.face == CHEST_FILLED)
        known = len(state.filled & set(state.chests))
        items = [c for c in lost if not self.rules.is_mob(c)]
        if flipped <= known and not items:
            return
        rows: list[tuple[str, ...]] = []
        pool = list(items)
        for ci, chest in enumerate(state.chests):
            if chest in state.filled:
                continue
            picked = self.rules.completion(state.chest_items[ci], self.rules.chest_needs(chest), pool)
            if picked is None:
                continue
            for c in picked:
                pool.remove(c)
            rows.append((chest, *picked))
        if not rows:
            return
        defeat = tuple(gone[: len(rows)])
        if len(defeat) == 1 and defeat == self.rules.costliest(state.mobs, 1):
            # The costliest table mob is what a completed chest defeats when none is named.
            defeat = ()
        if len(rows) == 1:
            yield Fill(player=p, chest=rows[0][0], items=rows[0][1:], defeat=defeat)
        else:
            yield Fill(player=p, chests=tuple(rows), defeat=defeat)

    # -- corrections ----------------------------------------------------------------------------

    def corrections(
        self, state: ExplorersState, snapshot: TableSnapshot, zones: Iterable[str]
    ) -> tuple[ExpMove, ...]:
        """`table-change` moves for the zones whose cards the faces tell: table mobs and
        player areas. Decks, display slots (a front does not tell the card) and chests are
        left as believed, and so is a zone the change would leave as it is (a card seen there
        whose face no card the rules could place shows is left out): such a change is no
        move, and written again at each later desync it would be read as one each time.
        A card seen but not named (`TableSnapshot.unnamed`) keeps a believed card of its
        zone that no seen card shows, the newest first."""
        out: list[ExpMove] = []
        for zone in zones:
            unnamed = snapshot.unnamed.get(zone, 0)
            if zone == "mobs":
                misread = snapshot.reread is not None and zone in snapshot.reread  # the same cards
                mobs = self._mobs_as_read(state, snapshot) if misread else self._mobs_seen(snapshot)
                if unnamed:
                    m = match_spread([self.card_face(c) for c in state.mobs], snapshot.cards(zone))
                    kept = sorted(m.missing)[-unnamed:]
                    mobs = (*(state.mobs[i] for i in kept), *mobs)
                if mobs != state.mobs:
                    out.append(TableChange(player=state.current, zone=zone, cards=mobs))
            elif zone.startswith("player-"):
                p = int(zone.rsplit("-", 1)[1])
                lost, gained, _ = self._area_diff(state, snapshot, p)
                area = Counter(state.areas[p - 1])
                area.subtract(lost[:max(0, len(lost) - unnamed)])
                extra: list[str] = []
                for c in gained:
                    mob = self._ids_of(c)
                    if mob:
                        extra.append(mob[0])
                        continue
                    pool = [x for x in state.unseen if self._face.get(x) == c.best.face]
                    if pool:
                        extra.append(pool[0])
                cards = (*sorted(area.elements()), *extra)
                if Counter(cards) != Counter(state.areas[p - 1]):
                    out.append(TableChange(player=state.current, zone=zone, cards=cards))
        return tuple(out)


def _twins_in_order(
    faces: Sequence[str | None], pairs: Iterable[tuple[int, int]], missing: Iterable[int]
) -> tuple[list[tuple[int, int]], list[int]]:
    """`pairs` and `missing` of a row (`faces` oldest first, seen cards newest first) with
    the cards of one face, when some of them are gone, paired as the row lies: which of two
    spyglasses was used the faces cannot tell, but the one still there lies before or after
    the other cards as the older or the newer of the two did. The seen cards of such a face
    take the area cards that leave fewest pairs out of order (`out_of_order`, the measure of
    an ordered zone's fit; ties: the newer area cards, as `match_spread` pairs them)."""
    pairs, missing = sorted(pairs), sorted(missing)
    last = len(faces) - 1  # an area index as an index of `ExpectedZone.faces`, newest first
    for face in sorted({f for i in missing if (f := faces[i]) is not None}):
        mine = [(i, j) for i, j in pairs if faces[i] == face]
        if not mine:
            continue
        others = [(i, j) for i, j in pairs if faces[i] != face]
        slots = sorted([i for i, _ in mine] + [i for i in missing if faces[i] == face])
        cards = sorted((j for _, j in mine), reverse=True)  # oldest first, as `slots`
        picks = [
            (out_of_order([(last - i, j) for i, j in [*others, *zip(pick, cards, strict=True)]]), [-i for i in pick],
             pick)
            for pick in itertools.combinations(slots, len(cards))
        ]
        best = min(picks)[2]
        pairs = sorted([*others, *zip(best, cards, strict=True)])
        missing = sorted([*(i for i in missing if faces[i] != face), *(i for i in slots if i not in best)])
    return pairs, missing


def _draw_order(on_table: Iterable[str], cards: Iterable[str]) -> tuple[str, ...]:
    """`cards` (mobs turned up, in the order seen) as reveals draw them: each reveal takes
    every card of a type already on the table, then one of a new type, which ends it."""
    present = set(on_table)
    rest = list(cards)
    out: list[str] = []
    while rest:
        out += [c for c in rest if c in present]
        rest = [c for c in rest if c not in present]
        if rest:
            new = rest.pop(0)
            out.append(new)
            present.add(new)
    return tuple(out)
