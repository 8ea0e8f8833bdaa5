"""Naming a card by the part of it that shows: the cards of a fan or a row, half under others.

The identifier (`vision.identify`) embeds a whole rectified card. A card lying half under
another shows its neighbour over the rest of the crop, and the identifier calls most such crops
unknown (on the bundled Mattel clips 85 % of the crops it is given). `PartialMatcher` is its
fallback for those cards, and it needs no model:

1. **What lies over the card** (`PartialMatcher.covering`). Of two overlapping cards, the one on
   top shows its whole outline; the one under it shows none of its own outline where the other
   covers it. Each neighbour's edges inside the card are compared with the card's edges inside
   the neighbour (the image gradient across each edge, the strongest within `edge_band` pixels
   of where the finder put it): the neighbour lies over the card when its edges are the
   stronger.
2. **What the rest shows** (`PartialMatcher.match`). The card is cut out at a low resolution
   (`size`, blurred a little, so that corners a few pixels off still line up) with a margin
   around it, the neighbours over it are masked out, and what remains is compared with every
   face of the art pack at 0° and 180° by normalised cross-correlation of its colours, over the
   visible pixels only, the cut moved by up to `search` cells each way to make up for corners
   that are off. The best face is the answer when its correlation is at least `min_score`,
   ahead of every other face by `min_margin`, and at least `min_visible` of the card shows;
   otherwise the card stays unknown.

Measured on the bundled 3-player Mattel clip (every 15th frame, cards 15–90 % visible found by
the finder with `peaks='adjacent'`; synthetic footage, proxy art): 27 % of the crops are named,
98.6 % of them right; told which cards lie on top by the truth instead of by their edges, 47 %
(99.3 % right), so telling the order is what loses most. Rendered art lines up with its own
pack far better than a camera sees printed cards, so on a real table expect fewer answers.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import cv2
import numpy as np

from vision.identify import FaceCandidate
from vision.preprocess import to_portrait


class PartialError(ValueError):
    """A partial matcher built from nothing, or with options out of range."""


@dataclass(frozen=True, slots=True, kw_only=True)
class PartialConfig:
    """Options of `PartialMatcher` (see the module notes)."""

    size: tuple[int, int] = (24, 34)  # portrait cut, cells
    margin: int = 3  # cells cut around the card, for the search
    search: int = 2  # cells the cut moves each way
    blur: float = 0.8  # Gaussian sigma, cells
    min_visible: float = 0.12  # least share of the card not covered
    min_score: float = 0.6  # least correlation of the answer
    min_margin: float = 0.05  # least lead of the answer over the next face
    min_overlap: float = 0.02  # quad IoU above which a neighbour may cover the card
    edge_band: int = 2  # pixels searched across an edge for its gradient
    candidates: int = 3  # faces answered, best first, within `min_margin * 2` of the best

    def __post_init__(self) -> None:
        w, h = self.size
        if w < 4 or h < 4:
            raise PartialError(f"PartialConfig.size: at least 4×4 cells, got {w}×{h}")
        if self.margin < self.search or self.search < 0:
            raise PartialError("PartialConfig: search must be 0 or more and at most margin")
        if not 0 < self.min_visible <= 1 or not -1 <= self.min_score <= 1 or self.min_margin < 0:
            raise PartialError("PartialConfig: min_visible in (0, 1], min_score in [-1, 1], min_margin ≥ 0")
        if self.candidates < 1:
            raise PartialError("PartialConfig.candidates: at least 1")


def _sobel(image: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    gray = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY) if image.ndim == 3 else image
    g = gray.astype(np.float32)
    return cv2.Sobel(g, cv2.CV_32F, 1, 0, ksize=3), cv2.Sobel(g, cv2.CV_32F, 0, 1, ksize=3)


def _inside(quad: np.ndarray, points: np.ndarray, margin: float) -> np.ndarray:
    """Which points lie inside the convex `quad`, at least `margin` pixels from its edges."""
    q = np.asarray(quad, np.float64)
    a, b = q, np.roll(q, -1, axis=0)
    d = b - a
    length = np.linalg.norm(d, axis=1)
    cross = d[None, :, 0] * (points[:, None, 1] - a[None, :, 1]) - d[None, :, 1] * (points[:, None, 0] - a[None, :, 0])
    dist = cross / np.maximum(length, 1e-9)[None, :]
    sign = 1.0 if np.sum(d[:, 0] * np.roll(d, -1, axis=0)[:, 1] - d[:, 1] * np.roll(d, -1, axis=0)[:, 0]) > 0 else -1.0
    return bool(length.min() > 0) & np.all(sign * dist >= margin, axis=1)


def _edge_strength(gx: np.ndarray, gy: np.ndarray, quad: np.ndarray, inside: np.ndarray,
                   band: int, samples: int = 24) -> float | None:
    """Mean gradient across `quad`'s edges where they run inside the quad `inside`; None when
    no part of them does."""
    q = np.asarray(quad, np.float64)
    t = np.linspace(0.05, 0.95, samples)
    a = np.repeat(q, samples, axis=0)
    d = np.repeat(np.roll(q, -1, axis=0) - q, samples, axis=0)
    points = a + d * np.tile(t, 4)[:, None]
    keep = _inside(inside, points, 2.5)
    if not keep.any():
        return None
    points, d = points[keep], d[keep]
    normal = np.stack([-d[:, 1], d[:, 0]], axis=1) / np.maximum(np.linalg.norm(d, axis=1), 1e-9)[:, None]
    h, w = gx.shape
    best = np.zeros(len(points))
    for o in range(-band, band + 1):
        p = np.rint(points + o * normal).astype(np.int64)
        ok = (p[:, 0] >= 0) & (p[:, 0] < w) & (p[:, 1] >= 0) & (p[:, 1] < h)
        x, y = np.clip(p[:, 0], 0, w - 1), np.clip(p[:, 1], 0, h - 1)
        g = np.abs(gx[y, x] * normal[:, 0] + gy[y, x] * normal[:, 1]) * ok
        best = np.maximum(best, g)
    return float(best.mean())


def _overlaps(quad: np.ndarray, others: np.ndarray, min_overlap: float) -> np.ndarray:
    from vision.detections import iou_matrix

    if not len(others):
        return np.zeros(0, bool)
    return np.asarray(iou_matrix(np.asarray(quad, np.float32)[None], np.asarray(others, np.float32))[0] > min_overlap)


def covered_corners(quad: np.ndarray, over: Sequence[np.ndarray]) -> np.ndarray:
    """Which of the card's four corners lie under one of the quads `over` (by a pixel or more)."""
    q = np.asarray(quad, np.float64).reshape(4, 2)
    out = np.zeros(4, bool)
    for o in over:
        out |= _inside(np.asarray(o, np.float64).reshape(4, 2), q, 1.0)
    return out


def fit_flat_card(quad: np.ndarray, covered: np.ndarray, card_mm: tuple[float, float],
                  to_table: Callable[[np.ndarray], np.ndarray],
                  to_image: Callable[[np.ndarray], np.ndarray], *, covered_weight: float = 0.05) -> np.ndarray:
    """The card's corners (canonical order, image pixels) put where a card of `card_mm` lying flat
    on the table fits them best, the `covered` corners counting `covered_weight` as much as the
    others: a card half under another shows two or three of its corners, and the finder's guess
    at the rest is poor. The fit is rigid on the table (position and turn, not size)."""
    p = np.asarray(to_table(np.asarray(quad, np.float64).reshape(4, 2)), np.float64).reshape(4, 2)
    edges = np.linalg.norm(p - np.roll(p, -1, axis=0), axis=1)
    short, long_ = sorted(float(v) for v in card_mm)
    w, h = (short, long_) if edges[0] + edges[2] <= edges[1] + edges[3] else (long_, short)
    t = np.array([[-w / 2, -h / 2], [w / 2, -h / 2], [w / 2, h / 2], [-w / 2, h / 2]])
    if np.sum(p[:, 0] * np.roll(p[:, 1], -1) - np.roll(p[:, 0], -1) * p[:, 1]) < 0:
        t[:, 1] = -t[:, 1]  # the table's axes turn the image's clockwise order round
    weight = np.where(np.asarray(covered, bool), covered_weight, 1.0)
    cp = weight @ p / weight.sum()
    ct = weight @ t / weight.sum()
    a = ((p - cp) * weight[:, None]).T @ (t - ct)
    turn = np.arctan2(a[1, 0] - a[0, 1], a[0, 0] + a[1, 1])
    rot = np.array([[np.cos(turn), -np.sin(turn)], [np.sin(turn), np.cos(turn)]])
    fitted = (t - ct) @ rot.T + cp
    return np.asarray(to_image(fitted), np.float32).reshape(4, 2)


class PartialMatcher:
    """Names cards half under others by what shows of them (see the module notes). Stateless
    per call; the faces are prepared once."""

    def __init__(self, faces: Mapping[str, np.ndarray], config: PartialConfig | None = None) -> None:
        if not faces:
            raise PartialError("PartialMatcher: no faces to match against; give the art pack's images")
        self.config = config or PartialConfig()
        self.faces = tuple(sorted(faces))
        views = []
        for fid in self.faces:
            image = faces[fid]
            if not isinstance(image, np.ndarray) or image.ndim != 3 or image.shape[2] != 3:
                raise PartialError(f"PartialMatcher: face {fid!r} is not a colour image (H, W, 3)")
            upright = to_portrait(image)
            views.append(self._cells(upright))
            views.append(self._cells(np.ascontiguousarray(upright[::-1, ::-1])))
        w, h = self.config.size
        gallery = np.stack(views).reshape(len(views), h * w, 3).astype(np.float32)  # 2i: 0°, 2i + 1: 180°
        channels = gallery.transpose(0, 2, 1)  # (K, 3, P)
        self._flat = channels.reshape(len(views), 3 * h * w)  # each view, channel by channel
        self._rows = channels.reshape(len(views) * 3, h * w).astype(np.float64)  # each view's channels
        self._rows_sq = self._rows * self._rows

    @classmethod
    def from_pack(cls, pack: object, config: PartialConfig | None = None) -> PartialMatcher:
        """Every face of an `ArtPack`."""
        faces = {fid: pack.image(fid) for fid in sorted(pack.faces)}  # type: ignore[attr-defined]
        return cls(faces, config)

    def _cells(self, image: np.ndarray, size: tuple[int, int] | None = None) -> np.ndarray:
        w, h = size or self.config.size
        small = cv2.resize(image, (w, h), interpolation=cv2.INTER_AREA).astype(np.float32)
        return cv2.GaussianBlur(small, (0, 0), self.config.blur)

    def covering(self, image: np.ndarray, quad: np.ndarray, others: Sequence[np.ndarray] | np.ndarray) -> list[int]:
        """Indices of the `others` (quads in image pixels) that lie over the card `quad`."""
        others = np.asarray(others, np.float64).reshape(-1, 4, 2)
        near = np.nonzero(_overlaps(quad, others, self.config.min_overlap))[0]
        if not len(near):
            return []
        pts = np.concatenate([np.asarray(quad, np.float64).reshape(4, 2), *others[near]])
        band = self.config.edge_band + 2
        x0, y0 = np.maximum(np.floor(pts.min(axis=0)) - band, 0).astype(int)
        x1, y1 = np.minimum(np.ceil(pts.max(axis=0)) + band + 1, [image.shape[1], image.shape[0]]).astype(int)
        if x1 - x0 < 3 or y1 - y0 < 3:
            return []
        gx, gy = _sobel(image[y0:y1, x0:x1])
        shift = np.array([x0, y0], np.float64)
        own = np.asarray(quad, np.float64) - shift
        over = []
        for j in near:
            theirs = others[j] - shift
            on_top = _edge_strength(gx, gy, theirs, own, self.config.edge_band)
            under = _edge_strength(gx, gy, own, theirs, self.config.edge_band)
            if on_top is not None and on_top > (under or 0.0):
                over.append(int(j))
        return over

    def match(self, image: np.ndarray, quad: np.ndarray, over: Sequence[np.ndarray] = (),
              *, portrait: bool = True) -> tuple[FaceCandidate, ...]:
        """Faces the card `quad` (corners in its canonical order, image pixels) may show, best
        first, judged on what the quads `over` leave of it; () when nothing is sure enough.
        `portrait`: its first edge is a short one (as `vision.pipeline.crop_shapes` decides)."""
        cfg = self.config
        w, h = cfg.size
        m = cfg.margin
        cw, ch = (w, h) if portrait else (h, w)
        scale = 4  # cut finely, then shrink by area: the cells average the card's pixels
        dst = np.array([[m, m], [m + cw, m], [m + cw, m + ch], [m, m + ch]], np.float32) * scale
        warp = cv2.getPerspectiveTransform(np.asarray(quad, np.float32).reshape(4, 2), dst)
        size = ((cw + 2 * m) * scale, (ch + 2 * m) * scale)
        cut = cv2.warpPerspective(image, warp, size, flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
        mask = np.zeros((size[1], size[0]), np.uint8)
        for o in over:
            pts = cv2.perspectiveTransform(np.asarray(o, np.float32).reshape(1, 4, 2), warp)[0]
            cv2.fillConvexPoly(mask, np.rint(pts).astype(np.int32), 1)
        cut, mask = to_portrait(cut), to_portrait(mask[:, :, None])[:, :, 0]
        cells = self._cells(cut, (w + 2 * m, h + 2 * m))
        shown = cv2.resize(mask.astype(np.float32), (w + 2 * m, h + 2 * m), interpolation=cv2.INTER_AREA) < 0.05
        if shown[m:m + h, m:m + w].mean() < cfg.min_visible:
            return ()
        windows, masks = [], []
        for dy in range(-cfg.search, cfg.search + 1):
            for dx in range(-cfg.search, cfg.search + 1):
                vis = shown[m + dy:m + dy + h, m + dx:m + dx + w].reshape(h * w)
                if vis.sum() < cfg.min_visible * h * w:
                    continue
                window = cells[m + dy:m + dy + h, m + dx:m + dx + w].reshape(h * w, 3)
                centred = (window - window[vis].mean(axis=0)) * vis[:, None]
                windows.append(centred.T.reshape(-1))  # channel-major, as the gallery rows
                masks.append(vis)
        if not windows:
            return ()
        c = np.stack(windows, axis=1)  # (3P, S)
        mask = np.stack(masks, axis=1).astype(np.float64)  # (P, S); sums of squares need the precision
        n = mask.sum(axis=0)  # (S,)
        # Over the shown pixels: sum (g - mean g)(c - mean c) = sum g (c - mean c), and
        # sum (g - mean g)^2 = sum g^2 - (sum g)^2 / n, per channel.
        num = self._flat @ c  # (K, S)
        k = len(self._flat)
        sums = (self._rows @ mask).reshape(k, 3, -1)
        squares = (self._rows_sq @ mask).reshape(k, 3, -1)
        var_g = np.maximum((squares - sums * sums / n).sum(axis=1), 0.0)
        var_c = np.sum(c.astype(np.float64) ** 2, axis=0)
        best = np.max(num / (np.sqrt(var_g * var_c[None, :]) + 1e-9), axis=1)
        per_face = best.reshape(-1, 2)
        score = per_face.max(axis=1)
        order = np.argsort(-score, kind="stable")
        top = float(score[order[0]])
        second = float(score[order[1]]) if len(order) > 1 else -1.0
        if top < cfg.min_score or top - second < cfg.min_margin:
            return ()
        out = []
        for k in order[: cfg.candidates]:
            s = float(score[k])
            if k != order[0] and top - s > 2 * cfg.min_margin:
                break
            out.append(FaceCandidate(face=self.faces[k], rotated_180=bool(per_face[k, 1] > per_face[k, 0]),
                                     score=max(1e-3, min(1.0, s))))
        return tuple(out)
