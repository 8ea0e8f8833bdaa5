"""The live pipeline on whole-game footage of Minecraft: Explorers and Angry Birds Power Cards,
end to end with the truth stand-ins (`TruthOracleFinder` / `TruthOracleIdentifier`): a short
clip is rendered into a temporary folder, every frame goes through `Pipeline`, and the moves
read are compared with the truth's (`score_moves`). For Angry Birds the referee's reading of
each round (`view()['pending_round']`) is compared with the round's real winner as well.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from engine import get_game
from engine.core import Audience
from vision.art.pack import proxy_pack
from vision.capture import open_source
from vision.pipeline import (
    Pipeline,
    PipelineConfig,
    PipelineStep,
    TruthOracleFinder,
    TruthOracleIdentifier,
    profile_from_truth,
    score_moves,
    setup_from_truth,
)
from vision.synth.faces import FaceLibrary, faces_of_pack
from vision.synth.footage import FootageConfig, make_footage
from vision.synth.truth import Truth

Run = tuple[Truth, Pipeline, list[PipelineStep]]


def _render_and_read(out: Path, game: str, *, seed: int, moves: int) -> Run:
    lib = FaceLibrary(faces_of_pack(proxy_pack(game)))
    config = FootageConfig(game=game, players=2, seed=seed, moves=moves, fps=15.0, size=(480, 270),
                           effects=0.5)
    truth = make_footage(config, lib, out, progress=False)
    pipeline = Pipeline(
        PipelineConfig.for_game(game, fps=config.fps, camera_check=False),
        game=game, players=2, profile=profile_from_truth(truth),
        finder=TruthOracleFinder(truth, corner_noise_px=0.3, seed=5),
        identifier=TruthOracleIdentifier(truth),
        setup=setup_from_truth(truth, get_game(game)),
    )
    steps = []
    with open_source(out / "clip.mp4") as source:
        for frame in source:
            steps.append(pipeline.process(frame))
    return truth, pipeline, steps


def _emitted(steps: list[PipelineStep]) -> list[tuple[int, dict[str, Any]]]:
    return [(s.frame_index, m) for s in steps for m in s.move_dicts]


def _expected(truth: Truth) -> list[tuple[int, dict[str, Any]]]:
    return [(m.frame, dict(m.move)) for m in truth.moves]


@pytest.fixture(scope="module")
def explorers(tmp_path_factory: pytest.TempPathFactory) -> Run:
    # Seed 3 opens with three explores (the third with a pickaxe, which it damages), a refresh
    # and a second use of the damaged pickaxe, which breaks it.
    return _render_and_read(tmp_path_factory.mktemp("explorers"), "minecraft-explorers", seed=3, moves=5)


@pytest.fixture(scope="module")
def angry_birds(tmp_path_factory: pytest.TempPathFactory) -> Run:
    return _render_and_read(tmp_path_factory.mktemp("angry-birds"), "angry-birds-power-cards", seed=3, moves=9)


def test_explorers_moves_read_are_the_truth_moves(explorers: Run) -> None:
    truth, pipeline, steps = explorers
    emitted, expected = _emitted(steps), _expected(truth)
    score = score_moves(emitted, expected)
    assert score.matched == score.expected == score.emitted, (emitted, expected)
    assert all(d >= 0 for d in score.delays_frames), "a move was read before it was complete"
    view = pipeline.ruleset.view(pipeline.belief, Audience.OPERATOR)
    assert truth.final_state is not None
    assert view["damaged_tools"] == truth.final_state["damaged_tools"]
    assert view["zones"]["discard"] == truth.final_state["zones"]["discard"]


def test_angry_birds_cards_laid_are_read(angry_birds: Run) -> None:
    truth, _, steps = angry_birds
    # Cards laid in the same round may be read in one snapshot, in either order.
    plays = sorted((m["player"], m["card"]) for _, m in _emitted(steps) if m["move"] == "play")
    expected = sorted((m["player"], m["card"]) for _, m in _expected(truth) if m["move"] == "play")
    assert plays == expected


def _round_winners(truth: Truth) -> list[tuple[str, int | None]]:
    """(stat, winner) of every settled round, replayed by the engine from the truth's moves."""
    ruleset: Any = get_game("angry-birds-power-cards")
    assert truth.clip.players is not None
    state = ruleset.initial_state(players=truth.clip.players, seed=truth.clip.seed)
    out = []
    for m in truth.moves:
        move = ruleset.parse_move(dict(m.move))
        if m.move["move"] in ("take", "to-pot"):
            result = ruleset.round_result(state)
            out.append((result.stat.value, result.winner))
        state = ruleset.apply(state, move).state
    return out


def test_angry_birds_referee_names_each_rounds_winner(angry_birds: Run) -> None:
    truth, pipeline, steps = angry_birds
    assert truth.clip.seed is not None
    rounds = _round_winners(truth)
    assert rounds, "the clip settles at least one round"
    # The referee's reading once every card of a round lies on the table (the stat is not seen:
    # its reading for each stat is given, and the truth's stat picks one).
    readings = []
    for step in steps:
        if not step.moves:
            continue
        pending = pipeline.ruleset.view(step.interpretation.state if step.interpretation else pipeline.belief,
                                        Audience.OPERATOR).get("pending_round")
        if pending and not pending.get("waiting") and pending.get("by_stat"):
            readings.append(pending["by_stat"])
    assert len(readings) >= len(rounds)
    seen = []
    for by_stat in readings:
        if not seen or seen[-1] != by_stat:
            seen.append(by_stat)
    for (stat, winner), by_stat in zip(rounds, seen, strict=False):
        assert by_stat[stat]["winner"] == winner, (stat, winner, by_stat)


@pytest.mark.xfail(strict=True, reason=(
    "the camera cannot see who collects a round (the won cards go under a face-down deck) nor "
    "hear the stat named: the interpreter names a stat and a collector that agree with each "
    "other, not necessarily the real ones, and a build that follows is then credited wrongly"))
def test_angry_birds_moves_read_are_the_truth_moves(angry_birds: Run) -> None:
    truth, _, steps = angry_birds
    score = score_moves(_emitted(steps), _expected(truth))
    assert score.matched == score.expected == score.emitted


def test_angry_birds_referee_calls_every_collected_round_right(angry_birds: Run) -> None:
    # `cardtrack eval`'s referee figure on this clip: the call on the table when each round's
    # cards are collected (the collector held until the table tells, see InterpretConfig).
    from vision.evaluate import score_rounds, truth_rounds

    truth, pipeline, steps = angry_birds
    ruleset: Any = pipeline.ruleset
    opening = ruleset.initial_state(players=2, setup=setup_from_truth(truth, ruleset))
    readings = [(-1, ruleset.round_result(opening))]
    readings += [(s.frame_index, ruleset.round_result(s.interpretation.state))
                 for s in steps if s.moves and s.interpretation is not None]
    rounds = truth_rounds(ruleset, opening, truth)
    assert len(rounds) >= 2
    calls = score_rounds(rounds, readings)
    assert all(c["right"] for c in calls), calls
