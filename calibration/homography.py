"""Image → table homography from the four corner markers, with its error figures.

Table coordinates are millimetres on the table plane. The origin is the centre of marker 0
(top-left in the camera image), x runs towards marker 1 (top-right), y towards marker 3
(bottom-left); the table size `W×H` is measured between marker centres, so the marker centres
sit at (0,0), (W,0), (W,H), (0,H). Each marker's four corners are known in millimetres from
its printed side length, so each visible marker gives four point pairs (corners refined on the marker
edges, see `calibration.markers`). A free 8-parameter homography is fitted to all of them:
with precise corners even three markers (twelve points) fix the perspective well enough to
keep the hidden corner within a fraction of a millimetre, and two markers give eight points,
still a fit. When a lens file gives the camera matrix and a marker is missing, the fit goes
through the pinhole camera instead (the plane's pose: six parameters, not eight), which
constrains the perspective further. With three or more markers the quarter-turn each marker
was laid at is inferred (a marker placed rotated still calibrates). Points are undistorted
through the lens model first when one is given; the homography maps *undistorted* pixels to
millimetres.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum

import cv2
import numpy as np

from calibration.errors import DetectionError
from calibration.lens import LensModel
from calibration.markers import DEFAULT_MARKER_MM, TABLE_MARKER_IDS, TableCorner

# Corner offsets of an upright marker, clockwise from its own top-left (ArUco order).
_UPRIGHT = np.array([[-0.5, -0.5], [0.5, -0.5], [0.5, 0.5], [-0.5, 0.5]], np.float64)


@dataclass(frozen=True, slots=True, kw_only=True)
class TableGeometry:
    """Where the markers lie on the table: `table_mm` between marker centres, printed size."""

    table_mm: tuple[float, float]
    marker_mm: float = DEFAULT_MARKER_MM

    def __post_init__(self) -> None:
        w, h = self.table_mm
        if not (w > 0 and h > 0):
            raise ValueError(f"table size must be positive, got {w}×{h} mm")
        if not self.marker_mm > 0:
            raise ValueError(f"marker size must be positive, got {self.marker_mm} mm")
        if self.marker_mm * 2 >= min(w, h):
            raise ValueError(
                f"markers of {self.marker_mm:g} mm do not fit a {w:g}×{h:g} mm table; "
                "measure the table size between marker centres"
            )

    def marker_center(self, marker_id: int) -> np.ndarray:
        """Centre of marker `marker_id` in table millimetres."""
        w, h = self.table_mm
        centres = {
            TableCorner.TOP_LEFT: (0.0, 0.0),
            TableCorner.TOP_RIGHT: (w, 0.0),
            TableCorner.BOTTOM_RIGHT: (w, h),
            TableCorner.BOTTOM_LEFT: (0.0, h),
        }
        return np.array(centres[TableCorner(marker_id)], np.float64)

    def marker_corners(self, marker_id: int, rotation: int = 0) -> np.ndarray:
        """`(4,2)` mm corners in detection order for a marker laid `rotation` quarter turns
        clockwise from upright (upright = printed arrow towards the top of the image)."""
        model = self.marker_center(marker_id) + _UPRIGHT * self.marker_mm
        return np.roll(model, -rotation, axis=0)

    def table_corners(self) -> np.ndarray:
        """`(4,2)` mm: the table rectangle's corners, top-left first, clockwise."""
        w, h = self.table_mm
        return np.array([[0.0, 0.0], [w, 0.0], [w, h], [0.0, h]], np.float64)


@dataclass(frozen=True, slots=True, kw_only=True)
class ErrorFigures:
    """How well the fitted mapping explains the observed points (RMS and max)."""

    rms_px: float
    max_px: float
    rms_mm: float
    max_mm: float
    points: int

    def to_dict(self) -> dict[str, float | int]:
        """Plain data for a profile file."""
        return {
            "rms_px": round(self.rms_px, 4),
            "max_px": round(self.max_px, 4),
            "rms_mm": round(self.rms_mm, 4),
            "max_mm": round(self.max_mm, 4),
            "points": self.points,
        }


class FitModel(StrEnum):
    """How the homography is constrained."""

    HOMOGRAPHY = "homography"  # free 8-parameter homography
    PINHOLE = "pinhole"  # plane pose through the calibrated camera (lens known, a marker hidden)
    CORNERS = "corners"  # exact from four hand-given corners


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class HomographyFit:
    """A fitted image → table homography, the marker rotations used and its errors."""

    homography: np.ndarray
    rotations: Mapping[int, int]
    errors: ErrorFigures
    model: FitModel


def apply_homography(matrix: np.ndarray, points: np.ndarray) -> np.ndarray:
    """Map `(n,2)` points through a 3×3 homography (vectorised)."""
    pts = np.asarray(points, np.float64).reshape(-1, 2)
    ones = np.ones((pts.shape[0], 1))
    mapped = np.hstack([pts, ones]) @ np.asarray(matrix, np.float64).T
    return mapped[:, :2] / mapped[:, 2:3]


def infer_rotations(
    corners_px: Mapping[int, np.ndarray], geometry: TableGeometry
) -> dict[int, int]:
    """Quarter turns of each marker from where its corners lie relative to the others.

    Needs three or more markers (their centres fix an affine or projective frame); with fewer
    every marker is taken as upright.
    """
    ids = sorted(corners_px)
    if len(ids) < 3:
        return dict.fromkeys(ids, 0)
    centres_px = np.array([corners_px[i].mean(axis=0) for i in ids], np.float64)
    centres_mm = np.array([geometry.marker_center(i) for i in ids], np.float64)
    if len(ids) >= 4:
        frame, _ = cv2.findHomography(centres_mm, centres_px, 0)
    else:
        affine = cv2.getAffineTransform(centres_mm.astype(np.float32), centres_px.astype(np.float32))
        frame = np.vstack([affine, [0.0, 0.0, 1.0]])
    if frame is None:
        return dict.fromkeys(ids, 0)
    rotations = {}
    for i in ids:
        errors = [
            float(np.sum((apply_homography(frame, geometry.marker_corners(i, r)) - corners_px[i]) ** 2))
            for r in range(4)
        ]
        rotations[i] = int(np.argmin(errors))
    return rotations


def fit_homography(
    corners_px: Mapping[int, np.ndarray],
    geometry: TableGeometry,
    lens: LensModel | None = None,
    *,
    min_markers: int = 2,
) -> HomographyFit:
    """Fit the image → table homography from observed marker corners (raw image pixels).

    `corners_px` maps marker id (0–3) to its `(4,2)` corners in detection order. With a lens
    and fewer than four markers, the pinhole fit is used (see module docstring). Raises `DetectionError` with fewer than `min_markers` markers.
    """
    ids = sorted(i for i in corners_px if i in TABLE_MARKER_IDS)
    if len(ids) < max(2, min_markers):
        seen = ", ".join(str(i) for i in ids) or "none"
        raise DetectionError(
            f"table markers seen: {seen}; at least {max(2, min_markers)} of ids 0–3 are needed "
            "to fit the table (check that the markers are in view, well lit and printed at true "
            "size, or give the table corners by hand with --corners)"
        )
    raw = {i: np.asarray(corners_px[i], np.float64).reshape(4, 2) for i in ids}
    flat = {i: (lens.undistort_points(raw[i]) if lens else raw[i]) for i in ids}
    rotations = infer_rotations(flat, geometry)
    img = np.vstack([flat[i] for i in ids])
    mm = np.vstack([geometry.marker_corners(i, rotations[i]) for i in ids])
    matrix: np.ndarray | None
    if len(ids) >= 4 or lens is None:
        model = FitModel.HOMOGRAPHY
        matrix, _ = cv2.findHomography(img, mm, 0)
    else:
        model = FitModel.PINHOLE
        matrix = fit_pinhole(img, mm, lens.camera_matrix)
    if matrix is None or abs(np.linalg.det(matrix)) < 1e-15:
        raise DetectionError(
            "the marker corners do not define a table plane (degenerate homography); "
            "check that the markers are at the four corners of the table"
        )
    matrix = matrix / matrix[2, 2]
    errors = measure_errors(matrix, np.vstack([raw[i] for i in ids]), mm, lens)
    return HomographyFit(homography=matrix, rotations=rotations, errors=errors, model=model)


def _pose_homography(
    img: np.ndarray, mm: np.ndarray, k: np.ndarray
) -> tuple[float, np.ndarray | None]:
    """Best plane pose for camera matrix `k`: (RMS px, image → table homography)."""
    obj = np.hstack([mm, np.zeros((mm.shape[0], 1))]).astype(np.float64)
    ok, rvec, tvec = cv2.solvePnP(obj, img, k, None, flags=cv2.SOLVEPNP_IPPE)
    if not ok:
        return float("inf"), None
    rvec, tvec = cv2.solvePnPRefineLM(obj, img, k, None, rvec, tvec)
    rot, _ = cv2.Rodrigues(rvec)
    forward = k @ np.column_stack([rot[:, 0], rot[:, 1], tvec.reshape(3)])
    proj = apply_homography(forward, mm)
    rms = float(np.sqrt(np.mean(np.sum((proj - img) ** 2, axis=1))))
    if abs(np.linalg.det(forward)) < 1e-15:
        return float("inf"), None
    return rms, np.linalg.inv(forward)


def fit_pinhole(img: np.ndarray, mm: np.ndarray, camera_matrix: np.ndarray) -> np.ndarray | None:
    """Image → table homography through a calibrated pinhole camera seeing the table plane:
    only the plane's pose is fitted (IPPE, then Levenberg–Marquardt)."""
    return _pose_homography(img, mm, camera_matrix)[1]


def fit_from_corners(
    table_corners_px: np.ndarray, geometry: TableGeometry, lens: LensModel | None = None
) -> HomographyFit:
    """Homography from the four table corners given by hand (top-left first, clockwise)."""
    pts = np.asarray(table_corners_px, np.float64).reshape(4, 2)
    flat = lens.undistort_points(pts) if lens else pts
    mm = geometry.table_corners()
    if abs(cv2.contourArea(flat.astype(np.float32))) < 100.0:
        raise DetectionError(
            f"the four corners {pts.tolist()} enclose almost no area; give them as "
            "x1,y1,...,x4,y4 in image pixels: top-left, top-right, bottom-right, bottom-left"
        )
    matrix = cv2.getPerspectiveTransform(flat.astype(np.float32), mm.astype(np.float32)).astype(np.float64)
    matrix = matrix / matrix[2, 2]
    return HomographyFit(
        homography=matrix, rotations={}, errors=measure_errors(matrix, pts, mm, lens),
        model=FitModel.CORNERS,
    )


def measure_errors(
    matrix: np.ndarray, raw_px: np.ndarray, mm: np.ndarray, lens: LensModel | None
) -> ErrorFigures:
    """Residuals of `raw_px` ↔ `mm` pairs both ways: in millimetres and in image pixels."""
    flat = lens.undistort_points(raw_px) if lens else raw_px
    err_mm = np.linalg.norm(apply_homography(matrix, flat) - mm, axis=1)
    back = apply_homography(np.linalg.inv(matrix), mm)
    if lens:
        back = lens.distort_points(back)
    err_px = np.linalg.norm(back - raw_px, axis=1)
    return ErrorFigures(
        rms_px=float(np.sqrt(np.mean(err_px**2))),
        max_px=float(err_px.max()),
        rms_mm=float(np.sqrt(np.mean(err_mm**2))),
        max_mm=float(err_mm.max()),
        points=int(raw_px.shape[0]),
    )
