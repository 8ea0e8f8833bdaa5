"""`cardtrack demo`: the bundled footage through the whole pipeline, served live.

By default the demo serves the live pages (overlay, console, spectator) on
http://127.0.0.1:8765/ while the bundled clips (`datasets/footage/*/`, rendered by the
synthetic-footage generator) play through the real pipeline with the shipped models, at each
clip's own frame rate as a camera would deliver it: the 2-player clip, then the 3-player one,
then again, each a new game started from the clip's opening deal, with a pause between two,
until Ctrl-C. The table geometry and the opening deal come from each clip's truth file; the moves
are only what the models read. `--clip DIR` plays chosen clips instead, `--once` plays each
once and prints the scores read beside the truth's, `--fast` reads frames as fast as the
machine goes and `--frames N` only the first N frames of each clip. `--simulated` serves
simulated players of the Mattel game instead, a new game after each one. `--narrate` plays one
seeded simulated game in the console, narrating every move, the scores and the referee's
warnings; partway through, one player takes a third action, as happens at real tables, so it
shows a warning too.
"""

from __future__ import annotations

import argparse
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fastapi import FastAPI

from calibration.profile import TableProfile
from cardtrack.commands.serve import announce, serve_app
from engine import get_game
from engine.games.minecraft_card_game import Mine
from engine.simulate import simulate_game
from server.app import create_app
from server.feeds import SimulatedFeed
from server.session import Session
from server.settings import DEFAULT_PORT, ServerSettings
from server.viewmodel import move_text
from server.vision_feed import VisionFeed
from vision.capture import CaptureConfig, open_source
from vision.evaluate import footage_at, load_clip, truth_in
from vision.pipeline import Pipeline, PipelineConfig, profile_from_truth, setup_from_truth

GAME = "minecraft-card-game"
FOOTAGE = Path(__file__).resolve().parents[2] / "datasets" / "footage"
PAUSE_S = 5.0
SIMULATED_DEFAULTS = {"players": 3, "seed": 7, "pace": 1.5}


class DemoError(ValueError):
    """Demo options that cannot work together, or a clip that cannot be played; the message
    says what to do."""


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        "demo",
        help="play the bundled footage through the pipeline, live in the web pages",
        description="Serves the overlay, console and spectator pages on http://127.0.0.1:8765/ "
        "while the bundled clips play through the card finder and identifier (the shipped "
        "models) at their own frame rate, as a camera would deliver them: the 2-player clip, "
        "then the 3-player one, then again, each a new game, until Ctrl-C. The console shows "
        "the camera view with the cards found. The clips are rendered, not filmed: the moves "
        "and scores read from them say nothing of a real table. --simulated serves simulated "
        "players of the Mattel game instead; --narrate plays one seeded simulated game in the "
        "console, narrating each move, the scores and every rule warning (the same --seed "
        "gives the same game).",
    )
    parser.add_argument(
        "--clip", type=Path, action="append", default=None, metavar="DIR",
        help="play this clip (a folder with a video and its truth file, e.g. one written by "
        "`cardtrack synth footage`) instead of the bundled ones; repeat for several",
    )
    parser.add_argument("--once", action="store_true",
                        help="play each clip (--simulated: one game) once, print the scores, exit")
    parser.add_argument("--fast", action="store_true",
                        help="read the frames as fast as the machine goes, not at the clip's rate")
    parser.add_argument("--frames", type=int, default=None, metavar="N",
                        help="play only the first N frames of each clip")
    parser.add_argument("--threads", type=int, default=1, help="threads for each model")
    parser.add_argument("--simulated", action="store_true",
                        help="serve simulated players of the Mattel game instead of the footage")
    parser.add_argument("--narrate", action="store_true",
                        help="narrate one simulated game in the console")
    parser.add_argument("--players", type=int, default=None, choices=(2, 3, 4),
                        help="--simulated, --narrate: players (default 3)")
    parser.add_argument("--seed", type=int, default=None,
                        help="--simulated, --narrate: seed of the first game (default 7)")
    parser.add_argument(
        "--delay", type=float, default=0.0,
        help="--narrate: seconds to pause between moves (e.g. 0.3)",
    )
    parser.add_argument("--pace", type=float, default=None,
                        help="--simulated: seconds per simulated move (default 1.5)")
    parser.add_argument("--port", type=int, default=DEFAULT_PORT, help="0 picks a free port")
    parser.add_argument(
        "--journal", type=Path, default=None,
        help="record the games in this file (--simulated: and resume them)",
    )
    parser.set_defaults(func=run)


# -- the footage ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class DemoClip:
    """One clip ready to play: its pixels and frame rate, the game and table its truth file
    describes (geometry and opening deal), and what the truth says happened."""

    name: str
    path: Path
    media: Path
    fps: float
    game: str
    players: int
    frames: int
    profile: TableProfile
    setup: Mapping[str, Any]
    truth_moves: tuple[int, ...]  # the frame where each move of the truth completes
    truth_scores: tuple[int, ...] | None


@dataclass(frozen=True, slots=True, kw_only=True)
class ClipResult:
    """What one play of a clip read, beside the truth."""

    clip: str
    frames: int  # frames of the clip played (all of them, or the first --frames)
    of_frames: int  # frames of the whole clip
    frames_read: int  # frames the pipeline read (fewer when it fell behind the clip's rate)
    moves: int
    truth_moves: int  # moves of the truth completed within the frames played
    scores: tuple[int, ...]
    truth_scores: tuple[int, ...] | None  # at the end of the whole clip
    journal: str


def bundled_clips(root: Path = FOOTAGE) -> list[Path]:
    """The clip folders under `root` (those with a truth file), by name."""
    if not root.is_dir():
        raise DemoError(f"{root}: no bundled footage here; pass --clip DIR")
    return sorted(p for p in root.iterdir() if p.is_dir() and truth_in(p) is not None)


def load_demo_clip(path: Path) -> DemoClip:
    """Read a clip's truth file and derive what the pipeline needs to play it."""
    found = footage_at(path)
    if isinstance(found, str):
        raise DemoError(f"{path}: not a clip ({found}); give a folder with clip.mp4 and truth.json.gz")
    clip = load_clip(found)
    truth, source = clip.truth, str(found.truth)
    scores = (truth.final_state or {}).get("scores")
    return DemoClip(
        name=found.name, path=path, media=clip.media, fps=clip.fps, game=clip.game,
        players=clip.players, frames=len(truth.frames),
        profile=profile_from_truth(truth, source=source),
        setup=setup_from_truth(truth, get_game(clip.game), source=source),
        truth_moves=tuple(m.frame for m in truth.moves),
        truth_scores=tuple(int(s) for s in scores) if isinstance(scores, list) else None,
    )


def demo_clips(paths: Sequence[Path] | None = None, root: Path = FOOTAGE) -> list[DemoClip]:
    """The clips to play: `paths` in the order given, else the bundled ones by player count
    (then name), so the 2-player game comes before the 3-player one."""
    if paths:
        return [load_demo_clip(p) for p in paths]
    clips = [load_demo_clip(p) for p in bundled_clips(root)]
    if not clips:
        raise DemoError(f"{root}: no clip folder with a truth file; pass --clip DIR")
    return sorted(clips, key=lambda c: (c.players, c.name))


class FootageFeed:
    """Plays clips through the pipeline, one new game each, looping: a `VisionFeed` per play,
    fed by the clip's file at its frame rate (`realtime`) or as fast as it reads. Pauses
    `pause_s` between two clips; `rounds` (None: until stopped) counts passes over the clips.
    Stands in for the camera feed towards the calibration panel: a profile set there applies
    to the clip in play, and the next clip starts from its own geometry again."""

    name = "footage"

    def __init__(
        self,
        clips: Sequence[DemoClip],
        *,
        realtime: bool = True,
        rounds: int | None = None,
        pause_s: float = PAUSE_S,
        max_frames: int | None = None,
        threads: int = 1,
        on_clip_end: Callable[[ClipResult], None] | None = None,
    ) -> None:
        if not clips:
            raise DemoError("no clip to play")
        if rounds is not None and rounds < 1:
            raise DemoError(f"rounds: must be at least 1, got {rounds}")
        if max_frames is not None and max_frames < 1:
            raise DemoError(f"--frames: must be at least 1, got {max_frames}")
        if pause_s < 0:
            raise DemoError(f"pause_s: must not be negative, got {pause_s}")
        self.clips = tuple(clips)
        self.realtime = realtime
        self.rounds = rounds
        self.pause_s = pause_s
        self.max_frames = max_frames
        self.threads = threads
        self.on_clip_end = on_clip_end
        self.results: list[ClipResult] = []
        self._lock = threading.Lock()
        self._current: VisionFeed | None = None

    @property
    def plays(self) -> int | None:
        """How many clips this feed plays before it ends (None: until stopped)."""
        return None if self.rounds is None else self.rounds * len(self.clips)

    @property
    def profile(self) -> TableProfile:
        with self._lock:
            current = self._current
        return current.profile if current is not None else self.clips[0].profile

    def set_profile(self, profile: TableProfile) -> None:
        with self._lock:
            current = self._current
        if current is not None:
            current.set_profile(profile)

    @property
    def frame_size(self) -> tuple[int, int] | None:
        with self._lock:
            current = self._current
        return current.frame_size if current is not None else None

    def run(self, session: Session, stop: threading.Event) -> None:
        played = 0
        while self.plays is None or played < self.plays:
            clip = self.clips[played % len(self.clips)]
            if played and self.pause_s > 0:
                last = self.results[-1]
                session.report_status(
                    message=f"{last.clip} ended (scores read {list(last.scores)}); "
                    f"next: {clip.name} in {self.pause_s:g} s"
                )
                if stop.wait(self.pause_s):
                    return
            if stop.is_set():
                return
            self._play(clip, session, stop)
            played += 1
            if stop.is_set():
                return  # stopped mid-clip: not a clip read to its end

    def _play(self, clip: DemoClip, session: Session, stop: threading.Event) -> None:
        config = PipelineConfig.for_game(clip.game, fps=clip.fps, camera_check=False)
        pipeline = Pipeline.from_models(
            config, game=clip.game, players=clip.players, profile=clip.profile,
            setup=clip.setup, threads=self.threads,
        )
        source = open_source(clip.media, live=self.realtime, config=CaptureConfig(fps=clip.fps))
        feed = VisionFeed(
            pipeline, source, setup=clip.setup, new_game=True, max_frames=self.max_frames,
        )
        with self._lock:
            self._current = feed
        session.report_status(feed_name=f"{self.name}: {clip.name}", message="")
        try:
            feed.run(session, stop)
        finally:
            source.close()
            with self._lock:
                self._current = None
        if stop.is_set():
            return
        snap = session.snapshot
        frames = clip.frames if self.max_frames is None else min(clip.frames, self.max_frames)
        result = ClipResult(
            clip=clip.name, frames=frames, of_frames=clip.frames, frames_read=feed.frames,
            moves=len(snap.moves), truth_moves=sum(1 for f in clip.truth_moves if f < frames),
            scores=tuple(snap.ruleset.scores(snap.state)), truth_scores=clip.truth_scores,
            journal=snap.journal,
        )
        self.results.append(result)
        if self.on_clip_end is not None:
            self.on_clip_end(result)


# -- the command ------------------------------------------------------------------------------


def run(args: argparse.Namespace) -> int:
    check_options(args)
    if args.narrate:
        return narrate(args)
    if args.simulated:
        return serve_simulated(args)
    return serve_footage(args)


def check_options(args: argparse.Namespace) -> None:
    """Refuse options that belong to another mode, naming the one they need."""
    simulated = args.simulated or args.narrate
    if args.simulated and args.narrate:
        raise DemoError("--simulated serves the pages and --narrate tells one game in the console: pick one")
    if simulated:
        footage_only = [f"--{n}" for n in ("clip", "fast", "frames") if getattr(args, n)]
        if footage_only:
            raise DemoError(f"{', '.join(footage_only)}: options of the footage demo; leave out "
                            f"{'--narrate' if args.narrate else '--simulated'}")
        for name, default in SIMULATED_DEFAULTS.items():
            if getattr(args, name) is None:
                setattr(args, name, default)
        return
    simulated_only = [f"--{n}" for n in SIMULATED_DEFAULTS if getattr(args, n) is not None]
    if args.delay:
        simulated_only.append("--delay")
    if simulated_only:
        raise DemoError(f"{', '.join(simulated_only)}: options of the simulated players; add "
                        "--simulated (or --narrate), or leave them out to play the footage")
    if args.frames is not None and args.frames < 1:
        raise DemoError(f"--frames: must be at least 1, got {args.frames}")
    if args.threads < 1:
        raise DemoError(f"--threads: must be at least 1, got {args.threads}")


def print_result(result: ClipResult) -> None:
    part = "" if result.frames == result.of_frames else f" (the first {result.frames} of {result.of_frames})"
    dropped = result.frames - result.frames_read
    behind = f", {dropped} dropped (the pipeline fell behind the clip's frame rate)" if dropped > 0 else ""
    print(f"{result.clip}: {result.frames_read} frames read{part}{behind}, {result.moves} moves "
          f"read (truth: {result.truth_moves})")
    print(f"  final scores read:  {list(result.scores)}")
    truth = list(result.truth_scores) if result.truth_scores is not None else "not in the truth file"
    whole = " (at the end of the whole clip)" if part else ""
    print(f"  final scores truth: {truth}{whole}", flush=True)


def describe_footage(clips: Sequence[DemoClip], *, realtime: bool, once: bool) -> list[str]:
    """What the user is watching, told once at start."""
    pace = "at each clip's own frame rate" if realtime else "as fast as this machine reads them"
    then = "each clip once" if once else "looping, a new game for each clip, until Ctrl-C"
    lines = [f"Playing {len(clips)} rendered clip{'s' if len(clips) > 1 else ''} through the card "
             f"finder and identifier, {pace}, {then}:"]
    for i, c in enumerate(clips, 1):
        lines.append(f"  {i}. {c.name}: {c.game}, {c.players} players, {c.frames} frames at "
                     f"{c.fps:g} fps ({_shown(c.path)})")
    lines += [
        "The moves are what the models read from the frames; only the table geometry and the "
        "opening deal come from the clip's truth file.",
        "The footage is synthetic (drawn by cardtrack's renderer, not filmed): what is read "
        "from it, and any figure measured on it, says nothing of a real table.",
        "The console shows the camera view with the cards found and the zones.",
    ]
    return lines


def _shown(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def serve_footage(args: argparse.Namespace) -> int:
    clips = demo_clips(args.clip)
    feed = FootageFeed(
        clips, realtime=not args.fast, rounds=1 if args.once else None, max_frames=args.frames,
        threads=args.threads, on_clip_end=print_result,
    )
    first = clips[0]
    settings = ServerSettings(
        game=first.game, players=first.players, journal_path=args.journal, feed=feed,
        port=args.port,
    )
    Session.preflight(journal_path=args.journal, game=first.game, players=first.players)
    app = create_app(settings)
    done = threading.Event()

    def started(port: int) -> None:
        announce(app, settings, port)
        for line in describe_footage(clips, realtime=not args.fast, once=args.once):
            print(line)
        sys.stdout.flush()
        if args.once:
            threading.Thread(target=_when_finished, args=(app, done), daemon=True).start()

    serve_app(app, settings, on_started=started, stop=done)
    if args.once and len(feed.results) < (feed.plays or 0):
        snap = app.state.session.snapshot
        why = snap.status.message or "stopped before the end"
        print(f"cardtrack demo: {len(feed.results)} of {feed.plays} clips played: {why}", file=sys.stderr)
        return 1
    return 0


def serve_simulated(args: argparse.Namespace) -> int:
    feed = SimulatedFeed(
        GAME, args.players, seed=args.seed, seconds_per_move=args.pace, loop=not args.once,
        pause_s=PAUSE_S,
    )
    settings = ServerSettings(
        game=GAME, players=args.players, seed=args.seed, journal_path=args.journal, feed=feed,
        port=args.port,
    )
    Session.preflight(journal_path=args.journal, game=GAME, players=args.players)
    app = create_app(settings)
    done = threading.Event()

    def started(port: int) -> None:
        announce(app, settings, port)
        print("Simulated players play the Mattel game (no camera, no models).", flush=True)
        if args.once:
            threading.Thread(target=_when_finished, args=(app, done), daemon=True).start()

    serve_app(app, settings, on_started=started, stop=done)
    if args.once:
        snap = app.state.session.snapshot
        ruleset = snap.ruleset
        print(f"final scores: {list(ruleset.scores(snap.state))}")
        winner = ruleset.winner(snap.state)
        print(f"winner: {snap.names[winner - 1]}" if winner else "no winner")
    return 0


def _when_finished(app: FastAPI, done: threading.Event) -> None:
    app.state.runner.finished.wait()
    done.set()


# -- narrating a simulated game -----------------------------------------------------------------


def narrate(args: argparse.Namespace) -> int:
    ruleset: Any = get_game(GAME)

    def describe(move: Any) -> str:  # the sentence the pages show for the move
        return move_text(ruleset.move_to_dict(move), (), ruleset.catalog)

    game = simulate_game(ruleset, players=args.players, seed=args.seed)
    state = ruleset.initial_state(players=args.players, seed=args.seed)
    print(f"{ruleset.name}: {args.players} players, seed {args.seed}")
    tops = ", ".join(str(p[0]) for p in state.resource_piles)
    print(f"resource piles show: {tops}")
    warned = False
    for i, move in enumerate(game.moves):
        step = ruleset.apply(state, move)
        before = ruleset.scores(state)
        state = step.state
        after = ruleset.scores(state)
        gained = [a - b for a, b in zip(after, before, strict=True)]
        line = f"{i + 1:3d}. {describe(move)}"
        if any(gained):
            line += f"  -> scores {list(after)}"
        print(line)
        for w in step.warnings:
            print(f"     WARNING {w.code}: {w.message}")
        if not warned and not state.over and state.actions >= state.allowed and i > 10:
            # A player reaches for a third card: the referee flags it and play goes on.
            p = state.current
            pile = next((k + 1 for k, pl in enumerate(state.resource_piles) if pl), None)
            if pile is not None:
                extra = Mine(player=p, pile=pile)
                step = ruleset.apply(state, extra)
                print(f"  !  {describe(extra)} (a third action)")
                for w in step.warnings:
                    print(f"     WARNING {w.code}: {w.message} [{w.rule}]")
                # Once told, the player puts the card back: play goes on from before it.
                warned = True
        if args.delay:
            time.sleep(args.delay)
    winner = ruleset.winner(state)
    print(f"final scores: {list(ruleset.scores(state))}")
    print(f"winner: player {winner}" if winner else "no winner")
    return 0
