"""Properties of random legal Angry Birds games: cards conserved, replay equals live, games end."""

from __future__ import annotations

from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st

from engine import get_game, replay
from engine.games.angry_birds_power_cards import AbState
from engine.simulate import simulate_game

GAME = get_game("angry-birds-power-cards")
DECK = Counter(GAME.catalog.deck())


def check_conservation(state: AbState) -> None:
    slots = [c for cards in GAME.zones(state).values() for c in cards]
    known = Counter(c for c in slots if c is not None)
    assert len(slots) + len(state.unseen) - sum(c is None for c in slots) == sum(DECK.values())
    assert known + Counter(state.unseen) == DECK
    assert all(0 <= n <= len(d) for n, d in zip(state.ordered, state.decks, strict=True))
    for p in state.out:
        assert GAME.cards_held(state, p) == 0, "a player who is out holds cards"


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 10_000), players=st.integers(2, 4))
def test_random_legal_games_conserve_cards_and_replay(seed: int, players: int) -> None:
    game = simulate_game(GAME, players=players, seed=seed)
    state = GAME.initial_state(players=players, seed=seed)
    check_conservation(state)
    for move in game.moves:
        step = GAME.apply(state, move)
        assert step.warnings == (), f"a legal move raised {step.warnings}"
        state = step.state
        check_conservation(state)
    again = replay(GAME, GAME.initial_state(players=players, seed=seed), game.moves)
    assert again.state == state == game.final
    assert game.finished
    alive = [p for p in range(1, players + 1) if p not in state.out]
    if state.quick:  # the quick ending: most cards wins, a tie is a draw
        assert len(alive) == 2 and (game.winner is None or game.winner in alive)
    else:  # the last player with cards wins
        assert alive == [game.winner]


@settings(max_examples=10, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    tie=st.sampled_from(["against-pig", "pig-wins"]),
    structures=st.sampled_from(["one-in-progress", "one-per-material"]),
    leader=st.sampled_from(["round-winner", "next-seat"]),
    variant=st.sampled_from(["classic", "quick"]),
)
def test_every_option_plays_legal_games_to_the_end(
    seed: int, tie: str, structures: str, leader: str, variant: str
) -> None:
    options = {"slingshot_tie": tie, "structures": structures, "leader": leader, "variant": variant}
    game = simulate_game(GAME, players=2, seed=seed, options=options)
    assert game.finished
    assert not game.warnings
    check_conservation(game.final)


def test_moves_round_trip_through_plain_dictionaries() -> None:
    game = simulate_game(GAME, players=3, seed=4)
    for move in game.moves:
        assert GAME.parse_move(GAME.move_to_dict(move)) == move
