"""Table calibration on synthetic frames: the fitted mapping is within 1 mm over the table,
also with one marker hidden, a marker laid turned, lens distortion, or corners by hand."""

from __future__ import annotations

import numpy as np
import pytest
from calibration_helpers import LENS_DISTORTION, TABLE_MM, max_table_error, table_grid

from calibration.errors import DetectionError
from calibration.homography import FitModel, fit_homography
from calibration.markers import detect_markers
from calibration.synthetic import (
    hide_markers,
    random_table_camera,
    render,
    table_camera,
    table_texture,
)
from calibration.table import (
    calibrate_from_corners,
    calibrate_table,
    collect_markers,
    parse_corners,
)

GAME = "minecraft-card-game"


def _calibrate(frames, geometry, lens=None):  # type: ignore[no-untyped-def]
    return calibrate_table(collect_markers(frames), game=GAME, players=4, geometry=geometry, lens=lens)


@pytest.mark.parametrize("seed", [1, 2, 3, 4, 5])
def test_random_pose_fits_within_a_millimetre_with_all_and_with_one_marker_hidden(
    seed: int, texture, geometry  # type: ignore[no-untyped-def]
) -> None:
    rng = np.random.default_rng(seed)
    camera = random_table_camera(rng, TABLE_MM, max_tilt_deg=45.0)
    frame = render(texture, camera, seed=seed)
    profile = _calibrate([frame], geometry)
    assert len(profile.observations) == 4
    assert max_table_error(profile.image_to_table, camera) < 1.0
    assert profile.errors is not None and profile.errors.rms_px < 0.3
    hidden = int(rng.integers(0, 4))
    partial = _calibrate([hide_markers(frame, camera, geometry, [hidden])], geometry)
    assert hidden not in {o.id for o in partial.observations}
    assert max_table_error(partial.image_to_table, camera) < 1.0


def test_steepest_view_with_each_marker_hidden(texture, geometry) -> None:  # type: ignore[no-untyped-def]
    camera = table_camera(TABLE_MM, tilt_deg=45.0, azimuth_deg=-30.0, roll_deg=-4.0)
    frame = render(texture, camera, seed=9)
    found = detect_markers(frame).by_id()
    assert sorted(found) == [0, 1, 2, 3]
    for hidden in range(4):
        corners = {i: c for i, c in found.items() if i != hidden}
        fit = fit_homography(corners, geometry)
        assert fit.model is FitModel.HOMOGRAPHY

        def mapping(px, h=fit.homography):  # type: ignore[no-untyped-def]
            from calibration.homography import apply_homography

            return apply_homography(h, px)

        assert max_table_error(mapping, camera) < 1.0, f"marker {hidden} hidden"


def test_several_frames_take_the_median_and_drop_a_bad_one(texture, overhead_camera, geometry) -> None:  # type: ignore[no-untyped-def]
    frames = [render(texture, overhead_camera, seed=s) for s in range(4)]
    frames[1] = hide_markers(frames[1], overhead_camera, geometry, [3])
    survey = collect_markers(frames)
    seen = {o.id: o.frames for o in survey.observations}
    assert seen == {0: 4, 1: 4, 2: 4, 3: 3}
    assert all(o.spread_px < 0.5 for o in survey.observations)
    profile = calibrate_table(survey, game=GAME, players=4, geometry=geometry, created="2024-01-01T00:00:00+00:00")
    assert profile.created == "2024-01-01T00:00:00+00:00"
    assert max_table_error(profile.image_to_table, overhead_camera) < 0.5


def test_a_marker_laid_turned_is_recognised(geometry) -> None:  # type: ignore[no-untyped-def]
    turned = table_texture(geometry, seed=3, rotations={1: 1, 3: 2})
    camera = table_camera(TABLE_MM, tilt_deg=20.0, azimuth_deg=5.0)
    profile = _calibrate([render(turned, camera, seed=3)], geometry)
    assert {o.id: o.rotation for o in profile.observations} == {0: 0, 1: 1, 2: 0, 3: 2}
    assert max_table_error(profile.image_to_table, camera) < 1.0


def test_two_markers_still_fit_and_one_is_refused(texture, overhead_camera, geometry) -> None:  # type: ignore[no-untyped-def]
    frame = hide_markers(render(texture, overhead_camera, seed=4), overhead_camera, geometry, [1, 3])
    profile = _calibrate([frame], geometry)
    assert [o.id for o in profile.observations] == [0, 2]
    assert max_table_error(profile.image_to_table, overhead_camera) < 2.0
    alone = hide_markers(frame, overhead_camera, geometry, [2])
    with pytest.raises(DetectionError, match="at least 2 of ids 0–3"):
        _calibrate([alone], geometry)


def test_lens_distortion_is_undone_through_the_lens_model(texture, geometry) -> None:  # type: ignore[no-untyped-def]
    camera = table_camera(TABLE_MM, tilt_deg=25.0, azimuth_deg=15.0, distortion=LENS_DISTORTION)
    frame = render(texture, camera, seed=5)
    with_lens = _calibrate([frame], geometry, lens=camera.lens)
    assert max_table_error(with_lens.image_to_table, camera) < 1.0
    # A hidden marker with a known lens goes through the pinhole pose fit.
    corners = {o.id: o.corners_px for o in with_lens.observations if o.id != 0}
    assert fit_homography(corners, geometry, camera.lens).model is FitModel.PINHOLE
    partial = _calibrate([hide_markers(frame, camera, geometry, [0])], geometry, lens=camera.lens)
    assert max_table_error(partial.image_to_table, camera) < 1.0
    # Without the lens the same frame is millimetres off: the lens model matters.
    without = _calibrate([frame], geometry)
    assert max_table_error(without.image_to_table, camera) > 3.0


def test_mapping_round_trips_through_lens_and_homography(texture, geometry) -> None:  # type: ignore[no-untyped-def]
    camera = table_camera(TABLE_MM, tilt_deg=30.0, distortion=LENS_DISTORTION)
    profile = _calibrate([render(texture, camera, seed=6)], geometry, lens=camera.lens)
    grid = table_grid()
    back = profile.image_to_table(profile.table_to_image(grid))
    assert np.abs(back - grid).max() < 1e-3
    assert profile.image_to_table(np.zeros((0, 2))).shape == (0, 2)


def test_corners_given_by_hand(texture, overhead_camera, geometry) -> None:  # type: ignore[no-untyped-def]
    truth = overhead_camera.project(geometry.table_corners())
    text = ",".join(f"{v:.2f}" for v in truth.ravel())
    profile = calibrate_from_corners(
        parse_corners(text), image_size=(1280, 720), game=GAME, players=2, geometry=geometry
    )
    assert profile.method == "corners"
    assert max_table_error(profile.image_to_table, overhead_camera) < 0.5
    with pytest.raises(DetectionError, match="give 8 numbers"):
        parse_corners("1,2,3")
    with pytest.raises(DetectionError, match="almost no area"):
        calibrate_from_corners(
            np.array([[0, 0], [1, 0], [1, 1], [0, 1]], float), image_size=(1280, 720),
            game=GAME, players=2, geometry=geometry,
        )


def test_no_markers_at_all_says_what_to_do(geometry) -> None:  # type: ignore[no-untyped-def]
    blank = np.full((720, 1280, 3), 90, np.uint8)
    with pytest.raises(DetectionError, match="--corners"):
        _calibrate([blank], geometry)
