"""Card tracks across frames: stable ids, hysteresis on entry and exit, identity evidence.

`CardTracker.update(detections, image=...)` matches the cards found in a frame to the known
tracks by position in table millimetres (through a caller-given image→table function, the
calibration homography; identity by default), predicted with a damped velocity, plus two
identity cues: the face the track is believed to show versus the face a detection carries, and
a cheap appearance signature (mean colours of a coarse grid over the card, in the card's own
frame). Assignment is greedy by cost: all track–detection pairs inside the distance gate are
sorted by cost and taken best first, confirmed tracks before tentative ones. For tens of cards
whose gates rarely overlap this gives the optimal assignment in practice at a fraction of the
code of Hungarian matching; where two cards are within `max_jump_mm` of each other the identity
and velocity cues break the tie. A track is confirmed after `frames_to_confirm` consecutive
hits and forgotten after more than `frames_to_forget` consecutive misses. Each track keeps the
identifier's candidate scores as decaying evidence, and `tracks_needing_identification()` lists
only the tracks that are new, have moved or turned beyond a threshold, or whose appearance
changed (a flip), so the identifier runs on few cards per frame.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum

import numpy as np

from engine.snapshot import Candidate
from vision.detections import Detections

TableMap = Callable[[np.ndarray], np.ndarray]

# Appearance signature: samples across × along the card, averaged into cells.
_SIG_SAMPLES = (8, 12)
_SIG_CELLS = (2, 3)
_SIG_INSET = 0.12  # fraction of the card kept clear of its edges (background, sleeves)
# How many frames of velocity a coasting track is extrapolated at most.
_MAX_COAST_FRAMES = 3
_ZERO_QUAD = np.zeros((4, 2), np.float32)
_ZERO_2 = np.zeros(2, np.float64)
for _array in (_ZERO_QUAD, _ZERO_2):
    _array.setflags(write=False)
# Corner orders of a quad turned by 0, 1, 2, 3 corners.
_SHIFTS = np.array([[0, 1, 2, 3], [1, 2, 3, 0], [2, 3, 0, 1], [3, 0, 1, 2]])


class TrackerError(ValueError):
    """A tracker configuration or input that cannot be used; the message names the field."""


class IdentifyReason(StrEnum):
    """Why a track needs the identifier (again)."""

    NEW = "new"  # never identified
    MOVED = "moved"  # centre moved more than `reidentify_move_mm` since identified
    TURNED = "turned"  # turned more than `reidentify_turn_deg` since identified
    APPEARANCE = "appearance"  # the card looks different (flipped, swapped, covered)
    UNSURE = "unsure"  # named, but no face has `recheck_below` evidence: read it again
    RETRY = "retry"  # never named, and looks as it did when last not named: asked again


@dataclass(frozen=True, slots=True, kw_only=True)
class TrackerConfig:
    """Tracker parameters, in frames, millimetres and degrees, with what each trades.

    - `frames_to_confirm`: consecutive hits before a track is reported. Higher ignores more
      one-frame false detections but reports a new card later (3 frames = 0.1 s at 30 fps).
    - `frames_to_forget`: consecutive misses a confirmed track survives (gone on the next
      one). Higher keeps a card's id through a longer occlusion by a hand, but a removed card
      lingers that long, and a different card put in its place is matched to it (then flagged
      by its appearance and re-identified).
    - `max_jump_mm`: largest distance from a track's predicted centre to a detection it may
      take. Larger follows cards carried faster; above about half the spacing of cards on the
      table it lets neighbours swap ids when one is missed.
    - `face_weight`, `appearance_weight`: cost added for a face disagreement (0..1) and for
      an appearance difference (0..1), against position cost `distance / max_jump_mm` (0..1).
    - `velocity_gain`: how fast the velocity estimate follows observed motion (0 disables
      prediction: tracks are expected where last seen). Prediction keeps two crossing cards
      apart; too high lets one jittery frame fling a track's prediction away.
    - `reidentify_move_mm`, `reidentify_turn_deg`, `reidentify_appearance`: how much a track
      may move, turn, or change its signature (mean absolute difference of brightness
      normalised colours, 0..~1) since it was identified before it is identified again.
      Lower catches subtle changes and costs more identifier calls.
    - `evidence_rate`: weight of a new identification in a track's evidence (1: forget the
      past; small: smooth over noisy identifications).
    - `retry_unnamed_frames`: a card the identifier could not name (`CardTracker.unnamed`) is
      asked about again after this many frames (`IdentifyReason.RETRY`, which the pipeline
      may answer by cutting it other ways), or at once when it moves, turns or changes look
      by the amounts above (`IdentifyReason.NEW`); 1: every frame. A card half under another
      in a fan can stay unnamed for the whole game, and asking again each frame about a crop
      that did not change spends the identifier's time for nothing.
    - `recheck_below` / `recheck_frames`: a named card whose best face has less evidence than
      `recheck_below` is identified again every `recheck_frames` frames while it stays so, each
      answer averaged into its evidence (`evidence_rate`): a card read once from a poor cut (the
      refiner put a corner off) as the runner-up of a close call is settled by later cuts, as
      the finder's corners vary from frame to frame. None never asks again.
    - `faint_below`: a named card whose look changed (a flip or a swap) that the identifier
      cannot name as it looks now, and that the finder sees with less confidence than this,
      loses its name and counts as found that faintly (`Track.peak_score`): it is the bare
      cloth where a card was lifted off, which the finder goes on taking for a faint card
      (0.45 where an Explorers skeleton lay in a row), not the card. A card found surely keeps
      its name (a hand beside it changes its look for a while). None: a name is kept.
    - `changed_doubt`: a named card whose look changed that the identifier cannot name as it
      looks now, and that keeps its name (above), keeps it in doubt: its evidence scaled down
      so that its best face has at most this. A chest flipped where it lies as it is filled
      (its strip under the next chest shows too little to be named) otherwise went on showing
      its old name surely, and the fill was read as something else. Set it under
      `recheck_below`, so that a card whose look came back (a hand went past) is read again
      and its name restored. None: the evidence is kept whole.
    """

    frames_to_confirm: int = 3
    frames_to_forget: int = 5
    max_jump_mm: float = 40.0
    face_weight: float = 1.0
    appearance_weight: float = 0.5
    velocity_gain: float = 0.5
    reidentify_move_mm: float = 15.0
    reidentify_turn_deg: float = 20.0
    reidentify_appearance: float = 0.12
    evidence_rate: float = 0.5
    min_evidence: float = 0.01
    retry_unnamed_frames: int = 1
    recheck_below: float | None = None
    recheck_frames: int = 15
    faint_below: float | None = None
    changed_doubt: float | None = None

    def __post_init__(self) -> None:
        if self.frames_to_confirm < 1:
            raise TrackerError("TrackerConfig.frames_to_confirm: must be at least 1")
        if self.frames_to_forget < 0:
            raise TrackerError("TrackerConfig.frames_to_forget: must be 0 or more")
        if self.retry_unnamed_frames < 1:
            raise TrackerError("TrackerConfig.retry_unnamed_frames: must be at least 1")
        if self.recheck_frames < 1:
            raise TrackerError("TrackerConfig.recheck_frames: must be at least 1")
        if self.recheck_below is not None and not 0.0 < self.recheck_below <= 1.0:
            raise TrackerError("TrackerConfig.recheck_below: must lie in (0, 1], or be None")
        if self.faint_below is not None and not 0.0 < self.faint_below <= 1.0:
            raise TrackerError("TrackerConfig.faint_below: must lie in (0, 1], or be None")
        if self.changed_doubt is not None and not 0.0 < self.changed_doubt <= 1.0:
            raise TrackerError("TrackerConfig.changed_doubt: must lie in (0, 1], or be None")
        for name in ("max_jump_mm", "reidentify_move_mm", "reidentify_turn_deg", "reidentify_appearance"):
            if not getattr(self, name) > 0:
                raise TrackerError(f"TrackerConfig.{name}: must be more than 0")
        for name in ("face_weight", "appearance_weight"):
            if getattr(self, name) < 0:
                raise TrackerError(f"TrackerConfig.{name}: must be 0 or more")
        for name in ("velocity_gain", "min_evidence"):
            if not 0.0 <= getattr(self, name) <= 1.0:
                raise TrackerError(f"TrackerConfig.{name}: must lie in [0, 1]")
        if not 0.0 < self.evidence_rate <= 1.0:
            raise TrackerError("TrackerConfig.evidence_rate: must lie in (0, 1]")


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class Track:
    """A tracked card as of the latest update."""

    track_id: int
    confirmed: bool
    hits: int  # frames seen in total
    misses: int  # consecutive frames missed (0 when seen in the latest frame)
    first_frame: int
    last_frame: int  # latest frame it was seen in
    detection_index: int | None  # its row in the latest detections, None when missed
    corners: np.ndarray  # (4, 2) image px, last seen, corner order kept continuous over time
    center_mm: np.ndarray  # (2,)
    angle_deg: float  # direction of its first edge in table mm, (-180, 180]
    velocity_mm: np.ndarray  # (2,) mm per frame
    candidates: tuple[Candidate, ...]  # identity evidence, best first
    rotated_180: bool  # as last identified
    # False when the card's look changed since it was last named and the identifier could not
    # name it again (its name kept in doubt, `TrackerConfig.changed_doubt`): `rotated_180` is
    # then the way round of an earlier look (a card turned in place: a spent hunger card).
    turn_known: bool = True
    peak_score: float = 1.0  # the finder's highest confidence in this card over its life
    # How the crop that last named it was cut: its first edge the long one (a landscape crop,
    # which the identifier turns a quarter); None: not recorded. `rotated_180` is read
    # against that crop.
    cut_wide: bool | None = None

    @property
    def face(self) -> str | None:
        """Best face so far, None if never identified."""
        return self.candidates[0].face if self.candidates else None


@dataclass(frozen=True, slots=True, kw_only=True)
class IdentifyRequest:
    """A card the identifier should look at in the latest frame."""

    track_id: int
    detection_index: int
    corners: np.ndarray = field(compare=False)  # (4, 2) image px, in the track's corner order
    reason: IdentifyReason


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class TrackUpdate:
    """What one `update` produced."""

    frame_index: int
    detections: Detections  # input rows with `track_ids` (-1 where not a confirmed track)
    tracks: tuple[Track, ...]  # confirmed tracks, including those missed for a few frames
    started: tuple[int, ...]  # ids confirmed in this frame
    ended: tuple[int, ...]  # ids forgotten in this frame


# -- stages: small functions on arrays ------------------------------------------------------


def clockwise(corners: np.ndarray) -> np.ndarray:
    """(n, 4, 2) quads in clockwise screen order (y down), first corner kept."""
    q = np.asarray(corners, np.float32)
    x, y = q[..., 0], q[..., 1]
    twice_area = np.sum(x * np.roll(y, -1, axis=-1) - np.roll(x, -1, axis=-1) * y, axis=-1)
    out = q.copy()
    flip = twice_area < 0
    out[flip] = q[flip][:, [0, 3, 2, 1]]
    return out


def corner_shifts(previous: np.ndarray, quads: np.ndarray) -> np.ndarray:
    """(m,) cyclic shift of each of `quads` (m, 4, 2) that puts its corners closest to
    `previous` (m, 4, 2): keeps a card's corner order (its orientation) continuous over time."""
    shifted = quads[:, _SHIFTS]  # (m, 4 shifts, 4 corners, 2)
    cost = np.linalg.norm(shifted - previous[:, None], axis=3).sum(axis=2)
    return np.asarray(np.argmin(cost, axis=1))


def align_corners(previous: np.ndarray, quad: np.ndarray) -> np.ndarray:
    """`quad` (4, 2) cyclically shifted so its corners lie closest to `previous` (4, 2)."""
    k = int(corner_shifts(previous[None], quad[None])[0])
    return np.asarray(quad[_SHIFTS[k]])


def quad_signature(image: np.ndarray, corners: np.ndarray) -> np.ndarray:
    """(n, d) float32 appearance signatures of (n, 4, 2) quads in a BGR image.

    A coarse grid of samples inside each card (in its own corner order, edges left out) is
    averaged into cells; each signature is divided by its mean brightness so a passing shadow
    changes it little, while a flip, a swap or a 180° turn changes it a lot. Costs a few
    microseconds per card: no warping, only point sampling.
    """
    quads = np.asarray(corners, np.float32).reshape(-1, 4, 2)
    n = len(quads)
    su, sv = _SIG_SAMPLES
    cu, cv = _SIG_CELLS
    if n == 0:
        return np.zeros((0, cu * cv * 3), np.float32)
    u = np.linspace(_SIG_INSET, 1 - _SIG_INSET, su, dtype=np.float32)
    v = np.linspace(_SIG_INSET, 1 - _SIG_INSET, sv, dtype=np.float32)
    uu, vv = np.meshgrid(u, v)  # (sv, su)
    w = np.stack(
        [(1 - uu) * (1 - vv), uu * (1 - vv), uu * vv, (1 - uu) * vv], axis=-1
    )  # (sv, su, 4) bilinear weights of TL, TR, BR, BL
    points = np.einsum("abk,nkc->nabc", w, quads)  # (n, sv, su, 2)
    h, wd = image.shape[:2]
    xs = np.clip(np.rint(points[..., 0]), 0, wd - 1).astype(np.intp)
    ys = np.clip(np.rint(points[..., 1]), 0, h - 1).astype(np.intp)
    samples = image[ys, xs].astype(np.float32)  # (n, sv, su, 3)
    cells = samples.reshape(n, cv, sv // cv, cu, su // cu, 3).mean(axis=(2, 4))
    flat = cells.reshape(n, -1) / 255.0
    brightness = flat.mean(axis=1, keepdims=True)
    return np.asarray(flat / np.maximum(brightness, 1e-3) * 0.5, np.float32)


def signature_distance(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Mean absolute difference of signatures (broadcasting); 0 same look, ~0.3+ different."""
    return np.asarray(np.abs(np.asarray(a) - np.asarray(b)).mean(axis=-1))


def greedy_assign(cost: np.ndarray, allowed: np.ndarray) -> list[tuple[int, int]]:
    """(row, col) pairs: cheapest allowed pair first, each row and column used once."""
    rows, cols = np.nonzero(allowed)
    order = np.argsort(cost[rows, cols], kind="stable")
    used_r: set[int] = set()
    used_c: set[int] = set()
    pairs: list[tuple[int, int]] = []
    for k in order:
        r, c = int(rows[k]), int(cols[k])
        if r in used_r or c in used_c:
            continue
        used_r.add(r)
        used_c.add(c)
        pairs.append((r, c))
    return pairs


def _angle_deg(quad_mm: np.ndarray) -> float:
    d = quad_mm[1] - quad_mm[0]
    return math.degrees(math.atan2(float(d[1]), float(d[0])))


def _wrap_deg(a: float) -> float:
    return (a + 180.0) % 360.0 - 180.0


# -- the tracker -----------------------------------------------------------------------------


class _TrackState:
    """Mutable per-track memory inside the tracker (never handed out)."""

    __slots__ = (
        "angle",
        "center",
        "checked_at",
        "confirmed",
        "corners",
        "cut_wide",
        "detection_index",
        "evidence",
        "first_frame",
        "hits",
        "key",
        "last_frame",
        "misses",
        "peak",
        "ranked",
        "ref_angle",
        "ref_center",
        "ref_signature",
        "rotated_180",
        "score",
        "signature",
        "track_id",
        "turn_known",
        "unnamed_at",
        "velocity",
    )

    def __init__(self, key: int, frame: int) -> None:
        self.key = key
        self.track_id = -1  # public id, given when confirmed
        self.confirmed = False
        self.hits = 0
        self.misses = 0
        self.peak = 0.0
        self.score = 0.0  # the finder's confidence in it in the latest frame it was seen in
        self.first_frame = frame
        self.last_frame = frame
        self.detection_index: int | None = None
        self.checked_at: int | None = None  # frame of the last answer of the identifier
        self.corners = _ZERO_QUAD
        self.center = _ZERO_2
        self.angle = 0.0
        self.velocity = _ZERO_2
        self.signature: np.ndarray | None = None
        self.evidence: dict[str, float] = {}
        self.ranked: tuple[Candidate, ...] = ()
        self.rotated_180 = False
        self.turn_known = True
        self.cut_wide: bool | None = None
        self.ref_center: np.ndarray | None = None
        self.ref_angle = 0.0
        self.ref_signature: np.ndarray | None = None
        # Frame, centre, angle and signature when the identifier last could not name it.
        self.unnamed_at: tuple[int, np.ndarray, float, np.ndarray | None] | None = None

    def best_face(self) -> str | None:
        return self.ranked[0].face if self.ranked else None

    def predicted(self) -> np.ndarray:
        gap = min(self.misses + 1, _MAX_COAST_FRAMES)
        return self.center + self.velocity * gap


class CardTracker:
    """Stable ids for the cards of a table; one instance per camera, fed every frame."""

    def __init__(self, config: TrackerConfig | None = None, *, to_table: TableMap | None = None) -> None:
        self.config = config or TrackerConfig()
        self._to_table = to_table
        self._tracks: dict[int, _TrackState] = {}
        self._next_id = 1
        self._next_key = 0
        self._frame = -1

    # -- per frame ---------------------------------------------------------------------------

    def _table(self, points: np.ndarray) -> np.ndarray:
        if self._to_table is None:
            return points.astype(np.float64)
        mapped = np.asarray(self._to_table(points), np.float64)
        if mapped.shape != points.shape:
            raise TrackerError(
                f"to_table: must map ({len(points)}, 2) image points to the same shape, "
                f"got {mapped.shape}"
            )
        return mapped

    def update(
        self, detections: Detections, *, image: np.ndarray | None = None, frame_index: int | None = None
    ) -> TrackUpdate:
        """Match this frame's detections to tracks; returns the confirmed tracks and what
        started or ended. `image` (the BGR frame) enables the appearance cue."""
        if not isinstance(detections, Detections):
            raise TrackerError(f"CardTracker.update: expected Detections, got {type(detections).__name__}")
        self._frame = self._frame + 1 if frame_index is None else int(frame_index)
        cfg = self.config
        n = len(detections)
        quads = clockwise(detections.corners)
        quads_mm = self._table(quads.reshape(-1, 2)).reshape(n, 4, 2) if n else np.zeros((0, 4, 2))
        centers = quads_mm.mean(axis=1) if n else np.zeros((0, 2))
        faces = detections.faces
        scores = np.asarray(detections.scores, np.float64)

        colours = _colour_summary(quad_signature(image, quads)) if image is not None and n else None

        states = list(self._tracks.values())
        pairs: list[tuple[int, int]] = []
        if states and n:
            predicted = np.stack([s.predicted() for s in states])
            dist = np.linalg.norm(predicted[:, None, :] - centers[None, :, :], axis=2)
            allowed = dist <= cfg.max_jump_mm
            cost = dist / cfg.max_jump_mm
            if faces is not None and cfg.face_weight:
                believed = np.array([s.best_face() for s in states], dtype=object)
                seen = np.asarray(faces, dtype=object)
                unknown = (believed == None)[:, None] | (seen == None)[None, :]  # noqa: E711
                differ = believed[:, None] != seen[None, :]
                cost += cfg.face_weight * np.where(unknown, 0.5, differ.astype(np.float64))
            if colours is not None and cfg.appearance_weight:
                known = [(i, s.signature) for i, s in enumerate(states) if s.signature is not None]
                if known:
                    rows = [i for i, _ in known]
                    ref = _colour_summary(np.stack([sig for _, sig in known]))
                    d = signature_distance(ref[:, None, :], colours[None, :, :])
                    cost[rows] += cfg.appearance_weight * np.minimum(d, 1.0)
            confirmed = np.array([s.confirmed for s in states])
            pairs = greedy_assign(cost, allowed & confirmed[:, None])
            free = np.ones(n, bool)
            free[[j for _, j in pairs]] = False
            pairs += greedy_assign(cost, allowed & ~confirmed[:, None] & free[None, :])

        # Keep each matched card's corner order continuous with its track.
        if pairs:
            taken = np.array([j for _, j in pairs])
            previous = np.stack([states[i].corners for i, _ in pairs])
            order = _SHIFTS[corner_shifts(previous, quads[taken])]
            quads[taken] = np.take_along_axis(quads[taken], order[:, :, None], axis=1)
            quads_mm[taken] = np.take_along_axis(quads_mm[taken], order[:, :, None], axis=1)
        edge = quads_mm[:, 1] - quads_mm[:, 0]
        angles = np.degrees(np.arctan2(edge[:, 1], edge[:, 0])) if n else np.zeros(0)
        for array in (quads, centers):
            array.setflags(write=False)  # rows are shared with the tracks handed out

        owner: list[_TrackState | None] = [None] * n
        started: list[int] = []
        matched: set[int] = set()
        for i, j in pairs:
            s = states[i]
            self._observe(s, j, quads[j], centers[j], float(angles[j]), float(scores[j]))
            matched.add(i)
            owner[j] = s
            if not s.confirmed and s.hits >= cfg.frames_to_confirm:
                self._confirm(s)
                started.append(s.track_id)

        ended: list[int] = []
        for i, s in enumerate(states):
            if i in matched:
                continue
            s.misses += 1
            s.detection_index = None
            if not s.confirmed or s.misses > cfg.frames_to_forget:
                if s.confirmed:
                    ended.append(s.track_id)
                del self._tracks[s.key]

        for j in range(n):
            if owner[j] is not None:
                continue
            s = _TrackState(self._next_key, self._frame)
            self._next_key += 1
            self._observe(s, j, quads[j], centers[j], float(angles[j]), float(scores[j]))
            self._tracks[s.key] = s
            owner[j] = s
            if cfg.frames_to_confirm <= 1:
                self._confirm(s)
                started.append(s.track_id)

        if image is not None and n:
            # Signatures in each track's own corner order, so a turn under a hand shows up.
            for o, sig in zip(owner, quad_signature(image, quads), strict=True):
                if o is not None:
                    o.signature = sig
        track_ids = np.array([o.track_id if o is not None and o.confirmed else -1 for o in owner], np.int64)

        return TrackUpdate(
            frame_index=self._frame,
            detections=detections.with_track_ids(track_ids),
            tracks=self.tracks,
            started=tuple(sorted(started)),
            ended=tuple(sorted(ended)),
        )

    def _confirm(self, s: _TrackState) -> None:
        s.confirmed = True
        s.track_id = self._next_id
        self._next_id += 1

    def _find(self, track_id: int) -> _TrackState | None:
        return next((s for s in self._tracks.values() if s.confirmed and s.track_id == track_id), None)

    def _observe(
        self, s: _TrackState, j: int, quad: np.ndarray, center: np.ndarray, angle: float, score: float
    ) -> None:
        if s.hits:
            gap = s.misses + 1
            g = self.config.velocity_gain
            velocity = g * (center - s.center) / gap + (1 - g) * s.velocity
            velocity.setflags(write=False)
            s.velocity = velocity
            # Angle kept continuous: a card turned step by step accumulates its whole turn.
            s.angle = s.angle + _wrap_deg(angle - s.angle)
        else:
            s.angle = angle
        s.corners = quad
        s.center = center
        s.peak = max(s.peak, score)
        s.score = score
        s.hits += 1
        s.misses = 0
        s.last_frame = self._frame
        s.detection_index = j

    # -- identification ----------------------------------------------------------------------

    def _reason(self, s: _TrackState) -> IdentifyReason | None:
        if s.ref_center is None:
            if s.unnamed_at is not None:
                frame, center, angle, signature = s.unnamed_at
                if self._changed(s, center, angle, signature) is None:
                    if self._frame - frame < self.config.retry_unnamed_frames:
                        return None  # asked already about this very look: wait
                    return IdentifyReason.RETRY
            return IdentifyReason.NEW
        changed = self._changed(s, s.ref_center, s.ref_angle, s.ref_signature)
        below = self.config.recheck_below
        if (changed is None and below is not None and s.ranked and s.ranked[0].score < below
                and s.checked_at is not None and self._frame - s.checked_at >= self.config.recheck_frames):
            return IdentifyReason.UNSURE
        return changed

    def _changed(self, s: _TrackState, center: np.ndarray, angle: float,
                 signature: np.ndarray | None) -> IdentifyReason | None:
        """How the track differs from a reference position, angle and look, if it does."""
        cfg = self.config
        dx, dy = (float(v) for v in s.center - center)
        if math.hypot(dx, dy) > cfg.reidentify_move_mm:
            return IdentifyReason.MOVED
        if abs(s.angle - angle) > cfg.reidentify_turn_deg:
            return IdentifyReason.TURNED
        if s.signature is not None and signature is not None:
            change = float(signature_distance(s.signature, signature))
            if change > cfg.reidentify_appearance:
                return IdentifyReason.APPEARANCE
        return None

    def tracks_needing_identification(self) -> tuple[IdentifyRequest, ...]:
        """Confirmed tracks seen in the latest frame that are new, moved, turned or changed
        look since they were last identified; by track id. Tracks not listed keep their
        evidence, so the identifier need not run on them."""
        requests = []
        for s in sorted(self._tracks.values(), key=lambda t: t.track_id):
            if not s.confirmed or s.detection_index is None:
                continue
            reason = self._reason(s)
            if reason is not None:
                requests.append(
                    IdentifyRequest(
                        track_id=s.track_id,
                        detection_index=s.detection_index,
                        corners=s.corners,
                        reason=reason,
                    )
                )
        return tuple(requests)

    def identified(
        self,
        track_id: int,
        candidates: Sequence[Candidate] | Mapping[str, float],
        *,
        rotated_180: bool = False,
        cut_wide: bool | None = None,
    ) -> None:
        """Record the identifier's candidates for a track seen in the latest frame, whether
        it read the card upside down in its crop, and how the crop was cut (`Track.cut_wide`).

        Evidence is an exponential average per face (`evidence_rate`); when the card's look
        changed since the previous identification (a flip or a swap) the old evidence is
        dropped instead, since it was about another face. The track's current position, angle
        and signature become the reference for the next `tracks_needing_identification`.
        """
        s = self._find(track_id)
        if s is None:
            raise TrackerError(f"CardTracker.identified: no track {track_id} (it may have ended)")
        scores = _candidate_scores(candidates, track_id)
        rate = self.config.evidence_rate
        if not s.evidence or self._reason(s) == IdentifyReason.APPEARANCE:
            evidence = dict(scores)
        else:
            evidence = {
                face: (1 - rate) * s.evidence.get(face, 0.0) + rate * scores.get(face, 0.0)
                for face in s.evidence.keys() | scores.keys()
            }
        self._set_evidence(s, evidence)
        s.rotated_180 = rotated_180
        s.turn_known = True
        s.cut_wide = cut_wide
        s.unnamed_at = None
        s.checked_at = self._frame
        s.ref_center = s.center.copy()
        s.ref_angle = s.angle
        s.ref_signature = None if s.signature is None else s.signature.copy()

    def _set_evidence(self, s: _TrackState, evidence: Mapping[str, float]) -> None:
        """Keep the faces of `evidence` with at least `min_evidence`, and rank them."""
        s.evidence = {f: v for f, v in evidence.items() if v >= self.config.min_evidence}
        ranked = sorted(s.evidence.items(), key=lambda kv: (-kv[1], kv[0]))
        s.ranked = tuple(Candidate(face=f, score=min(1.0, v)) for f, v in ranked if v > 0)

    def unnamed(self, track_id: int) -> None:
        """Record that the identifier could not name a track, as it looks in the latest frame:
        one never named is not asked again for `retry_unnamed_frames` frames unless the card
        moves, turns or changes look; a named one keeps its evidence, and an unsure one waits
        `recheck_frames` again.

        A named track whose look changed (`IdentifyReason.APPEARANCE`) and that the finder now
        sees fainter than `TrackerConfig.faint_below` loses its evidence and becomes a track
        never named, found as surely as it is now (`Track.peak_score`); one found surely keeps
        its name, in doubt (`TrackerConfig.changed_doubt`), and its way round as last read is
        no longer known (`Track.turn_known`)."""
        s = self._find(track_id)
        if s is None:
            raise TrackerError(f"CardTracker.unnamed: no track {track_id} (it may have ended)")
        faint, doubt = self.config.faint_below, self.config.changed_doubt
        changed = s.ref_center is not None and self._reason(s) == IdentifyReason.APPEARANCE
        if changed and faint is not None and s.score < faint:
            s.evidence = {}
            s.ranked = ()
            s.ref_center = None
            s.ref_signature = None
            s.peak = s.score
        elif changed and doubt is not None and s.ranked and s.ranked[0].score > doubt:
            scale = doubt / s.ranked[0].score
            self._set_evidence(s, {f: v * scale for f, v in s.evidence.items()})
            s.turn_known = False
        s.checked_at = self._frame
        if s.ref_center is None:
            s.unnamed_at = (self._frame, s.center.copy(), s.angle,
                            None if s.signature is None else s.signature.copy())

    # -- views -------------------------------------------------------------------------------

    @property
    def tracks(self) -> tuple[Track, ...]:
        """Confirmed tracks (including ones missed for up to `frames_to_forget` frames)."""
        return tuple(
            _view(s) for s in sorted(self._tracks.values(), key=lambda t: t.track_id) if s.confirmed
        )

    def track(self, track_id: int) -> Track | None:
        """One confirmed track by id, None if unknown or forgotten."""
        s = self._find(track_id)
        return None if s is None else _view(s)

    def reset(self) -> None:
        """Forget every track (ids keep counting up: an id is never reused)."""
        self._tracks.clear()


def _colour_summary(signatures: np.ndarray) -> np.ndarray:
    """Mean normalised colour of each card, the same whichever corner comes first."""
    return np.asarray(signatures.reshape(len(signatures), -1, 3).mean(axis=1))


def _candidate_scores(
    candidates: Sequence[Candidate] | Mapping[str, float], track_id: int
) -> dict[str, float]:
    items = (
        list(candidates.items())
        if isinstance(candidates, Mapping)
        else [(c.face, c.score) for c in candidates]
    )
    scores: dict[str, float] = {}
    for face, score in items:
        if not isinstance(face, str) or not face:
            raise TrackerError(f"identified(track {track_id}): face ids are non-empty strings, got {face!r}")
        if not (isinstance(score, int | float) and 0.0 <= float(score) <= 1.0):
            raise TrackerError(
                f"identified(track {track_id}): score of {face!r} must lie in [0, 1], got {score!r}"
            )
        scores[face] = max(scores.get(face, 0.0), float(score))
    return scores


def _view(s: _TrackState) -> Track:
    angle = _wrap_deg(s.angle)
    return Track(
        track_id=s.track_id,
        confirmed=s.confirmed,
        hits=s.hits,
        misses=s.misses,
        first_frame=s.first_frame,
        last_frame=s.last_frame,
        detection_index=s.detection_index,
        corners=s.corners,
        center_mm=s.center,
        angle_deg=180.0 if angle == -180.0 else angle,
        velocity_mm=s.velocity,
        candidates=s.ranked,
        rotated_180=s.rotated_180,
        turn_known=s.turn_known,
        peak_score=s.peak,
        cut_wide=s.cut_wide,
    )
