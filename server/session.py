"""The live game session: one ruleset, the current state, its journal, and who wants to hear of changes.

Every change goes through `Session` under one lock: a move submitted by a feed or typed by the
operator is parsed and applied by the (pure) engine, appended to the SQLite journal, and only
then published. Corrections (`undo`, `replace`) and header changes (names, rule options) fold the
journal's effective moves again, so the live state is always what `cardtrack replay` would
print. After each change the session builds an immutable `Snapshot` (state, effective moves with
their warnings, feed status) and hands it to its listeners, in order, while still holding the
lock; listeners must only queue it (the broadcaster hands it to the event loop).

A session started on an existing journal file resumes that game, so a server killed with
`kill -9` comes back where it was. A new game goes to a new journal file next to the first
(`game.sqlite`, `game.2.sqlite`, ...), and start-up resumes the newest of them.
"""

from __future__ import annotations

import logging
import secrets
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from enum import StrEnum
from pathlib import Path
from types import MappingProxyType
from typing import Any

from engine import EngineError, GameWarning, Ruleset, get_game
from server.journal import Entry, EntryKind, Journal, JournalError

log = logging.getLogger(__name__)

STATUS_MIN_INTERVAL_S = 1.0
"""Frame-rate and timing reports are published at most this often (the vision loop reports
every frame); a change of feed, camera, pending reads or message is published at once."""

MAX_NAME_LENGTH = 40


class SessionError(ValueError):
    """A request the session cannot carry out; the message says why and what to do."""


class MoveRejectedError(SessionError):
    """A move the engine cannot read (unknown move, missing field, unknown card)."""


class UnknownEntryError(SessionError):
    """A journal seq that names no recorded move."""


class ConflictError(SessionError):
    """A request that contradicts the journal (undoing a move twice, a stale feed move)."""


class FeedState(StrEnum):
    RUNNING = "running"
    STOPPED = "stopped"


class CameraState(StrEnum):
    """What the feed says about its camera; NONE when the feed has no camera at all."""

    NONE = "none"
    OK = "ok"
    LOST = "lost"
    MOVED = "moved"  # the table markers moved and the calibration could not be re-fitted


class ChangeKind(StrEnum):
    MOVE = "move"
    UNDO = "undo"
    REPLACE = "replace"
    GAME = "game"  # a new game, or new names or rule options
    STATUS = "status"


@dataclass(frozen=True, slots=True, kw_only=True)
class Status:
    """What the feed reports: whether it runs, the camera, speed, and reads still settling."""

    feed: FeedState = FeedState.STOPPED
    feed_name: str | None = None
    camera: CameraState = CameraState.NONE
    fps: float | None = None
    stage_ms: Mapping[str, float] = field(default_factory=lambda: MappingProxyType({}))
    pending: tuple[Mapping[str, Any], ...] = ()
    message: str | None = None
    queues: Mapping[str, int] = field(default_factory=lambda: MappingProxyType({}))


@dataclass(frozen=True, slots=True, kw_only=True)
class MoveRecord:
    """One move that stands (after undos and replacements), with what it raised when folded."""

    seq: int
    move: Mapping[str, Any]
    player: int | None
    source: str
    time: float
    warnings: tuple[GameWarning, ...] = ()
    replaced: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class Snapshot:
    """The whole session at one instant; immutable, so it can be shown later (broadcast delay)."""

    seq: int
    game_no: int
    game: str
    ruleset: Ruleset[Any, Any]
    state: Any
    players: int
    names: tuple[str, ...]
    options: Mapping[str, Any]
    seed: int | None
    moves: tuple[MoveRecord, ...]
    status: Status
    journal: str
    at: float  # time.monotonic() when it was taken
    version: int  # increases with every snapshot of this session

    @property
    def warnings(self) -> tuple[tuple[int, GameWarning], ...]:
        return tuple((m.seq, w) for m in self.moves for w in m.warnings)


@dataclass(frozen=True, slots=True, kw_only=True)
class Change:
    """What a listener hears: the snapshot after the change and the journal entries it added."""

    kind: ChangeKind
    snapshot: Snapshot
    entries: tuple[Entry, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class SubmitResult:
    seq: int
    move: Mapping[str, Any]
    warnings: tuple[GameWarning, ...]


Listener = Callable[[Change], None]


def journal_chain(path: Path) -> list[Path]:
    """The journal files of one session, oldest first: `path`, then `stem.2.suffix`, ..."""
    chain = [path] if path.exists() else []
    k = 2
    while (p := numbered(path, k)).exists():
        chain.append(p)
        k += 1
    return chain


def numbered(path: Path, k: int) -> Path:
    return path if k == 1 else path.with_name(f"{path.stem}.{k}{path.suffix}")


def _clean_names(names: Iterable[str], players: int) -> tuple[str, ...]:
    out = []
    for i, raw in enumerate(names):
        if not isinstance(raw, str):
            raise SessionError(f"names[{i}]: a player name must be text, got {raw!r}")
        name = " ".join(raw.split())
        if len(name) > MAX_NAME_LENGTH:
            raise SessionError(f"names[{i}]: at most {MAX_NAME_LENGTH} characters, got {len(name)}")
        out.append(name)
    if len(out) > players:
        raise SessionError(f"names: {len(out)} names for {players} players")
    return tuple(out)


class Session:
    """The one place where the game changes. Thread-safe; see the module docstring."""

    def __init__(self, journal: Journal, *, base_path: Path, game_no: int, resumed: bool) -> None:
        self._lock = threading.RLock()
        self._listeners: list[Listener] = []
        self._camera_jpeg: bytes | None = None
        self._journal = journal
        self._base_path = base_path
        self._game_no = game_no
        self.resumed = resumed
        self._status = Status()
        self._status_published = 0.0
        self._closed = False
        self._seq = 0
        self._version = 0
        self._ruleset: Ruleset[Any, Any]
        self._state: Any = None
        self._moves: list[MoveRecord] = []
        self._snapshot: Snapshot
        self._fold()

    # -- opening ------------------------------------------------------------------------------

    @classmethod
    def start(
        cls,
        *,
        journal_path: Path | None,
        game: str,
        players: int,
        options: Mapping[str, Any] | None = None,
        names: Iterable[str] = (),
        seed: int | None = None,
    ) -> Session:
        """Resume the newest game of `journal_path` if it exists, else start a new one there
        (in a temporary folder when `journal_path` is None)."""
        if journal_path is None:
            journal_path = Path(tempfile.mkdtemp(prefix="cardtrack-")) / "journal.sqlite"
        journal_path = Path(journal_path)
        chain = journal_chain(journal_path)
        if chain:
            journal = Journal.open(chain[-1])
            get_game(journal.header.game)
            return cls(journal, base_path=journal_path, game_no=len(chain), resumed=True)
        journal = _create_journal(
            journal_path, game=game, players=players, options=options, names=names, seed=seed
        )
        return cls(journal, base_path=journal_path, game_no=1, resumed=False)

    @staticmethod
    def preflight(
        *,
        journal_path: Path | None,
        game: str,
        players: int,
        options: Mapping[str, Any] | None = None,
        names: Iterable[str] = (),
    ) -> str:
        """Check, before any server starts, that `start` will succeed with these arguments;
        returns what it will do ("resume FILE" or "new game"). Raises a clear error if not."""
        chain = journal_chain(Path(journal_path)) if journal_path is not None else []
        if chain:
            with Journal.open(chain[-1]) as journal:
                get_game(journal.header.game)
            return f"resume {chain[-1]}"
        try:
            get_game(game).initial_state(players=players, options=options)
        except EngineError as exc:
            raise SessionError(str(exc)) from None
        _clean_names(names, players)
        return "new game"

    def close(self) -> None:
        with self._lock:
            if not self._closed:
                self._closed = True
                self._journal.close()

    # -- reading ------------------------------------------------------------------------------

    @property
    def snapshot(self) -> Snapshot:
        return self._snapshot

    @property
    def journal_path(self) -> Path:
        return self._journal.path

    @property
    def ruleset(self) -> Ruleset[Any, Any]:
        return self._ruleset

    def entries_since(self, since: int = 0) -> tuple[Snapshot, list[Entry]]:
        """The current snapshot and the journal entries newer than `since`, read together."""
        with self._lock:
            return self._snapshot, list(self._journal.entries(max(0, since)))

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Call `listener(change)` after every change; returns the function that stops it."""
        with self._lock:
            self._listeners.append(listener)

        def unsubscribe() -> None:
            with self._lock:
                if listener in self._listeners:
                    self._listeners.remove(listener)

        return unsubscribe

    # -- changing the game ----------------------------------------------------------------------

    def submit(
        self,
        move: Mapping[str, Any],
        *,
        source: str = "vision",
        evidence: Mapping[str, Any] | None = None,
        frame: int | None = None,
        expect_seq: int | None = None,
    ) -> SubmitResult:
        """Apply one move as it happened at the table, record it, publish it.

        `expect_seq` guards a feed that decided its move from an older snapshot: when the
        journal has moved on since, the move is refused with `ConflictError`.
        """
        with self._lock:
            self._check_open()
            if expect_seq is not None and expect_seq != self._snapshot.seq:
                raise ConflictError(
                    f"the game moved on (seq {self._snapshot.seq}, expected {expect_seq})"
                )
            parsed, data = self._parse(move)
            step = self._apply(self._state, parsed)
            seq = self._journal.append(
                data, frame=frame, source=source, evidence=evidence, warnings=step.warnings
            )
            self._state = step.state
            self._moves.append(
                MoveRecord(
                    seq=seq, move=data, player=_player_of(data), source=source,
                    time=time.time(), warnings=step.warnings,
                )
            )
            self._publish(ChangeKind.MOVE, seq)
            return SubmitResult(seq=seq, move=data, warnings=step.warnings)

    def undo(self, seq: int, *, source: str = "operator") -> int:
        """Cancel the move recorded at `seq`; returns the seq of the undo entry."""
        with self._lock:
            self._check_open()
            self._require_standing(seq)
            entry_seq = self._journal.undo(seq, source=source)
            self._fold()
            self._publish(ChangeKind.UNDO, entry_seq)
            return entry_seq

    def replace(
        self,
        seq: int,
        move: Mapping[str, Any],
        *,
        source: str = "operator",
        frame: int | None = None,
        evidence: Mapping[str, Any] | None = None,
    ) -> SubmitResult:
        """Substitute the move recorded at `seq` (the operator corrects a misread; the camera
        a move it read in two parts, with its `frame` and `evidence`)."""
        with self._lock:
            self._check_open()
            self._require_standing(seq)
            _, data = self._parse(move)
            moves = [(m.seq, data if m.seq == seq else m.move) for m in self._moves]
            self._fold_moves(moves)  # refuse before recording when the result cannot fold
            entry_seq = self._journal.replace(seq, data, source=source, frame=frame, evidence=evidence)
            self._fold()
            self._publish(ChangeKind.REPLACE, entry_seq)
            warnings = next((m.warnings for m in self._moves if m.seq == seq), ())
            return SubmitResult(seq=entry_seq, move=data, warnings=warnings)

    def new_game(
        self,
        *,
        game: str | None = None,
        players: int | None = None,
        options: Mapping[str, Any] | None = None,
        names: Iterable[str] | None = None,
        seed: int | None = None,
        setup: Mapping[str, Any] | None = None,
    ) -> Snapshot:
        """Start a new game in the next journal file; unspecified fields keep their values
        (options only when the game stays the same). A new seed is drawn unless given."""
        with self._lock:
            self._check_open()
            header = self._journal.header
            game = game or header.game
            players = players or header.players
            if options is None:
                options = header.options if game == header.game else {}
            names = header.names[:players] if names is None else tuple(names)
            k = self._game_no + 1
            while numbered(self._base_path, k).exists():
                k += 1
            journal = _create_journal(
                numbered(self._base_path, k), game=game, players=players, options=options,
                names=names, seed=seed, setup=setup,
            )
            self._journal.close()
            self._journal = journal
            self._game_no = k
            self._fold()
            self._publish(ChangeKind.GAME, None)
            return self._snapshot

    def set_names(self, names: Iterable[str]) -> Snapshot:
        with self._lock:
            self._check_open()
            clean = _clean_names(names, self._journal.header.players)
            self._journal.update_header(names=clean)
            self._fold()
            self._publish(ChangeKind.GAME, None)
            return self._snapshot

    def set_options(self, options: Mapping[str, Any]) -> Snapshot:
        """Change rule options mid-game: the journal is folded again under the new options."""
        with self._lock:
            self._check_open()
            header = self._journal.header
            merged = {**header.options, **options}
            try:
                self._ruleset.initial_state(
                    players=header.players, options=merged, seed=header.seed, setup=header.setup
                )
            except EngineError as exc:
                raise SessionError(f"options: {exc}") from None
            self._journal.update_header(options=merged)
            self._fold()
            self._publish(ChangeKind.GAME, None)
            return self._snapshot

    def publish_camera(self, jpeg: bytes) -> None:
        """Keep the newest annotated camera view (JPEG) for the operator console."""
        with self._lock:
            self._camera_jpeg = jpeg

    @property
    def camera_jpeg(self) -> bytes | None:
        with self._lock:
            return self._camera_jpeg

    def report_status(
        self,
        *,
        feed: FeedState | None = None,
        feed_name: str | None = None,
        camera: CameraState | str | None = None,
        fps: float | None = None,
        stage_ms: Mapping[str, float] | None = None,
        pending: Iterable[Mapping[str, Any]] | None = None,
        message: str | None = None,
        queues: Mapping[str, int] | None = None,
    ) -> None:
        """Update what the feed reports; arguments left None keep their value (pass `message=""`
        to clear the message)."""
        with self._lock:
            if self._closed:
                return
            old = self._status
            new = replace(
                old,
                feed=old.feed if feed is None else FeedState(feed),
                feed_name=old.feed_name if feed_name is None else feed_name,
                camera=old.camera if camera is None else CameraState(camera),
                fps=old.fps if fps is None else round(float(fps), 2),
                stage_ms=old.stage_ms if stage_ms is None else MappingProxyType(
                    {str(k): round(float(v), 3) for k, v in stage_ms.items()}
                ),
                pending=old.pending if pending is None else tuple(pending),
                message=old.message if message is None else (message or None),
                queues=old.queues if queues is None else MappingProxyType(dict(queues)),
            )
            if new == old:
                return
            self._status = new
            self._version += 1
            self._snapshot = replace(
                self._snapshot, status=new, at=time.monotonic(), version=self._version
            )
            significant = (old.feed, old.camera, old.pending, old.message, old.feed_name) != (
                new.feed, new.camera, new.pending, new.message, new.feed_name
            )
            now = time.monotonic()
            if significant or now - self._status_published >= STATUS_MIN_INTERVAL_S:
                self._status_published = now
                self._notify(Change(kind=ChangeKind.STATUS, snapshot=self._snapshot))

    # -- internals ------------------------------------------------------------------------------

    def _check_open(self) -> None:
        if self._closed:
            raise SessionError("the session is closed")

    def _parse(self, move: Mapping[str, Any]) -> tuple[Any, dict[str, Any]]:
        if not isinstance(move, Mapping):
            raise MoveRejectedError(f"a move must be a JSON object, got {type(move).__name__}")
        try:
            parsed = self._ruleset.parse_move(move)
            data = self._ruleset.move_to_dict(parsed)
        except EngineError as exc:
            raise MoveRejectedError(str(exc)) from None
        except Exception as exc:  # the engine must never take the server down on bad input
            log.exception("the rules engine failed to read a move: %r", move)
            raise MoveRejectedError(f"the rules engine could not read this move ({exc!r})") from None
        return parsed, data

    def _apply(self, state: Any, parsed: Any) -> Any:
        try:
            return self._ruleset.apply(state, parsed)
        except EngineError as exc:
            raise MoveRejectedError(str(exc)) from None
        except Exception as exc:
            log.exception("the rules engine failed to apply a move: %r", parsed)
            raise MoveRejectedError(f"the rules engine could not apply this move ({exc!r})") from None

    def _require_standing(self, seq: int) -> None:
        if any(m.seq == seq for m in self._moves):
            return
        kinds = {e.seq: e.kind for e in self._journal.entries(max(0, seq - 1)) if e.seq == seq}
        if kinds.get(seq) is EntryKind.MOVE:
            raise ConflictError(f"move {seq} was already undone")
        raise UnknownEntryError(f"no recorded move has seq {seq}; GET /api/moves lists them")

    def _initial(self) -> Any:
        h = self._journal.header
        return self._ruleset.initial_state(
            players=h.players, options=h.options, seed=h.seed, setup=h.setup
        )

    def _fold_moves(
        self, moves: list[tuple[int, Mapping[str, Any]]]
    ) -> tuple[Any, list[tuple[int, Mapping[str, Any], tuple[GameWarning, ...]]]]:
        state = self._initial()
        out: list[tuple[int, Mapping[str, Any], tuple[GameWarning, ...]]] = []
        for seq, data in moves:
            parsed, clean = self._parse(data)
            step = self._apply(state, parsed)
            state = step.state
            out.append((seq, clean, step.warnings))
        return state, out

    def _fold(self) -> None:
        """Rebuild state and the effective moves from the journal (start, resume, corrections)."""
        header = self._journal.header
        self._ruleset = get_game(header.game)
        entries: dict[int, Entry] = {}
        replaced: set[int | None] = set()
        self._seq = 0
        for e in self._journal.entries():
            self._seq = e.seq
            if e.kind is EntryKind.MOVE:
                entries[e.seq] = e
            elif e.kind is EntryKind.REPLACE:
                replaced.add(e.target)
        try:
            state, folded = self._fold_moves(self._journal.effective_moves())
        except SessionError as exc:
            raise JournalError(f"{self._journal.path}: cannot rebuild the game: {exc}") from None
        self._state = state
        self._moves = [
            MoveRecord(
                seq=seq, move=data, player=_player_of(data), source=entries[seq].source,
                time=entries[seq].time, warnings=warnings, replaced=seq in replaced,
            )
            for seq, data, warnings in folded
        ]
        self._snapshot = self._make_snapshot(self._seq)

    def _make_snapshot(self, seq: int) -> Snapshot:
        h = self._journal.header
        self._version += 1
        return Snapshot(
            seq=seq,
            game_no=self._game_no,
            game=h.game,
            ruleset=self._ruleset,
            state=self._state,
            players=h.players,
            names=_full_names(h.names, h.players),
            options=MappingProxyType(
                {o.name: h.options.get(o.name, o.default) for o in self._ruleset.options}
            ),
            seed=h.seed,
            moves=tuple(self._moves),
            status=self._status,
            journal=str(self._journal.path),
            at=time.monotonic(),
            version=self._version,
        )

    def _publish(self, kind: ChangeKind, seq: int | None) -> None:
        entries: tuple[Entry, ...] = ()
        if seq is not None:
            self._seq = seq
            entries = tuple(e for e in self._journal.entries(seq - 1) if e.seq == seq)
        self._snapshot = self._make_snapshot(self._seq)
        self._notify(Change(kind=kind, snapshot=self._snapshot, entries=entries))

    def _notify(self, change: Change) -> None:
        for listener in list(self._listeners):
            try:
                listener(change)
            except Exception:  # one broken listener must not stop the game
                log.exception("a session listener failed")


def _player_of(data: Mapping[str, Any]) -> int | None:
    p = data.get("player")
    return p if isinstance(p, int) and not isinstance(p, bool) else None


def _full_names(names: tuple[str, ...], players: int) -> tuple[str, ...]:
    return tuple(
        names[i] if i < len(names) and names[i] else f"Player {i + 1}" for i in range(players)
    )


def _create_journal(
    path: Path,
    *,
    game: str,
    players: int,
    options: Mapping[str, Any] | None,
    names: Iterable[str],
    seed: int | None,
    setup: Mapping[str, Any] | None = None,
) -> Journal:
    clean = _clean_names(names, players)
    if seed is None:
        seed = secrets.randbelow(2**31)
    try:
        return Journal.create(
            path, game=game, players=players, options=options, seed=seed, setup=setup,
            names=clean,
        )
    except EngineError as exc:
        raise SessionError(str(exc)) from None
