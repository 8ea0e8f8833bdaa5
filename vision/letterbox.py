"""The card finder's letterbox: a frame scaled to fit 640×384 without distortion, centred, the
rest filled with grey, and the exact mapping of points between frame and letterbox pixels.

Written once in numpy/OpenCV and shared by inference (`vision.finder`) and training
(`vision.train.finder`), so the two can never disagree about where a pixel lands. The frame is
resized with area averaging (no aliasing when shrinking 1280×720 to 640×360) and pasted at a
whole-pixel offset. Points use OpenCV's convention (integer coordinates at pixel centres), so a
frame point `p` lands at `p * scale + offset` per axis, where the offset includes the half-pixel
shift of a resize: what the mapping says is where the image content really is.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

INPUT_WIDTH = 640
INPUT_HEIGHT = 384
STRIDE = 8
PAD_VALUE = 114


class LetterboxError(ValueError):
    """A frame that cannot be letterboxed (wrong shape or type); the message says why."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Letterbox:
    """Where a `frame_size` frame sits in a `size` input: resized to `resized`, pasted at
    `paste` (whole pixels); points map by `scale` and `offset` per axis."""

    frame_size: tuple[int, int]  # (width, height) of the original frame
    resized: tuple[int, int]  # (width, height) of the frame inside the letterbox
    paste: tuple[int, int]  # top-left pixel of the resized frame in the letterbox
    size: tuple[int, int] = (INPUT_WIDTH, INPUT_HEIGHT)

    @property
    def scale(self) -> tuple[float, float]:
        return (self.resized[0] / self.frame_size[0], self.resized[1] / self.frame_size[1])

    @property
    def offset(self) -> tuple[float, float]:
        sx, sy = self.scale
        return (self.paste[0] + 0.5 * sx - 0.5, self.paste[1] + 0.5 * sy - 0.5)


def letterbox_params(frame_size: tuple[int, int],
                     size: tuple[int, int] = (INPUT_WIDTH, INPUT_HEIGHT), *, most: float | None = None) -> Letterbox:
    """The letterbox of a `(width, height)` frame in a `size` input (centred, aspect kept),
    scaled to fit, or by `most` when that is smaller (a part of a frame read at a chosen scale)."""
    w, h = int(frame_size[0]), int(frame_size[1])
    if w <= 0 or h <= 0:
        raise LetterboxError(f"frame size must be positive, got {w}×{h}")
    if most is not None and not most > 0:
        raise LetterboxError(f"the most scale must be more than 0, got {most}")
    s = min(size[0] / w, size[1] / h, most if most is not None else np.inf)
    rw, rh = min(size[0], max(1, round(w * s))), min(size[1], max(1, round(h * s)))
    return Letterbox(frame_size=(w, h), resized=(rw, rh),
                     paste=((size[0] - rw) // 2, (size[1] - rh) // 2), size=(int(size[0]), int(size[1])))


def letterbox_image(frame: np.ndarray, box: Letterbox | None = None) -> tuple[np.ndarray, Letterbox]:
    """A BGR uint8 frame (H, W, 3) drawn into its letterbox; returns the image and the box."""
    if not isinstance(frame, np.ndarray) or frame.ndim != 3 or frame.shape[2] != 3:
        shape = getattr(frame, "shape", type(frame).__name__)
        raise LetterboxError(f"a frame must be a (height, width, 3) BGR array, got {shape}")
    if frame.dtype != np.uint8:
        raise LetterboxError(f"a frame must be uint8 BGR, got dtype {frame.dtype}")
    h, w = frame.shape[:2]
    box = box or letterbox_params((w, h))
    if box.frame_size != (w, h):
        raise LetterboxError(f"letterbox made for a {box.frame_size} frame, got {(w, h)}")
    shrink = box.resized[0] < w
    small = frame if box.resized == (w, h) else cv2.resize(
        frame, box.resized, interpolation=cv2.INTER_AREA if shrink else cv2.INTER_LINEAR)
    out = np.full((box.size[1], box.size[0], 3), PAD_VALUE, np.uint8)
    x0, y0 = box.paste
    out[y0:y0 + box.resized[1], x0:x0 + box.resized[0]] = small
    return out, box


def to_letterbox(points: np.ndarray, box: Letterbox) -> np.ndarray:
    """Frame pixels → letterbox pixels, any shape ending in 2."""
    pts = np.asarray(points, np.float64)
    out: np.ndarray = pts * np.array(box.scale) + np.array(box.offset)
    return out


def from_letterbox(points: np.ndarray, box: Letterbox) -> np.ndarray:
    """Letterbox pixels → frame pixels, any shape ending in 2 (the inverse of `to_letterbox`)."""
    pts = np.asarray(points, np.float64)
    out: np.ndarray = (pts - np.array(box.offset)) / np.array(box.scale)
    return out


def to_input(images: np.ndarray) -> np.ndarray:
    """Letterboxed BGR uint8 images (N, H, W, 3) → the network input (N, 3, H, W) float32 RGB in
    [0, 1]."""
    return np.ascontiguousarray(images[..., ::-1].transpose(0, 3, 1, 2), dtype=np.float32) / np.float32(255.0)
