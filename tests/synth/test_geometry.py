"""Truth geometry against the pixels: classical corner detection, stored homography and lens,
corner order, and the printed calibration markers."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from vision.synth.camera import Camera, Lens, look_at, overhead_camera
from vision.synth.effects import RenderStyle
from vision.synth.faces import FaceArt, FaceLibrary
from vision.synth.render import SceneRenderer
from vision.synth.scene import CardPlacement, Scene, TableSpec, table_markers

SIZE = (640, 360)


def _library() -> FaceLibrary:
    return FaceLibrary([FaceArt(face_id="white", image=_face(), size_mm=(63.0, 88.0))])


def _face() -> np.ndarray:
    """A light face, dark content away from its edges, a dark mark at its own top-left."""
    w, h = 240, 336
    img = np.full((h, w, 3), 235, np.uint8)
    cv2.rectangle(img, (w // 4, h // 3), (3 * w // 4, 2 * h // 3), (160, 160, 160), -1)
    cv2.rectangle(img, (w // 20, h // 25), (3 * w // 10, h // 5), (10, 10, 10), -1)
    return img


def _cards() -> tuple[CardPlacement, ...]:
    spots = [((80, 90), 0.0), ((200, 100), 33.0), ((330, 80), 180.0), ((110, 230), 95.0),
             ((250, 240), -20.0), ((380, 230), 60.0)]
    return tuple(
        CardPlacement(face_id="white", center_mm=c, rotation_deg=r, corner_radius_mm=0.0, track=i)
        for i, (c, r) in enumerate(spots)
    )


def _tilted_camera(k1: float, k2: float) -> Camera:
    f = 560.0
    lens = Lens(fx=f, fy=f, cx=322.0, cy=178.0, k1=k1, k2=k2)
    rot, t = look_at((230.0, 160.0), distance_mm=720.0, tilt_deg=32.0, azimuth_deg=12.0, roll_deg=2.0)
    return Camera(width=SIZE[0], height=SIZE[1], lens=lens, rotation=rot, translation=t)


CAMERAS = {
    "overhead": lambda: overhead_camera((0.0, 0.0, 460.0, 320.0), SIZE, fill=0.95),
    "tilted-distorted": lambda: _tilted_camera(-0.18, 0.04),
}


def _render(camera: Camera):  # type: ignore[no-untyped-def]
    scene = Scene(table=TableSpec(color=(60, 60, 60), extent_mm=(-600, -600, 1100, 1000)), cards=_cards())
    return SceneRenderer(_library()).render(scene, camera, RenderStyle.clean(), seed=1)


def _detect_quads(image: np.ndarray) -> list[np.ndarray]:
    gray = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
    _, mask = cv2.threshold(gray, 110, 255, cv2.THRESH_BINARY)
    contours, _ = cv2.findContours(mask, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
    quads = []
    for c in contours:
        if cv2.contourArea(c) < 300:
            continue
        approx = cv2.approxPolyDP(c, 0.02 * cv2.arcLength(c, True), True).reshape(-1, 2)
        if len(approx) == 4:
            quads.append(approx.astype(np.float64))
    return quads


@pytest.mark.parametrize("name", list(CAMERAS))
def test_detected_corners_match_truth_within_2px(name: str) -> None:
    result = _render(CAMERAS[name]())
    quads = _detect_quads(result.image)
    assert len(quads) == len(result.cards), "every card is found as one four-cornered contour"
    for card in result.cards:
        truth = np.array(card.corners)
        quad = min(quads, key=lambda q: float(np.linalg.norm(q.mean(axis=0) - truth.mean(axis=0))))
        for corner in truth:
            err = float(np.min(np.linalg.norm(quad - corner, axis=1)))
            assert err < 2.0, f"{name}: card {card.track} corner {corner} is {err:.2f} px off"


@pytest.mark.parametrize("name", list(CAMERAS))
def test_stored_homography_and_lens_reproject_the_corners(name: str) -> None:
    camera = CAMERAS[name]()
    result = _render(camera)
    truth_cam = result.camera_truth()
    h = np.array(truth_cam.homography)
    lens = Lens(**{k: getattr(truth_cam.lens, k) for k in ("fx", "fy", "cx", "cy", "k1", "k2")})
    for card, pl in zip(result.cards, _cards(), strict=True):
        mm = pl.corners_3d((63.0, 88.0))[:, :2]
        und = np.column_stack([mm, np.ones(4)]) @ h.T
        und = und[:, :2] / und[:, 2:3]
        assert np.allclose(lens.distort(und), np.array(card.corners), atol=1e-6)
        # And OpenCV's own undistortion of the truth corners lands on the homography's points.
        back = cv2.undistortPoints(np.array(card.corners).reshape(-1, 1, 2), lens.matrix(),
                                   lens.dist_coeffs(), P=lens.matrix(),
                                   criteria=(cv2.TERM_CRITERIA_COUNT | cv2.TERM_CRITERIA_EPS, 50, 1e-9))
        assert np.allclose(back.reshape(-1, 2), und, atol=0.01)


def test_corner_order_is_the_cards_own_top_left_first() -> None:
    result = _render(CAMERAS["tilted-distorted"]())
    gray = cv2.cvtColor(result.image, cv2.COLOR_BGR2GRAY)
    for card in result.cards:
        q = np.array(card.corners)
        centre = q.mean(axis=0)
        # The face's dark mark sits near its own top-left corner, whatever the card's turn.
        samples = [gray[tuple(np.rint(c + (centre - c) * 0.2).astype(int)[::-1])] for c in q]
        assert samples[0] < 60 and min(samples[1:]) > 180, (card.track, samples)


def test_printed_markers_are_detected_where_the_truth_says() -> None:
    camera = _tilted_camera(-0.1, 0.0)
    scene = Scene(table=TableSpec(color=(90, 90, 90), extent_mm=(-600, -600, 1100, 1000)),
                  markers=table_markers(460.0, 320.0, 50.0))
    result = SceneRenderer(_library()).render(scene, camera, RenderStyle.clean(), seed=0)
    detector = cv2.aruco.ArucoDetector(cv2.aruco.getPredefinedDictionary(cv2.aruco.DICT_4X4_50))
    corners, ids, _ = detector.detectMarkers(result.image)
    assert ids is not None and sorted(ids.ravel().tolist()) == [0, 1, 2, 3]
    found = {int(i): np.asarray(c).reshape(4, 2) for c, i in zip(corners, ids.ravel(), strict=True)}
    for m in result.markers:
        err = np.abs(found[m.id] - np.array(m.corners)).max()
        assert err < 1.5, f"marker {m.id} corners are {err:.2f} px off"
