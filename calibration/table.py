"""Table calibration: from camera frames (or four hand-given corners) to a `TableProfile`.

`collect_markers` detects the four corner markers in every frame and keeps, per marker, the
median of its corners over the frames that saw it, after dropping frames where it sat far
from that median (a hand passing over it, a misdetection); the spread of what is kept is
reported. `calibrate_table` fits the homography from those medians (any two markers suffice,
three give the full accuracy) and builds the profile; `calibrate_from_corners` does the same
from four table corners clicked in an image. Neither reads the clock: the caller passes the
creation time.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
from tqdm import tqdm

from calibration.errors import DetectionError
from calibration.homography import TableGeometry, fit_from_corners, fit_homography
from calibration.layout import load_template
from calibration.lens import LensModel
from calibration.markers import MarkerDetections, detect_markers, make_detector
from calibration.profile import CalibrationMethod, MarkerObservation, TableProfile

OUTLIER_PX = 3.0  # a marker this far from its median corners in one frame is not used there


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class MarkerSurvey:
    """What several frames showed: one observation per marker seen, and the frame count."""

    observations: tuple[MarkerObservation, ...]
    frames: int
    image_size: tuple[int, int]
    first_frame: np.ndarray

    def corners(self) -> dict[int, np.ndarray]:
        """Marker id → median `(4,2)` corners."""
        return {o.id: o.corners_px for o in self.observations}


def collect_markers(
    frames: Iterable[np.ndarray], *, total: int | None = None, progress: bool = False
) -> MarkerSurvey:
    """Detect the table markers in each frame and reduce them to per-marker medians."""
    detector = make_detector()
    seen: dict[int, list[np.ndarray]] = {}
    image_size: tuple[int, int] | None = None
    first: np.ndarray | None = None
    count = 0
    for index, frame in enumerate(
        tqdm(frames, total=total, desc="markers", unit="frame", disable=not progress)
    ):
        size = (int(frame.shape[1]), int(frame.shape[0]))
        if image_size is None:
            image_size, first = size, frame
        elif size != image_size:
            raise DetectionError(
                f"frame {index} is {size[0]}×{size[1]} px but the first frame is "
                f"{image_size[0]}×{image_size[1]} px; use frames from one camera mode"
            )
        count += 1
        found: MarkerDetections = detect_markers(frame, detector)
        for marker_id, corners in found.by_id().items():
            seen.setdefault(marker_id, []).append(corners)
    if image_size is None or first is None:
        raise DetectionError("the source gave no frames")
    observations = []
    for marker_id in sorted(seen):
        stack = np.stack(seen[marker_id])  # (k, 4, 2)
        median = np.median(stack, axis=0)
        dist = np.linalg.norm(stack - median, axis=2).max(axis=1)
        kept = stack[dist <= OUTLIER_PX]
        if kept.shape[0] == 0:
            kept = stack
        median = np.median(kept, axis=0)
        spread = float(np.linalg.norm(kept - median, axis=2).max()) if kept.shape[0] > 1 else 0.0
        observations.append(MarkerObservation(
            id=marker_id, corners_px=median, frames=int(kept.shape[0]), spread_px=spread,
        ))
    return MarkerSurvey(
        observations=tuple(observations), frames=count, image_size=image_size, first_frame=first
    )


def calibrate_table(
    survey: MarkerSurvey,
    *,
    game: str,
    players: int,
    geometry: TableGeometry,
    lens: LensModel | None = None,
    created: str | None = None,
    min_markers: int = 2,
) -> TableProfile:
    """Fit the table profile from a marker survey; `DetectionError` with too few markers."""
    load_template(game).check_players(players)
    lens = lens.for_image_size(survey.image_size) if lens is not None else None
    if not survey.observations:
        raise DetectionError(
            f"no table markers (ArUco DICT_4X4_50, ids 0–3) were found in {survey.frames} "
            "frame(s); check that the printed markers are in view and well lit, or give the "
            "table corners by hand with --corners"
        )
    fit = fit_homography(survey.corners(), geometry, lens, min_markers=min_markers)
    observations = tuple(
        MarkerObservation(
            id=o.id, corners_px=o.corners_px, frames=o.frames, spread_px=o.spread_px,
            rotation=fit.rotations.get(o.id, 0),
        )
        for o in survey.observations
    )
    return TableProfile(
        game=game, players=players, table_mm=geometry.table_mm, marker_mm=geometry.marker_mm,
        image_size=survey.image_size, homography=fit.homography, lens=lens,
        method=CalibrationMethod.MARKERS, observations=observations, errors=fit.errors,
        created=created,
    )


def calibrate_from_corners(
    corners_px: np.ndarray,
    *,
    image_size: tuple[int, int],
    game: str,
    players: int,
    geometry: TableGeometry,
    lens: LensModel | None = None,
    created: str | None = None,
) -> TableProfile:
    """The profile from the four table corners (marker centres) given in image pixels,
    top-left first, clockwise."""
    load_template(game).check_players(players)
    lens = lens.for_image_size(image_size) if lens is not None else None
    fit = fit_from_corners(corners_px, geometry, lens)
    return TableProfile(
        game=game, players=players, table_mm=geometry.table_mm, marker_mm=geometry.marker_mm,
        image_size=image_size, homography=fit.homography, lens=lens,
        method=CalibrationMethod.CORNERS, observations=(), errors=fit.errors, created=created,
    )


def parse_corners(text: str) -> np.ndarray:
    """'x1,y1,x2,y2,x3,y3,x4,y4' → `(4,2)`; `DetectionError` explaining the format."""
    parts = [p for p in text.replace(";", ",").replace(" ", ",").split(",") if p]
    try:
        values = [float(p) for p in parts]
    except ValueError:
        values = []
    if len(values) != 8 or not np.all(np.isfinite(values)):
        raise DetectionError(
            f"--corners {text!r}: give 8 numbers x1,y1,x2,y2,x3,y3,x4,y4 (image pixels of the "
            "table corners: top-left, top-right, bottom-right, bottom-left)"
        )
    return np.asarray(values, np.float64).reshape(4, 2)
