"""Naming a card half under another by what shows of it (`vision.partial`): which neighbour
lies over it, what the rest matches, and when it stays unknown. Scenes are drawn here: cards of
random block designs warped onto a plain cloth, one over the other as in a fan."""

from __future__ import annotations

from collections.abc import Sequence

import cv2
import numpy as np
import pytest

from vision.detections import Detections
from vision.identify import FaceCandidate
from vision.partial import PartialConfig, PartialError, PartialMatcher, _inside
from vision.pipeline import PipelineConfig, identify_tracks
from vision.tracker import CardTracker, TrackerConfig

CARD_W, CARD_H = 63, 88  # pixels of a face image (portrait)


def _faces(n: int, seed: int = 5) -> dict[str, np.ndarray]:
    """Faces of coloured blocks, each its own design, with a white border like a printed card."""
    rng = np.random.default_rng(seed)
    faces = {}
    for k in range(n):
        img = np.full((CARD_H, CARD_W, 3), 235, np.uint8)
        for _ in range(7):
            x0, y0 = int(rng.integers(4, CARD_W - 16)), int(rng.integers(4, CARD_H - 16))
            x1, y1 = x0 + int(rng.integers(8, 30)), y0 + int(rng.integers(8, 30))
            cv2.rectangle(img, (x0, y0), (min(x1, CARD_W - 5), min(y1, CARD_H - 5)),
                          tuple(int(c) for c in rng.integers(0, 255, 3)), -1)
        faces[f"face-{k}"] = img
    return faces


def _quad(x: float, y: float, w: float = 42.0, h: float = 59.0) -> np.ndarray:
    """A portrait card's corners TL, TR, BR, BL (clockwise, y down)."""
    return np.array([[x, y], [x + w, y], [x + w, y + h], [x, y + h]], np.float32)


def _draw(canvas: np.ndarray, face: np.ndarray, quad: np.ndarray, *, turned: bool = False) -> None:
    art = face[::-1, ::-1] if turned else face
    src = np.array([[0, 0], [CARD_W, 0], [CARD_W, CARD_H], [0, CARD_H]], np.float32)
    m = cv2.getPerspectiveTransform(src, quad.astype(np.float32))
    warped = cv2.warpPerspective(np.ascontiguousarray(art), m, (canvas.shape[1], canvas.shape[0]))
    mask = cv2.warpPerspective(np.full(art.shape[:2], 255, np.uint8), m, (canvas.shape[1], canvas.shape[0]))
    canvas[mask > 127] = warped[mask > 127]


def _fan(faces: dict[str, np.ndarray], under: str, over: str, *, shift: float = 26.0,
         turned: bool = False) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A cloth with card `under` and card `over` laid on it `shift` pixels to the right."""
    canvas = np.full((160, 200, 3), (60, 110, 70), np.uint8)
    a, b = _quad(50, 40), _quad(50 + shift, 42)
    _draw(canvas, faces[under], a, turned=turned)
    _draw(canvas, faces[over], b)
    return cv2.GaussianBlur(canvas, (3, 3), 0.6), a, b


@pytest.fixture(scope="module")
def faces() -> dict[str, np.ndarray]:
    return _faces(12)


@pytest.fixture(scope="module")
def matcher(faces: dict[str, np.ndarray]) -> PartialMatcher:
    return PartialMatcher(faces)


def test_inside_works_either_way_round() -> None:
    q = _quad(0, 0, 10, 10)
    pts = np.array([[5, 5], [1, 5], [-1, 5], [5, 11]], np.float64)
    assert _inside(q, pts, 0.0).tolist() == [True, True, False, False]
    assert _inside(q[::-1], pts, 0.0).tolist() == [True, True, False, False]
    assert _inside(q, pts, 2.0).tolist() == [True, False, False, False]


def test_the_card_on_top_is_told_by_its_edges(matcher: PartialMatcher, faces: dict[str, np.ndarray]) -> None:
    image, a, b = _fan(faces, "face-1", "face-2")
    assert matcher.covering(image, a, [b]) == [0]
    assert matcher.covering(image, b, [a]) == []
    far = _quad(150, 40, 20, 30)
    assert matcher.covering(image, a, [far, b]) == [1]  # a card beside it lies over nothing


def test_a_card_half_under_another_is_named_by_what_shows(matcher: PartialMatcher,
                                                          faces: dict[str, np.ndarray]) -> None:
    for under, over in (("face-1", "face-2"), ("face-7", "face-3"), ("face-10", "face-0")):
        image, a, b = _fan(faces, under, over)
        answer = matcher.match(image, a, [b])
        assert answer and answer[0].face == under and not answer[0].rotated_180
        assert 0.6 <= answer[0].score <= 1.0


def test_which_way_up_comes_with_the_answer(matcher: PartialMatcher, faces: dict[str, np.ndarray]) -> None:
    image, a, b = _fan(faces, "face-4", "face-5", turned=True)
    answer = matcher.match(image, a, [b])
    assert answer and answer[0].face == "face-4" and answer[0].rotated_180


def test_a_card_all_but_hidden_stays_unknown(matcher: PartialMatcher, faces: dict[str, np.ndarray]) -> None:
    image, a, b = _fan(faces, "face-1", "face-2", shift=3.0)
    assert matcher.match(image, a, [b]) == ()


def test_a_strip_two_faces_share_stays_unknown(faces: dict[str, np.ndarray]) -> None:
    twins = dict(faces)
    left = faces["face-1"].copy()
    left[:, CARD_W // 2:] = faces["face-6"][:, CARD_W // 2:]  # face-1's left half, face-6's right
    twins["twin"] = left
    image, a, b = _fan(twins, "face-1", "face-2", shift=22.0)
    assert PartialMatcher(twins).match(image, a, [b]) == ()  # the strip shown is the same on both
    assert PartialMatcher(faces).match(image, a, [b])[0].face == "face-1"


def test_bad_input_is_refused() -> None:
    with pytest.raises(PartialError, match="no faces"):
        PartialMatcher({})
    with pytest.raises(PartialError, match="colour image"):
        PartialMatcher({"x": np.zeros((10, 10), np.uint8)})
    with pytest.raises(PartialError, match="search"):
        PartialConfig(margin=1, search=2)
    with pytest.raises(PartialError, match="size"):
        PartialConfig(size=(2, 30))


class _NamesNothing:
    def identify(self, crops: Sequence[np.ndarray], *, corners: np.ndarray,
                 frame_index: int) -> list[tuple[FaceCandidate, ...]]:
        return [() for _ in crops]


def test_the_pipeline_names_the_covered_card_the_identifier_left_unknown(
        matcher: PartialMatcher, faces: dict[str, np.ndarray]) -> None:
    image, a, b = _fan(faces, "face-8", "face-9")
    tracker = CardTracker(TrackerConfig(frames_to_confirm=1))
    tracker.update(Detections(corners=np.stack([a, b]), scores=np.array([0.9, 0.9], np.float32)),
                   image=image, frame_index=0)
    config = PipelineConfig(refine_crops=False)
    assert identify_tracks(tracker, _NamesNothing(), image, 0, config) == 0
    done = identify_tracks(tracker, _NamesNothing(), image, 1, config, partial=matcher)
    assert done == 1
    named = {round(float(t.corners[:, 0].min())): t.face for t in tracker.tracks}
    assert named == {50: "face-8", 76: None}  # the card on top is the identifier's to name
