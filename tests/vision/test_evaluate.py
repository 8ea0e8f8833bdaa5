"""The evaluation's measures on hand-built cases, and one short clip through the real models.

Polygon IoU, average precision, detection matching with its ignore band, corner error, move
matching with a frame tolerance, final-state differences, footage discovery, shards, merging
summaries and the baseline comparison are checked against values worked out by hand; a bad
truth file must name the file, the JSON path and the reason; a clip whose truth has no moves
must still report detection and identification.
"""

from __future__ import annotations

import copy
import gzip
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from vision.evaluate import (
    EvalOptions,
    EvaluationError,
    Footage,
    ModelChoice,
    RecordingIdentifier,
    Tally,
    Tolerance,
    average_precision,
    build_summary,
    collect_footage,
    compare_to_baseline,
    corner_errors,
    evaluate_clip,
    final_scores_equal,
    has_referee,
    load_clip,
    match_detections,
    match_moves,
    merge_summaries,
    parse_shard,
    polygon_iou,
    score_rounds,
    select_shard,
    state_differences,
    truth_rounds,
)
from vision.identify import FaceCandidate
from vision.synth.errors import TruthError
from vision.synth.truth import CardTruth, FrameTruth

REPO = Path(__file__).resolve().parents[2]
CLIP = REPO / "datasets" / "footage" / "mattel-2p-tnt-endgame"


def box(x0: float, y0: float, x1: float, y1: float) -> list[list[float]]:
    return [[x0, y0], [x1, y0], [x1, y1], [x0, y1]]


# -- polygon IoU ------------------------------------------------------------------------------------


def test_polygon_iou_of_hand_computed_cases() -> None:
    square = box(0, 0, 2, 2)
    assert polygon_iou(square, square) == pytest.approx(1.0)
    # Half overlap: intersection 2, union 4 + 4 - 2 = 6.
    assert polygon_iou(square, box(1, 0, 3, 2)) == pytest.approx(1 / 3, abs=1e-5)
    # A corner overlap: intersection 1, union 7.
    assert polygon_iou(square, box(1, 1, 3, 3)) == pytest.approx(1 / 7, abs=1e-5)
    # The diamond through the square's edge midpoints has half its area.
    diamond = [[1, 0], [2, 1], [1, 2], [0, 1]]
    assert polygon_iou(square, diamond) == pytest.approx(0.5, abs=1e-5)
    # Disjoint, and touching along an edge only.
    assert polygon_iou(square, box(5, 5, 6, 6)) == 0.0
    assert polygon_iou(square, box(2, 0, 4, 2)) == pytest.approx(0.0, abs=1e-6)


def test_polygon_iou_ignores_winding_and_start_corner() -> None:
    a = np.array(box(0, 0, 4, 2), np.float32)
    b = np.array(box(1, 0, 5, 2), np.float32)  # intersection 6, union 10
    for turned in (b, b[::-1], np.roll(b, 1, axis=0), np.roll(b[::-1], 2, axis=0)):
        assert polygon_iou(a, turned) == pytest.approx(0.6, abs=1e-5)


def test_corner_error_is_the_best_of_the_four_cyclic_orders() -> None:
    truth = np.array(box(0, 0, 100, 140), np.float64)
    assert corner_errors(np.roll(truth, 2, axis=0), truth) == pytest.approx([0, 0, 0, 0])
    shifted = np.roll(truth + np.array([3.0, 4.0]), 1, axis=0)
    assert corner_errors(shifted, truth) == pytest.approx([5, 5, 5, 5])


# -- average precision and matching ---------------------------------------------------------------


def test_average_precision_of_hand_built_rankings() -> None:
    # TP, FP, TP with 3 cards to find: 1/3 at precision 1, then 1/3 more at precision 2/3.
    assert average_precision([0.9, 0.8, 0.7], [True, False, True], 3) == pytest.approx(5 / 9)
    assert average_precision([0.9, 0.5], [True, True], 2) == pytest.approx(1.0)
    assert average_precision([0.9], [False], 2) == pytest.approx(0.0)
    assert average_precision([], [], 2) == pytest.approx(0.0)
    assert average_precision([0.9], [True], 0) is None
    # Equal scores count as one step: no credit for a lucky order.
    assert average_precision([0.9, 0.9], [True, False], 1) == pytest.approx(0.5)


def test_matching_prefers_cards_to_find_and_ignores_faint_ones() -> None:
    truth = np.array([box(0, 0, 100, 140), box(0, 0, 100, 140), box(400, 0, 500, 140)], np.float32)
    visible = np.array([0.0, 1.0, 0.2])  # a hidden card under the top one, the top one, a faint one
    dets = np.array([box(0, 0, 100, 140), box(10, 0, 110, 140), box(400, 0, 500, 140)], np.float32)
    from vision.detections import iou_matrix

    m = match_detections(iou_matrix(dets, truth), np.array([0.9, 0.8, 0.7]), visible, 0.5)
    assert m.tp.tolist() == [True, False, False]
    assert m.ignored.tolist() == [False, False, True]
    assert m.fp.tolist() == [False, True, False]  # the shifted duplicate of a card already found
    assert m.matched.tolist() == [-1, 0, 2]


def frame_of(cards: list[tuple[str, list[list[float]], float]], index: int = 0) -> FrameTruth:
    return FrameTruth(index=index, cards=tuple(
        CardTruth(face=face, corners=tuple(tuple(p) for p in quad), visible=v)  # type: ignore[arg-type]
        for face, quad, v in cards
    ))


def hand_tally() -> Tally:
    """Two cards to find (A exact, B found 20 px off: IoU 2/3), a faint card, a hidden card, and a
    duplicate of A."""
    truth = frame_of([
        ("wood-1", box(0, 0, 100, 140), 1.0),
        ("wood-2", box(0, 0, 100, 140), 0.0),
        ("iron-1", box(200, 0, 300, 140), 0.9),
        ("gold-1", box(400, 0, 500, 140), 0.2),
    ])
    dets = np.array([box(0, 0, 100, 140), box(10, 0, 110, 140), box(400, 0, 500, 140), box(220, 0, 320, 140)],
                    np.float32)
    tally = Tally()
    tally.clips = 1
    tally.add_frame(dets, np.array([0.9, 0.8, 0.7, 0.6]), truth)
    answers = [(FaceCandidate(face="wood-1", rotated_180=False, score=0.9),), ()]
    # The crops as cut: A on its corners, B 10 px (a tenth of its width) to the right.
    tally.add_identify(np.array([box(0, 0, 100, 140), box(210, 0, 310, 140)], np.float32), answers, truth)
    return tally


def test_a_card_cut_both_ways_counts_once_by_its_better_answer() -> None:
    truth = frame_of([("wood-1", box(0, 0, 100, 140), 1.0), ("iron-1", box(200, 0, 300, 140), 1.0)])
    quads = np.array([box(0, 0, 100, 140), box(0, 0, 100, 140), box(200, 0, 300, 140),
                      box(200, 0, 300, 140)], np.float32)
    answers = [(), (FaceCandidate(face="wood-1", rotated_180=False, score=0.9),),
               (FaceCandidate(face="iron-1", rotated_180=False, score=0.8),),
               (FaceCandidate(face="gold-1", rotated_180=False, score=0.4),)]
    tally = Tally()
    tally.clips = 1
    tally.add_identify(quads, answers, truth)
    ident = tally.figures()["identifier"]
    assert (ident["scored"], ident["correct"], ident["unknown"]) == (2, 2, 0)


def test_tally_figures_match_the_hand_computation() -> None:
    f = hand_tally().figures()
    finder = f["finder"]
    assert finder["truth_cards"] == 2 and finder["detections"] == 4
    # IoU ≤ 0.65: TP, FP (duplicate), TP → 1/2·1 + 1/2·2/3; above, B is a miss: 1/2.
    assert finder["ap50"] == pytest.approx(5 / 6, abs=1e-4)
    assert finder["ap50_95"] == pytest.approx((4 * 5 / 6 + 6 * 0.5) / 10, abs=1e-4)
    bins = {r["visible"]: (r["cards"], r["found"]) for r in finder["recall_by_visible"]}
    assert bins == {"0.0-0.1": (0, 0), "0.1-0.3": (1, 1), "0.3-0.5": (0, 0), "0.5-0.7": (0, 0),
                    "0.7-0.9": (1, 1), "0.9-1.0": (1, 1)}
    assert finder["corner_cards"] == 2
    assert finder["corner_error_px"]["mean"] == pytest.approx(10.0)
    assert finder["corner_error_pct"]["p95"] == pytest.approx(20.0, abs=0.051)  # a 0.1 % bin's centre
    ident = f["identifier"]
    assert (ident["scored"], ident["correct"], ident["unknown"]) == (2, 1, 1)
    assert ident["top1"] == 0.5 and ident["top1_answered"] == 1.0
    assert ident["worst_faces"][0]["face"] == "iron-1"
    assert ident["crop_cards"] == 2
    assert ident["crop_corner_error_pct"]["mean"] == pytest.approx(5.0)
    assert ident["crop_corner_error_pct"]["p95"] == pytest.approx(10.0, abs=0.051)


def test_a_tally_survives_plain_data_and_merging_adds_counts() -> None:
    a = hand_tally()
    again = Tally.from_dict(json.loads(json.dumps(a.to_dict())))
    assert again.figures() == a.figures()
    a.merge(hand_tally())
    f = a.figures()
    assert f["finder"]["truth_cards"] == 4
    assert f["finder"]["ap50"] == pytest.approx(5 / 6, abs=1e-4)
    with pytest.raises(EvaluationError, match="counts are incomplete"):
        Tally.from_dict({"clips": 1})


def test_the_recording_identifier_passes_answers_through_and_keeps_them() -> None:
    answer = (FaceCandidate(face="tnt", rotated_180=True, score=0.8),)

    class Fixed:
        def identify(self, crops, *, corners, frame_index):  # type: ignore[no-untyped-def]
            return [answer for _ in crops]

    rec = RecordingIdentifier(Fixed())
    corners = np.zeros((2, 4, 2), np.float32)
    assert rec.identify([np.zeros((4, 4, 3))] * 2, corners=corners, frame_index=7) == [answer, answer]
    calls = rec.drain()
    assert len(calls) == 1 and calls[0].frame_index == 7 and calls[0].answers == (answer, answer)
    assert rec.drain() == []


# -- moves and final state ----------------------------------------------------------------------------


def test_moves_match_within_the_tolerance_with_payments_as_sets_and_reveals_ignored() -> None:
    truth = [(54, {"player": 1, "move": "mine", "pile": 1}),
             (141, {"player": 1, "move": "craft", "card": "diamond-sword", "pay": ["diamond-1", "wood-1"]})]
    read = [(70, {"player": 1, "move": "mine", "pile": 1, "reveal": {"resource-pile-1": "wood-2"}}),
            (150, {"player": 1, "move": "craft", "card": "diamond-sword", "pay": ["wood-1", "diamond-1"]})]
    m = match_moves(read, truth, 16)
    assert m.pairs == ((0, 0), (1, 1)) and not m.missed and not m.spurious
    late = match_moves(read, truth, 15)  # the mine was read 16 frames late
    assert late.pairs == ((1, 1),) and late.missed == (0,) and late.spurious == (0,)
    other_cards = [(150, {"player": 1, "move": "craft", "card": "diamond-sword", "pay": ["wood-1", "wood-2"]})]
    assert match_moves(other_cards, truth, 30).spurious == (0,)
    with pytest.raises(ValueError, match="tolerance"):
        match_moves(read, truth, -1)


def test_repeated_moves_match_the_one_nearby_and_order_is_kept() -> None:
    mine = {"player": 2, "move": "mine", "pile": 3}
    m = match_moves([(105, mine)], [(10, mine), (100, mine)], 10)
    assert m.pairs == ((0, 1),) and m.missed == (0,)
    a, b = {"move": "a"}, {"move": "b"}
    crossed = match_moves([(10, a), (20, b)], [(12, b), (18, a)], 10)
    assert len(crossed.pairs) == 1


def test_final_state_differences_name_the_path_and_let_unknown_cards_match() -> None:
    truth = {"scores": [24, 18], "zones": {"pile": ["wood-2", "iron-1"], "discard": ["tnt"]}, "turn": 3}
    read = {"scores": [24, 18], "zones": {"pile": ["wood-2", None], "discard": ["tnt"]}, "turn": 3}
    assert state_differences(read, truth) == []
    read2 = copy.deepcopy(read)
    read2["scores"] = [6, 13]
    read2["zones"]["discard"] = []
    diffs = state_differences(read2, truth)
    assert diffs == [{"path": "scores", "kind": "cards", "read": [6, 13], "truth": [24, 18]},
                     {"path": "zones.discard", "kind": "cards", "read": [], "truth": ["tnt"]}]
    read3 = {**copy.deepcopy(read), "turn": 5, "zones": {"pile": ["iron-1", "wood-2"], "discard": ["tnt"]}}
    assert [(d["path"], d["kind"]) for d in state_differences(read3, truth)] == [("zones.pile", "order"),
                                                                                  ("turn", "value")]


def test_final_scores_are_equal_when_scores_and_winner_are_whatever_else_differs() -> None:
    truth = {"scores": [5, 1], "winner": None, "zones": {"resource-pile-3": ["wood-2", "wood-1"]}}
    # Two creepers passed through the top of pile 3 unseen: the pile is two cards too high.
    read = {"scores": [5, 1], "winner": None, "zones": {"resource-pile-3": ["wood-2", None, None, None]}}
    assert state_differences(read, truth) and final_scores_equal(read, truth) is True
    assert final_scores_equal({**read, "scores": [5, 3]}, truth) is False
    assert final_scores_equal({**read, "winner": 1}, truth) is False
    assert final_scores_equal(read, {"zones": truth["zones"]}) is None  # a truth without scores
    t = Tally()
    t.scores_compared, t.scores_equal = 2, 1
    again = Tally.from_dict(json.loads(json.dumps(t.to_dict())))
    again.merge(t)
    assert again.figures()["final_scores"] == {"compared": 4, "equal": 2}
    older = t.to_dict()
    del older["scores_compared"], older["scores_equal"]  # a summary written before the figure
    assert Tally.from_dict(older).figures()["final_scores"] == {"compared": 0, "equal": 0}


# -- footage, shards -----------------------------------------------------------------------------------


def test_footage_is_found_and_everything_else_skipped_with_a_reason(tmp_path: Path) -> None:
    clip = tmp_path / "clip-a"
    clip.mkdir()
    (clip / "clip.mp4").write_bytes(b"")
    (clip / "truth.json").write_text("{}")
    video = tmp_path / "table.mp4"
    video.write_bytes(b"")
    (tmp_path / "table.truth.json").write_text("{}")
    frames = tmp_path / "shot" / "frames"
    frames.mkdir(parents=True)
    (frames / "000.png").write_bytes(b"")
    (tmp_path / "shot" / "truth.json.gz").write_bytes(b"")
    (tmp_path / "README.md").write_text("notes")
    (tmp_path / "scripts").mkdir()
    lone = tmp_path / "lone.mp4"
    lone.write_bytes(b"")
    paths = [clip, video, frames, tmp_path / "README.md", tmp_path / "scripts", lone]
    clips, notices = collect_footage(paths)
    assert [c.name for c in clips] == ["clip-a", "shot", "table"]
    assert clips[0].media is None and clips[1].media == frames and clips[2].truth == tmp_path / "table.truth.json"
    assert len(notices) == 3
    assert any("README.md: skipped" in n for n in notices)
    assert any("lone.mp4: skipped, no truth file" in n for n in notices)
    with pytest.raises(EvaluationError, match="no footage to evaluate"):
        collect_footage([tmp_path / "README.md"])
    with pytest.raises(EvaluationError, match="no such file"):
        collect_footage([tmp_path / "missing.mp4"])
    with pytest.raises(EvaluationError, match="one clip"):
        collect_footage([clip, video], truth=clip / "truth.json")
    single, _ = collect_footage([lone], truth=clip / "truth.json")
    assert single[0].truth == clip / "truth.json" and single[0].media == lone


def test_shards_take_every_nth_clip_from_k() -> None:
    assert parse_shard("1/3") == (1, 3)
    assert select_shard(list(range(7)), 1, 3) == [1, 4]
    assert select_shard(list(range(7)), 0, 1) == list(range(7))
    for bad in ("3/3", "-1/2", "1", "a/b", "0/0"):
        with pytest.raises(EvaluationError, match="--shard"):
            parse_shard(bad)


# -- summaries: merge and baseline ----------------------------------------------------------------------


def entry(tally: Tally, matched: int) -> dict[str, object]:
    tally.moves_truth, tally.moves_emitted, tally.moves_matched = 8, 9, matched
    tally.latency = [10] * matched
    tally.frames, tally.seconds, tally.stages = 100, 2.0, {"find": [100, 900.0]}
    return {"footage": "x", "tolerance_frames": 30, "cut_at_frame": None, **tally.figures(),
            "counts": tally.to_dict()}


def test_merged_shards_give_the_figures_of_one_run() -> None:
    models = {"oracle": True}
    a, b = entry(hand_tally(), 5), entry(hand_tally(), 7)
    whole = build_summary({"a": a, "b": b}, models=models)
    shard0 = build_summary({"a": a}, models=models, shard=(0, 2))
    shard1 = build_summary({"b": b}, models=models, shard=(1, 2))
    merged = merge_summaries([("s0", shard1), ("s1", shard0)])
    assert merged["overall"] == whole["overall"]
    assert list(merged["clips"]) == ["a", "b"] and merged["shard"] is None
    assert merged["overall"]["moves"]["matched"] == 12
    with pytest.raises(EvaluationError, match="in both"):
        merge_summaries([("s0", shard0), ("again", shard0)])
    with pytest.raises(EvaluationError, match="other models"):
        merge_summaries([("s0", shard0), ("s1", {**shard1, "models": {"oracle": False}})])


def test_the_baseline_comparison_flags_only_what_leaves_the_tolerance() -> None:
    models = {"oracle": True}
    base = build_summary({"a": entry(hand_tally(), 5)}, models=models)
    assert compare_to_baseline(base, base) == ([], [])
    one_more = build_summary({"a": entry(hand_tally(), 6)}, models=models)
    assert compare_to_baseline(one_more, base)[0] == []  # ±1 move
    worse = copy.deepcopy(build_summary({"a": entry(hand_tally(), 2)}, models=models))
    worse["clips"]["a"]["finder"]["ap50"] -= 0.05
    worse["clips"]["a"]["speed"]["fps"] = 1.0  # speed is never compared
    diffs, _ = compare_to_baseline(worse, base)
    where = {(d.where, d.path) for d in diffs}
    assert ("a", "finder.ap50") in where and ("a", "moves.matched") in where and ("overall", "moves.matched") in where
    assert not any("speed" in d.path for d in diffs)
    assert "baseline 5, now 2 (allowed ±1)" in next(d for d in diffs if d.path == "moves.matched").describe()
    assert compare_to_baseline(worse, base, Tolerance(rate=0.1, count=5, latency_frames=20))[0] == []
    missing = build_summary({}, models=models)
    assert any(d.path == "(clip)" for d in compare_to_baseline(missing, base)[0])
    assert compare_to_baseline({**missing, "shard": {"index": 1, "count": 2}}, base)[0] == []


# -- truth files and a real clip ------------------------------------------------------------------------


def test_a_truth_file_that_breaks_the_schema_names_file_path_and_reason(tmp_path: Path) -> None:
    folder = tmp_path / "bad"
    folder.mkdir()
    (folder / "clip.mp4").write_bytes(b"")
    bad = {"truth_version": 1, "clip": {"game": "minecraft-card-game", "players": 2, "frame_size": [64, 48],
                                        "source": "recorded"},
           "frames": [{"index": 0, "cards": [{"face": "tnt", "corners": [[0, 0], [1, 0], [1, 1]], "visible": 1}]}]}
    (folder / "truth.json").write_text(json.dumps(bad))
    clips, _ = collect_footage([folder])
    with pytest.raises(TruthError) as err:
        load_clip(clips[0])
    text = str(err.value)
    assert str(folder / "truth.json") in text and "$.frames[0].cards[0].corners" in text and "too short" in text


def test_a_clip_without_truth_moves_still_reports_detection_and_identification(tmp_path: Path) -> None:
    data = json.loads(gzip.decompress((CLIP / "truth.json.gz").read_bytes()))
    data["moves"] = []
    data["final_state"] = None
    data["frames"] = data["frames"][:40]
    data["checkpoints"] = [c for c in data["checkpoints"] if c["frame"] < 40]
    folder = tmp_path / "no-moves"
    folder.mkdir()
    (folder / "clip.mp4").symlink_to(CLIP / "clip.mp4")
    (folder / "truth.json").write_text(json.dumps(data), encoding="utf-8")
    footage = Footage(name="no-moves", path=folder, truth=folder / "truth.json")
    out = evaluate_clip(footage, EvalOptions(models=ModelChoice(), max_frames=40), tmp_path / "report", progress=False)
    assert out["frames"] == 40 and out["finder"]["frames"] == 40
    assert out["finder"]["truth_cards"] > 0 and out["finder"]["detections"] > 0
    assert out["finder"]["ap50"] is not None
    assert out["identifier"]["crops"] > 0
    assert out["moves"]["truth"] == 0 and out["moves"]["recall"] is None
    assert out["final_state"] == {"compared": 0, "equal": 0}
    json.dumps(out)  # plain data


def test_a_frame_folder_with_its_truth_beside_it_is_read_in_name_order(tmp_path: Path) -> None:
    import cv2

    shot = tmp_path / "shot"
    (shot / "frames").mkdir(parents=True)
    capture = cv2.VideoCapture(str(CLIP / "clip.mp4"))
    for i in range(16):  # the opening checkpoint is at frame 14
        ok, image = capture.read()
        assert ok
        cv2.imwrite(str(shot / "frames" / f"{i:04d}.png"), image)
    capture.release()
    data = json.loads(gzip.decompress((CLIP / "truth.json.gz").read_bytes()))
    data.update(moves=[], final_state=None, frames=data["frames"][:16],
                checkpoints=[c for c in data["checkpoints"] if c["frame"] < 16])
    (shot / "truth.json").write_text(json.dumps(data), encoding="utf-8")
    clips, notices = collect_footage([shot / "frames"])
    assert not notices and clips[0].name == "shot" and clips[0].media == shot / "frames"
    out = evaluate_clip(clips[0], EvalOptions(models=ModelChoice(oracle=True)), None, progress=False)
    assert out["frames"] == 16 and out["finder"]["frames"] == 16
    assert out["finder"]["ap50"] == pytest.approx(1.0)  # the truth stand-in finds what the truth lists
    assert out["identifier"]["top1"] == pytest.approx(1.0)


# -- the referee's calls ------------------------------------------------------------------------


def test_each_collected_round_is_scored_by_the_call_on_the_table_when_it_was_collected() -> None:
    from types import SimpleNamespace

    from engine import get_game
    from vision.synth.truth import MoveTruth

    rules: Any = get_game("angry-birds-power-cards")
    opening = rules.initial_state(players=2, setup={"deck-1": ["red-1", "bomb-3"], "deck-2": ["blues-1", "stella-2"]})
    played = [(10, {"player": 1, "move": "play", "card": "red-1"}),
              (20, {"player": 2, "move": "play", "card": "blues-1"}),
              (30, {"player": 1, "move": "name-stat", "stat": "power"}),
              (40, {"player": 1, "move": "take"}),
              (50, {"player": 1, "move": "play", "card": "bomb-3"})]
    truth: Any = SimpleNamespace(moves=[MoveTruth(frame=f, move=m) for f, m in played])
    assert has_referee(rules)
    rounds = truth_rounds(rules, opening, truth)
    assert [(frame, call.stat, dict(call.cards), call.winner) for frame, call in rounds] == [
        (40, "power", {"1": "red-1", "2": "blues-1"}, 1)]

    def after(*moves: dict[str, Any]) -> Any:
        state = opening
        for m in moves:
            state = rules.apply(state, rules.parse_move(m)).state
        return rules.round_result(state)

    laid = after(played[0][1], played[1][1])  # the stat not named: one call per stat
    right = score_rounds(rounds, [(-1, after()), (22, laid)])
    assert right[0]["right"] and right[0]["says"] == "stat not named: player 1 wins"
    # Read too late: at the collection the table showed one card only.
    late = score_rounds(rounds, [(-1, after()), (12, after(played[0][1])), (45, laid)])
    assert not late[0]["right"] and late[0]["says"] == "nothing announced"
    # Another card read for player 2: not the round that was played.
    other = {"player": 2, "move": "play", "card": "stella-2"}
    wrong = score_rounds(rounds, [(-1, after()), (22, after(played[0][1], other))])
    assert not wrong[0]["right"] and wrong[0]["called"]["cards"] == {"1": "red-1", "2": "stella-2"}
    # The collection read as it began (frame 35), before the truth's last card was picked up
    # (frame 40): what the overlay announced until then counts.
    taken = after(played[0][1], played[1][1], played[2][1], played[3][1])
    early = score_rounds(rounds, [(-1, after()), (22, laid), (35, taken)])
    assert early[0]["right"] and early[0]["says"] == "stat not named: player 1 wins"
    # Announced only after the cards were collected: nothing announced in time.
    after_it = score_rounds(rounds, [(-1, after()), (12, after(played[0][1])), (35, taken), (45, laid)])
    assert not after_it[0]["right"] and after_it[0]["says"] == "nothing announced"


def test_the_identifier_inset_chosen_for_an_evaluation_reaches_the_pipelines_identifier() -> None:
    from vision.evaluate import clip_pipeline
    from vision.identify import CARD_INSET

    clip = load_clip(Footage(name=CLIP.name, path=CLIP, truth=CLIP / "truth.json.gz"))
    shipped = clip_pipeline(clip, ModelChoice())
    once = clip_pipeline(clip, ModelChoice(identifier_inset=0.0))
    assert shipped.identifier.embedder.inset == CARD_INSET
    assert once.identifier.embedder.inset == 0.0
    assert ModelChoice(identifier_inset=0.0).describe()["identifier_inset"] == 0.0
    assert "identifier_inset" not in ModelChoice().describe()



def test_the_closer_read_chosen_for_an_evaluation_reaches_the_pipelines_finder() -> None:
    from vision.evaluate import clip_pipeline

    clip = load_clip(Footage(name=CLIP.name, path=CLIP, truth=CLIP / "truth.json.gz"))
    default = clip_pipeline(clip, ModelChoice(stand_in="identifier"))
    closer = clip_pipeline(clip, ModelChoice(stand_in="identifier", zoom=1.5))
    assert default.config.zoom is None and default.finder.regions == ()
    assert closer.config.zoom == 1.5 and closer.finder.zoom == 1.5
    assert len(closer.finder.regions) == clip.players  # each player's area
    never = clip_pipeline(clip, ModelChoice(stand_in="identifier", zoom=0.0))
    assert never.config.zoom is None and never.finder.regions == ()
    assert ModelChoice(zoom=1.5).describe()["zoom"] == 1.5 and "zoom" not in ModelChoice().describe()
    with pytest.raises(EvaluationError, match="no scale"):
        ModelChoice(zoom=-1.0)
    with pytest.raises(EvaluationError, match="truth stand-in"):
        ModelChoice(zoom=1.5, stand_in="finder")

def test_one_model_can_be_replaced_by_its_truth_stand_in_to_measure_the_other() -> None:
    from vision.evaluate import clip_pipeline
    from vision.pipeline import (
        GalleryIdentifier,
        ModelFinder,
        TruthOracleFinder,
        TruthOracleIdentifier,
    )

    clip = load_clip(Footage(name=CLIP.name, path=CLIP, truth=CLIP / "truth.json.gz"))
    finder_only = clip_pipeline(clip, ModelChoice(stand_in="identifier"))
    assert isinstance(finder_only.finder, ModelFinder) and isinstance(finder_only.identifier, TruthOracleIdentifier)
    assert finder_only.corner_refiner is not None  # the model's crops are refined as in play
    identifier_only = clip_pipeline(clip, ModelChoice(stand_in="finder"))
    assert isinstance(identifier_only.finder, TruthOracleFinder)
    assert isinstance(identifier_only.identifier, GalleryIdentifier)
    assert identifier_only.corner_refiner is None  # the truth's corners need none
    described = ModelChoice(stand_in="finder").describe()
    assert described["finder"] == "truth stand-in" and described["finder_sha256"] is None
    assert described["identifier"].endswith("identifier.onnx") and described["identifier_sha256"]

    out = evaluate_clip(clip.footage, EvalOptions(models=ModelChoice(stand_in="identifier"), max_frames=30),
                        None, progress=False)
    both = evaluate_clip(clip.footage, EvalOptions(models=ModelChoice(), max_frames=30), None, progress=False)
    assert out["finder"] == both["finder"] and out["finder"]["ap50"] < 1.0  # the model's detections, scored
    assert out["identifier"]["crops"] > 0 and out["identifier"]["top1"] > both["identifier"]["top1"]

    with pytest.raises(EvaluationError, match="no model"):
        ModelChoice(stand_in="tokens")
    with pytest.raises(EvaluationError, match="both models"):
        ModelChoice(oracle=True, stand_in="finder")
    with pytest.raises(EvaluationError, match="would not run"):
        ModelChoice(stand_in="identifier", identifier=Path("other.onnx"))
    with pytest.raises(EvaluationError, match="would not be used"):
        ModelChoice(stand_in="identifier", identifier_inset=0.0)
    assert ModelChoice(stand_in="finder", identifier_inset=0.0).describe()["identifier_inset"] == 0.0
