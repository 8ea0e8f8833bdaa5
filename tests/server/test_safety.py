"""Safety: loopback by default, the token off loopback, and no hidden card ever reaching the public."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from starlette.websockets import WebSocketDisconnect

from cardtrack.cli import main
from engine import Audience, get_game
from engine.simulate import simulate_game
from server.app import create_app
from server.settings import ServerSettings, SettingsError

GAME = get_game("minecraft-card-game")
TOKEN = "s3cret-table-token"


def test_loopback_is_the_default_and_other_hosts_need_a_token() -> None:
    assert ServerSettings().host == "127.0.0.1"
    ServerSettings(host="localhost")
    ServerSettings(host="::1")
    with pytest.raises(SettingsError, match="give an access token"):
        ServerSettings(host="0.0.0.0")
    with pytest.raises(SettingsError, match="at least 8"):
        ServerSettings(host="0.0.0.0", token="short")
    ServerSettings(host="0.0.0.0", token=TOKEN)


def test_serve_refuses_an_open_bind_with_one_clear_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["serve", "--host", "0.0.0.0", "--port", "0"]) == 2
    err = capsys.readouterr().err
    assert "--token" in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


@pytest.fixture
def locked(tmp_path: Path) -> Iterator[TestClient]:
    settings = ServerSettings(players=3, seed=2, token=TOKEN, journal_path=tmp_path / "t.sqlite")
    with TestClient(create_app(settings)) as c:
        yield c


def test_writing_needs_the_token(locked: TestClient) -> None:
    move = {"move": {"player": 1, "move": "end-turn"}}
    for method, url, body in (
        ("POST", "/api/moves", move),
        ("POST", "/api/moves/1/undo", None),
        ("PUT", "/api/moves/1", move),
        ("PUT", "/api/game/names", {"names": ["A"]}),
        ("PUT", "/api/game/options", {"options": {}}),
        ("POST", "/api/game/new", {}),
        ("POST", "/api/feed/start", None),
        ("POST", "/api/feed/stop", None),
    ):
        r = locked.request(method, url, json=body)
        assert r.status_code == 401, (method, url)
        assert "token" in r.json()["detail"]
        r = locked.request(method, url, json=body, headers={"Authorization": "Bearer wrong-token"})
        assert r.status_code == 401, (method, url)
    assert locked.post("/api/moves", json=move, headers={"Authorization": f"Bearer {TOKEN}"}
                       ).status_code == 201
    assert locked.post(f"/api/moves/1/undo?token={TOKEN}").status_code == 200
    assert locked.get("/api/state").json()["seq"] == 2  # only the authorised writes happened


def test_reading_what_the_public_may_see_needs_no_token(locked: TestClient) -> None:
    assert locked.get("/api/state").status_code == 200
    assert locked.get("/health").status_code == 200
    assert locked.get("/api/state", params={"audience": "operator"}).status_code == 401
    assert locked.get("/api/journal").status_code == 401
    assert locked.get("/api/state", params={"audience": "operator", "token": TOKEN}).status_code == 200


def test_console_page_and_operator_socket_need_the_token(locked: TestClient) -> None:
    assert locked.get("/console").status_code == 401
    assert locked.get(f"/console?token={TOKEN}").status_code != 401
    assert locked.get("/overlay").status_code != 401
    with pytest.raises(WebSocketDisconnect), locked.websocket_connect("/ws?audience=operator") as ws:
        ws.receive_json()
    with locked.websocket_connect(f"/ws?audience=operator&token={TOKEN}") as ws:
        assert ws.receive_json()["view"]["audience"] == "operator"
    with locked.websocket_connect("/ws") as ws:
        assert ws.receive_json()["view"]["audience"] == "public"


# -- redaction -------------------------------------------------------------------------------------


def strings(value: Any) -> Iterator[str]:
    """Every string anywhere in a JSON value, keys included."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield k
            yield from strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from strings(v)


def never_seen(moves: list[Any], seed: int) -> set[str]:
    """Card ids the public has never been shown, by the engine's own public view, at any point
    of the game: every copy lies face down still (the engine knows them: it dealt the deck)."""
    state = GAME.initial_state(players=3, seed=seed)
    seen: set[str] = set()
    for move in [None, *moves]:
        if move is not None:
            state = GAME.apply(state, move).state
        public = GAME.view(state, Audience.PUBLIC)["zones"]
        seen |= {c for cards in public.values() for c in cards if c is not None}
    hidden: Counter[str] = Counter()
    public = GAME.view(state, Audience.PUBLIC)["zones"]
    for zone, cards in GAME.view(state, Audience.OPERATOR)["zones"].items():
        for i, card in enumerate(cards):
            if card is not None and public[zone][i] is None:
                hidden[card] += 1
    counts = {c.id: c.count for c in GAME.catalog.cards.values()}
    return {card for card, n in hidden.items() if n == counts[card] and card not in seen}


def test_public_and_players_never_receive_a_face_down_card(tmp_path: Path) -> None:
    settings = ServerSettings(players=3, seed=12, journal_path=tmp_path / "r.sqlite")
    moves = simulate_game(GAME, players=3, seed=12).moves
    with TestClient(create_app(settings)) as client:
        with client.websocket_connect("/ws?since=0") as public_ws, \
                client.websocket_connect("/ws?audience=player&player=2") as player_ws:
            received = [public_ws.receive_json(), player_ws.receive_json()]
            for move in moves[:40]:
                r = client.post("/api/moves", json={"move": GAME.move_to_dict(move)})
                assert r.status_code == 201
            seq = client.get("/health").json()["seq"]
            for ws in (public_ws, player_ws):
                while True:
                    message = ws.receive_json()
                    received.append(message)
                    if message["type"] == "state" and message["seq"] == seq:
                        break
        operator = client.get("/api/state", params={"audience": "operator"}).json()
        public = client.get("/api/state").json()
        player = client.get("/api/state", params={"audience": "player", "player": 2}).json()
        hidden = never_seen(list(moves[:40]), seed=12)
        assert len(hidden) >= 5  # craft cards under the pile tops, at least
        assert hidden <= set(strings(operator))  # the operator does see them
        documents = [public, player, client.get("/api/moves").json(),
                     client.get("/api/warnings").json(), *received]
        for doc in documents:
            leaked = hidden & set(strings(doc))
            assert not leaked, f"face-down cards reached a public document: {sorted(leaked)}"
        assert all(c is None for c in public["zones"]["discard"])
