"""The saved table profile: camera pixels ↔ table millimetres for one camera placement.

A `TableProfile` is what calibration produces and what the tracker loads: the game and
player count, the table size between marker centres, the image → table homography (over
undistorted pixels), an optional lens model, the marker observations it was fitted from and
its error figures. `image_to_table` and `table_to_image` apply lens and homography to
`(n,2)` arrays, undistorting *points*, never frames. Profiles are versioned JSON
(`save_profile`, `load_profile`); a malformed file raises `ProfileError` (a
`CalibrationError`, a `ValueError`) naming the file and the field. The creation time is
supplied by the caller, never read from the clock here.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

import numpy as np

from calibration import fields
from calibration.errors import LayoutError, ProfileError
from calibration.homography import ErrorFigures, TableGeometry, apply_homography
from calibration.layout import Layout, available_games, build_layout, load_template
from calibration.lens import LensModel, lens_from_dict
from calibration.markers import TABLE_DICTIONARY_NAME, TABLE_MARKER_IDS

PROFILE_SCHEMA = 1
PROFILE_KIND = "cardtrack-table-profile"
_HINT = "run `cardtrack calibrate table` again to write a new profile"


class CalibrationMethod(StrEnum):
    """How the homography was obtained."""

    MARKERS = "markers"  # from the four ArUco corner markers
    CORNERS = "corners"  # from four table corners given by hand


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class MarkerObservation:
    """One table marker as calibration saw it: median corners (raw pixels, detection order)
    over `frames` frames, their spread, and the quarter turns it was laid at."""

    id: int
    corners_px: np.ndarray
    frames: int
    spread_px: float
    rotation: int = 0

    def to_dict(self) -> dict[str, Any]:
        """Plain data."""
        return {
            "id": self.id,
            "corners_px": np.round(self.corners_px, 3).tolist(),
            "frames": self.frames,
            "spread_px": round(self.spread_px, 3),
            "rotation": self.rotation,
        }


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class TableProfile:
    """Camera ↔ table mapping for one game set-up (see module docstring)."""

    game: str
    players: int
    table_mm: tuple[float, float]
    marker_mm: float
    image_size: tuple[int, int]
    homography: np.ndarray
    lens: LensModel | None = None
    method: CalibrationMethod = CalibrationMethod.MARKERS
    observations: tuple[MarkerObservation, ...] = ()
    errors: ErrorFigures | None = None
    created: str | None = None

    def __post_init__(self) -> None:
        if self.homography.shape != (3, 3):
            raise ValueError(f"homography must be 3×3, got {self.homography.shape}")

    @property
    def geometry(self) -> TableGeometry:
        """Where the markers lie on the table."""
        return TableGeometry(table_mm=self.table_mm, marker_mm=self.marker_mm)

    def image_to_table(self, points_px: np.ndarray) -> np.ndarray:
        """`(n,2)` raw image pixels → `(n,2)` table millimetres (lens, then homography)."""
        pts = np.asarray(points_px, np.float64).reshape(-1, 2)
        if self.lens is not None:
            pts = self.lens.undistort_points(pts)
        return apply_homography(self.homography, pts)

    def table_to_image(self, points_mm: np.ndarray) -> np.ndarray:
        """`(n,2)` table millimetres → `(n,2)` raw image pixels."""
        pts = apply_homography(np.linalg.inv(self.homography), np.asarray(points_mm, np.float64))
        if self.lens is not None:
            pts = self.lens.distort_points(pts)
        return pts

    def expected_marker_corners(self) -> dict[int, np.ndarray]:
        """Where each marker's corners should appear in the image (detection order)."""
        rotations = {o.id: o.rotation for o in self.observations}
        return {
            i: self.table_to_image(self.geometry.marker_corners(i, rotations.get(i, 0)))
            for i in TABLE_MARKER_IDS
        }

    def px_per_mm(self) -> float:
        """Image scale at the table centre (pixels per millimetre), for thresholds."""
        c = np.array([[self.table_mm[0] / 2, self.table_mm[1] / 2]])
        dx, dy = np.array([[5.0, 0.0]]), np.array([[0.0, 5.0]])
        a = self.table_to_image(np.vstack([c - dx, c + dx, c - dy, c + dy]))
        return float((np.linalg.norm(a[1] - a[0]) + np.linalg.norm(a[3] - a[2])) / 20.0)

    def layout(self) -> Layout:
        """The game's zone layout for this player count on this table."""
        return build_layout(self.game, self.players, self.table_mm, marker_mm=self.marker_mm)

    def replace(self, **changes: Any) -> TableProfile:
        """A copy with some fields changed (e.g. a re-fitted homography after a bump)."""
        return dataclasses.replace(self, **changes)

    def to_dict(self) -> dict[str, Any]:
        """Plain data as written to a profile file."""
        data: dict[str, Any] = {"schema": PROFILE_SCHEMA, "kind": PROFILE_KIND}
        if self.created is not None:
            data["created"] = self.created
        data.update({
            "game": self.game,
            "players": self.players,
            "table_mm": [float(self.table_mm[0]), float(self.table_mm[1])],
            "origin": "centre of marker 0 (top-left); x towards marker 1, y towards marker 3",
            "marker": {"dictionary": TABLE_DICTIONARY_NAME, "size_mm": self.marker_mm},
            "image_size": [int(self.image_size[0]), int(self.image_size[1])],
            "method": str(self.method),
            "homography": [[float(f"{v:.12g}") for v in row] for row in self.homography],
            "lens": self.lens.to_dict() if self.lens is not None else None,
            "errors": self.errors.to_dict() if self.errors is not None else None,
            "observations": [o.to_dict() for o in self.observations],
        })
        return data


def save_profile(profile: TableProfile, path: Path) -> None:
    """Write `profile` as versioned JSON to `path`."""
    Path(path).write_text(json.dumps(profile.to_dict(), indent=1) + "\n", encoding="utf-8")


def load_profile(path: Path | str) -> TableProfile:
    """Read and check a profile file; `ProfileError` names the file and the field at fault."""
    path = Path(path)
    data = fields.read_json_file(path, ProfileError, _HINT)
    return profile_from_dict(data, str(path))


def profile_from_dict(data: Mapping[str, Any], where: str) -> TableProfile:
    """Build a `TableProfile` from parsed JSON; errors name `where` and the field."""
    err = ProfileError
    schema = fields.integer(data, "schema", where, err)
    if schema != PROFILE_SCHEMA:
        raise err(f"{where}: field 'schema' is {schema}, this version reads {PROFILE_SCHEMA}; {_HINT}")
    kind = fields.text(data, "kind", where, err)
    if kind != PROFILE_KIND:
        raise err(f"{where}: field 'kind' is {kind!r}, expected {PROFILE_KIND!r} (is this a table profile?)")
    game = fields.text(data, "game", where, err)
    if game not in available_games():
        raise err(f"{where}: field 'game' is {game!r}; known games: {', '.join(available_games())}")
    players = fields.integer(data, "players", where, err)
    try:
        load_template(game).check_players(players)
    except LayoutError as exc:
        raise err(f"{where}: field 'players': {exc}") from None
    table_mm = fields.size_pair(data, "table_mm", where, err)
    marker = fields.mapping(data, "marker", where, err)
    marker_mm = fields.number(marker, "size_mm", f"{where}: marker", err, positive=True)
    try:
        TableGeometry(table_mm=table_mm, marker_mm=marker_mm)
    except ValueError as exc:
        raise err(f"{where}: fields 'table_mm' and 'marker.size_mm': {exc}") from None
    w, h = fields.size_pair(data, "image_size", where, err, integral=True)
    image_size = (int(w), int(h))
    homography = fields.array(data, "homography", where, err, (3, 3), "a 3×3 matrix")
    _check_homography(homography, image_size, where)
    method_raw = fields.text(data, "method", where, err)
    if method_raw not in CalibrationMethod.__members__.values():
        raise err(f"{where}: field 'method' is {method_raw!r}; use one of {[str(m) for m in CalibrationMethod]}")
    lens_raw = fields.field(data, "lens", where, err)
    lens = None
    if lens_raw is not None:
        if not isinstance(lens_raw, dict):
            raise err(f"{where}: field 'lens' must be an object or null")
        lens = lens_from_dict(lens_raw, f"{where}: lens").for_image_size(image_size)
    errors = None
    errors_raw = data.get("errors")
    if errors_raw is not None:
        if not isinstance(errors_raw, dict):
            raise err(f"{where}: field 'errors' must be an object or null")
        label = f"{where}: errors"
        errors = ErrorFigures(
            rms_px=fields.number(errors_raw, "rms_px", label, err),
            max_px=fields.number(errors_raw, "max_px", label, err),
            rms_mm=fields.number(errors_raw, "rms_mm", label, err),
            max_mm=fields.number(errors_raw, "max_mm", label, err),
            points=fields.integer(errors_raw, "points", label, err),
        )
    obs_raw = fields.field(data, "observations", where, err)
    if not isinstance(obs_raw, list):
        raise err(f"{where}: field 'observations' must be a list")
    observations = []
    for k, item in enumerate(obs_raw):
        label = f"{where}: observations[{k}]"
        if not isinstance(item, dict):
            raise err(f"{label} must be an object")
        marker_id = fields.integer(item, "id", label, err)
        if marker_id not in TABLE_MARKER_IDS:
            raise err(f"{label}: field 'id' is {marker_id}; table markers are ids 0–3")
        rotation = fields.integer(item, "rotation", label, err)
        if rotation not in range(4):
            raise err(f"{label}: field 'rotation' must be 0–3 quarter turns, got {rotation}")
        observations.append(MarkerObservation(
            id=marker_id,
            corners_px=fields.array(item, "corners_px", label, err, (4, 2), "4 [x, y] corners"),
            frames=fields.integer(item, "frames", label, err),
            spread_px=fields.number(item, "spread_px", label, err),
            rotation=rotation,
        ))
    created = data.get("created")
    if created is not None and not isinstance(created, str):
        raise err(f"{where}: field 'created' must be a string (ISO 8601 time) or absent")
    return TableProfile(
        game=game, players=players, table_mm=table_mm, marker_mm=marker_mm,
        image_size=image_size, homography=homography, lens=lens,
        method=CalibrationMethod(method_raw), observations=tuple(observations),
        errors=errors, created=created,
    )


def _check_homography(matrix: np.ndarray, image_size: tuple[int, int], where: str) -> None:
    if abs(np.linalg.det(matrix)) < 1e-15:
        raise ProfileError(f"{where}: field 'homography' is singular (not invertible); {_HINT}")
    w, h = image_size
    corners = np.array([[0, 0, 1], [w, 0, 1], [w, h, 1], [0, h, 1]], np.float64)
    denominators = corners @ matrix[2]
    if not (np.all(denominators > 0) or np.all(denominators < 0)):
        raise ProfileError(
            f"{where}: field 'homography' sends part of the {w}×{h} image to infinity "
            f"(it does not map this camera image onto a table); {_HINT}"
        )
