"""Unit tests of the mk. I rules for what scenarios cannot show: the deck by player count,
per-audience views of hands and face-down piles, setup and move errors, hidden-hand
inference, and the shipped scenario suite covering every warning code and option value."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from engine import Audience, MoveFormatError, SetupError, get_game
from engine.games.minecraft_mk1 import OPTIONS, Code, Mine, MoveCard, Sleep

GAME = get_game("minecraft-mk1")
REPO = Path(__file__).resolve().parents[2]
SCENARIOS = REPO / "datasets" / "scenarios" / "minecraft-mk1"


@pytest.mark.parametrize("players", [2, 3, 4, 5, 6])
def test_deck_scales_with_the_player_count(players: int) -> None:
    state = GAME.initial_state(players=players, seed=1)
    zones = GAME.zones(state)
    held = [c for p in range(1, players + 1) for c in zones[f"inventory-{p}"]]
    assert sorted(held) == sorted(["tree", "food", "food"] * players)
    in_play = [c for z, cards in zones.items() if z in ("wood", "sticks") for c in cards]
    assert in_play.count("wood") == 3 * players
    assert in_play.count("stick") == 2 * players
    for tool in ("sword", "axe", "pickaxe"):
        assert len(zones[tool]) == players - 1
    assert len(zones["armor"]) == 6
    mining = zones["mining"]
    assert mining.count("shiny") == 20 and mining.count("stone") == 3 * players
    food = zones["hunting"].count("food") + 2 * players
    assert food == 20
    assert len(zones["health-1"]) == 6 and len(zones["daylight"]) == 4


def test_player_count_outside_two_to_six_is_an_error() -> None:
    for players in (1, 7):
        with pytest.raises(SetupError, match="2-6 players"):
            GAME.initial_state(players=players, seed=0)


def test_views_hide_hands_and_piles() -> None:
    state = GAME.initial_state(players=3, seed=2)
    public = GAME.view(state, Audience.PUBLIC)
    assert public["zones"]["inventory-1"] == [None, None, None]
    assert all(c is None for c in public["zones"]["mining"])
    assert public["zones"]["health-1"] == ["health"] * 6
    mine = GAME.view(state, Audience.PLAYER, 2)
    assert sorted(mine["zones"]["inventory-2"]) == ["food", "food", "tree"]
    assert mine["zones"]["inventory-1"] == [None, None, None]
    operator = GAME.view(state, Audience.OPERATOR)
    assert sorted(operator["zones"]["inventory-3"]) == ["food", "food", "tree"]
    assert operator["zones"]["mining"][0] in ("stone", "shiny")
    assert public["night"] is False and public["weather_turns_left"] == 0


def test_setup_errors_name_the_zone() -> None:
    with pytest.raises(SetupError, match="unknown zone 'hand-1'"):
        GAME.initial_state(players=2, setup={"hand-1": ["wood"]})
    with pytest.raises(SetupError, match="'furnace' appears 2 times"):
        GAME.initial_state(players=2, setup={"inventory-1": ["furnace"], "hotbar-2": ["furnace"]})
    with pytest.raises(SetupError, match="belongs in pile 'mining'"):
        GAME.initial_state(players=2, setup={"hunting": ["shiny"]})
    with pytest.raises(SetupError, match="health-1"):
        GAME.initial_state(players=2, setup={"health-1": 9})
    with pytest.raises(SetupError, match="unknown card"):
        GAME.initial_state(players=2, setup={"inventory-1": ["diamond"]})
    with pytest.raises(SetupError, match="no room"):
        GAME.initial_state(players=2, setup={"hotbar-1": ["sword", "axe", "pickaxe", "tree"]})
    with pytest.raises(SetupError, match="shinies_to_win"):
        GAME.initial_state(players=2, seed=0, options={"shinies_to_win": 40})


def test_malformed_moves_name_the_field() -> None:
    with pytest.raises(MoveFormatError, match="unknown move 'dig'"):
        GAME.parse_move({"player": 1, "move": "dig"})
    with pytest.raises(MoveFormatError, match="missing field 'card'"):
        GAME.parse_move({"player": 1, "move": "craft"})
    with pytest.raises(MoveFormatError, match="die value is 1-6"):
        GAME.parse_move({"player": 1, "move": "sleep", "roll": 7})
    with pytest.raises(MoveFormatError, match="'to': must be hotbar or inventory"):
        GAME.parse_move({"player": 1, "move": "move", "card": "wood", "to": "table"})
    with pytest.raises(MoveFormatError, match="unknown card 'gold'"):
        GAME.parse_move({"player": 1, "move": "mine", "card": "gold"})
    state = GAME.initial_state(players=2, seed=0)
    with pytest.raises(MoveFormatError, match="player 3 does not exist"):
        GAME.apply(state, Sleep(player=3))
    with pytest.raises(MoveFormatError, match="field 'with'"):
        GAME.apply(state, GAME.parse_move({"player": 1, "move": "trade", "with": 1}))
    with pytest.raises(MoveFormatError, match="slot"):
        GAME.apply(state, GAME.parse_move({"player": 1, "move": "eat", "slot": "hotbar-2-1"}))


def test_liberal_spellings_mean_the_same_move() -> None:
    a = GAME.parse_move({"player": 1, "move": "go-mining", "roll": 4})
    assert a == Mine(player=1, roll=(4,))
    b = GAME.parse_move({"player": 1, "move": "move", "card": "tree", "slot": "hotbar-1-2"})
    assert isinstance(b, MoveCard)
    state = GAME.initial_state(players=2, setup={"inventory-1": ["tree"]})
    after = GAME.apply(state, b).state
    assert GAME.zones(after)["hotbar-1-2"] == ("tree",)
    trade = GAME.parse_move({"player": 1, "move": "trade", "partner": 2, "give": ["wood"]})
    assert GAME.move_to_dict(trade)["with"] == 2


def test_unknown_cards_are_identified_and_counted() -> None:
    state = GAME.initial_state(players=2, setup={"mining": [None, None], "hotbar-1": ["pickaxe"]})
    assert GAME.zones(state)["mining"] == (None, None)
    state = GAME.apply(state, Mine(player=1)).state
    assert GAME.zones(state)["inventory-1"] == (None,)
    assert state.hidden == (("mining",), ())
    # Playing a shiny from that hand identifies the unknown card: no warning.
    step = GAME.apply(state, MoveCard(player=2, card="food"))
    assert [w.code for w in step.warnings] == ["not-owned"]
    step = GAME.apply(step.state, MoveCard(player=1, card="shiny", to="hotbar"))
    assert step.warnings == ()
    assert GAME.zones(step.state)["inventory-1"] == ()
    assert GAME.scores(step.state) == (1, 0)


def _documents() -> list[dict[str, Any]]:
    return [yaml.safe_load(p.read_text(encoding="utf-8")) for p in sorted(SCENARIOS.glob("*.yaml"))]


def test_suite_is_numbered_and_large_enough() -> None:
    files = sorted(SCENARIOS.glob("*.yaml"))
    assert len(files) >= 30
    numbers = [f.name.split("-", 1)[0] for f in files]
    assert all(n.isdigit() and len(n) == 3 for n in numbers)
    assert len(set(numbers)) == len(numbers)


def test_suite_expects_every_warning_code() -> None:
    expected: set[str] = set()
    for doc in _documents():
        for move in doc.get("moves") or []:
            expected.update((move.get("expect") or {}).get("warnings", []))
        for codes in ((doc.get("expect") or {}).get("warnings") or {}).values():
            expected.update([codes] if isinstance(codes, str) else codes)
    assert not {c.value for c in Code} - expected


def test_suite_plays_every_option_value() -> None:
    played: set[tuple[str, str]] = set()
    for doc in _documents():
        given = {str(k).replace("-", "_"): str(v) for k, v in (doc.get("options") or {}).items()}
        for spec in OPTIONS:
            played.add((spec.name, given.get(spec.name, str(spec.default))))
    wanted = {(s.name, str(c)) for s in OPTIONS for c in s.choices}
    assert not wanted - played


@pytest.mark.parametrize("players", [3, 5])
def test_a_table_written_from_zones_sets_up_the_same_table(players: int) -> None:
    """A camera's opening deal is written as `zones()` (the box of set-aside cards included)."""
    ruleset = get_game("minecraft-mk1")
    state = ruleset.initial_state(players=players, seed=11)
    zones = ruleset.zones(state)
    again = ruleset.initial_state(players=players, setup={k: list(v) for k, v in zones.items()})
    assert ruleset.zones(again) == zones
