"""Where moves come from: pluggable feeds that run in a worker thread and push into the session.

A feed is any object with a `name` and `run(session, stop)`: it calls `session.submit(move,
source=..., evidence=..., frame=...)` for each move it decides and `session.report_status(...)`
for its health, and returns promptly once `stop` is set (wait on it, never on `time.sleep`).
Today's feeds are `SimulatedFeed` (simulated players at a pace, a new game after a pause) and
`JournalReplayFeed` (a recorded journal played again at a chosen speed); the camera tracker
will be a third with the same interface. `FeedRunner` owns the thread: start, stop within a
second, and report running/stopped to the session.
"""

from __future__ import annotations

import logging
import random
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Protocol

from engine import get_game
from engine.simulate import DEFAULT_MAX_MOVES, DEFAULT_WEIGHTS, choose
from server.journal import EntryKind, Journal
from server.session import ConflictError, FeedState, Session, SessionError

log = logging.getLogger(__name__)

STOP_TIMEOUT_S = 1.0


class Feed(Protocol):
    """A source of moves. `run` blocks until the feed is done or `stop` is set."""

    name: str

    def run(self, session: Session, stop: threading.Event) -> None: ...


class FeedRunner:
    """Runs one feed in a daemon thread; `finished` is set when the feed ended by itself."""

    def __init__(self, session: Session, feed: Feed) -> None:
        self.session = session
        self.feed = feed
        self.finished = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def start(self) -> bool:
        """Start the feed; False when it is already running."""
        with self._lock:
            if self.running:
                return False
            self._stop = threading.Event()
            self.finished.clear()
            self._thread = threading.Thread(
                target=self._main, args=(self._stop,), name=f"feed-{self.feed.name}", daemon=True
            )
            self.session.report_status(feed=FeedState.RUNNING, feed_name=self.feed.name, message="")
            self._thread.start()
            return True

    def stop(self, timeout: float = STOP_TIMEOUT_S) -> bool:
        """Ask the feed to stop and wait for it; True when the thread ended within `timeout`."""
        with self._lock:
            thread = self._thread
            self._stop.set()
            if thread is None:
                return True
            thread.join(timeout)
            stopped = not thread.is_alive()
            if stopped:
                self._thread = None
            else:
                log.warning("feed %s did not stop within %.1f s", self.feed.name, timeout)
            return stopped

    def _main(self, stop: threading.Event) -> None:
        message = ""
        try:
            self.feed.run(self.session, stop)
        except Exception as exc:  # a failing feed is reported, never takes the server down
            log.exception("feed %s failed", self.feed.name)
            message = f"the {self.feed.name} feed stopped: {exc}"
        finally:
            self.session.report_status(feed=FeedState.STOPPED, message=message)
            if not stop.is_set():
                self.finished.set()


class SimulatedFeed:
    """Simulated players: a legal move every `seconds_per_move`, drawn by a seeded generator
    from the current state (so it plays on after operator corrections). When the game ends it
    pauses `pause_s` and starts a new one (seed + 1) while `loop` is true, else it returns."""

    name = "simulated"

    def __init__(
        self,
        game: str = "minecraft-card-game",
        players: int = 3,
        seed: int = 0,
        seconds_per_move: float = 1.0,
        *,
        loop: bool = True,
        pause_s: float = 5.0,
        options: Mapping[str, Any] | None = None,
        names: tuple[str, ...] | None = None,
        max_moves: int = DEFAULT_MAX_MOVES,
    ) -> None:
        get_game(game)  # an unknown game is a clear error here, not in the thread
        if seconds_per_move < 0 or pause_s < 0:
            raise ValueError("seconds_per_move and pause_s must not be negative")
        self.game = game
        self.players = players
        self.seed = seed
        self.seconds_per_move = seconds_per_move
        self.loop = loop
        self.pause_s = pause_s
        self.options = dict(options or {})
        self.names = names
        self.max_moves = max_moves
        self.games_started = 0
        self.games_finished = 0

    def _new_game(self, session: Session) -> None:
        session.new_game(
            game=self.game, players=self.players, options=self.options, names=self.names,
            seed=self.seed + self.games_started,
        )
        self.games_started += 1

    def run(self, session: Session, stop: threading.Event) -> None:
        snap = session.snapshot
        if snap.game != self.game or snap.ruleset.is_over(snap.state):
            self._new_game(session)
        rng = random.Random(f"feed:{self.game}:{self.seed}:{self.games_started}")
        moves_this_game = 0
        while not stop.is_set():
            snap = session.snapshot
            ruleset = snap.ruleset
            legal = [] if ruleset.is_over(snap.state) else list(ruleset.legal_moves(snap.state))
            if not legal or moves_this_game >= self.max_moves:
                self.games_finished += 1
                if not self.loop or stop.wait(self.pause_s):
                    return
                self._new_game(session)
                rng = random.Random(f"feed:{self.game}:{self.seed}:{self.games_started}")
                moves_this_game = 0
                continue
            weights = {**DEFAULT_WEIGHTS, **getattr(ruleset, "sim_weights", {})}
            move = choose(rng, legal, weights)
            try:
                session.submit(
                    ruleset.move_to_dict(move), source="simulated", expect_seq=snap.seq,
                    evidence={"feed": "simulated"},
                )
                moves_this_game += 1
            except ConflictError:
                continue  # the operator changed the game meanwhile: decide again
            if stop.wait(self.seconds_per_move):
                return


class JournalReplayFeed:
    """Plays a recorded journal into the session as a new game: its moves, undos and
    replacements, with the recorded pauses divided by `speed` (0: as fast as possible) and
    capped at `max_gap_s`."""

    name = "replay"

    def __init__(self, path: str | Path, speed: float = 1.0, *, max_gap_s: float = 5.0) -> None:
        self.path = Path(path)
        if speed < 0:
            raise ValueError(f"speed must not be negative, got {speed}")
        with Journal.open(self.path) as journal:  # a bad file is a clear error right away
            self.header = journal.header
        self.speed = speed
        self.max_gap_s = max_gap_s

    def run(self, session: Session, stop: threading.Event) -> None:
        with Journal.open(self.path) as journal:
            header = journal.header
            entries = list(journal.entries())
        session.new_game(
            game=header.game, players=header.players, options=header.options,
            names=header.names, seed=header.seed, setup=header.setup,
        )
        seqs: dict[int, int] = {}
        previous: float | None = None
        for entry in entries:
            if previous is not None and self.speed > 0:
                gap = min(self.max_gap_s, max(0.0, entry.time - previous) / self.speed)
                if stop.wait(gap):
                    return
            elif stop.is_set():
                return
            previous = entry.time
            try:
                if entry.kind is EntryKind.MOVE and entry.move is not None:
                    result = session.submit(
                        entry.move, source=f"replay:{entry.source}", evidence=entry.evidence,
                        frame=entry.frame,
                    )
                    seqs[entry.seq] = result.seq
                elif entry.kind is EntryKind.UNDO and entry.target in seqs:
                    session.undo(seqs[entry.target], source=f"replay:{entry.source}")
                elif entry.kind is EntryKind.REPLACE and entry.target in seqs and entry.move:
                    session.replace(seqs[entry.target], entry.move, source=f"replay:{entry.source}")
            except SessionError as exc:
                log.warning("%s: entry %d not replayed: %s", self.path, entry.seq, exc)
