"""The settle gate: per zone, is the table still there and free of hands, so it may be read?

Every frame is shrunk (`downscale`, averaging blocks of pixels, which removes most camera
noise) and compared with the previous one: pixels whose grey level changed by more than
`motion_threshold` (after removing the frame's median change, so auto-exposure steps do not
count) are moving, and each zone's motion energy is the fraction of its pixels that move, with
hysteresis (`move_above` / `still_below`). Hands are found without a learned model: pixels
that differ from a slowly learned background form blobs, and a blob is a hand or arm when it
holds skin-coloured pixels (YCrCb box) that moved within `hand_memory_frames`, or when it
reaches the image border (arms come in from the players' side) with skin or recent motion in
it. The background remembers what each pixel showed before it last learned something there:
a pixel that shows that again and keeps still for `still_frames`, in a blob most of which
does (a still sleeve withdrawn, a card picked up), is the table coming back and background
from then on, so that nothing leaves a ghost of itself. A zone is settled after `still_frames`
consecutive still frames without a hand over it, each zone on its own, so a hand over one zone
does not freeze another. When a zone settles its content is compared with what it showed the
previous time it settled, and zones that changed are reported once, in
`SettleState.changed_since_last_settle`, for the snapshot to read. The gate works on a 160×90
picture of a 1280×720 frame, under a millisecond per frame.

Trade-offs of the heuristic: a hand held perfectly still for `absorb_frames` becomes scenery;
a skin-coloured card is taken for a hand until it has lain still for `hand_memory_frames` (or
for `absorb_frames` if it touches the image border); a lasting local light change (a lamp)
blocks the zones it touches for `absorb_frames`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

import cv2
import numpy as np
from numpy.typing import ArrayLike


class SettleError(ValueError):
    """A settle-gate configuration, zone or frame that cannot be used."""


@dataclass(frozen=True, slots=True, kw_only=True)
class SettleConfig:
    """Settle-gate parameters and what each trades.

    - `downscale`: integer shrink factor before anything else. Larger is cheaper and calmer
      under noise, but small zones and thin fingers get only a few pixels.
    - `still_frames`: consecutive still, hand-free frames before a zone counts as settled.
      Longer waits out hesitations (a hand pausing above a card) at the cost of latency
      (8 frames = 0.27 s at 30 fps).
    - `motion_threshold`: grey-level change of a shrunk pixel that counts as motion. Low
      catches slow slides; too low lets sensor noise and compression flicker count.
    - `move_above`, `still_below`: fraction of a zone's pixels moving that makes it moving,
      and below which it is still again (hysteresis against a flickering pixel or two).
    - `foreground_threshold`: colour difference from the learned background that makes a
      pixel a hand candidate.
    - `skin_cr`, `skin_cb`: YCrCb box of skin colours (covers light to dark skin; also wood
      and some card art, which is why skin alone never makes a hand).
    - `hand_memory_frames`: a skin-coloured blob that moved within this many frames is a hand.
      Longer keeps a hand that pauses; a skin-coloured card is held as a hand this long.
    - `absorb_frames`: anything unmoving this long becomes background, even under the hand
      mask (recovers from lamps, a resting arm, a mistaken hand).
    - `hand_margin`: shrunk pixels added around the hand mask (fingertips, shadows).
    - `arm_min_pixels`: shrunk pixels a still blob at the picture's edge needs to be taken for
      an arm resting there (a forearm is tens of shrunk pixels long). A smaller still blob at
      the edge (a cup put down, the cloth it uncovered, a phone) is scenery: otherwise it
      blocks the zones beside it for `absorb_frames`. Moving or moving-skin blobs are hands
      whatever their size.
    - `scenery_share`: the share of a foreground blob's pixels that must be still and show
      again what the background held before it last learned something there for them to be
      taken for the table coming back (a sleeve withdrawn). A hand as pale as a wooden table
      matches it in a few pixels only, and they stay the hand's.
    - `change_threshold`, `change_fraction`: grey-level difference and fraction of a zone's
      pixels that make a newly settled zone count as changed since it last settled.
    - `reach_depth`: how far back from a hand's far end its reach point lies, as a fraction
      of a typical zone's side (a card's size on the picture). The fingertips overshoot the
      card they take; the palm is over it. Too small names the zone beyond, too large the
      zone under the wrist.
    """

    downscale: int = 8
    still_frames: int = 8
    motion_threshold: float = 10.0
    move_above: float = 0.02
    still_below: float = 0.005
    foreground_threshold: float = 30.0
    skin_cr: tuple[int, int] = (135, 180)
    skin_cb: tuple[int, int] = (77, 127)
    hand_memory_frames: int = 8
    absorb_frames: int = 150
    hand_margin: int = 1
    hand_min_pixels: int = 3
    arm_min_pixels: int = 60
    scenery_share: float = 0.8
    change_threshold: float = 18.0
    change_fraction: float = 0.03
    reach_depth: float = 0.5

    def __post_init__(self) -> None:
        if self.downscale < 1:
            raise SettleError("SettleConfig.downscale: must be a whole number, 1 or more")
        for name in ("still_frames", "hand_memory_frames", "absorb_frames", "hand_min_pixels",
                     "arm_min_pixels"):
            if getattr(self, name) < 1:
                raise SettleError(f"SettleConfig.{name}: must be at least 1")
        if self.hand_margin < 0:
            raise SettleError("SettleConfig.hand_margin: must be 0 or more")
        if not 0.0 <= self.still_below <= self.move_above <= 1.0:
            raise SettleError(
                "SettleConfig: need 0 <= still_below <= move_above <= 1, got "
                f"still_below={self.still_below}, move_above={self.move_above}"
            )
        if not 0.0 < self.scenery_share <= 1.0:
            raise SettleError("SettleConfig.scenery_share: must be more than 0 and at most 1")
        for name in ("motion_threshold", "foreground_threshold", "change_threshold", "reach_depth"):
            if not getattr(self, name) > 0:
                raise SettleError(f"SettleConfig.{name}: must be more than 0")
        for name in ("skin_cr", "skin_cb"):
            lo, hi = getattr(self, name)
            if not 0 <= lo <= hi <= 255:
                raise SettleError(f"SettleConfig.{name}: need 0 <= low <= high <= 255")


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class SettleState:
    """The gate's verdict for one frame."""

    frame_index: int
    settled: frozenset[str]  # zones still and free of hands for `still_frames` frames
    changed_since_last_settle: frozenset[str]  # zones that settled in this frame with new content
    hands_over: frozenset[str]  # zones with a hand or arm over them in this frame
    reached: frozenset[str]  # zones a hand reaches into in this frame (its palm, not its arm)
    motion: Mapping[str, float]  # fraction of each zone's pixels moving in this frame
    hand_mask: np.ndarray  # bool, at 1/`scale` of the frame size
    scale: int

    def hand_mask_full(self, shape: tuple[int, ...]) -> np.ndarray:
        """The hand mask resized to a frame of `shape` (h, w, ...), for drawing."""
        mask = self.hand_mask.astype(np.uint8) * 255
        return cv2.resize(mask, (shape[1], shape[0]), interpolation=cv2.INTER_NEAREST) > 0


# -- stages ----------------------------------------------------------------------------------


def shrink(frame: np.ndarray, factor: int) -> np.ndarray:
    """BGR frame `factor` times smaller on each side (at least 1 px), averaged over blocks.

    For an even factor of 4 or more, a bilinear step to twice the target size (which
    averages 2×2 pixels of each block) is followed by 2× area averaging: each output pixel
    averages 16 input pixels, at a quarter of the cost of a full area resize.
    """
    h, w = frame.shape[:2]
    if factor == 1:
        return frame
    size = (max(1, w // factor), max(1, h // factor))
    if factor >= 4 and factor % 2 == 0 and min(size) > 1:
        half = cv2.resize(frame, (size[0] * 2, size[1] * 2), interpolation=cv2.INTER_LINEAR)
        return cv2.resize(half, size, interpolation=cv2.INTER_AREA)
    return cv2.resize(frame, size, interpolation=cv2.INTER_AREA)


def motion_mask(grey: np.ndarray, previous: np.ndarray, threshold: float) -> np.ndarray:
    """Bool mask of pixels whose grey level changed, after removing the median change (an
    exposure or white-balance step shifts every pixel alike)."""
    diff = cv2.subtract(grey, previous, dtype=cv2.CV_16S)
    offset = int(np.median(diff[::4, ::4]))
    if offset:
        diff -= np.int16(offset)
    np.abs(diff, out=diff)
    return diff > threshold


def foreground_mask(small: np.ndarray, background: np.ndarray, threshold: float) -> np.ndarray:
    """Bool mask of pixels whose colour differs from the background (largest channel
    difference, after removing each channel's median difference)."""
    sample = small[::6, ::6].reshape(-1, 3).astype(np.int16) - background[::6, ::6].reshape(-1, 3)
    offset = np.median(sample, axis=0)
    scalar = (*(float(o) for o in offset), 0.0)
    shifted = cv2.add(background, scalar) if offset.any() else background  # type: ignore[call-overload]
    b, g, r = cv2.split(cv2.absdiff(small, shifted))
    return cv2.max(cv2.max(b, g), r) > threshold


def skin_mask(small: np.ndarray, config: SettleConfig) -> np.ndarray:
    """Bool mask of skin-coloured pixels: a fixed Cr/Cb box in YCrCb, any brightness."""
    ycrcb = cv2.cvtColor(small, cv2.COLOR_BGR2YCrCb)
    lo = (0, config.skin_cr[0], config.skin_cb[0])
    hi = (255, config.skin_cr[1], config.skin_cb[1])
    return cv2.inRange(ycrcb, lo, hi) > 0


def hand_mask(
    foreground: np.ndarray, skin: np.ndarray, recent_motion: np.ndarray, config: SettleConfig
) -> np.ndarray:
    """Bool mask of hands and arms, grown by `hand_margin`.

    A foreground blob is a hand when it holds skin-coloured pixels that moved recently, or
    when it reaches the image border (an arm comes in from a player's side) and holds recent
    motion, or skin over an arm's size (`arm_min_pixels`: an arm resting there). A still, skin-free blob is never a hand, even at the border: a card that
    was put down at the edge of the picture settles like any other.
    """
    count, labels, stats, _ = cv2.connectedComponentsWithStats(
        foreground.view(np.uint8), connectivity=8
    )
    if count <= 1:
        return np.zeros_like(foreground)
    h, w = foreground.shape
    x, y, bw, bh, area = (stats[:, k] for k in range(5))
    at_border = (x == 0) | (y == 0) | (x + bw >= w) | (y + bh >= h)
    least = config.hand_min_pixels
    skin_px = np.bincount(labels[skin], minlength=count)
    moving_px = np.bincount(labels[recent_motion], minlength=count)
    moving_skin_px = np.bincount(labels[skin & recent_motion], minlength=count)
    resting_arm = (skin_px >= least) & (area >= config.arm_min_pixels)
    is_hand = (area >= least) & (
        (moving_skin_px >= least) | (at_border & (resting_arm | (moving_px >= least)))
    )
    is_hand[0] = False  # label 0 is the background
    mask = is_hand[labels]
    if config.hand_margin and mask.any():
        size = 2 * config.hand_margin + 1
        kernel = np.ones((size, size), np.uint8)
        mask = np.asarray(cv2.dilate(mask.view(np.uint8), kernel) > 0)
    return np.asarray(mask, bool)


def mostly(mask: np.ndarray, part: np.ndarray, share: float) -> np.ndarray:
    """Bool mask of the blobs of `mask` (8-connected) at least `share` of whose pixels are in
    `part`."""
    count, labels = cv2.connectedComponents(mask.view(np.uint8), connectivity=8)
    if count <= 1:
        return np.zeros_like(mask)
    inside = np.bincount(labels[part], minlength=count)
    size = np.bincount(labels.ravel(), minlength=count)
    keep = inside >= share * size
    keep[0] = False  # label 0 is what `mask` leaves out
    return np.asarray(keep[labels], bool)


def reach_points(hands: np.ndarray, depth: float) -> list[tuple[int, int]]:
    """(x, y) of the point each hand of the mask reaches to. An arm enters the picture at its
    border and the hand is its far end: the point is the mean of the blob's pixels within
    `depth` pixels of the one farthest from where it enters, rounded. A hand clear of the
    border (its arm unseen) reaches to its middle."""
    count, labels = cv2.connectedComponents(hands.view(np.uint8), connectivity=8)
    if count <= 1:
        return []
    h, w = hands.shape
    border = np.zeros_like(hands)
    border[0, :] = border[-1, :] = True
    border[:, 0] = border[:, -1] = True
    out: list[tuple[int, int]] = []
    for k in range(1, count):
        ys, xs = np.nonzero(labels == k)
        pts = np.column_stack([xs, ys]).astype(np.float64)
        entry = border[ys, xs]
        if not entry.any():
            x, y = pts.mean(axis=0)
        else:
            far = np.hypot(*(pts - pts[entry].mean(axis=0)).T)
            x, y = pts[far >= far.max() - depth].mean(axis=0)
        out.append((min(max(round(x), 0), w - 1), min(max(round(y), 0), h - 1)))
    return out


def rasterise_zones(
    zones: Mapping[str, np.ndarray], frame_shape: tuple[int, int], factor: int
) -> np.ndarray:
    """(zones, pixels) bool matrix of the shrunk frame; a zone smaller than one shrunk pixel
    gets the pixel under its centre."""
    h, w = max(1, frame_shape[0] // factor), max(1, frame_shape[1] // factor)
    out = np.zeros((len(zones), h * w), bool)
    shift = 4
    for k, polygon in enumerate(zones.values()):
        mask = np.zeros((h, w), np.uint8)
        pts = np.round(polygon / factor * (1 << shift)).astype(np.int32)
        cv2.fillPoly(mask, [pts], 1, lineType=cv2.LINE_8, shift=shift)
        if not mask.any():
            cx, cy = (polygon.mean(axis=0) / factor).astype(int)
            mask[min(max(cy, 0), h - 1), min(max(cx, 0), w - 1)] = 1
        out[k] = mask.ravel() > 0
    return out


def _check_zones(zones: Mapping[str, ArrayLike]) -> dict[str, np.ndarray]:
    if not isinstance(zones, Mapping) or not zones:
        raise SettleError("SettleGate: give the zones as a mapping of name -> polygon (image px)")
    out: dict[str, np.ndarray] = {}
    for name, polygon in zones.items():
        if not isinstance(name, str) or not name:
            raise SettleError(f"SettleGate: zone names are non-empty strings, got {name!r}")
        try:
            pts = np.asarray(polygon, np.float64)
        except (TypeError, ValueError) as exc:
            raise SettleError(f"zone {name!r}: polygon is not numeric ({exc})") from exc
        if pts.ndim != 2 or pts.shape[1] != 2 or len(pts) < 3:
            raise SettleError(
                f"zone {name!r}: polygon must be (k, 2) image points with k >= 3, got {pts.shape}"
            )
        if not np.isfinite(pts).all():
            raise SettleError(f"zone {name!r}: polygon has NaN or infinite points")
        out[name] = pts
    return out


# -- the gate --------------------------------------------------------------------------------


class SettleGate:
    """Per-zone stillness and hand gating for one camera; feed it every frame in order."""

    def __init__(self, zones: Mapping[str, ArrayLike], config: SettleConfig | None = None) -> None:
        self.config = config or SettleConfig()
        self._zones = _check_zones(zones)
        self._names = tuple(self._zones)
        self._frame_shape: tuple[int, int] | None = None
        self._index = -1
        self.reset()

    @property
    def zones(self) -> tuple[str, ...]:
        return self._names

    def reset(self) -> None:
        """Forget everything learned (background, references); zones start unsettled."""
        z = len(self._names)
        self._prev: np.ndarray | None = None
        self._prev_colour: np.ndarray | None = None
        self._background: np.ndarray | None = None
        self._scenery: np.ndarray | None = None
        self._still_age: np.ndarray | None = None
        self._zone_masks = np.zeros((z, 0), bool)
        self._zone_matrix = np.zeros((z, 0), np.float32)
        self._zone_sizes = np.ones(z)
        self._moving = np.ones(z, bool)
        self._still_run = np.zeros(z, np.int64)
        self._settled = np.zeros(z, bool)
        self._reference: list[np.ndarray | None] = [None] * z
        self._reach_px = 1.0
        self._grid_w = 1
        self._frame_shape = None  # the next frame lays the zones out again

    def _start(self, frame_shape: tuple[int, int]) -> None:
        self.reset()
        self._frame_shape = frame_shape
        self._zone_masks = rasterise_zones(self._zones, frame_shape, self.config.downscale)
        self._zone_sizes = self._zone_masks.sum(axis=1).astype(np.float64)
        self._zone_matrix = self._zone_masks.astype(np.float32)
        sides = np.sqrt(self._zone_sizes[self._zone_sizes > 1])
        typical = float(np.median(sides)) if sides.size else 4.0
        self._reach_px = max(1.0, self.config.reach_depth * typical)
        self._grid_w = max(1, frame_shape[1] // self.config.downscale)

    def update(self, frame: np.ndarray, *, frame_index: int | None = None) -> SettleState:
        """Take one BGR frame; returns which zones are settled and which just settled changed."""
        if not isinstance(frame, np.ndarray) or frame.ndim != 3 or frame.shape[2] != 3:
            shape = getattr(frame, "shape", None)
            raise SettleError(f"SettleGate.update: expected a BGR image (h, w, 3), got shape {shape}")
        if frame.dtype != np.uint8:
            raise SettleError(f"SettleGate.update: expected a uint8 image, got {frame.dtype}")
        self._index = self._index + 1 if frame_index is None else int(frame_index)
        cfg = self.config
        shape = (frame.shape[0], frame.shape[1])
        if shape != self._frame_shape:
            self._start(shape)
        small = shrink(frame, cfg.downscale)
        grey = cv2.cvtColor(small, cv2.COLOR_BGR2GRAY)
        if (self._prev is None or self._prev_colour is None or self._background is None
                or self._scenery is None or self._still_age is None):
            self._prev = grey
            self._prev_colour = small
            self._background = small.copy()
            self._scenery = small.copy()
            self._still_age = np.zeros(grey.shape, np.int32)
        moving = motion_mask(grey, self._prev, cfg.motion_threshold)
        # A pixel's stillness ends when its colour changes, not only its grey level: an arm of
        # the cloth's brightness moves no grey level, and pixels long still would let it into
        # the background at once (`absorb_frames`), to haunt the picture as a resting arm
        # once it has gone.
        recoloured = foreground_mask(small, self._prev_colour, cfg.motion_threshold)
        self._prev = grey
        self._prev_colour = small
        age = self._still_age
        age += 1
        age[moving | recoloured] = 0
        np.minimum(age, cfg.absorb_frames, out=age)
        foreground = foreground_mask(small, self._background, cfg.foreground_threshold)
        # What the background showed before it last learned something there (`_scenery`)
        # and shows again is the table coming back: a still sleeve learned as scenery leaves
        # no ghost of itself when it goes, which on a skin-coloured table (wood) would be
        # taken for an arm resting at the edge. Only a pixel that has stayed still is (an
        # arm coming in moves), and only within a blob that is mostly scenery again
        # (`scenery_share`): a card carried back over the place it was lifted from, or a
        # hand's pixel as pale as a wooden table, stays part of the hand around it.
        back = foreground & (age >= cfg.still_frames)
        if back.any():  # often none: a still pixel is learned unless a hand lies on it
            back &= ~foreground_mask(small, self._scenery, cfg.foreground_threshold)
            back &= mostly(foreground, back, cfg.scenery_share)
            self._background[back] = small[back]
            foreground &= ~back
        skin = skin_mask(small, cfg)
        hands = hand_mask(foreground, skin, age < cfg.hand_memory_frames, cfg)
        # Learn the background where nothing moves and no hand is, or where nothing moved
        # for a long time whatever it is.
        absorb = ((age >= cfg.still_frames) & ~hands) | (age >= cfg.absorb_frames)
        learned = absorb & foreground
        self._scenery[learned] = self._background[learned]
        cv2.copyTo(small, absorb.view(np.uint8), self._background)

        moving_fraction = (self._zone_matrix @ moving.ravel().astype(np.float32)) / self._zone_sizes
        hand_pixels = self._zone_matrix @ hands.ravel().astype(np.float32)
        hand_over = hand_pixels > 0
        return self._decide(grey, moving_fraction, hand_over, hands)

    def _reached(self, hands: np.ndarray) -> frozenset[str]:
        """Zones under the reach point of a hand (`reach_points`)."""
        if not hands.any():
            return frozenset()
        out: set[str] = set()
        for x, y in reach_points(hands, self._reach_px):
            under = np.nonzero(self._zone_masks[:, y * self._grid_w + x])[0]
            out.update(self._names[k] for k in under)
        return frozenset(out)

    def _decide(
        self, grey: np.ndarray, moving_fraction: np.ndarray, hand_over: np.ndarray, hands: np.ndarray
    ) -> SettleState:
        cfg = self.config
        self._moving = np.where(
            self._moving, moving_fraction >= cfg.still_below, moving_fraction > cfg.move_above
        )
        still = ~self._moving & ~hand_over
        self._still_run = np.where(still, self._still_run + 1, 0)
        now_settled = self._still_run >= cfg.still_frames
        changed: list[str] = []
        flat = grey.ravel().astype(np.float32)
        for k in np.nonzero(now_settled & ~self._settled)[0]:
            content = flat[self._zone_masks[k]]
            ref = self._reference[k]
            if ref is None or _content_changed(content, ref, cfg):
                changed.append(self._names[k])
            self._reference[k] = content.copy()
        self._settled = now_settled
        return SettleState(
            frame_index=self._index,
            settled=frozenset(n for n, s in zip(self._names, now_settled, strict=True) if s),
            changed_since_last_settle=frozenset(changed),
            hands_over=frozenset(n for n, h in zip(self._names, hand_over, strict=True) if h),
            reached=self._reached(hands),
            motion=MappingProxyType(
                {n: float(m) for n, m in zip(self._names, moving_fraction, strict=True)}
            ),
            hand_mask=hands,
            scale=cfg.downscale,
        )


def _content_changed(content: np.ndarray, reference: np.ndarray, config: SettleConfig) -> bool:
    diff = content - reference
    offset = float(np.median(diff)) if diff.size else 0.0
    return float(np.mean(np.abs(diff - offset) > config.change_threshold)) > config.change_fraction
