"""Synthetic camera frames of a marked table or a ChArUco board, with known ground truth.

Used by the tests and by anyone checking calibration without a camera: a plane texture drawn
in millimetres (a wood-like table with the four corner markers and a few cards, or the
printed lens board) is projected through a known pinhole camera (`SyntheticCamera`: camera
matrix, pose, optional lens distortion) into a 1280×720 frame. Rendering is supersampled and
box-filtered, so marker edges are anti-aliased like a real camera's; lens distortion is
applied with `cv2.remap` through a map computed by undistorting a pixel grid. Everything
random takes a seed.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import cv2
import numpy as np

from calibration.homography import TableGeometry, apply_homography
from calibration.layout import QUIET_ZONE_MM
from calibration.lens import BoardSpec, LensModel
from calibration.markers import TABLE_DICTIONARY, TABLE_MARKER_IDS

IMAGE_SIZE = (1280, 720)


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class SyntheticCamera:
    """A pinhole camera with optional distortion, posed over a plane (plane z = 0, mm).

    `rotation` and `translation` map plane coordinates to camera coordinates.
    """

    camera_matrix: np.ndarray
    distortion: np.ndarray
    image_size: tuple[int, int]
    rotation: np.ndarray
    translation: np.ndarray

    @property
    def lens(self) -> LensModel:
        """The camera's true lens model."""
        return LensModel(
            camera_matrix=self.camera_matrix, distortion=self.distortion, image_size=self.image_size
        )

    def plane_homography(self) -> np.ndarray:
        """Plane mm → undistorted pixels (3×3)."""
        rt = np.column_stack([self.rotation[:, 0], self.rotation[:, 1], self.translation])
        h: np.ndarray = self.camera_matrix @ rt
        out: np.ndarray = h / h[2, 2]
        return out

    def true_image_to_table(self) -> np.ndarray:
        """The exact undistorted-pixel → plane mm homography (what calibration estimates)."""
        h: np.ndarray = np.linalg.inv(self.plane_homography())
        out: np.ndarray = h / h[2, 2]
        return out

    def project(self, points_mm: np.ndarray) -> np.ndarray:
        """Plane points `(n,2)` mm → raw (distorted) pixels `(n,2)`."""
        flat = apply_homography(self.plane_homography(), points_mm)
        if not np.any(self.distortion):
            return flat
        return self.lens.distort_points(flat)

    def moved(self, *, shift_px: tuple[float, float] = (0.0, 0.0), roll_deg: float = 0.0) -> SyntheticCamera:
        """The camera bumped: image shifted by about `shift_px` and rolled by `roll_deg`."""
        f = float(self.camera_matrix[0, 0])
        a = np.deg2rad(roll_deg)
        roll = np.array([[np.cos(a), -np.sin(a), 0.0], [np.sin(a), np.cos(a), 0.0], [0.0, 0.0, 1.0]])
        tilt, _ = cv2.Rodrigues(np.array([-shift_px[1] / f, shift_px[0] / f, 0.0]))
        delta = tilt @ roll
        return SyntheticCamera(
            camera_matrix=self.camera_matrix, distortion=self.distortion, image_size=self.image_size,
            rotation=delta @ self.rotation, translation=delta @ self.translation,
        )


def camera_matrix_for(image_size: tuple[int, int] = IMAGE_SIZE, hfov_deg: float = 70.0) -> np.ndarray:
    """A square-pixel camera matrix with the principal point near the image centre."""
    w, h = image_size
    f = (w / 2) / np.tan(np.deg2rad(hfov_deg) / 2)
    return np.array([[f, 0.0, (w - 1) / 2 + 3.0], [0.0, f, (h - 1) / 2 - 2.0], [0.0, 0.0, 1.0]])


def _look_at(position: np.ndarray, target: np.ndarray, roll_deg: float) -> np.ndarray:
    z = target - position
    z = z / np.linalg.norm(z)
    y_hint = np.array([0.0, 1.0, 0.0])
    y = y_hint - (y_hint @ z) * z
    y = y / np.linalg.norm(y)
    x = np.cross(y, z)
    a = np.deg2rad(roll_deg)
    xr = np.cos(a) * x + np.sin(a) * y
    yr = -np.sin(a) * x + np.cos(a) * y
    return np.vstack([xr, yr, z])


def table_camera(
    table_mm: tuple[float, float],
    *,
    tilt_deg: float = 0.0,
    azimuth_deg: float = 0.0,
    roll_deg: float = 0.0,
    image_size: tuple[int, int] = IMAGE_SIZE,
    distortion: Iterable[float] | None = None,
    hfov_deg: float = 70.0,
    margin_mm: float = 45.0,
    margin_px: float = 25.0,
) -> SyntheticCamera:
    """A camera looking at the table centre from `tilt_deg` off vertical (0 = overhead),
    leaning towards the table's bottom edge when `azimuth_deg` is 0, as close as it can be
    while the table plus `margin_mm` (the markers) stays `margin_px` inside the frame."""
    w, h = table_mm
    k = camera_matrix_for(image_size, hfov_deg)
    dist = np.zeros(5) if distortion is None else np.asarray(list(distortion), np.float64)
    target = np.array([w / 2, h / 2, 0.0])
    t, a = np.deg2rad(tilt_deg), np.deg2rad(azimuth_deg)
    direction = np.array([np.sin(t) * np.sin(a), np.sin(t) * np.cos(a), -np.cos(t)])
    rotation = _look_at(target + direction, target, roll_deg)
    m = margin_mm
    outline = np.array([[-m, -m], [w + m, -m], [w + m, h + m], [-m, h + m]], np.float64)
    outline = np.vstack([outline, (outline + np.roll(outline, -1, axis=0)) / 2])

    def fits(distance: float) -> bool:
        cam = SyntheticCamera(
            camera_matrix=k, distortion=dist, image_size=image_size, rotation=rotation,
            translation=-rotation @ (target + distance * direction),
        )
        px = cam.project(outline)
        return bool(
            np.all(px >= margin_px) and np.all(px[:, 0] <= image_size[0] - 1 - margin_px)
            and np.all(px[:, 1] <= image_size[1] - 1 - margin_px)
        )

    lo, hi = 100.0, 50_000.0
    for _ in range(60):
        mid = (lo + hi) / 2
        lo, hi = (lo, mid) if fits(mid) else (mid, hi)
    return SyntheticCamera(
        camera_matrix=k, distortion=dist, image_size=image_size, rotation=rotation,
        translation=-rotation @ (target + hi * direction),
    )


def random_table_camera(
    rng: np.random.Generator,
    table_mm: tuple[float, float],
    *,
    max_tilt_deg: float = 45.0,
    distortion: Iterable[float] | None = None,
) -> SyntheticCamera:
    """A random pose from overhead to `max_tilt_deg`, any lean direction near the bottom
    edge, a little roll."""
    return table_camera(
        table_mm,
        tilt_deg=float(rng.uniform(0.0, max_tilt_deg)),
        azimuth_deg=float(rng.uniform(-60.0, 60.0)),
        roll_deg=float(rng.uniform(-8.0, 8.0)),
        distortion=distortion,
    )


def board_camera(
    spec: BoardSpec,
    *,
    rvec: Iterable[float],
    center_px: tuple[float, float],
    width_px: float,
    image_size: tuple[int, int] = IMAGE_SIZE,
    distortion: Iterable[float] | None = None,
    hfov_deg: float = 70.0,
) -> SyntheticCamera:
    """A camera seeing the board rotated by `rvec` (Rodrigues, radians), its centre at about
    `center_px` and about `width_px` wide (undistorted)."""
    k = camera_matrix_for(image_size, hfov_deg)
    rotation, _ = cv2.Rodrigues(np.asarray(list(rvec), np.float64))
    bw, bh = spec.size_mm
    depth = k[0, 0] * bw / width_px
    ray = np.linalg.inv(k) @ np.array([center_px[0], center_px[1], 1.0])
    centre_cam = ray / ray[2] * depth
    translation = centre_cam - rotation @ np.array([bw / 2, bh / 2, 0.0])
    dist = np.zeros(5) if distortion is None else np.asarray(list(distortion), np.float64)
    return SyntheticCamera(
        camera_matrix=k, distortion=dist, image_size=image_size, rotation=rotation,
        translation=translation,
    )


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class PlaneTexture:
    """An image of a plane: pixel (0, 0)'s centre lies at `origin_mm` + half a pixel."""

    image: np.ndarray
    origin_mm: tuple[float, float]
    px_per_mm: float

    def mm_from_px(self) -> np.ndarray:
        """3×3: texture pixel → plane mm."""
        s = self.px_per_mm
        ox, oy = self.origin_mm
        return np.array([[1 / s, 0.0, ox + 0.5 / s], [0.0, 1 / s, oy + 0.5 / s], [0.0, 0.0, 1.0]])


def table_texture(
    geometry: TableGeometry,
    *,
    px_per_mm: float = 4.0,
    seed: int = 0,
    rotations: Mapping[int, int] | None = None,
    cards: int = 6,
    card_mm: tuple[float, float] = (63.0, 88.0),
) -> PlaneTexture:
    """A wood-like table with the four corner markers (white quiet zone around each) and
    `cards` light rectangles scattered away from the markers."""
    rng = np.random.default_rng(seed)
    w, h = geometry.table_mm
    s = px_per_mm
    margin = float(np.ceil(geometry.marker_mm / 2 + QUIET_ZONE_MM + 30.0))
    size = (round((w + 2 * margin) * s), round((h + 2 * margin) * s))
    # Wood: low-frequency shading plus grain along x.
    small = rng.normal(0.0, 1.0, (max(2, size[1] // 64), max(2, size[0] // 64))).astype(np.float32)
    shade = cv2.resize(small, size, interpolation=cv2.INTER_CUBIC) * 10.0
    grain = rng.normal(0.0, 1.0, (size[1], 1)).astype(np.float32)
    grain = cv2.GaussianBlur(grain, (1, 0), sigmaX=0.1, sigmaY=3.0) * 12.0
    wood = shade + grain
    # BGR brown; convertScaleAbs saturates to uint8 (the sums stay positive).
    img = cv2.merge([cv2.convertScaleAbs(wood, alpha=1.0, beta=b) for b in (60.0, 95.0, 140.0)])

    def to_px(x_mm: float, y_mm: float) -> tuple[int, int]:
        return round((x_mm + margin) * s), round((y_mm + margin) * s)

    for _ in range(cards):
        cw, ch = card_mm if rng.random() < 0.7 else card_mm[::-1]
        cx = rng.uniform(geometry.marker_mm + cw, w - geometry.marker_mm - cw)
        cy = rng.uniform(geometry.marker_mm + ch, h - geometry.marker_mm - ch)
        angle = rng.uniform(-20, 20)
        box = cv2.boxPoints(((cx, cy), (cw, ch), angle))
        poly = np.array([to_px(x, y) for x, y in box], np.int32)
        color = tuple(int(v) for v in rng.integers(150, 235, 3))
        cv2.fillConvexPoly(img, poly, color, lineType=cv2.LINE_AA)
        cv2.polylines(img, [poly], True, (30, 30, 30), max(1, int(s)), cv2.LINE_AA)
    dictionary = cv2.aruco.getPredefinedDictionary(TABLE_DICTIONARY)
    side = round(geometry.marker_mm * s)
    quiet = round((geometry.marker_mm + 2 * QUIET_ZONE_MM) * s)
    for marker_id in TABLE_MARKER_IDS:
        cx, cy = geometry.marker_center(marker_id)
        x0, y0 = to_px(cx - geometry.marker_mm / 2 - QUIET_ZONE_MM, cy - geometry.marker_mm / 2 - QUIET_ZONE_MM)
        img[y0:y0 + quiet, x0:x0 + quiet] = 245
        marker = cv2.aruco.generateImageMarker(dictionary, marker_id, side)
        marker = np.rot90(marker, k=-(rotations or {}).get(marker_id, 0))
        mx, my = to_px(cx - geometry.marker_mm / 2, cy - geometry.marker_mm / 2)
        img[my:my + side, mx:mx + side] = np.where(marker[:, :, None] > 127, 245, 20)
    return PlaneTexture(image=_prefilter(img), origin_mm=(-margin, -margin), px_per_mm=s)


def board_texture(spec: BoardSpec, *, px_per_mm: float = 6.0) -> PlaneTexture:
    """The ChArUco board as printed (white page margin of 15 mm around it)."""
    bw, bh = spec.size_mm
    s = px_per_mm
    inner = (round(bw * s), round(bh * s))
    board = spec.board().generateImage(inner, marginSize=0, borderBits=1)
    pad = round(15 * s)
    page = np.full((inner[1] + 2 * pad, inner[0] + 2 * pad), 250, np.uint8)
    page[pad:pad + inner[1], pad:pad + inner[0]] = np.where(board > 127, 250, 15)
    return PlaneTexture(
        image=_prefilter(cv2.cvtColor(page, cv2.COLOR_GRAY2BGR)), origin_mm=(-15.0, -15.0), px_per_mm=s
    )


def _prefilter(image: np.ndarray) -> np.ndarray:
    """Soften texel edges before they are point-sampled by the warp.

    A hard step sampled at a few points per output pixel puts each edge up to a sixth of a
    pixel off, depending on where it falls (aliasing); a one-texel Gaussian is enough for the
    supersampled box filter to place edges exactly, as a real lens and sensor do.
    """
    return cv2.GaussianBlur(image, (0, 0), sigmaX=1.0)


def _distortion_map(camera: SyntheticCamera, supersample: int) -> tuple[np.ndarray, np.ndarray]:
    """For each supersampled distorted pixel, where it lies in the supersampled ideal image."""
    w, h = camera.image_size
    coarse = 2
    cw, ch = w // coarse, h // coarse
    gx, gy = np.meshgrid(np.arange(cw, dtype=np.float64), np.arange(ch, dtype=np.float64))
    # Coarse pixel centre c corresponds to full-res pixel coarse * (c + 0.5) - 0.5.
    pts = np.stack([coarse * (gx + 0.5) - 0.5, coarse * (gy + 0.5) - 0.5], axis=-1).reshape(-1, 2)
    ideal = camera.lens.undistort_points(pts).reshape(ch, cw, 2)
    ideal_ss = (supersample * (ideal + 0.5) - 0.5).astype(np.float32)
    size_ss = (w * supersample, h * supersample)
    map_x = cv2.resize(ideal_ss[:, :, 0], size_ss, interpolation=cv2.INTER_LINEAR)
    map_y = cv2.resize(ideal_ss[:, :, 1], size_ss, interpolation=cv2.INTER_LINEAR)
    return map_x, map_y


def render(
    texture: PlaneTexture,
    camera: SyntheticCamera,
    *,
    supersample: int = 3,
    noise: float = 2.0,
    seed: int = 0,
    background: int = 35,
) -> np.ndarray:
    """The camera's BGR frame of the textured plane."""
    w, h = camera.image_size
    ss = supersample
    to_ss = np.array([[ss, 0.0, (ss - 1) / 2], [0.0, ss, (ss - 1) / 2], [0.0, 0.0, 1.0]])
    m = to_ss @ camera.plane_homography() @ texture.mm_from_px()
    size_ss = (w * ss, h * ss)
    border = (background,) * 3
    if np.any(camera.distortion):
        ideal = cv2.warpPerspective(
            texture.image, m, size_ss, flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT,
            borderValue=border,
        )
        map_x, map_y = _distortion_map(camera, ss)
        big = cv2.remap(ideal, map_x, map_y, cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT,
                        borderValue=border)
    else:
        big = cv2.warpPerspective(
            texture.image, m, size_ss, flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT,
            borderValue=border,
        )
    frame = cv2.resize(big, (w, h), interpolation=cv2.INTER_AREA) if ss > 1 else big
    if noise > 0:
        rng = np.random.default_rng(seed)
        frame = np.clip(frame + rng.normal(0.0, noise, frame.shape), 0, 255).astype(np.uint8)
    return frame


def hide_markers(
    frame: np.ndarray, camera: SyntheticCamera, geometry: TableGeometry, ids: Iterable[int]
) -> np.ndarray:
    """A copy of `frame` with a hand-coloured blob over each listed marker."""
    out = frame.copy()
    for marker_id in ids:
        c = geometry.marker_center(marker_id)
        r = geometry.marker_mm * 0.9
        angles = np.linspace(0, 2 * np.pi, 24, endpoint=False)
        blob = c + np.column_stack([np.cos(angles) * r, np.sin(angles) * r * 0.8])
        px = camera.project(blob).astype(np.int32)
        cv2.fillPoly(out, [px], (120, 150, 205), lineType=cv2.LINE_AA)
    return out
