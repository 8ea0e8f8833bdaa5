"""The pages fed by the bundled footage, as a viewer sees them in Debian's headless Chromium.

Two real servers (uvicorn in a thread each) have the camera feed (`VisionFeed`) read
`datasets/footage/mattel-2p-tnt-endgame/clip.mp4` at full speed (a file is read frame by frame,
not at its frame rate), with the clip's calibration (`profile_from_truth`) and opening deal
(`setup_from_truth`), to the end of the clip:

- one through the shipped models. They do not read this clip accurately yet (move precision and
  recall about 0.3), so its checks are on consistency: the scores, moves and warnings the
  overlay, spectator and console show (in English and in Persian) are those of the API, the
  camera picture is shown with the calibration's zones drawn over it, and the operator can
  calibrate again by clicking the four table corners on that picture;
- one through `TruthOracleFinder` / `TruthOracleIdentifier`: the same pipeline with the models
  replaced by stand-ins that answer from the clip's truth file (test doubles, never for play).
  Its reading is deterministic, so the overlay must show the truth's final scores and winner.

Screenshots are saved as `tests/server/screenshots/footage-*.png`.
"""

from __future__ import annotations

import json
import re
import threading
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from browser_helpers import CHROMIUM, shot
from fastapi import FastAPI

from engine import get_game
from server.app import create_app
from server.settings import ServerSettings
from server.vision_feed import VisionFeed
from vision.pipeline import (
    Pipeline,
    PipelineConfig,
    TruthOracleFinder,
    TruthOracleIdentifier,
    profile_from_truth,
    setup_from_truth,
)
from vision.synth.truth import Truth, load_truth

REPO = Path(__file__).resolve().parents[2]
CLIP = REPO / "datasets" / "footage" / "mattel-2p-tnt-endgame"
NAMES = ("Alex", "Bea")
TOKEN = "footage-token-42"
I18N = REPO / "server" / "i18n"
RUN_TIMEOUT_S = 180.0

pytestmark = [
    pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium at /usr/bin/chromium"),
    pytest.mark.skipif(not (CLIP / "clip.mp4").is_file() or not (CLIP / "truth.json.gz").is_file(),
                       reason=f"the bundled footage {CLIP.name} is not rendered"),
]


# -- servers reading the clip ------------------------------------------------------------------------


@contextmanager
def serving(app: FastAPI) -> Iterator[str]:
    """Run `app` under uvicorn in a thread on a free port; yields its base URL."""
    import uvicorn

    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning"))
    thread = threading.Thread(target=server.run, name="footage-server", daemon=True)
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
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(base + path, data=data, method=method)
    request.add_header("Accept", "application/json")
    if data is not None:
        request.add_header("Content-Type", "application/json")
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.loads(response.read() or b"null")


class Footage:
    """A server whose camera feed reads the clip; `finish()` starts the feed if it has not run
    and waits until the clip has been read to its end."""

    def __init__(self, app: FastAPI, base: str) -> None:
        self.app, self.base = app, base

    def finish(self) -> None:
        runner = self.app.state.runner
        if not runner.finished.is_set() and not runner.running:
            runner.start()
        assert runner.finished.wait(RUN_TIMEOUT_S), "the clip was not read to its end in time"


@pytest.fixture(scope="module")
def truth() -> Truth:
    return load_truth(CLIP / "truth.json.gz")


def clip_app(truth: Truth, folder: Path, *, oracle: bool, autostart: bool) -> FastAPI:
    game, players = truth.clip.game, truth.clip.players
    assert game is not None and players is not None
    setup = setup_from_truth(truth, get_game(game))
    config = PipelineConfig.for_game(game, fps=truth.clip.fps, camera_check=False)
    common: dict[str, Any] = {"game": game, "players": players, "profile": profile_from_truth(truth),
                              "setup": setup}
    if oracle:
        pipeline = Pipeline(config, finder=TruthOracleFinder(truth),
                            identifier=TruthOracleIdentifier(truth), **common)
    else:
        pipeline = Pipeline.from_models(config, **common)
    feed = VisionFeed(pipeline, str(CLIP / "clip.mp4"), setup=setup)
    return create_app(ServerSettings(
        game=game, players=players, names=NAMES, journal_path=folder / "game.sqlite",
        calibration_path=folder / "table.json", feed=feed, token=TOKEN,
        feed_autostart=autostart,
    ))


@pytest.fixture(scope="module")
def models(truth: Truth, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Footage]:
    """The shipped models read the clip; the feed starts at once and runs beside other tests."""
    app = clip_app(truth, tmp_path_factory.mktemp("models"), oracle=False, autostart=True)
    with serving(app) as base:
        yield Footage(app, base)


@pytest.fixture(scope="module")
def oracle(truth: Truth, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Footage]:
    """The truth stand-ins read the clip; the feed waits for `finish()` (pages open first)."""
    app = clip_app(truth, tmp_path_factory.mktemp("oracle"), oracle=True, autostart=False)
    with serving(app) as base:
        yield Footage(app, base)


# -- the browser ---------------------------------------------------------------------------------------


def wait_seq(page: Any, seq: int) -> None:
    page.wait_for_selector(f'body[data-seq="{seq}"]', state="attached")


def scores_shown(page: Any, selector: str, score: str = ".player-score, .score") -> dict[int, int]:
    out = {}
    for el in page.query_selector_all(selector):
        text = el.query_selector(score).inner_text()
        out[int(el.get_attribute("data-player"))] = int(re.match(r"\s*(\d+)", text).group(1))  # type: ignore[union-attr]
    return out


def api_scores(view: dict[str, Any]) -> dict[int, int]:
    return {p["n"]: p["score"] for p in view["players"]}


def texts(lang: str) -> dict[str, str]:
    english = json.loads((I18N / "en.json").read_text(encoding="utf-8"))
    return {**english, **json.loads((I18N / f"{lang}.json").read_text(encoding="utf-8"))}


def plain_words(lang: str, warning: dict[str, Any], names: tuple[str, ...]) -> str:
    """The page's sentence for a warning (`warningText` in app.js, Persian with bidi isolates)."""
    who = [names[n - 1] for n in warning["players"]]
    template = str(texts(lang).get(f"warning.{warning['code']}", warning["message"]))
    iso = (lambda s: f"\u2068{s}\u2069") if lang == "fa" else (lambda s: s)
    return template.replace("{player}", iso(who[0] if who else "")).replace("{players}", iso(", ".join(who)))


# -- tests -----------------------------------------------------------------------------------------------


def test_overlay_fed_by_the_truth_stand_ins_shows_the_truth_final_scores_and_winner(
    models: Footage, oracle: Footage, truth: Truth, new_page: Any
) -> None:
    del models  # started first: the models read the clip meanwhile, for the tests below
    assert truth.final_state is not None
    final = {n: s for n, s in enumerate(truth.final_state["scores"], start=1)}
    pages = {}
    for lang in ("en", "fa"):
        page = new_page()
        page.goto(f"{oracle.base}/overlay?lang={lang}&toast=600")
        page.wait_for_selector("#players .player >> nth=1")
        pages[lang] = page
    oracle.finish()  # the viewers watch the clip being read

    view = call(oracle.base, "GET", "/api/state")
    assert api_scores(view) == final
    assert view["winner"] == truth.final_state["winner"] and view["over"]
    for lang, page in pages.items():
        wait_seq(page, view["seq"])
        assert scores_shown(page, "#players .player") == final
        # Every warning the run raised was toasted live, in plain words, and no other.
        toasts = page.query_selector_all(".toast")
        assert sorted(t.get_attribute("data-code") for t in toasts) == sorted(w["code"] for w in view["warnings"])
        for toast, warning in zip(toasts, view["warnings"], strict=False):
            assert toast.query_selector(".toast-text").inner_text() == plain_words(lang, warning, NAMES)
    winner = NAMES[view["winner"] - 1]
    assert pages["en"].wait_for_selector("#banner:not([hidden])").inner_text().strip() == f"{winner} wins!"
    assert winner in pages["fa"].wait_for_selector("#banner:not([hidden])").inner_text()
    fa = pages["fa"]
    assert fa.evaluate("[document.documentElement.dir, getComputedStyle(document.body).direction]") == ["rtl", "rtl"]
    assert fa.query_selector("#players").bounding_box()["x"] > 960, "player panels on the right in Persian"
    shot(pages["en"], "footage-overlay-truth.png", omit_background=True)
    shot(fa, "footage-overlay-truth-fa.png", omit_background=True)


def test_the_truth_stand_ins_flag_the_third_action_the_clip_shows(
    oracle: Footage, truth: Truth, new_page: Any
) -> None:
    """Player 2 mines a third time before player 1 touches anything: the overlay's feed raises
    too-many-actions (not player 1 giving up a turn unseen), and the console lists it."""
    oracle.finish()
    warnings = call(oracle.base, "GET", "/api/warnings")["warnings"]
    assert [w["code"] for w in warnings] == ["too-many-actions"]
    console = new_page(1600, 1000)
    console.goto(f"{oracle.base}/console?token={TOKEN}")
    item = console.wait_for_selector('#warnings li[data-code="too-many-actions"]')
    assert item.inner_text() == f"#{warnings[0]['seq']} {plain_words('en', warnings[0], NAMES)}"


@pytest.mark.parametrize("lang", ["en", "fa"])
def test_pages_fed_by_the_models_show_what_the_api_says(
    models: Footage, new_page: Any, lang: str
) -> None:
    models.finish()
    view = call(models.base, "GET", "/api/state")
    scores = api_scores(view)
    suffix = "" if lang == "en" else f"-{lang}"

    overlay = new_page()
    overlay.goto(f"{models.base}/overlay?lang={lang}")
    wait_seq(overlay, view["seq"])
    assert scores_shown(overlay, "#players .player") == scores
    shot(overlay, f"footage-overlay{suffix}.png", omit_background=True)

    spectator = new_page(1600, 1000)
    spectator.goto(f"{models.base}/spectator?lang={lang}")
    wait_seq(spectator, view["seq"])
    assert scores_shown(spectator, "#scores .score-card") == scores
    logged = [int(li.get_attribute("data-seq")) for li in spectator.query_selector_all("#log li[data-seq]")]
    assert logged == sorted((m["seq"] for m in view["moves"]), reverse=True)
    shot(spectator, f"footage-spectator{suffix}.png", full_page=True)

    console = new_page(1600, 1000)
    console.goto(f"{models.base}/console?lang={lang}&token={TOKEN}")
    wait_seq(console, view["seq"])
    assert scores_shown(console, "#state-players .cplayer", ".score") == scores
    shown = [(li.get_attribute("data-code"), li.inner_text()) for li in console.query_selector_all("#warnings li[data-code]")]
    operator = call(models.base, "GET", "/api/state?audience=operator", token=TOKEN)
    assert shown == [(w["code"], f"#{w['seq']} {plain_words(lang, w, NAMES)}") for w in reversed(operator["warnings"])]
    # The camera picture with the calibration's zones over it.
    console.wait_for_selector("#camera-img:not([hidden])")
    calibration = call(models.base, "GET", "/api/calibration")
    assert calibration["source"] == "feed" and calibration["camera_size"] == [1280, 720]
    zones = [z["id"] for z in calibration["layout"]["zones"] if z["polygon_px"]]
    console.wait_for_selector("#camera-overlay polygon.zone")
    drawn = [p.get_attribute("data-zone") for p in console.query_selector_all("#camera-overlay polygon.zone")]
    assert drawn == zones and len(zones) >= 10
    shot(console, f"footage-console{suffix}.png", full_page=True)

    if lang == "fa":
        for page in (overlay, spectator, console):
            assert page.evaluate("document.documentElement.dir") == "rtl"
        assert overlay.query_selector("#players").bounding_box()["x"] > 960
        title = spectator.query_selector("#game-name").bounding_box()
        assert title["x"] + title["width"] > 1600 - 80, "the spectator's title starts on the right"
        columns = [el.bounding_box()["x"] for el in console.query_selector_all("main > div")]
        assert columns[0] > columns[1], "the console's first column is on the right in Persian"
        # The picture itself is never mirrored: its zones keep their side.
        assert console.evaluate("getComputedStyle(document.getElementById('camera-frame')).direction") == "ltr"


def test_the_operator_calibrates_by_clicking_the_four_table_corners(
    models: Footage, truth: Truth, new_page: Any
) -> None:
    models.finish()
    reference = profile_from_truth(truth)
    w, h = reference.table_mm
    corners = reference.table_to_image(np.array([[0, 0], [w, 0], [w, h], [0, h]], np.float64))
    console = new_page(1600, 1000)
    console.goto(f"{models.base}/console?token={TOKEN}")
    image = console.wait_for_selector("#camera-img:not([hidden])")
    console.wait_for_selector("#calib-start:not([disabled])")
    console.wait_for_selector("#camera-overlay polygon.zone")

    def click(point: np.ndarray) -> None:
        # A real click at that spot of the picture (scrolled into view first).
        box = image.bounding_box()
        image.click(position={"x": point[0] * box["width"] / 1280, "y": point[1] * box["height"] / 720})

    console.click("#calib-start")
    assert console.is_visible("#calib-panel")
    assert console.query_selector_all("#camera-overlay polygon.zone") == [], "zones hide while clicking"
    assert console.inner_text("#calib-steps li.current") == "top left"
    assert console.inner_text("#calib-next") == "Now click the top left corner"
    assert console.get_attribute("#camera-frame", "data-corner") == "top-left"
    assert console.input_value("#calib-w") == str(round(w))
    click(corners[0])
    click(corners[1])
    assert console.inner_text("#calib-steps li.current") == "bottom right"
    assert len(console.query_selector_all("#camera-overlay circle.corner-point")) == 2
    assert console.is_disabled("#calib-confirm")
    console.click("#calib-redo")  # a slip: start again
    assert console.query_selector_all("#camera-overlay circle.corner-point") == []
    assert console.inner_text("#calib-steps li.current") == "top left"
    for point in corners:
        click(point)
    assert console.query_selector_all("#calib-steps li.current") == []
    assert console.inner_text("#calib-next") == "All four corners are set: confirm, or redo"
    shot(console, "footage-console-corners.png")
    console.click("#calib-confirm")
    console.wait_for_selector("#calib-panel", state="hidden")
    console.wait_for_selector('#calib-info[data-calibrated="true"] >> text=calibrated from clicked corners')

    out = call(models.base, "GET", "/api/calibration")
    assert out["source"] == "corners" and out["saved"] is True
    assert out["profile"]["lens"] is True, "the feed's lens is kept for the same camera"
    assert Path(out["path"]).is_file()
    # Clicked to within a screen pixel: the zones land where the clip's own geometry puts them.
    assert np.abs(np.asarray(out["layout"]["table_px"]) - corners).max() < 3.0
    for zone in out["layout"]["zones"]:
        expected = reference.table_to_image(np.asarray(zone["polygon_mm"]))
        assert np.abs(np.asarray(zone["polygon_px"]) - expected).max() < 3.0, zone["id"]
    drawn = console.query_selector_all("#camera-overlay polygon.zone")
    assert len(drawn) == len(out["layout"]["zones"])
    shot(console, "footage-console-calibrated.png")
