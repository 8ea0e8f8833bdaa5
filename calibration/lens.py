"""Lens model and its calibration from a printed ChArUco board.

A `LensModel` holds the camera matrix and the OpenCV distortion coefficients for one image
size. Downstream code never undistorts whole frames (too slow on the target machine): it
undistorts *points* (`undistort_points`, `cv2.undistortPoints` with `P = K`, so the result
stays in pixels) and distorts points back for drawing (`distort_points`). `calibrate_lens`
detects a ChArUco board (`BoardSpec`, printed by `calibration.sheets`) in several frames and
runs `cv2.calibrateCamera`; by default it fits k1, k2, p1, p2 and keeps k3 at zero, which
suits webcams and needs fewer views. Lens files are versioned JSON (`save_lens`, `load_lens`).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

import cv2
import numpy as np
from tqdm import tqdm

from calibration import fields
from calibration.errors import DetectionError, ProfileError
from calibration.markers import to_gray

LENS_SCHEMA = 1
LENS_KIND = "cardtrack-lens"
_UNDISTORT_CRITERIA = (cv2.TERM_CRITERIA_COUNT | cv2.TERM_CRITERIA_EPS, 50, 1e-10)
_LENS_HINT = "run `cardtrack calibrate lens --source SRC --out lens.json` to make a new one"


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class LensModel:
    """Pinhole camera matrix `K` (3×3) and distortion coefficients for `image_size` (w, h)."""

    camera_matrix: np.ndarray
    distortion: np.ndarray
    image_size: tuple[int, int]

    def __post_init__(self) -> None:
        if self.camera_matrix.shape != (3, 3):
            raise ValueError(f"camera matrix must be 3×3, got {self.camera_matrix.shape}")
        if self.distortion.ndim != 1 or self.distortion.shape[0] not in (4, 5, 8, 12, 14):
            raise ValueError(
                f"distortion must hold 4, 5, 8, 12 or 14 coefficients, got {self.distortion.shape}"
            )

    def undistort_points(self, points: np.ndarray) -> np.ndarray:
        """`(n,2)` distorted pixels → `(n,2)` ideal pinhole pixels (same `K`)."""
        pts = np.asarray(points, np.float64).reshape(-1, 1, 2)
        if pts.shape[0] == 0:
            return np.zeros((0, 2))
        out = cv2.undistortPoints(
            pts,
            self.camera_matrix,
            self.distortion,
            R=None,
            P=self.camera_matrix,
            criteria=_UNDISTORT_CRITERIA,
        )
        return np.asarray(out, np.float64).reshape(-1, 2)

    def distort_points(self, points: np.ndarray) -> np.ndarray:
        """`(n,2)` ideal pinhole pixels → `(n,2)` distorted pixels (inverse of the above)."""
        pts = np.asarray(points, np.float64).reshape(-1, 2)
        if pts.shape[0] == 0:
            return np.zeros((0, 2))
        k_inv = np.linalg.inv(self.camera_matrix)
        rays = np.hstack([pts, np.ones((pts.shape[0], 1))]) @ k_inv.T
        out, _ = cv2.projectPoints(
            rays.reshape(-1, 1, 3), np.zeros(3), np.zeros(3), self.camera_matrix, self.distortion
        )
        return np.asarray(out, np.float64).reshape(-1, 2)

    def for_image_size(self, image_size: tuple[int, int]) -> LensModel:
        """The same lens at another resolution of the same aspect (the camera matrix scales)."""
        if tuple(image_size) == tuple(self.image_size):
            return self
        sx = image_size[0] / self.image_size[0]
        sy = image_size[1] / self.image_size[1]
        if abs(sx - sy) > 0.01 * max(sx, sy):
            raise ProfileError(
                f"the lens was calibrated at {self.image_size[0]}×{self.image_size[1]} px, which "
                f"does not scale to {image_size[0]}×{image_size[1]} px (another aspect ratio); "
                f"calibrate the lens at this resolution ({_LENS_HINT})"
            )
        k = self.camera_matrix.copy()
        k[0, 0] *= sx
        k[0, 2] = (k[0, 2] + 0.5) * sx - 0.5
        k[1, 1] *= sy
        k[1, 2] = (k[1, 2] + 0.5) * sy - 0.5
        return LensModel(camera_matrix=k, distortion=self.distortion.copy(), image_size=image_size)

    def to_dict(self) -> dict[str, Any]:
        """Plain data (as nested in a profile)."""
        return {
            "image_size": [int(self.image_size[0]), int(self.image_size[1])],
            "camera_matrix": np.round(self.camera_matrix, 6).tolist(),
            "distortion": np.round(self.distortion, 8).tolist(),
        }


def lens_from_dict(data: Mapping[str, Any], where: str) -> LensModel:
    """Read a `LensModel` from plain data, errors naming `where` and the field."""
    w, h = fields.size_pair(data, "image_size", where, ProfileError, integral=True)
    k = fields.array(data, "camera_matrix", where, ProfileError, (3, 3), "a 3×3 matrix")
    if k[0, 0] <= 0 or k[1, 1] <= 0 or k[2, 2] != 1 or np.any(k[2, :2] != 0) or k[1, 0] != 0:
        raise ProfileError(
            f"{where}: field 'camera_matrix' is not a camera matrix "
            "[[fx, 0, cx], [0, fy, cy], [0, 0, 1]] with fx, fy > 0"
        )
    dist = fields.array(data, "distortion", where, ProfileError, (None,), "a list of coefficients")
    if dist.shape[0] not in (4, 5, 8, 12, 14):
        raise ProfileError(
            f"{where}: field 'distortion' must hold 4, 5, 8, 12 or 14 coefficients, "
            f"got {dist.shape[0]}"
        )
    return LensModel(camera_matrix=k, distortion=dist, image_size=(int(w), int(h)))


class DistortionModel(StrEnum):
    """Which distortion coefficients `calibrate_lens` fits (fewer = needs fewer views)."""

    RADIAL2 = "k1k2"  # radial k1, k2 only
    STANDARD = "k1k2p1p2"  # radial k1, k2 and tangential p1, p2 (default)
    FULL = "k1k2p1p2k3"  # adds k3: strong wide-angle lenses, many views needed

    @property
    def flags(self) -> int:
        """`cv2.calibrateCamera` flags for this model."""
        if self is DistortionModel.RADIAL2:
            return cv2.CALIB_FIX_K3 | cv2.CALIB_ZERO_TANGENT_DIST
        if self is DistortionModel.STANDARD:
            return cv2.CALIB_FIX_K3
        return 0


@dataclass(frozen=True, slots=True, kw_only=True)
class BoardSpec:
    """A ChArUco board: squares across and down, square and marker side in mm, dictionary.

    The default fits an A4 or Letter page at true size. Its dictionary differs from the table
    markers', so a board lying on the table is never mistaken for a corner marker.
    """

    squares_x: int = 5
    squares_y: int = 7
    square_mm: float = 30.0
    marker_mm: float = 22.0
    dictionary: str = "DICT_5X5_100"

    def __post_init__(self) -> None:
        if self.squares_x < 3 or self.squares_y < 3:
            raise ValueError("a ChArUco board needs at least 3×3 squares")
        if not 0 < self.marker_mm < self.square_mm:
            raise ValueError("the board's marker must be smaller than its square")
        if not hasattr(cv2.aruco, self.dictionary):
            raise ValueError(f"unknown ArUco dictionary {self.dictionary!r}")

    def board(self) -> cv2.aruco.CharucoBoard:
        """The OpenCV board object (object points in millimetres)."""
        dictionary = cv2.aruco.getPredefinedDictionary(getattr(cv2.aruco, self.dictionary))
        return cv2.aruco.CharucoBoard(
            (self.squares_x, self.squares_y), self.square_mm, self.marker_mm, dictionary
        )

    @property
    def size_mm(self) -> tuple[float, float]:
        """Printed board size (width, height) in millimetres."""
        return self.squares_x * self.square_mm, self.squares_y * self.square_mm

    def to_dict(self) -> dict[str, Any]:
        """Plain data for a lens file."""
        return {
            "squares": [self.squares_x, self.squares_y],
            "square_mm": self.square_mm,
            "marker_mm": self.marker_mm,
            "dictionary": self.dictionary,
        }


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class BoardView:
    """Board corners seen in one frame: `(n,3)` object points mm, `(n,2)` image pixels."""

    object_points: np.ndarray
    image_points: np.ndarray
    frame_index: int


def detect_board(
    image: np.ndarray,
    spec: BoardSpec,
    detector: cv2.aruco.CharucoDetector | None = None,
    *,
    frame_index: int = 0,
    min_corners: int = 8,
) -> BoardView | None:
    """Find the ChArUco corners of `spec` in `image`; None when fewer than `min_corners`."""
    board = detector.getBoard() if detector is not None else spec.board()
    detector = detector or cv2.aruco.CharucoDetector(board)
    corners, ids, _marker_corners, _marker_ids = detector.detectBoard(to_gray(image))
    if corners is None or ids is None:
        return None
    corner_arr = np.asarray(corners, np.float32).reshape(-1, 1, 2)
    id_arr = np.asarray(ids, np.int32).reshape(-1, 1)
    if id_arr.shape[0] < min_corners:
        return None
    obj, img = board.matchImagePoints(list(corner_arr), id_arr)
    obj = np.asarray(obj, np.float64).reshape(-1, 3)
    img = np.asarray(img, np.float64).reshape(-1, 2)
    if obj.shape[0] < min_corners:
        return None
    return BoardView(object_points=obj, image_points=img, frame_index=frame_index)


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class LensCalibration:
    """The result of `calibrate_lens`: the lens, its reprojection RMS and what was used."""

    lens: LensModel
    rms_px: float
    per_view_rms_px: tuple[float, ...]
    views_used: int
    frames_seen: int
    board: BoardSpec
    model: DistortionModel


def calibrate_lens(
    frames: Iterable[np.ndarray],
    spec: BoardSpec | None = None,
    *,
    model: DistortionModel = DistortionModel.STANDARD,
    min_views: int = 4,
    total: int | None = None,
    progress: bool = False,
) -> LensCalibration:
    """Calibrate the lens from frames showing the ChArUco board at several angles.

    Raises `DetectionError` when fewer than `min_views` frames show the board well enough.
    """
    spec = spec or BoardSpec()
    detector = cv2.aruco.CharucoDetector(spec.board())
    views: list[BoardView] = []
    image_size: tuple[int, int] | None = None
    seen = 0
    for index, frame in enumerate(
        tqdm(frames, total=total, desc="board", unit="frame", disable=not progress)
    ):
        seen += 1
        size = (int(frame.shape[1]), int(frame.shape[0]))
        if image_size is None:
            image_size = size
        elif size != image_size:
            raise DetectionError(
                f"frame {index} is {size[0]}×{size[1]} px but earlier frames are "
                f"{image_size[0]}×{image_size[1]} px; use frames from one camera mode"
            )
        view = detect_board(frame, spec, detector, frame_index=index)
        if view is not None:
            views.append(view)
    if image_size is None or len(views) < min_views:
        raise DetectionError(
            f"the ChArUco board was found in {len(views)} of {seen} frames; at least "
            f"{min_views} views are needed. Hold the printed board (`cardtrack calibrate board`) "
            "flat, fully in view, at several angles and positions, including the image corners"
        )
    obj = [v.object_points.astype(np.float32) for v in views]
    img = [v.image_points.astype(np.float32) for v in views]
    rms, k, dist, rvecs, tvecs = cv2.calibrateCamera(
        obj, img, image_size, None, None, flags=model.flags
    )
    dist = np.asarray(dist, np.float64).reshape(-1)[:5]
    lens = LensModel(camera_matrix=np.asarray(k, np.float64), distortion=dist, image_size=image_size)
    per_view = []
    for v, rvec, tvec in zip(views, rvecs, tvecs, strict=True):
        proj, _ = cv2.projectPoints(v.object_points, rvec, tvec, lens.camera_matrix, dist)
        per_view.append(float(np.sqrt(np.mean(np.sum((proj.reshape(-1, 2) - v.image_points) ** 2, axis=1)))))
    return LensCalibration(
        lens=lens,
        rms_px=float(rms),
        per_view_rms_px=tuple(per_view),
        views_used=len(views),
        frames_seen=seen,
        board=spec,
        model=model,
    )


def save_lens(calibration: LensCalibration, path: Path, *, created: str | None = None) -> None:
    """Write a versioned lens file."""
    data: dict[str, Any] = {"schema": LENS_SCHEMA, "kind": LENS_KIND}
    if created is not None:
        data["created"] = created
    data.update(calibration.lens.to_dict())
    data["model"] = str(calibration.model)
    data["rms_px"] = round(calibration.rms_px, 4)
    data["views_used"] = calibration.views_used
    data["frames_seen"] = calibration.frames_seen
    data["board"] = calibration.board.to_dict()
    path.write_text(_dumps(data), encoding="utf-8")


def load_lens(path: Path) -> LensModel:
    """Read a lens file written by `save_lens`; `ProfileError` naming the file and field."""
    path = Path(path)
    data = fields.read_json_file(path, ProfileError, _LENS_HINT)
    where = str(path)
    kind = fields.text(data, "kind", where, ProfileError)
    if kind != LENS_KIND:
        raise ProfileError(f"{where}: field 'kind' is {kind!r}, expected {LENS_KIND!r}; {_LENS_HINT}")
    schema = fields.integer(data, "schema", where, ProfileError)
    if schema != LENS_SCHEMA:
        raise ProfileError(
            f"{where}: field 'schema' is {schema}, this version reads {LENS_SCHEMA}; {_LENS_HINT}"
        )
    return lens_from_dict(data, where)


def _dumps(data: Mapping[str, Any]) -> str:
    return json.dumps(data, indent=1) + "\n"
