"""The interpreter's shortcuts and stores give what the plain computation gives.

The search reuses what it worked out (zone looks, zone fits, how an area compares with a
snapshot) and skips the assignment search where there is nothing to choose: each of those must
leave every result as it was, which these tests check against the plain path.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

import pytest

from engine import get_game, interpret
from engine.errors import UnknownCardError
from engine.games.minecraft_card_game import McgState, MinecraftCardGame
from engine.interpret import WEAK_RATIO, Interpreter, _assign, _hungarian, fit_zone, match_spread
from engine.interpreters import minecraft_card_game as mcg_interpreter
from engine.interpreters.minecraft_card_game import McgInterpreter
from engine.simulate import simulate_game
from engine.snapshot import Candidate, SeenCard, TableSnapshot, ZoneKind

GAME = get_game("minecraft-card-game")
FACES = tuple(sorted(GAME.catalog.faces))


def states(seed: int, players: int) -> Iterator[McgState]:
    """Every state of a simulated game, in order."""
    game = simulate_game(GAME, players=players, seed=seed)
    state = GAME.initial_state(players=players, seed=seed)
    yield state
    for move in game.moves:
        state = GAME.apply(state, move).state
        yield state


def render(state: McgState, rng: random.Random, frame: int) -> TableSnapshot:
    """A camera-like read of `state`: some faces demoted behind a wrong one, some cards
    missing, so that areas and piles differ from what neighbouring states expect."""
    zones: dict[str, tuple[SeenCard, ...]] = {}
    counts: dict[str, int] = {}
    for zone, expected in McgInterpreter(GAME).table_look(state).items():
        cards = []
        for face in expected.faces:
            assert face is not None
            if rng.random() < 0.1:
                continue
            wrong = rng.choice(FACES)
            if rng.random() < 0.2:
                cands = (Candidate(face=wrong, score=0.6), Candidate(face=face, score=0.3))
            else:
                cands = (Candidate(face=face, score=0.9), Candidate(face=wrong, score=0.05))
            cards.append(SeenCard(candidates=cands))
        zones[zone] = tuple(cards[:1] if expected.kind is ZoneKind.PILE else cards)
        if expected.kind is ZoneKind.PILE:
            counts[zone] = expected.count
    return TableSnapshot(
        frame=frame, time=frame / 30.0, zones=zones, counts=counts, settled=frozenset(zones)
    )


def test_a_single_row_or_column_is_assigned_as_the_hungarian_algorithm_assigns_it() -> None:
    rng = random.Random(5)
    values: list[float | None] = [None, -1.0, 0.0, 0.5, 2.0, 950.0, 997.7, 1000.0]
    for _ in range(20000):
        entries = [rng.choice(values) for _ in range(rng.randint(0, 6))]
        for weight in ([entries], [[w] for w in entries]):
            assert _assign(weight) == _hungarian(weight)


@pytest.mark.parametrize("face", [None, "a", "b", "c"])
def test_one_face_against_one_card_pairs_when_the_card_may_show_it(face: str | None) -> None:
    rng = random.Random(f"one:{face}")
    for _ in range(2000):
        listed = rng.sample(["a", "b", "d"], rng.randint(1, 3))
        scores = sorted((rng.choice([1.0, 0.5, 0.11, 0.1, 0.09, 0.02]) for _ in listed), reverse=True)
        card = SeenCard(candidates=tuple(Candidate(face=f, score=s) for f, s in zip(listed, scores, strict=True)))
        score = card.score_of(face) if face is not None else None
        fits = face is None or (score is not None and score >= WEAK_RATIO * card.best.score)
        m = match_spread([face], [card])
        expected = (((0, 0),), (), ()) if fits else ((), (0,), (0,))
        assert (m.pairs, m.missing, m.extra) == expected


@pytest.mark.parametrize("players", [2, 3])
def test_zone_looks_made_once_equal_looks_made_afresh(
    players: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A small store, so that it is emptied and filled again along the game.
    monkeypatch.setattr(mcg_interpreter, "LOOKS_KEPT", 40)
    kept = McgInterpreter(GAME)
    for state in states(seed=3, players=players):
        assert kept.appearance(state) == McgInterpreter(GAME).appearance(state)
        assert len(kept._looks) <= 40


def _proposals(game: McgInterpreter, state: McgState, snapshot: TableSnapshot) -> list[Any]:
    look = game.appearance(state)
    unexplained = frozenset(
        z for z in snapshot.settled if tuple(c.best.face for c in snapshot.cards(z)) != look[z].faces
    )
    return list(game.proposals(state, snapshot, unexplained, look))


def test_area_comparisons_kept_per_snapshot_give_the_proposals_made_afresh() -> None:
    rng = random.Random(8)
    kept = McgInterpreter(GAME)
    trail = list(states(seed=4, players=3))
    for k in range(1, len(trail), 3):
        snapshot = render(trail[k], rng, frame=k)
        # Several states against one snapshot (the store is reused), then the next snapshot.
        for state in trail[max(0, k - 3) : k + 1]:
            assert _proposals(kept, state, snapshot) == _proposals(McgInterpreter(GAME), state, snapshot)


@pytest.mark.parametrize("players", [2, 3])
def test_a_search_with_its_stores_warm_explains_as_a_fresh_one(players: int) -> None:
    rng = random.Random(f"search:{players}")
    kept: Interpreter[Any, Any] = Interpreter(GAME)
    trail = list(states(seed=11, players=players))
    for k in range(2, min(len(trail), 60), 2):
        snapshot = render(trail[k], rng, frame=k)
        fresh: Interpreter[Any, Any] = Interpreter(GAME)
        a = [(e.moves, e.score, e.explains, e.unexplained) for e in kept.explain(trail[k - 2], snapshot)]
        b = [(e.moves, e.score, e.explains, e.unexplained) for e in fresh.explain(trail[k - 2], snapshot)]
        assert a == b


def _plain_evaluate(
    it: Interpreter[Any, Any], state: McgState, snapshot: TableSnapshot
) -> tuple[Any, ...]:
    """What `Interpreter._evaluate` reports of a state (no hands: `reached` is None), worked
    out zone by zone with `fit_zone` and no store."""
    cfg = it.config
    look = it.game.appearance(state)
    total, within, lacking = 0.0, True, 0
    unexplained: set[str] = set()
    differs: set[str] = set()
    for zone in snapshot.settled:
        seen = snapshot.cards(zone)
        expected = look.get(zone)
        if expected is None:
            if seen:
                unexplained.add(zone)
                differs.add(zone)
                lacking += interpret._NOT_LACKING
                within = False
                total -= cfg.zone_penalty + cfg.card_penalty * len(seen)
            continue
        fit = fit_zone(expected, seen, snapshot.counts.get(zone), cfg)
        total += fit.score
        if expected.soft:
            if not fit.exact:
                differs.add(zone)
            continue
        within = within and fit.within_noise
        if not fit.matches:
            unexplained.add(zone)
            spread = expected.kind is ZoneKind.SPREAD
            lacking += fit.lacking if fit.lacking and spread else interpret._NOT_LACKING
        if not fit.exact:
            differs.add(zone)
    return total, not unexplained, within, frozenset(unexplained), frozenset(differs), lacking


@pytest.mark.parametrize("players", [2, 3])
def test_a_search_scores_each_state_as_the_plain_zone_by_zone_fit(players: int) -> None:
    rng = random.Random(f"evaluate:{players}")
    it: Interpreter[Any, Any] = Interpreter(GAME)
    trail = list(states(seed=12, players=players))
    for k in range(1, len(trail), 4):
        snapshot = render(trail[k], rng, frame=k)
        reading = interpret._Reading(snapshot)
        # The same reading for neighbouring states: fits found by identity and by value.
        for state in trail[max(0, k - 4) : k + 2] * 2:
            node = it._evaluate(state, (), 0, 0, reading)
            got = (node.score, node.explains, node.within_noise, node.unexplained, node.differs, node.lacking)
            assert got == _plain_evaluate(it, state, snapshot)


def test_reveals_kept_per_snapshot_are_the_reveals_worked_out_afresh() -> None:
    rng = random.Random(9)
    kept = McgInterpreter(GAME)
    trail = list(states(seed=5, players=3))
    piles = [f"resource-pile-{i}" for i in range(1, 6)] + [f"craft-pile-{i}" for i in range(1, 5)]
    for k in range(1, len(trail), 3):
        snapshot = render(trail[k], rng, frame=k)
        for state in trail[max(0, k - 3) : k + 1]:
            for zones in ([z] for z in piles):
                for between in ((), ("wood-1",), tuple(kept._gained(state, snapshot))):
                    fresh = McgInterpreter(GAME)._new_reveals(state, snapshot, zones, between)
                    assert kept._reveals(state, snapshot, zones, between) == fresh
            everything = piles[:5]
            assert kept._reveals(state, snapshot, everything) == kept._new_reveals(
                state, snapshot, everything
            )


@pytest.mark.parametrize("players", [2, 3])
def test_a_warm_ruleset_applies_moves_as_a_fresh_one(players: int) -> None:
    # Moves applied without saying what turned up: every face-down card is drawn from the
    # pool; a ruleset whose card lookups were filled by earlier moves draws as a fresh one.
    kept = MinecraftCardGame()
    trail = list(states(seed=6, players=players))
    for state in trail[::2]:
        for move in GAME.legal_moves(state):
            assert kept.apply(state, move) == MinecraftCardGame().apply(state, move)


def test_an_unknown_card_is_still_refused() -> None:
    with pytest.raises(UnknownCardError):
        MinecraftCardGame().is_craft("no-such-card")
    with pytest.raises(UnknownCardError):
        GAME.is_resource("no-such-card")
