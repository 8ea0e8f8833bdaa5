"""The four table markers: which ArUco dictionary and ids, and how to detect them in a frame.

The table is marked by four ArUco markers from `DICT_4X4_50`, ids 0–3, one at each corner of
the play area as seen in the camera image: 0 top-left, 1 top-right, 2 bottom-right,
3 bottom-left. Detection wraps OpenCV's `ArucoDetector` (OpenCV ≥ 4.7, including 5.0) with
sub-pixel corner refinement and normalises its return shapes, which differ between versions
(corners `(1,4,2)` per marker or one `(n,4,2)` array; ids `(n,)`, `(n,1)` or None), into one
validated struct-of-arrays, `MarkerDetections`. Corners are then refined by fitting a line
to each side of the marker's black square (sub-pixel 50 % crossings along the edge normals)
and intersecting adjacent lines: OpenCV's corner refinement alone pulls corners about 0.2 px
inwards, which costs a millimetre where one marker is hidden. Detection can be limited to a
region of interest or run on a downscaled frame; corners come back in full-frame pixels.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum
from typing import Any

import cv2
import numpy as np

TABLE_DICTIONARY_NAME = "DICT_4X4_50"
TABLE_DICTIONARY = cv2.aruco.DICT_4X4_50
DEFAULT_MARKER_MM = 60.0


class TableCorner(IntEnum):
    """A table marker id and the table corner it marks (as seen in the camera image)."""

    TOP_LEFT = 0
    TOP_RIGHT = 1
    BOTTOM_RIGHT = 2
    BOTTOM_LEFT = 3

    @property
    def label(self) -> str:
        """Human name, e.g. 'top-left'."""
        return self.name.lower().replace("_", "-")


TABLE_MARKER_IDS: tuple[int, ...] = tuple(int(c) for c in TableCorner)


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class MarkerDetections:
    """Markers found in one frame: `ids` `(n,)` int and `corners` `(n,4,2)` float64 pixels.

    Corners run clockwise from the marker's own top-left corner (as printed), the ArUco
    convention. Shapes are checked on construction.
    """

    ids: np.ndarray
    corners: np.ndarray

    def __post_init__(self) -> None:
        if self.ids.ndim != 1 or self.ids.dtype.kind not in "iu":
            raise ValueError(f"MarkerDetections.ids must be a 1-D int array, got {self.ids.shape}")
        n = self.ids.shape[0]
        if self.corners.shape != (n, 4, 2):
            raise ValueError(
                f"MarkerDetections.corners must have shape ({n}, 4, 2), got {self.corners.shape}"
            )

    @classmethod
    def empty(cls) -> MarkerDetections:
        """No markers."""
        return cls(ids=np.zeros(0, np.int64), corners=np.zeros((0, 4, 2), np.float64))

    def __len__(self) -> int:
        return int(self.ids.shape[0])

    def select(self, mask: np.ndarray) -> MarkerDetections:
        """The detections where the boolean `mask` is true."""
        return MarkerDetections(ids=self.ids[mask], corners=self.corners[mask])

    def only(self, wanted: tuple[int, ...]) -> MarkerDetections:
        """Keep ids in `wanted` that occur exactly once (a repeated id is ambiguous: dropped)."""
        keep = np.isin(self.ids, wanted)
        values, counts = np.unique(self.ids[keep], return_counts=True)
        repeated = values[counts > 1]
        keep &= ~np.isin(self.ids, repeated)
        return self.select(keep)

    def by_id(self) -> dict[int, np.ndarray]:
        """Map id → `(4,2)` corners (the last one wins for a repeated id)."""
        return {int(i): c for i, c in zip(self.ids, self.corners, strict=True)}

    def shifted(self, dx: float, dy: float, scale: float = 1.0) -> MarkerDetections:
        """Corners mapped by `p * scale + (dx, dy)` (back from a crop or a downscaled frame)."""
        offset = np.array([dx, dy], np.float64)
        return MarkerDetections(ids=self.ids.copy(), corners=self.corners * scale + offset)


def normalise_detection(corners: Any, ids: Any) -> MarkerDetections:
    """Turn `detectMarkers` output of any OpenCV 4.7–5.x version into `MarkerDetections`.

    `corners` may be a tuple/list of `(1,4,2)` or `(4,2)` arrays, or one `(n,4,2)` /
    `(n,1,4,2)` array; `ids` may be None, `(n,)` or `(n,1)`.
    """
    if ids is None:
        return MarkerDetections.empty()
    id_arr = np.asarray(ids).reshape(-1).astype(np.int64)
    n = id_arr.shape[0]
    if n == 0:
        return MarkerDetections.empty()
    if isinstance(corners, tuple | list):
        parts = [np.asarray(c, np.float64).reshape(4, 2) for c in corners]
        corner_arr = np.stack(parts) if parts else np.zeros((0, 4, 2))
    else:
        corner_arr = np.asarray(corners, np.float64).reshape(-1, 4, 2)
    if corner_arr.shape[0] != n:
        raise ValueError(f"detectMarkers returned {corner_arr.shape[0]} corner sets for {n} ids")
    return MarkerDetections(ids=id_arr, corners=corner_arr)


def make_detector(dictionary: int = TABLE_DICTIONARY) -> cv2.aruco.ArucoDetector:
    """An ArUco detector for `dictionary` with sub-pixel corner refinement."""
    params = cv2.aruco.DetectorParameters()
    params.cornerRefinementMethod = cv2.aruco.CORNER_REFINE_SUBPIX
    params.cornerRefinementWinSize = 4
    params.cornerRefinementMaxIterations = 50
    params.cornerRefinementMinAccuracy = 0.01
    return cv2.aruco.ArucoDetector(cv2.aruco.getPredefinedDictionary(dictionary), params)


def to_gray(image: np.ndarray) -> np.ndarray:
    """A single-channel uint8 view of a BGR, BGRA or gray frame."""
    if image.ndim == 2:
        return image
    if image.ndim == 3 and image.shape[2] == 3:
        return cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
    if image.ndim == 3 and image.shape[2] == 4:
        return cv2.cvtColor(image, cv2.COLOR_BGRA2GRAY)
    if image.ndim == 3 and image.shape[2] == 1:
        return image[:, :, 0]
    raise ValueError(f"expected a gray or BGR image, got an array of shape {image.shape}")


def _edge_offsets(
    profiles: np.ndarray, offsets: np.ndarray, dark: float, light: float, min_contrast: float
) -> np.ndarray:
    """Sub-pixel edge position along each profile row (NaN where there is no clear edge).

    The profile is normalised to rise from 0 to 1 between the marker's `dark` and `light`
    levels, in whichever direction it runs; for a step edge blurred by any symmetric,
    area-preserving kernel (a lens, pixel area sampling), the area under it fixes the step
    position exactly: `end - integral`. Unlike a 50 % crossing on interpolated pixels, this
    has no bias that depends on where the edge falls within a pixel. The levels come from the
    whole marker, not the profile's ends, which on a small marker already feel the next edge.
    """
    rising = profiles[:, -3:].mean(axis=1) > profiles[:, :3].mean(axis=1)
    start = np.where(rising, dark, light)
    end = np.where(rising, light, dark)
    local = np.abs(profiles[:, -3:].mean(axis=1) - profiles[:, :3].mean(axis=1))
    q = np.clip((profiles - start[:, None]) / (end - start)[:, None], 0.0, 1.0)
    step = float(offsets[1] - offsets[0])
    area = (q[:, 1:] + q[:, :-1]).sum(axis=1) * step / 2
    found = offsets[-1] - area
    inside = (found > offsets[0] + step) & (found < offsets[-1] - step)
    ok = (light - dark >= min_contrast) & (local >= 0.5 * (light - dark)) & inside
    return np.where(ok, found, np.nan)


def refine_corners(
    gray: np.ndarray, corners: np.ndarray, *, max_shift_px: float = 3.0, min_contrast: float = 15.0
) -> np.ndarray:
    """Corners `(n,4,2)` re-estimated as intersections of lines fitted to the marker sides.

    A corner whose side fits fail, or that would move more than `max_shift_px`, keeps its
    input position.
    """
    img = gray.astype(np.float32)
    out = np.array(corners, np.float64, copy=True)
    for m, quad in enumerate(np.asarray(corners, np.float64)):
        area = abs(float(cv2.contourArea(quad.astype(np.float32))))
        sides = []
        for k in range(4):
            a, b = quad[k], quad[(k + 1) % 4]
            length = float(np.linalg.norm(b - a))
            if length < 8:
                break
            # Stay within the one-cell black border (and the one-cell white quiet zone
            # outside it): a cell is a sixth of the marker's height across this side, which
            # perspective and shear can make much less than a sixth of the side's length.
            reach = float(np.clip(area / length / 6 * 0.5, 1.0, 4.0))
            offsets = np.arange(-reach, reach + 1e-9, 0.25)
            d = (b - a) / length
            normal = np.array([d[1], -d[0]])
            ts = np.linspace(0.15, 0.85, max(6, int(length / 2)))
            base = a + ts[:, None] * (b - a)
            pts = base[:, None, :] + offsets[None, :, None] * normal
            profiles = cv2.remap(
                img, pts[..., 0].astype(np.float32), pts[..., 1].astype(np.float32),
                cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE,
            ).astype(np.float64)
            sides.append((base, normal, offsets, profiles))
        if len(sides) != 4:
            continue
        every = np.concatenate([p.ravel() for *_, p in sides])
        dark, light = float(np.percentile(every, 5)), float(np.percentile(every, 95))
        lines = []
        for base, normal, offsets, profiles in sides:
            found = _edge_offsets(profiles, offsets, dark, light, min_contrast)
            good = np.isfinite(found)
            if good.sum() < 4:
                break
            edge = (base[good] + found[good, None] * normal).astype(np.float32)
            vx, vy, x0, y0 = cv2.fitLine(edge, cv2.DIST_HUBER, 0, 0.01, 0.01).reshape(4)
            lines.append((np.array([x0, y0], np.float64), np.array([vx, vy], np.float64)))
        if len(lines) != 4:
            continue
        for k in range(4):
            p1, v1 = lines[(k - 1) % 4]
            p2, v2 = lines[k]
            system = np.column_stack([v1, -v2])
            if abs(np.linalg.det(system)) < 1e-6:
                continue
            t = np.linalg.solve(system, p2 - p1)
            corner = p1 + t[0] * v1
            if np.linalg.norm(corner - quad[k]) <= max_shift_px:
                out[m, k] = corner
    return out


def detect_markers(
    image: np.ndarray,
    detector: cv2.aruco.ArucoDetector | None = None,
    *,
    roi: tuple[int, int, int, int] | None = None,
    downscale: float = 1.0,
    wanted: tuple[int, ...] | None = TABLE_MARKER_IDS,
    refine: bool = True,
) -> MarkerDetections:
    """Detect markers in `image` (optionally inside `roi` = x, y, w, h, or downscaled).

    Returns corners in full-frame pixel coordinates (pixel centres at integers), refined on
    the marker edges unless `refine` is False. With `wanted` set, other ids and ids seen more
    than once are dropped.
    """
    detector = detector or make_detector()
    gray = to_gray(image)
    x0 = y0 = 0
    if roi is not None:
        x, y, w, h = roi
        x0, y0 = max(0, int(x)), max(0, int(y))
        x1, y1 = min(gray.shape[1], int(x + w)), min(gray.shape[0], int(y + h))
        if x1 - x0 < 8 or y1 - y0 < 8:
            return MarkerDetections.empty()
        gray = gray[y0:y1, x0:x1]
    scale = 1.0
    if downscale != 1.0:
        if not 0.0 < downscale < 1.0:
            raise ValueError(f"downscale must be in (0, 1], got {downscale}")
        gray = cv2.resize(gray, None, fx=downscale, fy=downscale, interpolation=cv2.INTER_AREA)
        scale = 1.0 / downscale
    corners, ids, _rejected = detector.detectMarkers(gray)
    found = normalise_detection(corners, ids)
    if refine and len(found):
        found = MarkerDetections(ids=found.ids, corners=refine_corners(gray, found.corners))
    if scale != 1.0:
        # Pixel centres: p_full = (p_small + 0.5) * scale - 0.5.
        found = found.shifted(0.5 * scale - 0.5 + x0, 0.5 * scale - 0.5 + y0, scale)
    elif x0 or y0:
        found = found.shifted(x0, y0)
    return found.only(wanted) if wanted is not None else found
