"""Calibration accuracy and speed on synthetic frames, without a camera.

`run_selftest` renders a marked table from `poses` random camera poses (overhead to
`max_tilt_deg`, seeded), calibrates each frame and measures, against the known camera, the
largest error over the whole table with all four markers and with each marker left out in
turn; it also times marker detection, one bump check and zone assignment. Figures, not
assertions: `cardtrack calibrate selftest` prints them, the tests hold the bars.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
from tqdm import tqdm

from calibration.bump import BumpConfig, BumpMonitor
from calibration.homography import TableGeometry, apply_homography, fit_homography
from calibration.layout import build_layout
from calibration.markers import detect_markers, make_detector
from calibration.synthetic import random_table_camera, render, table_texture
from calibration.table import calibrate_table, collect_markers


@dataclass(frozen=True, slots=True, kw_only=True)
class SelftestReport:
    """Worst-case table errors (mm) per pose and median timings (ms)."""

    poses: int
    max_tilt_deg: float
    all_markers_mm: tuple[float, ...]
    one_hidden_mm: tuple[float, ...]
    detect_ms: float
    bump_check_ms: float
    assign_100_ms: float


def _grid(table_mm: tuple[float, float], step: float = 25.0) -> np.ndarray:
    xs = np.arange(0.0, table_mm[0] + 1e-6, step)
    ys = np.arange(0.0, table_mm[1] + 1e-6, step)
    return np.stack(np.meshgrid(xs, ys), axis=-1).reshape(-1, 2)


def run_selftest(
    *,
    poses: int = 20,
    seed: int = 0,
    max_tilt_deg: float = 45.0,
    game: str = "minecraft-card-game",
    players: int = 4,
    progress: bool = False,
) -> SelftestReport:
    """Render, calibrate and measure `poses` synthetic views (see module docstring)."""
    layout = build_layout(game, players)
    geometry = TableGeometry(table_mm=layout.table_mm)
    texture = table_texture(geometry, seed=seed)
    rng = np.random.default_rng(seed)
    grid = _grid(layout.table_mm)
    detector = make_detector()
    all_errors: list[float] = []
    hidden_errors: list[float] = []
    detect_ms: list[float] = []
    bump_ms: list[float] = []
    assign_ms: list[float] = []
    for k in tqdm(range(poses), desc="poses", unit="pose", disable=not progress):
        camera = random_table_camera(rng, layout.table_mm, max_tilt_deg=max_tilt_deg)
        frame = render(texture, camera, seed=seed + k)
        start = time.perf_counter()
        found = detect_markers(frame, detector).by_id()
        detect_ms.append((time.perf_counter() - start) * 1000)
        truth_px = camera.project(grid)
        profile = calibrate_table(collect_markers([frame]), game=game, players=players, geometry=geometry)
        all_errors.append(float(np.linalg.norm(profile.image_to_table(truth_px) - grid, axis=1).max()))
        for hidden in sorted(found):
            corners = {i: c for i, c in found.items() if i != hidden}
            fit = fit_homography(corners, geometry)
            err = np.linalg.norm(apply_homography(fit.homography, truth_px) - grid, axis=1).max()
            hidden_errors.append(float(err))
        monitor = BumpMonitor(profile, BumpConfig(check_every=1))
        start = time.perf_counter()
        monitor.update(frame)
        bump_ms.append((time.perf_counter() - start) * 1000)
        points = rng.uniform((0.0, 0.0), layout.table_mm, size=(100, 2))
        start = time.perf_counter()
        layout.assign_zones(points)
        assign_ms.append((time.perf_counter() - start) * 1000)
    return SelftestReport(
        poses=poses, max_tilt_deg=max_tilt_deg, all_markers_mm=tuple(all_errors),
        one_hidden_mm=tuple(hidden_errors), detect_ms=float(np.median(detect_ms)),
        bump_check_ms=float(np.median(bump_ms)), assign_100_ms=float(np.median(assign_ms)),
    )
