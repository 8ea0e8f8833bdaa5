"""Properties of random legal mk. I games: cards are conserved, replay equals live, games end."""

from __future__ import annotations

from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st

from engine import get_game, replay
from engine.games.minecraft_mk1 import CAP, DAYLIGHT, OPTIONS, Mk1State
from engine.simulate import simulate_game

GAME = get_game("minecraft-mk1")
DECK = Counter(GAME.catalog.deck())


def check_conservation(state: Mk1State) -> None:
    zones = GAME.zones(state)
    # Hotbar slots (`hotbar-N-I`) repeat what `hotbar-N` holds: count each card once.
    card_zones = {
        z: cards
        for z, cards in zones.items()
        if not (z.startswith("hotbar-") and z.count("-") == 2)
        and not z.startswith(("health-", "hunger-"))
        and z not in ("daylight", "die")
    }
    slots = [c for cards in card_zones.values() for c in cards]
    known = Counter(c for c in slots if c is not None)
    hidden = sum(1 for c in slots if c is None)
    # Every card of the box is in exactly one place: known where it lies, or unseen.
    assert known + Counter(state.unseen) == DECK
    assert hidden <= len(state.unseen)
    assert all(0 <= n <= CAP for n in (*state.health, *state.hunger))
    assert 0 <= state.daylight <= DAYLIGHT and 0 <= state.die <= 6
    for hotbar in state.hotbars:
        assert len(hotbar) == 3
        for stack in hotbar:
            assert len(set(stack)) <= 1, "a hotbar slot holds one card or one material stack"


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 10_000), players=st.integers(2, 6))
def test_random_legal_games_conserve_cards_and_replay(seed: int, players: int) -> None:
    game = simulate_game(GAME, players=players, seed=seed, options={"shinies_to_win": 6})
    state = GAME.initial_state(players=players, seed=seed, options={"shinies_to_win": 6})
    check_conservation(state)
    for move in game.moves:
        step = GAME.apply(state, move)
        assert step.warnings == (), f"a legal move raised {step.warnings}"
        state = step.state
        check_conservation(state)
    # Replaying the journal (a fold of apply) equals the live state.
    again = replay(GAME, GAME.initial_state(players=players, seed=seed,
                                            options={"shinies_to_win": 6}), game.moves)
    assert again.state == state == game.final
    assert game.finished
    assert game.winner is not None and game.scores[game.winner - 1] >= 6


@settings(max_examples=6, deadline=None)
@given(seed=st.integers(0, 10_000), players=st.integers(2, 4))
def test_default_games_end_with_twenty_shinies(seed: int, players: int) -> None:
    game = simulate_game(GAME, players=players, seed=seed)
    assert game.finished and not game.warnings
    assert game.winner is not None and game.scores[game.winner - 1] == 20


SLOW = {("starving", "lose-health"), ("harvest_yield", "drawn-card")}


@settings(max_examples=12, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    choice=st.sampled_from(
        [(spec.name, value) for spec in OPTIONS for value in spec.choices if value != spec.default]
    ),
)
def test_every_option_plays_legal_games(seed: int, choice: tuple[str, str]) -> None:
    options = {choice[0]: choice[1], "shinies_to_win": 5}
    game = simulate_game(GAME, players=2, seed=seed, options=options, max_moves=2000)
    assert not game.warnings
    check_conservation(game.final)
    # Starving players spend every action on food, and a harvest that yields by the drawn card
    # seldom gives wood: the simple simulated players take thousands of moves there.
    if choice not in SLOW:
        assert game.finished


def test_moves_round_trip_through_plain_dictionaries() -> None:
    game = simulate_game(GAME, players=3, seed=3, options={"shinies_to_win": 5})
    assert game.moves
    for move in game.moves:
        data = GAME.move_to_dict(move)
        assert GAME.parse_move(data) == move
