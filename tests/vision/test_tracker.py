"""Card tracker as frame timelines: entry/exit hysteresis, crossings, re-identification."""

from __future__ import annotations

import numpy as np
import pytest

from engine.snapshot import Candidate
from vision.detections import Detections
from vision.tracker import (
    CardTracker,
    IdentifyReason,
    TrackerConfig,
    TrackerError,
    align_corners,
    clockwise,
    greedy_assign,
    quad_signature,
)

H, W = 360, 640


def card(cx: float, cy: float, angle: float = 0.0, w: float = 63.0, h: float = 88.0) -> np.ndarray:
    a = np.deg2rad(angle)
    rot = np.array([[np.cos(a), -np.sin(a)], [np.sin(a), np.cos(a)]])
    local = np.array([[-w / 2, -h / 2], [w / 2, -h / 2], [w / 2, h / 2], [-w / 2, h / 2]])
    return (local @ rot.T + [cx, cy]).astype(np.float32)


def dets(*quads: np.ndarray, faces: list[str | None] | None = None) -> Detections:
    if not quads:
        return Detections.empty()
    return Detections(
        corners=np.stack(quads),
        scores=np.full(len(quads), 0.9),
        faces=faces,
        face_scores=None if faces is None else np.full(len(quads), 0.8),
    )


def draw(quads: list[np.ndarray], looks: list[str], seed: int = 0) -> np.ndarray:
    """A noisy green table with cards: 'front' (red top half, blue bottom), 'back' (grey)."""
    import cv2

    rng = np.random.default_rng(seed)
    img = np.full((H, W, 3), (40, 110, 50), np.uint8)
    for q, look in zip(quads, looks, strict=True):
        if look == "back":
            cv2.fillPoly(img, [np.round(q).astype(np.int32)], (150, 150, 150))
            continue
        mid_l, mid_r = (q[0] + q[3]) / 2, (q[1] + q[2]) / 2
        top = np.stack([q[0], q[1], mid_r, mid_l])
        bottom = np.stack([mid_l, mid_r, q[2], q[3]])
        cv2.fillPoly(img, [np.round(top).astype(np.int32)], (40, 40, 220))
        cv2.fillPoly(img, [np.round(bottom).astype(np.int32)], (220, 80, 40))
    noise = rng.normal(0, 3, img.shape)
    return np.clip(img + noise, 0, 255).astype(np.uint8)


def ids(tracker_update: object) -> list[int]:
    return [t.track_id for t in tracker_update.tracks]  # type: ignore[attr-defined]


def test_appears_after_3_hits_survives_5_misses_gone_on_the_6th() -> None:
    tracker = CardTracker(TrackerConfig(frames_to_confirm=3, frames_to_forget=5))
    q = card(100, 100)
    seen = [tracker.update(dets(q)) for _ in range(3)]
    assert [ids(u) for u in seen] == [[], [], [1]]
    assert seen[2].started == (1,)
    assert list(seen[1].detections.track_ids) == [-1]  # type: ignore[arg-type]
    assert list(seen[2].detections.track_ids) == [1]  # type: ignore[arg-type]
    for miss in range(1, 6):
        u = tracker.update(dets())
        assert ids(u) == [1], f"gone after {miss} misses"
        assert u.tracks[0].misses == miss and u.tracks[0].detection_index is None
    u = tracker.update(dets())
    assert ids(u) == [] and u.ended == (1,)


def test_a_track_keeps_the_finders_highest_confidence_in_its_card() -> None:
    tracker = CardTracker()
    q = card(100, 100)
    update = None
    for score in (0.42, 0.61, 0.45):
        found = Detections(corners=q[None], scores=np.array([score], np.float32))
        update = tracker.update(found)
    assert update is not None and len(update.tracks) == 1
    assert update.tracks[0].peak_score == pytest.approx(0.61)


def test_misses_are_forgiven_when_the_card_comes_back() -> None:
    tracker = CardTracker(TrackerConfig(frames_to_confirm=3, frames_to_forget=5))
    timeline = "HHH" + "MMMM" + "H" + "MMMMM" + "H"
    out = [tracker.update(dets(card(200, 150)) if c == "H" else dets()) for c in timeline]
    assert all(ids(u) == [1] for u in out[2:])
    assert not any(u.ended for u in out)


def test_flicker_never_becomes_a_track_and_ids_stay_dense() -> None:
    tracker = CardTracker(TrackerConfig(frames_to_confirm=3))
    for _ in range(4):  # a ghost seen twice then gone, again and again
        tracker.update(dets(card(300, 200)))
        tracker.update(dets(card(300, 200)))
        assert ids(tracker.update(dets())) == []
    u = [tracker.update(dets(card(50, 60))) for _ in range(3)][-1]
    assert ids(u) == [1]  # ghosts used no ids


@pytest.mark.parametrize("use_faces", [False, True])
def test_two_cards_crossing_keep_their_ids(use_faces: bool) -> None:
    # Velocity prediction alone, or faces alone (velocity off), carry the ids through.
    cfg = TrackerConfig(velocity_gain=0.0 if use_faces else 0.6, max_jump_mm=40.0)
    tracker = CardTracker(cfg)
    faces = ["mob.zombie", "item.sword"] if use_faces else None
    a_id = b_id = None
    for f in range(30):
        xa, xb = 100 + 12 * f, 448 - 12 * f  # they meet around frame 14
        u = tracker.update(dets(card(xa, 200), card(xb, 204), faces=faces))
        if use_faces and f == 2:
            tracker.identified(1, [Candidate(face="mob.zombie", score=0.9)])
            tracker.identified(2, [Candidate(face="item.sword", score=0.9)])
        if f >= 2:
            row = list(u.detections.track_ids)  # type: ignore[arg-type]
            if a_id is None:
                a_id, b_id = row
            assert row == [a_id, b_id], f"ids swapped at frame {f}"
    assert a_id != b_id


def test_identification_requested_for_new_moved_turned_and_flipped_cards() -> None:
    tracker = CardTracker(TrackerConfig(reidentify_move_mm=15, reidentify_turn_deg=20))
    q = card(300, 180, angle=10)

    def step(quad: np.ndarray, look: str = "front", seed: int = 0) -> list[tuple[int, IdentifyReason]]:
        tracker.update(dets(quad), image=draw([quad], [look], seed=seed))
        return [(r.track_id, r.reason) for r in tracker.tracks_needing_identification()]

    assert step(q) == [] and step(q) == []  # tentative: not yet
    assert step(q) == [(1, IdentifyReason.NEW)]
    tracker.identified(1, {"item.sword": 0.8, "item.axe": 0.3})
    for s in range(4):  # camera noise and a nudge of a few mm: nothing to do
        assert step(card(300 + s, 180, angle=10), seed=s + 1) == []
    assert step(card(330, 180, angle=10)) == [(1, IdentifyReason.MOVED)]
    tracker.identified(1, {"item.sword": 0.9})
    assert step(card(330, 180, angle=45)) == [(1, IdentifyReason.TURNED)]
    tracker.identified(1, {"item.sword": 0.9})
    assert step(card(330, 180, angle=45), seed=3) == []
    flipped = step(card(330, 180, angle=45), look="back")
    assert flipped == [(1, IdentifyReason.APPEARANCE)]
    tracker.identified(1, [Candidate(face="item.back", score=0.7)])
    track = tracker.track(1)
    assert track is not None
    # A flip drops the evidence about the old face instead of averaging with it.
    assert [c.face for c in track.candidates] == ["item.back"]
    assert step(card(330, 180, angle=45), look="back", seed=9) == []


def test_a_card_the_identifier_cannot_name_waits_unless_it_changes() -> None:
    tracker = CardTracker(TrackerConfig(retry_unnamed_frames=4))
    q = card(300, 180)

    def step(quad: np.ndarray, look: str = "front", seed: int = 0) -> list[tuple[int, IdentifyReason]]:
        tracker.update(dets(quad), image=draw([quad], [look], seed=seed))
        return [(r.track_id, r.reason) for r in tracker.tracks_needing_identification()]

    step(q), step(q)
    assert step(q) == [(1, IdentifyReason.NEW)]
    tracker.unnamed(1)  # half under another card: no name
    assert [step(q, seed=s) for s in range(1, 4)] == [[], [], []]  # the same look: not asked
    assert step(q, seed=4) == [(1, IdentifyReason.RETRY)]  # its time is up: asked again, a retry
    tracker.unnamed(1)
    assert step(card(330, 180), seed=5) == [(1, IdentifyReason.NEW)]  # moved: asked at once
    tracker.unnamed(1)
    assert step(card(330, 180), look="back", seed=6) == [(1, IdentifyReason.NEW)]  # turned over
    tracker.identified(1, {"item.back": 0.7})
    tracker.unnamed(1)  # about a named card it changes nothing
    assert step(card(330, 180), look="back", seed=7) == []
    with pytest.raises(TrackerError, match="no track 9"):
        tracker.unnamed(9)
    with pytest.raises(TrackerError, match="retry_unnamed_frames"):
        TrackerConfig(retry_unnamed_frames=0)
    every_frame = CardTracker()
    for s in range(3):
        every_frame.update(dets(q), image=draw([q], ["front"], seed=s))
    every_frame.unnamed(1)
    every_frame.update(dets(q), image=draw([q], ["front"], seed=3))
    assert [r.track_id for r in every_frame.tracks_needing_identification()] == [1]


def test_a_named_card_that_changes_look_and_cannot_be_named_loses_its_name() -> None:
    # A skeleton lifted off the Explorers mob row: the finder went on seeing a faint card on
    # the bare table where it lay (0.45), the track kept the skeleton's name, and the row
    # read a skeleton that had become a trophy. The identifier, asked every frame about the
    # new look, could not name it.
    config = TrackerConfig(retry_unnamed_frames=4, faint_below=0.5)
    tracker = CardTracker(config)
    q = card(300, 180)

    def step(look: str, score: float, seed: int) -> list[tuple[int, IdentifyReason]]:
        d = dets(q)
        d = Detections(corners=d.corners, scores=np.full(1, score))
        tracker.update(d, image=draw([q], [look], seed=seed))
        return [(r.track_id, r.reason) for r in tracker.tracks_needing_identification()]

    for s in range(3):
        step("front", 0.8, s)
    tracker.identified(1, {"mob.skeleton": 0.9})
    assert step("back", 0.45, 3) == [(1, IdentifyReason.APPEARANCE)]
    tracker.unnamed(1)
    track = tracker.track(1)
    assert track is not None
    assert track.candidates == () and track.peak_score == pytest.approx(0.45)
    # Now a card never named: asked again when its time is up or its look changes, not every frame.
    assert [step("back", 0.45, s) for s in range(4, 7)] == [[], [], []]
    assert step("back", 0.45, 7) == [(1, IdentifyReason.RETRY)]
    # Found surely (a card whose look a hand beside it changed), or without the setting, a
    # card keeps its name.
    for sure, cfg in ((0.8, config), (0.45, TrackerConfig(retry_unnamed_frames=4))):
        tracker = CardTracker(cfg)
        for s in range(3):
            step("front", 0.8, s)
        tracker.identified(1, {"mob.skeleton": 0.9})
        assert step("back", sure, 3) == [(1, IdentifyReason.APPEARANCE)]
        tracker.unnamed(1)
        named = tracker.track(1)
        assert named is not None and named.face == "mob.skeleton" and named.peak_score == pytest.approx(0.8)
    with pytest.raises(TrackerError, match="faint_below"):
        TrackerConfig(faint_below=0.0)
    # A card that only moved keeps its name when a blurred crop cannot be named.
    mover = CardTracker(TrackerConfig(reidentify_move_mm=15, faint_below=0.5))
    for s in range(3):
        mover.update(dets(q), image=draw([q], ["front"], seed=s))
    mover.identified(1, {"mob.skeleton": 0.9})
    moved = card(330, 180)
    mover.update(dets(moved), image=draw([moved], ["front"], seed=3))
    assert [r.reason for r in mover.tracks_needing_identification()] == [IdentifyReason.MOVED]
    mover.unnamed(1)
    kept = mover.track(1)
    assert kept is not None and kept.face == "mob.skeleton" and kept.peak_score == pytest.approx(0.9)


def test_a_named_card_found_surely_that_changes_look_unnamed_keeps_its_name_in_doubt() -> None:
    """An Explorers chest flipped where it lies as it is filled: the strip of it under the
    next chest cannot be named, and its old name went on showing at 0.85. With
    `changed_doubt` it keeps the name unsure; once its look is back (a hand went past), it is
    read again (`recheck_below`) and a sure answer restores it."""
    config = TrackerConfig(recheck_below=0.5, recheck_frames=2, changed_doubt=0.45)
    tracker = CardTracker(config)
    q = card(300, 180)

    def step(look: str, seed: int) -> list[tuple[int, IdentifyReason]]:
        tracker.update(dets(q), image=draw([q], [look], seed=seed))
        return [(r.track_id, r.reason) for r in tracker.tracks_needing_identification()]

    for s in range(3):
        step("front", s)
    tracker.identified(1, {"chest_01": 0.85, "chest_09": 0.05}, rotated_180=True)
    named = tracker.track(1)
    assert named is not None and named.rotated_180 and named.turn_known
    assert step("back", 3) == [(1, IdentifyReason.APPEARANCE)]
    tracker.unnamed(1)
    doubted = tracker.track(1)
    assert doubted is not None and doubted.face == "chest_01"
    assert [c.score for c in doubted.candidates] == pytest.approx([0.45, 0.45 * 0.05 / 0.85])
    # The way round read before belongs to the old look (a card turned in place): not known.
    assert not doubted.turn_known
    tracker.unnamed(1)  # asked again about the same look: no lower than the doubt
    again = tracker.track(1)
    assert again is not None and again.candidates[0].score == pytest.approx(0.45)
    # The look comes back: unsure, read again once `recheck_frames` have passed.
    assert step("front", 4) == []
    assert step("front", 5) == [(1, IdentifyReason.UNSURE)]
    tracker.identified(1, {"chest_01": 0.9})
    restored = tracker.track(1)
    assert restored is not None and restored.candidates[0].score > config.recheck_below
    assert restored.turn_known and not restored.rotated_180
    # Without the setting the old name stays as sure as it was.
    plain = CardTracker(TrackerConfig())
    tracker = plain
    for s in range(3):
        step("front", s)
    plain.identified(1, {"chest_01": 0.85})
    step("back", 3)
    plain.unnamed(1)
    kept = plain.track(1)
    assert kept is not None and kept.candidates[0].score == pytest.approx(0.85) and kept.turn_known
    with pytest.raises(TrackerError, match="changed_doubt"):
        TrackerConfig(changed_doubt=1.5)


def test_an_unsure_card_is_read_again_until_a_face_is_sure() -> None:
    """A close call from a poor cut (creeper 0.39, skeleton 0.30) is read again every
    `recheck_frames` while no face reaches `recheck_below`; later reads settle it, and a sure
    card is never asked again. Without `recheck_below` the first read stays."""
    tracker = CardTracker(TrackerConfig(recheck_below=0.5, recheck_frames=3))
    q = card(300, 180)

    def step(seed: int) -> list[tuple[int, IdentifyReason]]:
        tracker.update(dets(q), image=draw([q], ["front"], seed=seed))
        return [(r.track_id, r.reason) for r in tracker.tracks_needing_identification()]

    step(0), step(1)
    assert step(2) == [(1, IdentifyReason.NEW)]
    tracker.identified(1, {"mob.creeper": 0.39, "mob.skeleton": 0.30})
    assert [step(s) for s in (3, 4)] == [[], []]
    assert step(5) == [(1, IdentifyReason.UNSURE)]
    tracker.unnamed(1)  # no answer this time: the evidence stays, the wait starts again
    track = tracker.track(1)
    assert track is not None and track.candidates[0].face == "mob.creeper"
    assert [step(s) for s in (6, 7)] == [[], []]
    assert step(8) == [(1, IdentifyReason.UNSURE)]
    tracker.identified(1, {"mob.skeleton": 0.75, "mob.spider": 0.1})
    track = tracker.track(1)
    assert track is not None and track.candidates[0].face == "mob.skeleton"
    assert track.candidates[0].score >= 0.5
    assert [step(s) for s in range(9, 16)] == [[]] * 7  # sure now: never asked again
    plain = CardTracker(TrackerConfig(recheck_frames=3))
    for s in range(3):
        plain.update(dets(q), image=draw([q], ["front"], seed=s))
    plain.identified(1, {"mob.creeper": 0.39, "mob.skeleton": 0.30})
    for s in range(3, 12):
        plain.update(dets(q), image=draw([q], ["front"], seed=s))
        assert plain.tracks_needing_identification() == ()
    for bad in ({"recheck_frames": 0}, {"recheck_below": 0.0}, {"recheck_below": 1.5}):
        with pytest.raises(TrackerError, match="recheck"):
            TrackerConfig(**bad)


def test_a_card_turned_180_under_a_hand_is_reidentified() -> None:
    tracker = CardTracker()
    q = card(320, 180, angle=0)
    for s in range(3):
        tracker.update(dets(q), image=draw([q], ["front"], seed=s))
    tracker.identified(1, {"tool.pickaxe": 0.9}, rotated_180=False)
    tracker.update(dets(), image=draw([], []))  # hidden by a hand while it is turned
    turned = q[[2, 3, 0, 1]]  # the finder reports the card's own corners, now upside down
    tracker.update(dets(turned), image=draw([q], ["front"], seed=5)[::-1, ::-1].copy())
    reasons = {r.reason for r in tracker.tracks_needing_identification()}
    assert reasons & {IdentifyReason.APPEARANCE, IdentifyReason.TURNED}


def test_a_card_turned_step_by_step_accumulates_its_turn() -> None:
    tracker = CardTracker(TrackerConfig(max_jump_mm=60))
    for _ in range(3):
        tracker.update(dets(card(300, 200)))
    tracker.identified(1, {"tool.pickaxe": 0.9})
    for angle in range(15, 181, 15):
        tracker.update(dets(card(300, 200, angle=angle)))
    track = tracker.tracks[0]
    assert abs(track.angle_deg) == pytest.approx(180.0, abs=1e-3)
    assert [r.reason for r in tracker.tracks_needing_identification()] == [IdentifyReason.TURNED]


def test_evidence_is_an_exponential_average_of_candidate_scores() -> None:
    tracker = CardTracker(TrackerConfig(frames_to_confirm=1, evidence_rate=0.5))
    tracker.update(dets(card(100, 100)))
    tracker.identified(1, {"a": 0.8, "b": 0.4})
    tracker.update(dets(card(100, 100)))
    tracker.identified(1, {"a": 0.6, "c": 0.9})
    track = tracker.tracks[0]
    scores = {c.face: c.score for c in track.candidates}
    assert scores == pytest.approx({"a": 0.7, "c": 0.45, "b": 0.2})
    assert track.face == "a"
    assert [c.face for c in track.candidates] == ["a", "c", "b"]


def test_positions_are_matched_in_table_millimetres() -> None:
    # 0.5 mm per pixel: a 70 px step is 35 mm (inside max_jump_mm=40), 100 px is 50 mm (not).
    tracker = CardTracker(TrackerConfig(max_jump_mm=40, velocity_gain=0.0), to_table=lambda p: p * 0.5)
    for _ in range(3):
        tracker.update(dets(card(100, 100)))
    u = tracker.update(dets(card(170, 100)))
    assert ids(u) == [1] and u.tracks[0].misses == 0
    np.testing.assert_allclose(u.tracks[0].center_mm, [85, 50], atol=1e-4)
    u = tracker.update(dets(card(270, 100)))
    assert u.tracks[0].misses == 1  # too far: the old track coasts, a new one starts
    bad = CardTracker(to_table=lambda p: p[:, :1])
    with pytest.raises(TrackerError, match="to_table"):
        bad.update(dets(card(0, 0)))


def test_errors_are_clear() -> None:
    with pytest.raises(TrackerError, match="frames_to_confirm"):
        TrackerConfig(frames_to_confirm=0)
    with pytest.raises(TrackerError, match="evidence_rate"):
        TrackerConfig(evidence_rate=0.0)
    tracker = CardTracker()
    with pytest.raises(TrackerError, match="no track 9"):
        tracker.identified(9, {"a": 0.5})
    with pytest.raises(TrackerError, match="expected Detections"):
        tracker.update(np.zeros((1, 4, 2)))  # type: ignore[arg-type]
    t1 = CardTracker(TrackerConfig(frames_to_confirm=1))
    t1.update(dets(card(0, 0)))
    with pytest.raises(TrackerError, match=r"\[0, 1\]"):
        t1.identified(1, {"a": 2.0})


def test_small_stages() -> None:
    q = card(0, 0)
    ccw = q[[0, 3, 2, 1]]
    np.testing.assert_array_equal(clockwise(ccw[None])[0], q)
    np.testing.assert_array_equal(align_corners(q, np.roll(q, 1, axis=0)), q)
    cost = np.array([[0.1, 0.2], [0.15, 0.9]])
    assert greedy_assign(cost, np.ones((2, 2), bool)) == [(0, 0), (1, 1)]
    assert greedy_assign(cost, np.array([[True, False], [True, False]])) == [(0, 0)]
    image = draw([card(100, 100)], ["front"])
    sig = quad_signature(image, card(100, 100)[None])
    upside = quad_signature(image, card(100, 100)[[2, 3, 0, 1]][None])
    assert sig.shape == (1, 18) and np.abs(sig - upside).mean() > 0.1


def test_cost_of_tracking_40_cards_is_reported() -> None:
    from vision.timing import StageTimer

    rng = np.random.default_rng(3)
    image = rng.integers(0, 255, (720, 1280, 3), dtype=np.uint8)
    layout = [(80 + 150 * (i % 8), 90 + 180 * (i // 8), rng.uniform(0, 360)) for i in range(40)]
    frames = [dets(*[card(x + rng.normal(0, 1), y + rng.normal(0, 1), a) for x, y, a in layout]) for _ in range(100)]
    tracker, timer = CardTracker(), StageTimer()
    for d in frames:
        with timer.stage("tracker"):
            tracker.update(d, image=image)
            for request in tracker.tracks_needing_identification():
                tracker.identified(request.track_id, {"card": 0.9})
    print(f"\n40 cards, 1280x720, with appearance: {timer.stats()['tracker'].describe()}")
    assert len(tracker.tracks) == 40 and {t.track_id for t in tracker.tracks} == set(range(1, 41))
