"""The camera feed: runs the vision pipeline in the feed's worker thread and submits its moves.

`VisionFeed` reads frames from a capture source, passes each through a `vision.pipeline.Pipeline`
and submits every move the rules read from a settled table to the session, with its evidence
(frame index, time, interpretation score, and the face candidates of the zones that changed).
The session stays the authority: the pipeline's belief is taken from the session at the start
and again whenever someone else changed the game (an operator correction, an undo), and a move
decided from an older state is dropped (`expect_seq`). About twice a second it reports the
frames per second, the median milliseconds of each stage, the camera's state and the changes
the rules hold as pending. A lost camera is reported, never a crash; a file source that ends
ends the feed. `step_listener` lets a caller (the headless command) see every step.
`new_game` starts a new game from `setup` whatever the session holds (a demo playing clip after
clip); `max_frames` reads only the source's first frames, as if it ended there.
`set_profile` hands the feed a new table profile from any thread (a calibration made in the
console); the feed applies it between two frames, and every zone is read again from there.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any

from calibration.bump import BumpMonitor
from calibration.layout import build_layout
from calibration.profile import TableProfile
from server.session import CameraState, ConflictError, Session, SessionError
from vision.annotate import annotate, encode_jpeg
from vision.capture import CaptureError, FrameSource, SourceState, open_source
from vision.pipeline import Pipeline, PipelineStep

log = logging.getLogger(__name__)

STATUS_EVERY_S = 0.5
READ_TIMEOUT_S = 0.5
WRITTEN_KEPT = 16  # seqs of the newest moves the feed wrote, kept for the pipeline's amends

StepListener = Callable[[PipelineStep, list[dict[str, Any]]], None]


def pending_items(step: PipelineStep, candidates: int = 3) -> list[dict[str, Any]]:
    """What the console shows for a change the rules hold as pending: per unexplained zone, the
    top card's face candidates."""
    interp = step.interpretation
    if interp is None or not interp.pending or step.snapshot is None:
        return []
    zones = sorted(interp.alternatives[0].unexplained) if interp.alternatives else []
    items = []
    for zone in zones:
        cards = step.snapshot.cards(zone)
        items.append({
            "zone": zone,
            "frame": step.frame_index,
            "candidates": [{"face": c.face, "score": round(c.score, 3)} for c in cards[0].candidates[:candidates]]
            if cards else [],
        })
    return items


class VisionFeed:
    """Feed of moves read by the camera (see module docstring)."""

    name = "vision"

    def __init__(
        self,
        pipeline: Pipeline,
        source: str | int | FrameSource,
        *,
        live: bool | None = None,
        setup: Mapping[str, Any] | None = None,
        step_listener: StepListener | None = None,
        new_game: bool = False,
        max_frames: int | None = None,
    ) -> None:
        if max_frames is not None and max_frames < 1:
            raise ValueError(f"max_frames: must be at least 1, got {max_frames}")
        self.pipeline = pipeline
        self.source = source
        self.live = live
        self.setup = dict(setup) if setup is not None else None
        self.step_listener = step_listener
        self.new_game = new_game
        self.max_frames = max_frames
        self.frames = 0
        self.submitted = 0
        self._written: list[int] = []  # seqs of the moves this feed wrote, for amends (newest last)
        self.frame_size: tuple[int, int] | None = None  # (width, height) of the newest frame
        self._profile_lock = threading.Lock()
        self._next_profile: TableProfile | None = None

    @property
    def profile(self) -> TableProfile:
        """The table profile in force, or the one waiting for the next frame."""
        with self._profile_lock:
            waiting = self._next_profile
        return waiting if waiting is not None else self.pipeline.profile

    def set_profile(self, profile: TableProfile) -> None:
        """Use `profile` from the next frame on (safe from any thread; the newest one wins)."""
        with self._profile_lock:
            self._next_profile = profile

    def _apply_profile(self, session: Session) -> None:
        with self._profile_lock:
            profile, self._next_profile = self._next_profile, None
        if profile is None:
            return
        pipeline = self.pipeline
        try:
            layout = build_layout(
                pipeline.game, pipeline.players, profile.table_mm, marker_mm=profile.marker_mm
            )
        except ValueError as exc:
            log.warning("table profile not applied: %s", exc)
            session.report_status(message=f"calibration not applied: {exc}")
            return
        pipeline.layout = layout  # the zones follow the table size
        pipeline._use_profile(profile)  # zones in the image and the settle gate follow it
        if pipeline.bump is not None:
            pipeline.bump = BumpMonitor(profile, pipeline.config.bump)
        pipeline.set_belief(pipeline.belief)  # read every zone again through the new mapping
        log.info("table profile applied from frame %d on", self.frames)

    def _open(self) -> FrameSource:
        if isinstance(self.source, FrameSource):
            return self.source
        return open_source(self.source, live=self.live)

    def _start_game(self, session: Session) -> int:
        snap = session.snapshot
        game, players = self.pipeline.game, self.pipeline.players
        fresh = snap.seq == 0 and not session.resumed
        if (
            self.new_game or snap.game != game or snap.players != players
            or (fresh and self.setup is not None)
        ):
            # The camera sees this deal: the game in the journal starts from it.
            session.new_game(game=game, players=players, setup=self.setup)
        snap = session.snapshot
        self.pipeline.set_belief(snap.state)
        return snap.seq

    def run(self, session: Session, stop: threading.Event) -> None:
        known = self._start_game(session)
        try:
            source = self._open()
        except CaptureError as exc:
            session.report_status(camera=CameraState.LOST, message=f"camera: {exc}")
            raise
        session.report_status(camera=CameraState.OK, message="")
        last_status = 0.0
        started = time.monotonic()
        frames_at_status = 0
        try:
            while not stop.is_set():
                frame = source.read(timeout=READ_TIMEOUT_S)
                now = time.monotonic()
                if frame is None:
                    status = source.status()
                    if status.state is SourceState.ENDED:
                        return
                    if now - last_status >= STATUS_EVERY_S:
                        session.report_status(camera=CameraState.LOST, message=status.describe())
                        last_status = now
                    continue
                if self.max_frames is not None and frame.index >= self.max_frames:
                    return
                self.frame_size = (int(frame.image.shape[1]), int(frame.image.shape[0]))
                self._apply_profile(session)
                snap = session.snapshot
                if snap.seq != known:
                    self.pipeline.set_belief(snap.state)  # someone else changed the game
                    known = snap.seq
                step = self.pipeline.process(frame)
                self.frames += 1
                known = self._submit(session, step, known)
                if now - last_status >= STATUS_EVERY_S:
                    view = annotate(frame.image, step, self.pipeline.zone_polygons)
                    session.publish_camera(encode_jpeg(view))
                    elapsed = max(now - (last_status or started), 1e-6)
                    fps = (self.frames - frames_at_status) / elapsed
                    frames_at_status = self.frames
                    last_status = now
                    session.report_status(
                        camera=camera_state(step),
                        fps=fps,
                        stage_ms={k: v.p50_ms for k, v in self.pipeline.timer.stats().items()},
                        pending=pending_items(step),
                        message=feed_message(step),
                    )
        finally:
            if source is not self.source:
                source.close()

    def _resync(self, session: Session) -> int:
        """Take the session's game as the pipeline's belief (someone else changed it, or it
        refused what the camera read); returns the session's seq."""
        snap = session.snapshot
        self.pipeline.set_belief(snap.state)
        return snap.seq

    def _submit(self, session: Session, step: PipelineStep, known: int) -> int:
        results: list[dict[str, Any]] = []
        moves = list(step.move_dicts)
        if step.amends:
            # Moves read as two that were one (`Interpretation.amends`): the newest moves this
            # feed wrote are replaced, or undone where fewer moves take their place.
            targets = self._written[-step.amends:]
            if len(targets) < step.amends or session.snapshot.seq != known:
                return self._resync(session)
            del self._written[-step.amends:]
            try:
                for target, move in zip(targets, moves, strict=False):
                    replaced = session.replace(target, move, source="vision", frame=step.frame_index,
                                               evidence=dict(step.evidence or {}))
                    self._written.append(target)
                    results.append({"move": replaced.move, "seq": replaced.seq, "replaces": target,
                                    "warnings": [w.code for w in replaced.warnings]})
                for target in reversed(targets[len(moves):]):
                    results.append({"undo": target, "seq": session.undo(target, source="vision")})
                moves = moves[len(targets):]
                known = session.snapshot.seq
            except SessionError as exc:
                log.warning("vision correction refused: %s", exc)
                results.append({"move": moves[0] if moves else None, "error": str(exc)})
                self._written.clear()
                moves = []
                known = self._resync(session)
        for move in moves:
            try:
                result = session.submit(
                    move, source="vision", evidence=dict(step.evidence or {}), frame=step.frame_index,
                    expect_seq=known,
                )
            except ConflictError:
                # The game moved on while this frame was read: read again from the new state.
                return self._resync(session)
            except SessionError as exc:
                log.warning("vision move refused: %s (%s)", move, exc)
                results.append({"move": move, "error": str(exc)})
                known = self._resync(session)
                break
            self.submitted += 1
            self._written.append(result.seq)
            del self._written[:-WRITTEN_KEPT]
            known = session.snapshot.seq
            results.append({
                "move": result.move, "seq": result.seq,
                "warnings": [w.code for w in result.warnings],
            })
        if self.step_listener is not None:
            self.step_listener(step, results)
        return known


def camera_state(step: PipelineStep) -> CameraState:
    """MOVED once the bump check says the camera moved and could not be re-fitted."""
    camera = step.camera
    if camera is not None and camera.status.value == "camera-moved":
        return CameraState.MOVED
    return CameraState.OK


def feed_message(step: PipelineStep) -> str:
    """What the console's status line says about the camera's view: a bumped camera first,
    else the zones that hold a card the identifier has not named for a while
    (`PipelineStep.unnamed`), else nothing."""
    camera = step.camera
    if camera is not None and camera.status.value not in ("steady", "recalibrated"):
        return f"camera {camera.status.value}: check the corner markers or calibrate again"
    if step.unnamed:
        zones = ", ".join(sorted(step.unnamed))
        return (f"a card in {zones} cannot be named: is something (a mug, a hand, glare) hiding "
                "part of it from the camera? It is read once the whole card shows")
    return ""
