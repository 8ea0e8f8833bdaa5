"""Unit tests of the Mattel ruleset that scenarios cannot express: errors, views, setup."""

from __future__ import annotations

import pytest

from engine import Audience, MoveFormatError, SetupError, UnknownCardError, get_game
from engine.games.minecraft_card_game import Craft, Mine

GAME = get_game("minecraft-card-game")

SMALL = {
    "resource-pile-1": ["wood-2", "stone-1", "iron-1"],
    "resource-pile-2": ["wood-1", None, None],
    "craft-pile-1": ["wood-hoe", None],
    "set-aside": "diamond-hoe",
}


def test_seeded_setup_is_reproducible_and_deals_the_whole_deck() -> None:
    a = GAME.initial_state(players=3, seed=5)
    b = GAME.initial_state(players=3, seed=5)
    c = GAME.initial_state(players=3, seed=6)
    assert a == b
    assert a != c
    assert [len(p) for p in a.craft_piles] == [6, 6, 6, 6]
    assert a.set_aside is not None
    # Creepers turned up while dealing were discarded (default creeper_at_setup).
    assert all(p[0] != "creeper" for p in a.resource_piles)
    assert sum(len(p) for p in a.resource_piles) + len(a.discard) == 75


def test_malformed_input_raises_clear_errors() -> None:
    with pytest.raises(SetupError, match="2-4 players"):
        GAME.initial_state(players=5, seed=1)
    with pytest.raises(SetupError, match="unknown option 'colour'"):
        GAME.initial_state(players=2, seed=1, options={"colour": "red"})
    with pytest.raises(SetupError, match="choose one of"):
        GAME.initial_state(players=2, seed=1, options={"setup": "sideways"})
    with pytest.raises(SetupError, match="unknown zone 'player-3'"):
        GAME.initial_state(players=2, setup={"player-3": ["wood-1"]})
    with pytest.raises(SetupError, match="deck holds 1"):
        GAME.initial_state(players=2, setup={"player-1": ["diamond-3", "diamond-3"]})
    with pytest.raises(SetupError, match="unknown card 'wood-9'"):
        GAME.initial_state(players=2, setup={"resource-pile-1": ["wood-9"]})
    with pytest.raises(MoveFormatError, match="unknown move 'fly'"):
        GAME.parse_move({"player": 1, "move": "fly"})
    with pytest.raises(MoveFormatError, match="missing field 'pile'"):
        GAME.parse_move({"player": 1, "move": "mine"})
    with pytest.raises(MoveFormatError, match="whole number"):
        GAME.parse_move({"player": 1, "move": "mine", "pile": "three"})
    with pytest.raises(MoveFormatError, match="unknown field"):
        GAME.parse_move({"player": 1, "move": "mine", "pile": 1, "colour": 2})
    state = GAME.initial_state(players=2, setup=SMALL)
    with pytest.raises(UnknownCardError, match="deck list"):
        GAME.apply(state, Mine(player=1, pile=1, card="gold-9"))


def test_unknown_cards_turn_up_from_the_unseen_pool_or_as_seen() -> None:
    state = GAME.initial_state(players=2, setup=SMALL)
    assert state.resource_piles[1][0] == "wood-1"
    seen = GAME.apply(
        state, Mine(player=1, pile=2, reveal=(("resource-pile-2", "gold-3"),))
    ).state
    assert seen.resource_piles[1] == ("gold-3", None)
    assert "gold-3" not in seen.unseen
    drawn = GAME.apply(state, Mine(player=1, pile=2)).state
    assert drawn.resource_piles[1][0] is not None
    assert drawn == GAME.apply(state, Mine(player=1, pile=2)).state  # deterministic


def test_public_view_hides_face_down_cards_the_operator_sees_the_belief() -> None:
    state = GAME.initial_state(players=2, seed=9)
    public = GAME.view(state, Audience.PUBLIC)
    operator = GAME.view(state, Audience.OPERATOR)
    pile = public["zones"]["resource-pile-1"]
    assert pile[0] == state.resource_piles[0][0]
    assert pile[1:] == [None] * (len(state.resource_piles[0]) - 1)
    assert operator["zones"]["resource-pile-1"] == list(state.resource_piles[0])
    face_up = GAME.initial_state(players=2, seed=9, options={"setup": "all-face-up"})
    assert None not in GAME.view(face_up, Audience.PUBLIC)["zones"]["resource-pile-1"]


def test_validate_reports_without_changing_anything() -> None:
    state = GAME.initial_state(players=2, setup={**SMALL, "player-1": ["wood-1"]})
    move = Craft(player=1, card="wood-hoe", source="craft-pile-1", pay=("wood-1",))
    assert [w.code for w in GAME.validate(state, move)] == ["underpaid"]
    assert GAME.initial_state(players=2, setup={**SMALL, "player-1": ["wood-1"]}) == state


def test_a_players_area_is_listed_latest_first_as_it_lies_and_a_setup_reads_it_so() -> None:
    # The card put in an area last lies on top of it: `zones` lists it first, as it lists a
    # pile's top first, and a setup written (or read off a camera) that way means the same.
    state = GAME.initial_state(players=2, setup={**SMALL, "player-1": ["stone-1"]})
    state = GAME.apply(state, Mine(player=1, pile=1)).state
    assert state.areas[0] == ("stone-1", "wood-2")
    assert GAME.zones(state)["player-1"] == ("wood-2", "stone-1")
    again = GAME.initial_state(players=2, setup={**SMALL, "player-1": list(GAME.zones(state)["player-1"])})
    assert again.areas[0] == state.areas[0]


def test_a_setup_read_off_the_table_may_hold_cards_under_the_discard_piles_top_unknown() -> None:
    # Two creepers turned up at the deal and discarded: the camera sees the top one only.
    # (Every resource pile holds cards: an empty one takes the discard pile in at once.)
    piles = {f"resource-pile-{i}": [top, None] for i, top in enumerate(("wood-1", "wood-2", "stone-1", "iron-1", "gold-1"), 1)}
    state = GAME.initial_state(players=2, setup={**piles, "discard": ["creeper", None]})
    assert state.discard == ("creeper",)
    with pytest.raises(SetupError, match="not a card id"):
        GAME.initial_state(players=2, setup={**piles, "discard": ["creeper", 7]})


def test_the_rules_payer_pays_no_card_to_spare() -> None:
    # Wood 2 from a 1 and a 3: the 3 alone (it paid both, the 1 to spare, before 260fed0).
    recipe = {"gold": 1, "wood": 2}
    assert GAME.find_payment(recipe, ["gold-3", "wood-1", "wood-3"], []) == (("gold-3", "wood-3"), ())
    assert GAME.to_spare(recipe, ["gold-3", "wood-1", "wood-3"], 0)
    assert not GAME.to_spare(recipe, ["gold-3", "wood-3"], 0)
    # A wild given back stays free for the next resource.
    assert GAME.find_payment({"wood": 4}, ["wood-3", "wild-1", "wild-3"], []) == (("wood-3", "wild-1"), ())
    assert GAME.to_spare({"wood": 2}, ["wood-1"], 1) and not GAME.to_spare({"wood": 3}, ["wood-1"], 1)


def test_a_resource_set_on_a_craft_pile_or_in_a_holder_by_a_table_change_is_not_crafted() -> None:
    # The camera's desyncs and the operator's corrections set a zone as it reads, whatever
    # lies there: the legal moves then offer nothing to craft from it, and do not fail.
    from engine.games.minecraft_card_game import TableChange

    state = GAME.initial_state(players=2, setup={**SMALL, "player-1": ["wood-2", "wood-1"]})
    for zone in ("craft-pile-1", "reserve-1"):
        changed = GAME.apply(state, TableChange(player=1, zone=zone, cards=("wood-1",))).state
        crafts = [m for m in GAME.legal_moves(changed) if isinstance(m, Craft)]
        assert all(m.card != "wood-1" for m in crafts)
