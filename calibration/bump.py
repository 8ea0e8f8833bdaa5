"""Noticing that the camera was bumped while tracking, and re-fitting the table when it was.

`BumpMonitor` is fed every frame and checks the corner markers every `check_every` frames,
cheaply: it looks for each marker only in a small window around where the profile expects
it, and falls back to a downscaled whole frame for markers not found there. A check compares
where the markers are with where they should be. A move larger than `move_threshold_px` must
persist for `confirm_checks` consecutive checks, with the markers agreeing among themselves
(the camera has settled), before the homography is re-fitted and a `CameraBumped` event is
returned with the new profile; a hand brushing one marker, or a camera still swinging, does
not re-fit. When too few markers are visible to check, the status turns `unverified`, and
after `hidden_checks` such checks, or when the markers moved but too few remain to re-fit,
`camera-moved`, which the overlay shows so that someone re-runs calibration or uncovers the
markers. The monitor is a small state machine with no clock: its timeline is frame counts.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

import numpy as np

from calibration.errors import DetectionError
from calibration.homography import ErrorFigures, fit_homography
from calibration.markers import TABLE_MARKER_IDS, MarkerDetections, detect_markers, make_detector
from calibration.profile import MarkerObservation, TableProfile


class BumpStatus(StrEnum):
    """What the monitor knows about the camera after its latest check."""

    STEADY = "steady"  # markers are where the profile expects them
    SUSPECT = "suspect"  # markers moved; waiting for the move to persist
    RECALIBRATED = "recalibrated"  # a lasting move was re-fitted at this check
    UNVERIFIED = "unverified"  # too few markers visible to check, not for long yet
    CAMERA_MOVED = "camera-moved"  # moved and cannot re-fit, or markers hidden too long


@dataclass(frozen=True, slots=True, kw_only=True)
class BumpConfig:
    """Tuning, in frames, checks and pixels.

    - `check_every`: frames between checks (more = cheaper, slower to notice a bump).
    - `move_threshold_px`: mean corner displacement that counts as a move (lower catches
      smaller bumps but mistakes detection noise and motion blur for one).
    - `confirm_checks`: consecutive moved checks before re-fitting (higher = fewer false
      re-fits from a hand on a marker, later recovery).
    - `settle_px`: how far apart the markers' positions over those checks may be for the
      camera to count as settled.
    - `hidden_checks`: consecutive checks with fewer than `min_markers` visible before the
      status becomes camera-moved.
    - `min_markers`: markers needed to verify the camera and to re-fit (3 keeps a re-fit
      within a millimetre; 2 is possible but weaker).
    - `roi_scale`: search window around an expected marker, in marker sizes on each side.
    - `coarse_downscale`: scale of the whole-frame fallback search.
    """

    check_every: int = 15
    move_threshold_px: float = 3.0
    confirm_checks: int = 3
    settle_px: float = 1.5
    hidden_checks: int = 8
    min_markers: int = 3
    roi_scale: float = 1.0
    coarse_downscale: float = 0.5

    def __post_init__(self) -> None:
        if self.check_every < 1 or self.confirm_checks < 1 or self.hidden_checks < 1:
            raise ValueError("check_every, confirm_checks and hidden_checks must be at least 1")
        if not 2 <= self.min_markers <= 4:
            raise ValueError("min_markers must be 2, 3 or 4")


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class CameraBumped:
    """The camera moved and the table was re-fitted: use `new_profile` from now on."""

    frame_index: int
    displacement_px: float
    old_profile: TableProfile
    new_profile: TableProfile
    errors: ErrorFigures


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class BumpReport:
    """The monitor's answer for one frame."""

    frame_index: int
    checked: bool
    status: BumpStatus
    profile: TableProfile
    displacement_px: float | None = None
    visible: tuple[int, ...] = ()
    event: CameraBumped | None = None


@dataclass(slots=True)
class _State:
    status: BumpStatus = BumpStatus.STEADY
    moved: list[dict[int, np.ndarray]] = field(default_factory=list)
    hidden: int = 0


class BumpMonitor:
    """Watches the corner markers while tracking (see module docstring)."""

    def __init__(self, profile: TableProfile, config: BumpConfig | None = None) -> None:
        self.config = config or BumpConfig()
        self._profile = profile
        self._expected = profile.expected_marker_corners()
        self._detector = make_detector()
        self._frame_index = -1
        self._state = _State()

    @property
    def profile(self) -> TableProfile:
        """The profile in force now."""
        return self._profile

    @property
    def status(self) -> BumpStatus:
        """The status after the latest check."""
        return self._state.status

    def update(self, frame: np.ndarray) -> BumpReport:
        """Feed one frame; checks the markers on every `check_every`-th frame."""
        self._frame_index += 1
        if self._frame_index % self.config.check_every != 0:
            return BumpReport(
                frame_index=self._frame_index, checked=False, status=self._state.status,
                profile=self._profile,
            )
        return self.check(frame)

    def check(self, frame: np.ndarray) -> BumpReport:
        """Check this frame now, whatever the schedule."""
        found = self.find_markers(frame).by_id()
        cfg = self.config
        state = self._state
        displacement = {
            i: float(np.linalg.norm(c - self._expected[i], axis=1).mean()) for i, c in found.items()
        }
        worst = max(displacement.values()) if displacement else None
        visible = tuple(sorted(found))
        moved = worst is not None and worst > cfg.move_threshold_px
        event = None
        if len(found) < cfg.min_markers:
            if moved:
                state.moved.append(found)
                state.status = (
                    BumpStatus.CAMERA_MOVED if len(state.moved) >= cfg.confirm_checks else BumpStatus.SUSPECT
                )
            else:
                state.moved.clear()
                state.hidden += 1
                if state.hidden >= cfg.hidden_checks:
                    state.status = BumpStatus.CAMERA_MOVED
                elif state.status is not BumpStatus.CAMERA_MOVED:
                    state.status = BumpStatus.UNVERIFIED
        elif not moved:
            state.hidden = 0
            state.moved.clear()
            state.status = BumpStatus.STEADY
        else:
            state.hidden = 0
            state.moved.append(found)
            del state.moved[:-cfg.confirm_checks]
            if len(state.moved) >= cfg.confirm_checks and self._settled(state.moved):
                event = self._refit(state.moved, worst or 0.0)
                state.moved.clear()
                state.status = BumpStatus.RECALIBRATED if event else BumpStatus.CAMERA_MOVED
            else:
                state.status = BumpStatus.SUSPECT
        return BumpReport(
            frame_index=self._frame_index, checked=True, status=state.status, profile=self._profile,
            displacement_px=worst, visible=visible, event=event,
        )

    def _settled(self, checks: list[dict[int, np.ndarray]]) -> bool:
        common = set(TABLE_MARKER_IDS)
        for c in checks:
            common &= set(c)
        if len(common) < self.config.min_markers:
            return False
        for i in common:
            stack = np.stack([c[i] for c in checks])
            if np.linalg.norm(stack - np.median(stack, axis=0), axis=2).max() > self.config.settle_px:
                return False
        return True

    def _refit(self, checks: list[dict[int, np.ndarray]], displacement: float) -> CameraBumped | None:
        common = set(TABLE_MARKER_IDS)
        for c in checks:
            common &= set(c)
        corners = {i: np.median(np.stack([c[i] for c in checks]), axis=0) for i in sorted(common)}
        old = self._profile
        try:
            fit = fit_homography(corners, old.geometry, old.lens, min_markers=self.config.min_markers)
        except DetectionError:
            return None
        observations = tuple(
            MarkerObservation(
                id=i, corners_px=corners[i], frames=len(checks),
                spread_px=float(np.linalg.norm(np.stack([c[i] for c in checks]) - corners[i], axis=2).max()),
                rotation=fit.rotations.get(i, 0),
            )
            for i in sorted(corners)
        )
        new = old.replace(homography=fit.homography, observations=observations, errors=fit.errors)
        self._profile = new
        self._expected = new.expected_marker_corners()
        return CameraBumped(
            frame_index=self._frame_index, displacement_px=displacement, old_profile=old,
            new_profile=new, errors=fit.errors,
        )

    def find_markers(self, frame: np.ndarray) -> MarkerDetections:
        """The table markers in `frame`: near their expected places first, then anywhere."""
        found: dict[int, np.ndarray] = {}
        h, w = frame.shape[:2]
        for marker_id, expected in self._expected.items():
            roi = self._roi(expected, w, h)
            if roi is None:
                continue
            hits = detect_markers(frame, self._detector, roi=roi, wanted=(marker_id,))
            if len(hits):
                found[marker_id] = hits.corners[0]
        missing = [i for i in TABLE_MARKER_IDS if i not in found]
        if missing:
            coarse = detect_markers(
                frame, self._detector, downscale=self.config.coarse_downscale, refine=False,
                wanted=tuple(missing),
            )
            for marker_id, corners in coarse.by_id().items():
                roi = self._roi(corners, w, h)
                fine = detect_markers(frame, self._detector, roi=roi, wanted=(marker_id,)) if roi else coarse
                found[marker_id] = fine.corners[0] if len(fine) else corners
        ids = np.array(sorted(found), np.int64)
        corners_arr = np.stack([found[i] for i in ids]) if len(ids) else np.zeros((0, 4, 2))
        return MarkerDetections(ids=ids, corners=corners_arr)

    def _roi(self, corners: np.ndarray, width: int, height: int) -> tuple[int, int, int, int] | None:
        x0, y0 = corners.min(axis=0)
        x1, y1 = corners.max(axis=0)
        pad = max(12.0, self.config.roi_scale * max(x1 - x0, y1 - y0))
        x0, y0 = max(0, int(x0 - pad)), max(0, int(y0 - pad))
        x1, y1 = min(width, int(np.ceil(x1 + pad))), min(height, int(np.ceil(y1 + pad)))
        if x1 - x0 < 16 or y1 - y0 < 16:
            return None
        return x0, y0, x1 - x0, y1 - y0
