"""BumpMonitor as a frame timeline: a bump is re-fitted only once it lasts, a passing hand is
ignored, hidden markers turn into camera-moved after a while and recover when seen."""

from __future__ import annotations

import pytest
from calibration_helpers import TABLE_MM, max_table_error

from calibration.bump import BumpConfig, BumpMonitor, BumpStatus
from calibration.synthetic import hide_markers, render, table_camera
from calibration.table import calibrate_table, collect_markers


@pytest.fixture(scope="module")
def scene(texture, geometry):  # type: ignore[no-untyped-def]
    before = table_camera(TABLE_MM, tilt_deg=25.0, azimuth_deg=10.0, roll_deg=2.0)
    after = before.moved(shift_px=(12.0, -8.0), roll_deg=0.6)
    frames = {
        "A": render(texture, before, seed=1),
        "B": render(texture, after, seed=2),
    }
    frames["A-hand"] = hide_markers(frames["A"], before, geometry, [1])
    frames["A-covered"] = hide_markers(frames["A"], before, geometry, [0, 1])
    frames["B-covered"] = hide_markers(frames["B"], after, geometry, [0, 1, 2])
    profile = calibrate_table(collect_markers([frames["A"]]), game="minecraft-mk1", players=2, geometry=geometry)
    return frames, profile, before, after


def _run(monitor: BumpMonitor, frames, names: str):  # type: ignore[no-untyped-def]
    return [monitor.update(frames[name]) for name in names.split()]


def test_lasting_bump_is_refitted_after_three_checks(scene) -> None:  # type: ignore[no-untyped-def]
    frames, profile, _, after = scene
    monitor = BumpMonitor(profile, BumpConfig(check_every=1, confirm_checks=3))
    reports = _run(monitor, frames, "A A-hand A B B B A B")
    statuses = [r.status for r in reports]
    assert statuses[:3] == [BumpStatus.STEADY] * 3  # one hidden marker: still verified
    assert statuses[3:6] == [BumpStatus.SUSPECT, BumpStatus.SUSPECT, BumpStatus.RECALIBRATED]
    event = reports[5].event
    assert event is not None and event.old_profile is profile and event.displacement_px > 10
    assert [r.event is None for r in reports] == [True] * 5 + [False] + [True] * 2
    assert monitor.profile is event.new_profile
    assert max_table_error(monitor.profile.image_to_table, after) < 1.0
    # The old placement now counts as a move; back on B it is steady again.
    assert statuses[6:] == [BumpStatus.SUSPECT, BumpStatus.STEADY]


def test_a_move_that_does_not_last_is_not_refitted(scene) -> None:  # type: ignore[no-untyped-def]
    frames, profile, _, _ = scene
    monitor = BumpMonitor(profile, BumpConfig(check_every=1, confirm_checks=3))
    reports = _run(monitor, frames, "A B B A B A")
    assert [r.status for r in reports] == [
        BumpStatus.STEADY, BumpStatus.SUSPECT, BumpStatus.SUSPECT, BumpStatus.STEADY,
        BumpStatus.SUSPECT, BumpStatus.STEADY,
    ]
    assert all(r.event is None for r in reports)
    assert monitor.profile is profile


def test_hidden_markers_become_camera_moved_and_recover(scene) -> None:  # type: ignore[no-untyped-def]
    frames, profile, _, _ = scene
    monitor = BumpMonitor(profile, BumpConfig(check_every=1, hidden_checks=3))
    reports = _run(monitor, frames, "A A-covered A-covered A-covered A-covered A")
    assert [r.status for r in reports] == [
        BumpStatus.STEADY, BumpStatus.UNVERIFIED, BumpStatus.UNVERIFIED,
        BumpStatus.CAMERA_MOVED, BumpStatus.CAMERA_MOVED, BumpStatus.STEADY,
    ]
    assert reports[1].visible == (2, 3)


def test_moved_with_too_few_markers_to_refit_is_camera_moved(scene) -> None:  # type: ignore[no-untyped-def]
    frames, profile, _, _ = scene
    monitor = BumpMonitor(profile, BumpConfig(check_every=1, confirm_checks=2))
    reports = _run(monitor, frames, "A B-covered B-covered B-covered")
    assert [r.status for r in reports] == [
        BumpStatus.STEADY, BumpStatus.SUSPECT, BumpStatus.CAMERA_MOVED, BumpStatus.CAMERA_MOVED,
    ]
    assert reports[1].visible == (3,)
    assert all(r.event is None for r in reports)


def test_checks_only_every_nth_frame(scene) -> None:  # type: ignore[no-untyped-def]
    frames, profile, _, _ = scene
    monitor = BumpMonitor(profile, BumpConfig(check_every=4, confirm_checks=2))
    reports = _run(monitor, frames, " ".join(["B"] * 9))
    assert [r.checked for r in reports] == [True, False, False, False, True, False, False, False, True]
    assert [r.status for r in reports] == [BumpStatus.SUSPECT] * 4 + [BumpStatus.RECALIBRATED] * 4 + [BumpStatus.STEADY]
    assert [r.frame_index for r in reports] == list(range(9))


def test_config_is_checked() -> None:
    with pytest.raises(ValueError, match="min_markers"):
        BumpConfig(min_markers=1)
    with pytest.raises(ValueError, match="at least 1"):
        BumpConfig(check_every=0)


def test_a_far_bump_is_found_outside_the_search_windows(texture, geometry) -> None:  # type: ignore[no-untyped-def]
    before = table_camera(TABLE_MM, tilt_deg=15.0, margin_px=160.0)
    far = before.moved(shift_px=(-110.0, 70.0))
    profile = calibrate_table(collect_markers([render(texture, before, seed=3)]), game="minecraft-mk1",
                              players=2, geometry=geometry)
    monitor = BumpMonitor(profile, BumpConfig(check_every=1, confirm_checks=1))
    report = monitor.update(render(texture, far, seed=4))
    assert report.status is BumpStatus.RECALIBRATED
    assert report.visible == (0, 1, 2, 3)
    assert report.displacement_px is not None and report.displacement_px > 100
    assert max_table_error(monitor.profile.image_to_table, far) < 1.0
    assert report.event is not None and report.event.errors.rms_px < 0.3
