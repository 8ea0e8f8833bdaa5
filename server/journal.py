"""The game journal: an append-only SQLite record of one session, and replay as a fold over it.

Every move (from the camera or typed by the operator), every correction and every warning is
appended with its evidence (frame index, time, candidates, score). Corrections never rewrite the
past: an `undo` entry cancels an earlier move and a `replace` entry substitutes it, so replaying
the journal reproduces exactly what the operator saw. A process killed mid-game loses nothing
that was appended: each entry is committed before `append` returns, and `Journal.open` resumes.
"""

from __future__ import annotations

import dataclasses
import json
import sqlite3
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any

from engine import EngineError, GameWarning, Replay, get_game, replay

SCHEMA_VERSION = 1


class JournalError(ValueError):
    """A journal file that cannot be opened, created or understood."""


class EntryKind(StrEnum):
    MOVE = "move"
    UNDO = "undo"
    REPLACE = "replace"
    NOTE = "note"


@dataclass(frozen=True, slots=True, kw_only=True)
class Entry:
    """One journal row. `target` names the entry an undo or replace applies to."""

    seq: int
    kind: EntryKind
    time: float
    move: Mapping[str, Any] | None = None
    target: int | None = None
    frame: int | None = None
    source: str = "vision"
    evidence: Mapping[str, Any] = field(default_factory=dict)
    warnings: tuple[Mapping[str, Any], ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class GameHeader:
    """What is needed to set the game up again: the same as a scenario's top part."""

    game: str
    players: int
    options: Mapping[str, Any]
    seed: int | None = None
    setup: Mapping[str, Any] | None = None
    names: tuple[str, ...] = ()


_DDL = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS entries (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    kind TEXT NOT NULL,
    time REAL NOT NULL,
    move TEXT,
    target INTEGER,
    frame INTEGER,
    source TEXT NOT NULL,
    evidence TEXT NOT NULL,
    warnings TEXT NOT NULL
);
"""


class Journal:
    """One session's journal file. Use `Journal.create` for a new game, `Journal.open` to resume."""

    def __init__(self, path: Path, conn: sqlite3.Connection, header: GameHeader) -> None:
        self.path = path
        self._conn = conn
        self.header = header

    # -- opening ------------------------------------------------------------------------------

    @classmethod
    def create(
        cls,
        path: str | Path,
        *,
        game: str,
        players: int,
        options: Mapping[str, Any] | None = None,
        seed: int | None = None,
        setup: Mapping[str, Any] | None = None,
        names: tuple[str, ...] = (),
    ) -> Journal:
        """Start a new journal; refuses to overwrite an existing file."""
        path = Path(path)
        if path.exists():
            raise JournalError(
                f"{path}: a journal already exists here; open it to resume, or choose a new file"
            )
        header = GameHeader(
            game=game, players=players, options=dict(options or {}), seed=seed, setup=setup,
            names=tuple(names),
        )
        ruleset = get_game(game)  # raises a clear error for an unknown game
        ruleset.initial_state(players=players, options=options, seed=seed, setup=setup)
        path.parent.mkdir(parents=True, exist_ok=True)
        conn = cls._connect(path)
        with conn:
            conn.executescript(_DDL)
            meta = {
                "schema": SCHEMA_VERSION,
                "game": game,
                "players": players,
                "options": header.options,
                "seed": seed,
                "setup": setup,
                "names": list(names),
                "created": time.time(),
            }
            conn.executemany(
                "INSERT INTO meta (key, value) VALUES (?, ?)",
                [(k, json.dumps(v)) for k, v in meta.items()],
            )
        return cls(path, conn, header)

    @classmethod
    def open(cls, path: str | Path) -> Journal:
        """Open an existing journal (to resume a game or replay it)."""
        path = Path(path)
        if not path.exists():
            raise JournalError(f"{path}: no journal file here")
        try:
            conn = cls._connect(path)
            rows = dict(conn.execute("SELECT key, value FROM meta").fetchall())
        except sqlite3.DatabaseError as exc:
            raise JournalError(f"{path}: not a cardtrack journal ({exc})") from None
        try:
            meta = {k: json.loads(v) for k, v in rows.items()}
        except json.JSONDecodeError as exc:
            raise JournalError(f"{path}: damaged header ({exc.msg})") from None
        if meta.get("schema") != SCHEMA_VERSION:
            raise JournalError(
                f"{path}: journal schema {meta.get('schema')!r}, this version reads {SCHEMA_VERSION}"
            )
        for key in ("game", "players"):
            if key not in meta:
                raise JournalError(f"{path}: header field {key!r} is missing")
        header = GameHeader(
            game=meta["game"],
            players=int(meta["players"]),
            options=meta.get("options") or {},
            seed=meta.get("seed"),
            setup=meta.get("setup"),
            names=tuple(meta.get("names") or ()),
        )
        return cls(path, conn, header)

    @staticmethod
    def _connect(path: Path) -> sqlite3.Connection:
        conn = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=FULL")
        conn.isolation_level = "DEFERRED"
        return conn

    def close(self) -> None:
        self._conn.close()

    def __enter__(self) -> Journal:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- writing ------------------------------------------------------------------------------

    def _insert(
        self,
        kind: EntryKind,
        *,
        move: Mapping[str, Any] | None = None,
        target: int | None = None,
        frame: int | None = None,
        source: str = "vision",
        evidence: Mapping[str, Any] | None = None,
        warnings: tuple[GameWarning, ...] = (),
        at: float | None = None,
    ) -> int:
        with self._conn:
            cur = self._conn.execute(
                "INSERT INTO entries (kind, time, move, target, frame, source, evidence, warnings)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    kind.value,
                    time.time() if at is None else at,
                    None if move is None else json.dumps(dict(move)),
                    target,
                    frame,
                    source,
                    json.dumps(dict(evidence or {})),
                    json.dumps([w.to_dict() for w in warnings]),
                ),
            )
        seq = cur.lastrowid
        assert seq is not None
        return seq

    def append(
        self,
        move: Mapping[str, Any],
        *,
        frame: int | None = None,
        source: str = "vision",
        evidence: Mapping[str, Any] | None = None,
        warnings: tuple[GameWarning, ...] = (),
        at: float | None = None,
    ) -> int:
        """Record a move (as its plain dictionary) and what it raised; returns its seq."""
        return self._insert(
            EntryKind.MOVE, move=move, frame=frame, source=source, evidence=evidence,
            warnings=warnings, at=at,
        )

    def undo(self, target: int, *, source: str = "operator") -> int:
        self._require_move(target)
        return self._insert(EntryKind.UNDO, target=target, source=source)

    def replace(
        self,
        target: int,
        move: Mapping[str, Any],
        *,
        source: str = "operator",
        frame: int | None = None,
        evidence: Mapping[str, Any] | None = None,
    ) -> int:
        """Record that `move` stands in place of the move at `target` (with the evidence of a
        camera that set its own read right); returns the entry's seq."""
        self._require_move(target)
        return self._insert(EntryKind.REPLACE, target=target, move=move, source=source, frame=frame,
                            evidence=evidence)

    def update_header(
        self,
        *,
        names: tuple[str, ...] | None = None,
        options: Mapping[str, Any] | None = None,
    ) -> GameHeader:
        """Correct the players' names or the rule options of the recorded game; a replay folds
        every move again under the new header."""
        changes: dict[str, Any] = {}
        if names is not None:
            changes["names"] = list(names)
        if options is not None:
            changes["options"] = dict(options)
        with self._conn:
            self._conn.executemany(
                "INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)",
                [(k, json.dumps(v)) for k, v in changes.items()],
            )
        self.header = dataclasses.replace(
            self.header,
            names=self.header.names if names is None else tuple(names),
            options=self.header.options if options is None else dict(options),
        )
        return self.header

    def _require_move(self, target: int) -> None:
        row = self._conn.execute("SELECT kind FROM entries WHERE seq = ?", (target,)).fetchone()
        if row is None or row[0] != EntryKind.MOVE.value:
            raise JournalError(f"{self.path}: entry {target} is not a recorded move")

    # -- reading ------------------------------------------------------------------------------

    def entries(self, since: int = 0) -> Iterator[Entry]:
        rows = self._conn.execute(
            "SELECT seq, kind, time, move, target, frame, source, evidence, warnings"
            " FROM entries WHERE seq > ? ORDER BY seq",
            (since,),
        )
        for seq, kind, at, move, target, frame, source, evidence, warnings in rows:
            try:
                yield Entry(
                    seq=seq,
                    kind=EntryKind(kind),
                    time=at,
                    move=None if move is None else json.loads(move),
                    target=target,
                    frame=frame,
                    source=source,
                    evidence=json.loads(evidence),
                    warnings=tuple(json.loads(warnings)),
                )
            except (ValueError, json.JSONDecodeError) as exc:
                raise JournalError(f"{self.path}: entry {seq} is damaged ({exc})") from None

    def effective_moves(self) -> list[tuple[int, Mapping[str, Any]]]:
        """The moves that stand after every undo and replace, in order, with their seq."""
        moves: dict[int, Mapping[str, Any]] = {}
        for entry in self.entries():
            if entry.kind is EntryKind.MOVE and entry.move is not None:
                moves[entry.seq] = entry.move
            elif entry.kind is EntryKind.UNDO and entry.target is not None:
                moves.pop(entry.target, None)
            elif entry.kind is EntryKind.REPLACE and entry.move and entry.target in moves:
                moves[entry.target] = entry.move
        return sorted(moves.items())

    def rebuild(self) -> Replay[Any]:
        """Replay = fold(apply) over the effective moves from the recorded setup."""
        ruleset = get_game(self.header.game)
        try:
            initial = ruleset.initial_state(
                players=self.header.players,
                options=self.header.options,
                seed=self.header.seed,
                setup=self.header.setup,
            )
            moves = [ruleset.parse_move(m) for _, m in self.effective_moves()]
        except EngineError as exc:
            raise JournalError(f"{self.path}: cannot rebuild the game: {exc}") from None
        return replay(ruleset, initial, moves)
