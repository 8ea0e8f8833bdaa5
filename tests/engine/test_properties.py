"""Properties of random legal games: cards are conserved, replay equals live, games end."""

from __future__ import annotations

from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st

from engine import get_game, replay
from engine.games.minecraft_card_game import McgState
from engine.simulate import simulate_game

GAME = get_game("minecraft-card-game")
DECK = Counter(GAME.catalog.deck())


def check_conservation(state: McgState) -> None:
    zones = GAME.zones(state)
    slots = [c for cards in zones.values() for c in cards]
    known = Counter(c for c in slots if c is not None)
    hidden = sum(1 for c in slots if c is None)
    # Every card of the deck is in exactly one zone: known where it lies, or face down.
    assert len(slots) == sum(DECK.values())
    assert hidden == len(state.unseen)
    assert known + Counter(state.unseen) == DECK
    assert all(n >= 0 for n in (state.actions, state.allowed, *state.skip, *state.owed))
    assert not (known - DECK), "a card is on the table more often than the deck holds it"


@settings(max_examples=25, deadline=None)
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
    # Replaying the journal (a fold of apply) equals the live state.
    again = replay(GAME, GAME.initial_state(players=players, seed=seed), game.moves)
    assert again.state == state == game.final
    # Every game ends, with the winner at or above the target or the craft cards gone.
    assert game.finished
    if game.winner is not None:
        target = {2: 24, 3: 20, 4: 16}[players]
        assert game.scores[game.winner - 1] >= target or not any(state.craft_piles)


@settings(max_examples=15, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    creeper_trigger=st.sampled_from(["mine-only", "any-exposure"]),
    setup=st.sampled_from(["top-card", "all-face-up"]),
)
def test_every_option_plays_legal_games_to_the_end(
    seed: int, creeper_trigger: str, setup: str
) -> None:
    options = {"creeper_trigger": creeper_trigger, "setup": setup, "creeper_at_setup": "attack"}
    game = simulate_game(GAME, players=3, seed=seed, options=options)
    assert game.finished
    assert not game.warnings
    check_conservation(game.final)


def test_moves_round_trip_through_plain_dictionaries() -> None:
    game = simulate_game(GAME, players=4, seed=3)
    for move in game.moves:
        data = GAME.move_to_dict(move)
        assert GAME.parse_move(data) == move
