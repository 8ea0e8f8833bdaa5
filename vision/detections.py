"""One validated batch of card detections, and intersection over union for quadrilaterals.

`Detections` is a frozen struct of arrays, one row per card seen in a frame: `corners`
`(n, 4, 2)` float32 (the card's own top-left, top-right, bottom-right, bottom-left corner in
image pixels), finder `scores` `(n,)`, and optionally tracker `track_ids` `(n,)` and the
identifier's `faces` `(n,)` (an object array of face ids, `None` where a card is not
identified) with their `face_scores`. Shapes, dtypes and ranges are checked on construction
and the arrays are stored read-only, so a batch can be handed between stages without copies.
Rows are selected with a boolean mask, an index array, a slice or an int, like a numpy array;
`concatenate` joins batches. `quad_iou` and the pairwise `iou_matrix` measure the overlap of
two card outlines (convex polygons, intersected with `cv2.intersectConvexConvex` after a
vectorised bounding-box test); the evaluation's average precision on quadrilaterals uses them.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import cv2
import numpy as np
from numpy.typing import ArrayLike


class DetectionsError(ValueError):
    """Arrays that do not make a valid batch of detections; the message names the field."""


def _readonly(array: np.ndarray) -> np.ndarray:
    array.setflags(write=False)
    return array


def _float_field(name: str, value: ArrayLike, shape_tail: tuple[int, ...], n: int | None) -> np.ndarray:
    try:
        array = np.array(value, dtype=np.float32, copy=True)
    except (TypeError, ValueError) as exc:
        raise DetectionsError(f"Detections.{name}: not numeric ({exc})") from exc
    if array.size == 0 and array.ndim <= 1:
        array = array.reshape((0, *shape_tail))
    expected = ("n", *shape_tail) if n is None else (n, *shape_tail)
    if array.ndim != 1 + len(shape_tail) or array.shape[1:] != shape_tail or (
        n is not None and array.shape[0] != n
    ):
        raise DetectionsError(
            f"Detections.{name}: expected shape {expected}, got {array.shape}"
        )
    if not np.isfinite(array).all():
        raise DetectionsError(f"Detections.{name}: contains NaN or infinite values")
    return array


def _unit_interval(name: str, array: np.ndarray) -> None:
    if array.size and (array.min() < 0.0 or array.max() > 1.0):
        raise DetectionsError(
            f"Detections.{name}: scores must lie in [0, 1], got values from "
            f"{float(array.min()):g} to {float(array.max()):g}"
        )


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class Detections:
    """Cards found in one frame, one row per card; every array has the same length `n`."""

    corners: np.ndarray  # (n, 4, 2) float32: card's own TL, TR, BR, BL in image px
    scores: np.ndarray  # (n,) float32 in [0, 1]: finder confidence
    track_ids: np.ndarray | None = None  # (n,) int64: tracker ids, -1 where not tracked
    faces: np.ndarray | None = None  # (n,) object: face id (str) or None where unidentified
    face_scores: np.ndarray | None = None  # (n,) float32 in [0, 1]: identifier score of `faces`

    def __post_init__(self) -> None:
        corners = _float_field("corners", self.corners, (4, 2), None)
        n = corners.shape[0]
        scores = _float_field("scores", self.scores, (), n)
        _unit_interval("scores", scores)
        object.__setattr__(self, "corners", _readonly(corners))
        object.__setattr__(self, "scores", _readonly(scores))
        if self.track_ids is not None:
            object.__setattr__(self, "track_ids", _readonly(self._check_ids(self.track_ids, n)))
        if (self.faces is None) != (self.face_scores is None):
            raise DetectionsError(
                "Detections: give 'faces' and 'face_scores' together (or neither)"
            )
        if self.faces is not None:
            faces = self._check_faces(self.faces, n)
            assert self.face_scores is not None
            face_scores = _float_field("face_scores", self.face_scores, (), n)
            _unit_interval("face_scores", face_scores)
            object.__setattr__(self, "faces", _readonly(faces))
            object.__setattr__(self, "face_scores", _readonly(face_scores))

    @staticmethod
    def _check_ids(value: ArrayLike, n: int) -> np.ndarray:
        raw = np.asarray(value)
        if raw.shape != (n,):
            raise DetectionsError(f"Detections.track_ids: expected shape ({n},), got {raw.shape}")
        whole = np.issubdtype(raw.dtype, np.integer) or (
            np.issubdtype(raw.dtype, np.floating) and bool(np.all(raw == np.round(raw)))
        )
        if raw.size and not whole:
            raise DetectionsError(
                f"Detections.track_ids: must be whole numbers (-1 for untracked), got {raw.dtype}"
            )
        ids = raw.astype(np.int64, copy=True)
        if ids.size and ids.min() < -1:
            raise DetectionsError("Detections.track_ids: ids are 0 or more, -1 means untracked")
        return ids

    @staticmethod
    def _check_faces(value: Iterable[Any] | np.ndarray, n: int) -> np.ndarray:
        items = list(value.tolist() if isinstance(value, np.ndarray) else value)
        if len(items) != n:
            raise DetectionsError(f"Detections.faces: expected {n} entries, got {len(items)}")
        faces = np.empty(n, dtype=object)
        for i, face in enumerate(items):
            if face is not None and not (isinstance(face, str) and face):
                raise DetectionsError(
                    f"Detections.faces[{i}]: a face id is a non-empty string or None, got {face!r}"
                )
            faces[i] = face
        return faces

    # -- construction ------------------------------------------------------------------------

    @classmethod
    def empty(cls, *, with_tracks: bool = False, with_faces: bool = False) -> Detections:
        """A batch of zero cards (optionally with empty track / face columns)."""
        return cls(
            corners=np.zeros((0, 4, 2), np.float32),
            scores=np.zeros(0, np.float32),
            track_ids=np.zeros(0, np.int64) if with_tracks else None,
            faces=np.empty(0, object) if with_faces else None,
            face_scores=np.zeros(0, np.float32) if with_faces else None,
        )

    @classmethod
    def concatenate(cls, batches: Sequence[Detections]) -> Detections:
        """All rows of `batches`, in order. Optional columns must be present in all non-empty
        batches or in none (an empty batch never decides)."""
        full = [b for b in batches if len(b)]
        if not full:
            return batches[0] if batches else cls.empty()
        with_ids = {b.track_ids is not None for b in full}
        with_faces = {b.faces is not None for b in full}
        if len(with_ids) > 1 or len(with_faces) > 1:
            raise DetectionsError(
                "Detections.concatenate: some batches have track_ids / faces and others do not; "
                "fill the missing columns first (with_track_ids / with_faces)"
            )
        faces = face_scores = track_ids = None
        if with_ids == {True}:
            track_ids = np.concatenate([b.track_ids for b in full if b.track_ids is not None])
        if with_faces == {True}:
            faces = np.concatenate([b.faces for b in full if b.faces is not None])
            face_scores = np.concatenate([b.face_scores for b in full if b.face_scores is not None])
        return cls(
            corners=np.concatenate([b.corners for b in full]),
            scores=np.concatenate([b.scores for b in full]),
            track_ids=track_ids,
            faces=faces,
            face_scores=face_scores,
        )

    def with_track_ids(self, track_ids: ArrayLike) -> Detections:
        """The same rows with tracker ids attached."""
        return dataclasses.replace(self, track_ids=np.asarray(track_ids))

    def with_faces(self, faces: Sequence[str | None], face_scores: ArrayLike) -> Detections:
        """The same rows with identifier results attached."""
        column = np.empty(len(faces), dtype=object)
        column[:] = list(faces)
        return dataclasses.replace(self, faces=column, face_scores=np.asarray(face_scores))

    # -- access -------------------------------------------------------------------------------

    def __len__(self) -> int:
        return int(self.corners.shape[0])

    def __getitem__(self, index: int | slice | np.ndarray | Sequence[int] | Sequence[bool]) -> Detections:
        """Rows by boolean mask, index array, slice or int (always a `Detections`)."""
        if isinstance(index, int | np.integer):
            i = int(index)
            if not -len(self) <= i < len(self):
                raise IndexError(f"Detections: row {i} out of range for {len(self)} rows")
            key: Any = np.array([i % max(len(self), 1)])
        elif isinstance(index, slice):
            key = index
        else:
            key = np.asarray(index)
            if key.dtype == bool:
                if key.shape != (len(self),):
                    raise IndexError(
                        f"Detections: boolean mask of shape {key.shape} for {len(self)} rows"
                    )
            elif key.size == 0:
                key = key.astype(np.int64)
            elif not np.issubdtype(key.dtype, np.integer):
                raise IndexError(f"Detections: cannot select rows with an array of {key.dtype}")

        def pick(a: np.ndarray | None) -> np.ndarray | None:
            return None if a is None else a[key]

        return Detections(
            corners=self.corners[key],
            scores=self.scores[key],
            track_ids=pick(self.track_ids),
            faces=pick(self.faces),
            face_scores=pick(self.face_scores),
        )

    @property
    def centers(self) -> np.ndarray:
        """(n, 2) float32: mean of the four corners."""
        return np.asarray(self.corners.mean(axis=1), np.float32)

    @property
    def areas(self) -> np.ndarray:
        """(n,) float32: polygon areas in square pixels (shoelace, either winding)."""
        return polygon_areas(self.corners)

    def __repr__(self) -> str:
        cols = [name for name in ("track_ids", "faces") if getattr(self, name) is not None]
        extra = f", with {' and '.join(cols)}" if cols else ""
        return f"Detections({len(self)} cards{extra})"


def polygon_areas(polygons: np.ndarray) -> np.ndarray:
    """(n,) areas of `(n, k, 2)` polygons (absolute value: either winding)."""
    p = np.asarray(polygons, np.float64)
    x, y = p[..., 0], p[..., 1]
    twice = np.sum(x * np.roll(y, -1, axis=-1) - np.roll(x, -1, axis=-1) * y, axis=-1)
    return np.asarray(np.abs(twice) * 0.5, np.float32)


def _as_quads(value: Detections | ArrayLike, name: str) -> np.ndarray:
    quads = value.corners if isinstance(value, Detections) else np.asarray(value, np.float32)
    if quads.ndim == 2:
        quads = quads[None]
    if quads.ndim != 3 or quads.shape[1:] != (4, 2):
        raise DetectionsError(f"iou: '{name}' must hold quads of shape (n, 4, 2), got {quads.shape}")
    if not np.isfinite(quads).all():
        raise DetectionsError(f"iou: '{name}' contains NaN or infinite corners")
    return quads.astype(np.float32, copy=False)


def _hull(quad: np.ndarray) -> np.ndarray:
    return cv2.convexHull(np.ascontiguousarray(quad, np.float32)).reshape(-1, 2)


def _hull_area(hull: np.ndarray) -> float:
    return float(cv2.contourArea(hull)) if len(hull) >= 3 else 0.0


def iou_matrix(a: Detections | ArrayLike, b: Detections | ArrayLike) -> np.ndarray:
    """(n, m) intersection over union of every quad of `a` with every quad of `b`.

    Quads are treated as convex polygons (a concave or self-crossing quad is replaced by its
    convex hull); a quad of zero area has IoU 0 with everything. Pairs whose bounding boxes
    do not overlap are skipped without polygon clipping, so the cost grows with the number of
    touching pairs, not with n·m.
    """
    qa, qb = _as_quads(a, "a"), _as_quads(b, "b")
    out = np.zeros((len(qa), len(qb)), np.float32)
    if not len(qa) or not len(qb):
        return out
    hulls_a = [_hull(q) for q in qa]
    hulls_b = [_hull(q) for q in qb]
    area_a = np.array([_hull_area(h) for h in hulls_a], np.float64)
    area_b = np.array([_hull_area(h) for h in hulls_b], np.float64)
    lo_a, hi_a = qa.min(axis=1), qa.max(axis=1)
    lo_b, hi_b = qb.min(axis=1), qb.max(axis=1)
    overlap = np.all(
        (lo_a[:, None, :] < hi_b[None, :, :]) & (lo_b[None, :, :] < hi_a[:, None, :]), axis=2
    )
    overlap &= (area_a[:, None] > 0) & (area_b[None, :] > 0)
    for i, j in zip(*np.nonzero(overlap), strict=True):
        inter, _ = cv2.intersectConvexConvex(hulls_a[i], hulls_b[j])
        union = area_a[i] + area_b[j] - inter
        if inter > 0 and union > 0:
            out[i, j] = min(1.0, float(inter / union))
    return out


def quad_iou(a: ArrayLike, b: ArrayLike) -> float:
    """Intersection over union of two quads `(4, 2)` (see `iou_matrix`)."""
    qa, qb = _as_quads(a, "a"), _as_quads(b, "b")
    if len(qa) != 1 or len(qb) != 1:
        raise DetectionsError("quad_iou: give one quad (4, 2) each; use iou_matrix for batches")
    return float(iou_matrix(qa, qb)[0, 0])
