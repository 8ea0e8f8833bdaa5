"""The JSON API as the pages and an operator use it: state, moves, corrections, game settings."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from cardtrack.cli import main
from engine import game_ids, get_game
from engine.simulate import simulate_game
from server.app import create_app
from server.feeds import SimulatedFeed
from server.schemas import ViewModelOut
from server.session import Session
from server.settings import ServerSettings

GAME = get_game("minecraft-card-game")
I18N = Path(__file__).resolve().parents[2] / "server" / "i18n"


@pytest.fixture
def client(tmp_path: Path) -> Iterator[TestClient]:
    settings = ServerSettings(
        players=3, seed=5, names=("Ann", "Bo"), journal_path=tmp_path / "game.sqlite"
    )
    with TestClient(create_app(settings)) as c:
        yield c


def post_move(client: TestClient, move: dict[str, Any]) -> dict[str, Any]:
    r = client.post("/api/moves", json={"move": move})
    assert r.status_code == 201, r.text
    return r.json()


def test_initial_state_is_the_documented_view_model(client: TestClient) -> None:
    view = client.get("/api/state").json()
    ViewModelOut.model_validate(view)
    assert view["seq"] == 0 and view["game"] == "minecraft-card-game"
    assert [p["name"] for p in view["players"]] == ["Ann", "Bo", "Player 3"]
    assert view["audience"] == "public" and view["current"] == 1 and view["over"] is False
    assert view["target"] == 20 and view["allowed"] == 2
    for zone, cards in view["zones"].items():
        assert view["counts"][zone] == len(cards)
        assert view["tops"][zone] == (cards[0] if cards else None)
    assert set(view["players"][0]["zones"]) == {"player-1", "reserve-1"}
    assert view["status"]["feed"] == "stopped"


def test_moves_warnings_and_view_follow_what_the_operator_inserts(client: TestClient) -> None:
    first = post_move(client, {"player": 1, "move": "mine", "pile": 1})
    assert first["seq"] == 1 and first["warnings"] == []
    post_move(client, {"player": 1, "move": "mine", "pile": 2})
    third = post_move(client, {"player": 1, "move": "mine", "pile": 3})
    assert [w["code"] for w in third["warnings"]] == ["too-many-actions"]

    view = client.get("/api/state").json()
    assert view["seq"] == 3
    assert len(view["players"][0]["zones"]["player-1"]) == 3
    assert [m["seq"] for m in view["moves"]] == [1, 2, 3]
    assert view["moves"][0]["text"] == "Ann mines resource pile 1"
    assert [(w["seq"], w["code"]) for w in view["warnings"]] == [(3, "too-many-actions")]

    assert [m["seq"] for m in client.get("/api/moves", params={"since": 1}).json()["moves"]] == [2, 3]
    warnings = client.get("/api/warnings").json()["warnings"]
    assert warnings[0]["code"] == "too-many-actions" and warnings[0]["players"] == [1]
    entries = client.get("/api/journal", params={"since": 2}).json()["entries"]
    assert [e["seq"] for e in entries] == [3] and entries[0]["source"] == "operator"


def test_undo_and_replace_are_journal_entries_that_change_the_state(client: TestClient) -> None:
    for pile in (1, 2, 3):
        post_move(client, {"player": 1, "move": "mine", "pile": pile})
    undo = client.post("/api/moves/3/undo")
    assert undo.status_code == 200 and undo.json()["seq"] == 4
    view = client.get("/api/state").json()
    assert [m["seq"] for m in view["moves"]] == [1, 2] and view["warnings"] == []
    assert client.post("/api/moves/3/undo").status_code == 409
    assert client.post("/api/moves/99/undo").status_code == 404

    before = client.get("/api/state", params={"audience": "operator"}).json()
    r = client.put("/api/moves/2", json={"move": {"player": 1, "move": "mine", "pile": 5}})
    assert r.status_code == 200, r.text
    after = client.get("/api/state", params={"audience": "operator"}).json()
    assert after["seq"] == 5 and after["moves"][1]["move"]["pile"] == 5
    assert after["moves"][1]["replaced"] is True
    assert after["counts"]["resource-pile-2"] == before["counts"]["resource-pile-2"] + 1
    assert after["counts"]["resource-pile-5"] == before["counts"]["resource-pile-5"] - 1
    kinds = [e["kind"] for e in client.get("/api/journal").json()["entries"]]
    assert kinds == ["move", "move", "move", "undo", "replace"]


def test_bodies_are_validated_with_readable_messages(client: TestClient) -> None:
    r = client.post("/api/moves", json={"mvoe": {}})
    assert r.status_code == 422
    assert "body.move: Field required" in r.json()["detail"]
    assert "mvoe" in r.json()["detail"]
    r = client.post("/api/moves", content=b"not json", headers={"content-type": "application/json"})
    assert r.status_code == 422
    r = client.put("/api/game/names", json={"names": ["x" * 41]})
    assert r.status_code == 422 and "names.0" in r.json()["detail"]
    assert client.get("/api/state", params={"audience": "everyone"}).status_code == 422
    assert client.get("/api/state", params={"audience": "player"}).status_code == 422


def test_a_move_the_engine_cannot_read_is_400_with_the_engine_message(client: TestClient) -> None:
    r = client.post("/api/moves", json={"move": {"player": 1, "move": "fly"}})
    assert r.status_code == 400 and "unknown move 'fly'" in r.json()["detail"]
    r = client.post("/api/moves", json={"move": {"player": 1, "move": "mine"}})
    assert r.status_code == 400 and "missing field 'pile'" in r.json()["detail"]
    r = client.post("/api/moves", json={"move": {"player": 7, "move": "mine", "pile": 1}})
    assert r.status_code == 400 and "player 7" in r.json()["detail"]
    r = client.put("/api/moves/1", json={"move": {"player": 1, "move": "mine", "pile": 1}})
    assert r.status_code == 404
    assert client.get("/api/state").json()["seq"] == 0  # nothing was recorded


def test_names_options_and_a_new_game(client: TestClient, tmp_path: Path) -> None:
    game = client.get("/api/game").json()
    assert game["players"] == 3 and game["names"] == ["Ann", "Bo", "Player 3"]
    assert {o["name"] for o in game["options"]} >= {"setup", "creeper_trigger"}
    assert "mine" in {m["name"] for m in game["moves"]}

    r = client.put("/api/game/names", json={"names": ["Ann", "Bo", "Cy"]})
    assert r.json()["names"] == ["Ann", "Bo", "Cy"]
    r = client.put("/api/game/options", json={"options": {"setup": "sideways"}})
    assert r.status_code == 400 and "choose one of" in r.json()["detail"]
    post_move(client, {"player": 1, "move": "mine", "pile": 1})
    r = client.put("/api/game/options", json={"options": {"setup": "all-face-up"}})
    setup = next(o for o in r.json()["options"] if o["name"] == "setup")
    assert setup["value"] == "all-face-up"
    public = client.get("/api/state").json()
    assert None not in public["zones"]["resource-pile-1"]  # whole piles face up now
    assert public["seq"] == 1  # the move still stands, folded under the new options

    r = client.post("/api/game/new", json={"players": 2, "names": ["X", "Y"], "seed": 9})
    assert r.status_code == 201 and r.json()["game_no"] == 2 and r.json()["players"] == 2
    assert (tmp_path / "game.2.sqlite").exists()
    view = client.get("/api/state").json()
    assert view["seq"] == 0 and view["game_no"] == 2 and len(view["players"]) == 2
    r = client.post("/api/game/new", json={"game": "chess"})
    assert r.status_code == 400 and "unknown game 'chess'" in r.json()["detail"]


def test_health_metrics_catalog_and_games(client: TestClient) -> None:
    assert client.get("/health").json() == {"status": "ok", "feed": "stopped", "seq": 0}
    metrics = client.get("/api/metrics").json()
    assert metrics["subscribers"] == 0 and metrics["moves"] == 0
    catalog = client.get("/api/catalog/minecraft-card-game").json()
    assert catalog["cards"]["diamond-pickaxe"]["name"] == "Diamond Pickaxe"
    assert catalog["cards"]["diamond-pickaxe"]["attrs"]["points"] == 6
    assert client.get("/api/catalog/chess").status_code == 404
    games = {g["game"] for g in client.get("/api/games").json()["games"]}
    assert "minecraft-card-game" in games


def test_pages_and_translations_are_served(client: TestClient) -> None:
    assert client.get("/").status_code == 200
    for page in ("overlay", "spectator", "console"):
        assert client.get(f"/{page}").status_code in (200, 404)  # 404 only if not installed
    en = client.get("/api/i18n/en").json()
    assert en["dir"] == "ltr" and en["warning.out-of-turn"]
    assert client.get("/api/i18n/xx").status_code == 404
    assert client.get("/api/i18n/..%2Fapp").status_code == 404


def test_english_has_a_template_for_every_warning_code_of_every_game() -> None:
    en = json.loads((I18N / "en.json").read_text(encoding="utf-8"))
    for gid in game_ids():
        rules = getattr(sys.modules[type(get_game(gid)).__module__], "RULES", {})
        missing = [str(code) for code in rules if f"warning.{code}" not in en]
        assert not missing, f"{gid}: en.json lacks warning templates for {missing}"
    for key in ("score", "turn", "actions", "winner", "warnings", "piles", "discard", "reserve",
                "current_player", "camera_lost", "pending", "undo", "insert_move", "start", "stop"):
        assert en[key], key


def test_feed_start_stop_and_shutdown_stop_the_thread(tmp_path: Path) -> None:
    feed = SimulatedFeed(players=2, seed=3, seconds_per_move=0.001, pause_s=0.0)
    settings = ServerSettings(players=2, seed=3, feed=feed, journal_path=tmp_path / "j.sqlite",
                              feed_autostart=False)
    app = create_app(settings)
    with TestClient(app) as c:
        assert c.get("/health").json()["feed"] == "stopped"
        assert c.post("/api/feed/start").json() == {"feed": "running", "name": "simulated",
                                                     "changed": True}
        assert c.post("/api/feed/start").json()["changed"] is False
        assert c.post("/api/feed/stop").json()["feed"] == "stopped"
        seq = c.get("/health").json()["seq"]
        assert c.get("/health").json() == {"status": "ok", "feed": "stopped", "seq": seq}
        c.post("/api/feed/start")
        runner = app.state.runner
    assert not runner.running  # lifespan shutdown stopped the feed thread
    with TestClient(create_app(ServerSettings(players=2))) as c:
        assert c.post("/api/feed/start").status_code == 409


def test_simulated_moves_replayed_through_the_api_reach_the_engines_result(
    client: TestClient,
) -> None:
    client.post("/api/game/new", json={"players": 3, "seed": 21})
    game = simulate_game(GAME, players=3, seed=21)
    for move in game.moves[:60]:
        post_move(client, GAME.move_to_dict(move))
    state = GAME.initial_state(players=3, seed=21)
    for move in game.moves[:60]:
        state = GAME.apply(state, move).state
    view = client.get("/api/state", params={"audience": "operator"}).json()
    assert [p["score"] for p in view["players"]] == list(GAME.scores(state))
    assert view["zones"] == {z: list(c) for z, c in GAME.zones(state).items()}


def test_demo_once_serves_one_whole_game_then_exits(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    journal = tmp_path / "demo.sqlite"
    assert main(["demo", "--simulated", "--once", "--pace", "0", "--port", "0", "--journal", str(journal)]) == 0
    out = capsys.readouterr().out
    assert "/overlay" in out and "/console" in out and "/spectator" in out
    assert "winner: " in out
    session = Session.start(journal_path=journal, game=GAME.id, players=3)
    snap = session.snapshot
    session.close()
    assert GAME.is_over(snap.state) and len(snap.moves) > 20  # the whole game is on record
