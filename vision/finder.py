"""The card finder: the four corners of every card in a frame, from an ONNX model, in numpy.

`Finder` letterboxes each frame to 640×384 (`vision.letterbox`), runs the model
(`models/finder.onnx`, a small CenterNet trained on synthetic scenes by `cardtrack train
finder`) and decodes its two outputs: a card-centre heatmap at stride 8 and, per cell, the
offsets of the card's four corners. `decode` takes the local maxima above `FinderConfig.threshold`
(with `FinderConfig.peaks`, also the cells beside them: the cards of tight fans), reads their
corners, suppresses duplicates by quadrilateral IoU and maps the corners back to
frame pixels; the result is one `Detections` batch per frame. The finder is class-agnostic and
cannot tell a face-down card's top from its bottom, so corners come in a canonical order: clockwise
in the image, the first edge a short edge of the card (as for an upright portrait card), starting
from whichever of the two candidate corners lies more to the top-left (smaller x + y). The
identifier decides the card's real orientation (it matches faces at 0° and 180°). The corners
are then refined on the full-resolution frame (`FinderConfig.refine`): by the corner refiner,
the second-stage model of `vision.corners` (`models/corners.onnx`, the default), or by fitting
the card's edges to the image gradients (`refine_corners`), or not at all. A `Finder` keeps
nothing per call.

`Finder.find_zoomed` reads chosen parts of the frame a second time, closer (`ZoomRegion`): the
players' fanned cards, 20 to 40 px wide in a 1280×720 frame, lie a cell or two apart in the
whole-frame letterbox, where neighbouring cards merge into one peak; read at 1.5 times the
scale they stand apart. Cards centred in a region are taken from its closer read, all others from
the whole frame. A model whose input size is free (exported with named height and width, as
`cardtrack train finder` exports) reads each region at its own size; a fixed-size model reads
each region letterboxed into its one input size.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

import cv2
import numpy as np

from vision.corners import DEFAULT_MODEL as DEFAULT_CORNER_MODEL
from vision.corners import CornerRefiner
from vision.detections import Detections, iou_matrix
from vision.letterbox import (
    INPUT_HEIGHT,
    INPUT_WIDTH,
    STRIDE,
    Letterbox,
    from_letterbox,
    letterbox_image,
    letterbox_params,
    to_input,
)
from vision.onnx import open_model

DEFAULT_MODEL = Path(__file__).resolve().parents[1] / "models" / "finder.onnx"
OFFSET_SCALE = 32.0
TRAIN_COMMAND = "cardtrack train finder"
SIZE_STEP = 32  # a free-size model takes heights and widths that are multiples of its coarsest stride
CUT_EDGE_PX = 2.0  # a card of a closer read this near a side of its crop that is no frame edge was cut


@dataclass(frozen=True, slots=True, kw_only=True)
class ZoomRegion:
    """A part of the frame the finder reads a second time, closer (`Finder.find_zoomed`).

    `inner`: (x0, y0, x1, y1) frame pixels; the cards centred there are taken from the closer
    read instead of the whole frame's. `margin`: pixels read around `inner` as well, at least
    half a card's diagonal, so that a card centred inside lies whole in the crop."""

    inner: tuple[float, float, float, float]
    margin: float

    def __post_init__(self) -> None:
        x0, y0, x1, y1 = self.inner
        if not all(np.isfinite(v) for v in (*self.inner, self.margin)):
            raise ValueError(f"ZoomRegion: inner {self.inner} and margin {self.margin} must be finite")
        if not (x1 > x0 and y1 > y0) or self.margin < 0:
            raise ValueError(f"ZoomRegion: inner {self.inner} must have x1 > x0 and y1 > y0, "
                             f"and margin {self.margin} must not be negative")

    def crop(self, width: int, height: int) -> tuple[int, int, int, int] | None:
        """The frame rectangle read (x0, y0, x1, y1, whole pixels, inside a `width`×`height`
        frame), or None when the region lies outside it."""
        x0, y0, x1, y1 = self.inner
        m = self.margin
        box = (max(0, int(np.floor(x0 - m))), max(0, int(np.floor(y0 - m))),
               min(width, int(np.ceil(x1 + m))), min(height, int(np.ceil(y1 + m))))
        return box if box[2] - box[0] >= 2 and box[3] - box[1] >= 2 else None


class FinderModelError(ValueError):
    """The finder model file is missing or is not a finder model; the message names the path."""


class Refine(StrEnum):
    """How the finder's corners are brought to full resolution."""

    MODEL = "model"  # the corner refiner (`vision.corners`)
    EDGES = "edges"  # line fits to the image gradients
    NONE = "none"  # the finder's own corners, read at a quarter of the resolution


class Peaks(StrEnum):
    """Which heatmap cells `decode` reads as cards."""

    LOCAL = "local"  # the 3×3 local maxima: two cards need centres at least two cells apart
    ADJACENT = "adjacent"  # also a cell beside a stronger one, as the cards of a tight fan


@dataclass(frozen=True, slots=True, kw_only=True)
class FinderConfig:
    """Decoding options.

    `threshold`: the least centre-heatmap score kept (lower finds more half-hidden cards and
    more false ones). `nms_iou`: two quads overlapping more than this are one card (a fan's
    cards overlap a lot: too low merges them). `max_cards`: per frame, best first.
    `refine`: `model` runs the corner refiner `refine_passes` times on each card; `edges` fits
    each card's edges on the full-resolution frame and moves the corners to their
    intersections, `refine_passes` times, searching a band of `refine_window` of the card's
    shorter side around each predicted edge (wider finds edges further off and picks up
    neighbouring cards' edges more often); `none` keeps the coarse corners.

    `peaks`: `local` reads only the heatmap's 3×3 local maxima, so two cards whose centres fall
    in neighbouring cells (8 letterbox pixels, 16 in a 1280×720 frame: a fan's cards) are read
    as one. `adjacent` also reads a cell beside a stronger one when it is no valley between two
    stronger cells in any direction (a valley is the gap between two cards of a row, where the
    model may see a third) and the card it reads is centred on it, within `own_radius` cells
    (a cell on the slope of a neighbour's peak reads the neighbour). It finds more of the cards
    in fans and rows, and more cards that are not there (`cardtrack train finder --eval-only`
    measures both)."""

    threshold: float = 0.3
    nms_iou: float = 0.6
    max_cards: int = 200
    refine: Refine = Refine.MODEL
    refine_window: float = 0.25
    refine_passes: int = 2
    peaks: Peaks = Peaks.LOCAL
    own_radius: float = 0.5


def canonical_order(quads: np.ndarray) -> np.ndarray:
    """Corners (n, 4, 2) reordered: clockwise in the image, first edge a short edge, starting at
    the more top-left of the two corners that allows."""
    q = np.asarray(quads, np.float64).reshape(-1, 4, 2)
    if not len(q):
        return q.reshape(0, 4, 2)
    x, y = q[..., 0], q[..., 1]
    area = 0.5 * np.sum(x * np.roll(y, -1, axis=1) - np.roll(x, -1, axis=1) * y, axis=1)
    q = np.where((area < 0)[:, None, None], q[:, ::-1], q)  # y down: positive = clockwise
    edges = np.linalg.norm(q - np.roll(q, -1, axis=1), axis=2)
    long_first = (edges[:, 0] + edges[:, 2]) > (edges[:, 1] + edges[:, 3])
    q = np.where(long_first[:, None, None], np.roll(q, -1, axis=1), q)
    first_tl = q[:, 0].sum(axis=1) <= q[:, 2].sum(axis=1)
    return np.where(first_tl[:, None, None], q, np.roll(q, -2, axis=1))


def decode(heat_logits: np.ndarray, offsets: np.ndarray, config: FinderConfig) -> tuple[np.ndarray, np.ndarray]:
    """One image's outputs ((1, H, W) logits, (8, H, W) offsets) → quads (n, 4, 2) in letterbox
    pixels and scores (n,), best first, after NMS."""
    heat = 1.0 / (1.0 + np.exp(-heat_logits[0].astype(np.float32)))
    local = heat == cv2.dilate(heat, np.ones((3, 3), np.uint8))
    if config.peaks is Peaks.ADJACENT:
        cells = (local | ~_valleys(heat)) & (heat >= config.threshold)
    else:
        cells = local & (heat >= config.threshold)
    ys, xs = np.nonzero(cells)
    centres = np.stack([(xs + 0.5) * STRIDE, (ys + 0.5) * STRIDE], axis=1).astype(np.float32)
    offs = offsets[:, ys, xs].T.reshape(-1, 4, 2) * OFFSET_SCALE
    if config.peaks is Peaks.ADJACENT:
        # A cell that is no local maximum counts only for a card centred on it.
        off_centre = np.linalg.norm(offs.mean(axis=1), axis=1) / STRIDE
        own = local[ys, xs] | (off_centre <= config.own_radius)
        ys, xs, centres, offs = ys[own], xs[own], centres[own], offs[own]
    scores = heat[ys, xs]
    order = np.argsort(-scores, kind="stable")[: config.max_cards * 2]
    scores = scores[order]
    quads = centres[order][:, None, :] + offs[order]
    keep = nms_quads(quads, scores, config.nms_iou)[: config.max_cards]
    return quads[keep], scores[keep]


def _valleys(heat: np.ndarray) -> np.ndarray:
    """Cells lower than both their neighbours along some direction (across, down or a diagonal)."""
    p = np.pad(heat, 1)
    h, w = heat.shape
    out = np.zeros(heat.shape, bool)
    for dy, dx in ((0, 1), (1, 0), (1, 1), (1, -1)):
        ahead = p[1 + dy:1 + dy + h, 1 + dx:1 + dx + w]
        behind = p[1 - dy:1 - dy + h, 1 - dx:1 - dx + w]
        out |= (heat < ahead) & (heat < behind)
    return out


def nms_quads(quads: np.ndarray, scores: np.ndarray, iou_threshold: float) -> np.ndarray:
    """Indices kept by greedy non-maximum suppression on quad IoU (input sorted best first)."""
    n = len(quads)
    if n == 0:
        return np.zeros(0, np.int64)
    order = np.argsort(-np.asarray(scores), kind="stable")
    iou = iou_matrix(quads[order], quads[order])
    removed = np.zeros(n, bool)
    keep = []
    for i in range(n):
        if removed[i]:
            continue
        keep.append(order[i])
        removed |= iou[i] > iou_threshold
    return np.asarray(keep, np.int64)


def refine_corners(gray: np.ndarray, quads: np.ndarray, *, window: float = 0.12) -> np.ndarray:
    """Move each corner to the intersection of the two card edges fitted near it.

    For each edge of each quad, strong gradients within a band around the predicted edge (a
    `window` fraction of the card's shorter side) are gathered along the edge's middle
    part and a line is fitted through them (weighted by gradient magnitude along the edge's
    normal); the corners are the intersections of neighbouring lines. An edge without enough
    support keeps its predicted line."""
    g = gray.astype(np.float32)
    gx = cv2.Sobel(g, cv2.CV_32F, 1, 0, ksize=3)
    gy = cv2.Sobel(g, cv2.CV_32F, 0, 1, ksize=3)
    h, w = g.shape
    out = np.array(quads, np.float64, copy=True)
    for qi, q in enumerate(np.asarray(quads, np.float64)):
        sides = np.linalg.norm(q - np.roll(q, -1, axis=0), axis=1)
        band = max(2.0, window * float(sides.min()))
        lines: list[tuple[np.ndarray, np.ndarray] | None] = []
        for k in range(4):
            a, b = q[k], q[(k + 1) % 4]
            d = b - a
            length = float(np.hypot(*d))
            if length < 4:
                lines.append(None)
                continue
            t = d / length
            nrm = np.array([-t[1], t[0]])
            ss = np.linspace(0.2, 0.8, max(8, int(length * 0.6)))
            offs = np.arange(-band, band + 0.5, 1.0)
            pts = a[None, None, :] + ss[:, None, None] * d[None, None, :] + offs[None, :, None] * nrm
            px = np.clip(np.round(pts[..., 0]).astype(int), 0, w - 1)
            py = np.clip(np.round(pts[..., 1]).astype(int), 0, h - 1)
            mag = np.abs(gx[py, px] * nrm[0] + gy[py, px] * nrm[1])
            # Prefer edges near the prediction: a card's own frame lines lie just inside it.
            prior = np.exp(-0.5 * (offs / (0.5 * band)) ** 2)
            best = np.argmax(mag * prior[None, :], axis=1)
            strength = mag[np.arange(len(ss)), best]
            good = strength > max(20.0, 0.5 * float(np.median(strength)))
            if good.sum() < 6:
                lines.append(None)
                continue
            p = pts[np.arange(len(ss)), best][good]
            line: tuple[np.ndarray, np.ndarray] | None = None
            for _ in range(3):  # refit without the points far from the line
                if len(p) < 6:
                    break
                centre = p.mean(axis=0)
                _, _, vt = np.linalg.svd(p - centre)
                line = (centre, vt[0])
                resid = np.abs((p - centre) @ np.array([-vt[0][1], vt[0][0]]))
                p = p[resid <= max(1.0, 2.0 * float(np.median(resid)))]
            lines.append(line)
        for k in range(4):
            la, lb = lines[(k - 1) % 4], lines[k]
            if la is None or lb is None:
                continue
            (pa, da), (pb, db) = la, lb
            m = np.array([da, -db]).T
            if abs(np.linalg.det(m)) < 1e-3:
                continue
            s = np.linalg.solve(m, pb - pa)
            c = pa + s[0] * da
            if np.hypot(*(c - q[k])) <= 2.0 * band:
                out[qi, k] = c
    return out


class Finder:
    """Finds cards in BGR frames with the ONNX finder model (stateless per call)."""

    def __init__(self, model_path: str | Path = DEFAULT_MODEL, *,
                 providers: Sequence[str] = ("CPUExecutionProvider",), threads: int = 1,
                 config: FinderConfig | None = None,
                 corner_model: str | Path | None = DEFAULT_CORNER_MODEL) -> None:
        self.model_path = Path(model_path)
        self.config = config or FinderConfig()
        self.session, _ = open_model(
            model_path, kind="finder", label="finder", input_shape=(3, INPUT_HEIGHT, INPUT_WIDTH),
            error=FinderModelError, train_command=TRAIN_COMMAND, providers=providers, threads=threads,
            free_size=True)
        image = self.session.get_inputs()[0]
        self.input_name = image.name
        # Named height and width (not numbers): the model reads any multiple of SIZE_STEP.
        self.free_size = not all(isinstance(d, int) for d in image.shape[2:])
        # The corner refiner is loaded when a model is named; `refine=model` without one is an error.
        self.refiner = (CornerRefiner(corner_model, providers=providers, threads=threads)
                        if corner_model is not None else None)

    def find(self, frames: Sequence[np.ndarray], config: FinderConfig | None = None) -> list[Detections]:
        """Cards in each BGR uint8 frame (any sizes), one `Detections` per frame."""
        cfg = config or self.config
        if len(frames) == 0:
            return []
        boxed = [letterbox_image(f) for f in frames]
        x = to_input(np.stack([img for img, _ in boxed]))
        heat, offsets = self.session.run(None, {self.input_name: x})
        if cfg.refine is Refine.MODEL and self.refiner is None:
            raise FinderModelError("FinderConfig(refine='model') needs the corner model; create the Finder "
                                   "with corner_model=PATH or choose refine='edges' or 'none'")
        out = []
        for i, (frame, (_, box)) in enumerate(zip(frames, boxed, strict=True)):
            out.append(self._detections(frame, box, heat[i], offsets[i], cfg))
        return out

    def find_one(self, frame: np.ndarray, config: FinderConfig | None = None) -> Detections:
        """Cards in one BGR frame."""
        return self.find([frame], config)[0]

    def find_zoomed(self, frame: np.ndarray, regions: Sequence[ZoomRegion], *, zoom: float = 1.5,
                    config: FinderConfig | None = None) -> Detections:
        """Cards in one BGR frame, those centred in a region read again with cards `zoom` times
        as large as in the whole-frame read (see the module's docstring). Without regions, as
        `find_one`."""
        cfg = config or self.config
        if not zoom > 0:
            raise ValueError(f"find_zoomed: zoom must be more than 0, got {zoom}")
        if not regions:
            return self.find_one(frame, cfg)
        h, w = frame.shape[:2]
        whole_box = letterbox_params((w, h))
        heat, offsets = self.session.run(None, {self.input_name: to_input(letterbox_image(frame, whole_box)[0][None])})
        quads, scores = self._decoded(whole_box, heat[0], offsets[0], cfg)
        centres = quads.mean(axis=1) if len(quads) else np.zeros((0, 2))
        taken = np.zeros(len(quads), bool)
        parts_q, parts_s = [], []
        scale = zoom * whole_box.scale[0]
        for region in regions:
            x0, y0, x1, y1 = region.inner
            taken |= ((centres[:, 0] >= x0) & (centres[:, 0] < x1) & (centres[:, 1] >= y0) & (centres[:, 1] < y1))
            rect = region.crop(w, h)
            if rect is None:
                continue
            q, sc = self._read_part(frame, rect, scale, cfg)
            if len(q):
                c = q.mean(axis=1)
                inside = (c[:, 0] >= x0) & (c[:, 0] < x1) & (c[:, 1] >= y0) & (c[:, 1] < y1)
                lo, hi = q.min(axis=1), q.max(axis=1)
                cut = (((lo[:, 0] < rect[0] + CUT_EDGE_PX) & (rect[0] > 0))
                       | ((lo[:, 1] < rect[1] + CUT_EDGE_PX) & (rect[1] > 0))
                       | ((hi[:, 0] > rect[2] - 1 - CUT_EDGE_PX) & (rect[2] < w))
                       | ((hi[:, 1] > rect[3] - 1 - CUT_EDGE_PX) & (rect[3] < h)))
                keep = inside & ~cut
                parts_q.append(q[keep])
                parts_s.append(sc[keep])
        zq = np.concatenate(parts_q) if parts_q else np.zeros((0, 4, 2))
        zs = np.concatenate(parts_s) if parts_s else np.zeros(0)
        if len(zq):  # regions that overlap read their shared cards twice
            keep = nms_quads(zq, zs, cfg.nms_iou)
            zq, zs = zq[keep], zs[keep]
        quads = np.concatenate([quads[~taken], zq]).reshape(-1, 4, 2)
        scores = np.concatenate([scores[~taken], zs])
        order = np.argsort(-scores, kind="stable")[: cfg.max_cards]
        return self._finished(frame, quads[order], scores[order], cfg)

    def _read_part(self, frame: np.ndarray, rect: tuple[int, int, int, int], scale: float,
                   cfg: FinderConfig) -> tuple[np.ndarray, np.ndarray]:
        """The cards of one rectangle of the frame read at `scale` (frame px → input px; a
        fixed-size model: at most what fits its input), in frame pixels."""
        x0, y0, x1, y1 = rect
        part = np.ascontiguousarray(frame[y0:y1, x0:x1])
        pw, ph = x1 - x0, y1 - y0
        size = (INPUT_WIDTH, INPUT_HEIGHT)
        if self.free_size:
            size = (max(SIZE_STEP, int(np.ceil(pw * scale / SIZE_STEP)) * SIZE_STEP),
                    max(SIZE_STEP, int(np.ceil(ph * scale / SIZE_STEP)) * SIZE_STEP))
        box = letterbox_params((pw, ph), size, most=scale)
        heat, offsets = self.session.run(None, {self.input_name: to_input(letterbox_image(part, box)[0][None])})
        quads, scores = self._decoded(box, heat[0], offsets[0], cfg)
        if len(quads):
            quads = quads + np.array([x0, y0], np.float64)
        return quads, scores

    @staticmethod
    def _decoded(box: Letterbox, heat: np.ndarray, offsets: np.ndarray,
                 cfg: FinderConfig) -> tuple[np.ndarray, np.ndarray]:
        quads, scores = decode(heat, offsets, cfg)
        return from_letterbox(quads, box).reshape(-1, 4, 2), scores

    def _detections(self, frame: np.ndarray, box: Letterbox, heat: np.ndarray, offsets: np.ndarray,
                    cfg: FinderConfig) -> Detections:
        corners, scores = self._decoded(box, heat, offsets, cfg)
        return self._finished(frame, corners, scores, cfg)

    def _finished(self, frame: np.ndarray, corners: np.ndarray, scores: np.ndarray, cfg: FinderConfig) -> Detections:
        """Decoded cards in frame pixels → refined (`FinderConfig.refine`) and in canonical order."""
        if cfg.refine is Refine.MODEL and self.refiner is not None and len(corners):
            corners = self.refiner.refine(frame, canonical_order(corners), passes=cfg.refine_passes)
        elif cfg.refine is Refine.EDGES and len(corners):
            gray = cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY)
            for _ in range(cfg.refine_passes):
                corners = refine_corners(gray, corners, window=cfg.refine_window)
        corners = canonical_order(corners)
        return Detections(corners=corners.astype(np.float32), scores=np.clip(scores, 0.0, 1.0))
