"""Angry Birds Power Cards: what scenarios cannot show.

The referee's result before anyone counts (`round_result`, `view()['pending_round']`), what each
audience sees of the face-down decks, dealing by player count, option and setup errors, and
clear errors for malformed moves.
"""

from __future__ import annotations

from typing import Any

import pytest

from engine import Audience, MoveFormatError, SetupError, get_game
from engine.errors import UnknownCardError
from engine.games.angry_birds_power_cards import AbState, RoundKind, Stat

GAME = get_game("angry-birds-power-cards")
SETUP = {"deck-1": ["red-1", "chuck-3"], "deck-2": ["hal-3", "chuck-2"], "deck-3": ["blues-1"]}


def _play(state: AbState, *moves: dict[str, Any]) -> AbState:
    for data in moves:
        state = GAME.apply(state, GAME.parse_move(data)).state
    return state


def test_the_referee_announces_the_result_before_anyone_counts() -> None:
    state = GAME.initial_state(players=3, setup=SETUP)
    state = _play(
        state,
        {"player": 1, "move": "play", "card": "red-1"},
        {"player": 2, "move": "play", "card": "hal-3"},
        {"player": 3, "move": "play", "card": "blues-1"},
    )
    pending = GAME.view(state, Audience.PUBLIC)["pending_round"]
    assert pending["stat"] is None and not pending["complete"]
    assert pending["cards"] == {"1": "red-1", "2": "hal-3", "3": "blues-1"}
    # Before the stat is named, the outcome of every stat is ready to announce.
    assert pending["by_stat"]["power"] == {"winner": None, "tied": [1, 2]}
    assert pending["by_stat"]["aim"] == {"winner": 2, "tied": []}
    assert pending["by_stat"]["distance"] == {"winner": None, "tied": [1, 3]}
    assert pending["by_stat"]["rarity"] == {"winner": 2, "tied": []}
    named = _play(state, {"player": 1, "move": "name-stat", "stat": "rarity"})
    result = GAME.round_result(named)
    assert result.complete and result.winner == 2 and result.stat is Stat.RARITY
    assert result.values == {1: 1, 2: 3, 3: 2}
    # Nothing moved yet: the cards still lie in the battle slots.
    assert GAME.zones(named)["battle-2"] == ("hal-3",)
    tie = _play(state, {"player": 1, "move": "name-stat", "stat": "power"})
    assert GAME.view(tie, Audience.PUBLIC)["pending_round"]["tied"] == [1, 2]


def test_a_slingshot_round_result_names_the_pig() -> None:
    state = GAME.initial_state(
        players=2,
        setup={
            "structure-1": ["chuck-1", "blues-1", "bubbles-1"],
            "deck-1": ["bomb-3", "hal-1"],
            "deck-2": ["minion-pig-2", "chuck-2", "stella-3"],
        },
    )
    state = _play(
        state,
        {"player": 1, "move": "name-stat", "stat": "power"},
        {"player": 1, "move": "play", "card": "bomb-3"},
        {"player": 2, "move": "play", "card": "minion-pig-2"},
        {"player": 1, "move": "build", "cards": ["minion-pig-2"]},
    )
    assert state.kind is RoundKind.SLINGSHOT and state.participants == (2,)
    state = _play(state, {"player": 2, "move": "play", "card": "chuck-2"})
    pending = GAME.view(state, Audience.PUBLIC)["pending_round"]
    assert pending["kind"] == "slingshot" and pending["pig_owner"] == 1
    assert pending["values"] == {"1": 9, "2": 3} and pending["winner"] == 1


def test_decks_are_hidden_except_a_players_own_top_card() -> None:
    state = GAME.initial_state(players=3, setup=SETUP)
    public = GAME.view(state, Audience.PUBLIC)
    assert public["zones"]["deck-1"] == [None, None]
    own = GAME.view(state, Audience.PLAYER, 1)
    assert own["zones"]["deck-1"] == ["red-1", None]
    assert own["zones"]["deck-2"] == [None, None]
    assert GAME.view(state, Audience.OPERATOR)["zones"]["deck-2"] == ["hal-3", "chuck-2"]
    played = _play(state, {"player": 1, "move": "play", "card": "red-1"})
    assert GAME.view(played, Audience.PUBLIC)["zones"]["battle-1"] == ["red-1"]
    assert public["pending_round"] is None


@pytest.mark.parametrize(("players", "each"), [(2, 18), (3, 12), (4, 9)])
def test_a_seeded_deal_is_even_and_uses_every_card(players: int, each: int) -> None:
    state = GAME.initial_state(players=players, seed=5)
    assert [len(d) for d in state.decks] == [each] * players
    cards = [c for d in state.decks for c in d] + list(state.pot)
    assert sorted(c for c in cards if c) == sorted(GAME.catalog.deck())
    assert state == GAME.initial_state(players=players, seed=5)
    assert state != GAME.initial_state(players=players, seed=6)


def test_setup_and_option_errors_are_clear() -> None:
    with pytest.raises(SetupError, match="2-4 players"):
        GAME.initial_state(players=5)
    with pytest.raises(SetupError, match="unknown zone 'deck-3' for 2 players"):
        GAME.initial_state(players=2, setup={"deck-3": ["red-1"]})
    with pytest.raises(SetupError, match="'red-1' appears 2 times"):
        GAME.initial_state(players=2, setup={"deck-1": ["red-1"], "deck-2": ["red-1"]})
    with pytest.raises(SetupError, match="unknown card 'red-9'"):
        GAME.initial_state(players=2, setup={"deck-1": ["red-9"]})
    with pytest.raises(SetupError, match="unknown deck cards but only"):
        GAME.initial_state(players=2, setup={"deck-1": 30, "deck-2": 30})
    with pytest.raises(SetupError, match="'variant: quick' is for 2 players"):
        GAME.initial_state(players=3, options={"variant": "quick"})
    with pytest.raises(SetupError, match="slingshot_tie"):
        GAME.initial_state(players=2, options={"slingshot_tie": "coin-toss"})
    with pytest.raises(SetupError, match="first_player"):
        GAME.initial_state(players=2, options={"first_player": 3})
    assert GAME.initial_state(players=3, options={"first_player": 3}, seed=1).current == 3


def test_malformed_moves_name_the_field_and_the_allowed_values() -> None:
    with pytest.raises(MoveFormatError, match="unknown stat 'speed'; name one of: power, distance, aim, rarity"):
        GAME.parse_move({"player": 1, "move": "name-stat", "stat": "speed"})
    with pytest.raises(MoveFormatError, match="unknown move 'shoot'"):
        GAME.parse_move({"player": 1, "move": "shoot"})
    with pytest.raises(MoveFormatError, match="missing field 'player'"):
        GAME.parse_move({"move": "play", "card": "red-1"})
    with pytest.raises(MoveFormatError, match="missing field 'cards'"):
        GAME.parse_move({"player": 1, "move": "build"})
    with pytest.raises(UnknownCardError, match="unknown card 'red-7'"):
        GAME.parse_move({"player": 1, "move": "play", "card": "red-7"})
    state = GAME.initial_state(players=2, seed=1)
    with pytest.raises(SetupError, match="player 3 does not exist"):
        GAME.apply(state, GAME.parse_move({"player": 3, "move": "play"}))


def test_aliases_decode_to_the_documented_moves() -> None:
    assert GAME.parse_move({"player": 1, "move": "choose-stat", "stat": "Portée"}) == (
        GAME.parse_move({"player": 1, "move": "name-stat", "stat": "distance"})
    )
    assert GAME.move_to_dict(GAME.parse_move({"player": 2, "move": "place", "card": "red-1"})) == {
        "player": 2, "move": "build", "cards": ["red-1"],
    }
    assert GAME.parse_move({"move": "tie"}) == GAME.parse_move({"move": "to-pot"})


# -- a tie whose stat nobody heard --------------------------------------------------------------

# Chuck 1 and Red 2 tie under distance (8) and rarity (2); Chuck 1 wins power, Red 2 aim.
UNHEARD = {"deck-1": ["chuck-1", "hal-1", "red-1"], "deck-2": ["red-2", "chuck-2", "bomb-1"]}
_POT = (
    {"player": 1, "move": "play", "card": "chuck-1"},
    {"player": 2, "move": "play", "card": "red-2"},
    {"move": "to-pot"},
)


def _warnings(state: AbState, data: dict[str, Any]) -> tuple[AbState, list[str]]:
    step = GAME.apply(state, GAME.parse_move(data))
    return step.state, [w.code for w in step.warnings]


def test_an_unheard_tie_keeps_the_stats_it_tied_under() -> None:
    fresh = GAME.initial_state(players=2, setup=UNHEARD)
    assert fresh.possible == (Stat.POWER, Stat.DISTANCE, Stat.AIM, Stat.RARITY)
    laid = _play(fresh, *_POT[:2])
    state, codes = _warnings(laid, dict(_POT[2]))
    assert codes == []
    assert state.kind is RoundKind.TIEBREAK and state.stat is None
    assert state.possible == (Stat.DISTANCE, Stat.RARITY)
    assert state.participants == (1, 2)
    view = GAME.view(state, Audience.PUBLIC)
    assert view["stat"] is None and view["possible_stats"] == ["distance", "rarity"]
    replay = _play(
        state,
        {"player": 1, "move": "play", "card": "hal-1"},
        {"player": 2, "move": "play", "card": "chuck-2"},
    )
    result = GAME.round_result(replay)
    # Only the stats still possible are announced: Chuck 2 wins distance, Hal 1 rarity.
    assert {k: dict(v) for k, v in result.by_stat.items()} == {
        "distance": {"winner": 2, "tied": []},
        "rarity": {"winner": 1, "tied": []},
    }
    assert {k: dict(v) for k, v in result.values_by_stat.items()} == {
        "distance": {1: 9, 2: 10},
        "rarity": {1: 4, 2: 1},
    }
    assert not result.complete and result.winner is None
    pending = GAME.view(replay, Audience.PUBLIC)["pending_round"]
    assert list(pending["by_stat"]) == ["distance", "rarity"]
    # Either player may collect: each wins under a stat the tie may be replayed with.
    for taker in (1, 2):
        after, codes = _warnings(replay, {"player": taker, "move": "take"})
        assert codes == [], taker
        assert GAME.scores(after)[taker - 1] == 5
        assert after.kind is RoundKind.STAT and after.stat is None
        assert after.possible == (Stat.POWER, Stat.DISTANCE, Stat.AIM, Stat.RARITY)
    # As the referee says: the stats disagree, so there is no winner to give the cards to.
    same, codes = _warnings(replay, {"move": "take"})
    assert codes == ["round-not-finished"]
    assert GAME.round_result(same).cards == result.cards
    # The moves a simulated player could make: either take.
    assert sorted(GAME.move_to_dict(m)["player"] for m in GAME.legal_moves(replay)) == [1, 2]


# Chuck 1 and Matilda 1 tie under power (7), Chuck 1 and Stella 3 under distance (8).
DISAGREE = {
    "deck-1": ["chuck-1", "hal-1"], "deck-2": ["matilda-1", "bomb-3"],
    "deck-3": ["stella-3", "blues-1"],
}
_DISAGREE_POT = (
    {"player": 1, "move": "play", "card": "chuck-1"},
    {"player": 2, "move": "play", "card": "matilda-1"},
    {"player": 3, "move": "play", "card": "stella-3"},
)


def test_an_unheard_tie_remembers_who_tied_under_each_stat() -> None:
    state = _play(GAME.initial_state(players=3, setup=DISAGREE), *_DISAGREE_POT)
    by_stat = GAME.round_result(state).by_stat
    assert by_stat["power"]["tied"] == [1, 2] and by_stat["distance"]["tied"] == [1, 3]
    state, codes = _warnings(state, {"move": "to-pot"})
    assert codes == []
    # Player 2 replays only if it was power, player 3 only if distance: both may lay a card.
    assert state.participants == (1, 2, 3)
    assert state.possible == (Stat.POWER, Stat.DISTANCE)
    assert state.tied_under == ((Stat.POWER, (1, 2)), (Stat.DISTANCE, (1, 3)))
    view = GAME.view(state, Audience.PUBLIC)
    assert view["tied_under"] == {"power": [1, 2], "distance": [1, 3]}
    # Player 1 replays under both: their card tells nothing, and nothing is announced yet.
    first, codes = _warnings(state, {"player": 1, "move": "play", "card": "hal-1"})
    assert codes == [] and first.possible == (Stat.POWER, Stat.DISTANCE)
    result = GAME.round_result(first)
    assert result.waiting == (2, 3) and not result.complete and not result.by_stat
    _, codes = _warnings(first, {"player": 1, "move": "take"})
    assert codes == ["round-not-finished"]
    moves = {(m.NAME, m.player, getattr(m, "stat", "")) for m in GAME.legal_moves(first)}
    assert moves == {
        ("play", 2, ""), ("play", 3, ""), ("name-stat", 1, "power"), ("name-stat", 1, "distance"),
    }


def test_the_replay_is_decided_by_the_players_who_really_replay() -> None:
    state = _play(GAME.initial_state(players=3, setup=DISAGREE), *_DISAGREE_POT,
                  {"move": "to-pot"}, {"player": 1, "move": "play", "card": "hal-1"})
    # Player 2 lays: they are tied under power only, so the stat was power.
    power, codes = _warnings(state, {"player": 2, "move": "play", "card": "bomb-3"})
    assert codes == []
    assert power.stat is Stat.POWER and power.possible == () and power.tied_under == ()
    assert power.participants == (1, 2)
    result = GAME.round_result(power)
    assert result.complete and result.winner == 2 and result.values == {1: 5, 2: 10}
    pending = GAME.view(power, Audience.PUBLIC)["pending_round"]
    assert pending["complete"] and pending["winner"] == 2 and pending["waiting"] == []
    # Bomb 3 wins power; Hal 1 would win distance, which player 2's card ruled out.
    for data, want in (
        ({"player": 2, "move": "take"}, []),
        ({"move": "take"}, []),
        ({"player": 1, "move": "take"}, ["wrong-winner"]),
        ({"player": 3, "move": "take"}, ["wrong-winner"]),
        ({"move": "to-pot"}, ["wrong-winner"]),
    ):
        after, codes = _warnings(power, data)
        assert codes == want, data
    after, _ = _warnings(power, {"player": 2, "move": "take"})
    assert GAME.scores(after) == (0, 5, 1) and after.out == (1,)
    # Player 3 lays instead: tied under distance only, so the stat was distance.
    distance, codes = _warnings(state, {"player": 3, "move": "play", "card": "blues-1"})
    assert codes == [] and distance.stat is Stat.DISTANCE and distance.participants == (1, 3)
    result = GAME.round_result(distance)
    assert result.complete and result.winner == 1 and result.values == {1: 9, 3: 4}
    after, codes = _warnings(distance, {"player": 1, "move": "take"})
    assert codes == [] and GAME.scores(after) == (5, 1, 0)
    # Once complete, a card of player 2 (not tied under distance) starts the next round.
    after, codes = _warnings(distance, {"player": 2, "move": "play", "card": "bomb-3"})
    assert codes == [] and after.kind is RoundKind.STAT and after.out == (3,)
    assert GAME.zones(after)["battle-2"] == ("bomb-3",) and GAME.scores(after)[0] == 5
    # Before it is complete, player 2's card is flagged: player 3's card ruled power out.
    early = _play(GAME.initial_state(players=3, setup=DISAGREE), *_DISAGREE_POT,
                  {"move": "to-pot"}, {"player": 3, "move": "play", "card": "blues-1"})
    assert early.stat is Stat.DISTANCE and GAME.round_result(early).waiting == (1,)
    _, codes = _warnings(early, {"player": 2, "move": "play", "card": "bomb-3"})
    assert codes == ["not-in-round"]


def test_an_unheard_replay_is_announced_once_complete_under_one_stat() -> None:
    # Matilda 3 and Blues 2 tie under power (8); all three tie under distance (10).
    state = _play(GAME.initial_state(players=3, setup={
        "deck-1": ["matilda-3", "hal-1", "red-1"], "deck-2": ["blues-2", "bomb-3", "red-2"],
        "deck-3": ["chuck-2", "stella-3", "chuck-3"],
    }), {"player": 1, "move": "play", "card": "matilda-3"},
        {"player": 2, "move": "play", "card": "blues-2"},
        {"player": 3, "move": "play", "card": "chuck-2"},
        {"move": "to-pot"})
    assert state.tied_under == ((Stat.POWER, (1, 2)), (Stat.DISTANCE, (1, 2, 3)))
    state = _play(state, {"player": 1, "move": "play", "card": "hal-1"},
                  {"player": 2, "move": "play", "card": "bomb-3"})
    # Complete under power (Bomb 3 wins); under distance player 3 may still lay.
    result = GAME.round_result(state)
    assert {k: dict(v) for k, v in result.by_stat.items()} == {
        "power": {"winner": 2, "tied": []},
    }
    assert result.complete and result.winner == 2 and result.stat is None
    assert result.waiting == ()
    assert {(m.NAME, m.player) for m in GAME.legal_moves(state)} == {("take", 2)}
    after, codes = _warnings(state, {"player": 2, "move": "take"})
    assert codes == [] and GAME.scores(after) == (1, 6, 2)
    # Player 3's card belongs to the replay: it rules power out, and distance decides.
    late, codes = _warnings(state, {"player": 3, "move": "play", "card": "stella-3"})
    assert codes == [] and late.stat is Stat.DISTANCE and late.participants == (1, 2, 3)
    result = GAME.round_result(late)
    assert result.complete and result.winner == 1 and result.values == {1: 9, 2: 2, 3: 8}
    _, codes = _warnings(late, {"player": 2, "move": "take"})
    assert codes == ["wrong-winner"]


def test_naming_a_stat_in_a_disagreeing_replay_says_who_replays() -> None:
    state = _play(GAME.initial_state(players=3, setup=DISAGREE), *_DISAGREE_POT,
                  {"move": "to-pot"})
    named, codes = _warnings(state, {"player": 1, "move": "name-stat", "stat": "distance"})
    assert codes == [] and named.stat is Stat.DISTANCE and named.participants == (1, 3)
    _, codes = _warnings(named, {"player": 2, "move": "play", "card": "bomb-3"})
    assert codes == ["not-in-round"]


def test_an_unheard_pot_with_no_tie_under_any_stat_is_a_wrong_winner() -> None:
    setup = {"deck-1": ["chuck-1", "red-1"], "deck-2": ["hal-1", "bomb-1"]}
    state = _play(GAME.initial_state(players=2, setup=setup),
                  {"player": 1, "move": "play", "card": "chuck-1"},
                  {"player": 2, "move": "play", "card": "hal-1"})
    assert all(o["winner"] is not None for o in GAME.round_result(state).by_stat.values())
    after, codes = _warnings(state, {"move": "to-pot"})
    assert codes == ["wrong-winner"]
    # Nothing was learnt about the stat: the replay may be played with any of them.
    assert after.kind is RoundKind.TIEBREAK and after.stat is None
    assert after.possible == (Stat.POWER, Stat.DISTANCE, Stat.AIM, Stat.RARITY)


def test_an_unheard_stat_still_needs_every_card_before_the_pot() -> None:
    state = _play(GAME.initial_state(players=2, setup=UNHEARD),
                  {"player": 1, "move": "play", "card": "chuck-1"})
    after, codes = _warnings(state, {"move": "to-pot"})
    assert codes == ["round-not-finished"]
    assert after.kind is RoundKind.TIEBREAK and after.participants == (1,)
    assert after.stat is None and len(after.possible) == 4


def test_a_lone_tied_player_takes_the_pot_of_an_unheard_tie() -> None:
    # Red 1 and Hal 3 tie only under power; Hal 3 was player 2's last card.
    state = _play(GAME.initial_state(players=3, setup={
        "deck-1": ["red-1", "chuck-3"], "deck-2": ["hal-3"], "deck-3": ["bomb-2", "chuck-2"],
    }), {"player": 1, "move": "play", "card": "red-1"},
        {"player": 2, "move": "play", "card": "hal-3"},
        {"player": 3, "move": "play", "card": "bomb-2"},
        {"move": "to-pot"})
    assert state.out == (2,) and state.participants == (1,) and state.stat is Stat.POWER
    result = GAME.round_result(state)
    assert result.complete and result.winner == 1
    after, codes = _warnings(state, {"player": 1, "move": "take"})
    assert codes == [] and GAME.scores(after) == (4, 0, 1)


def test_naming_a_stat_in_an_unheard_replay() -> None:
    state = _play(GAME.initial_state(players=2, setup=UNHEARD), *_POT)
    named, codes = _warnings(state, {"player": 2, "move": "name-stat", "stat": "rarity"})
    assert codes == [] and named.stat is Stat.RARITY and named.possible == ()
    named, codes = _warnings(state, {"player": 2, "move": "name-stat", "stat": "aim"})
    assert codes == ["stat-changed"] and named.stat is Stat.AIM
    assert GAME.validate(state, GAME.parse_move({"player": 1, "move": "play", "card": "hal-1"})) == ()
    assert sorted(m.stat for m in GAME.legal_moves(state) if hasattr(m, "stat")) == [
        "distance", "rarity",
    ]


def test_a_lone_player_under_one_stat_of_a_disagreeing_unheard_tie() -> None:
    # As DISAGREE, but Matilda 1 was player 2's last card: under power player 1 is left alone.
    state = _play(GAME.initial_state(players=3, setup={
        "deck-1": ["chuck-1", "hal-1"], "deck-2": ["matilda-1"], "deck-3": ["stella-3", "blues-1"],
    }), *_DISAGREE_POT, {"move": "to-pot"})
    assert state.out == (2,) and state.participants == (1, 3)
    assert state.tied_under == ((Stat.POWER, (1,)), (Stat.DISTANCE, (1, 3)))
    # Under power player 1 takes the pot without a replay: announced at once.
    result = GAME.round_result(state)
    assert result.complete and result.winner == 1 and list(result.by_stat) == ["power"]
    after, codes = _warnings(state, {"player": 1, "move": "take"})
    assert codes == [] and GAME.scores(after) == (4, 0, 1)
    # A card from player 3 says it was distance: the replay waits for player 1.
    late, codes = _warnings(state, {"player": 3, "move": "play", "card": "blues-1"})
    assert codes == [] and late.stat is Stat.DISTANCE and GAME.round_result(late).waiting == (1,)
