"""The live vision pipeline: one camera frame in, the game moves it completes out.

Small named stages, each a function of its inputs and an explicit config, each timed by a
shared `StageTimer`, in this order: `camera` (the corner markers checked for a bumped camera),
`find` (the card finder: four corners per card), `track` (stable ids, the corners put in table
millimetres by the calibration), `settle` (per zone: still and free of hands, with the zones
projected into the image), `identify` (only the tracks that are new, moved, turned or changed
look, and the cards of a zone that just settled with new content: each card is rectified from
its corners to the identifier's input size, embedded and matched in the art pack's gallery, and
the candidates go back to the tracker as evidence), `zones` (cards into the layout's zones, top
first) and, when the table may be read and a zone shows something new, `snapshot` (a
`TableSnapshot`: per readable zone its visible cards, top first, with face candidates) and
`interpret` (`Interpreter.observe`: the legal moves that explain it, from the current belief).
Uncertainty travels forward: vision hands over candidates, the rules decide. `Pipeline` only
loads models and wires the stages; the finder and the identifier are parameters typed by the
small protocols `CardFinder` and `CardIdentifier`, so everything downstream of the models can
be checked with the truth stand-ins `TruthOracleFinder` / `TruthOracleIdentifier` (test
doubles that read the answers from a truth file; never for play). `profile_from_truth` and
`setup_from_truth` read the table geometry and the opening deal of a bundled clip;
`match_moves` and `score_moves` compare the moves read with the truth's.
"""

from __future__ import annotations

import bisect
import math
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import combinations
from pathlib import Path
from types import MappingProxyType
from typing import Any, Protocol, cast

import numpy as np

from calibration.bump import BumpConfig, BumpMonitor, BumpReport, BumpStatus
from calibration.layout import Layout, Stacking, ZoneKind, build_layout
from calibration.lens import LensModel
from calibration.markers import DEFAULT_MARKER_MM
from calibration.profile import CalibrationMethod, TableProfile
from engine import get_game
from engine.core import Ruleset
from engine.interpret import Interpretation, InterpretConfig, Interpreter
from engine.snapshot import TableSnapshot
from vision.capture import Frame
from vision.corners import KeptRefinements
from vision.detections import Detections, iou_matrix
from vision.finder import FinderConfig, Peaks, Refine, ZoomRegion
from vision.identify import MIN_VISIBLE_CELLS, FaceCandidate, visible_cells
from vision.preprocess import INPUT_HEIGHT, INPUT_WIDTH, crop_transform, rectify
from vision.settle import SettleConfig, SettleGate, SettleState
from vision.synth.truth import Checkpoint, Truth
from vision.timing import StageTimer
from vision.tracker import (
    CardTracker,
    IdentifyReason,
    IdentifyRequest,
    TableMap,
    Track,
    TrackerConfig,
    TrackUpdate,
)
from vision.zoning import ZoneContents, ZoningConfig, assign_cards, zone_ids, zone_polygons_image

SETTLE_SECONDS = 0.27  # how long a zone must stay still and free of hands before it is read
RETRY_UNNAMED_SECONDS = 0.5  # how long a card the identifier could not name waits, unchanged, to be asked again
# Games whose players fan their cards, where the finder also reads the cells beside a peak
# (`Peaks.ADJACENT`) and a card another overlaps is cut at the finder's own corners
# (`PipelineConfig.refine_covered` off). With the adjacent peaks the bundled Mattel clips
# found cards ≥ 30 % visible at AP@0.5 0.90 instead of 0.75 and read 5 of 19 moves instead of
# 3; Explorers with the real scans (seeds 31–33) 0.88 instead of 0.73 but no more moves (12 of
# 36 either way after 4259e0a, measured by adding the game here), so it keeps the defaults.
FAN_GAMES = frozenset({"minecraft-card-game"})
FAN_ZOOM = 1.5  # the closer read's scale that found most fanned cards (`PipelineConfig.zoom`)
ZOOM_MARGIN = 0.6  # a zoomed region's margin (`ZoomRegion.margin`), in card diagonals
# Zones whose motion does not hold a quiet table back (`PipelineConfig.quiet_except`), by
# game: the Explorers hunger cards are turned while an action is paid and turned back at the
# end of a turn, as the next player already reaches out, and only tally what the other zones
# show was done (the cost of the card taken, the mob the night turned up): waiting for them,
# an end of turn was read only with the next player's move, 60 to 80 frames late (seed 202),
# where the rest of the table lay still for two or three frames. Over the four Explorers
# development sets (README, 61 clips) 772 of 788 moves read right with 797 read, against 769
# with 797 waiting for them (seeds 81, 155 and 202 each one more; no clip read worse).
QUIET_EXCEPT: dict[str, frozenset[str]] = {"minecraft-explorers": frozenset({"hunger"})}
# Games read in parts while the table is busy (`PipelineConfig.busy_reads`).
BUSY_READS = frozenset({"minecraft-card-game"})
# Games whose refined crop outlines are checked against the card's shape on the table
# (`PipelineConfig.refine_tolerance`); measured on each game's footage, see there.
SHAPE_CHECKED_GAMES = frozenset({"minecraft-explorers"})
# Games whose cards named without a sure face are read again (`TrackerConfig.recheck_below`)
# every `RECHECK_SECONDS`: measured on the Explorers footage (see `PipelineConfig`); the other
# games were not tried with it.
RECHECKED_GAMES = frozenset({"minecraft-explorers"})
RECHECK_BELOW = 0.5
RECHECK_SECONDS = 1.0
# Games where a named card that changed look and cannot be named, found fainter than the
# zoning's sure score, loses its name (`TrackerConfig.faint_below`). The Angry Birds
# development clips lost two moves with it (seed 7144: a card far from the camera, faint,
# lost its name under a hand and was read 7 s late); mk. I and Mattel read the same.
FAINT_FORGOTTEN_GAMES = frozenset({"minecraft-explorers"})
# In the games in `RECHECKED_GAMES`, a named card that changed look and cannot be named keeps
# its name in doubt, at most this for its best face (`TrackerConfig.changed_doubt`): under
# `RECHECK_BELOW`, so it is read again once its look is back, and under the interpreter's
# `COVERED_UNSURE`, so that under the next card of a row it may be a card misread.
CHANGED_DOUBT = 0.45
# Games whose zones, settled with new content, record their cards' fresh reading more than
# `PipelineConfig.settle_rereads`' default of 2 times. A Mattel craft pile's next card lies
# where the taken card lay and keeps its track: at 2 the old face kept a quarter of the
# evidence, and a reserve or a craft was read late or not at all where the models did not see
# the card's new place (the holder). At 4 a craft read half done reads as a reserve, which the
# interpreter sets right when the craft completes (`GameInterpreter.merged`).
SETTLE_REREADS: dict[str, int] = {"minecraft-card-game": 4}
# Games whose pile tops and holders are read afresh whenever a hand was over them, changed to
# the settle gate's eye or not (`PipelineConfig.reread_handled`). The crafting sides of two
# Mattel craft cards differ in a small recipe and icon: the gate's 160×90 grey picture does
# not tell them apart, and the card under a crafted one kept the crafted card's name (rendered
# blind seed 921, with the truth for both models: the next card read as the card crafted, then
# a reserve made up when it read right).
REREAD_HANDLED = frozenset({"minecraft-card-game"})
STAGES = ("camera", "find", "track", "settle", "identify", "zones", "snapshot", "interpret")


class PipelineError(ValueError):
    """A pipeline configuration or component that cannot be used; the message says what to do."""


# -- the two model interfaces ------------------------------------------------------------------


class CardFinder(Protocol):
    """Finds every card of a frame: corners in the card's image, with scores."""

    def find(self, image: np.ndarray, *, frame_index: int) -> Detections: ...


class CardIdentifier(Protocol):
    """Reads rectified card crops: per crop, face candidates best first (empty: unknown).

    `corners` (n, 4, 2) are the crops' corners in the frame `frame_index`, for identifiers
    that need to know where a crop came from (the truth stand-in); a model ignores them.
    """

    def identify(
        self, crops: Sequence[np.ndarray], *, corners: np.ndarray, frame_index: int
    ) -> list[tuple[FaceCandidate, ...]]: ...


class CoveredCardIdentifier(CardIdentifier, Protocol):
    """A `CardIdentifier` that can also read a crop from its visible part alone, per mask (the
    crop's shape, 1 where the card is seen); `reads_covered` says whether it can now."""

    @property
    def reads_covered(self) -> bool: ...

    def identify_visible(
        self, crop: np.ndarray, masks: Sequence[np.ndarray], *, corners: np.ndarray, frame_index: int
    ) -> list[tuple[FaceCandidate, ...]]: ...


class ZoomingFinder(CardFinder, Protocol):
    """A `CardFinder` that can read parts of the frame a second time, closer
    (`vision.finder.Finder.find_zoomed`): from then on, in every frame."""

    def zoom_into(self, regions: Sequence[ZoomRegion], zoom: float) -> None: ...


class ModelFinder:
    """`CardFinder` over the ONNX finder (`vision.finder.Finder`); a `ZoomingFinder`."""

    def __init__(self, finder: Any) -> None:
        self.finder = finder
        self.regions: tuple[ZoomRegion, ...] = ()
        self.zoom = FAN_ZOOM

    def zoom_into(self, regions: Sequence[ZoomRegion], zoom: float) -> None:
        self.regions, self.zoom = tuple(regions), float(zoom)

    def find(self, image: np.ndarray, *, frame_index: int) -> Detections:
        del frame_index  # a model reads pixels only
        found: Detections = (self.finder.find_zoomed(image, self.regions, zoom=self.zoom) if self.regions
                             else self.finder.find_one(image))
        return found


class GalleryIdentifier:
    """`CardIdentifier` over the ONNX embedding model and the active art pack's gallery.

    A crop whose best match is below the model's calibrated threshold is unknown (a hand, a
    blur, a card of another deck): it gets no candidates and is tried again next frame.
    """

    def __init__(self, embedder: Any, gallery: Any, *, top_k: int = 5) -> None:
        if top_k < 1:
            raise PipelineError(f"GalleryIdentifier: top_k must be at least 1, got {top_k}")
        self.embedder = embedder
        self.gallery = gallery
        self.top_k = top_k

    def identify(
        self, crops: Sequence[np.ndarray], *, corners: np.ndarray, frame_index: int
    ) -> list[tuple[FaceCandidate, ...]]:
        del corners, frame_index
        if not len(crops):
            return []
        matches = self.gallery.match(self.embedder.embed(crops), self.top_k)
        return [() if m.unknown else tuple(m.candidates) for m in matches]

    @property
    def reads_covered(self) -> bool:
        """Whether model and gallery have per-cell terms, so `identify_visible` can read the
        visible part of a card that another covers (`vision.identify.Gallery.match_visible`)."""
        return getattr(self.embedder, "cell_grid", None) is not None and bool(self.gallery.reads_covered)

    def identify_visible(
        self, crop: np.ndarray, masks: Sequence[np.ndarray], *, corners: np.ndarray, frame_index: int
    ) -> list[tuple[FaceCandidate, ...]]:
        """One crop read from what each mask (the crop's shape, 1 where the card is seen)
        leaves of it: per mask the candidates, empty where unknown or where fewer than
        `MIN_VISIBLE_CELLS` cells of the model's grid are seen. `corners` (4, 2): where the
        crop was cut, for callers that record it."""
        del corners, frame_index
        if not masks:
            return []
        layout, content = self.embedder.cells([crop])
        weights = np.stack([visible_cells(m, self.embedder.cell_grid, self.embedder.inset) for m in masks])
        enough = weights.sum(axis=2).min(axis=1) >= MIN_VISIBLE_CELLS
        out: list[tuple[FaceCandidate, ...]] = [() for _ in masks]
        if enough.any():
            matches = self.gallery.match_visible(layout, content, weights[enough], self.top_k)
            for k, m in zip(np.flatnonzero(enough).tolist(), matches, strict=True):
                out[k] = () if m.unknown else tuple(m.candidates)
        return out


# -- configuration ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class PipelineConfig:
    """Pipeline parameters in domain terms, and the stage configs it passes on.

    - `finder`: the finder's config; its `threshold` is the least confidence of a card the
      pipeline tracks: 0.3, the finder's own. A card found with less than the zoning's
      `sure_score` (0.5) counts only once the identifier names it, so a faint false detection
      holds no zone back while a faint real card is still read: small and far from the camera
      (a plain 0.5 cut lost such cards on rendered far-camera Angry Birds tables), or pale on a
      pale cloth (a laid card on a rendered marble cloth, lost at a 0.4 cut).
      Its corner refinement is off here: tracking and zoning need only the coarse corners, so
      the corner refiner runs on the cards about to be cropped for the identifier
      (`refine_crops`), a few a frame instead of every card of every frame. For the games
      in `FAN_GAMES`, `for_game` has it read the cells beside a peak too (`peaks='adjacent'`).
    - `refine_crops`: put a card's corners on the pixel with the corner refiner (when the
      pipeline has one) before cropping it for the identifier.
    - `refine_covered`: off, a card that another card seen in the frame overlaps
      (`overlapped`) is cut at the finder's own corners: in a fan the refiner pulls them onto
      the neighbour's edges. `for_game` turns it off for the games in `FAN_GAMES`: the bundled
      Mattel clips read 6 of 19 moves with 14 read instead of 5 of 19 with 22 read. Elsewhere
      the refiner is kept: cut at the finder's corners, an Angry Birds battle card was never
      named and its round was lost (rendered seed 7181, commit abe55bb). Cutting both ways
      and keeping the better answer was tried and read fewer Mattel moves.
    - `refine_tolerance`: a refined outline whose sides, measured on the table, differ from
      the card's by this fraction more than the finder's own outline's do is not used: the
      finder's corners are cut instead (None: the refined corners are always used). The
      refiner can pull a corner onto a dark icon by the card's edge (an Explorers item turned
      180 degrees, 40 px wide, read as another item at the refined corners and right at the
      finder's). `for_game` sets 0.1 for the games in `SHAPE_CHECKED_GAMES`: the nine
      Explorers clips of the README (seeds 51–53, 61–63, 71–73, with the scans) read 99 of
      108 moves with it and 84 without (precision 0.87 against 0.66; `cardtrack eval` with
      this line of `for_game` taken out). Elsewhere it is off: the Mattel clips read as many moves with it but the
      2-player clip's tracked identity fell from 0.869 to 0.837, and the Angry Birds
      development clips read 203 of 300 moves instead of 205. Lower falls back more often
      on the finder's corners, which are off by about 8 % of the card's width
      (`models/finder.md`); falling back whenever the refined outline is off the card's size
      read fewer Mattel moves (`models/corners.md`).
    - `retry_cuts`: a card that lies still and that the identifier could not name, when
      asked about again (`IdentifyReason.RETRY`, every `RETRY_UNNAMED_SECONDS`) and still
      not named at its corners, is cut as a card of the layout's size lying square on the
      table at their centre, and at their own angle, each shifted by this fraction of its
      sides every way (`square_cuts`: 9 or 18 more crops). On a still table the finder gives
      the same corners frame after frame, and where they are off (an Explorers spider laid
      beside a skeleton, found turned 9 degrees and short of its lower edge by a tenth, and
      the refiner pulled a corner onto its picture) no retry named it for four seconds, and
      its fight was read late. Not where the card's whole outline, cut square, overlaps
      another card seen (`overlapped`): such a cut takes in the neighbour and may be named
      as it. (No footage read showed that it matters: on 4-player seed 304 the one card of
      the mob row so named, an enderman, was a column the finder saw as one card, named
      the same with the rule or without it.) None: not cut otherwise.
    - `retry_sure`: what one of those cuts must be named with to count: trying many cuts
      finds a name for more crops of no card as well.
    - `read_covered`: a card that another card seen overlaps (`overlapped`: a card of a fan or
      a row) is read as well from its visible part alone, with each set of the
      `covered_by_at_most` most overlapping cards taken to lie on it (`visibility_masks`,
      `GalleryIdentifier.identify_visible`); such an answer is kept when its best face scores
      `covered_sure` or more and more than the whole crop's. Whole, the crop of a card half
      under its neighbour shows half of another card, and the identifier left most such
      cards unknown. Which part shows is taken from the card's outline, so with the table's
      geometry known a card whose outline is more than `covered_shape` off a card's shape
      (`card_shape_errors`) is not read so, nor a card on a pile or in a one-card place
      (`Pipeline._may_be_covered`: only the top of a pile is read). Needs an identifier with
      per-cell outputs (`vision.train.cells`). Off by default (`--read-covered` turns it on for
      `cardtrack run` and `cardtrack eval`): on the nine Mattel development games of the README,
      with the truth for the finder (`cardtrack eval DIRS --stand-in finder --read-covered`), 177 of
      180 moves with 184 read instead of 154 with 183, and six final states right instead of
      one; but with the shipped finder, whose outlines of fanned cards are often off, 146 with
      213 read instead of 146 with 199, and the bundled 3-player clip 1 of 11 instead of 4
      (`models/identifier.md`). Named, a covered card no longer holds its area back while
      the finder's view of the area is wrong.
    - `zoom`: the finder reads each spread zone (a player's area) a second time with its cards
      `zoom` times as large as in the whole frame (`ZoomRegion`, `Finder.find_zoomed`), when
      the finder can (`ZoomingFinder`); None (the default): never. A fan's cards, 20 to 40 px
      wide in a 1280×720 frame, lie a heatmap cell or two apart in the whole-frame read, where
      neighbours merge into one card. `FAN_ZOOM` (1.5) found more of them than 2 or a scale
      set per area from the card's size. Off by default: on the nine Mattel development games
      of the README (`cardtrack eval DIRS --zoom 1.5`, rendered footage, code of 483cd7d),
      the finder found 90 % of the cards 30–50 % visible instead of 71 % (AP@0.5 0.962 instead
      of 0.915), yet the pipeline read 135 of 180 moves with 208 read instead of 146 with 199
      (with `--read-covered` too, 136 with 218): most cards it adds are half under another,
      and cut at the finder's coarse corners (6 % of the card's width off at the median, worse
      where hidden; the corner refiner, trained on cards at least half visible, cuts them
      worse still) the identifier leaves them unknown or names them wrongly. The finder's time
      there doubled, 14.6 to 28.8 ms a frame (two evaluations sharing the 2-core machine).
    - `max_identify_per_frame`: identifier calls per frame at most (new and turned-over cards
      first, moved ones after). Lower bounds the frame time when many cards move at once; the
      rest wait a frame or two.
    - `recheck_pending_frames`: while the rules hold a change as pending (seen but not yet
      explained), the table is read again every this many frames, so that the change is
      either explained or, after the interpreter's pending time, written as a desync.
    - `evidence_candidates`: candidates per card kept in a move's evidence.
    - `quiet_table`: read the table only when every zone is settled, so a move that
      touches several zones (a craft: paid cards to the discard, the crafted card to the
      area) is read whole. Off: each zone is read as soon as it settles, which answers
      sooner on a big table, but a half-done move can then be read as another legal move.
    - `quiet_except`: zones whose motion does not hold the quiet table back: the others are
      read while these move (each of them is read itself only once settled). `for_game`
      sets them for the games in `QUIET_EXCEPT`.
    - `busy_reads`: while the quiet table is held back, the zones that settled with something
      new are read on their own, and the read is taken only when it is sure
      (`Interpreter.observe_whole`: explained whole by moves whose every zone is read).
      Players move one after another without a pause: the next player's hand is on the table
      before the last move's zones have been still long enough, and the quiet table waited
      for a gap that never came. `for_game` turns it on for the games in `BUSY_READS`.
    - `settle_rereads`: when a zone settles with new content its cards are read afresh, and
      the fresh reading is recorded this many times in each card's evidence (each recording
      halves the weight of what was known: 2 makes it count 3:1). A card put exactly where
      another lay keeps the old card's track and may look too alike for the tracker to notice.
      `for_game` sets it for the games in `SETTLE_REREADS`.
    - `reread_handled`: a zone where one card shows (a pile's top, a holder) that a hand was
      over is read afresh when it settles again, as a zone settled with new content is,
      whether or not the settle gate saw its content change: the gate compares a coarse grey
      picture, where two cards of one design family may look the same. One crop per such
      zone and hand. `for_game` turns it on for the games in `REREAD_HANDLED`.
    - `reach_seconds`: how long a hand's palm must stay over a zone (`SettleState.reached`)
      for the snapshot to say a hand reached into it (`TableSnapshot.reached`): what tells a
      card taken off a face-down pile from nothing at all. Shorter counts a hand passing over
      a pile on its way further; longer misses a quick grab.
    - `unnamed_notice_seconds`: how long a settled zone may hold a card the identifier cannot
      name before the step says so (`PipelineStep.unnamed`), for the operator to look: the
      zone is not read until the card is named, and something beside it (a mug, a phone) may
      hide part of the card from the camera.
    - `camera_check`: watch the corner markers for a bumped camera (off for geometry that
      comes from a truth file, which is exact).
    - `tracker`, `settle`, `zoning`, `interpret`, `bump`: the stages' own configs, each
      documented where it is defined. The tracker re-identifies a card whose look changed by
      0.06 (its own default 0.12 misses a pile top turned face up in compressed video, measured
      at 0.09 on the bundled footage; a hand passing near a card costs a re-identification),
      and asks again about a card it could not name after `RETRY_UNNAMED_SECONDS` unless the
      card moved or changed look (in frames of the camera's rate given to `for_game`, else of
      15 frames a second). For the games in `RECHECKED_GAMES` a card named with less than
      `RECHECK_BELOW` for its best face is read again every `RECHECK_SECONDS`
      (`TrackerConfig.recheck_below`): an Explorers skeleton read once from a poor cut as a
      creeper (0.39 against 0.30) read as a skeleton from most later cuts. With the
      table mobs set right when so read again (`ExpectedZone.steady`), nine Explorers
      development clips (seeds 51–53, 61–63, 71–73) read 102 of 108 moves instead of 100
      (code of ba00808). For the games in `FAINT_FORGOTTEN_GAMES` a named card whose look
      changed, that cannot be named and that the finder sees fainter than the zoning's
      `sure_score`, loses its name (`TrackerConfig.faint_below`): the bare cloth where a card
      was lifted off, not the card (Explorers seed 102: 12 of 12 moves instead of 7); in the
      games in `RECHECKED_GAMES` one found surely keeps its name in doubt (`CHANGED_DOUBT`):
      an Explorers chest flipped as it was filled kept its old name at 0.85 (seed 134).
    """

    finder: FinderConfig = field(default_factory=lambda: _finder_config(Peaks.LOCAL))
    refine_crops: bool = True
    refine_covered: bool = True
    refine_tolerance: float | None = None
    max_identify_per_frame: int = 12
    zoom: float | None = None
    read_covered: bool = False
    covered_by_at_most: int = 3
    covered_sure: float = 0.8
    covered_shape: float | None = 0.15
    retry_cuts: float | None = 0.1
    retry_sure: float = 0.8
    recheck_pending_frames: int = 5
    evidence_candidates: int = 3
    quiet_table: bool = True
    quiet_except: frozenset[str] = frozenset()
    busy_reads: bool = False
    settle_rereads: int = 2
    reread_handled: bool = False
    reach_seconds: float = 0.2
    unnamed_notice_seconds: float = 4.0
    camera_check: bool = True
    tracker: TrackerConfig = field(default_factory=lambda: _tracker_config(15.0))
    settle: SettleConfig = field(default_factory=SettleConfig)
    zoning: ZoningConfig = field(default_factory=ZoningConfig)
    interpret: InterpretConfig = field(default_factory=InterpretConfig)
    bump: BumpConfig = field(default_factory=BumpConfig)

    def __post_init__(self) -> None:
        for name in ("max_identify_per_frame", "recheck_pending_frames", "evidence_candidates",
                     "settle_rereads"):
            if getattr(self, name) < 1:
                raise PipelineError(f"PipelineConfig.{name}: must be at least 1")
        if not self.reach_seconds >= 0:
            raise PipelineError("PipelineConfig.reach_seconds: must be 0 or more")
        if self.refine_tolerance is not None and not self.refine_tolerance > 0:
            raise PipelineError("PipelineConfig.refine_tolerance: must be more than 0, or None")
        if not self.unnamed_notice_seconds > 0:
            raise PipelineError("PipelineConfig.unnamed_notice_seconds: must be more than 0")
        if self.retry_cuts is not None and not 0 < self.retry_cuts < 0.5:
            raise PipelineError("PipelineConfig.retry_cuts: must be more than 0 and below 0.5, or None")
        if not 0 <= self.retry_sure <= 1:
            raise PipelineError("PipelineConfig.retry_sure: must be from 0 to 1")
        if not 1 <= self.covered_by_at_most <= 4:
            raise PipelineError("PipelineConfig.covered_by_at_most: must be from 1 to 4 (each set of them is tried)")
        if not 0 <= self.covered_sure <= 1:
            raise PipelineError("PipelineConfig.covered_sure: must be from 0 to 1")
        if self.covered_shape is not None and not self.covered_shape > 0:
            raise PipelineError("PipelineConfig.covered_shape: must be more than 0, or None")
        if self.zoom is not None and not (math.isfinite(self.zoom) and self.zoom > 0):
            raise PipelineError(f"PipelineConfig.zoom: must be more than 0 (e.g. {FAN_ZOOM:g}), or None for no "
                                "closer reads")

    @classmethod
    def for_game(cls, game: str, *, fps: float | None = None, **changes: Any) -> PipelineConfig:
        """The defaults for `game` (its zoning) and a camera of `fps` frames per second (the
        settle wait kept at about `SETTLE_SECONDS`), with `changes` applied."""
        changes.setdefault("zoning", ZoningConfig.for_game(game))
        changes.setdefault("interpret", InterpretConfig.for_game(game))
        changes.setdefault("quiet_except", QUIET_EXCEPT.get(game, frozenset()))
        changes.setdefault("busy_reads", game in BUSY_READS)
        changes.setdefault("settle_rereads", SETTLE_REREADS.get(game, 2))
        changes.setdefault("reread_handled", game in REREAD_HANDLED)
        if game in FAN_GAMES:
            changes.setdefault("finder", _finder_config(Peaks.ADJACENT))
            changes.setdefault("refine_covered", False)
        if game in SHAPE_CHECKED_GAMES:
            changes.setdefault("refine_tolerance", 0.1)
        if fps is not None and "settle" not in changes:
            if not fps > 0:
                raise PipelineError(f"PipelineConfig.for_game: fps must be more than 0, got {fps}")
            changes["settle"] = SettleConfig(still_frames=max(3, round(SETTLE_SECONDS * fps)))
        if "tracker" not in changes:
            faint = changes["zoning"].sure_score if game in FAINT_FORGOTTEN_GAMES else None
            changes["tracker"] = _tracker_config(15.0 if fps is None else fps, recheck=game in RECHECKED_GAMES,
                                                 faint_below=faint)
        return cls(**changes)


def _finder_config(peaks: Peaks) -> FinderConfig:
    """The pipeline's finder settings (see `PipelineConfig.finder`), reading `peaks`."""
    return FinderConfig(threshold=0.3, refine=Refine.NONE, peaks=peaks)


def _tracker_config(fps: float, *, recheck: bool = False, faint_below: float | None = None) -> TrackerConfig:
    """The pipeline's tracker settings for a camera of `fps` frames per second; with `recheck`,
    unsure cards are read again (`RECHECK_BELOW`, every `RECHECK_SECONDS`); a card whose look
    changed and that cannot be named, found fainter than `faint_below`, loses its name, and
    with `recheck` one found surely keeps it in doubt (`CHANGED_DOUBT`)."""
    return TrackerConfig(reidentify_appearance=0.06,
                         retry_unnamed_frames=max(1, round(RETRY_UNNAMED_SECONDS * fps)),
                         recheck_below=RECHECK_BELOW if recheck else None,
                         recheck_frames=max(1, round(RECHECK_SECONDS * fps)),
                         faint_below=faint_below,
                         changed_doubt=CHANGED_DOUBT if recheck else None)


# -- stages: small functions ----------------------------------------------------------------------


def find_cards(finder: CardFinder, image: np.ndarray, frame_index: int) -> Detections:
    """Stage `find`: the cards of a frame, as the finder reports them."""
    found = finder.find(image, frame_index=frame_index)
    if not isinstance(found, Detections):
        raise PipelineError(f"the card finder returned {type(found).__name__}, not Detections")
    return found


def track_cards(tracker: CardTracker, detections: Detections, image: np.ndarray, frame_index: int) -> TrackUpdate:
    """Stage `track`: match the frame's cards to the tracks (the tracker holds the calibration)."""
    return tracker.update(detections, image=image, frame_index=frame_index)


SHAPE_RATIO = 1.15
"""Long side over short side from which a quad's shape says which of its sides is long (a
card's is 1.3 to 1.4 lying flat; corner errors of a few percent stay well below this)."""


def _edge_pairs(q: np.ndarray) -> tuple[float, float]:
    """Mean length of the first and third edges of a quad, and of the second and fourth."""
    edges = np.linalg.norm(np.roll(q, -1, axis=0) - q, axis=1)
    return float(edges[0] + edges[2]) / 2.0, float(edges[1] + edges[3]) / 2.0


def _short_first(sides: tuple[float, float]) -> tuple[bool, float]:
    """Whether the first edge is the short one, and how clearly (log of long over short)."""
    first, second = sides
    if not (first > 0 and second > 0 and math.isfinite(first) and math.isfinite(second)):
        return True, 0.0
    return first <= second, abs(math.log(second / first))


def crop_shapes(corners: np.ndarray, to_table: TableMap | None = None) -> tuple[bool, ...]:
    """The ways to cut a card (True: its first edge is the short side, a portrait crop), the
    likelier first; two when its shape does not tell.

    The finder's corners start at any corner, so which edge is short decides whether the card
    is read upright or a quarter turned, which the identifier takes for no card at all. In the
    image that can go either way for a card far from the camera: foreshortened, a portrait card
    can look as wide as it is tall, or wider. With `to_table` (image pixels to table
    millimetres) the edges are measured on the table, where a card lying flat keeps its shape:
    that decides, unless the image says otherwise as clearly or the table shape is not clear
    either (a card standing in a holder, which the table plane stretches), and then both cuts
    are tried, the clearer measure's first."""
    q = np.asarray(corners, np.float64).reshape(4, 2)
    image_way, image_clear = _short_first(_edge_pairs(q))
    if to_table is None:
        return (image_way,)
    flat = np.asarray(to_table(q), np.float64).reshape(4, 2)
    table_way, table_clear = _short_first(_edge_pairs(flat))
    clear = math.log(SHAPE_RATIO)
    if table_clear >= clear and (image_way == table_way or image_clear < clear):
        return (table_way,)
    first = table_way if table_clear >= image_clear else image_way
    return (first, not first)


def crop_card(image: np.ndarray, corners: np.ndarray, to_table: TableMap | None = None,
              *, short_first: bool | None = None) -> np.ndarray:
    """A card rectified from its four corners at the identifier's input size: portrait when
    its first edge is the short one, landscape otherwise (the identifier turns it upright).
    Which edge is short is `short_first`, or else the likelier way of `crop_shapes`."""
    q = np.asarray(corners, np.float32).reshape(4, 2)
    if short_first is None:
        short_first = crop_shapes(q, to_table)[0]
    width, height = (INPUT_WIDTH, INPUT_HEIGHT) if short_first else (INPUT_HEIGHT, INPUT_WIDTH)
    return rectify(image, q, width=width, height=height)


_URGENCY = {IdentifyReason.NEW: 0, IdentifyReason.APPEARANCE: 1, IdentifyReason.TURNED: 2, IdentifyReason.MOVED: 3,
            IdentifyReason.UNSURE: 4, IdentifyReason.RETRY: 5}


OVERLAP_IOU = 0.02  # quad IoU over which two cards seen overlap (a fan's or a row's)


def overlaps(tracker: CardTracker, track_ids: Sequence[int], corners: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The quad IoU (n, m) of each card's `corners` (n, 4, 2) with the m cards seen in this
    frame (0 with the card itself, by `track_ids`), and those cards' outlines (m, 4, 2)."""
    seen = [t for t in tracker.tracks if t.detection_index is not None]
    if not seen:
        return np.zeros((len(track_ids), 0)), np.zeros((0, 4, 2), np.float32)
    quads = np.stack([np.asarray(t.corners, np.float32) for t in seen])
    iou = iou_matrix(np.asarray(corners, np.float32), quads)
    iou[np.asarray(track_ids)[:, None] == np.array([t.track_id for t in seen])[None, :]] = 0.0
    return iou, quads


def overlapped(tracker: CardTracker, requests: Sequence[IdentifyRequest], corners: np.ndarray) -> np.ndarray:
    """Per request, whether another card seen in this frame overlaps it (`overlaps`): a card
    of a fan or a row, whose corners the refiner would pull onto its neighbour's edges."""
    iou, _ = overlaps(tracker, [r.track_id for r in requests], corners)
    return np.asarray((iou > OVERLAP_IOU).any(axis=1))


def covering_quads(iou: np.ndarray, quads: np.ndarray, limit: int) -> list[np.ndarray]:
    """Of the outlines `quads` and one card's IoU with each (a row of `overlaps`), those that
    overlap it, the most first, at most `limit`: the cards that may lie on it."""
    order = [int(k) for k in np.argsort(-iou, kind="stable") if iou[k] > OVERLAP_IOU]
    return [quads[k] for k in order[:limit]]


def visibility_masks(corners: np.ndarray, short_first: bool, covers: Sequence[np.ndarray]) -> list[np.ndarray]:
    """For the crop `crop_card` cuts at `corners` (`short_first` its way), one mask per
    non-empty set of `covers` (outlines in the frame): 1 where the card shows if those cards
    lie on it, 0 under them. Which of two overlapping cards lies on top is not known, so each
    set is tried (`identify_tracks`)."""
    import cv2

    width, height = (INPUT_WIDTH, INPUT_HEIGHT) if short_first else (INPUT_HEIGHT, INPUT_WIDTH)
    to_crop = crop_transform(corners, width=width, height=height)
    inside = [cv2.perspectiveTransform(np.asarray(q, np.float32).reshape(1, 4, 2), to_crop)[0] for q in covers]
    masks: list[np.ndarray] = []
    for size in range(1, len(inside) + 1):
        for chosen in combinations(inside, size):
            mask = np.ones((height, width), np.uint8)
            for q in chosen:
                cv2.fillPoly(mask, [np.round(q * 16).astype(np.int32)], 0, shift=4)
            masks.append(mask)
    return masks


def card_shape_errors(quads: np.ndarray, to_table: TableMap, card_mm: tuple[float, float]) -> np.ndarray:
    """(n,) how far each quad (n, 4, 2) in frame pixels is from the outline of a card of
    `card_mm` lying on the table: each side measured in table millimetres against the card's
    side it stands for (short, long, short, long in either order), the largest relative
    difference."""
    q = np.asarray(quads, np.float64).reshape(-1, 4, 2)
    flat = np.asarray(to_table(q.reshape(-1, 2)), np.float64).reshape(-1, 4, 2)
    sides = np.linalg.norm(np.roll(flat, -1, axis=1) - flat, axis=2)  # (n, 4)
    short, long_ = sorted(float(x) for x in card_mm)
    ways = np.array([[short, long_, short, long_], [long_, short, long_, short]])  # (2, 4)
    off = np.abs(sides[:, None, :] - ways[None]) / ways[None]  # (n, 2, 4)
    return np.asarray(off.max(axis=2).min(axis=1))


def square_cuts(corners: np.ndarray, to_table: TableMap, from_table: TableMap,
                card_mm: tuple[float, float], shift: float) -> np.ndarray:
    """(k, 4, 2) outlines in frame pixels of a card of `card_mm` lying on the table where
    `corners` found one: centred where they are centred on the table, square to the table's
    edges (the quarter turn nearest their own angle) and, where that differs, at their own
    angle; each also shifted by `shift` of the card's sides along them, each way and
    diagonally (nine per angle, the unshifted first). Each outline starts at the corner and
    runs the way `corners` do, so that it is cut as they would be (`crop_card`)."""
    flat = np.asarray(to_table(np.asarray(corners, np.float64).reshape(4, 2)), np.float64).reshape(4, 2)
    centre = flat.mean(axis=0)
    first = (flat[1] - flat[0] + flat[2] - flat[3]) / 2.0
    angle = math.atan2(float(first[1]), float(first[0]))
    square = round(angle / (math.pi / 2)) * (math.pi / 2)
    short, long_ = sorted(float(x) for x in card_mm)
    width, height = (short, long_) if _short_first(_edge_pairs(flat))[0] else (long_, short)
    edge1, edge2 = flat[1] - flat[0], flat[2] - flat[1]
    turn = 1.0 if edge1[0] * edge2[1] - edge1[1] * edge2[0] >= 0 else -1.0  # which way the corners run
    angles = [square] if abs(angle - square) < math.radians(2) else [square, angle]
    offsets = [(0, 0), *((i, j) for i in (-1, 0, 1) for j in (-1, 0, 1) if (i, j) != (0, 0))]
    outlines = []
    for a in angles:
        u = np.array([math.cos(a), math.sin(a)]) * width
        v = np.array([-math.sin(a), math.cos(a)]) * height * turn
        for i, j in offsets:
            c = centre + (u * i + v * j) * shift
            rect = np.stack([c - u / 2 - v / 2, c + u / 2 - v / 2, c + u / 2 + v / 2, c - u / 2 + v / 2])
            outlines.append(np.asarray(from_table(rect), np.float64).reshape(4, 2))
    return np.stack(outlines).astype(np.float32)


def keep_plausible(coarse: np.ndarray, refined: np.ndarray, to_table: TableMap | None,
                   card_mm: tuple[float, float] | None, tolerance: float | None) -> np.ndarray:
    """Per quad, the refined corners unless they make a card outline worse than the coarse
    ones by more than `tolerance` (`card_shape_errors`, a fraction of the card's sides): a
    corner the refiner pulled onto a dark icon near the card's edge, or onto a neighbour's
    edge. Without the table geometry, the card's size or a tolerance every refined quad is
    kept."""
    out = np.asarray(refined, np.float32).copy()
    if to_table is None or card_mm is None or tolerance is None or not len(out):
        return out
    worse = card_shape_errors(refined, to_table, card_mm) > card_shape_errors(coarse, to_table, card_mm) + tolerance
    out[worse] = np.asarray(coarse, np.float32)[worse]
    return out


def identify_requests(requests: Sequence[IdentifyRequest], limit: int) -> tuple[IdentifyRequest, ...]:
    """The requests to serve this frame: new and changed-look cards first, at most `limit`."""
    ordered = sorted(requests, key=lambda r: (_URGENCY[r.reason], r.track_id))
    return tuple(ordered[:limit])


def merge_candidates(candidates: Iterable[FaceCandidate]) -> tuple[dict[str, float], bool]:
    """Face -> best score over both turns, and whether the best candidate is turned 180°."""
    scores: dict[str, float] = {}
    rotated = False
    for k, c in enumerate(candidates):
        if k == 0:
            rotated = c.rotated_180
        scores[c.face] = max(scores.get(c.face, 0.0), min(1.0, float(c.score)))
    return scores, rotated


def refresh_requests(
    tracks: Sequence[Track], contents: ZoneContents, zones: Iterable[str]
) -> tuple[IdentifyRequest, ...]:
    """Every card seen in this frame in `zones` (zones that just settled with new content, or
    after a hand, `PipelineConfig.reread_handled`), to be read afresh: a card put exactly
    where another lay (the next card of a pile) keeps the track of the one it replaced, and
    may look too alike for the tracker to notice."""
    wanted = {c.track_id for z in zones for c in contents.cards(z)}
    return tuple(
        IdentifyRequest(
            track_id=t.track_id, detection_index=t.detection_index, corners=t.corners,
            reason=IdentifyReason.APPEARANCE,
        )
        for t in tracks
        if t.track_id in wanted and t.detection_index is not None
    )


def better_answer(
    kept: Sequence[FaceCandidate], other: Sequence[FaceCandidate]
) -> Sequence[FaceCandidate]:
    """Of two identifier answers for one card (cut two ways), the one kept: an answer over
    none, a higher best score over a lower one, the first on a tie."""
    if other and (not kept or other[0].score > kept[0].score):
        return other
    return kept


def identify_tracks(
    tracker: CardTracker,
    identifier: CardIdentifier,
    image: np.ndarray,
    frame_index: int,
    config: PipelineConfig,
    refresh: Sequence[IdentifyRequest] = (),
    refiner: Any = None,
    to_table: TableMap | None = None,
    card_mm: tuple[float, float] | None = None,
    from_table: TableMap | None = None,
    may_be_covered: Callable[[np.ndarray], np.ndarray] | None = None,
) -> int:
    """Stage `identify`: crop, identify and record the tracks that need it and the `refresh`
    ones; returns how many were identified (an unknown crop is left for the next frame).
    A card whose refined outline the shape check set aside and whose finder outline cannot
    be named is tried at the refined outline as well.
    With a `refiner` (`vision.corners.CornerRefiner`) the corners are refined first
    (`PipelineConfig.refine_crops`; not those of a card another overlaps when
    `refine_covered` is off); with
    `to_table` (image pixels to table millimetres) each card's shape is measured on the table,
    to cut it upright (`crop_shapes`), and with the card's size `card_mm` as well, a refined
    outline that is less like the card than the finder's is not used (`keep_plausible`).
    A card asked about again unchanged since it could not be named (`IdentifyReason.RETRY`)
    and that cannot be named now either is cut as a card of its size lying square on the
    table (`square_cuts`, with `from_table` as well; `PipelineConfig.retry_cuts`), unless
    that outline overlaps another card seen (`overlapped`), and named only by an answer of
    `PipelineConfig.retry_sure` or more.
    A refreshed card's reading is recorded `settle_rereads` times, so that it outweighs what
    was known of the card before.
    A card that another overlaps is read from its visible part as well (`read_covered`), where
    `may_be_covered` (table millimetres -> bool per point; None: everywhere) allows it."""
    asked = identify_requests(tracker.tracks_needing_identification(), config.max_identify_per_frame)
    listed = {r.track_id for r in asked}
    fresh = {r.track_id for r in refresh}
    requests = (*asked, *(r for r in refresh if r.track_id not in listed))
    if not requests:
        return 0
    corners = np.stack([np.asarray(r.corners, np.float32) for r in requests])
    # The refined outlines the shape check set aside: tried when the finder's cannot be named.
    set_aside: dict[int, np.ndarray] = {}
    if refiner is not None and config.refine_crops:
        free = (np.ones(len(requests), bool) if config.refine_covered
                else ~overlapped(tracker, requests, corners))
        if free.any():
            refined = np.asarray(refiner.refine(image, corners[free]), np.float32)
            kept_corners = keep_plausible(corners[free], refined, to_table, card_mm, config.refine_tolerance)
            for k, row in enumerate(np.flatnonzero(free).tolist()):
                if not np.array_equal(kept_corners[k], refined[k]):
                    set_aside[row] = refined[k]
            corners[free] = kept_corners
    # One crop per card, and a second one turned a quarter for a card whose shape does not
    # tell which way it lies (`crop_shapes`): the identifier's better answer is kept.
    owner: list[int] = []
    crops: list[np.ndarray] = []
    for i, c in enumerate(corners):
        for way in crop_shapes(c, to_table):
            owner.append(i)
            crops.append(crop_card(image, c, short_first=way))
    cut = corners[owner]
    answers = identifier.identify(crops, corners=cut, frame_index=frame_index)
    if len(answers) != len(crops):
        raise PipelineError(
            f"the card identifier answered {len(answers)} crops out of {len(crops)}; it must "
            "return one candidate list per crop"
        )
    results: list[Sequence[FaceCandidate]] = [() for _ in requests]
    wide: list[bool | None] = [None for _ in requests]  # how the crop of the kept answer was cut

    def keep(i: int, answer: Sequence[FaceCandidate], crop: np.ndarray) -> None:
        kept = better_answer(results[i], answer)
        if kept is not results[i]:
            results[i], wide[i] = kept, crop.shape[1] > crop.shape[0]

    for i, answer, crop in zip(owner, answers, crops, strict=True):
        keep(i, answer, crop)
    if config.read_covered and getattr(identifier, "reads_covered", False):
        covering = cast(CoveredCardIdentifier, identifier)
        # A card of a fan or a row that another card overlaps: read again from what each set of
        # its neighbours would leave of it, lying on it; the best answer is kept.
        iou, seen = overlaps(tracker, [r.track_id for r in requests], corners)
        fans = (iou > OVERLAP_IOU).any(axis=1)
        if to_table is not None and may_be_covered is not None and fans.any():
            # A pile's lower card or a holder's card is not read from a sliver beside the top.
            centres = np.asarray(to_table(corners.mean(axis=1)), np.float64).reshape(-1, 2)
            fans &= np.asarray(may_be_covered(centres), bool)
        if to_table is not None and card_mm is not None and config.covered_shape is not None:
            # Which part of the crop shows needs the card's outline: a quad that is not shaped
            # like a card (one spanning two cards of a fan) is not read so.
            fans &= card_shape_errors(corners, to_table, card_mm) <= config.covered_shape
        for i in np.flatnonzero(fans).tolist():
            covers = covering_quads(iou[i], seen, config.covered_by_at_most)
            way = crop_shapes(corners[i], to_table)[0] if wide[i] is None else not wide[i]
            crop = crop_card(image, corners[i], short_first=way)
            masks = visibility_masks(corners[i], way, covers)
            for answer in covering.identify_visible(crop, masks, corners=corners[i], frame_index=frame_index):
                if answer and answer[0].score >= config.covered_sure:
                    keep(i, answer, crop)
    for i, other in set_aside.items():
        # The finder's outline could not be named: the refined one, though less like the
        # card's shape, may be (a dim card whose finder corners cut its picture short).
        if results[i]:
            continue
        mine = [crop_card(image, other, short_first=way) for way in crop_shapes(other, to_table)]
        again = identifier.identify(mine, corners=np.stack([other] * len(mine)), frame_index=frame_index)
        for answer, crop in zip(again, mine, strict=True):
            keep(i, answer, crop)
    if config.retry_cuts is not None and to_table is not None and from_table is not None and card_mm is not None:
        for i, request in enumerate(requests):
            if results[i] or request.reason is not IdentifyReason.RETRY:
                continue
            cuts = square_cuts(corners[i], to_table, from_table, card_mm, config.retry_cuts)
            if overlapped(tracker, (request,), cuts[:1])[0]:
                continue  # cut whole, a card of a row or a fan takes in its neighbour, and is named as it
            mine = [crop_card(image, c, to_table) for c in cuts]
            for answer, crop in zip(identifier.identify(mine, corners=cuts, frame_index=frame_index), mine, strict=True):
                if answer and answer[0].score >= config.retry_sure:
                    keep(i, answer, crop)
    done = 0
    for request, candidates, cut_wide in zip(requests, results, wide, strict=True):
        if not candidates:
            tracker.unnamed(request.track_id)
            continue
        scores, rotated = merge_candidates(candidates)
        for _ in range(config.settle_rereads if request.track_id in fresh else 1):
            tracker.identified(request.track_id, scores, rotated_180=rotated, cut_wide=cut_wide)
        done += 1
    return done


def zone_cards(layout: Layout, tracks: Sequence[Track], config: PipelineConfig) -> ZoneContents:
    """Stage `zones`: every track in its zone, top first."""
    return assign_cards(layout, tracks, config.zoning)


def readable_zones(contents: ZoneContents, settle: SettleState, config: PipelineConfig) -> frozenset[str]:
    """Zones that may be read now: settled, and every card in them identified; with
    `quiet_table`, none until every zone of the table is settled but those of `quiet_except`."""
    if config.quiet_table and any(z not in settle.settled and z not in config.quiet_except for z in settle.motion):
        return frozenset()
    return frozenset(z for z in settle.settled if contents.ready(z))


def zones_to_read(
    contents: ZoneContents,
    readable: frozenset[str],
    dirty: frozenset[str],
    last_read: Mapping[str, tuple[tuple[int, str | None], ...]],
) -> frozenset[str]:
    """Readable zones with something new: flagged by the settle gate since they were last
    read (`dirty`), or showing other tracks or best faces than when last read."""
    return frozenset(z for z in readable if z in dirty or contents.signature(z) != last_read.get(z))


def build_snapshot(contents: ZoneContents, readable: frozenset[str], frame_index: int, time_s: float,
                   counts: Mapping[str, int] | None = None,
                   reached: frozenset[str] | None = None,
                   last_read: Mapping[str, tuple[tuple[int, str | None], ...]] | None = None,
                   taken: Mapping[str, tuple[tuple[int, str | None], ...]] | None = None) -> TableSnapshot:
    """Stage `snapshot`: the readable zones' cards (top first, with candidates), the
    numbers of the readable counter zones (`counts`: tokens counted, the die's face), the
    zones a hand reached into since they were last read (`reached`; None: not watched) and,
    given what each zone showed when last read (`last_read`, `ZoneContents.signature`), the
    zones whose cards are all new tracks (`renewed_zones`); given what each showed when the
    table was last taken in (`taken`: the last read not left pending), the zones whose same
    cards read otherwise (`reread_zones`)."""
    return TableSnapshot(
        frame=frame_index,
        time=time_s,
        zones={z: contents.seen(z) for z in sorted(readable)},
        counts={z: n for z, n in (counts or {}).items() if z in readable},
        settled=readable,
        reached=reached,
        renewed=None if last_read is None else renewed_zones(contents, readable, last_read),
        reread=None if taken is None else reread_zones(contents, readable, taken),
        unnamed={z: contents.unnamed(z) for z in readable},
    )


def reread_zones(contents: ZoneContents, readable: frozenset[str],
                 taken: Mapping[str, tuple[tuple[int, str | None], ...]]) -> frozenset[str]:
    """Readable zones that hold exactly the tracks they held when the table was last taken in
    (`taken`, `ZoneContents.signature`), at least one of them named then and now named as
    another face."""
    out = set()
    for zone in readable:
        before = dict(taken.get(zone, ()))
        now = dict(contents.signature(zone))
        if before and now.keys() == before.keys() and any(
            before[t] is not None and face is not None and face != before[t] for t, face in now.items()
        ):
            out.add(zone)
    return frozenset(out)


def renewed_zones(contents: ZoneContents, readable: frozenset[str],
                  last_read: Mapping[str, tuple[tuple[int, str | None], ...]]) -> frozenset[str]:
    """Readable zones that showed cards when last read and now show cards, none of them a
    track seen there then: the cards were taken away and others put down. A card put back
    where another lay within `TrackerConfig.frames_to_forget` frames keeps the old track, and
    a card hidden longer than that (under a hand) comes back as a new one."""
    out = set()
    for zone in readable:
        before = {track for track, _ in last_read.get(zone, ())}
        now = {track for track, _ in contents.signature(zone)}
        if before and now and not before & now:
            out.add(zone)
    return frozenset(out)


def unnamed_time(seconds: dict[str, float], contents: ZoneContents, settled: frozenset[str], dt: float) -> None:
    """Add `dt` to each settled zone that holds a card it cannot name (`ZoneContents.ready`
    false), forget a settled zone that can be read; a zone under a hand keeps its count."""
    for zone in settled:
        if contents.ready(zone):
            seconds.pop(zone, None)
        else:
            seconds[zone] = seconds.get(zone, 0.0) + dt


def hand_dwell(dwell: dict[str, tuple[float, float]], reached: frozenset[str], dt: float) -> None:
    """Per zone (longest stay, current stay) of a hand reaching into it, in seconds: the
    current stay grows by `dt` in each zone of `reached` (`SettleState.reached`) and ends in
    the others. A hand passing over a pile on its way further stays there only briefly, however
    often it passes."""
    for zone, (longest, now) in list(dwell.items()):
        if zone not in reached and now:
            dwell[zone] = (longest, 0.0)
    for zone in reached:
        longest, now = dwell.get(zone, (0.0, 0.0))
        dwell[zone] = (max(longest, now + dt), now + dt)


def move_evidence(
    snapshot: TableSnapshot, interpretation: Interpretation[Any, Any], zones: Iterable[str], candidates: int
) -> dict[str, Any]:
    """Plain-data evidence for the moves of one interpretation: frame, time, score, the
    candidates of the cards in the zones that changed and, when hands were watched, the zones
    a hand reached into (`reached`: why a card taken off a face-down pile was read)."""
    evidence: dict[str, Any] = {
        "frame": snapshot.frame,
        "time": round(snapshot.time, 4),
        "score": round(float(interpretation.score), 4),
        "desync": interpretation.desync,
        "zones": {
            z: [
                [[c.face, round(c.score, 4)] for c in card.candidates[:candidates]]
                for card in snapshot.cards(z)
            ]
            for z in sorted(zones)
        },
    }
    if snapshot.reached is not None:
        evidence["reached"] = sorted(snapshot.reached & snapshot.settled)
    return evidence


# -- results --------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class PipelineStep:
    """What one frame produced. `moves` are engine moves, applied to the belief in order;
    `move_dicts` the same in plain form; `evidence` is shared by this frame's moves. `amends`:
    how many of the moves the pipeline gave last `moves` take the place of (a move done in
    parts, read as two: `Interpretation.amends`); withdraw those first."""

    frame_index: int
    time: float
    detections: Detections
    tracks: tuple[Track, ...]
    zones: ZoneContents
    settle: SettleState
    snapshot: TableSnapshot | None
    interpretation: Interpretation[Any, Any] | None
    moves: tuple[Any, ...]
    move_dicts: tuple[dict[str, Any], ...]
    evidence: Mapping[str, Any] | None
    camera: BumpReport | None
    timings: Mapping[str, float]  # milliseconds per stage in this frame
    # Settled zones that have held a card the identifier cannot name for
    # `PipelineConfig.unnamed_notice_seconds`: something may hide part of it.
    unnamed: frozenset[str] = frozenset()
    amends: int = 0

    @property
    def pending(self) -> bool:
        return self.interpretation is not None and self.interpretation.pending


# -- the composition --------------------------------------------------------------------------------


class Pipeline:
    """Wires the stages for one camera and one game; feed it every frame in order.

    Holds the belief (the game state the moves were applied to). A feed that shares the game
    with an operator sets it again with `set_belief` after a correction.
    """

    def __init__(
        self,
        config: PipelineConfig | None = None,
        *,
        game: str,
        players: int,
        profile: TableProfile,
        finder: CardFinder,
        identifier: CardIdentifier,
        belief: Any = None,
        options: Mapping[str, Any] | None = None,
        setup: Mapping[str, Any] | None = None,
        timer: StageTimer | None = None,
        tokens: Any = None,
        corners: Any = None,
        token_counter: Any = None,
    ) -> None:
        self.config = config or PipelineConfig.for_game(game)
        self.ruleset: Ruleset[Any, Any] = get_game(game)
        self.game = game
        self.players = players
        self.finder = finder
        self.identifier = identifier
        if self.config.read_covered and not getattr(identifier, "reads_covered", False):
            raise PipelineError(
                "read_covered: this identifier cannot read a covered card's visible part (its model "
                "has no per-cell outputs: add them with `python -m vision.train.cells MODEL.onnx`, or "
                "use the shipped models/identifier.onnx); leave --read-covered out to read whole cards only"
            )
        # A `vision.corners.CornerRefiner` for the crops (its answers kept for cards that stay
        # put, `KeptRefinements`), or None.
        self.corner_refiner = KeptRefinements(corners) if corners is not None else None
        self.timer = timer or StageTimer()
        self.layout = build_layout(game, players, profile.table_mm, marker_mm=profile.marker_mm)
        # Zones where only one card shows (a pile's top, a holder's card).
        self._one_seen = frozenset(z.id for z in self.layout.zones
                                   if z.stacking in (Stacking.TOP_VISIBLE, Stacking.SINGLE))
        self.interpreter: Interpreter[Any, Any] = Interpreter(self.ruleset, self.config.interpret)
        if belief is None:
            belief = self.ruleset.initial_state(players=players, options=options, setup=setup)
        self.belief = belief
        self.tracker = CardTracker(self.config.tracker, to_table=self._to_table)
        self.token_model = tokens  # a `vision.tokens.TokenModel`: counts tokens and reads the die
        self.token_counter: Any = token_counter  # else built from `tokens` for the profile
        self.bump = BumpMonitor(profile, self.config.bump) if self.config.camera_check else None
        self._use_profile(profile)
        self._dirty: set[str] = set()
        self._last_read: dict[str, tuple[tuple[int, str | None], ...]] = {}
        self._taken: dict[str, tuple[tuple[int, str | None], ...]] = {}  # as of the last read taken
        self._pending_since: int | None = None
        self._last_check = -(10**9)
        self._dwell: dict[str, tuple[float, float]] = {}  # a hand's stays in each zone since it was read (s)
        self._unnamed: dict[str, float] = {}  # seconds each settled zone has held a card not named
        self._numbers: tuple[Any, frozenset[str]] = (None, frozenset())  # belief, its number zones
        self._over: dict[str, tuple[float, float]] = {}  # a hand's stays over each counter zone since it was counted
        self._last_time: float | None = None
        self._tried: frozenset[tuple[str, tuple[tuple[int, str | None], ...]]] | None = None  # busy read tried
        self._handled: set[str] = set()  # one-card zones a hand was over since they last settled
        self._was_settled: frozenset[str] = frozenset()

    @classmethod
    def from_models(
        cls,
        config: PipelineConfig | None = None,
        *,
        game: str,
        players: int,
        profile: TableProfile,
        finder_path: str | Path | None = None,
        identifier_path: str | Path | None = None,
        pack: Any = None,
        threads: int = 1,
        tokens_path: str | Path | None = None,
        identifier_inset: float | None = None,
        finder: CardFinder | None = None,
        identifier: CardIdentifier | None = None,
        **kwargs: Any,
    ) -> Pipeline:
        """Load the ONNX finder and identifier (default: the shipped models) and the gallery of
        `pack` (default: the game's proxy art), and for a layout with token or die zones the
        tokens model, then wire the pipeline. `identifier_inset`: the identifier's second view of
        each crop (`vision.identify.Identifier`; None: `CARD_INSET`). A `finder` or `identifier`
        given takes the place of that model (a truth stand-in measures the other model alone);
        a finder given brings no corner refiner."""
        from vision.art.pack import proxy_pack
        from vision.finder import DEFAULT_MODEL as FINDER_MODEL
        from vision.finder import Finder
        from vision.identify import DEFAULT_MODEL as IDENTIFIER_MODEL
        from vision.identify import Gallery, Identifier

        config = config or PipelineConfig.for_game(game)
        refiner = None
        if finder is None:
            model = Finder(finder_path or FINDER_MODEL, threads=threads, config=config.finder)
            finder, refiner = ModelFinder(model), model.refiner
        if identifier is None:
            embedder = Identifier(identifier_path or IDENTIFIER_MODEL, threads=threads, inset=identifier_inset)
            gallery = Gallery.build(pack if pack is not None else proxy_pack(game), embedder)
            identifier = GalleryIdentifier(embedder, gallery)
        from vision.tokens import DEFAULT_MODEL as TOKENS_MODEL
        from vision.tokens import TokenModel, counter_zone_ids

        if "tokens" not in kwargs and counter_zone_ids(build_layout(game, players, profile.table_mm)):
            kwargs["tokens"] = TokenModel(tokens_path or TOKENS_MODEL, threads=threads)
        return cls(
            config, game=game, players=players, profile=profile, finder=finder,
            identifier=identifier, corners=refiner, **kwargs,
        )

    # -- wiring -----------------------------------------------------------------------------------

    def _use_profile(self, profile: TableProfile) -> None:
        self.profile = profile
        polygons = zone_polygons_image(self.layout, profile.table_to_image, self.config.zoning)
        self.zone_polygons = polygons
        self.gate = SettleGate(polygons, self.config.settle)
        zoom_into = getattr(self.finder, "zoom_into", None)
        if self.config.zoom is not None and zoom_into is not None:
            zoom_into(self.zoom_regions(), self.config.zoom)
        if self.token_model is not None:
            from vision.tokens import TokenCounter

            self.token_counter = TokenCounter(model=self.token_model, layout=self.layout,
                                              table_to_image=profile.table_to_image)
        self._counts: dict[str, int] = {}  # counter zone -> its number when last counted

    def zoom_regions(self) -> list[ZoomRegion]:
        """The parts of the frame the finder reads closer (`PipelineConfig.zoom`): each spread
        zone's bounding box in the image, with a margin of `ZOOM_MARGIN` card diagonals as a
        card lies there on camera."""
        w, h = self.layout.card_mm
        out = []
        for zone in self.layout.zones:
            if zone.kind is not ZoneKind.SPREAD:
                continue
            poly = self.zone_polygons[zone.id]
            cx, cy = zone.center
            card = np.array([[cx - w / 2, cy - h / 2], [cx + w / 2, cy + h / 2]], np.float64)
            diagonal = float(np.linalg.norm(np.diff(np.asarray(self.profile.table_to_image(card)), axis=0)))
            lo, hi = poly.min(axis=0), poly.max(axis=0)
            out.append(ZoomRegion(inner=(float(lo[0]), float(lo[1]), float(hi[0]), float(hi[1])),
                                  margin=ZOOM_MARGIN * diagonal))
        return out

    def _may_be_covered(self, points_mm: np.ndarray) -> np.ndarray:
        """Per table point, whether a card there may lie partly under its neighbours: in a
        spread or a fan, or outside every zone (a TNT blast laid out), not on a pile or in a
        one-card place (`_one_seen`)."""
        return np.array([z not in self._one_seen for z in self.layout.assign_zones(points_mm)], bool)

    def _to_table(self, points: np.ndarray) -> np.ndarray:
        return self.profile.image_to_table(points)

    @property
    def zone_ids(self) -> tuple[str, ...]:
        return zone_ids(self.layout, self.config.zoning)

    def set_belief(self, belief: Any) -> None:
        """Take a new belief (an operator correction): anything pending is forgotten and every
        zone is read again once settled."""
        self.belief = belief
        self.interpreter.reset()
        self._pending_since = None
        self._last_read.clear()
        self._taken.clear()
        self._counts.clear()
        self._dwell.clear()
        self._over.clear()
        self._unnamed.clear()
        self._tried = None  # a busy table's picture is read again from the new belief

    def _number_zones(self) -> frozenset[str]:
        """Zones the belief shows as a number (`ExpectedZone.counted`: mk. I's face-down piles
        and token areas, an Angry Birds deck or a Mattel resource pile whose height changes
        unseen), not as cards."""
        if self._numbers[0] is not self.belief:
            look = self.interpreter.game.appearance(self.belief)
            self._numbers = (self.belief, frozenset(z for z, e in look.items() if e.counted))
        return self._numbers[1]

    # -- one frame ----------------------------------------------------------------------------------

    def process(self, frame: Frame) -> PipelineStep:
        """Run every stage on one frame; returns what it found and the moves it completed."""
        cfg = self.config
        index, image = int(frame.index), frame.image
        ms: dict[str, float] = {}
        timer = self.timer

        def timed(name: str) -> Any:
            return _Timed(timer, name, ms)

        camera = None
        if self.bump is not None:
            with timed("camera"):
                camera = self.bump.update(image)
            if camera.event is not None:
                self._use_profile(camera.event.new_profile)
        with timed("find"):
            detections = find_cards(self.finder, image, index)
        with timed("track"):
            update = track_cards(self.tracker, detections, image, index)
        with timed("settle"):
            settle = self.gate.update(image, frame_index=index)
        with timed("identify"):
            refresh: tuple[IdentifyRequest, ...] = ()
            fresh = settle.changed_since_last_settle
            if cfg.reread_handled:
                self._handled |= settle.hands_over & self._one_seen
                back = (settle.settled - self._was_settled) & self._handled
                self._handled -= back
                fresh |= back
            self._was_settled = settle.settled
            if fresh:
                before = self.tracker.tracks
                placed = zone_cards(self.layout, before, cfg)
                refresh = refresh_requests(before, placed, fresh)
            identify_tracks(self.tracker, self.identifier, image, index, cfg, refresh, self.corner_refiner,
                            self._to_table, self.layout.card_mm, self.profile.table_to_image,
                            self._may_be_covered)
        tracks = self.tracker.tracks
        with timed("zones"):
            contents = zone_cards(self.layout, tracks, cfg)
        camera_ok = camera is None or camera.status not in (BumpStatus.CAMERA_MOVED, BumpStatus.SUSPECT)

        self._dirty |= settle.changed_since_last_settle
        dt = 0.0 if self._last_time is None else max(0.0, float(frame.time) - self._last_time)
        self._last_time = float(frame.time)
        hand_dwell(self._dwell, settle.reached, dt)
        unnamed_time(self._unnamed, contents, settle.settled, dt)
        reached = frozenset(z for z, (longest, _) in self._dwell.items() if longest >= cfg.reach_seconds)
        # A hand at a zone that shows a number (a face-down pile's height, a few tokens) may
        # change it without the picture changing enough for the settle gate: such a zone is
        # read (counted) again once it settles. Card zones show their own changes.
        self._dirty |= reached & self._number_zones()
        # A token taken or added, or a die's new face, changes too few pixels for the settle
        # gate, and a palm is easily placed a zone away: a hand that stays over a counter zone
        # (tokens, the die) has it counted again.
        counted = settle.hands_over.intersection(self.token_counter.zones) if self.token_counter else frozenset()
        hand_dwell(self._over, counted, dt)
        self._dirty |= {z for z, (longest, _) in self._over.items() if longest >= cfg.reach_seconds}
        snapshot = interpretation = None
        moves: tuple[Any, ...] = ()
        evidence = None
        amends = 0
        readable = readable_zones(contents, settle, cfg) if camera_ok else frozenset()
        due = zones_to_read(contents, readable, frozenset(self._dirty), self._last_read)
        recheck = self._pending_since is not None and index - self._last_check >= cfg.recheck_pending_frames
        busy = False
        if cfg.busy_reads and camera_ok and not readable and self._pending_since is None:
            # The quiet table is held back: a move may have settled while the next one is
            # already under way elsewhere. Its zones are read if that read is sure (see
            # `Interpreter.observe_whole`); each picture of them is tried once.
            some = frozenset(z for z in settle.settled if contents.ready(z))
            some_due = zones_to_read(contents, some, frozenset(self._dirty), self._last_read)
            tried = frozenset((z, contents.signature(z)) for z in some) if some_due else None
            if tried is not None and tried != self._tried:
                self._tried = tried
                readable, due, busy = some, some_due, True
        if readable and (due or recheck):
            with timed("snapshot"):
                counts = None
                if self.token_counter is not None:
                    # A counter zone is counted again only when something moved in it since it
                    # was last counted (the model takes milliseconds per zone).
                    mine = readable & set(self.token_counter.zones)
                    stale = sorted(z for z in mine if z in self._dirty or z not in self._counts)
                    if stale:
                        self._counts.update(self.token_counter.counts(image, stale, frame_index=index))
                        for z in stale:
                            self._over.pop(z, None)
                    counts = {z: self._counts[z] for z in mine}
                snapshot = build_snapshot(contents, readable, index, float(frame.time), counts, reached,
                                          self._last_read, self._taken)
            with timed("interpret"):
                if busy:
                    interpretation = self.interpreter.observe_whole(self.belief, snapshot)
                else:
                    interpretation = self.interpreter.observe(self.belief, snapshot)
        if interpretation is None:
            snapshot = None  # a busy read not taken: nothing was read
        elif snapshot is not None:
            self._last_check = index
            shown = {z: contents.signature(z) for z in readable}
            if not interpretation.pending:
                self._pending_since = None
                for z in readable:  # what the hands did there is accounted for
                    self._dwell.pop(z, None)
                self._taken.update(shown)
            elif self._pending_since is None:
                self._pending_since = index
            self._last_read.update(shown)
            self._dirty -= readable
            moves = tuple(interpretation.moves)
            amends = interpretation.amends
            if moves or amends:
                self.belief = interpretation.state
                evidence = move_evidence(snapshot, interpretation, due or readable, cfg.evidence_candidates)
        return PipelineStep(
            frame_index=index,
            time=float(frame.time),
            detections=update.detections,
            tracks=tracks,
            zones=contents,
            settle=settle,
            snapshot=snapshot,
            interpretation=interpretation,
            moves=moves,
            move_dicts=tuple(self.ruleset.move_to_dict(m) for m in moves),
            evidence=MappingProxyType(evidence) if evidence is not None else None,
            camera=camera,
            timings=MappingProxyType(ms),
            unnamed=frozenset(z for z, t in self._unnamed.items() if t >= cfg.unnamed_notice_seconds),
            amends=amends,
        )


class _Timed:
    """Times one stage into the shared timer and this frame's figures."""

    __slots__ = ("_inner", "_ms", "_name", "_timer")

    def __init__(self, timer: StageTimer, name: str, ms: dict[str, float]) -> None:
        self._timer, self._name, self._ms = timer, name, ms

    def __enter__(self) -> None:
        self._inner = time.perf_counter()

    def __exit__(self, *exc: object) -> None:
        elapsed = (time.perf_counter() - self._inner) * 1000.0
        self._ms[self._name] = elapsed
        self._timer.record(self._name, elapsed)


# -- geometry and deal of a bundled clip ------------------------------------------------------------


def profile_from_truth(truth: Truth, *, frame: int = 0, source: str = "truth") -> TableProfile:
    """The table profile of a clip, read from its truth file (homography and lens of one frame):
    how bundled footage runs without a calibration step."""
    game, players = truth.clip.game, truth.clip.players
    if game is None or players is None:
        raise PipelineError(f"{source}: the clip names no game or player count; pass --calibration")
    framed = [f for f in truth.frames if f.camera is not None]
    if not framed:
        raise PipelineError(f"{source}: no frame holds the camera geometry; pass --calibration")
    cam = next((f.camera for f in framed if f.index >= frame), framed[0].camera)
    assert cam is not None
    lens = cam.lens
    k = np.array([[lens.fx, 0.0, lens.cx], [0.0, lens.fy, lens.cy], [0.0, 0.0, 1.0]])
    table_to_px = np.asarray(cam.homography, np.float64)
    homography = np.linalg.inv(table_to_px)
    homography /= homography[2, 2]
    layout = build_layout(game, players)
    return TableProfile(
        game=game,
        players=players,
        table_mm=layout.table_mm,
        marker_mm=DEFAULT_MARKER_MM,
        image_size=truth.clip.frame_size,
        homography=homography,
        lens=LensModel(
            camera_matrix=k,
            distortion=np.array([lens.k1, lens.k2, 0.0, 0.0, 0.0]),
            image_size=truth.clip.frame_size,
        ),
        method=CalibrationMethod.CORNERS,
        created=None,
    )


def setup_from_checkpoint(checkpoint: Checkpoint, layout: Layout, *, engine_zones: Iterable[str]) -> dict[str, list[str | None]]:
    """The opening deal as the camera sees it: every card of a spread and every pile top by
    its card id, the cards under a pile top unknown (None). Zones the engine does not take in
    a setup (`engine_zones` lists those it does) are left out."""
    stacking = {z.id: z.stacking for z in layout.zones}
    wanted = set(engine_zones)
    setup: dict[str, list[str | None]] = {}
    for zone, cards in checkpoint.zones.items():
        if zone not in wanted or not cards:
            continue
        ids = [c.card for c in cards]
        if stacking.get(zone) is Stacking.TOP_VISIBLE:
            ids = [ids[0], *([None] * (len(ids) - 1))]
        setup[zone] = ids
    return setup


def setup_from_truth(truth: Truth, ruleset: Ruleset[Any, Any], *, source: str = "truth") -> dict[str, list[str | None]]:
    """The opening deal of a clip from its first checkpoint (see `setup_from_checkpoint`).
    Zones off the table that the rules deal the same in every game (mk. I's starting hands)
    are taken from the rules: the camera cannot see them, and need not."""
    if not truth.checkpoints or truth.clip.game is None or truth.clip.players is None:
        raise PipelineError(f"{source}: no checkpoint of the opening table; pass the deal with --setup")
    players = truth.clip.players
    blank = ruleset.zones(ruleset.initial_state(players=players, seed=0))
    other = ruleset.zones(ruleset.initial_state(players=players, seed=1))
    layout = build_layout(truth.clip.game, players)
    setup = setup_from_checkpoint(truth.checkpoints[0], layout, engine_zones=blank.keys())
    on_table = {z.id for z in layout.zones}
    for zone, cards in blank.items():
        dealt = [c for c in cards if c is not None]
        if zone in on_table or zone in setup or not dealt or len(dealt) != len(cards):
            continue
        if other.get(zone) == cards:
            setup[zone] = dealt
    return setup


# -- truth stand-ins for the models (test doubles) ---------------------------------------------------


class TruthOracleFinder:
    """TEST DOUBLE: 'finds' the cards a truth file lists for the frame index it is given.

    Cards seen less than `min_visible` are left out, as a finder misses them; `corner_noise_px`
    adds seeded Gaussian noise to the corners. Used by tests and by `cardtrack bench pipeline
    --oracle` to check and measure everything downstream of the models; never for play.
    """

    def __init__(self, truth: Truth, *, min_visible: float = 0.3, corner_noise_px: float = 0.0, seed: int = 0) -> None:
        self._frames = {f.index: f for f in truth.frames}
        self.min_visible = min_visible
        self.corner_noise_px = corner_noise_px
        self._rng = np.random.default_rng(seed)

    def find(self, image: np.ndarray, *, frame_index: int) -> Detections:
        del image
        truth = self._frames.get(frame_index)
        cards = [c for c in truth.cards if c.visible >= self.min_visible] if truth is not None else []
        if not cards:
            return Detections.empty()
        corners = np.array([c.corners for c in cards], np.float32)
        if self.corner_noise_px > 0:
            corners += self._rng.normal(0.0, self.corner_noise_px, corners.shape).astype(np.float32)
        return Detections(corners=corners, scores=np.ones(len(cards), np.float32))


class TruthOracleIdentifier:
    """TEST DOUBLE: names each crop as a perfect identifier would, by the card on top where the
    crop lies: of the truth cards in the same frame whose quads overlap the crop's at least
    `min_iou`, those within `pile_iou` of the best overlap (a pile's cards), the most visible.
    So the crops of a finder's corners, a pixel or two off, are named as those of the truth's.
    A runner-up face (`runner_up`, `runner_up_score`) can be added to exercise the rules' use of
    candidates. Never for play."""

    def __init__(
        self, truth: Truth, *, score: float = 0.9, runner_up: str | None = None, runner_up_score: float = 0.05,
        min_iou: float = 0.5, pile_iou: float = 0.15,
    ) -> None:
        self._frames = {f.index: f for f in truth.frames}
        self.score = score
        self.runner_up = runner_up
        self.runner_up_score = runner_up_score
        self.min_iou = min_iou
        self.pile_iou = pile_iou

    def identify(
        self, crops: Sequence[np.ndarray], *, corners: np.ndarray, frame_index: int
    ) -> list[tuple[FaceCandidate, ...]]:
        truth = self._frames.get(frame_index)
        if truth is None or not truth.cards or not len(crops):
            return [() for _ in crops]
        quads = np.asarray(corners, np.float64).reshape(-1, 4, 2)
        overlap = iou_matrix(quads, np.array([c.corners for c in truth.cards], np.float64))
        out: list[tuple[FaceCandidate, ...]] = []
        for crop, quad, row in zip(crops, quads, overlap, strict=True):
            if float(row.max()) < self.min_iou:
                out.append(())
                continue
            near = np.flatnonzero(row >= float(row.max()) - self.pile_iou)
            best = max(near, key=lambda i: (truth.cards[i].visible, row[i]))
            face = truth.cards[best].face
            turned = crop_turned(quad, np.asarray(truth.cards[best].corners, np.float64),
                                 crop_wide=crop.shape[1] > crop.shape[0])
            found = [FaceCandidate(face=face, rotated_180=turned, score=self.score)]
            if self.runner_up is not None and self.runner_up != face:
                found.append(FaceCandidate(face=self.runner_up, rotated_180=turned, score=self.runner_up_score))
            out.append(tuple(found))
        return out


class TruthOracleTokenCounter:
    """TEST DOUBLE: the number of each counter zone (tokens, the die's face) as the truth's
    checkpoints give it once the latest move completed by the frame is done (checkpoint 0 is the
    opening table, checkpoint k+1 follows move k). The pipeline counts a zone only once it has
    settled, after the hand that changed it left. Never for play."""

    def __init__(self, truth: Truth) -> None:
        self._done = sorted(m.frame for m in truth.moves)
        self._checkpoints = truth.checkpoints
        self.zones: tuple[str, ...] = tuple(sorted({z for c in truth.checkpoints for z in c.counts}))

    def counts(self, image: np.ndarray, zones: Sequence[str] | None = None, *,
               frame_index: int | None = None) -> Mapping[str, int]:
        del image
        if frame_index is None:
            raise PipelineError("TruthOracleTokenCounter.counts: needs the frame index")
        done = bisect.bisect_right(self._done, frame_index)
        if len(self._checkpoints) == len(self._done) + 1:
            checkpoint = self._checkpoints[done]
        else:  # checkpoints not one per move: the latest one by the frame
            checkpoint = next((c for c in reversed(self._checkpoints) if c.frame <= frame_index),
                              self._checkpoints[0])
        wanted = self.zones if zones is None else zones
        return MappingProxyType({z: int(checkpoint.counts[z]) for z in wanted if z in checkpoint.counts})


def crop_turned(crop: np.ndarray, card: np.ndarray, *, crop_wide: bool | None = None) -> bool:
    """Whether a card whose own corners (TL, TR, BR, BL) are `card` reads upside down in the
    crop cut from the corners `crop` (4, 2), as the identifier reads it: a landscape crop or
    face is turned a quarter clockwise to portrait first (`vision.preprocess`). Whether the
    crop was cut landscape is `crop_wide` (None: its longer edge in the image)."""
    q = np.asarray(crop, np.float64).reshape(4, 2)
    c = np.asarray(card, np.float64).reshape(4, 2)
    if crop_wide is None:
        crop_wide = bool(np.linalg.norm(q[1] - q[0]) > np.linalg.norm(q[2] - q[1]))
    face_wide = np.linalg.norm(c[1] - c[0]) > np.linalg.norm(c[2] - c[1])
    if crop_wide == face_wide:
        up = q[0] + q[1] - q[2] - q[3]
    elif crop_wide:  # a portrait face in a landscape crop: the crop's left side is its top
        up = q[0] + q[3] - q[1] - q[2]
    else:  # a landscape face in a portrait crop: the face's top lies on the crop's right
        up = q[1] + q[2] - q[0] - q[3]
    return float(np.dot(up, c[0] + c[1] - c[2] - c[3])) < 0.0


# -- comparing with the truth ------------------------------------------------------------------------


# Fields that only say what the camera saw, per move name ("*": every move): the cards
# revealed, the die rolled, the back of an explored or traded-for Explorers landscape (`item`),
# and the slot and height of the stack an mk. I `move` made (a simulated game leaves both to
# the rules' default, the whole stack in its slot; the camera states what it saw).
SEEN_FIELDS: Mapping[str, frozenset[str]] = MappingProxyType(
    {
        "*": frozenset({"reveal", "roll"}),
        "explore": frozenset({"item"}),
        "trade": frozenset({"item"}),
        "move": frozenset({"slot", "count"}),
    }
)


def move_key(move: Mapping[str, Any]) -> str:
    """A move in comparable form: what the camera saw turning up (`SEEN_FIELDS`) left out, lists
    of card ids sorted (a payment is a set)."""
    seen = SEEN_FIELDS["*"] | SEEN_FIELDS.get(str(move.get("move", "")), frozenset())
    clean = {
        k: sorted(v) if isinstance(v, list) and all(isinstance(x, str) for x in v) else v
        for k, v in move.items()
        if k not in seen
    }
    return repr(sorted(clean.items()))


@dataclass(frozen=True, slots=True, kw_only=True)
class MoveScore:
    """Emitted moves against the truth's: matched in order (longest common subsequence)."""

    emitted: int
    expected: int
    matched: int
    delays_frames: tuple[int, ...]  # per matched move: emitted frame - truth completion frame

    @property
    def precision(self) -> float:
        return self.matched / self.emitted if self.emitted else 1.0

    @property
    def recall(self) -> float:
        return self.matched / self.expected if self.expected else 1.0


def score_moves(
    emitted: Sequence[tuple[int, Mapping[str, Any]]], expected: Sequence[tuple[int, Mapping[str, Any]]]
) -> MoveScore:
    """Match (frame, move) lists in order by `move_key` at any distance (`match_moves`); table
    corrections count as emitted."""
    pairs = match_moves(emitted, expected).pairs
    delays = tuple(int(emitted[i][0]) - int(expected[j][0]) for i, j in pairs)
    return MoveScore(emitted=len(emitted), expected=len(expected), matched=len(pairs), delays_frames=delays)


@dataclass(frozen=True, slots=True, kw_only=True)
class MoveMatch:
    """Read moves against the truth's: pairs (read index, truth index), and the rest."""

    pairs: tuple[tuple[int, int], ...]
    missed: tuple[int, ...]  # truth indices
    spurious: tuple[int, ...]  # read indices


def match_moves(
    emitted: Sequence[tuple[int, Mapping[str, Any]]],
    expected: Sequence[tuple[int, Mapping[str, Any]]],
    tolerance: int | None = None,
) -> MoveMatch:
    """The most pairs, in order, of a read move and a truth move that are the same move with
    the same cards (`move_key`: what the camera saw left out, payments as sets) and lie at most
    `tolerance` frames apart (None: any distance)."""
    if tolerance is not None and tolerance < 0:
        raise PipelineError(f"move tolerance must be 0 frames or more, got {tolerance}")
    a = [(int(f), move_key(m)) for f, m in emitted]
    b = [(int(f), move_key(m)) for f, m in expected]
    n, m = len(a), len(b)

    def fits(i: int, j: int) -> bool:
        return a[i][1] == b[j][1] and (tolerance is None or abs(a[i][0] - b[j][0]) <= tolerance)

    best = [[0] * (m + 1) for _ in range(n + 1)]
    for i in range(n - 1, -1, -1):
        for j in range(m - 1, -1, -1):
            best[i][j] = max(best[i + 1][j], best[i][j + 1], best[i + 1][j + 1] + 1 if fits(i, j) else 0)
    pairs: list[tuple[int, int]] = []
    i = j = 0
    while i < n and j < m:
        if fits(i, j) and best[i][j] == best[i + 1][j + 1] + 1:
            pairs.append((i, j))
            i += 1
            j += 1
        elif best[i + 1][j] >= best[i][j + 1]:
            i += 1
        else:
            j += 1
    read = {p[0] for p in pairs}
    truth = {p[1] for p in pairs}
    return MoveMatch(
        pairs=tuple(pairs),
        missed=tuple(k for k in range(m) if k not in truth),
        spurious=tuple(k for k in range(n) if k not in read),
    )
