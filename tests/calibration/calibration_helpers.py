"""Helpers shared by the calibration tests (ground-truth error measures)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from calibration.synthetic import SyntheticCamera

TABLE_MM = (1000.0, 750.0)
LENS_DISTORTION = (-0.12, 0.03, 0.0008, -0.0006, 0.0)


def table_grid(table_mm: tuple[float, float] = TABLE_MM, step: float = 50.0) -> np.ndarray:
    """Points every `step` mm over the whole table (marker centre to marker centre)."""
    xs = np.arange(0.0, table_mm[0] + 1e-6, step)
    ys = np.arange(0.0, table_mm[1] + 1e-6, step)
    return np.stack(np.meshgrid(xs, ys), axis=-1).reshape(-1, 2)


def max_table_error(
    image_to_table: Callable[[np.ndarray], np.ndarray], camera: SyntheticCamera
) -> float:
    """Largest distance (mm) between true table points and where the fitted mapping puts the
    pixels at which the camera sees them."""
    grid = table_grid()
    return float(np.linalg.norm(image_to_table(camera.project(grid)) - grid, axis=1).max())
