"""Properties of random legal Explorers games: cards are conserved, replay equals live, games end."""

from __future__ import annotations

from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st

from engine import get_game, replay
from engine.games.minecraft_explorers import HUNGER_CARDS, ExplorersState, Outcome
from engine.simulate import simulate_game

GAME = get_game("minecraft-explorers")
DECK = Counter(GAME.catalog.deck())


def check_conservation(state: ExplorersState) -> None:
    zones = GAME.zones(state)
    slots = [c for cards in zones.values() for c in cards]
    known = Counter(c for c in slots if c is not None and c in DECK)
    hidden = sum(1 for c in slots if c is None or c not in DECK)
    # Every card of the deck is in exactly one zone, known where it lies, or out of sight.
    assert len(slots) + len(state.unseen) - hidden == sum(DECK.values())
    assert known + Counter(state.unseen) == DECK
    assert 0 <= state.spent <= HUNGER_CARDS and state.bonus >= 0 and state.armored >= 0
    assert state.used <= {c for area in state.areas for c in area}, "a damaged tool left its area"


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), players=st.integers(1, 4))
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
    # Every game ends: won with all chests but one filled, or lost to the game-over card.
    assert game.finished
    if state.outcome is Outcome.WON:
        assert game.winner == 0
        assert len(state.filled) >= len(state.chests) - 1
    else:
        assert game.winner is None
        assert "game-over" in state.mobs or not state.mob_deck


@settings(max_examples=15, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    items_pool=st.sampled_from(["per-player", "shared"]),
    difficulty=st.sampled_from(["first-game", "easy", "normal", "hard", "hardcore"]),
    armor_cancels=st.sampled_from(["event", "mob"]),
    drawn_special=st.sampled_from(["ordinary", "extra"]),
    partial_fill=st.sampled_from(["allowed", "forbidden"]),
)
def test_every_option_plays_legal_games_to_the_end(
    seed: int,
    items_pool: str,
    difficulty: str,
    armor_cancels: str,
    drawn_special: str,
    partial_fill: str,
) -> None:
    options = {
        "items_pool": items_pool,
        "difficulty": difficulty,
        "armor_cancels": armor_cancels,
        "drawn_special": drawn_special,
        "partial_fill": partial_fill,
    }
    game = simulate_game(GAME, players=3, seed=seed, options=options)
    assert game.finished
    assert not game.warnings
    check_conservation(game.final)


def test_moves_round_trip_through_plain_dictionaries() -> None:
    for seed in range(4):
        game = simulate_game(GAME, players=2, seed=seed)
        for move in game.moves:
            data = GAME.move_to_dict(move)
            assert GAME.parse_move(data) == move
