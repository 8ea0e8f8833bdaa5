"""Offline evaluation: recorded footage and its truth file, replayed through the live pipeline.

Each clip (a video with its truth file beside it, a clip folder, or a frame folder) is read
frame by frame with `vision.capture.open_source` and fed to `Pipeline.process`, the same call
`cardtrack run` makes, with the geometry and opening deal taken from the truth file; the models
are the shipped ones unless others are named. What the pipeline did is scored against the truth:
the finder (average precision of card quadrilaterals at IoU 0.5 and over 0.5–0.95, recall by
visible fraction, corner error), the identifier (top-1 face of every crop it was asked about,
read through a recording wrapper around the identifier the pipeline was given, and the
per-frame identity of tracked cards), the moves (same move, same cards, within a frame
tolerance), the latency from a move's completion to its reading, the final state, the
referee's calls of a game that has one (`round_result`: Angry Birds announces each round's
winner from the cards laid; the call on the overlay when the cards are collected is compared with
the round's real outcome under the stat that was named) and the speed of each stage. Every figure is kept as mergeable counts (`Tally`), so the overall figures,
the merge of shard summaries and the comparison with a committed baseline all come from the
same numbers. Clips run in parallel in a process pool, each worker with single-threaded
models; `cardtrack bench pipeline` shares the clip loading and replay (`load_clip`,
`clip_pipeline`, `replay_clip`). Drawing (report, plots, contact sheets) is in `vision.report`.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any, cast

import cv2
import numpy as np
from tqdm import tqdm

from calibration.profile import TableProfile, load_profile
from engine.core import Audience
from vision.capture import IMAGE_SUFFIXES, CaptureConfig, Frame, open_source
from vision.detections import iou_matrix
from vision.identify import FaceCandidate
from vision.pipeline import (
    CardIdentifier,
    CoveredCardIdentifier,
    Pipeline,
    PipelineConfig,
    PipelineStep,
    TruthOracleFinder,
    TruthOracleIdentifier,
    TruthOracleTokenCounter,
    better_answer,
    match_moves,
    profile_from_truth,
    setup_from_truth,
)
from vision.report import contact_sheet, dumps_summary, sheet_frames, thumbnail
from vision.synth.truth import FrameTruth, Truth, load_truth
from vision.timing import StageStats, StageTimer

SUMMARY_VERSION = 1
SUMMARY_KIND = "cardtrack-eval-summary"
TRUTH_NAMES = ("truth.json.gz", "truth.json")
VIDEO_SUFFIXES = (".mp4", ".avi", ".mkv", ".mov", ".webm", ".m4v", ".mpg", ".mpeg", ".wmv")
IOU_THRESHOLDS = tuple(round(0.5 + 0.05 * k, 2) for k in range(10))
POSITIVE_VISIBLE = 0.3  # cards at least this visible must be found; less visible ones are ignored
CORNER_VISIBLE = 0.6  # corner error is measured on found cards at least this visible
VISIBLE_BINS = (0.0, 0.1, 0.3, 0.5, 0.7, 0.9, 1.0)  # recall bins: (lo, hi], hidden cards left out
SCORE_PATHS = frozenset({"scores", "winner"})  # what `final_scores` compares of the final state
SCORE_STEP = 0.01  # finder scores are pooled in steps of this size for the average precision
PX_STEP = 0.1  # corner error histogram step, pixels
PCT_STEP = 0.1  # corner error histogram step, % of the card width
TOLERANCE_SECONDS = 2.0  # default move tolerance: this much of the clip's frames
WORST_FACES = 8
UNKNOWN_FACE = "(unknown)"  # the identifier's answer when no face scored above its threshold


class EvaluationError(ValueError):
    """Footage, truth, options or summaries that cannot be evaluated; the message says what to do."""


class MediaKind(StrEnum):
    """Where a clip's pixels are."""

    VIDEO = "video"
    FRAMES = "frames"


# -- footage: what the user named ------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class Footage:
    """One clip to evaluate: its name in the report, the path given, its truth file, and its
    pixels (None: named by the truth file's `clip.media`, resolved when the clip is loaded)."""

    name: str
    path: Path
    truth: Path
    media: Path | None = None


def truth_in(folder: Path) -> Path | None:
    """The truth file inside `folder` (`truth.json.gz` first), if any."""
    return next((folder / n for n in TRUTH_NAMES if (folder / n).is_file()), None)


def _videos_in(folder: Path) -> list[Path]:
    return sorted(p for p in folder.iterdir() if p.is_file() and p.suffix.lower() in VIDEO_SUFFIXES)


def _has_images(folder: Path) -> bool:
    return any(p.is_file() and p.suffix.lower() in IMAGE_SUFFIXES for p in folder.iterdir())


def _clip_name(path: Path) -> str:
    if path.is_dir():
        return path.resolve().name if path.resolve().name != "frames" else path.resolve().parent.name
    return path.resolve().parent.name if path.stem == "clip" else path.stem


def footage_at(path: Path, truth: Path | None = None) -> Footage | str:
    """The footage at `path`, or one line saying why it is not footage (a README, a folder of
    scripts, a video without a truth file). `truth` overrides the truth file beside it."""
    if not path.exists():
        raise EvaluationError(f"{path}: no such file or folder; give a video, a clip folder or a frame folder")
    if truth is not None and not truth.is_file():
        raise EvaluationError(f"{truth}: no such truth file (--truth)")
    name = _clip_name(path)
    if path.is_file():
        if path.suffix.lower() not in VIDEO_SUFFIXES:
            return "not a video, a clip folder or a frame folder"
        found = truth or truth_in(path.parent) or next(
            (path.with_name(f"{path.stem}.{n}") for n in TRUTH_NAMES if path.with_name(f"{path.stem}.{n}").is_file()),
            None,
        )
        if found is None:
            return f"no truth file beside it ({' or '.join(TRUTH_NAMES)}); pass --truth FILE"
        return Footage(name=name, path=path, truth=found, media=path)
    own = truth or truth_in(path)
    if own is not None:
        if truth is not None:
            media = None if truth_in(path) == truth else path
            return Footage(name=name, path=path, truth=truth, media=media)
        return Footage(name=name, path=path, truth=own)
    if _has_images(path):
        beside = truth_in(path.parent)
        if beside is None:
            return f"a frame folder without a truth file (inside it or beside it: {' or '.join(TRUTH_NAMES)})"
        return Footage(name=name, path=path, truth=beside, media=path)
    return "no truth file, video or frames in it"


def collect_footage(paths: Sequence[str | Path], *, truth: Path | None = None) -> tuple[tuple[Footage, ...], tuple[str, ...]]:
    """The clips among `paths` in a stable order (sorted by path), each with a unique name, and
    a one-line notice per path skipped. No clip at all is an error."""
    if truth is not None and len(paths) != 1:
        raise EvaluationError(f"--truth names the truth of one clip; {len(paths)} footage paths were given")
    clips: list[Footage] = []
    notices: list[str] = []
    seen_paths: set[Path] = set()
    for raw in paths:
        if Path(raw).resolve() in seen_paths:
            continue  # the same clip named twice is evaluated once
        seen_paths.add(Path(raw).resolve())
        found = footage_at(Path(raw), truth)
        if isinstance(found, str):
            notices.append(f"{raw}: skipped, {found}")
        else:
            clips.append(found)
    if not clips:
        why = "; ".join(notices[:4]) + (" …" if len(notices) > 4 else "")
        raise EvaluationError(
            f"no footage to evaluate ({why}): give a video with its truth file beside it, "
            "a clip folder (clip.mp4 + truth.json.gz) or a frame folder with a truth file"
        )
    clips.sort(key=lambda f: str(f.path))
    seen: dict[str, int] = {}
    named: list[Footage] = []
    for clip in clips:
        count = seen.get(clip.name, 0) + 1
        seen[clip.name] = count
        name = clip.name if count == 1 else f"{clip.name}-{count}"
        named.append(Footage(name=name, path=clip.path, truth=clip.truth, media=clip.media))
    return tuple(named), tuple(notices)


def parse_shard(text: str) -> tuple[int, int]:
    """`K/N` → (K, N): the shard that takes every N-th clip starting at clip K (0-based)."""
    try:
        k_text, n_text = text.split("/")
        k, n = int(k_text), int(n_text)
    except ValueError:
        raise EvaluationError(f"--shard {text!r}: expected K/N, e.g. 0/4 (every 4th clip from the first)") from None
    if n < 1 or not 0 <= k < n:
        raise EvaluationError(f"--shard {text!r}: K must lie in 0..N-1 and N be at least 1, e.g. 0/4 … 3/4")
    return k, n


def select_shard(items: Sequence[Any], index: int, count: int) -> list[Any]:
    """Every `count`-th item starting at `index`."""
    return list(items[index::count])


# -- one clip: truth, pixels, pipeline, replay ---------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class Clip:
    """A loaded clip: its truth, where its pixels are, and its frame rate."""

    footage: Footage
    truth: Truth
    media: Path
    kind: MediaKind
    fps: float

    @property
    def game(self) -> str:
        assert self.truth.clip.game is not None
        return self.truth.clip.game

    @property
    def players(self) -> int:
        assert self.truth.clip.players is not None
        return self.truth.clip.players


def _video_fps(path: Path) -> float | None:
    capture = cv2.VideoCapture(str(path))
    try:
        fps = float(capture.get(cv2.CAP_PROP_FPS) or 0.0)
    finally:
        capture.release()
    return fps if 0 < fps <= 1000 else None


def _media_of(footage: Footage, truth: Truth) -> tuple[Path, MediaKind]:
    if footage.media is not None:
        media = footage.media
    else:
        ref = truth.clip.media
        folder = footage.truth.parent
        if ref is not None:
            if ref.kind == "images":
                raise EvaluationError(
                    f"{footage.truth}: the truth describes unrelated stills (media kind 'images'), "
                    "not footage; measure stills with `cardtrack eval models`"
                )
            media = folder / ref.path
            if not media.exists():
                raise EvaluationError(f"{footage.truth}: clip.media names {ref.path}, which is not there")
        else:
            videos = _videos_in(folder)
            if (folder / "clip.mp4").is_file():
                media = folder / "clip.mp4"
            elif len(videos) == 1:
                media = videos[0]
            elif (folder / "frames").is_dir():
                media = folder / "frames"
            elif _has_images(folder):
                media = folder
            else:
                raise EvaluationError(
                    f"{folder}: no clip.mp4, single video or frames/ folder beside the truth file; "
                    "name the pixels in the truth's clip.media"
                )
    return media, (MediaKind.FRAMES if media.is_dir() else MediaKind.VIDEO)


def load_clip(footage: Footage) -> Clip:
    """Read and validate the truth file (`TruthError` names the file, JSON path and reason) and
    find the pixels."""
    truth = load_truth(footage.truth)
    if truth.clip.game is None or truth.clip.players is None:
        raise EvaluationError(
            f"{footage.truth}: the clip names no game or player count (clip.game, clip.players); "
            "the pipeline needs both"
        )
    media, kind = _media_of(footage, truth)
    fps = truth.clip.fps or (_video_fps(media) if kind is MediaKind.VIDEO else None) or 30.0
    return Clip(footage=footage, truth=truth, media=media, kind=kind, fps=float(fps))


STAND_INS = ("finder", "identifier")  # the models `ModelChoice.stand_in` can replace


@dataclass(frozen=True, slots=True, kw_only=True)
class ModelChoice:
    """Which finder and identifier run: ONNX files (None: the shipped ones) or, with `oracle`,
    the truth stand-ins (they measure everything downstream of the models); `stand_in`: one
    model only replaced by its truth stand-in ("finder" or "identifier"), which measures what
    the other one costs; `art`: the art pack whose gallery the identifier matches against
    (None: the game's proxy art), e.g. a deck enrolled from scans for a clip rendered with it."""

    finder: Path | None = None
    identifier: Path | None = None
    oracle: bool = False
    stand_in: str | None = None  # None, or one of STAND_INS
    threads: int = 1
    art: Path | None = None
    identifier_inset: float | None = None  # None: `vision.identify.CARD_INSET`
    read_covered: bool = False  # `PipelineConfig.read_covered`: a covered card read from its visible part
    zoom: float | None = None  # `PipelineConfig.zoom`; None: the game's (never), 0: never

    def __post_init__(self) -> None:
        if self.stand_in is not None and self.stand_in not in STAND_INS:
            raise EvaluationError(f"stand_in: {self.stand_in!r} is no model; one of {', '.join(STAND_INS)}")
        if self.stand_in is not None and self.oracle:
            raise EvaluationError("stand_in: with oracle both models are truth stand-ins already; give one of them")
        if self.stand_in is not None and getattr(self, self.stand_in) is not None:
            raise EvaluationError(f"stand_in: the {self.stand_in} is replaced by its truth stand-in, so the "
                                  f"{self.stand_in} model given ({getattr(self, self.stand_in)}) would not run; "
                                  "give one of them")
        if self.read_covered and (self.oracle or self.stand_in == "identifier"):
            raise EvaluationError("read_covered: the identifier is replaced by its truth stand-in, which reads "
                                  "covered cards from the truth already; leave it out")
        if self.zoom is not None and not (math.isfinite(self.zoom) and self.zoom >= 0):
            raise EvaluationError(f"zoom: {self.zoom} is no scale; give a number more than 0, or 0 for no closer reads")
        if self.zoom and (self.oracle or self.stand_in == "finder"):
            raise EvaluationError("zoom: the finder is replaced by its truth stand-in, which reads no part of the "
                                  "frame closer; leave it out")
        if self.stand_in == "identifier" and (self.art is not None or self.identifier_inset is not None):
            raise EvaluationError("stand_in: the identifier is replaced by its truth stand-in, so an art pack or "
                                  "an identifier inset would not be used; leave them out")

    def describe(self) -> dict[str, Any]:
        """Plain data for the summary: the model files and a short hash of each (a model a
        truth stand-in replaces: "truth stand-in")."""
        if self.oracle:
            return {"oracle": True, "finder": "truth stand-in", "identifier": "truth stand-in"}
        from vision.finder import DEFAULT_MODEL as FINDER_MODEL
        from vision.identify import DEFAULT_MODEL as IDENTIFIER_MODEL

        out: dict[str, Any] = {"oracle": False}
        if self.art is not None:
            out["art"] = _display_path(self.art)
        if self.identifier_inset is not None:
            out["identifier_inset"] = self.identifier_inset
        if self.read_covered:
            out["read_covered"] = True
        if self.zoom is not None:
            out["zoom"] = self.zoom
        for key, path in (("finder", self.finder or FINDER_MODEL), ("identifier", self.identifier or IDENTIFIER_MODEL)):
            if key == self.stand_in:
                out[key], out[f"{key}_sha256"] = "truth stand-in", None
                continue
            out[key] = _display_path(Path(path))
            out[f"{key}_sha256"] = _sha256(Path(path))
        shipped = Path(FINDER_MODEL).parent
        others = {p.name: _sha256(p) for p in sorted(shipped.glob("*.onnx"))
                  if p.name not in (Path(FINDER_MODEL).name, Path(IDENTIFIER_MODEL).name)}
        if others:
            out["other_shipped_sha256"] = others  # e.g. a corner refiner the finder may load
        return out


def _display_path(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def _sha256(path: Path) -> str | None:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()[:16]
    except OSError:
        return None


def clip_pipeline(
    clip: Clip,
    models: ModelChoice,
    *,
    profile: TableProfile | None = None,
    setup: Mapping[str, Any] | None = None,
    timer: StageTimer | None = None,
) -> Pipeline:
    """The pipeline `cardtrack run` builds for this clip: the game's config at the clip's frame
    rate, the geometry and opening deal from the truth unless given. As in `cardtrack run`, the
    camera bump check runs with a calibration profile and not with the truth's geometry (exact)."""
    truth, source = clip.truth, str(clip.footage.truth)
    zoom = {} if models.zoom is None else {"zoom": models.zoom or None}
    config = PipelineConfig.for_game(clip.game, fps=clip.fps, camera_check=profile is not None,
                                     read_covered=models.read_covered, **zoom)
    if profile is None:
        profile = profile_from_truth(truth, source=source)
    if setup is None:  # without a checkpoint this asks for --setup, as `cardtrack run` does
        from engine import get_game

        setup = setup_from_truth(truth, get_game(clip.game), source=source)
    common: dict[str, Any] = {
        "game": clip.game, "players": clip.players, "profile": profile, "setup": setup,
        "timer": timer or StageTimer(window=1_000_000),
    }
    if models.oracle:
        counter = TruthOracleTokenCounter(truth) if any(c.counts for c in truth.checkpoints) else None
        return Pipeline(config, finder=TruthOracleFinder(truth), identifier=TruthOracleIdentifier(truth),
                        token_counter=counter, **common)
    pack = None
    if models.art is not None:
        from vision.art.errors import PackError
        from vision.art.pack import open_pack

        try:
            pack = open_pack(models.art, clip.game)
        except PackError as exc:
            raise EvaluationError(f"--art: {exc}") from None
    return Pipeline.from_models(
        config, finder_path=models.finder, identifier_path=models.identifier, threads=models.threads,
        pack=pack, identifier_inset=models.identifier_inset,
        finder=TruthOracleFinder(truth) if models.stand_in == "finder" else None,
        identifier=TruthOracleIdentifier(truth) if models.stand_in == "identifier" else None, **common,
    )


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class IdentifyCall:
    """One call of the identifier: the frame, the crops' corners and its answers."""

    frame_index: int
    corners: np.ndarray  # (n, 4, 2)
    answers: tuple[tuple[FaceCandidate, ...], ...]


class RecordingIdentifier:
    """A `CardIdentifier` that passes every call to the identifier it wraps and keeps what was
    asked and answered until `drain` is called: the pipeline's code path is unchanged (the
    pipeline calls nothing of an identifier but `identify`, and `identify_visible` where the
    identifier `reads_covered`)."""

    def __init__(self, inner: CardIdentifier) -> None:
        self.inner = inner
        self._calls: list[IdentifyCall] = []

    def identify(
        self, crops: Sequence[np.ndarray], *, corners: np.ndarray, frame_index: int
    ) -> list[tuple[FaceCandidate, ...]]:
        answers = self.inner.identify(crops, corners=corners, frame_index=frame_index)
        self._calls.append(IdentifyCall(
            frame_index=frame_index, corners=np.array(corners, np.float32).reshape(-1, 4, 2),
            answers=tuple(tuple(a) for a in answers),
        ))
        return answers

    @property
    def reads_covered(self) -> bool:
        return bool(getattr(self.inner, "reads_covered", False))

    def identify_visible(
        self, crop: np.ndarray, masks: Sequence[np.ndarray], *, corners: np.ndarray, frame_index: int
    ) -> list[tuple[FaceCandidate, ...]]:
        """The wrapped identifier's reading of a covered card's visible part
        (`vision.pipeline.CoveredCardIdentifier`), recorded as one crop answered with the
        best of its masks' answers."""
        inner = cast(CoveredCardIdentifier, self.inner)
        answers = inner.identify_visible(crop, masks, corners=corners, frame_index=frame_index)
        named = [a for a in answers if a]
        best = max(named, key=lambda a: a[0].score) if named else ()
        self._calls.append(IdentifyCall(
            frame_index=frame_index, corners=np.array(corners, np.float32).reshape(-1, 4, 2),
            answers=(tuple(best),),
        ))
        return answers

    def drain(self) -> list[IdentifyCall]:
        calls, self._calls = self._calls, []
        return calls


@dataclass(frozen=True, slots=True, kw_only=True)
class StepRecord:
    """What one frame cost and produced: milliseconds in `Pipeline.process`, whether a change
    was held as pending, and the moves read (plain form)."""

    frame: int
    ms: float
    pending: bool
    moves: tuple[Mapping[str, Any], ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class Replay:
    """A clip read through the pipeline."""

    steps: tuple[StepRecord, ...]
    emitted: tuple[tuple[int, Mapping[str, Any]], ...]  # (frame, move) in reading order
    final_view: Mapping[str, Any]  # the belief at the end, the rules' operator view
    stages: Mapping[str, StageStats]

    @property
    def frames(self) -> int:
        return len(self.steps)

    @property
    def seconds(self) -> float:
        return sum(s.ms for s in self.steps) / 1000.0


StepObserver = Callable[[Frame, PipelineStep], None]


def replay_clip(
    pipeline: Pipeline,
    clip: Clip,
    *,
    max_frames: int | None = None,
    observer: StepObserver | None = None,
    progress: bool = True,
) -> Replay:
    """Every frame of the clip (or the first `max_frames`) through `Pipeline.process`, in order,
    timestamps from the file or the truth's frame rate."""
    config = CaptureConfig(fps=clip.fps)
    total = len(clip.truth.frames) if max_frames is None else min(max_frames, len(clip.truth.frames))
    steps: list[StepRecord] = []
    emitted: list[tuple[int, Mapping[str, Any]]] = []
    with open_source(clip.media, live=False, config=config) as source, tqdm(
        total=total or None, desc=clip.footage.name, unit="frame", disable=not progress, mininterval=1.0,
    ) as bar:
        for frame in source:
            if max_frames is not None and frame.index >= max_frames:
                break
            start = time.perf_counter()
            step = pipeline.process(frame)
            ms = (time.perf_counter() - start) * 1000.0
            steps.append(StepRecord(frame=step.frame_index, ms=ms, pending=step.pending, moves=step.move_dicts))
            if step.amends:  # moves read as two that were one: the newest ones are withdrawn
                del emitted[len(emitted) - step.amends:]
            emitted += [(step.frame_index, m) for m in step.move_dicts]
            if observer is not None:
                observer(frame, step)
            bar.update(1)
    view = pipeline.ruleset.view(pipeline.belief, Audience.OPERATOR)
    return Replay(steps=tuple(steps), emitted=tuple(emitted), final_view=view, stages=pipeline.timer.stats())


# -- metrics: geometry ------------------------------------------------------------------------------


def polygon_iou(a: Any, b: Any) -> float:
    """Intersection over union of two convex quads `(4, 2)`, either winding, any start corner
    (`vision.detections.iou_matrix`: `cv2.intersectConvexConvex` on the convex hulls)."""
    return float(iou_matrix(np.asarray(a, np.float32)[None], np.asarray(b, np.float32)[None])[0, 0])


def corner_errors(pred: Any, truth: Any) -> np.ndarray:
    """(4,) distances from each truth corner to the predicted one, under the best of the 4
    cyclic correspondences (the finder's corner order is ambiguous at 180°; the truth's is the
    card's own)."""
    p = np.asarray(pred, np.float64).reshape(4, 2)
    t = np.asarray(truth, np.float64).reshape(4, 2)
    options = np.stack([np.linalg.norm(np.roll(p, k, axis=0) - t, axis=1) for k in range(4)])
    return np.asarray(options[int(np.argmin(options.mean(axis=1)))], np.float64)


def card_width(quad: Any) -> float:
    """The shorter side of a card quad, pixels."""
    q = np.asarray(quad, np.float64).reshape(4, 2)
    return float(np.linalg.norm(q - np.roll(q, -1, axis=0), axis=1).min())


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class FrameMatch:
    """Detections of one frame against its truth cards at one IoU threshold."""

    tp: np.ndarray  # (n_det,) bool: matched a card that must be found
    ignored: np.ndarray  # (n_det,) bool: matched a barely visible card (neither right nor wrong)
    matched: np.ndarray  # (n_truth,) int: the detection that found the card, -1 if none

    @property
    def fp(self) -> np.ndarray:
        return np.asarray(~self.tp & ~self.ignored, bool)


def match_detections(
    iou: np.ndarray, scores: np.ndarray, visible: np.ndarray, threshold: float,
    positive: float = POSITIVE_VISIBLE,
) -> FrameMatch:
    """Greedy matching, best score first (the COCO rule with an ignore band). A detection takes
    the unmatched card at least `positive` visible that it overlaps most (IoU ≥ `threshold`):
    a true positive. Failing that, if it overlaps a barely visible card (0 < visible <
    `positive`) it is ignored, neither right nor wrong (the first such detection marks that
    card found, for recall by visibility); otherwise it is a false positive (a duplicate of a
    card already found counts as one). Hidden cards (visible 0) are never matched."""
    iou = np.asarray(iou, np.float64).reshape(len(scores), len(visible))
    visible = np.asarray(visible, np.float64)
    must = visible >= positive
    faint = (visible > 0.0) & ~must
    matched = np.full(len(visible), -1, np.int64)
    tp = np.zeros(len(scores), bool)
    ignored = np.zeros(len(scores), bool)
    hits = iou >= threshold
    for d in np.argsort(-np.asarray(scores, np.float64), kind="stable"):
        row = hits[d]
        if not row.any():
            continue
        open_ = must & (matched < 0) & row
        if open_.any():
            j = int(np.argmax(np.where(open_, iou[d], -1.0)))
            matched[j] = d
            tp[d] = True
            continue
        near = faint & row
        if near.any():
            ignored[d] = True
            free = near & (matched < 0)
            if free.any():
                matched[int(np.argmax(np.where(free, iou[d], -1.0)))] = d
    return FrameMatch(tp=tp, ignored=ignored, matched=matched)


def average_precision(scores: Any, tp: Any, positives: int) -> float | None:
    """All-point interpolated average precision (area under the precision envelope over
    recall) of detections `scores` with true-positive flags `tp`, `positives` cards to find.
    Equal scores count as one step. None when there is nothing to find."""
    if positives <= 0:
        return None
    s = np.asarray(scores, np.float64)
    t = np.asarray(tp, bool)
    levels = np.unique(s)[::-1]
    tps = np.array([int(t[s == v].sum()) for v in levels])
    fps = np.array([int((~t[s == v]).sum()) for v in levels])
    return _ap_from_steps(tps, fps, positives)


def _ap_from_steps(tps: np.ndarray, fps: np.ndarray, positives: int) -> float:
    ctp = np.cumsum(tps)
    cfp = np.cumsum(fps)
    recall = ctp / positives
    precision = ctp / np.maximum(ctp + cfp, 1)
    mrec = np.concatenate([[0.0], recall])
    mpre = np.concatenate([[1.0], precision])
    mpre = np.maximum.accumulate(mpre[::-1])[::-1]
    return float(np.sum((mrec[1:] - mrec[:-1]) * mpre[1:]))


# -- metrics: moves and state -----------------------------------------------------------------------


# -- metrics: the referee's calls -------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class RoundCall:
    """One round as a referee calls it: the cards laid (player -> card), the stat it is played
    under, and the outcome (the winner, or the tied players)."""

    stat: str | None
    cards: Mapping[str, str]
    winner: int | None
    tied: tuple[int, ...]

    def describe(self) -> str:
        outcome = f"player {self.winner} wins" if self.winner is not None else (
            "tie " + ", ".join(str(p) for p in self.tied) if self.tied else "no outcome")
        return f"{self.stat or 'stat not named'}: {outcome}"

    def to_dict(self) -> dict[str, Any]:
        return {"stat": self.stat, "cards": dict(self.cards), "winner": self.winner, "tied": list(self.tied)}


def has_referee(ruleset: Any) -> bool:
    """Whether the game calls rounds (its rules have a `round_result`, as Angry Birds does)."""
    return callable(getattr(ruleset, "round_result", None))


def _call_of(result: Any, stat: str | None) -> RoundCall | None:
    """What the overlay announces from a `round_result` for a round played under `stat`: the
    outcome once the stat is named, or, while it is not, its outcome under `stat` among those it
    gives for every stat. None while a card is still to be laid or the call is for another stat."""
    if result is None or result.waiting or not result.cards:
        return None
    cards = {str(p): c for p, c in result.cards.items()}
    if result.stat is not None:
        if not result.complete or result.stat.value != stat:
            return None
        return RoundCall(stat=stat, cards=cards, winner=result.winner, tied=tuple(sorted(result.tied)))
    by = result.by_stat.get(stat) if stat is not None else None
    if by is None:
        return None
    return RoundCall(stat=None, cards=cards, winner=by.get("winner"), tied=tuple(sorted(by.get("tied", ()))))


def truth_rounds(ruleset: Any, opening: Any, truth: Truth) -> list[tuple[int, RoundCall]]:
    """Every round the truth's players collect, as (frame of the move that collects it, the real
    call): the truth's moves replayed by the rules from the clip's opening state; a round is
    collected by the move after which its complete result is gone from the table."""
    state = opening
    out: list[tuple[int, RoundCall]] = []
    for m in truth.moves:
        before = ruleset.round_result(state)
        state = ruleset.apply(state, ruleset.parse_move(dict(m.move))).state
        if not before.complete:
            continue
        after = ruleset.round_result(state)
        if after.complete and dict(after.cards) == dict(before.cards) and after.kind == before.kind:
            continue
        stat = before.stat.value if before.stat is not None else None
        out.append((int(m.frame), RoundCall(
            stat=stat, cards={str(p): c for p, c in before.cards.items()}, winner=before.winner,
            tied=tuple(sorted(before.tied)),
        )))
    return out


def score_rounds(
    rounds: Sequence[tuple[int, RoundCall]], readings: Sequence[tuple[int, Any]]
) -> list[dict[str, Any]]:
    """Each truth round against the referee's call when its cards were collected (`readings`:
    (frame, `round_result` of the belief) after every frame that changed it, in order): right
    when the same cards are read and the announced outcome is the real one.

    The call is the last outcome announced since the previous round was collected, up to the
    frame of the move that collects this one. The truth gives that move the frame its last card
    is picked up on; the pipeline may have read the collection as it began, with a card or two
    still on the table, and then the overlay has already gone on to the next round: what it
    announced before then is what the players saw."""
    out: list[dict[str, Any]] = []
    k = -1
    for frame, real in rounds:
        start = k
        while k + 1 < len(readings) and readings[k + 1][0] <= frame:
            k += 1
        call = None
        for j in range(k, start, -1):
            call = _call_of(readings[j][1], real.stat)
            if call is not None:
                break
        right = (call is not None and dict(call.cards) == dict(real.cards)
                 and (call.winner, call.tied) == (real.winner, real.tied))
        says = call.describe() if call else "nothing announced"
        if call is not None and dict(call.cards) != dict(real.cards):
            says += " (for " + ", ".join(f"{p}: {c}" for p, c in call.cards.items()) + ")"
        out.append({"frame": frame, "truth": real.to_dict(), "called": call.to_dict() if call else None,
                    "right": right, "says": says, "should": real.describe()})
    return out


def _compatible(read: Any, truth: Any) -> bool:
    if read is None:
        return True  # not known to the camera (a card under a pile): matches anything
    if isinstance(truth, Mapping) and isinstance(read, Mapping):
        return all(_compatible(read.get(k), v) for k, v in truth.items())
    if isinstance(truth, list | tuple) and isinstance(read, list | tuple):
        return len(read) == len(truth) and all(_compatible(r, t) for r, t in zip(read, truth, strict=True))
    return bool(read == truth)


def state_differences(read: Mapping[str, Any], truth: Mapping[str, Any], *, limit: int = 40) -> list[dict[str, Any]]:
    """Where the state read differs from the truth's final state: per path (`scores`,
    `zones.player-1`), the value read and the truth's, and the kind of difference (`order`: the
    same items in another order, `cards`: other items, `value`: anything else). Mappings are
    compared key by key (the truth's keys), lists as a whole; a value the camera could not know
    (None) matches anything."""
    out: list[dict[str, Any]] = []

    def walk(r: Any, t: Any, path: str) -> None:
        if len(out) >= limit:
            return
        if isinstance(t, Mapping) and isinstance(r, Mapping):
            for key in t:
                walk(r.get(key), t[key], f"{path}.{key}" if path else str(key))
            return
        if not _compatible(r, t):
            kind = "value"
            if isinstance(t, list | tuple) and isinstance(r, list | tuple):
                same = sorted(map(repr, r)) == sorted(map(repr, t))
                kind = "order" if same else "cards"
            out.append({"path": path, "kind": kind, "read": _plain(r), "truth": _plain(t)})

    walk(read, truth, "")
    return out


def final_scores_equal(read: Mapping[str, Any], truth: Mapping[str, Any]) -> bool | None:
    """Whether the state read ends with the truth's scores and winner (`SCORE_PATHS`), however
    the rest differs; None when the truth's final state has no scores."""
    if "scores" not in truth:
        return None
    return all(_compatible(read.get(k), truth[k]) for k in SCORE_PATHS if k in truth)


def _plain(value: Any) -> Any:
    return json.loads(json.dumps(value, default=str))


# -- mergeable counts -------------------------------------------------------------------------------


class Histogram:
    """Counts of values in fixed steps (sparse), with their exact sum: merged by adding."""

    def __init__(self, step: float) -> None:
        self.step = step
        self.bins: dict[int, int] = {}
        self.count = 0
        self.total = 0.0

    def add(self, values: Iterable[float]) -> None:
        for v in values:
            k = math.floor(float(v) / self.step)
            self.bins[k] = self.bins.get(k, 0) + 1
            self.count += 1
            self.total += float(v)

    def merge(self, other: Histogram) -> None:
        for k, n in other.bins.items():
            self.bins[k] = self.bins.get(k, 0) + n
        self.count += other.count
        self.total += other.total

    def quantile(self, q: float) -> float | None:
        """The centre of the bin holding the q-quantile (None when empty)."""
        if not self.count:
            return None
        rank = q * (self.count - 1)
        seen = 0
        for k in sorted(self.bins):
            seen += self.bins[k]
            if seen > rank:
                return (k + 0.5) * self.step
        return (max(self.bins) + 0.5) * self.step

    def figures(self) -> dict[str, float | None]:
        mean = self.total / self.count if self.count else None
        return {"mean": _r(mean), "p50": _r(self.quantile(0.5)), "p95": _r(self.quantile(0.95))}

    def to_dict(self) -> dict[str, Any]:
        return {"step": self.step, "count": self.count, "sum": round(self.total, 6),
                "bins": [[k, self.bins[k]] for k in sorted(self.bins)]}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Histogram:
        h = cls(float(data["step"]))
        h.bins = {int(k): int(n) for k, n in data["bins"]}
        h.count = int(data["count"])
        h.total = float(data["sum"])
        return h


def _r(value: float | None, digits: int = 4) -> float | None:
    return None if value is None or not math.isfinite(value) else round(float(value), digits)


def _rate(num: int, den: int) -> float | None:
    return round(num / den, 4) if den else None


class Tally:
    """Every count the figures are made of, for one clip or many (`merge` adds them)."""

    def __init__(self) -> None:
        self.clips = 0
        self.frames_scored = 0
        self.detections = 0
        self.positives = 0  # cards at least POSITIVE_VISIBLE visible, summed over scored frames
        # per IoU threshold: finder score bin -> [true positives, false positives]
        self.ap: dict[str, dict[int, list[int]]] = {f"{t:.2f}": {} for t in IOU_THRESHOLDS}
        self.visible = [[0, 0] for _ in range(len(VISIBLE_BINS) - 1)]  # per bin: [cards, found]
        self.corner_px = Histogram(PX_STEP)
        self.corner_pct = Histogram(PCT_STEP)
        self.crop_pct = Histogram(PCT_STEP)  # the identifier's crops: corners as cut (refined)
        self.crops = 0  # identifier crops asked about in scored frames
        self.unmatched_crops = 0  # crops that matched no card at least POSITIVE_VISIBLE visible
        self.confusion: dict[str, dict[str, int]] = {}  # truth face -> answer -> crops
        self.tracked_cards = 0
        self.tracked_correct = 0
        self.moves_truth = 0
        self.moves_emitted = 0
        self.moves_matched = 0
        self.latency: list[int] = []
        self.states_compared = 0
        self.states_equal = 0
        self.scores_compared = 0  # final states whose truth lists the scores
        self.scores_equal = 0  # of which the scores (and the winner) read were the truth's
        self.rounds = 0  # rounds collected in the truth (games with a referee)
        self.rounds_called = 0  # of which the overlay announced the right outcome
        self.frames = 0
        self.seconds = 0.0
        self.stages: dict[str, list[float]] = {}  # stage -> [calls, total ms]

    # -- filling ----------------------------------------------------------------------------

    def add_frame(self, corners: np.ndarray, scores: np.ndarray, truth: FrameTruth) -> None:
        """The finder's detections of one annotated frame against its truth cards."""
        quads, visible = _visible_cards(truth)
        corners = np.asarray(corners, np.float32).reshape(-1, 4, 2)
        iou = iou_matrix(corners, quads) if len(corners) and len(quads) else np.zeros((len(corners), len(quads)))
        self.frames_scored += 1
        self.detections += len(corners)
        self.positives += int((visible >= POSITIVE_VISIBLE).sum())
        bins = np.clip(np.floor(np.asarray(scores, np.float64) / SCORE_STEP).astype(int), 0, round(1 / SCORE_STEP))
        at_half: FrameMatch | None = None
        for t in IOU_THRESHOLDS:
            match = match_detections(iou, scores, visible, t)
            if at_half is None:
                at_half = match
            table = self.ap[f"{t:.2f}"]
            for d in np.flatnonzero(~match.ignored):
                cell = table.setdefault(int(bins[d]), [0, 0])
                cell[0 if match.tp[d] else 1] += 1
        assert at_half is not None
        found = at_half.matched >= 0
        which = np.clip(np.searchsorted(VISIBLE_BINS, visible, side="left") - 1, 0, len(self.visible) - 1)
        for b, hit in zip(which, found, strict=True):
            self.visible[int(b)][0] += 1
            self.visible[int(b)][1] += int(hit)
        for j in np.flatnonzero(found & (visible >= CORNER_VISIBLE)):
            e = corner_errors(corners[at_half.matched[j]], quads[j])
            self.corner_px.add(e)
            self.corner_pct.add(e / max(card_width(quads[j]), 1e-6) * 100.0)

    def add_identify(self, corners: np.ndarray, answers: Sequence[Sequence[FaceCandidate]], truth: FrameTruth) -> None:
        """One identifier call in an annotated frame: each crop against the card it shows. A card
        cut both ways (its shape did not tell which side is long) counts once, by the answer the
        pipeline kept: the better one."""
        corners, answers = _kept_answers(np.asarray(corners, np.float32).reshape(-1, 4, 2), answers)
        quads, visible = _visible_cards(truth)
        iou = iou_matrix(corners, quads) if len(corners) and len(quads) else np.zeros((len(corners), len(quads)))
        for i, answer in enumerate(answers):
            self.crops += 1
            j = _best_card(iou[i], visible)
            if j is None:
                self.unmatched_crops += 1
                continue
            if visible[j] >= CORNER_VISIBLE:
                e = corner_errors(corners[i], quads[j])
                self.crop_pct.add(e / max(card_width(quads[j]), 1e-6) * 100.0)
            said = answer[0].face if answer else UNKNOWN_FACE
            row = self.confusion.setdefault(_faces(truth)[j], {})
            row[said] = row.get(said, 0) + 1

    def add_tracks(self, step: PipelineStep, truth: FrameTruth) -> None:
        """The identity the tracker holds for every card seen in an annotated frame."""
        seen = [t for t in step.tracks if t.detection_index is not None and t.misses == 0 and t.face is not None]
        if not seen:
            return
        quads, visible = _visible_cards(truth)
        corners = np.stack([np.asarray(t.corners, np.float32) for t in seen])
        iou = iou_matrix(corners, quads) if len(quads) else np.zeros((len(seen), 0))
        for i, track in enumerate(seen):
            j = _best_card(iou[i], visible)
            if j is None:
                continue
            self.tracked_cards += 1
            self.tracked_correct += int(track.face == _faces(truth)[j])

    # -- merging and plain data ------------------------------------------------------------

    def merge(self, other: Tally) -> None:
        self.clips += other.clips
        for name in ("frames_scored", "detections", "positives", "crops", "unmatched_crops", "tracked_cards",
                     "tracked_correct", "moves_truth", "moves_emitted", "moves_matched", "states_compared",
                     "states_equal", "scores_compared", "scores_equal", "rounds", "rounds_called", "frames"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.seconds += other.seconds
        for t, table in other.ap.items():
            mine = self.ap.setdefault(t, {})
            for k, (tp, fp) in table.items():
                cell = mine.setdefault(k, [0, 0])
                cell[0] += tp
                cell[1] += fp
        for b, (cards, found) in enumerate(other.visible):
            self.visible[b][0] += cards
            self.visible[b][1] += found
        self.corner_px.merge(other.corner_px)
        self.corner_pct.merge(other.corner_pct)
        self.crop_pct.merge(other.crop_pct)
        for face, row in other.confusion.items():
            mine_row = self.confusion.setdefault(face, {})
            for said, n in row.items():
                mine_row[said] = mine_row.get(said, 0) + n
        self.latency += other.latency
        for stage, (calls, total) in other.stages.items():
            timing = self.stages.setdefault(stage, [0, 0.0])
            timing[0] += calls
            timing[1] += total

    def to_dict(self) -> dict[str, Any]:
        return {
            "clips": self.clips, "frames_scored": self.frames_scored, "detections": self.detections,
            "positives": self.positives,
            "ap_bins": {t: [[k, *table[k]] for k in sorted(table)] for t, table in self.ap.items()},
            "visible_bins": [list(c) for c in self.visible],
            "corner_px": self.corner_px.to_dict(), "corner_pct": self.corner_pct.to_dict(),
            "crop_pct": self.crop_pct.to_dict(),
            "crops": self.crops, "unmatched_crops": self.unmatched_crops,
            "confusion": {f: dict(sorted(r.items())) for f, r in sorted(self.confusion.items())},
            "tracked_cards": self.tracked_cards, "tracked_correct": self.tracked_correct,
            "moves_truth": self.moves_truth, "moves_emitted": self.moves_emitted,
            "moves_matched": self.moves_matched, "latency_frames": list(self.latency),
            "states_compared": self.states_compared, "states_equal": self.states_equal,
            "scores_compared": self.scores_compared, "scores_equal": self.scores_equal,
            "rounds": self.rounds, "rounds_called": self.rounds_called,
            "frames": self.frames, "seconds": round(self.seconds, 4),
            "stages": {s: [int(c), round(t, 3)] for s, (c, t) in self.stages.items()},
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], source: str = "summary") -> Tally:
        t = cls()
        try:
            for name in ("clips", "frames_scored", "detections", "positives", "crops", "unmatched_crops",
                         "tracked_cards", "tracked_correct", "moves_truth", "moves_emitted", "moves_matched",
                         "states_compared", "states_equal", "frames"):
                setattr(t, name, int(data[name]))
            t.rounds = int(data.get("rounds", 0))  # summaries of games without a referee may lack them
            t.scores_compared = int(data.get("scores_compared", 0))  # summaries written before them lack them
            t.scores_equal = int(data.get("scores_equal", 0))
            t.rounds_called = int(data.get("rounds_called", 0))
            t.seconds = float(data["seconds"])
            t.ap = {str(k): {int(row[0]): [int(row[1]), int(row[2])] for row in rows}
                    for k, rows in data["ap_bins"].items()}
            t.visible = [[int(a), int(b)] for a, b in data["visible_bins"]]
            if len(t.visible) != len(VISIBLE_BINS) - 1:
                raise ValueError(f"visible_bins has {len(t.visible)} bins, expected {len(VISIBLE_BINS) - 1}")
            t.corner_px = Histogram.from_dict(data["corner_px"])
            t.corner_pct = Histogram.from_dict(data["corner_pct"])
            if "crop_pct" in data:  # summaries written before it lack it
                t.crop_pct = Histogram.from_dict(data["crop_pct"])
            t.confusion = {str(f): {str(s): int(n) for s, n in r.items()} for f, r in data["confusion"].items()}
            t.latency = [int(v) for v in data["latency_frames"]]
            t.stages = {str(s): [int(c), float(ms)] for s, (c, ms) in data["stages"].items()}
        except (KeyError, TypeError, ValueError) as exc:
            raise EvaluationError(f"{source}: the counts are incomplete or malformed ({exc!r}); "
                                  "write the summary again with this version of `cardtrack eval`") from None
        return t

    # -- figures ---------------------------------------------------------------------------

    def ap_at(self, threshold: str) -> float | None:
        if self.positives <= 0:
            return None
        table = self.ap.get(threshold, {})
        keys = sorted(table, reverse=True)
        tps = np.array([table[k][0] for k in keys], np.int64)
        fps = np.array([table[k][1] for k in keys], np.int64)
        return _ap_from_steps(tps, fps, self.positives) if keys else 0.0

    def figures(self) -> dict[str, Any]:
        """The figures a person reads (and the baseline compares)."""
        aps = [self.ap_at(f"{t:.2f}") for t in IOU_THRESHOLDS]
        known = [a for a in aps if a is not None]
        scored = sum(sum(r.values()) for r in self.confusion.values())
        correct = sum(r.get(f, 0) for f, r in self.confusion.items())
        unknown = sum(r.get(UNKNOWN_FACE, 0) for r in self.confusion.values())
        lat = np.asarray(self.latency, np.float64)
        stages = {s: {"calls": int(c), "mean_ms": _r(t / c if c else None, 3)} for s, (c, t) in self.stages.items()}
        return {
            "finder": {
                "frames": self.frames_scored,
                "truth_cards": self.positives,
                "detections": self.detections,
                "ap50": _r(aps[0]),
                "ap50_95": _r(float(np.mean(known)) if len(known) == len(aps) else None),
                "recall_by_visible": [
                    {"visible": f"{lo:.1f}-{hi:.1f}", "cards": cards, "found": found, "recall": _rate(found, cards)}
                    for (lo, hi), (cards, found) in zip(
                        itertools.pairwise(VISIBLE_BINS), self.visible, strict=True)
                ],
                "corner_cards": self.corner_px.count // 4,
                "corner_error_px": self.corner_px.figures(),
                "corner_error_pct": self.corner_pct.figures(),
            },
            "identifier": {
                "crops": self.crops,
                "scored": scored,
                "correct": correct,
                "unknown": unknown,
                "top1": _rate(correct, scored),
                "top1_answered": _rate(correct, scored - unknown),
                "crop_cards": self.crop_pct.count // 4,
                "crop_corner_error_pct": self.crop_pct.figures(),
                "worst_faces": worst_faces(self.confusion),
            },
            "tracked": {"cards": self.tracked_cards, "correct": self.tracked_correct,
                        "accuracy": _rate(self.tracked_correct, self.tracked_cards)},
            "moves": {
                "truth": self.moves_truth, "emitted": self.moves_emitted, "matched": self.moves_matched,
                "missed": self.moves_truth - self.moves_matched, "spurious": self.moves_emitted - self.moves_matched,
                "precision": _rate(self.moves_matched, self.moves_emitted),
                "recall": _rate(self.moves_matched, self.moves_truth),
                "f1": _rate(2 * self.moves_matched, self.moves_emitted + self.moves_truth),
            },
            "latency_frames": {
                "moves": len(self.latency),
                "p50": _r(float(np.percentile(lat, 50)) if len(lat) else None, 2),
                "p95": _r(float(np.percentile(lat, 95)) if len(lat) else None, 2),
                "max": int(lat.max()) if len(lat) else None,
            },
            "final_state": {"compared": self.states_compared, "equal": self.states_equal},
            "final_scores": {"compared": self.scores_compared, "equal": self.scores_equal},
            "referee": {"rounds": self.rounds, "called": self.rounds_called,
                        "accuracy": _rate(self.rounds_called, self.rounds)},
            "speed": {"frames": self.frames, "seconds": _r(self.seconds, 3),
                      "fps": _r(self.frames / self.seconds if self.seconds > 0 else None, 1),
                      "ms_per_stage": stages},
        }


def _visible_cards(truth: FrameTruth) -> tuple[np.ndarray, np.ndarray]:
    """Corners (n, 4, 2) and visible fractions of the cards of a frame that can be seen at all."""
    cards = [c for c in truth.cards if c.visible > 0.0]
    quads = np.array([c.corners for c in cards], np.float32).reshape(-1, 4, 2)
    return quads, np.array([c.visible for c in cards], np.float64)


def _faces(truth: FrameTruth) -> list[str]:
    return [c.face for c in truth.cards if c.visible > 0.0]


def _kept_answers(corners: np.ndarray, answers: Sequence[Sequence[FaceCandidate]]
                  ) -> tuple[np.ndarray, list[Sequence[FaceCandidate]]]:
    """One answer per card of an identifier call: of crops cut at the same corners, the answer
    the pipeline keeps (`vision.pipeline.better_answer`)."""
    kept: dict[bytes, int] = {}
    rows: list[int] = []
    best: list[Sequence[FaceCandidate]] = []
    for i, answer in enumerate(answers):
        key = corners[i].tobytes()
        if key not in kept:
            kept[key] = len(rows)
            rows.append(i)
            best.append(answer)
            continue
        k = kept[key]
        best[k] = better_answer(best[k], answer)
    return corners[rows], best


def _best_card(iou_row: np.ndarray, visible: np.ndarray) -> int | None:
    """The card at least POSITIVE_VISIBLE visible that a quad overlaps most, at IoU ≥ 0.5."""
    if not len(visible):
        return None
    masked = np.where(visible >= POSITIVE_VISIBLE, iou_row, -1.0)
    j = int(np.argmax(masked))
    return j if masked[j] >= 0.5 else None


def worst_faces(confusion: Mapping[str, Mapping[str, int]], limit: int = WORST_FACES) -> list[dict[str, Any]]:
    """The faces read wrong most often: crops, accuracy, and what they were taken for."""
    rows: list[dict[str, Any]] = []
    for face, answers in confusion.items():
        crops = sum(answers.values())
        wrong = crops - answers.get(face, 0)
        if not wrong:
            continue
        taken = sorted(((n, s) for s, n in answers.items() if s != face), key=lambda x: (-x[0], x[1]))
        rows.append({"face": face, "crops": crops, "wrong": wrong, "accuracy": _rate(crops - wrong, crops),
                     "taken_for": [{"face": s, "crops": n} for n, s in taken[:3]]})
    rows.sort(key=lambda r: (-r["wrong"], r["face"]))
    return rows[:limit]


# -- one clip, scored ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class EvalOptions:
    """How clips are evaluated.

    - `tolerance_frames`: how far apart a read move and its truth move may lie and still
      match; None: `TOLERANCE_SECONDS` of the clip's frames.
    - `max_frames`: evaluate only the first frames of each clip (truth moves after the cut
      are not expected; the final state is not compared).
    - `sheets`: write a contact sheet per wrong move (needs a report folder).
    - `profile`, `setup`: table geometry and opening deal when the truth file lacks them.
    """

    models: ModelChoice = field(default_factory=ModelChoice)
    tolerance_frames: int | None = None
    max_frames: int | None = None
    sheets: bool = True
    profile: Path | None = None
    setup: Mapping[str, Any] | None = None

    def __post_init__(self) -> None:
        if self.tolerance_frames is not None and self.tolerance_frames < 0:
            raise EvaluationError(f"--tolerance must be 0 frames or more, got {self.tolerance_frames}")
        if self.max_frames is not None and self.max_frames < 1:
            raise EvaluationError(f"--frames must be at least 1, got {self.max_frames}")


def evaluate_clip(footage: Footage, options: EvalOptions, report_dir: Path | None = None, *,
                  progress: bool = True) -> dict[str, Any]:
    """Replay one clip through the pipeline and score it; returns its summary entry (plain
    data), with contact sheets of its wrong moves written under `report_dir`."""
    clip = load_clip(footage)
    truth = clip.truth
    profile = load_profile(options.profile) if options.profile is not None else None
    if profile is not None and (profile.game != clip.game or profile.players != clip.players):
        raise EvaluationError(
            f"{options.profile}: calibrated for {profile.players} players of {profile.game}, but "
            f"{footage.truth} is a {clip.players}-player {clip.game} clip; give the clip's own profile"
        )
    pipeline = clip_pipeline(clip, options.models, profile=profile, setup=options.setup)
    recorder = RecordingIdentifier(pipeline.identifier)
    pipeline.identifier = recorder
    frames = {f.index: f for f in truth.frames}
    tally = Tally()
    tally.clips = 1
    ruleset = pipeline.ruleset
    referee = has_referee(ruleset)
    rounds = truth_rounds(ruleset, pipeline.belief, truth) if referee else []
    readings: list[tuple[int, Any]] = [(-1, ruleset.round_result(pipeline.belief))] if referee else []

    def observe(frame: Frame, step: PipelineStep) -> None:
        if referee and step.moves:
            readings.append((step.frame_index, ruleset.round_result(pipeline.belief)))
        calls = recorder.drain()
        annotated = frames.get(step.frame_index)
        if annotated is None:
            return
        tally.add_frame(np.asarray(step.detections.corners), np.asarray(step.detections.scores), annotated)
        for call in calls:
            tally.add_identify(call.corners, call.answers, annotated)
        tally.add_tracks(step, annotated)

    run = replay_clip(pipeline, clip, max_frames=options.max_frames, observer=observe, progress=progress)
    last = run.steps[-1].frame if run.steps else -1
    cut = options.max_frames is not None and bool(truth.frames) and last < truth.frames[-1].index
    expected = [(m.frame, dict(m.move)) for m in truth.moves if m.frame <= last]
    tolerance = options.tolerance_frames if options.tolerance_frames is not None else round(TOLERANCE_SECONDS * clip.fps)
    match = match_moves(run.emitted, expected, tolerance)
    tally.moves_truth = len(expected)
    tally.moves_emitted = len(run.emitted)
    tally.moves_matched = len(match.pairs)
    tally.latency = [int(run.emitted[i][0]) - int(expected[j][0]) for i, j in match.pairs]
    round_list = score_rounds([r for r in rounds if r[0] <= last], readings)
    tally.rounds = len(round_list)
    tally.rounds_called = sum(1 for r in round_list if r["right"])
    differences: list[dict[str, Any]] = []
    if truth.final_state is not None and not cut:
        differences = state_differences(run.final_view, truth.final_state)
        tally.states_compared = 1
        tally.states_equal = int(not differences)
        scores = final_scores_equal(run.final_view, truth.final_state)
        if scores is not None:
            tally.scores_compared = 1
            tally.scores_equal = int(scores)
    tally.frames = run.frames
    tally.seconds = run.seconds
    tally.stages = {name: [s.count, s.mean_ms * s.count] for name, s in run.stages.items()}

    missed = [{"frame": expected[j][0], "move": _plain(expected[j][1])} for j in match.missed]
    spurious = [{"frame": run.emitted[i][0], "move": _plain(run.emitted[i][1])} for i in match.spurious]
    if options.sheets and report_dir is not None and (missed or spurious):
        _write_sheets(clip, report_dir, missed, spurious, last)
    frame_ms = np.array([s.ms for s in run.steps]) if run.steps else np.zeros(1)
    entry: dict[str, Any] = {
        "footage": str(footage.path),
        "truth": str(footage.truth),
        "game": clip.game,
        "players": clip.players,
        "fps": clip.fps,
        "frames": run.frames,
        "annotated_frames": tally.frames_scored,
        "cut_at_frame": options.max_frames if cut else None,
        "tolerance_frames": tolerance,
        **tally.figures(),
        "move_list": {
            "matched": [{"truth_frame": expected[j][0], "frame": run.emitted[i][0], "move": _plain(expected[j][1])}
                        for i, j in match.pairs],
            "missed": missed,
            "spurious": spurious,
        },
        "final_state_differences": differences,
        "round_calls": round_list,
        "stage_ms": {name: {"calls": s.count, "p50": _r(s.p50_ms, 3), "p95": _r(s.p95_ms, 3)}
                     for name, s in run.stages.items()},
        "frame_ms": {"p50": _r(float(np.percentile(frame_ms, 50)), 2), "p95": _r(float(np.percentile(frame_ms, 95)), 2)},
        "counts": tally.to_dict(),
    }
    return entry


def _write_sheets(clip: Clip, report_dir: Path, missed: list[dict[str, Any]], spurious: list[dict[str, Any]],
                  last: int) -> None:
    """A contact sheet of the frames around each wrong move (the clip read once more, up to the
    last frame needed, thumbnails only); its path goes into the move's entry."""
    jobs: list[tuple[dict[str, Any], str, list[int]]] = []
    for kind, items in (("missed", missed), ("spurious", spurious)):
        jobs += [(item, kind, sheet_frames(int(item["frame"]), clip.fps, last)) for item in items]
    wanted = {p for _, _, picks in jobs for p in picks}
    thumbs: dict[int, np.ndarray] = {}
    with open_source(clip.media, live=False, config=CaptureConfig(fps=clip.fps)) as source:
        for frame in source:
            if frame.index > max(wanted):
                break
            if frame.index in wanted:
                thumbs[frame.index] = thumbnail(frame.image)
    folder = report_dir / "sheets" / clip.footage.name
    folder.mkdir(parents=True, exist_ok=True)
    for stale in folder.glob("*.jpg"):
        stale.unlink()  # sheets of an earlier run into the same folder
    names: set[str] = set()
    for item, kind, picks in jobs:
        shown = [(p, thumbs[p]) for p in picks if p in thumbs]
        if not shown:
            continue
        label = "truth move completes" if kind == "missed" else "move read"
        sheet = contact_sheet(shown, marked=int(item["frame"]), marked_label=label,
                              title=f"{clip.footage.name}: {kind} {json.dumps(item['move'])}")
        name = f"{kind}-{int(item['frame']):06d}"
        n = 1
        while name + (f"-{n}" if n > 1 else "") in names:
            n += 1
        name += f"-{n}" if n > 1 else ""
        names.add(name)
        path = folder / f"{name}.jpg"
        cv2.imwrite(str(path), sheet, [cv2.IMWRITE_JPEG_QUALITY, 85])
        item["sheet"] = path.relative_to(report_dir).as_posix()


def _worker_start() -> None:
    """Each worker process: single-threaded OpenCV (the models get one thread each)."""
    cv2.setNumThreads(1)


def evaluate_all(
    footages: Sequence[Footage], options: EvalOptions, *, jobs: int = 1, report_dir: Path | None = None,
    progress: bool = True,
) -> dict[str, dict[str, Any]]:
    """Every clip's summary entry by clip name, in the order given; clips run in `jobs`
    processes (spawned, each with single-threaded models and OpenCV)."""
    if jobs < 1:
        raise EvaluationError(f"--jobs must be at least 1, got {jobs}")
    if len(footages) > 1:
        for footage in tqdm(footages, desc="truth files", unit="clip", disable=not progress):
            load_truth(footage.truth)  # a bad truth file stops everything before the long part
    if jobs == 1 or len(footages) <= 1:
        return {f.name: evaluate_clip(f, options, report_dir, progress=progress) for f in footages}
    from concurrent.futures import FIRST_EXCEPTION, ProcessPoolExecutor, wait
    from multiprocessing import get_context

    results: dict[int, dict[str, Any]] = {}
    with ProcessPoolExecutor(max_workers=min(jobs, len(footages)), mp_context=get_context("spawn"),
                             initializer=_worker_start) as pool, tqdm(
        total=len(footages), desc="clips", unit="clip", disable=not progress,
    ) as bar:
        futures = {pool.submit(evaluate_clip, f, options, report_dir, progress=False): k for k, f in enumerate(footages)}
        pending = set(futures)
        while pending:
            done, pending = wait(pending, return_when=FIRST_EXCEPTION)
            for future in done:
                error = future.exception()
                if error is not None:
                    for other in pending:
                        other.cancel()
                    raise error
                results[futures[future]] = future.result()
                bar.update(1)
    return {f.name: results[k] for k, f in enumerate(footages)}


# -- summaries: build, merge, compare -----------------------------------------------------------------


def settings_dict() -> dict[str, Any]:
    return {
        "iou_thresholds": list(IOU_THRESHOLDS),
        "positive_visible": POSITIVE_VISIBLE,
        "corner_visible": CORNER_VISIBLE,
        "visible_bins": list(VISIBLE_BINS),
        "score_step": SCORE_STEP,
    }


def build_summary(
    clips: Mapping[str, Mapping[str, Any]], *, models: Mapping[str, Any], shard: tuple[int, int] | None = None,
    merged_from: Sequence[str] = (),
) -> dict[str, Any]:
    """The summary (version `SUMMARY_VERSION`): per clip (by name), and overall from their counts."""
    by_name = {str(name): dict(entry) for name, entry in clips.items()}
    overall = Tally()
    for name, clip in by_name.items():
        overall.merge(Tally.from_dict(clip["counts"], f"clip {name}"))
    return {
        "version": SUMMARY_VERSION,
        "kind": SUMMARY_KIND,
        "models": dict(models),
        "settings": settings_dict(),
        "shard": None if shard is None else {"index": shard[0], "count": shard[1]},
        "merged_from": list(merged_from),
        "clips": dict(sorted(by_name.items())),
        "overall": {"clips": len(by_name), **overall.figures(), "counts": overall.to_dict()},
    }


def load_summary(path: Path) -> dict[str, Any]:
    """A summary or baseline file, checked for its kind and version."""
    source = path / "summary.json" if path.is_dir() else path
    try:
        data = json.loads(source.read_text(encoding="utf-8"))
    except OSError as exc:
        raise EvaluationError(f"{source}: cannot read the summary ({exc.strerror or exc})") from None
    except json.JSONDecodeError as exc:
        raise EvaluationError(f"{source}: not JSON ({exc.msg} at line {exc.lineno})") from None
    if not isinstance(data, dict) or data.get("kind") != SUMMARY_KIND:
        raise EvaluationError(f"{source}: not a `cardtrack eval` summary (no \"kind\": \"{SUMMARY_KIND}\")")
    if data.get("version") != SUMMARY_VERSION:
        raise EvaluationError(
            f"{source}: summary version {data.get('version')!r}; this cardtrack reads version "
            f"{SUMMARY_VERSION}: evaluate again (or re-baseline, see datasets/baselines/README.md)"
        )
    if not isinstance(data.get("clips"), dict):
        raise EvaluationError(f"{source}: at $.clips: expected an object of clips")
    return data


def merge_summaries(summaries: Sequence[tuple[str, Mapping[str, Any]]]) -> dict[str, Any]:
    """One summary from shard summaries: their clips together, overall figures recomputed from
    the counts. The shards must have used the same models and settings and hold distinct clips."""
    if not summaries:
        raise EvaluationError("merge: give at least one summary")
    first_source, first = summaries[0]
    clips: dict[str, Mapping[str, Any]] = {}
    owner: dict[str, str] = {}
    for source, summary in summaries:
        if summary.get("models") != first.get("models"):
            raise EvaluationError(f"merge: {source} was made with other models than {first_source}; "
                                  "evaluate every shard with the same models")
        if summary.get("settings") != first.get("settings"):
            raise EvaluationError(f"merge: {source} was scored with other settings than {first_source}")
        for name, clip in summary["clips"].items():
            if name in owner:
                raise EvaluationError(f"merge: clip {name!r} is in both {owner[name]} and {source}; "
                                      "give each shard once")
            owner[name] = source
            clips[name] = clip
    return build_summary(clips, models=first.get("models", {}), merged_from=[s for s, _ in summaries])


@dataclass(frozen=True, slots=True, kw_only=True)
class Tolerance:
    """How far a fresh summary may lie from the baseline (speed is never compared).

    - `rate`: AP, identification and tracked accuracy, recall of a visibility bin, ± this.
    - `min_cases`: a recall bin with fewer cards is compared by its count of cards found,
      within ± `count` (one card there moves the rate by more than `rate`).
    - `count`: move counts (read, matched, missed, spurious) and rounds called right, ± this;
      truth moves and rounds exactly.
    - `corner_px`, `corner_pct`: median corner error, ± pixels and ± % of the card width.
    - `latency_frames`: median and worst latency, ± frames (when both sides matched moves).
    - The final state must be equal where the baseline's was, and different where it was not.
    """

    rate: float = 0.02
    min_cases: int = 50
    count: int = 1
    corner_px: float = 0.3
    corner_pct: float = 0.1
    latency_frames: float = 3.0


@dataclass(frozen=True, slots=True, kw_only=True)
class BaselineDiff:
    """One figure outside its tolerance."""

    where: str  # a clip name or "overall"
    path: str
    baseline: Any
    fresh: Any
    allowed: str

    def describe(self) -> str:
        return f"{self.where}: {self.path}: baseline {self.baseline}, now {self.fresh} (allowed {self.allowed})"


def _get(data: Mapping[str, Any], path: str) -> Any:
    value: Any = data
    for part in path.split("."):
        if isinstance(value, list):
            value = value[int(part)] if int(part) < len(value) else None
        elif isinstance(value, Mapping):
            value = value.get(part)
        else:
            return None
    return value


def compare_figures(where: str, base: Mapping[str, Any], fresh: Mapping[str, Any], tol: Tolerance) -> list[BaselineDiff]:
    """The figures of one clip (or overall) outside the tolerance."""
    diffs: list[BaselineDiff] = []

    def number(path: str, allowed: float, label: str) -> None:
        b, f = _get(base, path), _get(fresh, path)
        if b is None and f is None:
            return
        if b is None or f is None or abs(float(f) - float(b)) > allowed + 1e-9:
            diffs.append(BaselineDiff(where=where, path=path, baseline=b, fresh=f, allowed=label))

    def exact(path: str) -> None:
        b, f = _get(base, path), _get(fresh, path)
        if b != f:
            diffs.append(BaselineDiff(where=where, path=path, baseline=b, fresh=f, allowed="exactly"))

    rate = f"±{tol.rate:g}"
    for path in ("finder.ap50", "finder.ap50_95", "identifier.top1", "tracked.accuracy"):
        number(path, tol.rate, rate)
    bins = _get(base, "finder.recall_by_visible") or []
    for k, row in enumerate(bins):
        if int(row.get("cards") or 0) >= tol.min_cases:
            number(f"finder.recall_by_visible.{k}.recall", tol.rate, rate)
        else:
            number(f"finder.recall_by_visible.{k}.found", tol.count, f"±{tol.count} (fewer than {tol.min_cases} cards)")
    number("finder.corner_error_px.p50", tol.corner_px, f"±{tol.corner_px:g} px")
    number("finder.corner_error_pct.p50", tol.corner_pct, f"±{tol.corner_pct:g} %")
    exact("moves.truth")
    for key in ("emitted", "matched", "missed", "spurious"):
        number(f"moves.{key}", tol.count, f"±{tol.count}")
    if _get(base, "latency_frames.moves") and _get(fresh, "latency_frames.moves"):
        for key in ("p50", "max"):
            number(f"latency_frames.{key}", tol.latency_frames, f"±{tol.latency_frames:g} frames")
    exact("final_state.compared")
    exact("final_state.equal")
    if _get(base, "final_scores.compared"):  # baselines written before the figure lack it
        exact("final_scores.compared")
        exact("final_scores.equal")
    if _get(base, "referee.rounds") or _get(fresh, "referee.rounds"):
        exact("referee.rounds")
        number("referee.called", tol.count, f"±{tol.count}")
    return diffs


def compare_to_baseline(fresh: Mapping[str, Any], baseline: Mapping[str, Any], tol: Tolerance | None = None
                        ) -> tuple[list[BaselineDiff], list[str]]:
    """Figures outside the tolerance, and notes (clips not in the baseline, other models).
    A clip of the baseline that was not evaluated is a difference unless this run was one shard
    (then the overall figures are not compared either)."""
    tol = tol or Tolerance()
    diffs: list[BaselineDiff] = []
    notes: list[str] = []
    sharded = fresh.get("shard") is not None
    if fresh.get("models") != baseline.get("models"):
        notes.append("the models differ from the baseline's; if they were replaced on purpose, re-baseline "
                     "(see datasets/baselines/README.md)")
    base_clips: Mapping[str, Any] = baseline.get("clips", {})
    fresh_clips: Mapping[str, Any] = fresh.get("clips", {})
    for name, clip in base_clips.items():
        if name not in fresh_clips:
            if not sharded:
                diffs.append(BaselineDiff(where=name, path="(clip)", baseline="evaluated", fresh="not evaluated",
                                          allowed="every baseline clip"))
            continue
        got = fresh_clips[name]
        if got.get("tolerance_frames") != clip.get("tolerance_frames") or got.get("cut_at_frame") != clip.get("cut_at_frame"):
            diffs.append(BaselineDiff(
                where=name, path="tolerance_frames/cut_at_frame",
                baseline=[clip.get("tolerance_frames"), clip.get("cut_at_frame")],
                fresh=[got.get("tolerance_frames"), got.get("cut_at_frame")], allowed="the same settings"))
        diffs += compare_figures(name, clip, got, tol)
    for name in fresh_clips:
        if name not in base_clips:
            notes.append(f"{name}: not in the baseline, not compared")
    if not sharded:
        diffs += compare_figures("overall", baseline.get("overall", {}), fresh.get("overall", {}), tol)
    return diffs, notes


def write_summary(summary: Mapping[str, Any], path: Path) -> Path:
    """Write a summary (or a baseline) as indented JSON."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(dumps_summary(summary), encoding="utf-8")
    return path
