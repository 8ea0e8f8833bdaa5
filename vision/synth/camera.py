"""The synthetic camera: a pinhole with radial lens distortion, posed over the table.

Table coordinates follow `calibration`: millimetres, origin at the centre of table marker 0
(top-left of the play area), x towards marker 1 (right), y towards marker 3 (down the image),
and a height `h` above the table. Internally a table point is the 3-D point `(x, y, -h)`
(a right-handed frame whose z axis points into the table), and the camera maps it with
`X_cam = R · X + t` and the intrinsics `fx, fy, cx, cy`. Distortion is OpenCV's radial model
with `k1, k2` (no tangential terms): a point at normalised radius r moves to
`r · (1 + k1 r² + k2 r⁴)`, so `cv2.undistortPoints` with the same coefficients inverts it.
The table homography maps table millimetres to *undistorted* pixels. `sample_camera` draws a
realistic webcam pose: overhead to about 45° tilt, 0.5–1.2 m away, the play area in view.
Pixel coordinates put the centre of the top-left pixel at (0, 0) (OpenCV's convention).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import cv2
import numpy as np

from vision.synth.errors import SynthError
from vision.synth.noise import Array


@dataclass(frozen=True, slots=True, kw_only=True)
class Lens:
    """Pinhole intrinsics in pixels and radial distortion coefficients (OpenCV model)."""

    fx: float
    fy: float
    cx: float
    cy: float
    k1: float = 0.0
    k2: float = 0.0

    def matrix(self) -> Array:
        return np.array([[self.fx, 0.0, self.cx], [0.0, self.fy, self.cy], [0.0, 0.0, 1.0]])

    def dist_coeffs(self) -> Array:
        """OpenCV `distCoeffs` (k1, k2, p1, p2, k3)."""
        return np.array([self.k1, self.k2, 0.0, 0.0, 0.0])

    @property
    def distorted(self) -> bool:
        return self.k1 != 0.0 or self.k2 != 0.0

    def distort(self, px: Array) -> Array:
        """Undistorted pixels `(n, 2)` → the pixels where the lens actually images them."""
        px = np.asarray(px, np.float64).reshape(-1, 2)
        if not self.distorted:
            return px.copy()
        x = (px[:, 0] - self.cx) / self.fx
        y = (px[:, 1] - self.cy) / self.fy
        r2 = x * x + y * y
        f = 1.0 + self.k1 * r2 + self.k2 * r2 * r2
        return np.stack([self.cx + self.fx * x * f, self.cy + self.fy * y * f], axis=1)

    def undistort(self, px: Array, iterations: int = 30) -> Array:
        """Distorted pixels `(n, 2)` → undistorted pixels (fixed-point inverse of `distort`)."""
        px = np.asarray(px, np.float64).reshape(-1, 2)
        if not self.distorted:
            return px.copy()
        xd = (px[:, 0] - self.cx) / self.fx
        yd = (px[:, 1] - self.cy) / self.fy
        x, y = xd.copy(), yd.copy()
        for _ in range(iterations):
            r2 = x * x + y * y
            f = 1.0 + self.k1 * r2 + self.k2 * r2 * r2
            x, y = xd / f, yd / f
        return np.stack([self.cx + self.fx * x, self.cy + self.fy * y], axis=1)

    def covers(self, r_image: float) -> bool:
        """True when the model is invertible out to normalised image radius `r_image`.

        Radius grows with the undistorted radius, steadily (no fold-over), until the distorted
        radius passes `r_image` with a margin, and not so slowly that the frame corner would
        show more than 1.7 times the undistorted field.
        """
        r = np.linspace(0.0, 3.0, 600)
        rd = r * (1.0 + self.k1 * r**2 + self.k2 * r**4)
        slope = 1.0 + 3.0 * self.k1 * r**2 + 5.0 * self.k2 * r**4
        beyond = np.nonzero(rd >= r_image * 1.08)[0]
        if beyond.size == 0:
            return False
        end = int(beyond[0])
        return bool(np.all(slope[: end + 1] > 0.25) and r[end] <= 1.7 * r_image * 1.08)

    def to_dict(self) -> dict[str, float]:
        return {"fx": self.fx, "fy": self.fy, "cx": self.cx, "cy": self.cy,
                "k1": self.k1, "k2": self.k2}


def table_points(points_mm: Array) -> Array:
    """`(n, 2)` table mm or `(n, 3)` (x, y, height) → `(n, 3)` points of the camera's world frame."""
    p = np.asarray(points_mm, np.float64)
    if p.ndim != 2 or p.shape[1] not in (2, 3):
        raise SynthError(f"table points must have shape (n, 2) or (n, 3), got {p.shape}")
    out = np.zeros((p.shape[0], 3))
    out[:, :2] = p[:, :2]
    if p.shape[1] == 3:
        out[:, 2] = -p[:, 2]
    return out


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class Camera:
    """A posed camera: image size, lens, and world→camera rotation `R` (3×3) and translation `t`."""

    width: int
    height: int
    lens: Lens
    rotation: Array
    translation: Array
    # A camera turned by `rotated` keeps the camera it was turned from (`base`) and the
    # homography of the turn in undistorted pixels (`drift`), so a renderer can reuse what it
    # drew for the base camera; a camera built directly has no base and an identity drift.
    drift: Array = field(default_factory=lambda: np.eye(3))
    base: Camera | None = None

    def __post_init__(self) -> None:
        if self.rotation.shape != (3, 3) or self.translation.shape != (3,):
            raise SynthError("camera rotation must be 3×3 and translation a 3-vector")

    @property
    def size(self) -> tuple[int, int]:
        return (self.width, self.height)

    def to_camera(self, points_mm: Array) -> Array:
        """Table points → camera-frame coordinates `(n, 3)`; z is the depth in mm."""
        return table_points(points_mm) @ self.rotation.T + self.translation

    def project_undistorted(self, points_mm: Array) -> Array:
        """Table points (`(n,2)` on the table or `(n,3)` with height) → undistorted pixels."""
        pc = self.to_camera(points_mm)
        z = np.maximum(pc[:, 2], 1e-6)
        return np.stack(
            [self.lens.fx * pc[:, 0] / z + self.lens.cx, self.lens.fy * pc[:, 1] / z + self.lens.cy],
            axis=1,
        )

    def project(self, points_mm: Array) -> Array:
        """Table points → pixels in the (distorted) image the camera records."""
        return self.lens.distort(self.project_undistorted(points_mm))

    def homography(self) -> Array:
        """3×3 matrix taking table millimetres (x, y, 1) to undistorted pixels, H[2,2] = 1."""
        r = self.rotation
        m = self.lens.matrix() @ np.column_stack([r[:, 0], r[:, 1], self.translation])
        return m / m[2, 2]

    def position_mm(self) -> Array:
        """The camera centre in table coordinates (x, y, height)."""
        c = -self.rotation.T @ self.translation
        return np.array([c[0], c[1], -c[2]])

    def rotated(self, rvec: Array) -> Camera:
        """The same camera turned about its own centre by a small rotation vector (radians)."""
        rd, _ = cv2.Rodrigues(np.asarray(rvec, np.float64).reshape(3, 1))
        k = self.lens.matrix()
        drift = k @ rd @ np.linalg.inv(k)
        return Camera(
            width=self.width,
            height=self.height,
            lens=self.lens,
            rotation=rd @ self.rotation,
            translation=rd @ self.translation,
            drift=drift @ self.drift,
            base=self.base if self.base is not None else self,
        )

    def in_view(self, points_mm: Array, margin_px: float = 0.0) -> bool:
        pc = self.to_camera(points_mm)
        if np.any(pc[:, 2] <= 1.0):
            return False
        px = self.project(points_mm)
        return bool(
            np.all(px[:, 0] >= margin_px)
            and np.all(px[:, 0] <= self.width - 1 - margin_px)
            and np.all(px[:, 1] >= margin_px)
            and np.all(px[:, 1] <= self.height - 1 - margin_px)
        )


def look_at(target_mm: tuple[float, float], *, distance_mm: float, tilt_deg: float,
            azimuth_deg: float, roll_deg: float = 0.0) -> tuple[Array, Array]:
    """Rotation and translation of a camera `distance_mm` from a table point, tilted from vertical.

    `azimuth_deg` 0 puts the camera over the bottom edge of the play area (towards +y), looking
    up the table, so the table's top appears at the top of the image; positive azimuth swings
    it clockwise around the table (seen from above).
    """
    tilt = math.radians(tilt_deg)
    az = math.radians(azimuth_deg)
    target = np.array([target_mm[0], target_mm[1], 0.0])
    horiz = np.array([math.sin(az), math.cos(az), 0.0])
    centre = target + distance_mm * (math.sin(tilt) * horiz + math.cos(tilt) * np.array([0, 0, -1.0]))
    z = target - centre
    z /= np.linalg.norm(z)
    hint = np.array([math.cos(az), -math.sin(az), 0.0])
    x = hint - np.dot(hint, z) * z
    x /= np.linalg.norm(x)
    y = np.cross(z, x)
    roll = math.radians(roll_deg)
    xr = math.cos(roll) * x + math.sin(roll) * y
    yr = -math.sin(roll) * x + math.cos(roll) * y
    rot = np.stack([xr, yr, z])
    return rot, -rot @ centre


@dataclass(frozen=True, slots=True, kw_only=True)
class CameraEnvelope:
    """The range of webcam setups `sample_camera` draws from."""

    tilt_deg: tuple[float, float] = (0.0, 45.0)
    distance_mm: tuple[float, float] = (500.0, 1200.0)
    hfov_deg: tuple[float, float] = (55.0, 80.0)
    azimuth_deg: tuple[float, float] = (-20.0, 20.0)
    roll_deg: tuple[float, float] = (-4.0, 4.0)
    k1: tuple[float, float] = (-0.30, 0.06)
    k2: tuple[float, float] = (-0.04, 0.12)
    distortion_probability: float = 0.8
    margin_px: float = 8.0


CAMERA_TRIES = 200
"""Setups `sample_camera` draws before it gives up. Most draws of a steep or narrow view cannot
see the largest tables (mk. I for 5 or 6, 1200×800 mm): 60 draws all failed for about one
camera in a thousand, which stopped a run of game stills (`game_stills`, seed 7 of mk. I). A
camera found within fewer draws is the same as before (the draws are taken in the same order)."""


def sample_camera(
    rng: np.random.Generator,
    extent_mm: tuple[float, float, float, float],
    size: tuple[int, int] = (1280, 720),
    envelope: CameraEnvelope | None = None,
) -> Camera:
    """A random camera that sees the whole rectangle `extent_mm` = (x0, y0, x1, y1) of the table.

    Tilt, azimuth, field of view and lens are drawn first; the distance is then drawn from the
    closest one that keeps the extent in view up to half as far again (within the envelope). Raises
    `SynthError` when the extent cannot be seen from anywhere in the envelope.
    """
    env = envelope or CameraEnvelope()
    w, h = size
    x0, y0, x1, y1 = extent_mm
    corners = np.array([[x0, y0], [x1, y0], [x1, y1], [x0, y1]], np.float64)
    edges = np.concatenate(
        [corners, (corners + np.roll(corners, -1, axis=0)) / 2.0], axis=0
    )
    centre = ((x0 + x1) / 2.0, (y0 + y1) / 2.0)
    for _ in range(CAMERA_TRIES):
        hfov = math.radians(rng.uniform(*env.hfov_deg))
        f = (w / 2.0) / math.tan(hfov / 2.0)
        lens = Lens(fx=f, fy=f * rng.uniform(0.995, 1.005),
                    cx=w / 2.0 + rng.uniform(-0.02, 0.02) * w,
                    cy=h / 2.0 + rng.uniform(-0.02, 0.02) * h)
        if rng.random() < env.distortion_probability:
            r_img = math.hypot(w, h) / 2.0 / f * 1.05
            for _ in range(10):
                cand = Lens(fx=lens.fx, fy=lens.fy, cx=lens.cx, cy=lens.cy,
                            k1=rng.uniform(*env.k1), k2=rng.uniform(*env.k2))
                if cand.covers(r_img):
                    lens = cand
                    break
        tilt = rng.uniform(*env.tilt_deg)
        az = rng.uniform(*env.azimuth_deg)
        roll = rng.uniform(*env.roll_deg)
        jitter = 0.08 * np.array([x1 - x0, y1 - y0]) * rng.uniform(-1, 1, 2)
        target = (centre[0] + jitter[0], centre[1] + jitter[1])

        def cam_at(d: float, lens: Lens = lens, target: tuple[float, float] = target,
                   tilt: float = tilt, az: float = az, roll: float = roll) -> Camera:
            rot, t = look_at(target, distance_mm=d, tilt_deg=tilt, azimuth_deg=az, roll_deg=roll)
            return Camera(width=w, height=h, lens=lens, rotation=rot, translation=t)

        dmax = env.distance_mm[1]
        if not cam_at(dmax).in_view(edges, env.margin_px):
            continue
        lo, hi = env.distance_mm[0], dmax
        if not cam_at(lo).in_view(edges, env.margin_px):
            for _ in range(20):  # bisect the closest distance that still sees the extent
                mid = (lo + hi) / 2.0
                if cam_at(mid).in_view(edges, env.margin_px):
                    hi = mid
                else:
                    lo = mid
            lo = hi
        # Webcams are set up to frame the play area: mostly close to the nearest distance.
        d = min(dmax, lo * rng.uniform(1.0, 1.5))
        return cam_at(d)
    raise SynthError(
        f"a play area of {x1 - x0:.0f}×{y1 - y0:.0f} mm does not fit the camera envelope "
        f"(farthest {env.distance_mm[1]:.0f} mm, widest {env.hfov_deg[1]:.0f}°); "
        "use a smaller area or a wider envelope"
    )


def overhead_camera(
    extent_mm: tuple[float, float, float, float], size: tuple[int, int], *,
    fill: float = 0.9, k1: float = 0.0, k2: float = 0.0,
) -> Camera:
    """A camera straight above the centre of `extent_mm`, the extent filling `fill` of the frame."""
    w, h = size
    x0, y0, x1, y1 = extent_mm
    f = min(w * fill / (x1 - x0), h * fill / (y1 - y0))  # px per mm at the table
    focal = w * 0.8
    d = focal / f
    lens = Lens(fx=focal, fy=focal, cx=(w - 1) / 2.0, cy=(h - 1) / 2.0, k1=k1, k2=k2)
    rot, t = look_at(((x0 + x1) / 2.0, (y0 + y1) / 2.0), distance_mm=d, tilt_deg=0.0,
                     azimuth_deg=0.0)
    return Camera(width=w, height=h, lens=lens, rotation=rot, translation=t)


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class CanvasGeometry:
    """Where the renderer draws: an undistorted canvas offset from the base camera's pixels.

    Canvas pixel = undistorted pixel of the base camera + `offset`. `size` is the canvas
    (width, height). `maps` (h, w, 2) float32 gives, for each output pixel, the canvas point
    to sample, or None when output and canvas coincide (no distortion and no drift).
    """

    size: tuple[int, int]
    offset: tuple[int, int]
    maps: Array | None


def _coarse_sources(base: Camera, drift: Array | None, step: int) -> Array:
    """Base-camera undistorted pixels seen by a coarse grid of output pixels, `(ny, nx, 2)`.

    Node k sits at output pixel `(k - 0.5) * step - 0.5`, one node beyond each border, which is
    exactly the sampling `cv2.resize` assumes when it enlarges the grid by `step`.
    """
    w, h = base.width, base.height
    nx = -(-w // step) + 2
    ny = -(-h // step) + 2
    xs = (np.arange(nx) - 0.5) * step - 0.5
    ys = (np.arange(ny) - 0.5) * step - 0.5
    gx, gy = np.meshgrid(xs, ys)
    und = base.lens.undistort(np.stack([gx.ravel(), gy.ravel()], axis=1))
    if drift is not None:
        hom = np.column_stack([und, np.ones(len(und))]) @ np.linalg.inv(drift).T
        und = hom[:, :2] / hom[:, 2:3]
    return und.reshape(ny, nx, 2)


def canvas_geometry(base: Camera, *, margin: float = 0.0, step: int = 8) -> CanvasGeometry:
    """The canvas a camera's frame needs, and the remap from the output frame into it.

    `margin` (a fraction of the frame) enlarges the canvas so that a slightly drifted camera
    (`Camera.rotated`) still finds everything it sees on the same cached canvas.
    """
    w, h = base.width, base.height
    if not base.lens.distorted and margin == 0.0:
        return CanvasGeometry(size=(w, h), offset=(0, 0), maps=None)
    und = _coarse_sources(base, None, step).reshape(-1, 2)
    mx, my = margin * w, margin * h
    lo = np.floor(np.minimum(und.min(axis=0), np.zeros(2)) - np.array([mx, my])) - 2
    hi = np.ceil(np.maximum(und.max(axis=0), np.array([w - 1.0, h - 1.0])) + np.array([mx, my])) + 2
    # A lens with strong barrel distortion sees far beyond the frame; cap the canvas.
    lo = np.maximum(lo, [-0.6 * w, -0.6 * h])
    hi = np.minimum(hi, [1.6 * w, 1.6 * h])
    off = (int(-lo[0]), int(-lo[1]))
    size = (int(hi[0] - lo[0]) + 1, int(hi[1] - lo[1]) + 1)
    geom = CanvasGeometry(size=size, offset=off, maps=None)
    return CanvasGeometry(size=size, offset=off, maps=output_maps(base, geom, None, step=step))


def output_maps(base: Camera, geom: CanvasGeometry, drift: Array | None, *,
                step: int = 8) -> Array:
    """Per output pixel, the canvas point to sample, for the base camera turned by `drift`.

    `drift` is `Camera.drift` of the turned camera (undistorted base pixels → undistorted
    turned pixels). The map is exact on a coarse grid and interpolated (cubic) between its
    nodes; the field is smooth, so the error stays around a hundredth of a pixel.
    """
    w, h = base.width, base.height
    coarse = _coarse_sources(base, drift, step) + np.array(geom.offset, np.float64)
    ny, nx = coarse.shape[:2]
    big = cv2.resize(coarse.astype(np.float32), (nx * step, ny * step),
                     interpolation=cv2.INTER_LINEAR)
    return np.ascontiguousarray(big[step : step + h, step : step + w])
