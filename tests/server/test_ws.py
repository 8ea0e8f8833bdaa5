"""The websocket: initial state, live updates, `since=` catch-up, fan-out that no slow viewer blocks."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from engine import Audience, get_game
from engine.simulate import simulate_game
from server.app import create_app
from server.broadcast import Broadcaster
from server.session import Session
from server.settings import ServerSettings

GAME = get_game("minecraft-card-game")
MOVES = [GAME.move_to_dict(m) for m in simulate_game(GAME, players=3, seed=8).moves]


@pytest.fixture
def client(tmp_path: Path) -> Iterator[TestClient]:
    settings = ServerSettings(players=3, seed=8, journal_path=tmp_path / "ws.sqlite")
    with TestClient(create_app(settings)) as c:
        yield c


def receive_until(ws: Any, want: Any) -> list[dict[str, Any]]:
    """Messages up to and including the first one for which `want(message)` holds."""
    got = []
    while True:
        message = ws.receive_json()
        got.append(message)
        if want(message):
            return got


def test_connect_sends_state_then_every_change(client: TestClient) -> None:
    with client.websocket_connect("/ws") as ws:
        first = ws.receive_json()
        assert first["type"] == "state" and first["seq"] == 0
        assert first["view"]["audience"] == "public" and first["view"]["seq"] == 0
        move = {"player": 1, "move": "end-turn"}
        client.post("/api/moves", json={"move": move})
        got = receive_until(ws, lambda m: m["type"] == "state" and m["seq"] == 1)
        events = [m for m in got if m["type"] == "event"]
        assert events[0]["seq"] == 1 and events[0]["event"]["kind"] == "move"
        assert events[0]["event"]["move"] == move
        assert "evidence" not in events[0]["event"]  # evidence is for the operator only
        assert got[-1]["view"]["moves"][-1]["seq"] == 1
        assert got[-1]["view"]["current"] == 2

        # player 1 acts in player 2's turn: a move event, then its warning event, then the state
        client.post("/api/moves", json={"move": {"player": 2, "move": "mine", "pile": 1}})
        client.post("/api/moves", json={"move": {"player": 1, "move": "end-turn"}})
        got = receive_until(ws, lambda m: m["type"] == "state" and m["seq"] == 3)
        kinds = [m["event"]["kind"] for m in got if m["type"] == "event" and m["seq"] == 3]
        assert kinds[0] == "move" and set(kinds[1:]) == {"warning"}
        codes = [m["event"].get("code") for m in got if m["type"] == "event" and m["seq"] == 3]
        assert "out-of-turn" in codes

        client.post("/api/moves/3/undo")
        got = receive_until(ws, lambda m: m["type"] == "state" and m["seq"] == 4)
        undo = next(m["event"] for m in got if m["type"] == "event")
        assert undo == {"kind": "undo", "target": 3, "source": "operator", "time": undo["time"]}
        assert got[-1]["view"]["warnings"] == []


def test_since_catches_up_with_the_journal(client: TestClient) -> None:
    for move in MOVES[:5]:
        client.post("/api/moves", json={"move": move})
    client.post("/api/moves/4/undo")
    with client.websocket_connect("/ws?since=2&audience=operator") as ws:
        state = ws.receive_json()
        assert state["type"] == "state" and state["seq"] == 6
        events = [ws.receive_json() for _ in range(4)]
        assert [(e["seq"], e["event"]["kind"]) for e in events] == [
            (3, "move"), (4, "move"), (5, "move"), (6, "undo")
        ]
        assert "evidence" in events[0]["event"]  # the operator sees the evidence
    with client.websocket_connect("/ws") as ws:  # without since: only the state
        assert ws.receive_json()["seq"] == 6
        client.post("/api/moves", json={"move": {"player": 2, "move": "end-turn"}})
        assert ws.receive_json()["type"] == "event"


def test_bad_parameters_close_the_socket(client: TestClient) -> None:
    from starlette.websockets import WebSocketDisconnect

    for query in ("audience=everyone", "audience=player", "audience=player&player=9", "since=x"):
        with pytest.raises(WebSocketDisconnect), client.websocket_connect(f"/ws?{query}") as ws:
            ws.receive_json()


def test_public_audience_is_delayed(tmp_path: Path) -> None:
    settings = ServerSettings(players=3, seed=8, journal_path=tmp_path / "d.sqlite",
                              broadcast_delay_s=600)
    with TestClient(create_app(settings)) as client:
        client.post("/api/moves", json={"move": MOVES[0]})
        assert client.get("/api/state", params={"audience": "operator"}).json()["seq"] == 1
        public = client.get("/api/state").json()
        assert public["seq"] == 0 and public["delay_s"] == 600 and public["moves"] == []
        assert client.get("/api/moves").json()["moves"] == []
        with client.websocket_connect("/ws?since=0") as ws:
            first = ws.receive_json()
            assert first["seq"] == 0 and first["view"]["moves"] == []
        with client.websocket_connect("/ws?audience=operator") as ws:
            assert ws.receive_json()["seq"] == 1


# -- the fan-out itself, with viewers whose sending we control -----------------------------------


class Viewer:
    """A subscriber whose sends can be held up, as a client on a congested network would be."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.messages: list[dict[str, Any]] = []
        self.open = asyncio.Event()
        self.open.set()
        self.arrived = asyncio.Event()

    async def send(self, text: str) -> None:
        await self.open.wait()
        self.messages.append(json.loads(text))
        self.arrived.set()

    def states(self) -> list[int]:
        return [m["seq"] for m in self.messages if m["type"] == "state"]

    def events(self) -> list[tuple[int, str]]:
        return [(m["seq"], m["event"]["kind"]) for m in self.messages if m["type"] == "event"]

    async def wait_for_state(self, seq: int) -> None:
        while seq not in self.states():
            self.arrived.clear()
            await asyncio.wait_for(self.arrived.wait(), 10)


def test_a_slow_viewer_skips_states_and_never_blocks_a_fast_one(tmp_path: Path) -> None:
    session = Session.start(journal_path=tmp_path / "fan.sqlite", game=GAME.id, players=3, seed=8)

    async def scenario() -> tuple[Viewer, Viewer]:
        broadcaster = Broadcaster(session, max_events=8)
        fast, slow = Viewer("fast"), Viewer("slow")
        slow.open.clear()  # the slow viewer cannot take anything yet
        tasks = [
            asyncio.create_task(broadcaster.serve(v.send, audience=Audience.PUBLIC))
            for v in (fast, slow)
        ]
        await fast.wait_for_state(0)
        for move in MOVES[:30]:
            await asyncio.to_thread(session.submit, move)
            await asyncio.sleep(0)
        await fast.wait_for_state(30)
        assert slow.messages == []  # stuck on its first send, and the fast one got everything
        assert broadcaster.metrics()["event_overflows"] >= 1

        slow.open.set()
        await slow.wait_for_state(30)
        await asyncio.to_thread(session.submit, MOVES[30])
        await fast.wait_for_state(31)
        await slow.wait_for_state(31)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        broadcaster.close()
        return fast, slow

    fast, slow = asyncio.run(scenario())
    session.close()
    assert fast.states() == list(range(32))
    assert [seq for seq, kind in fast.events() if kind == "move"] == list(range(1, 32))
    # The slow viewer got its first state, then only the newest one (latest wins); its event
    # queue overflowed and was dropped, so it holds only the events queued since, then the
    # fresh state, and events resume after it.
    assert slow.states() == [0, 30, 31]
    moves = [seq for seq, kind in slow.events() if kind == "move"]
    assert moves[0] > 1 and moves == list(range(moves[0], 32))
    assert len(moves) <= 9
