"""Distinctness of an art pack: which faces a camera is likely to confuse.

Every face is reduced to a small colour descriptor: the card in portrait (a landscape face is
turned a quarter), a 4 % margin trimmed all round (borders, rounded corners and the
background an enrollment leaves there are shared by most faces and say nothing), resampled to
64×96 pixels (about what a 720p camera sees of a card on a table), slightly blurred,
converted to CIE Lab and averaged over a grid of 16×24 cells of about 3.5 mm of card each.
Two faces are compared cell by cell with the Lab colour difference ΔE (CIE76, in ΔE units,
where about 2 is a just-noticeable difference and a black/white swap is 100); their distance
is the mean of (the average cell difference) and (the largest cell difference), taken at the
better of 0° and 180° of the second face, because the camera sees a card either way up. The
average catches faces that look alike overall; the largest catches faces that are alike
except for one small mark (a badge, a numeral), which an identifier can still tell apart.
A pair closer than the margin (`DEFAULT_MARGIN`, see docs/decks.md) fails the check. Each face
is also compared with its own 180° turn: a face that looks the same both ways cannot show a
turned (damaged, used) state, which some games read from the card's orientation.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import cv2
import numpy as np

# Measured: the same face enrolled from a perspective photo and from a scan lies 3.5-6 apart;
# distinct faces of the real Explorers deck 16 or more (iron vs diamond pickaxe); the closest
# proxy faces 12-20 (faces that differ by their numbers only).
DEFAULT_MARGIN = 10.0


@dataclass(frozen=True, slots=True, kw_only=True)
class DistinctConfig:
    """How faces are reduced before comparison (the defaults are the documented measure)."""

    thumb_size: tuple[int, int] = (64, 96)  # width, height of the portrait thumbnail
    grid: tuple[int, int] = (16, 24)  # cells across, cells down
    trim: float = 0.04  # share of each side trimmed before resampling
    blur_sigma: float = 0.8  # thumbnail pixels


@dataclass(frozen=True, slots=True, kw_only=True)
class PairDistance:
    """How far apart two faces look: the distance and its two parts, in ΔE units."""

    a: str
    b: str
    distance: float
    mean: float
    peak: float
    turned: bool  # the closest match was `b` turned 180°


@dataclass(frozen=True, slots=True, kw_only=True)
class DistinctReport:
    """The closest pairs of a pack, the pairs under the margin and the turn-symmetric faces."""

    margin: float
    faces: int
    closest: tuple[PairDistance, ...]  # ascending distance, the `top` closest
    failing: tuple[PairDistance, ...]  # every pair closer than the margin
    turn_symmetric: tuple[PairDistance, ...]  # faces closer than the margin to their own turn

    @property
    def ok(self) -> bool:
        return not self.failing


def portrait(image: np.ndarray) -> np.ndarray:
    """The image turned a quarter clockwise when it is wider than tall."""
    if image.shape[1] > image.shape[0]:
        return cv2.rotate(image, cv2.ROTATE_90_CLOCKWISE)
    return image


def descriptor(image: np.ndarray, config: DistinctConfig = DistinctConfig()) -> np.ndarray:
    """Cell-mean CIE Lab colours of a face image: float32 (rows, cols, 3), ΔE units."""
    if image.ndim == 2:
        image = cv2.cvtColor(image, cv2.COLOR_GRAY2BGR)
    elif image.shape[2] == 4:
        image = cv2.cvtColor(image, cv2.COLOR_BGRA2BGR)
    image = portrait(image)
    h, w = image.shape[:2]
    dy, dx = round(h * config.trim), round(w * config.trim)
    inner = image[dy : h - dy or h, dx : w - dx or w]
    thumb = cv2.resize(inner, config.thumb_size, interpolation=cv2.INTER_AREA)
    thumb = cv2.GaussianBlur(thumb, (0, 0), config.blur_sigma)
    lab = cv2.cvtColor(thumb.astype(np.float32) / 255.0, cv2.COLOR_BGR2Lab)
    cols, rows = config.grid
    tw, th = config.thumb_size
    if tw % cols or th % rows:
        raise ValueError(f"thumbnail {tw}x{th} does not divide into a {cols}x{rows} grid")
    cells: np.ndarray = lab.reshape(rows, th // rows, cols, tw // cols, 3).mean(axis=(1, 3))
    return cells.astype(np.float32)


def _distances(first: np.ndarray, second: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Mean and peak cell ΔE between every descriptor of `first` and every one of `second`."""
    diff = np.linalg.norm(first[:, None] - second[None, :], axis=-1)
    flat = diff.reshape(diff.shape[0], diff.shape[1], -1)
    return flat.mean(axis=-1), flat.max(axis=-1)


def combine(mean: np.ndarray, peak: np.ndarray) -> np.ndarray:
    """The documented distance: the average of the mean and the peak cell difference."""
    combined: np.ndarray = 0.5 * (mean + peak)
    return combined


def check_distinct(
    images: Mapping[str, np.ndarray],
    margin: float = DEFAULT_MARGIN,
    top: int = 10,
    config: DistinctConfig = DistinctConfig(),
) -> DistinctReport:
    """Compare every pair of faces (both ways up) and report the closest."""
    ids = list(images)
    if len(ids) < 1:
        raise ValueError("the pack has no face images to compare")
    upright = np.stack([descriptor(images[f], config) for f in ids])
    turned = upright[:, ::-1, ::-1]
    mean0, peak0 = _distances(upright, upright)
    mean1, peak1 = _distances(upright, turned)
    dist0, dist1 = combine(mean0, peak0), combine(mean1, peak1)
    use_turn = dist1 < dist0
    dist = np.where(use_turn, dist1, dist0)
    mean = np.where(use_turn, mean1, mean0)
    peak = np.where(use_turn, peak1, peak0)
    pairs = []
    for i in range(len(ids)):
        for j in range(i + 1, len(ids)):
            pairs.append(
                PairDistance(
                    a=ids[i],
                    b=ids[j],
                    distance=float(dist[i, j]),
                    mean=float(mean[i, j]),
                    peak=float(peak[i, j]),
                    turned=bool(use_turn[i, j]),
                )
            )
    pairs.sort(key=lambda p: (p.distance, p.a, p.b))
    symmetric = [
        PairDistance(
            a=ids[i],
            b=ids[i],
            distance=float(dist1[i, i]),
            mean=float(mean1[i, i]),
            peak=float(peak1[i, i]),
            turned=True,
        )
        for i in range(len(ids))
        if dist1[i, i] < margin
    ]
    symmetric.sort(key=lambda p: (p.distance, p.a))
    return DistinctReport(
        margin=margin,
        faces=len(ids),
        closest=tuple(pairs[: max(0, top)]),
        failing=tuple(p for p in pairs if p.distance < margin),
        turn_symmetric=tuple(symmetric),
    )
