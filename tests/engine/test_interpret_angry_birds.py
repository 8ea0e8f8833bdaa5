"""Snapshots of an Angry Birds table become moves: cards laid, collected, tied, built.

Each test renders the table a target state should show (fronts in battle slots, the backs of
deck tops and structures, pile heights) as a snapshot with ranked candidates, and checks that
the interpreter finds the moves that lead from the belief to that state, including the stat
nobody can see named.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from engine import get_game
from engine.games.angry_birds_power_cards import AbState
from engine.interpret import InterpretConfig, Interpreter
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


def test_a_deck_top_that_changed_while_its_battle_slot_cannot_be_read_is_a_play() -> None:
    # Player 1's deck shows its next card's back, but the card laid in battle-1 is not named
    # (a mug over half of it): the deck alone says the top card was laid.
    before = _state({"player": 1, "move": "name-stat", "stat": "power"})
    after = _state(
        {"player": 1, "move": "name-stat", "stat": "power"},
        {"player": 1, "move": "play", "card": "red-1"},
    )
    shown = _snapshot(after)
    hidden = TableSnapshot(
        frame=shown.frame, time=shown.time,
        zones={z: c for z, c in shown.zones.items() if z != "battle-1"}, counts=shown.counts,
        settled=shown.settled - {"battle-1"},
    )
    result = Interpreter(GAME).observe(before, hidden)
    assert not result.pending and not result.desync
    assert [GAME.move_to_dict(m) for m in result.moves] == [{"player": 1, "move": "play", "card": "red-1"}]
    assert result.state.battle[0] == ("red-1",)
    # With the slot read and empty, a new deck top alone is no play.
    shown_empty = TableSnapshot(
        frame=shown.frame, time=shown.time, zones={**shown.zones, "battle-1": ()},
        counts=shown.counts, settled=shown.settled,
    )
    assert Interpreter(GAME).observe(before, shown_empty).moves == ()


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


def _without_deck_heights(snapshot: TableSnapshot, frame: int) -> TableSnapshot:
    """The snapshot with no deck heights read: who collected is not seen."""
    counts = {z: n for z, n in snapshot.counts.items() if not z.startswith("deck-")}
    return TableSnapshot(frame=frame, time=frame / 30, zones=snapshot.zones, counts=counts,
                         settled=snapshot.settled)


_LAID = (
    {"player": 1, "move": "play", "card": "red-1"},
    {"player": 2, "move": "play", "card": "blues-1"},
)


def test_an_unseen_collector_is_held_until_the_winner_builds() -> None:
    # Red 1 wins power, Blues 1 rarity: either player may have collected, and the camera cannot
    # see under whose deck the cards went. The build that follows on player 2's structure says.
    before = _state(*_LAID)
    collected = [{"player": 1, "move": "name-stat", "stat": "rarity"}, {"player": 2, "move": "take"}]
    config = InterpretConfig.for_game(GAME.id)
    assert config.hold_seconds > 0
    interpreter = Interpreter(GAME, config)
    held = interpreter.observe(before, _without_deck_heights(_snapshot(_state(*_LAID, *collected)), 30))
    assert held.pending and held.moves == ()
    built = _state(*_LAID, *collected, {"player": 2, "move": "build", "cards": ["red-1"]})
    result = interpreter.observe(before, _without_deck_heights(_snapshot(built), 60))
    assert not result.pending and not result.desync
    assert [GAME.move_to_dict(m) for m in result.moves] == [
        *collected, {"player": 2, "move": "build", "cards": ["red-1"]},
    ]


@pytest.mark.parametrize(("collector", "stat"), [(1, "power"), (2, "rarity")])
def test_the_hand_that_reached_a_deck_tells_the_collector_at_once(collector: int, stat: str) -> None:
    # Red 1 wins power, Blues 1 rarity. The cards went under a deck, which the camera does not
    # see grow, but the collector's hand stayed over it: no hold, the take is read now.
    before = _state(*_LAID)
    collected = [{"player": 1, "move": "name-stat", "stat": stat}, {"player": collector, "move": "take"}]
    shown = _without_deck_heights(_snapshot(_state(*_LAID, *collected)), 30)
    reached = frozenset({"battle-1", "battle-2", f"deck-{collector}"})
    interpreter = Interpreter(GAME, InterpretConfig.for_game(GAME.id))
    result = interpreter.observe(before, replace(shown, reached=reached))
    assert not result.pending and not result.desync
    assert [GAME.move_to_dict(m) for m in result.moves] == collected
    # Hands watched, but none stayed over either deck: who collected is not told, it is held.
    unseen = Interpreter(GAME, InterpretConfig.for_game(GAME.id)).observe(
        before, replace(shown, reached=frozenset({"battle-1", "battle-2"})))
    assert unseen.pending and unseen.moves == ()


@pytest.mark.parametrize(("collector", "stat"), [(1, "power"), (2, "rarity")])
def test_a_build_read_as_the_hold_runs_out_tells_the_collector(collector: int, stat: str) -> None:
    # The winner's structure is read only once the hold has run out (a hand lingered over
    # it): that read tells who collected, and wins over the held guess, whoever it was.
    before = _state(*_LAID)
    collected = [{"player": 1, "move": "name-stat", "stat": stat}, {"player": collector, "move": "take"}]
    config = InterpretConfig.for_game(GAME.id)
    interpreter = Interpreter(GAME, config)
    held = interpreter.observe(before, _without_deck_heights(_snapshot(_state(*_LAID, *collected)), 30))
    assert held.pending and held.moves == ()
    build = {"player": collector, "move": "build", "cards": ["red-1"]}
    late = round(30 + config.hold_seconds * 30) + 1
    built = _state(*_LAID, *collected, build)
    result = interpreter.observe(before, _without_deck_heights(_snapshot(built), late))
    assert not result.pending and not result.desync
    moves = [GAME.move_to_dict(m) for m in result.moves]
    assert moves[1:] == [collected[1], build]
    assert GAME.round_result(_state(*_LAID, moves[0])).winner == collector


@pytest.mark.parametrize(("collector", "stat"), [(1, "power"), (2, "rarity")])
def test_a_collector_is_held_through_quiet_reads_until_a_build_nine_seconds_on(collector: int, stat: str) -> None:
    # The winner gathers the cards, squares them and builds seconds later; reads of the
    # quiet table meanwhile tell nothing and must not end the hold with a guess.
    before = _state(*_LAID)
    collected = [{"player": 1, "move": "name-stat", "stat": stat}, {"player": collector, "move": "take"}]
    interpreter = Interpreter(GAME, InterpretConfig.for_game(GAME.id))
    quiet = _snapshot(_state(*_LAID, *collected))
    for second in (1, 4, 7):
        held = interpreter.observe(before, _without_deck_heights(quiet, 30 * second))
        assert held.pending and held.moves == (), second
    build = {"player": collector, "move": "build", "cards": ["red-1"]}
    built = _snapshot(_state(*_LAID, *collected, build))
    result = interpreter.observe(before, _without_deck_heights(built, 30 * 10))
    assert [GAME.move_to_dict(m) for m in result.moves][1:] == [collected[1], build]


def test_two_won_cards_with_one_back_built_together_are_taken_at_once() -> None:
    # Red 1 and Stella 2 both show a wood vertical's back. Built in either order they look
    # the same, now and later: no read can tell, so the builds are read at once, not held.
    setup = {"deck-1": ["red-1", "bomb-3", "hal-1"], "deck-2": ["stella-2", "blues-1", "chuck-3"]}
    assert GAME.catalog.cards["red-1"].back == GAME.catalog.cards["stella-2"].back
    laid = ({"player": 1, "move": "play", "card": "red-1"}, {"player": 2, "move": "play", "card": "stella-2"})
    before = _state(*laid, setup=setup)
    stat = next(s for s, o in GAME.round_result(before).by_stat.items() if o["winner"] is not None)
    winner = GAME.round_result(before).by_stat[stat]["winner"]
    done = (
        {"player": 1, "move": "name-stat", "stat": stat}, {"player": winner, "move": "take"},
        {"player": winner, "move": "build", "cards": ["red-1"]},
        {"player": winner, "move": "build", "cards": ["stella-2"]},
    )
    interpreter = Interpreter(GAME, InterpretConfig.for_game(GAME.id))
    result = interpreter.observe(before, _without_deck_heights(_snapshot(_state(*laid, *done, setup=setup)), 30))
    assert not result.pending and not result.desync
    moves = [GAME.move_to_dict(m) for m in result.moves]
    assert [m["move"] for m in moves] == ["name-stat", "take", "build", "build"]
    assert moves[1]["player"] == winner
    assert sorted(c for m in moves[2:] for c in m["cards"]) == ["red-1", "stella-2"]


def test_an_unseen_collector_is_held_even_while_a_structure_card_is_not_seen() -> None:
    # As above, in the second round, while player 1's structure card is hidden for a moment (a
    # hand, a glare): "all but a card not seen" may be taken at once, but not while a rival
    # collector fits as well.
    first = (*_LAID, {"player": 1, "move": "name-stat", "stat": "power"}, {"player": 1, "move": "take"},
             {"player": 1, "move": "build", "cards": ["red-1"]})
    laid = (*first, {"player": 1, "move": "play", "card": "bomb-3"}, {"player": 2, "move": "play", "card": "stella-2"})
    before = _state(*laid)  # bomb-3 wins power and aim, stella-2 distance and rarity
    collected = [{"player": 1, "move": "name-stat", "stat": "rarity"}, {"player": 2, "move": "take"}]
    seen = _without_deck_heights(_snapshot(_state(*laid, *collected)), 30)
    zones = {z: cards for z, cards in seen.zones.items() if z != "structure-1"}
    hidden = TableSnapshot(frame=30, time=1.0, zones={**zones, "structure-1": ()}, counts=seen.counts,
                           settled=seen.settled)
    interpreter = Interpreter(GAME, InterpretConfig.for_game(GAME.id))
    held = interpreter.observe(before, hidden)
    assert held.pending and held.moves == ()
    built = _state(*laid, *collected, {"player": 2, "move": "build", "cards": ["bomb-3"]})
    result = interpreter.observe(before, _without_deck_heights(_snapshot(built), 60))
    assert not result.pending and not result.desync
    moves = [GAME.move_to_dict(m) for m in result.moves]
    # Distance would have named player 2 the winner too: the camera cannot tell which was named.
    assert moves[0]["move"] == "name-stat" and moves[0]["stat"] in ("distance", "rarity")
    assert moves[1:] == [collected[1], {"player": 2, "move": "build", "cards": ["bomb-3"]}]


@pytest.mark.parametrize("slots_unread", [False, True])
def test_a_held_collector_is_taken_when_nothing_tells(slots_unread: bool) -> None:
    before = _state(*_LAID)
    after = _state(*_LAID, {"player": 1, "move": "name-stat", "stat": "power"}, {"player": 1, "move": "take"})
    config = InterpretConfig.for_game(GAME.id)
    interpreter = Interpreter(GAME, config)
    assert interpreter.observe(before, _without_deck_heights(_snapshot(after), 30)).pending
    if slots_unread:
        # Meanwhile a hand over the battle slots keeps them from being read, the rest of the
        # table as the belief has it: that read says nothing of the collection, and the hold
        # keeps its start.
        unread = _without_deck_heights(_snapshot(before), 45)
        covered = replace(unread, settled=frozenset(z for z in unread.settled if not z.startswith("battle-")))
        quiet = interpreter.observe(before, covered)
        assert quiet.moves == () and not quiet.desync
    late = round(30 + config.hold_seconds * 30) + 1
    result = interpreter.observe(before, _without_deck_heights(_snapshot(after), late))
    assert not result.pending and not result.desync
    assert [GAME.move_to_dict(m)["move"] for m in result.moves] == ["name-stat", "take"]
    # Without a hold the same reading is taken at once.
    quick = Interpreter(GAME, InterpretConfig()).observe(before, _without_deck_heights(_snapshot(after), 30))
    assert [GAME.move_to_dict(m)["move"] for m in quick.moves] == ["name-stat", "take"]


def test_a_held_collector_is_taken_when_the_table_moves_on_unexplained() -> None:
    before = _state(*_LAID)
    after = _state(*_LAID, {"player": 1, "move": "name-stat", "stat": "power"}, {"player": 1, "move": "take"})
    interpreter = Interpreter(GAME, InterpretConfig.for_game(GAME.id))
    assert interpreter.observe(before, _without_deck_heights(_snapshot(after), 30)).pending
    seen = _without_deck_heights(_snapshot(after), 45)
    zones = dict(seen.zones)
    zones["battle-2"] = (  # two cards in one slot: no move lays them
        SeenCard(candidates=(Candidate(face="king-pig", score=0.9),)),
        SeenCard(candidates=(Candidate(face="chef-pig", score=0.9),)),
    )
    odd = TableSnapshot(frame=45, time=1.5, zones=zones, counts=seen.counts, settled=seen.settled)
    result = interpreter.observe(before, odd)
    assert [GAME.move_to_dict(m)["move"] for m in result.moves] == ["name-stat", "take"]
    assert not result.desync
    # The odd cards are read from the collected state on: pending (read again soon), not
    # mixed into the take.
    assert result.pending
    assert GAME.round_result(result.state).cards == {}


def test_a_structure_and_pot_believed_wrong_are_set_as_seen_and_the_next_play_is_read_at_once() -> None:
    # Player 1 won Red 1 and Blues 1 and built Blues 1 (a stone back), but the belief has Red 1
    # built (wood) and a card in the pot that is not there. Left so, every later change would
    # stay unexplained until its pending time ran out.
    won = (*_LAID, {"player": 1, "move": "name-stat", "stat": "power"}, {"player": 1, "move": "take"})
    real = _state(*won, {"player": 1, "move": "build", "cards": ["blues-1"]})
    believed = GAME.apply(_state(*won, {"player": 1, "move": "build", "cards": ["red-1"]}),
                          GAME.parse_move({"player": 2, "move": "table-change", "zone": "pot",
                                           "cards": ["stella-1"]})).state
    interpreter = Interpreter(GAME, InterpretConfig.for_game(GAME.id))
    config = interpreter.config
    first = interpreter.observe(believed, _snapshot(real, 10))
    assert first.pending
    late = round(10 + config.pending_seconds * 30) + 1
    fixed = interpreter.observe(believed, _snapshot(real, late))
    assert fixed.desync
    changes = {m.zone: m.cards for m in fixed.moves if GAME.move_to_dict(m)["move"] == "table-change"}
    assert changes == {"structure-1": ("blues-1",), "pot": ()}
    zones = GAME.zones(fixed.state)
    assert zones["structure-1"] == ("blues-1",) and zones["pot"] == ()
    # Red 1, believed built, went under player 1's deck with the rest of the cards won.
    assert zones["deck-1"] == GAME.zones(real)["deck-1"]
    # The next card laid is read at once.
    laid = _state(*won, {"player": 1, "move": "build", "cards": ["blues-1"]},
                  {"player": 1, "move": "play", "card": "bomb-3"})
    result = interpreter.observe(fixed.state, _snapshot(laid, late + 30))
    assert not result.pending and not result.desync
    assert [GAME.move_to_dict(m) for m in result.moves] == [{"player": 1, "move": "play", "card": "bomb-3"}]


# Chuck 1 and Red 2 tie under distance and rarity; in the replay Chuck 2 wins distance, Hal 1
# rarity.
UNHEARD = {"deck-1": ["chuck-1", "hal-1", "red-1"], "deck-2": ["red-2", "chuck-2", "bomb-1"]}
_TIED = (
    {"player": 1, "move": "play", "card": "chuck-1"},
    {"player": 2, "move": "play", "card": "red-2"},
)


def test_an_unheard_tie_goes_to_the_pot_without_a_guessed_stat() -> None:
    before = _state(*_TIED, setup=UNHEARD)
    after = _state(*_TIED, {"move": "to-pot"}, setup=UNHEARD)
    result = Interpreter(GAME).observe(before, _snapshot(after))
    assert not result.pending and not result.desync
    assert [GAME.move_to_dict(m) for m in result.moves] == [{"player": 0, "move": "to-pot"}]
    assert result.state.stat is None
    assert [s.value for s in result.state.possible] == ["distance", "rarity"]


def test_the_replay_of_an_unheard_tie_is_collected_without_naming_the_stat() -> None:
    replay = (
        *_TIED,
        {"move": "to-pot"},
        {"player": 1, "move": "play", "card": "hal-1"},
        {"player": 2, "move": "play", "card": "chuck-2"},
    )
    before = _state(*replay, setup=UNHEARD)
    for taker in (1, 2):
        after = _state(*replay, {"player": taker, "move": "take"}, setup=UNHEARD)
        assert _moves(before, after) == [{"player": taker, "move": "take"}]


# Chuck 1 and Matilda 1 tie under power, Chuck 1 and Stella 3 under distance.
DISAGREE = {
    "deck-1": ["chuck-1", "hal-1", "red-1"], "deck-2": ["matilda-1", "bomb-3", "red-2"],
    "deck-3": ["stella-3", "blues-1", "chuck-3"],
}


def _state3(*moves: dict[str, Any]) -> AbState:
    state = GAME.initial_state(players=3, setup=DISAGREE)
    for data in moves:
        state = GAME.apply(state, GAME.parse_move(data)).state
    return state


def test_an_unheard_tie_whose_stats_disagree_is_replayed_by_the_cards_seen() -> None:
    pot = (
        {"player": 1, "move": "play", "card": "chuck-1"},
        {"player": 2, "move": "play", "card": "matilda-1"},
        {"player": 3, "move": "play", "card": "stella-3"},
        {"move": "to-pot"},
        {"player": 1, "move": "play", "card": "hal-1"},
    )
    # Player 2's card is seen: the replay was on power, and player 3 lays nothing.
    laid = (*pot, {"player": 2, "move": "play", "card": "bomb-3"})
    assert _moves(_state3(*pot), _state3(*laid)) == [
        {"player": 2, "move": "play", "card": "bomb-3"}
    ]
    # Bomb 3 wins power: player 2 collects, without a stat being named.
    after = _state3(*laid, {"player": 2, "move": "take"})
    assert _moves(_state3(*laid), after) == [{"player": 2, "move": "take"}]


# Two ice structures waiting for their pig: whoever wins the round tops theirs with it.
_BEAMS = {
    "deck-1": ["red-1", "bomb-3"],
    "deck-2": ["king-pig", "chuck-3"],
    "structure-1": ["matilda-3", "red-3", "blues-2"],
    "structure-2": ["stella-1", "hal-1", "bomb-1"],
}
_WON = (
    {"player": 1, "move": "name-stat", "stat": "power"},
    {"player": 1, "move": "play", "card": "red-1"},
    {"player": 2, "move": "play", "card": "king-pig"},
)


def _winner_took() -> tuple[tuple[dict[str, Any], ...], int]:
    laid = _state(*_WON, setup=_BEAMS)
    winner = GAME.round_result(laid).winner
    assert winner is not None
    return (*_WON, {"player": winner, "move": "take"}), winner


def _only(snapshot: TableSnapshot, zone: str, *seen: int) -> TableSnapshot:
    """`snapshot` with only the cards `seen` (by index) of `zone` seen, the rest hidden."""
    return replace(snapshot, zones={**snapshot.zones, zone: tuple(snapshot.zones[zone][i] for i in seen)})


def test_the_parts_under_a_structure_s_pig_are_covered_in_its_look() -> None:
    took, winner = _winner_took()
    built = _state(*took, {"player": winner, "move": "build", "cards": ["king-pig"]}, setup=_BEAMS)
    look = LOOK.appearance(built)[f"structure-{winner}"]
    assert look.faces[0] == "back.pig"
    assert look.covered == frozenset({1, 2, 3})  # the beam under the pig, the verticals under it
    two = LOOK.appearance(_state(setup={**SETUP, "structure-1": ["red-3", "blues-2"]}))["structure-1"]
    assert two.covered == frozenset()  # two verticals side by side: nothing covers them


def test_a_pig_on_the_beam_is_a_build_though_it_hides_the_beam() -> None:
    # The camera sees the pig and one vertical: the beam and the other vertical lie under it.
    took, winner = _winner_took()
    before = _state(*took, setup=_BEAMS)
    after = _state(*took, {"player": winner, "move": "build", "cards": ["king-pig"]}, setup=_BEAMS)
    zone = f"structure-{winner}"
    seen = _only(_snapshot(after, 30), zone, 0, 3)
    assert [c.best.face for c in seen.zones[zone]] == ["back.pig", "back.ice-vertical"]
    result = Interpreter(GAME, InterpretConfig.for_game(GAME.id)).observe(before, seen)
    assert not result.pending and not result.desync
    assert [GAME.move_to_dict(m) for m in result.moves] == [
        {"player": winner, "move": "build", "cards": ["king-pig"]}
    ]
    # Seen so again, the built structure is no change: its lower parts are hidden, not gone.
    again = Interpreter(GAME, InterpretConfig.for_game(GAME.id)).observe(result.state, seen)
    assert again.moves == () and not again.pending and not again.desync



def test_a_beam_hidden_at_once_by_the_pig_laid_on_it_is_read_with_the_pig() -> None:
    # The winner lays the beam and the pig on it between two reads: the camera sees the pig
    # and one vertical, never the beam. Read as a pig on two verticals (a wrong order), the
    # structure would not be complete and the slingshot round that follows would be missed.
    setup = {
        "deck-1": ["terence-3", "bomb-3"],
        "deck-2": ["king-pig", "chuck-3"],
        "structure-1": ["red-3", "blues-2"],
        "structure-2": ["hal-1", "bomb-1"],
    }
    won = (
        {"player": 1, "move": "name-stat", "stat": "power"},
        {"player": 1, "move": "play", "card": "terence-3"},
        {"player": 2, "move": "play", "card": "king-pig"},
    )
    winner = GAME.round_result(_state(*won, setup=setup)).winner
    assert winner is not None
    took = (*won, {"player": winner, "move": "take"})
    builds = ({"player": winner, "move": "build", "cards": ["terence-3"]},
              {"player": winner, "move": "build", "cards": ["king-pig"]})
    after = _state(*took, *builds, setup=setup)
    zone = f"structure-{winner}"
    seen = _only(_snapshot(after, 30), zone, 0, 3)
    assert [c.best.face for c in seen.zones[zone]] == ["back.pig", "back.ice-vertical"]
    result = Interpreter(GAME, InterpretConfig.for_game(GAME.id)).observe(_state(*took, setup=setup), seen)
    assert not result.pending and not result.desync
    assert [GAME.move_to_dict(m) for m in result.moves] == list(builds)
    assert GAME.round_result(result.state).kind == "slingshot"


def test_a_beam_read_close_to_a_vertical_does_not_hold_back_the_next_round_s_card() -> None:
    # The winner lays a won beam across the two verticals of their structure, then the next
    # round's first card in their battle slot. The camera reads the beam as the beam, with a
    # vertical second, and one vertical beside it (the deck heights are not read). "The play
    # alone, the beam taken for a vertical" fits nearly as well, but it is the same reading
    # less the build. Held, the card laid would stay off the overlay, and the round's outcome
    # unannounced, for as long as the hold (seed 7153).
    setup = {
        "deck-1": ["matilda-3", "bomb-3", "hal-3"],
        "deck-2": ["chuck-3", "stella-2"],
        "structure-1": ["red-3", "blues-2"],
    }
    laid = (
        {"player": 1, "move": "play", "card": "matilda-3"},
        {"player": 2, "move": "play", "card": "chuck-3"},
    )
    stat = next(s for s in ("power", "distance", "aim", "rarity")
                if GAME.round_result(_state({"player": 1, "move": "name-stat", "stat": s}, *laid,
                                             setup=setup)).winner == 1)
    took = ({"player": 1, "move": "name-stat", "stat": stat}, *laid, {"player": 1, "move": "take"})
    then = (
        {"player": 1, "move": "build", "cards": ["matilda-3"]},
        {"player": 1, "move": "play", "card": "bomb-3"},
    )
    after = _state(*took, *then, setup=setup)
    look = LOOK.appearance(after)["structure-1"]
    assert look.faces[0] == "back.ice-horizontal" and look.covered  # the verticals lie under it
    shown = _only(_without_deck_heights(_snapshot(after, 30), 30), "structure-1", 0, 2)
    beam = SeenCard(candidates=(Candidate(face="back.ice-horizontal", score=0.6),
                                Candidate(face="back.ice-vertical", score=0.3)))
    shown = replace(shown, zones={**shown.zones, "structure-1": (beam, shown.zones["structure-1"][1])})
    interpreter = Interpreter(GAME, InterpretConfig.for_game(GAME.id))
    result = interpreter.observe(_state(*took, setup=setup), shown)
    assert not result.pending and not result.desync
    assert [GAME.move_to_dict(m) for m in result.moves] == list(then)
