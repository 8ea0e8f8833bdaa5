"""Marker detection: OpenCV return shapes normalised, sub-pixel corners, ROI and downscale."""

from __future__ import annotations

import numpy as np
import pytest

from calibration.markers import (
    TABLE_MARKER_IDS,
    MarkerDetections,
    TableCorner,
    detect_markers,
    make_detector,
    normalise_detection,
)
from calibration.synthetic import render


def test_normalise_detection_accepts_every_opencv_shape() -> None:
    quad = np.array([[1, 2], [3, 2], [3, 4], [1, 4]], np.float32)
    as_tuple = normalise_detection((quad.reshape(1, 4, 2), (quad + 10).reshape(1, 4, 2)), np.array([3, 1]))
    as_column = normalise_detection([quad.reshape(1, 4, 2), quad + 10], np.array([[3], [1]]))
    as_block = normalise_detection(np.stack([quad, quad + 10]).reshape(2, 1, 4, 2), np.array([3, 1]))
    for found in (as_tuple, as_column, as_block):
        assert found.ids.tolist() == [3, 1]
        assert found.corners.shape == (2, 4, 2)
        assert found.corners.dtype == np.float64
        np.testing.assert_allclose(found.corners[1], quad + 10)
    assert len(normalise_detection((), None)) == 0
    assert len(normalise_detection((), np.zeros((0, 1), np.int32))) == 0


def test_normalise_detection_of_this_opencv_build() -> None:
    """What `detectMarkers` really returns here goes through the normaliser unchanged."""
    import cv2

    dictionary = cv2.aruco.getPredefinedDictionary(cv2.aruco.DICT_4X4_50)
    canvas = np.full((300, 400), 255, np.uint8)
    canvas[50:170, 50:170] = cv2.aruco.generateImageMarker(dictionary, 2, 120)
    canvas[150:270, 250:370] = cv2.aruco.generateImageMarker(dictionary, 0, 120)
    corners, ids, _ = make_detector().detectMarkers(canvas)
    found = normalise_detection(corners, ids)
    assert sorted(found.ids.tolist()) == [0, 2]
    assert found.corners.shape == (2, 4, 2)


def test_marker_detections_check_shapes_and_drop_repeated_ids() -> None:
    with pytest.raises(ValueError, match="corners must have shape"):
        MarkerDetections(ids=np.array([1, 2]), corners=np.zeros((3, 4, 2)))
    found = MarkerDetections(ids=np.array([0, 1, 1, 7]), corners=np.zeros((4, 4, 2)))
    assert found.only(TABLE_MARKER_IDS).ids.tolist() == [0]


def test_corner_ids_name_the_table_corners() -> None:
    assert [c.label for c in TableCorner] == ["top-left", "top-right", "bottom-right", "bottom-left"]
    assert TABLE_MARKER_IDS == (0, 1, 2, 3)


def test_detected_corners_are_sub_pixel_true(texture, overhead_camera, geometry) -> None:  # type: ignore[no-untyped-def]
    frame = render(texture, overhead_camera, seed=1)
    found = detect_markers(frame).by_id()
    assert sorted(found) == [0, 1, 2, 3]
    for marker_id, corners in found.items():
        truth = overhead_camera.project(geometry.marker_corners(marker_id))
        assert np.abs(corners - truth).max() < 0.1


def test_roi_and_downscale_give_full_frame_coordinates(texture, overhead_camera, geometry) -> None:  # type: ignore[no-untyped-def]
    frame = render(texture, overhead_camera, seed=2)
    truth = overhead_camera.project(geometry.marker_corners(2))
    x0, y0 = truth.min(axis=0) - 40
    roi = (int(x0), int(y0), int(np.ptp(truth[:, 0]) + 80), int(np.ptp(truth[:, 1]) + 80))
    in_roi = detect_markers(frame, roi=roi)
    assert in_roi.ids.tolist() == [2]
    assert np.abs(in_roi.corners[0] - truth).max() < 0.1
    coarse = detect_markers(frame, downscale=0.5).by_id()
    # Half resolution is for finding markers, not measuring them: a pixel or two off, but
    # not shifted as a whole (the pixel-centre conversion is right).
    assert np.abs(coarse[2] - truth).max() < 3.0
    assert np.abs((coarse[2] - truth).mean(axis=0)).max() < 0.5
