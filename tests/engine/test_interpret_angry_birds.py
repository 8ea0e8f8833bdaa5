"""Snapshots of an Angry Birds table become moves: cards laid, collected, tied, built.

Each test renders the table a target state should show (fronts in battle slots, the backs of
deck tops and structures, pile heights) as a snapshot with ranked candidates, and checks that
the interpreter finds the moves that lead from the belief to that state, including the stat
nobody can see named.
"""

from __future__ import annotations

from typing import Any

from engine import get_game
from engine.games.angry_birds_power_cards import AbState
from engine.interpret import Interpreter
from engine.interpreters import interpreter_for
from engine.snapshot import Candidate, SeenCard, TableSnapshot, ZoneKind

GAME = get_game("angry-birds-power-cards")
LOOK = interpreter_for(GAME)
SETUP = {
    "deck-1": ["red-1", "bomb-3", "hal-1"],
    "deck-2": ["blues-1", "stella-2", "chuck-3"],
}


def _state(*moves: dict[str, Any], setup: dict[str, Any] | None = None) -> AbState:
    state = GAME.initial_state(players=2, setup=setup or SETUP)
    for data in moves:
        state = GAME.apply(state, GAME.parse_move(data)).state
    return state


def _snapshot(state: AbState, frame: int = 1, noise: str = "chuck-1") -> TableSnapshot:
    """What the camera would report for `state`: every face first, a wrong face second."""
    zones: dict[str, tuple[SeenCard, ...]] = {}
    counts: dict[str, int] = {}
    for zone, expected in LOOK.appearance(state).items():
        faces = [f or "back.pig" for f in expected.faces]
        zones[zone] = tuple(
            SeenCard(candidates=(Candidate(face=f, score=0.9), Candidate(face=noise, score=0.1)))
            for f in faces
        )
        if expected.kind is ZoneKind.PILE:
            counts[zone] = expected.count
    return TableSnapshot(
        frame=frame, time=frame / 30, zones=zones, counts=counts, settled=frozenset(zones)
    )


def _moves(before: AbState, after: AbState) -> list[dict[str, Any]]:
    result = Interpreter(GAME).observe(before, _snapshot(after))
    assert not result.pending and not result.desync
    return [GAME.move_to_dict(m) for m in result.moves]


def test_a_card_laid_in_a_battle_slot_is_a_play() -> None:
    before = _state({"player": 1, "move": "name-stat", "stat": "power"})
    after = _state(
        {"player": 1, "move": "name-stat", "stat": "power"},
        {"player": 1, "move": "play", "card": "red-1"},
    )
    assert _moves(before, after) == [{"player": 1, "move": "play", "card": "red-1"}]


def test_nothing_changed_is_no_move() -> None:
    state = _state({"player": 1, "move": "play", "card": "red-1"})
    result = Interpreter(GAME).observe(state, _snapshot(state))
    assert result.moves == () and not result.pending


def test_cards_collected_by_the_winner_name_the_stat_and_the_take() -> None:
    laid = (
        {"player": 1, "move": "play", "card": "red-1"},
        {"player": 2, "move": "play", "card": "blues-1"},
    )
    before = _state(*laid)
    # Red 1 wins power and aim, distance ties, Blues 1 wins rarity (2 against 1): player 2
    # collecting means the stat was rarity.
    after = _state(*laid, {"player": 1, "move": "name-stat", "stat": "rarity"},
                   {"player": 2, "move": "take"})
    moves = _moves(before, after)
    assert moves == [
        {"player": 1, "move": "name-stat", "stat": "rarity"},
        {"player": 2, "move": "take"},
    ]


def test_a_tie_moved_to_the_pot() -> None:
    setup = {"deck-1": ["red-1", "bomb-3"], "deck-2": ["hal-3", "stella-2"]}
    laid = (
        {"player": 1, "move": "name-stat", "stat": "power"},
        {"player": 1, "move": "play", "card": "red-1"},
        {"player": 2, "move": "play", "card": "hal-3"},
    )
    before = _state(*laid, setup=setup)
    after = _state(*laid, {"move": "to-pot"}, setup=setup)
    assert _moves(before, after) == [{"player": 0, "move": "to-pot"}]


def test_won_parts_placed_on_the_structure_are_a_build() -> None:
    setup = {"deck-1": ["red-1", "bomb-3"], "deck-2": ["stella-2", "chuck-3"]}
    played = (
        {"player": 1, "move": "name-stat", "stat": "power"},
        {"player": 1, "move": "play", "card": "red-1"},
        {"player": 2, "move": "play", "card": "stella-2"},
        {"player": 1, "move": "take"},
    )
    before = _state(*played, setup=setup)
    after = _state(*played, {"player": 1, "move": "build", "cards": ["red-1", "stella-2"]},
                   setup=setup)
    moves = _moves(before, after)
    assert sorted(m["cards"][0] for m in moves) == ["red-1", "stella-2"]
    assert all(m["move"] == "build" and m["player"] == 1 for m in moves)


def test_an_unexplained_battle_card_becomes_a_correction_after_waiting() -> None:
    before = _state({"player": 1, "move": "play", "card": "red-1"})
    seen = _snapshot(before)
    zones = dict(seen.zones)
    zones["battle-2"] = (
        SeenCard(candidates=(Candidate(face="king-pig", score=0.9),)),
        SeenCard(candidates=(Candidate(face="chef-pig", score=0.9),)),
    )
    interpreter = Interpreter(GAME)
    first = interpreter.observe(before, TableSnapshot(
        frame=1, time=0.0, zones=zones, counts=seen.counts, settled=seen.settled))
    assert first.pending
    late = interpreter.observe(before, TableSnapshot(
        frame=100, time=5.0, zones=zones, counts=seen.counts, settled=seen.settled))
    assert late.desync
    assert GAME.zones(late.state)["battle-2"] == ("king-pig", "chef-pig")
