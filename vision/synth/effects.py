"""How a webcam spoils the picture: light, glare, blur, noise, white balance and JPEG.

A `RenderStyle` is the appearance of one clip or still, drawn from a seed by `sample_style`:
where the light comes from (it sets shadow directions), how strong shadows are, uneven light
(a gradient across the table and lens vignetting), warm or cool white balance, exposure,
glare spots, defocus and motion blur, sensor noise and a JPEG re-encoding. `RenderStyle.clean()`
switches every effect off (for tests that need exact pixels). The effects that act on the
finished frame live here; they run on the output image, the light field at low resolution
enlarged once per style and size, the noise from a pre-drawn bank cropped at random offsets
(drawing millions of normal numbers per frame would cost more than the rest of the frame).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import cv2
import numpy as np

from vision.synth.noise import Array


@dataclass(frozen=True, slots=True, kw_only=True)
class Glare:
    """A specular spot: centre and radius as fractions of the frame, strength in grey levels."""

    center: tuple[float, float]
    radius: float
    strength: float
    aspect: float = 1.0
    angle_deg: float = 0.0


@dataclass(frozen=True, slots=True, kw_only=True)
class RenderStyle:
    """The look of a clip or still. Every field has a neutral default (no effect)."""

    light_azimuth_deg: float = 135.0
    light_elevation_deg: float = 60.0
    shadow_strength: float = 0.0
    card_lift_mm: float = 0.8
    exposure: float = 1.0
    white_balance: tuple[float, float, float] = (1.0, 1.0, 1.0)  # B, G, R gains
    gradient: float = 0.0
    gradient_angle_deg: float = 0.0
    vignette: float = 0.0
    glare: tuple[Glare, ...] = ()
    sleeve_glare: float = 0.0
    defocus_sigma: float = 0.0
    motion_blur_px: float = 0.0
    motion_angle_deg: float = 0.0
    noise_sigma: float = 0.0
    jpeg_quality: int | None = None

    @classmethod
    def clean(cls) -> RenderStyle:
        """No shadows, no light falloff, no blur, no noise: exact pixels for tests."""
        return cls()

    def light_dir(self) -> Array:
        """Unit vector towards the light in table axes (x, y, up)."""
        az = math.radians(self.light_azimuth_deg)
        el = math.radians(self.light_elevation_deg)
        return np.array([math.cos(el) * math.cos(az), math.cos(el) * math.sin(az), math.sin(el)])

    def shadow_shift(self) -> Array:
        """Table-plane displacement of a shadow per millimetre of height."""
        ld = self.light_dir()
        return -ld[:2] / max(ld[2], 0.2)


def sample_style(rng: np.random.Generator, *, strength: float = 1.0) -> RenderStyle:
    """A random webcam look; `strength` (0..1) scales how far it strays from clean."""
    s = float(np.clip(strength, 0.0, 1.0))
    temp = rng.uniform(-1.0, 1.0) * s
    tint = rng.uniform(-1.0, 1.0) * s
    wb = (1.0 - 0.12 * temp, 1.0 + 0.04 * tint, 1.0 + 0.12 * temp)
    glare = []
    for _ in range(int(rng.choice([0, 0, 1, 1, 2]) if s > 0 else 0)):
        glare.append(Glare(
            center=(float(rng.uniform(0.05, 0.95)), float(rng.uniform(0.05, 0.95))),
            radius=float(rng.uniform(0.03, 0.16)),
            strength=float(rng.uniform(25.0, 140.0) * s),
            aspect=float(rng.uniform(0.4, 1.0)),
            angle_deg=float(rng.uniform(0, 180)),
        ))
    motion = rng.uniform(2.0, 9.0) * s if rng.random() < 0.2 else 0.0
    return RenderStyle(
        light_azimuth_deg=float(rng.uniform(0, 360)),
        light_elevation_deg=float(rng.uniform(35, 85)),
        shadow_strength=float(rng.uniform(0.15, 0.55) * s),
        card_lift_mm=float(rng.uniform(0.3, 1.8)),
        exposure=float(1.0 + rng.uniform(-0.3, 0.25) * s),
        white_balance=wb,
        gradient=float(rng.uniform(0.0, 0.35) * s),
        gradient_angle_deg=float(rng.uniform(0, 360)),
        vignette=float(rng.uniform(0.0, 0.45) * s),
        glare=tuple(glare),
        sleeve_glare=float(rng.uniform(30.0, 110.0) * s),
        defocus_sigma=float(rng.choice([0.0, 0.0, rng.uniform(0.4, 1.8)]) * s),
        motion_blur_px=float(motion),
        motion_angle_deg=float(rng.uniform(0, 180)),
        noise_sigma=float(rng.uniform(0.8, 6.0) * s),
        jpeg_quality=int(rng.integers(55, 96)) if s > 0 else None,
    )


@lru_cache(maxsize=8)
def light_fields(style: RenderStyle, width: int, height: int) -> tuple[Array | None, Array | None]:
    """(gain, glare) for a frame: multiplicative BGR gain and additive glare, float32 (h, w, 3).

    None stands for "no effect". Built at 1/8 resolution and enlarged (light is smooth).
    """
    lw, lh = max(2, width // 8), max(2, height // 8)
    ys, xs = np.mgrid[0:lh, 0:lw].astype(np.float32)
    u = (xs + 0.5) / lw - 0.5
    v = (ys + 0.5) / lh - 0.5
    gain = np.full((lh, lw), style.exposure, np.float32)
    if style.gradient:
        a = math.radians(style.gradient_angle_deg)
        gain *= 1.0 + style.gradient * (u * math.cos(a) + v * math.sin(a)) * 1.4
    if style.vignette:
        r2 = (u * u + v * v * (height / width) ** 2) / (0.25 + 0.25 * (height / width) ** 2)
        gain *= 1.0 - style.vignette * r2**1.5
    wb = np.asarray(style.white_balance, np.float32)
    neutral = bool(np.allclose(gain, 1.0) and np.allclose(wb, 1.0))
    gain3 = None
    if not neutral:
        g = cv2.resize(gain, (width, height), interpolation=cv2.INTER_LINEAR)
        gain3 = g[..., None] * wb[None, None, :]
        gain3 = np.ascontiguousarray(gain3, dtype=np.float32)
        gain3.setflags(write=False)
    glare3 = None
    if style.glare:
        add = np.zeros((lh, lw), np.float32)
        for gl in style.glare:
            a = math.radians(gl.angle_deg)
            du = u - (gl.center[0] - 0.5)
            dv = (v - (gl.center[1] - 0.5)) * (height / width)
            p = du * math.cos(a) + dv * math.sin(a)
            q = (-du * math.sin(a) + dv * math.cos(a)) / max(gl.aspect, 0.1)
            add += gl.strength * np.exp(-(p * p + q * q) / (2 * gl.radius**2))
        g = cv2.resize(add, (width, height), interpolation=cv2.INTER_LINEAR)
        glare3 = np.ascontiguousarray(np.repeat(g[..., None], 3, axis=2))
        glare3.setflags(write=False)
    return gain3, glare3


class NoiseBank:
    """Pre-drawn unit Gaussian noise tiles (int8, scaled ×32), cropped at random offsets."""

    SCALE = 32.0

    def __init__(self, width: int, height: int, *, seed: int = 0, tiles: int = 2,
                 pad: int = 64) -> None:
        rng = np.random.default_rng([seed, 0x401CE])
        self.width, self.height, self.pad = width, height, pad
        self._tiles = [
            np.clip(rng.standard_normal((height + pad, width + pad, 3), np.float32) * self.SCALE,
                    -127, 127).astype(np.int8)
            for _ in range(tiles)
        ]

    def sample(self, rng: np.random.Generator) -> Array:
        """A (h, w, 3) int8 view of unit noise ×32."""
        t = self._tiles[int(rng.integers(len(self._tiles)))]
        oy, ox = (int(v) for v in rng.integers(0, self.pad, 2))
        return t[oy : oy + self.height, ox : ox + self.width]


def _motion_kernel(length: float, angle_deg: float) -> Array:
    n = max(3, math.ceil(length) | 1)
    k = np.zeros((n, n), np.float32)
    c = n // 2
    a = math.radians(angle_deg)
    dx, dy = math.cos(a) * length / 2, math.sin(a) * length / 2
    cv2.line(k, (round(c - dx), round(c - dy)), (round(c + dx), round(c + dy)),
             1.0, 1, cv2.LINE_AA)
    return k / max(float(k.sum()), 1e-6)


def apply_camera_effects(img: Array, style: RenderStyle, rng: np.random.Generator,
                         noise: NoiseBank | None) -> Array:
    """Blur, light, glare, white balance, noise and JPEG on a finished BGR uint8 frame."""
    h, w = img.shape[:2]
    out = img
    if style.defocus_sigma > 0.05:
        out = cv2.GaussianBlur(out, (0, 0), style.defocus_sigma)
    if style.motion_blur_px >= 1.5:
        out = cv2.filter2D(out, -1, _motion_kernel(style.motion_blur_px, style.motion_angle_deg))
    gain, glare = light_fields(style, w, h)
    has_noise = style.noise_sigma > 0.05 and noise is not None
    if gain is not None or glare is not None or has_noise:
        f = out.astype(np.float32)
        if gain is not None:
            cv2.multiply(f, gain, dst=f)
        if glare is not None:
            cv2.add(f, glare, dst=f)
        if has_noise:
            assert noise is not None
            n = noise.sample(rng).astype(np.float32)
            cv2.scaleAdd(n, style.noise_sigma / NoiseBank.SCALE, f, dst=f)
        np.clip(f, 0.0, 255.0, out=f)
        out = f.astype(np.uint8)
    elif out is img:
        out = img.copy()
    if style.jpeg_quality is not None:
        ok, buf = cv2.imencode(".jpg", out, [cv2.IMWRITE_JPEG_QUALITY, int(style.jpeg_quality)])
        decoded = cv2.imdecode(buf, cv2.IMREAD_COLOR) if ok else None
        if decoded is not None:
            out = decoded
    return out
