"""The corner refiner: the finder's second stage, which puts each card's corners on the pixel.

The finder sees a frame at half resolution or less, where a card on a webcam table is some 25
pixels wide, so its corners are off by several full-resolution pixels — too far for a clean
crop of the face. The refiner looks again at each card in the full-resolution frame: the coarse
quad is warped onto a fixed canvas (`CANVAS_WIDTH` × `CANVAS_HEIGHT`, the card upright in the
`INNER` rectangle with a margin all round for where the true card may lie), a small network
(`models/corners.onnx`, trained by `cardtrack train corners`) predicts one heatmap per corner and
returns its expected position (a soft arg-max, so sub-pixel), and the points are mapped back
through the inverse warp. Two passes bring a coarse quad in from about a fifth of the card's
width to a few percent. The canvas warp (`canvas_transform`, `warp_to_canvas`) is written once
here and used by training as well. The corner order in and out is the finder's canonical order
(clockwise, first edge a short edge), so a landscape card lies on the canvas as a portrait one.
A `CornerRefiner` keeps nothing per call; no cards in, no cards out.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

import cv2
import numpy as np

from vision.onnx import open_model

DEFAULT_MODEL = Path(__file__).resolve().parents[1] / "models" / "corners.onnx"
TRAIN_COMMAND = "cardtrack train corners"

CANVAS_WIDTH = 96
CANVAS_HEIGHT = 120
# The card's place on the canvas: 56 × 80 pixels (a 0.7 card aspect) in the middle, leaving a
# margin of 20 pixels (over a third of the card's width) for corners the finder put off.
INNER = np.array([[20.0, 20.0], [76.0, 20.0], [76.0, 100.0], [20.0, 100.0]], np.float32)


class CornerModelError(ValueError):
    """The corner model file is missing or is not a corner refiner; the message names the path."""


def canvas_transform(quad: np.ndarray) -> np.ndarray:
    """The 3×3 homography taking frame pixels to canvas pixels for one coarse quad (4, 2)."""
    return cv2.getPerspectiveTransform(np.asarray(quad, np.float32).reshape(4, 2), INNER)


def warp_to_canvas(image: np.ndarray, transform: np.ndarray) -> np.ndarray:
    """The canvas crop (CANVAS_HEIGHT, CANVAS_WIDTH, 3) of a BGR image under `transform`."""
    return cv2.warpPerspective(image, transform, (CANVAS_WIDTH, CANVAS_HEIGHT),
                               flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)


def to_input(crops: np.ndarray) -> np.ndarray:
    """BGR uint8 canvases (n, H, W, 3) → the model's input (n, 3, H, W) RGB in [0, 1]."""
    x = np.ascontiguousarray(np.asarray(crops)[..., ::-1].transpose(0, 3, 1, 2), dtype=np.float32)
    return x * np.float32(1.0 / 255.0)


def map_points(points: np.ndarray, transform: np.ndarray) -> np.ndarray:
    """Points (n, 2) through a homography."""
    p = np.asarray(points, np.float64).reshape(-1, 1, 2)
    return cv2.perspectiveTransform(p, np.asarray(transform, np.float64)).reshape(-1, 2)


def _degenerate(quad: np.ndarray) -> bool:
    edges = np.linalg.norm(quad - np.roll(quad, -1, axis=0), axis=1)
    x, y = quad[:, 0], quad[:, 1]
    area = 0.5 * abs(float(np.sum(x * np.roll(y, -1) - np.roll(x, -1) * y)))
    return bool(edges.min() < 2.0 or area < 16.0 or not np.isfinite(quad).all())


class CornerRefiner:
    """Refines card corners in BGR frames with the ONNX corner model (stateless per call)."""

    def __init__(self, model_path: str | Path = DEFAULT_MODEL, *,
                 providers: Sequence[str] = ("CPUExecutionProvider",), threads: int = 1) -> None:
        self.model_path = Path(model_path)
        self.session, _ = open_model(
            model_path, kind="corners", label="corner", input_shape=(3, CANVAS_HEIGHT, CANVAS_WIDTH),
            error=CornerModelError, train_command=TRAIN_COMMAND, providers=providers, threads=threads)
        self.input_name = self.session.get_inputs()[0].name

    def predict(self, canvases: np.ndarray) -> np.ndarray:
        """Corner positions (n, 4, 2) in canvas pixels for BGR canvases (n, H, W, 3)."""
        if not len(canvases):
            return np.zeros((0, 4, 2), np.float32)
        (corners,) = self.session.run(None, {self.input_name: to_input(canvases)})
        return np.asarray(corners, np.float32).reshape(-1, 4, 2)

    def refine(self, image: np.ndarray, quads: np.ndarray, *, passes: int = 2) -> np.ndarray:
        """`quads` (n, 4, 2) in frame pixels, canonical order → refined quads, same order.

        A quad too small or too thin to warp is returned as it came."""
        out = np.asarray(quads, np.float64).reshape(-1, 4, 2).copy()
        if not len(out) or passes < 1:
            return out
        ok = np.array([not _degenerate(q) for q in out])
        for _ in range(passes):
            idx = np.nonzero(ok)[0]
            if not len(idx):
                break
            transforms = [canvas_transform(out[i]) for i in idx]
            canvases = np.stack([warp_to_canvas(image, t) for t in transforms])
            pred = self.predict(canvases)
            for i, t, p in zip(idx, transforms, pred, strict=True):
                new = map_points(p, np.linalg.inv(t))
                if np.isfinite(new).all() and not _degenerate(new):
                    out[i] = new
                else:
                    ok[i] = False
        return out


class QuadRefiner(Protocol):
    """Anything that refines quads as `CornerRefiner.refine` does."""

    def refine(self, image: np.ndarray, quads: np.ndarray) -> np.ndarray: ...


class KeptRefinements:
    """A corner refiner that remembers its answers: a quad within `tolerance_px` (every
    corner, in the order given) of one it refined in the last `keep_calls` calls gets that
    answer again instead of another run of the model.

    The live pipeline refines each card it crops for the identifier, and it crops a card that
    did not move again and again: every card of a zone when the zone settles, a card it could
    not name every half second. The finder's coarse corners of a still card stay within a pixel
    or so; the refined ones would come out the same. Wraps any `QuadRefiner`; keeps at most
    what it saw in `keep_calls` calls."""

    def __init__(self, refiner: QuadRefiner, *, tolerance_px: float = 1.0, keep_calls: int = 30) -> None:
        if not tolerance_px >= 0 or keep_calls < 1:
            raise ValueError("KeptRefinements: tolerance_px must be 0 or more and keep_calls at least 1")
        self.refiner = refiner
        self.tolerance_px = float(tolerance_px)
        self.keep_calls = int(keep_calls)
        self._coarse = np.zeros((0, 4, 2), np.float64)
        self._refined = np.zeros((0, 4, 2), np.float64)
        self._used = np.zeros(0, np.int64)
        self._calls = 0

    def refine(self, image: np.ndarray, quads: np.ndarray) -> np.ndarray:
        """`quads` (n, 4, 2) → refined quads, same order (see the class notes)."""
        q = np.asarray(quads, np.float64).reshape(-1, 4, 2)
        self._calls += 1
        out = q.copy()
        todo = np.ones(len(q), bool)
        if len(q) and len(self._coarse):
            gap = np.abs(q[:, None] - self._coarse[None]).max(axis=(2, 3))  # (n, kept)
            best = gap.argmin(axis=1)
            hit = gap[np.arange(len(q)), best] <= self.tolerance_px
            out[hit] = self._refined[best[hit]]
            self._used[best[hit]] = self._calls
            todo = ~hit
        if todo.any():
            fresh = np.asarray(self.refiner.refine(image, q[todo]), np.float64).reshape(-1, 4, 2)
            out[todo] = fresh
            self._coarse = np.concatenate([self._coarse, q[todo]])
            self._refined = np.concatenate([self._refined, fresh])
            self._used = np.concatenate([self._used, np.full(int(todo.sum()), self._calls)])
        live = self._used > self._calls - self.keep_calls
        self._coarse, self._refined, self._used = self._coarse[live], self._refined[live], self._used[live]
        return out
