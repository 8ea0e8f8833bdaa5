"""The pages as a viewer sees them: a real server, Debian's headless Chromium, real clicks.

Each test starts the app with `create_app` under uvicorn in a thread (an ephemeral port) and
drives the overlay, the console and the spectator page with Playwright against the system
Chromium (never a downloaded browser). Moves are submitted over HTTP, computed with the engine
from the same seeded deal the server uses, or played by a `SimulatedFeed` at full speed.
Screenshots go to `tests/server/screenshots/` for a human to look at. The translation checks
at the end need no browser.
"""

from __future__ import annotations

import io
import json
import random
import re
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from browser_helpers import CHROMIUM, shot
from fastapi import FastAPI
from PIL import Image

from engine import Audience, game_ids, get_game
from server.app import create_app
from server.feeds import SimulatedFeed
from server.settings import ServerSettings

GAME = "minecraft-card-game"
NAMES = ("Alex", "Bea", "Chen")
SEED = 7
TOKEN = "table-token-1234"
I18N = Path(__file__).resolve().parents[2] / "server" / "i18n"

browser_test = pytest.mark.skipif(
    not CHROMIUM.exists(),
    reason="the page tests need Debian's chromium at /usr/bin/chromium (apt-get install chromium)",
)


# -- a real server -------------------------------------------------------------------------------


@contextmanager
def serving(settings: ServerSettings | FastAPI) -> Iterator[str]:
    """Run the app (or one made from settings) under uvicorn in a thread on a free port;
    yields its base URL."""
    import uvicorn

    app = settings if isinstance(settings, FastAPI) else create_app(settings)
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning"))
    thread = threading.Thread(target=server.run, name="test-server", daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("the test server did not start")
        time.sleep(0.02)
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(10)


def call(base: str, method: str, path: str, body: Any = None, token: str | None = None) -> Any:
    """One JSON request; returns the decoded answer (raises on an HTTP error)."""
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(base + path, data=data, method=method)
    request.add_header("Accept", "application/json")
    if data is not None:
        request.add_header("Content-Type", "application/json")
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.loads(response.read() or b"null")


def settings_for(tmp_path: Path, **extra: Any) -> ServerSettings:
    base: dict[str, Any] = {
        "game": GAME, "players": 3, "names": NAMES, "seed": SEED,
        "journal_path": tmp_path / "journal.sqlite", "feed": None,
    }
    return ServerSettings(**(base | extra))


def wait_until(check: Any, what: str, timeout_s: float = 30.0) -> Any:
    deadline = time.monotonic() + timeout_s
    while True:
        result = check()
        if result:
            return result
        if time.monotonic() > deadline:
            raise AssertionError(f"gave up waiting for {what}")
        time.sleep(0.05)


# -- moves from the same seeded deal the server dealt ----------------------------------------------


class Table:
    """The engine's copy of the server's game: plays legal moves and finds an illegal one."""

    def __init__(self) -> None:
        self.ruleset = get_game(GAME)
        self.state = self.ruleset.initial_state(players=3, options=None, seed=SEED)
        self.rng = random.Random(SEED)

    def play(self, base: str, move: dict[str, Any], token: str | None = None) -> dict[str, Any]:
        result = call(base, "POST", "/api/moves", {"move": move}, token)
        self.state = self.ruleset.apply(self.state, self.ruleset.parse_move(move)).state
        return result

    def legal(self, prefer: str = "craft") -> dict[str, Any]:
        moves = [self.ruleset.move_to_dict(m) for m in self.ruleset.legal_moves(self.state)]
        best = [m for m in moves if m["move"] == prefer]
        return self.rng.choice(best or [m for m in moves if m["move"] != "end-turn"] or moves)

    def raising(self, code: str, players: tuple[int, ...] = (1, 2, 3)) -> dict[str, Any]:
        """A `mine` by one of `players` that raises exactly the warning `code`."""
        for player in players:
            for pile in range(1, 6):
                move = {"player": player, "move": "mine", "pile": pile}
                step = self.ruleset.apply(self.state, self.ruleset.parse_move(move))
                if [w.code for w in step.warnings] == [code]:
                    return move
        raise AssertionError(f"no mine move raises exactly {code} here")

    def use_up_turn(self, base: str, token: str | None = None) -> int:
        """Play legal moves until the current player has no action left and nothing (a TNT
        blast, a creeper) waits for an answer; returns that player."""
        for _ in range(60):
            s = self.state
            if s.actions >= s.allowed and not (s.tnt or s.attacks or s.turn_over or s.over):
                return int(s.current)
            self.play(base, self.legal(prefer="mine"), token)
        raise AssertionError("the seeded game never reached the end of a turn")


def scores_shown(page: Any, selector: str) -> dict[int, int]:
    return {
        int(el.get_attribute("data-player")): int(el.query_selector(".player-score, .score").inner_text())
        for el in page.query_selector_all(selector)
    }


def api_scores(view: dict[str, Any]) -> dict[int, int]:
    return {p["n"]: p["score"] for p in view["players"]}


# -- the browser -------------------------------------------------------------------------------------


def wait_seq(page: Any, seq: int) -> None:
    page.wait_for_selector(f'body[data-seq="{seq}"]', state="attached")


# -- tests -------------------------------------------------------------------------------------------


@browser_test
def test_overlay_follows_the_game_toasts_warnings_and_is_transparent(
    new_page: Any, tmp_path: Path
) -> None:
    table = Table()
    with serving(settings_for(tmp_path)) as base:
        page = new_page()
        page.goto(f"{base}/overlay?toast=60")
        page.wait_for_selector("#players .player >> nth=2")
        # Transparent for OBS: neither the page nor the document paints a background.
        for target in ("document.documentElement", "document.body"):
            assert page.evaluate(f"getComputedStyle({target}).backgroundColor") == "rgba(0, 0, 0, 0)"

        # Play until somebody has points, live, while the page watches.
        for _ in range(400):
            if any(table.ruleset.scores(table.state)):
                break
            table.play(base, table.legal())
        assert any(table.ruleset.scores(table.state)), "the seeded game never scored"
        player = table.use_up_turn(base)
        illegal = table.raising("too-many-actions", (player,))
        result = table.play(base, illegal)
        assert [w["code"] for w in result["warnings"]] == ["too-many-actions"]

        toast = page.wait_for_selector('.toast[data-code="too-many-actions"]')
        assert toast.query_selector(".toast-text").inner_text() == (
            f"{NAMES[player - 1]} took more actions than the turn allows"
        )
        view = call(base, "GET", "/api/state")
        wait_seq(page, view["seq"])
        assert scores_shown(page, "#players .player") == api_scores(view)
        assert max(api_scores(view).values()) > 0
        for zone in ("resource-pile-1", "craft-pile-1"):
            top = view["tops"][zone]
            tile = page.query_selector(f'#table .pile[data-zone="{zone}"]')
            assert tile is not None
            if top is not None:
                assert tile.query_selector(".chip").get_attribute("data-card") == top
        current = page.query_selector("#players .player.current")
        assert current is not None and current.get_attribute("data-player") == str(view["current"])

        png = shot(page, "overlay.png", omit_background=True)
        image = Image.open(io.BytesIO(png)).convert("RGBA")
        assert image.size == (1920, 1080)
        assert image.getpixel((960, 600))[3] == 0, "the middle of the overlay must show the video"
        box = page.query_selector("#players .player").bounding_box()
        assert image.getpixel((int(box["x"] + 8), int(box["y"] + box["height"] / 2)))[3] > 100

        # A dropped connection: the page reconnects with since= and shows the new move.
        page.evaluate("window.cardtrack.socket.close()")
        nxt = table.legal(prefer="mine")
        posted = table.play(base, nxt)
        wait_seq(page, posted["seq"])
        assert page.query_selector("#players .player.current").get_attribute("data-player") == (
            str(call(base, "GET", "/api/state")["current"])
        )

        # A reload rebuilds everything from the `state` message; old warnings do not toast again.
        page.reload()
        wait_seq(page, posted["seq"])
        assert scores_shown(page, "#players .player") == api_scores(call(base, "GET", "/api/state"))
        assert page.query_selector_all(".toast") == []


@browser_test
def test_toasts_fade_after_a_few_seconds(new_page: Any, tmp_path: Path) -> None:
    with serving(settings_for(tmp_path)) as base:
        page = new_page()
        page.goto(f"{base}/overlay?toast=1")
        page.wait_for_selector("#players .player >> nth=2")
        current = call(base, "GET", "/api/state")["current"]
        other = current % 3 + 1
        call(base, "POST", "/api/moves", {"move": {"player": other, "move": "mine", "pile": 1}})
        toast = page.wait_for_selector('.toast[data-code="out-of-turn"]')
        assert toast.inner_text().startswith(f"{NAMES[other - 1]} played out of turn")
        page.wait_for_selector('.toast[data-code="out-of-turn"]', state="detached")


@browser_test
def test_winner_banner_and_final_scores_on_overlay_and_spectator(
    new_page: Any, tmp_path: Path
) -> None:
    feed = SimulatedFeed(GAME, players=3, seed=SEED, seconds_per_move=0.0, loop=False)
    with serving(settings_for(tmp_path, feed=feed)) as base:
        view = wait_until(
            lambda: (v := call(base, "GET", "/api/state"))["over"] and v, "the simulated game to end"
        )
        assert view["winner"] is not None, "this seed must end with a winner"
        winner = NAMES[view["winner"] - 1]

        page = new_page()
        page.goto(f"{base}/overlay")
        banner = page.wait_for_selector("#banner:not([hidden])")
        assert banner.inner_text().strip() == f"{winner} wins!"
        wait_seq(page, view["seq"])
        assert scores_shown(page, "#players .player") == api_scores(view)
        assert page.query_selector("#players .player.winner").get_attribute("data-player") == (
            str(view["winner"])
        )
        shot(page, "overlay-winner.png", omit_background=True)

        spectator = new_page(1600, 1000)
        spectator.goto(f"{base}/spectator")
        spectator.wait_for_selector("#winner:not([hidden])")
        wait_seq(spectator, view["seq"])
        assert scores_shown(spectator, "#scores .score-card") == api_scores(view)
        assert winner in spectator.inner_text("#winner")
        logged = [int(li.get_attribute("data-seq")) for li in spectator.query_selector_all("#log li")]
        assert logged == sorted((m["seq"] for m in view["moves"]), reverse=True)
        shot(spectator, "spectator.png", full_page=True)

        index = new_page(1280, 720)
        index.goto(f"{base}/?lang=nl")
        index.wait_for_selector('#langs a.current >> text="nl"')
        assert index.get_attribute("#link-spectator", "href") == "/spectator?lang=nl"
        assert index.inner_text("#link-console") == "Bedieningsconsole"


@browser_test
def test_console_undo_insert_and_replace_send_the_token(new_page: Any, tmp_path: Path) -> None:
    table = Table()
    with serving(settings_for(tmp_path, token=TOKEN)) as base:
        first = table.play(base, table.legal(prefer="mine"), TOKEN)["seq"]
        second = table.play(base, table.legal(prefer="mine"), TOKEN)["seq"]

        page = new_page(1600, 1000)
        assert page.goto(f"{base}/console").status == 401
        page.goto(f"{base}/console?token={TOKEN}")
        page.wait_for_selector(f'#moves tr[data-seq="{second}"]')
        page.wait_for_selector("#link.ok")

        page.click(f'#moves tr[data-seq="{second}"] button.undo')
        page.wait_for_selector(f'#moves tr[data-seq="{second}"]', state="detached")
        moves = call(base, "GET", "/api/moves", token=TOKEN)["moves"]
        assert [m["seq"] for m in moves] == [first]

        # Insert a move the camera missed: mine resource pile 4 for player 2.
        page.select_option("#insert-type", "mine")
        page.select_option("#insert-player", "2")
        page.fill('#insert-fields input[name="pile"]', "4")
        page.click('#insert-form button[type="submit"]')
        page.wait_for_selector("#moves tr[data-seq] >> text=Bea mines resource pile 4")
        inserted = call(base, "GET", "/api/moves", token=TOKEN)["moves"][-1]
        assert inserted["move"] == {"player": 2, "move": "mine", "pile": 4}
        assert inserted["source"] == "operator"

        # Replace it: the editor is prefilled with the move; change the pile.
        row = f'#moves tr[data-seq="{inserted["seq"]}"]'
        page.click(f"{row} button.replace")
        pile = page.wait_for_selector('.editor input[name="pile"]')
        assert pile.input_value() == "4"
        pile.fill("5")
        page.click(".editor button.primary")
        page.wait_for_selector(f"{row} >> text=Bea mines resource pile 5")
        replaced = call(base, "GET", "/api/moves", token=TOKEN)["moves"][-1]
        assert (replaced["seq"], replaced["move"]["pile"]) == (inserted["seq"], 5)

        # A move the engine cannot read is refused with the server's own words.
        page.select_option("#insert-type", "mine")
        page.fill('#insert-fields input[name="pile"]', "")
        page.click('#insert-form button[type="submit"]')
        assert "pile" in page.wait_for_selector("#insert-error:not(:empty)").inner_text()

        assert page.inner_text("#camera-none") != ""
        assert page.is_hidden("#camera-img")
        shot(page, "console.png", full_page=True)

        # New game takes two clicks (the first asks), then the console follows the new game.
        before = call(base, "GET", "/api/game")["game_no"]
        page.click("#new-game-form button")
        assert page.inner_text("#new-game-form button").startswith("Start a new game?")
        assert call(base, "GET", "/api/game")["game_no"] == before
        page.click("#new-game-form button")
        page.wait_for_selector("#moves tr:not([data-seq])")
        assert call(base, "GET", "/api/game")["game_no"] == before + 1
        assert call(base, "GET", "/api/moves", token=TOKEN)["moves"] == []


@browser_test
def test_console_candidate_pick_replaces_a_camera_move_in_one_click(
    new_page: Any, tmp_path: Path
) -> None:
    """A move read by the camera with a runner-up face: one click on the runner-up replaces it."""
    table = Table()
    pile = table.ruleset.view(table.state, Audience.OPERATOR)["zones"]["resource-pile-1"]
    right, wrong = pile[1], next(c for c in ("stone-2", "wood-1", "iron-1") if c not in pile[:2])
    app = create_app(settings_for(tmp_path, token=TOKEN))
    with serving(app) as base:
        # As the camera feed submits it: the new pile top was read as `wrong`, `right` second.
        evidence = {
            "frame": 120, "time": 8.0, "score": -0.25, "desync": False,
            "zones": {
                "player-1": [[[pile[0], 0.91]]],
                "resource-pile-1": [[[wrong, 0.55], [right, 0.35], ["resource-back", 0.05]]],
            },
        }
        move = {"player": 1, "move": "mine", "pile": 1, "reveal": {"resource-pile-1": wrong}}
        submitted = app.state.session.submit(move, source="vision", evidence=evidence, frame=120)
        assert {w.code for w in submitted.warnings} == {"desync", "impossible-card"}
        seq = submitted.seq

        overlay = new_page()
        overlay.goto(f"{base}/overlay")
        overlay.wait_for_selector(f'#table .pile[data-zone="resource-pile-1"] .chip[data-card="{wrong}"]')
        console = new_page(1600, 1000)
        console.goto(f"{base}/console?token={TOKEN}")
        row = f'#moves tr[data-seq="{seq}"]'
        picks = console.wait_for_selector(f"{row} .picks")
        cards = [b.get_attribute("data-card") for b in picks.query_selector_all("button.pick")]
        assert cards == [wrong, right], "the card read first, the runner-up second, no card back"
        assert picks.query_selector("button.pick.chosen").get_attribute("data-card") == wrong
        assert console.query_selector(f"{row} .wtext")
        shot(console, "console-candidates.png")

        console.click(f'{row} button.pick[data-card="{right}"]')
        console.wait_for_selector(f'{row} button.pick.chosen[data-card="{right}"]')
        console.wait_for_selector(f"{row} .wtext", state="detached")  # the desync is gone
        moves = call(base, "GET", "/api/moves", token=TOKEN)["moves"]
        assert [(m["seq"], m["move"]["reveal"], m["replaced"]) for m in moves] == [
            (seq, {"resource-pile-1": right}, True),
        ]
        view = call(base, "GET", "/api/state")
        assert view["tops"]["resource-pile-1"] == right and view["warnings"] == []
        overlay.wait_for_selector(f'#table .pile[data-zone="resource-pile-1"] .chip[data-card="{right}"]')
        journal = call(base, "GET", "/api/journal", token=TOKEN)["entries"]
        assert [e["kind"] for e in journal] == ["move", "replace"]

        # The editor offers the same alternatives for the field that names the card.
        console.click(f"{row} button.replace")
        console.click(f'.editor button.candidate[data-card="{wrong}"]')
        assert console.input_value('.editor input[name="reveal"]') == f"resource-pile-1={wrong}"


@browser_test
def test_persian_pages_are_laid_out_right_to_left(new_page: Any, tmp_path: Path) -> None:
    table = Table()
    with serving(settings_for(tmp_path)) as base:
        for _ in range(6):
            table.play(base, table.legal())
        page = new_page()
        page.goto(f"{base}/overlay?lang=fa&toast=60")
        page.wait_for_selector("#players .player >> nth=2")
        assert page.evaluate("[document.documentElement.dir, document.documentElement.lang]") == [
            "rtl", "fa",
        ]
        assert page.evaluate("getComputedStyle(document.body).direction") == "rtl"
        players = page.query_selector("#players").bounding_box()
        table_box = page.query_selector("#table").bounding_box()
        assert players["x"] > 960, "the player panels move to the right in Persian"
        assert table_box["x"] < players["x"]
        assert "ذخیره" in page.inner_text("#players")

        illegal = table.raising("out-of-turn")
        other = illegal["player"]
        table.play(base, illegal)
        toast = page.wait_for_selector('.toast[data-code="out-of-turn"]')
        assert toast.inner_text().split("\n")[0] == f"\u2068{NAMES[other - 1]}\u2069 خارج از نوبت بازی کرد"
        toast_box = toast.bounding_box()
        assert toast_box["x"] < 960, "toasts move to the left in Persian"
        shot(page, "overlay-fa.png", omit_background=True)

        console = new_page(1600, 1000)
        console.goto(f"{base}/console?lang=fa")
        console.wait_for_selector("#moves tr[data-seq]")
        assert console.evaluate("document.documentElement.dir") == "rtl"
        columns = [el.bounding_box()["x"] for el in console.query_selector_all("main > div")]
        assert columns[0] > columns[1], "the console's first column is on the right in Persian"
        shot(console, "console-fa.png", full_page=True)

        spectator = new_page(1600, 1000)
        spectator.goto(f"{base}/spectator?lang=fa")
        spectator.wait_for_selector("#log li[data-seq]")
        shot(spectator, "spectator-fa.png")


# -- translations (no browser) --------------------------------------------------------------------


def placeholders(text: str) -> set[str]:
    return set(re.findall(r"\{(\w+)\}", text))


@pytest.mark.parametrize("lang", ["fr", "fa", "pl", "nl"])
def test_each_language_translates_every_english_key(lang: str) -> None:
    english = json.loads((I18N / "en.json").read_text(encoding="utf-8"))
    other = json.loads((I18N / f"{lang}.json").read_text(encoding="utf-8"))
    missing = sorted(set(english) - set(other))
    assert not missing, f"{lang}.json lacks {missing}"
    for key, text in english.items():
        assert placeholders(other[key]) == placeholders(text), f"{lang}.json {key}: placeholders"
    assert other["lang"] == lang
    assert other["dir"] == ("rtl" if lang == "fa" else "ltr")
    untranslated = [k for k, v in english.items() if other[k] == v and len(v) > 12 and "{" not in v]
    assert not untranslated, f"{lang}.json keeps English for {untranslated}"


@pytest.mark.parametrize("lang", ["en", "fr", "fa", "pl", "nl"])
def test_every_warning_code_of_every_game_has_plain_words(lang: str) -> None:
    texts = json.loads((I18N / f"{lang}.json").read_text(encoding="utf-8"))
    for gid in game_ids():
        module = sys.modules[type(get_game(gid)).__module__]
        for code in getattr(module, "RULES", {}):
            assert f"warning.{code}" in texts, f"{lang}.json: no words for {gid} warning {code}"
