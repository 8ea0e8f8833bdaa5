"""Interpretation of settled snapshots for mk. I: hotbar cards, pile heights, token counts and
the die face become moves; unknown hand cards are identified when they reach the hotbar; whole
simulated games are followed turn by turn from snapshots alone; a change nothing explains goes
pending, then desync."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from engine import get_game
from engine.games.minecraft_mk1 import Mk1Move, Mk1State
from engine.interpret import InterpretConfig, Interpreter, fit_zone
from engine.interpreters import interpreter_for
from engine.interpreters.minecraft_mk1 import Mk1Interpreter
from engine.simulate import simulate_game
from engine.snapshot import Candidate, ExpectedZone, SeenCard, TableSnapshot, ZoneKind

GAME = get_game("minecraft-mk1")
LOOK = Mk1Interpreter(GAME)
FACES = tuple(sorted(GAME.catalog.faces))


def render(state: Mk1State, *, frame: int = 0, settled: Any = None) -> TableSnapshot:
    """The snapshot a camera would give of `state`: pile backs and hotbar tops with a clear
    first candidate, stack heights, token counts and the die face."""
    zones: dict[str, tuple[SeenCard, ...]] = {}
    counts: dict[str, int] = {}
    for zone, expected in LOOK.appearance(state).items():
        cards = []
        for face in expected.faces:
            assert face is not None
            wrong = FACES[(FACES.index(face) + 7) % len(FACES)]
            cards.append(
                SeenCard(candidates=(Candidate(face=face, score=0.9), Candidate(face=wrong, score=0.05)))
            )
        zones[zone] = tuple(cards)
        if expected.kind is not ZoneKind.SPREAD:
            counts[zone] = expected.count
    return TableSnapshot(
        frame=frame,
        time=frame / 30.0,
        zones=zones,
        counts=counts,
        settled=frozenset(zones if settled is None else settled),
    )


def name(move: Mk1Move) -> str:
    return type(move).NAME


def follow(before: Mk1State, moves: list[dict[str, Any]]) -> tuple[list[str], Mk1State, Mk1State]:
    """Apply `moves` to `before`, show the result to the interpreter, and return the names of
    the moves it found, the state it believes and the true state."""
    truth = before
    for data in moves:
        truth = GAME.apply(truth, GAME.parse_move(data)).state
    result = Interpreter(GAME).observe(before, render(truth, frame=1))
    assert not result.pending and not result.desync, result
    return [name(m) for m in result.moves], result.state, truth


def test_registered_for_the_game() -> None:
    assert isinstance(interpreter_for(GAME), Mk1Interpreter)
    with pytest.raises(TypeError):
        Mk1Interpreter(get_game("minecraft-card-game"))


def test_counters_match_exactly() -> None:
    cfg = InterpretConfig()
    zone = ExpectedZone(kind=ZoneKind.COUNTER, faces=(), count=5)
    assert fit_zone(zone, (), 5, cfg).matches
    assert fit_zone(zone, (), None, cfg).matches
    off = fit_zone(zone, (), 4, cfg)
    assert not off.matches and not off.within_noise and off.score < 0


@pytest.mark.parametrize(
    ("setup", "moves", "expected"),
    [
        ({}, [{"player": 1, "move": "sleep"}], ["sleep"]),
        ({"hotbar-1": ["food"], "hunger-1": 3}, [{"player": 1, "move": "eat"}], ["eat"]),
        (
            {"inventory-1": ["sapling"]},
            [{"player": 1, "move": "move", "card": "sapling", "to": "hotbar"}],
            ["move"],
        ),
        (
            {"hotbar-1-2": ["tree"], "ages": {"hotbar-1-2": 2}, "gardening": ["seed"]},
            [{"player": 1, "move": "harvest", "card": "tree"}],
            ["harvest"],
        ),
        (
            {"hotbar-1": ["pickaxe"], "mining": ["shiny", "stone"]},
            [{"player": 1, "move": "mine"}],
            ["mine"],
        ),
        ({"hunting": ["food", "leather"]}, [{"player": 1, "move": "hunt"}], ["hunt"]),
        (
            {"inventory-1": ["storm"], "health-2": 8},
            [{"player": 1, "move": "activate", "card": "storm"}],
            ["activate"],
        ),
        (
            {"inventory-1": ["wood", "wood"], "sticks": ["stick"], "wood": []},
            [{"player": 1, "move": "craft", "card": "stick"}],
            ["craft"],
        ),
        (
            {"night": True, "daylight": 0},
            [{"player": 1, "move": "sleep", "roll": 2}, {"player": 2, "move": "sleep", "roll": 5}],
            ["sleep", "sleep"],
        ),
        (
            {"night": True, "daylight": 0, "hotbar-1": ["armor"]},
            [{"player": 1, "move": "sleep", "roll": [1, 2]}],
            ["sleep"],
        ),
        (
            {"hotbar-1-1": ["seed"], "ages": {"hotbar-1-1": 2}, "gardening": ["tree"],
             "hunting": ["food", "food", "food"]},
            [{"player": 1, "move": "harvest", "roll": 6}],
            ["harvest"],
        ),
    ],
)
def test_each_change_is_explained_by_its_move(
    setup: dict[str, Any], moves: list[dict[str, Any]], expected: list[str]
) -> None:
    before = GAME.initial_state(players=2, setup=setup)
    found, belief, truth = follow(before, moves)
    assert found == expected
    assert LOOK.appearance(belief) == LOOK.appearance(truth)
    assert GAME.zones(belief)["health-1"] == GAME.zones(truth)["health-1"]


def test_a_card_from_an_unseen_hand_is_identified_in_the_hotbar() -> None:
    before = GAME.initial_state(players=2, setup={"mining": [None, None], "hotbar-1": ["pickaxe"]})
    belief = GAME.apply(before, GAME.parse_move({"player": 1, "move": "mine"})).state
    assert GAME.zones(belief)["inventory-1"] == (None,)
    belief = GAME.apply(belief, GAME.parse_move({"player": 2, "move": "sleep"})).state
    truth = GAME.apply(
        belief, GAME.parse_move({"player": 1, "move": "move", "card": "shiny", "to": "hotbar"})
    ).state
    result = Interpreter(GAME).observe(belief, render(truth, frame=1))
    assert [GAME.move_to_dict(m)["card"] for m in result.moves] == ["shiny"]
    assert GAME.zones(result.state)["inventory-1"] == ()
    assert GAME.scores(result.state) == (1, 0)


def test_an_unexplained_change_goes_pending_then_desync() -> None:
    before = GAME.initial_state(players=2, setup={})
    after = GAME.apply(
        before, GAME.parse_move({"player": 1, "move": "table-change", "zone": "health-2", "count": 2})
    ).state
    interp = Interpreter(GAME, InterpretConfig(pending_frames=3, pending_seconds=60.0))
    first = interp.observe(before, render(after, frame=10))
    assert first.pending and not first.moves
    later = interp.observe(before, render(after, frame=14))
    assert later.desync
    assert GAME.zones(later.state)["health-2"] == ("health", "health")
    assert any(name(m) == "table-change" for m in later.moves)


def test_a_zone_read_the_same_is_set_while_another_keeps_changing() -> None:
    # Player 2's health reads 2 from the first snapshot on; player 1's comes and goes between
    # 3 tokens and what the belief holds (a hand counting them), so the set of unexplained
    # zones keeps changing. mk. I times each zone on its own: player 2's health is set as it
    # reads once it has read so for the pending time, and player 1's is left to be explained.
    before = GAME.initial_state(players=2, setup={})
    start = len(GAME.zones(before)["health-1"])

    def table(health_1: int) -> Mk1State:
        state = before
        for zone, count in (("health-2", 2), ("health-1", health_1)):
            move = {"player": 1, "move": "table-change", "zone": zone, "count": count}
            state = GAME.apply(state, GAME.parse_move(move)).state
        return state

    def reads(config: InterpretConfig) -> list[Any]:
        interp = Interpreter(GAME, config)
        return [interp.observe(before, render(table(3 if k % 2 else start), frame=10 + k))
                for k in range(5)]

    timed = reads(InterpretConfig.for_game("minecraft-mk1", pending_frames=3, pending_seconds=60.0))
    assert start != 3 and [r.pending for r in timed[:3]] == [True, True, True]
    fixed = timed[3]
    assert fixed.desync and not fixed.pending
    assert [GAME.move_to_dict(m)["zone"] for m in fixed.moves] == ["health-2"]
    assert GAME.zones(fixed.state)["health-2"] == ("health", "health")
    assert GAME.zones(fixed.state)["health-1"] == GAME.zones(before)["health-1"]
    # Without it, the whole table waits: the flicker restarts the wait every read.
    whole = reads(InterpretConfig.for_game("minecraft-mk1", pending_frames=3, pending_seconds=60.0,
                                           zone_pending=False))
    assert all(r.pending and not r.moves for r in whole)


def test_a_zone_already_pending_does_not_hold_back_a_move_made_elsewhere() -> None:
    # Player 2's health reads 2 tokens from the first snapshot on; then player 1 mines. The
    # mine is taken at once, and player 2's health is set as it reads when its own wait,
    # begun at the first snapshot, is over.
    before = GAME.initial_state(players=2, setup={"mining": [None, None], "hotbar-1": ["pickaxe"]})
    odd = GAME.apply(before, GAME.parse_move(
        {"player": 1, "move": "table-change", "zone": "health-2", "count": 2})).state
    mined = GAME.apply(odd, GAME.parse_move({"player": 1, "move": "mine"})).state
    config = InterpretConfig.for_game("minecraft-mk1", pending_frames=3, pending_seconds=60.0)
    interp = Interpreter(GAME, config)
    assert interp.observe(before, render(odd, frame=10)).pending
    took = interp.observe(before, render(mined, frame=11))
    assert [name(m) for m in took.moves] == ["mine"] and not took.pending and not took.desync
    assert GAME.zones(took.state)["health-2"] == GAME.zones(before)["health-2"]
    assert interp.observe(took.state, render(mined, frame=12)).pending
    fixed = interp.observe(took.state, render(mined, frame=13))
    assert fixed.desync and [GAME.move_to_dict(m)["zone"] for m in fixed.moves] == ["health-2"]
    assert GAME.zones(fixed.state)["health-2"] == ("health", "health")
    # Timed as a whole, the mine waits with the rest.
    whole = Interpreter(GAME, InterpretConfig.for_game(
        "minecraft-mk1", pending_frames=3, pending_seconds=60.0, zone_pending=False))
    whole.observe(before, render(odd, frame=10))
    assert whole.observe(before, render(mined, frame=11)).moves == ()


@pytest.mark.parametrize("seed", [3, 11])
def test_a_simulated_game_is_followed_from_snapshots(seed: int) -> None:
    """Each settled snapshot after one move is explained without desync, and the belief looks
    exactly like the table; the move found is the move played (hands aside)."""
    game = simulate_game(GAME, players=2, seed=seed, options={"shinies_to_win": 4}, max_moves=80)
    truth = GAME.initial_state(players=2, seed=seed, options={"shinies_to_win": 4})
    belief = truth
    interp = Interpreter(GAME)
    same = Counter[bool]()
    for i, move in enumerate(game.moves):
        truth = GAME.apply(truth, move).state
        result = interp.observe(belief, render(truth, frame=i + 1))
        assert not result.desync and not result.pending, (i, GAME.move_to_dict(move))
        belief = result.state
        assert LOOK.appearance(belief) == LOOK.appearance(truth), (i, GAME.move_to_dict(move))
        same[[name(m) for m in result.moves] == [name(move)]] += 1
    assert same[True] >= 0.9 * len(game.moves), same


def unread_piles(snapshot: TableSnapshot, *, reached: frozenset[str], frame: int) -> TableSnapshot:
    """`snapshot` as a camera gives it: pile heights not read (face-down piles look alike at
    any height), the hands' reach watched."""
    counts = {z: n for z, n in snapshot.counts.items() if z not in PILE_ZONES}
    return TableSnapshot(frame=frame, time=frame / 30.0, zones=snapshot.zones, counts=counts,
                         settled=snapshot.settled, reached=reached)


PILE_ZONES = frozenset(
    {"wood", "sticks", "mining", "hunting", "gardening", "sword", "axe", "pickaxe", "armor",
     "effects-weather"}
)


@pytest.mark.parametrize(
    ("setup", "move", "reached"),
    [
        ({"hunting": ["food", "leather"]}, {"player": 1, "move": "hunt"}, {"hunting"}),
        ({}, {"player": 1, "move": "draw"}, {"effects-weather"}),
        ({}, {"player": 1, "move": "sleep"}, set()),
    ],
)
def test_the_hands_tell_apart_moves_the_camera_cannot_see(
    setup: dict[str, Any], move: dict[str, Any], reached: set[str]
) -> None:
    """Hunting, drawing and sleeping leave the same table when pile heights are not read; the
    pile a hand reached into tells them apart. (Discarding to a pile and taking from it stay
    alike: a hand goes there either way.)"""
    before = GAME.initial_state(players=2, setup=setup)
    truth = GAME.apply(before, GAME.parse_move(move)).state
    shown = unread_piles(render(truth, frame=1), reached=frozenset(reached), frame=1)
    result = Interpreter(GAME).observe(before, shown)
    assert [GAME.move_to_dict(m)["move"] for m in result.moves] == [move["move"]]
    assert not result.pending and not result.desync


def test_a_harvest_is_told_from_an_incinerated_generator_by_the_wood_pile() -> None:
    """Both put the tree under the gardening pile (a harvest also takes its top card, so the
    height stays); only a harvest takes wood: a hand in the wood pile decides."""
    setup = {"hotbar-1-1": ["tree"], "ages": {"hotbar-1-1": 2}, "gardening": ["seed", "sapling"]}
    before = GAME.initial_state(players=2, setup=setup)
    for move, reached in (
        ({"player": 1, "move": "harvest", "card": "tree", "slot": 1}, {"gardening", "wood"}),
        ({"player": 1, "move": "incinerate", "card": "tree", "from": "hotbar"}, {"gardening"}),
    ):
        truth = GAME.apply(before, GAME.parse_move(move)).state
        shown = unread_piles(render(truth, frame=1), reached=frozenset(reached), frame=1)
        result = Interpreter(GAME).observe(before, shown)
        assert [GAME.move_to_dict(m)["move"] for m in result.moves] == [move["move"]]


def test_a_hand_at_a_pile_waits_for_the_rest_of_its_move_then_lets_it_go() -> None:
    """A hand reached into the hunting pile but nothing else changed yet (the turn's tokens
    come next): the interpreter waits; when nothing comes, nothing happened, without a desync."""
    before = GAME.initial_state(players=2, setup={"hunting": ["food", "leather"]})
    quiet = unread_piles(render(before, frame=1), reached=frozenset({"hunting"}), frame=1)
    interp = Interpreter(GAME, InterpretConfig(pending_frames=30, pending_seconds=2.0))
    first = interp.observe(before, quiet)
    assert first.pending and not first.moves
    truth = GAME.apply(before, GAME.parse_move({"player": 1, "move": "hunt"})).state
    done = interp.observe(before, unread_piles(render(truth, frame=20), reached=frozenset({"hunting"}),
                                               frame=20))
    assert [GAME.move_to_dict(m)["move"] for m in done.moves] == ["hunt"]
    interp.reset()
    assert interp.observe(before, quiet).pending
    later = unread_piles(render(before, frame=90), reached=frozenset({"hunting"}), frame=90)
    gave_up = interp.observe(before, later)
    assert not gave_up.pending and not gave_up.desync and not gave_up.moves


def test_without_watched_hands_the_hands_count_for_nothing() -> None:
    """A snapshot that says nothing of hands (`reached` None) leaves a hunt and a sleep
    alike: the same move is read for both, while watched hands tell them apart."""
    before = GAME.initial_state(players=2, setup={"hunting": ["food", "leather"]})
    read: dict[str, list[str]] = {}
    for move, reached in (("hunt", {"hunting"}), ("sleep", set())):
        truth = GAME.apply(before, GAME.parse_move({"player": 1, "move": move})).state
        watched = unread_piles(render(truth, frame=1), reached=frozenset(reached), frame=1)
        blind = TableSnapshot(frame=1, time=watched.time, zones=watched.zones, counts=watched.counts,
                              settled=watched.settled)
        for name_, snapshot in (("watched", watched), ("blind", blind)):
            result = Interpreter(GAME).observe(before, snapshot)
            assert not result.desync
            read.setdefault(name_, []).extend(GAME.move_to_dict(m)["move"] for m in result.moves)
    assert read["watched"] == ["hunt", "sleep"]
    assert read["blind"][0] == read["blind"][1]


def test_a_material_moves_as_the_whole_stack_the_hand_most_likely_holds() -> None:
    """Two foods known in the hand and a card hunted unseen (food or leather, food more
    likely): the food put in the hotbar is read as the whole stack of three, for the camera
    sees only its top."""
    start = GAME.initial_state(players=2, setup={"inventory-1": ["food", "food"], "hunting": [None] * 10})
    hunted = GAME.apply(start, GAME.parse_move({"player": 1, "move": "hunt"})).state
    belief = GAME.apply(hunted, GAME.parse_move({"player": 2, "move": "sleep"})).state
    assert GAME.zones(belief)["inventory-1"] == ("food", "food", None)
    truth = GAME.apply(
        belief, GAME.parse_move({"player": 1, "move": "move", "card": "food", "to": "hotbar", "count": 3})
    ).state
    seen = render(truth, frame=1)
    unstacked = TableSnapshot(frame=1, time=seen.time, zones=seen.zones, settled=seen.settled,
                              counts={z: n for z, n in seen.counts.items() if not z.startswith("hotbar-")})
    result = Interpreter(GAME).observe(belief, unstacked)
    (move,) = result.moves
    assert GAME.move_to_dict(move)["count"] == 3
    assert GAME.zones(result.state)["inventory-1"] == ()


def test_a_stack_believed_higher_than_it_was_is_corrected_by_the_move_that_empties_it() -> None:
    """The belief holds two foods in a slot, the table one (a stack's height is never seen):
    eating empties the slot. The eat is read at once, with the slot set to one card first
    (a `table-change`, so the operator sees the correction)."""
    belief = GAME.initial_state(players=2, setup={"hotbar-1-1": ["food", "food"], "hunger-1": 3})
    table = GAME.initial_state(players=2, setup={"hotbar-1-1": ["food"], "hunger-1": 3})
    truth = GAME.apply(table, GAME.parse_move({"player": 1, "move": "eat"})).state
    seen = render(truth, frame=1)
    as_seen = TableSnapshot(
        frame=1, time=seen.time, zones=seen.zones, settled=seen.settled,
        counts={z: n for z, n in seen.counts.items() if not z.startswith("hotbar-") and z not in PILE_ZONES},
    )
    result = Interpreter(GAME).observe(belief, as_seen)
    assert not result.pending
    assert [GAME.move_to_dict(m)["move"] for m in result.moves] == ["table-change", "eat"]
    shown = {z for z in as_seen.settled if z not in PILE_ZONES}
    assert {z: LOOK.appearance(result.state)[z] for z in shown} == {z: LOOK.appearance(truth)[z] for z in shown}


def test_a_stack_believed_lower_than_it_was_is_corrected_by_the_move_that_takes_from_it() -> None:
    """The belief holds one food in a slot, the table two: eating leaves the slot showing
    food. The eat is read at once, the slot set to two cards first (a `table-change`, so the
    operator sees the correction), wherever the hands were seen (a palm is often placed a zone
    away, or hands are not watched)."""
    belief = GAME.initial_state(players=2, setup={"hotbar-1-1": ["food"], "hunger-1": 3})
    table = GAME.initial_state(players=2, setup={"hotbar-1-1": ["food", "food"], "hunger-1": 3})
    truth = GAME.apply(table, GAME.parse_move({"player": 1, "move": "eat"})).state
    seen = render(truth, frame=1)
    counts = {z: n for z, n in seen.counts.items() if not z.startswith("hotbar-") and z not in PILE_ZONES}
    for reached in (frozenset({"hotbar-1-1", "hunger-1"}), frozenset({"health-1"}), None):
        as_seen = TableSnapshot(frame=1, time=seen.time, zones=seen.zones, settled=seen.settled,
                                counts=counts, reached=reached)
        result = Interpreter(GAME).observe(belief, as_seen)
        assert not result.pending
        assert [GAME.move_to_dict(m)["move"] for m in result.moves] == ["table-change", "eat"]
        assert GAME.zones(result.state)["hotbar-1-1"] == ("food",)


def test_day_seen_at_the_end_of_a_night_the_belief_had_players_awake_in_is_read_at_once() -> None:
    """Three players; the belief missed player 1's sleep (a palm on a pile read it as a draw).
    Player 3 sleeps, the night ends, all four daylight tokens go out: from the belief no legal
    move explains them. The sleep is read at once, with daylight set by a `table-change` that
    raises desync (it is day after it), instead of waiting for the belief to catch up; the
    next player's turn is then read as a day turn."""
    night = GAME.initial_state(players=3, setup={"night": True, "daylight": 0, "effects-weather": ["rain"]})
    drew = GAME.apply(night, GAME.parse_move({"player": 1, "move": "draw", "roll": [6]})).state
    belief = GAME.apply(drew, GAME.parse_move({"player": 2, "move": "sleep", "roll": [6]})).state
    truth = night
    for p in (1, 2, 3):
        truth = GAME.apply(truth, GAME.parse_move({"player": p, "move": "sleep", "roll": [6]})).state
    assert not truth.night and truth.daylight == 4
    shown = unread_piles(render(truth, frame=1), reached=frozenset(), frame=1)
    interp = Interpreter(GAME)
    result = interp.observe(belief, shown)
    assert not result.pending and not result.desync
    moves = [GAME.move_to_dict(m) for m in result.moves]
    assert [m["move"] for m in moves] == ["sleep", "table-change"]
    assert moves[1]["zone"] == "daylight" and moves[1]["count"] == 4 and "roll" not in moves[1]
    assert not result.state.night and result.state.daylight == 4
    slept = GAME.apply(belief, result.moves[0]).state
    assert [w.code for w in GAME.apply(slept, result.moves[1]).warnings] == ["desync"]
    # A day turn: no night roll, daylight unchanged until the round ends.
    after = GAME.apply(truth, GAME.parse_move({"player": 1, "move": "sleep"})).state
    nxt = interp.observe(result.state, unread_piles(render(after, frame=40), reached=frozenset(), frame=40))
    assert [GAME.move_to_dict(m)["move"] for m in nxt.moves] == ["sleep"]
    assert not nxt.desync


def test_day_is_not_set_by_hand_when_every_player_slept() -> None:
    """The same night, every sleep read: the round's end explains the daylight tokens by the
    rules, with no `table-change`."""
    night = GAME.initial_state(players=3, setup={"night": True, "daylight": 0})
    belief = night
    for p in (1, 2):
        belief = GAME.apply(belief, GAME.parse_move({"player": p, "move": "sleep", "roll": [6]})).state
    truth = GAME.apply(belief, GAME.parse_move({"player": 3, "move": "sleep", "roll": [6]})).state
    result = Interpreter(GAME).observe(belief, unread_piles(render(truth, frame=1), reached=frozenset(), frame=1))
    assert [GAME.move_to_dict(m)["move"] for m in result.moves] == ["sleep"]
    assert not result.state.night
