"""Profiles: saved and loaded unchanged; a malformed file names the file and the field."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from calibration_helpers import LENS_DISTORTION, TABLE_MM, table_grid

from calibration.errors import CalibrationError, ProfileError
from calibration.profile import TableProfile, load_profile, save_profile
from calibration.synthetic import render, table_camera
from calibration.table import calibrate_table, collect_markers


@pytest.fixture(scope="module")
def profile(texture, geometry) -> TableProfile:  # type: ignore[no-untyped-def]
    camera = table_camera(TABLE_MM, tilt_deg=20.0, distortion=LENS_DISTORTION)
    return calibrate_table(
        collect_markers([render(texture, camera, seed=1)]), game="minecraft-explorers", players=3,
        geometry=geometry, lens=camera.lens, created="2024-05-01T12:00:00+00:00",
    )


def test_round_trip(profile: TableProfile, tmp_path: Path) -> None:
    path = tmp_path / "table.json"
    save_profile(profile, path)
    data = json.loads(path.read_text())
    assert data["schema"] == 1 and data["game"] == "minecraft-explorers" and data["players"] == 3
    assert data["created"] == "2024-05-01T12:00:00+00:00"
    loaded = load_profile(path)
    grid = table_grid()
    px = profile.table_to_image(grid)
    np.testing.assert_allclose(loaded.table_to_image(grid), px, atol=1e-3)
    np.testing.assert_allclose(loaded.image_to_table(px), grid, atol=1e-3)
    assert loaded.lens is not None and loaded.errors is not None
    assert [o.id for o in loaded.observations] == [0, 1, 2, 3]
    assert loaded.layout().players == 3


def _write(tmp_path: Path, profile: TableProfile, change) -> Path:  # type: ignore[no-untyped-def]
    data = profile.to_dict()
    change(data)
    path = tmp_path / "broken.json"
    path.write_text(json.dumps(data))
    return path


@pytest.mark.parametrize(
    ("change", "field"),
    [
        (lambda d: d.pop("homography"), "'homography' is missing"),
        (lambda d: d.update(homography=[[1, 0, 0], [0, 1, 0]]), "'homography' must be a 3×3 matrix, got shape 2×3"),
        (lambda d: d.update(homography=[[1, 0, 0], [0, 1, 0], [0, 0, "x"]]), "'homography' must be a 3×3 matrix"),
        (lambda d: d.update(homography=[[1, 0, 0], [2, 0, 0], [0, 0, 1]]), "'homography' is singular"),
        (lambda d: d.update(schema=2), "'schema' is 2, this version reads 1"),
        (lambda d: d.update(kind="something-else"), "'kind'"),
        (lambda d: d.update(game="chess"), "'game' is 'chess'"),
        (lambda d: d.update(players=9), "'players'"),
        (lambda d: d.update(table_mm=[1000]), "'table_mm'"),
        (lambda d: d["marker"].pop("size_mm"), "marker: field 'size_mm' is missing"),
        (lambda d: d.update(image_size=[1280.5, 720]), "'image_size' must hold two whole numbers"),
        (lambda d: d["lens"].update(camera_matrix=[[1, 0], [0, 1]]), "lens: field 'camera_matrix'"),
        (lambda d: d["lens"].update(distortion=[0.1, 0.2, 0.3]), "lens: field 'distortion'"),
        (lambda d: d["observations"][2].update(id=7), "observations[2]: field 'id' is 7"),
        (lambda d: d["observations"][0].update(corners_px=[[0, 0]]), "observations[0]: field 'corners_px'"),
        (lambda d: d.update(method="guess"), "'method' is 'guess'"),
        (lambda d: d["errors"].update(rms_mm="low"), "errors: field 'rms_mm' must be a number"),
    ],
)
def test_malformed_fields_are_named(profile: TableProfile, tmp_path: Path, change, field: str) -> None:  # type: ignore[no-untyped-def]
    path = _write(tmp_path, profile, change)
    with pytest.raises(ProfileError) as caught:
        load_profile(path)
    message = str(caught.value)
    assert str(path) in message
    assert field in message
    assert isinstance(caught.value, CalibrationError) and isinstance(caught.value, ValueError)


def test_unreadable_files_are_named(tmp_path: Path) -> None:
    missing = tmp_path / "nope.json"
    with pytest.raises(ProfileError, match=r"nope\.json: file not found"):
        load_profile(missing)
    bad = tmp_path / "bad.json"
    bad.write_text('{"schema": 1,')
    with pytest.raises(ProfileError, match=r"bad.json: not valid JSON \(line 1"):
        load_profile(bad)
    listed = tmp_path / "list.json"
    listed.write_text("[1, 2]")
    with pytest.raises(ProfileError, match="expected a JSON object"):
        load_profile(listed)


def test_a_homography_that_sends_the_image_to_infinity_is_refused(profile: TableProfile, tmp_path: Path) -> None:
    path = _write(tmp_path, profile, lambda d: d.update(homography=[[1, 0, 0], [0, 1, 0], [-0.002, 0, 1]]))
    with pytest.raises(ProfileError, match="to infinity"):
        load_profile(path)
