"""How Angry Birds Power Cards looks on camera, and which moves can explain what changed.

Appearance (what a state says each zone shows, as catalog faces): `deck-N` is a face-down pile
showing the back of its top card (a structure part: `back.wood-vertical`, `back.pig`…; any face
when the top card is not known) and its height, which the camera does not see grow when won
cards go under it, so the hands tell whether it changed (`ExpectedZone.by_hands`); `battle-N`
shows the laid card's front face; `structure-N` shows the backs of its parts; `pot` is a pile
whose top is not predicted (tied cards are dropped in any order), only its height.

Moves proposed to the search: a `play` of each card newly seen in a battle slot (its first two
candidates), or of the deck's top card when the deck shows another top and its battle slot
cannot be read (a card there not named yet), `name-stat` for each stat under which someone
wins once every card of the round lies on the table (the camera cannot hear the stat: the
stat that makes the collecting player the winner explains the change best), `take` by each player and `to-pot` once the round can be
settled, a one-card `build` of a just-won card for each back among them once the winner's
structure shows something else (the first won card with that back: which of several was built
is not seen; a back not seen too, as a part laid may be hidden at once), `take-back` when a structure shrinks under an empty deck, and `quick-variant` never
(it changes no card). A round whose cards tie under some stat goes `to-pot` without a stat
being named: which of the tying stats was said is not seen, and the rules keep them all
possible for the replay; the replay of such a tie is collected (`take`) or sent to the pot
again without naming a stat either. Where those stats disagree on who tied (three or more
players), the cards seen in the replay's battle slots are plain `play`s: the rules rule out
the stats whose tied players did not lay them.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

from engine.games.angry_birds_power_cards import (
    NAMEABLE,
    AbMove,
    AbState,
    AngryBirdsPowerCards,
    Build,
    NameStat,
    Part,
    Play,
    RoundKind,
    TableChange,
    Take,
    TakeBack,
    ToPot,
)
from engine.snapshot import ExpectedZone, SeenCard, TableSnapshot, ZoneKind

CANDIDATES = 2  # candidates of a newly seen card tried as its identity


class AbInterpreter:
    """The `GameInterpreter` of angry-birds-power-cards."""

    def __init__(self, ruleset: Any) -> None:
        if not isinstance(ruleset, AngryBirdsPowerCards):
            raise TypeError("AbInterpreter needs the angry-birds-power-cards ruleset")
        self.rules = ruleset
        cat = ruleset.catalog
        self._front = {c.id: c.front for c in cat.cards.values()}
        self._back = {c.id: c.back for c in cat.cards.values()}
        self._card_of_front = {c.front: c.id for c in cat.cards.values()}

    # -- appearance -----------------------------------------------------------------------------

    def appearance(self, state: AbState) -> dict[str, ExpectedZone]:
        out: dict[str, ExpectedZone] = {}
        for p in range(1, state.players + 1):
            deck = state.decks[p - 1]
            top: tuple[str | None, ...] = ()
            if deck:
                top = (None if deck[0] is None else self._back[deck[0]],)
            # Won cards go under the deck: its height changes, which the camera does not see,
            # and only the hand that reached it tells who collected (`ExpectedZone.by_hands`).
            out[f"deck-{p}"] = ExpectedZone(kind=ZoneKind.PILE, faces=top, count=len(deck), by_hands=True)
            battle = state.battle[p - 1]
            out[f"battle-{p}"] = ExpectedZone(
                kind=ZoneKind.SPREAD, faces=tuple(self._front[c] for c in battle), count=len(battle)
            )
            parts, covered = self._structure_look(state.structures[p - 1])
            out[f"structure-{p}"] = ExpectedZone(
                kind=ZoneKind.SPREAD, faces=tuple(self._back[c] for c in parts), count=len(parts),
                covered=covered,
            )
        pot: tuple[str | None, ...] = (None,) if state.pot else ()
        out["pot"] = ExpectedZone(kind=ZoneKind.PILE, faces=pot, count=len(state.pot))
        return out

    def _structure_look(self, structures: Sequence[Sequence[str]]) -> tuple[list[str], frozenset[int]]:
        """A player's structure parts as the camera lists them (top first, the newest structure
        first) and which of them lie under another part: the verticals once a beam is laid
        across them, the beam once the pig sits on it."""
        parts: list[str] = []
        covered: set[int] = set()
        for s in reversed(structures):
            above = False
            for c in reversed(s):
                if above:
                    covered.add(len(parts))
                parts.append(c)
                above = above or self.rules.part(c) is not Part.VERTICAL
        return parts, frozenset(covered)

    def is_forced(self, state: AbState) -> bool:
        return False

    def unusual(self, state: AbState, move: AbMove) -> bool:
        return False

    def turn_of(self, state: AbState) -> int | None:
        return None

    def merged(self, state: AbState, moves: Sequence[Any]) -> tuple[Any, ...] | None:
        """No move of this game is read as two others when seen half done."""
        return None

    # -- proposals ------------------------------------------------------------------------------

    def card_of(self, face: str) -> str | None:
        """The card a front face belongs to (None for a back, which many cards share)."""
        return self._card_of_front.get(face)

    def _identities(self, card: SeenCard) -> list[str]:
        out: list[str] = []
        for c in card.candidates[:CANDIDATES]:
            cid = self.card_of(c.face)
            if cid is not None and cid not in out:
                out.append(cid)
        return out

    def proposals(
        self,
        state: AbState,
        snapshot: TableSnapshot,
        unexplained: frozenset[str],
        appearance: Mapping[str, ExpectedZone],
    ) -> Iterator[AbMove]:
        if state.over:
            return
        result = self.rules.round_result(state)
        for p in range(1, state.players + 1):
            zone = f"battle-{p}"
            if state.battle[p - 1]:
                continue
            if zone in unexplained:
                for seen in snapshot.cards(zone)[:1]:
                    for card in self._identities(seen):
                        yield Play(player=p, card=card)
            elif zone not in snapshot.settled and f"deck-{p}" in unexplained and state.decks[p - 1]:
                # The deck shows another top, and the battle slot cannot be read (a card there
                # not named yet: a mug over half of it, a hand still on it): the top card laid
                # (named when the belief knows it).
                yield Play(player=p, card=state.decks[p - 1][0])
        cleared = any(
            state.battle[p - 1] and not snapshot.cards(f"battle-{p}")
            for p in range(1, state.players + 1)
            if f"battle-{p}" in snapshot.settled
        )
        if cleared and not result.waiting:
            unnamed = state.stat is None and bool(result.by_stat)
            if unnamed and state.kind is RoundKind.STAT:
                # A stat under which the round ties explains nothing a plain `to-pot` does not.
                winning = [s for s, o in result.by_stat.items() if o["winner"] is not None]
                for s in winning or [n.value for n in NAMEABLE]:
                    yield NameStat(player=state.current, stat=s)
            if unnamed and state.kind is RoundKind.TIEBREAK:
                for p in range(1, state.players + 1):
                    if p not in state.out:
                        yield Take(player=p)
            if unnamed and any(o["tied"] for o in result.by_stat.values()):
                yield ToPot()
            if result.complete:
                for p in range(1, state.players + 1):
                    if p not in state.out:
                        yield Take(player=p)
                yield ToPot()
        lone = state.kind is RoundKind.TIEBREAK and len(state.participants) == 1
        if lone and state.pot and "pot" in unexplained:
            yield Take(player=state.participants[0])
        if state.builder:
            zone = f"structure-{state.builder}"
            if zone in unexplained:
                # One card per back: the camera sees only backs, so which of two won cards
                # with the same back went up is not seen, and proposing both would leave
                # ties no later read can break (two such builds in either order). Backs not
                # seen are tried too: a part laid may be hidden at once (a beam under the pig
                # laid on it, a beam not named yet); the look marks what lies covered, and a
                # part neither seen nor covered costs a card not seen.
                by_back: dict[str, str] = {}
                for card in state.won:
                    by_back.setdefault(self._back[card], card)
                for card in by_back.values():
                    yield Build(player=state.builder, cards=(card,))
        for p in state.participants:
            if not state.decks[p - 1] and f"structure-{p}" in unexplained:
                yield TakeBack(player=p)

    def corrections(
        self, state: AbState, snapshot: TableSnapshot, zones: Iterable[str]
    ) -> tuple[AbMove, ...]:
        """`table-change` moves that make the belief show what the camera sees in `zones`.

        A battle slot's faces name its cards. A structure shows backs only: each back seen is
        taken for a card with that back, the one believed there if any, else one the builder
        holds (just won, or in their deck), else one nobody has seen. The pot shows no face:
        it is set empty when it is seen empty, and left as believed otherwise. Decks stay as
        believed (their cards are face down, their heights a guess). Left uncorrected, a zone
        the belief has wrong keeps every later change unexplained, and each waits its pending
        time, too late for the round it belongs to."""
        out: list[AbMove] = []
        for zone in zones:
            seen = snapshot.cards(zone)
            if zone.startswith("battle-"):
                ids = [self.card_of(c.best.face) for c in seen]
                out.append(
                    TableChange(
                        player=state.current, zone=zone, cards=tuple(c for c in ids if c)
                    )
                )
            elif zone.startswith("structure-"):
                cards = self._structure_as_seen(state, int(zone.rpartition("-")[2]), seen)
                if cards is not None:
                    out.append(TableChange(player=state.current, zone=zone, cards=cards))
            elif zone == "pot" and not seen and state.pot and not snapshot.counts.get(zone):
                out.append(TableChange(player=state.current, zone=zone, cards=()))
        return tuple(out)

    def _structure_as_seen(
        self, state: AbState, player: int, seen: Iterable[SeenCard]
    ) -> tuple[str, ...] | None:
        """Cards for the backs seen on a player's structure, top first (see `corrections`);
        None when a back seen is no part's back or no card with it is left to take."""
        i = player - 1
        pools = [
            [c for s in reversed(state.structures[i]) for c in reversed(s)],
            [*state.won, *(c for c in state.decks[i] if c is not None)],
            list(state.unseen),
        ]
        out: list[str] = []
        for card in seen:
            back = card.best.face
            pick = next((c for pool in pools for c in pool if self._back[c] == back and c not in out), None)
            if pick is None:
                return None
            out.append(pick)
        return tuple(out)
