"""Detections batches: shape checks, selection, concatenation, and quadrilateral IoU."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from vision.detections import Detections, DetectionsError, iou_matrix, polygon_areas, quad_iou


def card(cx: float, cy: float, w: float = 63.0, h: float = 88.0, angle: float = 0.0) -> np.ndarray:
    a = np.deg2rad(angle)
    rot = np.array([[np.cos(a), -np.sin(a)], [np.sin(a), np.cos(a)]])
    local = np.array([[-w / 2, -h / 2], [w / 2, -h / 2], [w / 2, h / 2], [-w / 2, h / 2]])
    return (local @ rot.T + [cx, cy]).astype(np.float32)


def batch(n: int, *, faces: bool = False, ids: bool = False) -> Detections:
    corners = np.stack([card(100.0 * i, 50.0) for i in range(n)]) if n else np.zeros((0, 4, 2))
    return Detections(
        corners=corners,
        scores=np.linspace(0.5, 0.9, n),
        track_ids=np.arange(n) if ids else None,
        faces=[f"face.{i}" if i % 2 == 0 else None for i in range(n)] if faces else None,
        face_scores=np.full(n, 0.7) if faces else None,
    )


def test_construction_converts_and_freezes_arrays() -> None:
    d = batch(3, faces=True, ids=True)
    assert len(d) == 3
    assert d.corners.dtype == np.float32 and d.corners.shape == (3, 4, 2)
    assert d.scores.dtype == np.float32
    assert d.track_ids is not None and d.track_ids.dtype == np.int64
    assert d.faces is not None and d.faces.dtype == object and list(d.faces) == ["face.0", None, "face.2"]
    with pytest.raises(ValueError):
        d.corners[0, 0, 0] = 5.0  # read-only
    source = np.stack([card(0, 0)])
    d2 = Detections(corners=source, scores=[1.0])
    source[0, 0, 0] = 999.0
    assert d2.corners[0, 0, 0] != 999.0  # a copy, not a view of the caller's array


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"corners": np.zeros((2, 3, 2)), "scores": [0.5, 0.5]}, "corners: expected shape"),
        ({"corners": np.zeros((2, 4, 2)), "scores": [0.5]}, "scores: expected shape (2,)"),
        ({"corners": np.full((1, 4, 2), np.nan), "scores": [0.5]}, "NaN"),
        ({"corners": np.zeros((1, 4, 2)), "scores": [1.5]}, "[0, 1]"),
        ({"corners": np.zeros((1, 4, 2)), "scores": [0.5], "track_ids": [1.5]}, "whole numbers"),
        ({"corners": np.zeros((1, 4, 2)), "scores": [0.5], "track_ids": [-3]}, "-1 means untracked"),
        ({"corners": np.zeros((1, 4, 2)), "scores": [0.5], "faces": ["x"]}, "together"),
        (
            {"corners": np.zeros((1, 4, 2)), "scores": [0.5], "faces": [3], "face_scores": [0.5]},
            "faces[0]",
        ),
        (
            {"corners": np.zeros((2, 4, 2)), "scores": [0.5, 0.5], "faces": ["a"], "face_scores": [0.5]},
            "expected 2 entries",
        ),
    ],
)
def test_bad_arrays_name_the_field(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(DetectionsError) as info:
        Detections(**kwargs)  # type: ignore[arg-type]
    assert message in str(info.value)
    assert isinstance(info.value, ValueError)


def test_selection_by_mask_indices_slice_and_int() -> None:
    d = batch(4, faces=True, ids=True)
    masked = d[d.scores > 0.7]
    assert len(masked) == 2 and list(masked.track_ids) == [2, 3]  # type: ignore[arg-type]
    picked = d[[3, 0]]
    assert list(picked.faces) == [None, "face.0"]  # type: ignore[arg-type]
    assert len(d[1:3]) == 2
    one = d[-1]
    assert isinstance(one, Detections) and len(one) == 1 and one.track_ids[0] == 3  # type: ignore[index]
    assert len(d[np.zeros(4, bool)]) == 0 and len(d[[]]) == 0
    with pytest.raises(IndexError):
        d[np.ones(3, bool)]
    with pytest.raises(IndexError):
        d[7]


def test_centers_areas_and_empty() -> None:
    d = Detections(corners=[card(10, 20, 4, 6), card(0, 0, 2, 2, angle=30)[::-1]], scores=[1, 1])
    np.testing.assert_allclose(d.centers, [[10, 20], [0, 0]], atol=1e-5)
    np.testing.assert_allclose(d.areas, [24.0, 4.0], rtol=1e-5)  # either winding
    e = Detections.empty()
    assert len(e) == 0 and e.centers.shape == (0, 2) and e.areas.shape == (0,)
    assert Detections.empty(with_faces=True).faces is not None


def test_concatenate_keeps_order_and_columns() -> None:
    a, b = batch(2, faces=True, ids=True), batch(3, faces=True, ids=True)
    c = Detections.concatenate([a, Detections.empty(), b])
    assert len(c) == 5
    assert list(c.track_ids) == [0, 1, 0, 1, 2]  # type: ignore[arg-type]
    assert list(c.faces) == ["face.0", None, "face.0", None, "face.2"]  # type: ignore[arg-type]
    with pytest.raises(DetectionsError, match="fill the missing columns"):
        Detections.concatenate([a, batch(1)])
    assert len(Detections.concatenate([])) == 0


def test_with_track_ids_and_faces() -> None:
    d = batch(2).with_track_ids([5, -1]).with_faces(["a", None], [0.9, 0.0])
    assert list(d.track_ids) == [5, -1]  # type: ignore[arg-type]
    assert d.face_scores is not None and d.face_scores[0] == pytest.approx(0.9)


def _raster_iou(a: np.ndarray, b: np.ndarray, scale: float = 8.0) -> float:
    """Reference IoU by counting pixels of both polygons drawn large."""
    lo = np.minimum(a.min(0), b.min(0)) - 1
    size = (np.maximum(a.max(0), b.max(0)) - lo + 2) * scale
    ma = np.zeros((int(size[1]), int(size[0])), np.uint8)
    mb = ma.copy()
    cv2.fillPoly(ma, [np.round((a - lo) * scale).astype(np.int32)], 1)
    cv2.fillPoly(mb, [np.round((b - lo) * scale).astype(np.int32)], 1)
    return float((ma & mb).sum() / max((ma | mb).sum(), 1))


def test_quad_iou_known_values() -> None:
    assert quad_iou(card(0, 0), card(0, 0)) == pytest.approx(1.0)
    assert quad_iou(card(0, 0), card(0, 0)[[2, 1, 0, 3]]) == pytest.approx(1.0)  # winding
    # Shifted by 10 along x: overlap 53 × 88 over union 73 × 88.
    assert quad_iou(card(0, 0), card(10, 0)) == pytest.approx(53 / 73, rel=1e-5)
    assert quad_iou(card(0, 0), card(500, 0)) == 0.0
    # A 2×2 square and itself turned 45°: they meet in a regular octagon of apothem 1.
    sq, turned = card(0, 0, 2, 2), card(0, 0, 2, 2, angle=45)
    inter = 8 * (np.sqrt(2) - 1)
    assert quad_iou(sq, turned) == pytest.approx(inter / (8 - inter), rel=1e-4)
    degenerate = np.array([[0, 0], [1, 1], [2, 2], [3, 3]], np.float32)
    assert quad_iou(degenerate, card(0, 0)) == 0.0


def test_iou_matrix_matches_a_raster_reference() -> None:
    rng = np.random.default_rng(7)
    a = np.stack([card(*rng.uniform(0, 200, 2), angle=rng.uniform(0, 180)) for _ in range(12)])
    b = np.stack([card(*rng.uniform(0, 200, 2), angle=rng.uniform(0, 180)) for _ in range(9)])
    m = iou_matrix(Detections(corners=a, scores=np.ones(12)), b)
    assert m.shape == (12, 9) and m.dtype == np.float32
    assert (m >= 0).all() and (m <= 1).all()
    touching = 0
    for i in range(12):
        for j in range(9):
            ref = _raster_iou(a[i], b[j])
            assert m[i, j] == pytest.approx(ref, abs=0.02)
            touching += m[i, j] > 0
    assert touching > 5  # the random layout does exercise real overlaps
    np.testing.assert_allclose(iou_matrix(b, a), m.T, atol=1e-5)


def test_iou_errors_and_empty_inputs() -> None:
    assert iou_matrix(np.zeros((0, 4, 2)), np.stack([card(0, 0)])).shape == (0, 1)
    with pytest.raises(DetectionsError, match=r"\(n, 4, 2\)"):
        iou_matrix(np.zeros((2, 3, 2)), np.zeros((1, 4, 2)))
    with pytest.raises(DetectionsError, match="one quad"):
        quad_iou(np.zeros((2, 4, 2)), card(0, 0))
    assert polygon_areas(np.stack([card(0, 0, 3, 5)]))[0] == pytest.approx(15.0)


def test_cost_of_a_50_by_50_iou_matrix_is_reported() -> None:
    from vision.timing import StageTimer

    rng = np.random.default_rng(8)
    a = np.stack([card(*rng.uniform(0, 600, 2), angle=rng.uniform(0, 180)) for _ in range(50)])
    b = a + rng.normal(0, 3, a.shape).astype(np.float32)
    timer = StageTimer()
    for _ in range(20):
        with timer.stage("iou_matrix"):
            m = iou_matrix(a, b)
    print(f"\n50x50 overlapping quads: {timer.stats()['iou_matrix'].describe()}")
    assert np.all(np.diag(m) > 0.8)
