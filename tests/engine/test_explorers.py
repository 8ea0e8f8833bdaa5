"""Minecraft: Explorers rules beyond the scenario files: the seeded setup by player count and
difficulty, per-audience views, move decoding and its errors, and the scenario suite's
coverage of every warning code and option value."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import yaml

from engine import Audience, MoveFormatError, ScenarioError, SetupError, get_game
from engine.games.minecraft_explorers import (
    GAME_OVER,
    GAME_OVER_DEPTH,
    OPTIONS,
    REMOVED_MOBS,
    Code,
    EndTurn,
    Explore,
    Fill,
    Outcome,
)
from engine.scenario import parse_scenario, run_scenario

GAME = get_game("minecraft-explorers")
REPO = Path(__file__).resolve().parents[2]
SUITE = REPO / "datasets" / "scenarios" / "minecraft-explorers"


def _documents() -> list[dict[str, Any]]:
    return [yaml.safe_load(p.read_text(encoding="utf-8")) for p in sorted(SUITE.glob("*.yaml"))]


@pytest.mark.parametrize("players", [1, 2, 3, 4])
def test_seeded_setup_follows_the_player_count(players: int) -> None:
    state = GAME.initial_state(players=players, seed=players * 7)
    mobs_in_play = 30 - REMOVED_MOBS[players]
    assert len(state.mob_deck) + len(state.mobs) == mobs_in_play + 1  # + the game-over card
    assert len(state.mobs) == 1 and state.mobs[0] != GAME_OVER
    # The game-over card lies among the bottom four cards it was shuffled into (5 positions).
    assert GAME_OVER in state.mob_deck[-(GAME_OVER_DEPTH + 1) :]
    assert all(len(slot) == 1 for slot in state.display) and len(state.display) == 5
    assert len(state.landscape_deck) == 55
    assert state.chests == ("chest-01", "chest-02", "chest-03", "chest-04", "chest-05")
    assert sum(1 for c in state.unseen if GAME.is_mob(c)) == REMOVED_MOBS[players]
    assert state.current == 1 and state.hunger == 6 and state.outcome is Outcome.PLAYING


def test_seeded_setup_is_reproducible_and_seed_dependent() -> None:
    a = GAME.initial_state(players=2, seed=4)
    assert a == GAME.initial_state(players=2, seed=4)
    assert a.landscape_deck != GAME.initial_state(players=2, seed=5).landscape_deck


@pytest.mark.parametrize(("difficulty", "n"), [("easy", 5), ("normal", 6), ("hard", 7), ("hardcore", 8)])
def test_difficulty_sets_the_number_of_chests(difficulty: str, n: int) -> None:
    state = GAME.initial_state(players=2, seed=9, options={"difficulty": difficulty})
    assert len(state.chests) == n == len(set(state.chests))


def test_view_hides_landscape_backs_and_the_mob_deck() -> None:
    state = GAME.initial_state(players=2, seed=1)
    public = GAME.view(state, Audience.PUBLIC)
    operator = GAME.view(state, Audience.OPERATOR)
    player = GAME.view(state, Audience.PLAYER, 1)
    for view in (public, player):
        assert set(view["zones"]["mob-deck"]) == {None}
        deck = view["zones"]["landscape-deck"]
        assert deck[0] == GAME.landscape_of(state.landscape_deck[0]) and set(deck[1:]) == {None}
        shown = view["zones"]["display-1"][0]
        assert shown == GAME.landscape_of(state.display[0][0]) and "." not in shown
        assert view["zones"]["mobs"] == list(state.mobs)
    assert operator["zones"]["mob-deck"] == list(state.mob_deck)
    assert operator["zones"]["display-1"] == [state.display[0][0]]
    assert public["hunger"] == 6 and public["outcome"] == "playing" and public["to_win"] == 4


def test_winner_is_the_team_after_a_win_and_none_after_a_loss() -> None:
    setup = {
        "mob-deck": [GAME_OVER],
        "chests": ["chest-01", "chest-02"],
        "player-1": ["woods.wood", "taiga.wood"],
    }
    state = GAME.initial_state(players=2, setup=setup)
    won = GAME.apply(state, Fill(player=1, chest="chest-01", items=("woods.wood", "taiga.wood")))
    assert won.state.outcome is Outcome.WON and GAME.winner(won.state) == 0
    assert GAME.is_over(won.state) and GAME.scores(won.state) == (1, 1)
    lost = GAME.apply(state, EndTurn(player=1))
    assert lost.state.outcome is Outcome.LOST and GAME.winner(lost.state) is None
    assert GAME.is_over(lost.state)


def test_explicit_setup_errors_name_the_zone() -> None:
    with pytest.raises(SetupError, match="unknown zone 'display-9'"):
        GAME.initial_state(players=1, setup={"display-9": ["woods.wood"]})
    with pytest.raises(SetupError, match="appears 3 times"):
        GAME.initial_state(players=1, setup={"landscape-deck": ["woods.wood"] * 3})
    with pytest.raises(SetupError, match="cannot lie in 'mob-deck'"):
        GAME.initial_state(players=1, setup={"mob-deck": ["woods.wood"]})
    with pytest.raises(SetupError, match="one landscape"):
        GAME.initial_state(players=1, setup={"display-1": ["woods.wood", "taiga.wood"]})
    with pytest.raises(SetupError, match=r"unknown card 'woods\.diamond'"):
        GAME.initial_state(players=1, setup={"display-1": ["woods.diamond"]})
    with pytest.raises(SetupError, match="1-4 players"):
        GAME.initial_state(players=5, seed=1)
    with pytest.raises(SetupError, match="items_pool"):
        GAME.initial_state(players=2, seed=1, options={"items_pool": "pooled"})
    with pytest.raises(SetupError, match="no tool"):
        GAME.initial_state(players=1, setup={"player-1": ["woods.wood"], "damaged": ["woods.wood"]})


def test_malformed_moves_raise_clear_errors() -> None:
    with pytest.raises(MoveFormatError, match="this game's moves are"):
        GAME.parse_move({"player": 1, "move": "mine", "pile": 1})
    with pytest.raises(MoveFormatError, match="missing field 'landscape'"):
        GAME.parse_move({"player": 1, "move": "explore"})
    with pytest.raises(MoveFormatError, match="unknown field"):
        GAME.parse_move({"player": 1, "move": "fight", "mob": "zombie", "swords": ["x"]})
    state = GAME.initial_state(players=1, setup={"mob-deck": [GAME_OVER]})
    with pytest.raises(MoveFormatError, match=r"chest-01\.\.chest-12"):
        GAME.apply(state, GAME.parse_move({"player": 1, "move": "fill", "chest": "box", "items": []}))
    with pytest.raises(MoveFormatError, match="name a 'chest'"):
        GAME.apply(state, GAME.parse_move({"player": 1, "move": "fill"}))
    with pytest.raises(SetupError, match="does not exist"):
        GAME.apply(state, EndTurn(player=3))


def test_moves_with_mappings_round_trip() -> None:
    data = {
        "player": 2,
        "move": "fill",
        "chests": {"chest-01": ["woods.wood", "taiga.wood"], "chest-10": ["woods.apple"]},
        "defeat": ["zombie"],
    }
    move = GAME.parse_move(data)
    assert isinstance(move, Fill)
    assert move.chests == (("chest-01", "woods.wood", "taiga.wood"), ("chest-10", "woods.apple"))
    assert GAME.parse_move(GAME.move_to_dict(move)) == move
    end = GAME.parse_move({"player": 1, "move": "end-turn", "reveal": {"mobs": ["zombie", "witch"]}})
    assert GAME.move_to_dict(end)["reveal"] == {"mobs": ["zombie", "witch"]}
    explore = GAME.parse_move(
        {"player": 1, "move": "explore", "landscape": 3, "reveal": {"display-3": "woods.apple"}}
    )
    assert isinstance(explore, Explore) and explore.landscape == "display-3"
    assert GAME.parse_move(GAME.move_to_dict(explore)) == explore


def test_scenario_suite_is_numbered_and_large_enough() -> None:
    files = sorted(SUITE.glob("*.yaml"))
    assert len(files) >= 30
    numbers = [f.name.split("-", 1)[0] for f in files]
    assert all(n.isdigit() and len(n) == 3 for n in numbers), numbers
    assert len(set(numbers)) == len(numbers)


def test_scenario_suite_expects_every_warning_code() -> None:
    expected: set[str] = set()
    for doc in _documents():
        for move in doc.get("moves") or []:
            expected.update((move.get("expect") or {}).get("warnings", []))
        for codes in ((doc.get("expect") or {}).get("warnings") or {}).values():
            expected.update([codes] if isinstance(codes, str) else codes)
    missing = {c.value for c in Code} - expected
    assert not missing, f"no scenario expects {sorted(missing)}"


def test_scenario_suite_plays_every_option_value() -> None:
    played: set[tuple[str, str]] = set()
    for doc in _documents():
        given = {str(k).replace("-", "_"): str(v) for k, v in (doc.get("options") or {}).items()}
        for spec in OPTIONS:
            played.add((spec.name, given.get(spec.name, str(spec.default))))
    missing = {(s.name, str(c)) for s in OPTIONS for c in s.choices} - played
    assert not missing, f"no scenario plays {sorted(missing)}"


def test_game_expectations_are_checked_and_unknown_keys_rejected() -> None:
    doc = {
        "game": "minecraft-explorers",
        "players": 1,
        "setup": {"mob-deck": [GAME_OVER]},
        "moves": [{"player": 1, "move": "end-turn"}],
        "expect": {"outcome": "won", "hunger": 6},
    }
    result = run_scenario(parse_scenario(doc))
    assert any("outcome expected won, got lost" in m for m in result.mismatches)
    with pytest.raises(ScenarioError, match="unknown field"):
        parse_scenario({**doc, "expect": {"chests_left": 3}})
    # Another game does not accept this game's expectation keys.
    with pytest.raises(ScenarioError, match="unknown field"):
        parse_scenario({**doc, "game": "minecraft-card-game", "expect": {"outcome": "won"}})


def test_hidden_cards_are_drawn_reproducibly_from_the_unseen_pool() -> None:
    setup = {"mob-deck": [None] * 6, "display-1": ["woods"]}
    state = GAME.initial_state(players=1, setup=setup, seed=3)
    a = GAME.apply(state, EndTurn(player=1)).state
    assert a == GAME.apply(state, EndTurn(player=1)).state
    # One mob (the table was empty, so it is new); never the game-over card, which hides only
    # among the bottom cards of the deck.
    assert len(a.mobs) == 1 and GAME.is_mob(a.mobs[0])
    b = GAME.apply(state, Explore(player=1, landscape="display-1")).state
    assert GAME.landscape_of(b.areas[0][0]) == "woods"
    assert Counter(b.unseen)[b.areas[0][0]] == Counter(state.unseen)[b.areas[0][0]] - 1
