"""Shared fixtures for the calibration tests: a synthetic marked table and its camera."""

from __future__ import annotations

import pytest
from calibration_helpers import TABLE_MM

from calibration.homography import TableGeometry
from calibration.synthetic import PlaneTexture, SyntheticCamera, table_camera, table_texture


@pytest.fixture(scope="session")
def geometry() -> TableGeometry:
    return TableGeometry(table_mm=TABLE_MM)


@pytest.fixture(scope="session")
def texture(geometry: TableGeometry) -> PlaneTexture:
    return table_texture(geometry, seed=11)


@pytest.fixture(scope="session")
def overhead_camera() -> SyntheticCamera:
    return table_camera(TABLE_MM, tilt_deg=12.0, azimuth_deg=10.0, roll_deg=2.0)
