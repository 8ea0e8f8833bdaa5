"""Lens: a synthetic distortion is recovered from views of the ChArUco board well enough that
undistorted points land within half a pixel (up to the homography the table fit absorbs) and
the table is then fitted within a millimetre; lens files load, scale and fail clearly."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest
from calibration_helpers import LENS_DISTORTION, TABLE_MM, max_table_error

from calibration.errors import DetectionError, ProfileError
from calibration.homography import apply_homography
from calibration.lens import (
    BoardSpec,
    LensCalibration,
    LensModel,
    calibrate_lens,
    detect_board,
    load_lens,
    save_lens,
)
from calibration.synthetic import board_camera, board_texture, render, table_camera
from calibration.table import calibrate_table, collect_markers

# Board centres over the image, corners included, each view tilted differently.
CENTRES = [(640, 360), (190, 215), (1090, 215), (190, 505), (1090, 505), (470, 250), (810, 470), (420, 470), (860, 250)]


@pytest.fixture(scope="module")
def views() -> tuple[list[np.ndarray], LensModel]:
    spec = BoardSpec()
    texture = board_texture(spec)
    rng = np.random.default_rng(3)
    frames = []
    camera = None
    for k, centre in enumerate(CENTRES):
        rvec = rng.uniform(-0.5, 0.5, 3)
        rvec[2] = rng.uniform(-0.4, 0.4)
        camera = board_camera(spec, rvec=rvec, center_px=centre, width_px=290, distortion=LENS_DISTORTION)
        frames.append(render(texture, camera, seed=k, supersample=2))
    assert camera is not None
    return frames, camera.lens


@pytest.fixture(scope="module")
def calibration(views) -> LensCalibration:  # type: ignore[no-untyped-def]
    frames, _ = views
    return calibrate_lens(frames)


def test_distortion_is_recovered_to_half_a_pixel(views, calibration: LensCalibration) -> None:  # type: ignore[no-untyped-def]
    frames, truth = views
    assert calibration.views_used == len(frames)
    assert calibration.rms_px < 0.2
    spec = BoardSpec()
    seen = np.vstack([v.image_points for f in frames if (v := detect_board(f, spec)) is not None])
    hull = cv2.convexHull(seen.astype(np.float32))
    gx, gy = np.meshgrid(np.linspace(0, 1279, 65), np.linspace(0, 719, 37))
    grid = np.stack([gx, gy], axis=-1).reshape(-1, 2)
    covered = np.array([cv2.pointPolygonTest(hull, (float(x), float(y)), False) >= 0 for x, y in grid])
    assert covered.mean() > 0.5
    ideal = truth.undistort_points(grid)
    estimated = calibration.lens.undistort_points(grid)
    # A slightly different focal length or centre maps undistorted points by a homography,
    # which the table fit absorbs; up to that, they agree within half a pixel everywhere.
    h, _ = cv2.findHomography(estimated[covered], ideal[covered], 0)
    assert np.linalg.norm(apply_homography(h, estimated) - ideal, axis=1).max() < 0.5
    # The raw distortion is tens of pixels: the test is not trivially met.
    assert np.linalg.norm(grid - ideal, axis=1).max() > 40


def test_table_fitted_through_the_estimated_lens_is_true(views, calibration: LensCalibration, texture, geometry) -> None:  # type: ignore[no-untyped-def]
    _, truth = views
    camera = table_camera(TABLE_MM, tilt_deg=25.0, azimuth_deg=-20.0, distortion=truth.distortion)
    frame = render(texture, camera, seed=8)
    profile = calibrate_table(collect_markers([frame]), game="minecraft-mk1", players=3,
                              geometry=geometry, lens=calibration.lens)
    assert max_table_error(profile.image_to_table, camera) < 1.0


def test_points_round_trip_through_the_lens(views) -> None:  # type: ignore[no-untyped-def]
    _, lens = views
    rng = np.random.default_rng(1)
    pts = rng.uniform((0, 0), (1280, 720), size=(200, 2))
    np.testing.assert_allclose(lens.distort_points(lens.undistort_points(pts)), pts, atol=1e-4)


def test_lens_file_round_trip_and_scaling(calibration: LensCalibration, tmp_path: Path) -> None:
    path = tmp_path / "lens.json"
    save_lens(calibration, path, created="2024-01-01T00:00:00+00:00")
    loaded = load_lens(path)
    np.testing.assert_allclose(loaded.camera_matrix, calibration.lens.camera_matrix, atol=1e-5)
    half = loaded.for_image_size((640, 360))
    pts = np.array([[100.0, 80.0], [1200.0, 650.0]])
    np.testing.assert_allclose(half.undistort_points((pts + 0.5) / 2 - 0.5), (loaded.undistort_points(pts) + 0.5) / 2 - 0.5, atol=1e-3)
    with pytest.raises(ProfileError, match="another aspect ratio"):
        loaded.for_image_size((640, 480))
    data = json.loads(path.read_text())
    data["schema"] = 3
    path.write_text(json.dumps(data))
    with pytest.raises(ProfileError, match=r"lens\.json: field 'schema' is 3"):
        load_lens(path)


def test_too_few_views_say_how_to_record_the_board(views) -> None:  # type: ignore[no-untyped-def]
    frames, _ = views
    blank = np.zeros_like(frames[0])
    with pytest.raises(DetectionError, match="found in 2 of 4 frames"):
        calibrate_lens([frames[0], blank, frames[1], blank])


def test_lens_command_writes_a_lens_the_table_command_uses(views, tmp_path: Path, capsys, texture) -> None:  # type: ignore[no-untyped-def]
    from cardtrack.cli import main

    frames, truth = views
    folder = tmp_path / "board"
    folder.mkdir()
    for k, frame in enumerate(frames):
        cv2.imwrite(str(folder / f"{k:02d}.png"), frame)
    lens_path = tmp_path / "lens.json"
    assert main(["calibrate", "lens", "--source", str(folder), "--out", str(lens_path)]) == 0
    assert f"board found in {len(frames)} of {len(frames)} frames" in capsys.readouterr().out
    camera = table_camera(TABLE_MM, tilt_deg=15.0, distortion=truth.distortion)
    image = tmp_path / "table.png"
    cv2.imwrite(str(image), render(texture, camera, seed=3))
    out = tmp_path / "table.json"
    assert main(["calibrate", "table", "--source", str(image), "--game", "minecraft-mk1", "--players", "2",
                 "--table-size", "1000x750", "--lens", str(lens_path), "--out", str(out)]) == 0
    from calibration.profile import load_profile

    profile = load_profile(out)
    assert profile.lens is not None
    assert max_table_error(profile.image_to_table, camera) < 1.0
