"""A server killed with kill -9 comes back into the same game from its journal."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from engine import get_game
from engine.simulate import simulate_game
from server.session import Session, journal_chain

GAME = get_game("minecraft-card-game")
ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_server(journal: Path, port: int, log: Path) -> subprocess.Popen[bytes]:
    with log.open("ab") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "cardtrack.cli", "serve", "--players", "3", "--seed", "6",
             "--names", "Ann,Bo,Cy", "--journal", str(journal), "--port", str(port)],
            cwd=ROOT, stdout=out, stderr=subprocess.STDOUT,
        )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"the server exited early:\n{log.read_text()}")
        try:
            if httpx.get(f"http://127.0.0.1:{port}/health", timeout=1).status_code == 200:
                return proc
        except httpx.TransportError:
            time.sleep(0.1)
    proc.kill()
    raise AssertionError(f"the server did not come up:\n{log.read_text()}")


@pytest.fixture
def processes() -> Iterator[list[subprocess.Popen[bytes]]]:
    procs: list[subprocess.Popen[bytes]] = []
    yield procs
    for p in procs:
        if p.poll() is None:
            p.kill()
            p.wait(10)


def stable(view: dict[str, Any]) -> dict[str, Any]:
    """The game part of a view model (the feed status is about the process, not the game)."""
    return {k: v for k, v in view.items() if k != "status"}


def test_kill_9_then_restart_resumes_the_same_game(
    tmp_path: Path, processes: list[subprocess.Popen[bytes]]
) -> None:
    journal, port, log = tmp_path / "table.sqlite", free_port(), tmp_path / "server.log"
    processes.append(start_server(journal, port, log))
    base = f"http://127.0.0.1:{port}"
    moves = simulate_game(GAME, players=3, seed=6).moves[:12]
    with httpx.Client(base_url=base, timeout=10) as http:
        for move in moves:
            assert http.post("/api/moves", json={"move": GAME.move_to_dict(move)}).status_code == 201
        assert http.post("/api/moves/12/undo").status_code == 200
        assert http.post("/api/moves", json={"move": {"player": 1, "move": "end-turn"}}
                         ).status_code == 201
        before = http.get("/api/state", params={"audience": "operator"}).json()
    assert before["seq"] == 14

    os.kill(processes[0].pid, signal.SIGKILL)
    processes[0].wait(10)

    processes.append(start_server(journal, port, log))
    with httpx.Client(base_url=base, timeout=10) as http:
        after = http.get("/api/state", params={"audience": "operator"}).json()
        assert stable(after) == stable(before)
        assert [p["name"] for p in after["players"]] == ["Ann", "Bo", "Cy"]
        # and the game goes on from there
        r = http.post("/api/moves/14/undo")
        assert r.status_code == 200 and r.json()["seq"] == 15
    assert "resumed at move seq 14" in log.read_text()


def test_a_session_resumes_the_newest_game_of_its_journal(tmp_path: Path) -> None:
    path = tmp_path / "j.sqlite"
    session = Session.start(journal_path=path, game=GAME.id, players=3, seed=1)
    session.submit({"player": 1, "move": "mine", "pile": 1})
    session.new_game(players=2, seed=4, names=("X", "Y"))
    session.submit({"player": 1, "move": "end-turn"})
    session.set_options({"setup": "all-face-up"})
    before = session.snapshot
    session.close()
    assert journal_chain(path) == [path, tmp_path / "j.2.sqlite"]

    again = Session.start(journal_path=path, game=GAME.id, players=3)
    snap = again.snapshot
    again.close()
    assert again.resumed and snap.game_no == 2 and snap.players == 2
    assert snap.names == ("X", "Y") and snap.options["setup"] == "all-face-up"
    assert snap.seq == before.seq and snap.moves == before.moves
    assert GAME.zones(snap.state) == GAME.zones(before.state)
