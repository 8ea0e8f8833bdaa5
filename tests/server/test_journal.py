"""The journal: append, resume after a kill, corrections, and replay equal to the live game."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from cardtrack.cli import main
from engine import get_game
from engine.simulate import simulate_game
from server.journal import Journal, JournalError

GAME = get_game("minecraft-card-game")


def record(path: Path, seed: int = 4, players: int = 3) -> tuple[Journal, object]:
    game = simulate_game(GAME, players=players, seed=seed)
    journal = Journal.create(path, game=GAME.id, players=players, seed=seed)
    state = GAME.initial_state(players=players, seed=seed)
    for i, move in enumerate(game.moves):
        step = GAME.apply(state, move)
        state = step.state
        journal.append(
            GAME.move_to_dict(move), frame=i * 10, evidence={"score": 0.9}, warnings=step.warnings
        )
    return journal, state


def test_replay_of_the_journal_equals_the_live_game(tmp_path: Path) -> None:
    journal, live = record(tmp_path / "game.sqlite")
    journal.close()
    with Journal.open(tmp_path / "game.sqlite") as again:
        assert again.rebuild().state == live
        entries = list(again.entries())
        assert entries[3].frame == 30 and entries[3].evidence == {"score": 0.9}
        assert next(e.seq for e in again.entries(since=5)) == 6


def test_undo_and_replace_are_entries_and_replay_honours_them(tmp_path: Path) -> None:
    setup = {
        "resource-pile-1": ["wood-2", "stone-1", "iron-1"],
        "resource-pile-2": ["wood-1", "gold-1"],
        "craft-pile-1": ["wood-hoe"],
    }
    with Journal.create(tmp_path / "j.sqlite", game=GAME.id, players=2, setup=setup) as j:
        first = j.append({"player": 1, "move": "mine", "pile": 1})
        second = j.append({"player": 1, "move": "mine", "pile": 1})
        j.replace(second, {"player": 1, "move": "mine", "pile": 2}, source="operator")
        third = j.append({"player": 2, "move": "mine", "pile": 1})
        j.undo(third)
        state = j.rebuild().state
        assert state.areas[0] == ("wood-2", "wood-1")
        assert state.resource_piles[0] == ("stone-1", "iron-1")
        assert len(j.effective_moves()) == 2
        with pytest.raises(JournalError, match="not a recorded move"):
            j.undo(999)
        assert first == 1


def test_a_process_killed_mid_game_resumes_from_the_journal(tmp_path: Path) -> None:
    path = tmp_path / "killed.sqlite"
    script = textwrap.dedent(
        f"""
        import os, signal
        from engine import get_game
        from engine.simulate import simulate_game
        from server.journal import Journal
        g = get_game("minecraft-card-game")
        game = simulate_game(g, players=2, seed=11)
        j = Journal.create({str(path)!r}, game=g.id, players=2, seed=11)
        for i, move in enumerate(game.moves):
            j.append(g.move_to_dict(move), frame=i)
            if i == 19:
                os.kill(os.getpid(), signal.SIGKILL)
        """
    )
    proc = subprocess.run([sys.executable, "-c", script], env={**os.environ}, check=False)
    assert proc.returncode == -signal.SIGKILL
    with Journal.open(path) as j:
        moves = j.effective_moves()
        assert len(moves) == 20
        game = simulate_game(GAME, players=2, seed=11)
        expected = GAME.initial_state(players=2, seed=11)
        for move in game.moves[:20]:
            expected = GAME.apply(expected, move).state
        assert j.rebuild().state == expected


def test_bad_journal_files_give_clear_errors(tmp_path: Path) -> None:
    with pytest.raises(JournalError, match="no journal file"):
        Journal.open(tmp_path / "missing.sqlite")
    junk = tmp_path / "junk.sqlite"
    junk.write_bytes(b"this is not a database at all" * 50)
    with pytest.raises(JournalError, match="not a cardtrack journal"):
        Journal.open(junk)
    Journal.create(tmp_path / "x.sqlite", game=GAME.id, players=2, seed=1).close()
    with pytest.raises(JournalError, match="already exists"):
        Journal.create(tmp_path / "x.sqlite", game=GAME.id, players=2, seed=1)
    conn = sqlite3.connect(tmp_path / "x.sqlite")
    conn.execute("UPDATE meta SET value = '99' WHERE key = 'schema'")
    conn.commit()
    conn.close()
    with pytest.raises(JournalError, match="schema 99"):
        Journal.open(tmp_path / "x.sqlite")


def test_replay_command_prints_the_game(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    journal, live = record(tmp_path / "game.sqlite", seed=2)
    journal.close()
    assert main(["replay", str(tmp_path / "game.sqlite")]) == 0
    out = capsys.readouterr().out
    assert f"scores: {list(GAME.scores(live))}" in out
    assert main(["replay", str(tmp_path / "nope.sqlite")]) == 2
    assert "no journal file" in capsys.readouterr().err


def test_replay_serves_a_recorded_game_through_the_same_app(tmp_path: Path) -> None:
    import time

    from fastapi.testclient import TestClient

    from cardtrack.commands.replay import replay_settings
    from server.app import create_app

    journal, live = record(tmp_path / "game.sqlite", seed=6)
    journal.close()
    before = (tmp_path / "game.sqlite").read_bytes()
    settings = replay_settings(
        tmp_path / "game.sqlite", speed=0, host="127.0.0.1", port=0, lang="en",
        workdir=tmp_path / "work",
    )
    with TestClient(create_app(settings)) as client:
        deadline = time.monotonic() + 30
        state = client.get("/api/state", params={"audience": "public"}).json()
        while not state["over"] and time.monotonic() < deadline:
            time.sleep(0.05)
            state = client.get("/api/state", params={"audience": "public"}).json()
        assert state["over"]
        assert [p["score"] for p in state["players"]] == list(GAME.scores(live))
    # The recorded journal is only read.
    assert (tmp_path / "game.sqlite").read_bytes() == before
