"""Calibration over REST: the active table profile, an uploaded profile, four clicked corners.

The app runs in-process (`TestClient`). The camera feed tests drive a real `Pipeline` (its
finder and identifier replaced by stubs that see no card) over a folder of blank frames, so
what is checked is the hand-over: a profile set from another thread is applied between two
frames, and the zones follow it.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest
from fastapi.testclient import TestClient

from calibration.homography import TableGeometry
from calibration.profile import TableProfile, load_profile, save_profile
from calibration.table import calibrate_from_corners
from server.app import create_app
from server.settings import ServerSettings
from server.vision_feed import VisionFeed
from vision.detections import Detections
from vision.identify import FaceCandidate
from vision.pipeline import Pipeline, PipelineConfig, PipelineStep

GAME = "minecraft-card-game"
TOKEN = "calib-token-123"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
SIZE = (1280, 720)
CORNERS = [[349.0, 200.0], [957.0, 98.0], [1085.0, 595.0], [281.0, 656.0]]
OTHER_CORNERS = [[300.0, 150.0], [1000.0, 140.0], [1050.0, 620.0], [250.0, 640.0]]


def corner_profile(corners: Sequence[Sequence[float]], *, table_mm: tuple[float, float] = (900.0, 650.0),
                   game: str = GAME, players: int = 2) -> TableProfile:
    return calibrate_from_corners(
        np.asarray(corners, np.float64), image_size=SIZE, game=game, players=players,
        geometry=TableGeometry(table_mm=table_mm), created="2025-01-01T00:00:00+00:00",
    )


@pytest.fixture
def client(tmp_path: Path) -> Iterator[TestClient]:
    settings = ServerSettings(game=GAME, players=2, seed=3, journal_path=tmp_path / "j.sqlite",
                              calibration_path=tmp_path / "table.json", token=TOKEN)
    with TestClient(create_app(settings)) as c:
        yield c


def test_without_a_profile_the_zones_are_given_in_table_millimetres_only(client: TestClient) -> None:
    out = client.get("/api/calibration").json()
    assert out["calibrated"] is False and out["source"] == "none" and out["profile"] is None
    assert out["corner_order"] == ["top-left", "top-right", "bottom-right", "bottom-left"]
    layout = out["layout"]
    assert layout["table_mm"] == [900.0, 650.0] and layout["table_px"] is None
    zones = {z["id"]: z for z in layout["zones"]}
    assert "resource-pile-1" in zones and "player-2" in zones
    assert all(z["polygon_px"] is None and len(z["polygon_mm"]) >= 3 for z in zones.values())


def test_four_clicked_corners_give_a_saved_profile_and_zones_in_camera_pixels(
    client: TestClient, tmp_path: Path
) -> None:
    body = {"corners": CORNERS, "image_size": list(SIZE)}
    assert client.post("/api/calibration/corners", json=body).status_code == 401
    r = client.post("/api/calibration/corners", json=body, headers=AUTH)
    assert r.status_code == 200, r.text
    out = r.json()
    assert out["calibrated"] and out["source"] == "corners" and out["saved"] is True
    assert out["profile"]["method"] == "corners" and out["profile"]["image_size"] == list(SIZE)
    assert out["profile"]["created"] and out["fit_error"]["max_px"] < 0.01
    # The homography sends each clicked corner to its table corner.
    saved = load_profile(tmp_path / "table.json")
    table = saved.image_to_table(np.asarray(CORNERS))
    assert np.allclose(table, [[0, 0], [900, 0], [900, 650], [0, 650]], atol=1e-6)
    assert np.allclose(saved.homography, out["profile"]["homography"], rtol=1e-9)
    # Zones: the same polygons, now also in pixels inside the clicked outline.
    again = client.get("/api/calibration").json()
    assert again["profile"] == out["profile"]
    assert np.allclose(again["layout"]["table_px"], CORNERS, atol=0.1)
    outline = np.asarray(CORNERS, np.float32)
    for zone in again["layout"]["zones"]:
        px = np.asarray(zone["polygon_px"])
        expected = saved.table_to_image(np.asarray(zone["polygon_mm"]))
        assert np.allclose(px, expected, atol=0.06)
        centre = px.mean(axis=0)
        assert cv2.pointPolygonTest(outline, (float(centre[0]), float(centre[1])), False) > 0, zone["id"]


def test_the_table_size_is_taken_from_the_request_and_kept_for_the_next_fit(client: TestClient) -> None:
    r = client.post("/api/calibration/corners", headers=AUTH,
                    json={"corners": CORNERS, "image_size": list(SIZE), "table_mm": [1000, 750]})
    assert r.status_code == 200, r.text
    assert r.json()["profile"]["table_mm"] == [1000.0, 750.0]
    assert r.json()["layout"]["table_mm"] == [1000.0, 750.0]
    # No size and no image size: both come from the active profile.
    r = client.post("/api/calibration/corners", headers=AUTH, json={"corners": OTHER_CORNERS})
    assert r.status_code == 200, r.text
    assert r.json()["profile"]["table_mm"] == [1000.0, 750.0]
    assert r.json()["profile"]["image_size"] == list(SIZE)


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"corners": [CORNERS[0], CORNERS[3], CORNERS[2], CORNERS[1]], "image_size": [1280, 720]},
         "anticlockwise"),
        ({"corners": [CORNERS[0], CORNERS[2], CORNERS[1], CORNERS[3]], "image_size": [1280, 720]},
         "do not outline"),
        ({"corners": CORNERS}, "image_size"),
        ({"corners": CORNERS, "image_size": [1280, 720], "table_mm": [100, 80]}, "table_mm"),
        ({"corners": CORNERS[:3], "image_size": [1280, 720]}, "corners"),
        ({"corners": [[1e5, 0], [1e5, 1], [1e5, 2], [1e5, 3]], "image_size": [1280, 720]}, "corners[0]"),
        ({"corners": CORNERS, "image_size": [1280, 720], "colour": "red"}, "colour"),
    ],
)
def test_bad_corners_are_refused_naming_the_field(client: TestClient, body: dict[str, Any], field: str) -> None:
    r = client.post("/api/calibration/corners", json=body, headers=AUTH)
    assert r.status_code == 422, r.text
    assert field in r.json()["detail"]
    assert client.get("/api/calibration").json()["calibrated"] is False


def test_an_uploaded_profile_file_is_checked_saved_and_used(client: TestClient, tmp_path: Path) -> None:
    source = tmp_path / "made-elsewhere.json"
    save_profile(corner_profile(OTHER_CORNERS), source)
    data = json.loads(source.read_text())
    assert client.put("/api/calibration", json=data).status_code == 401
    r = client.put("/api/calibration", json=data, headers=AUTH)
    assert r.status_code == 200, r.text
    assert r.json()["source"] == "upload" and r.json()["saved"] is True
    assert np.allclose(load_profile(tmp_path / "table.json").homography, corner_profile(OTHER_CORNERS).homography)

    def refused(change: dict[str, Any], words: str) -> None:
        r = client.put("/api/calibration", json={**data, **change}, headers=AUTH)
        assert r.status_code == 422, r.text
        assert words in r.json()["detail"], r.json()["detail"]

    refused({"players": 3}, "'players'")
    refused({"game": "minecraft-explorers"}, "'game'")
    refused({"homography": [[0, 0, 0], [0, 0, 0], [0, 0, 1]]}, "'homography'")
    refused({"schema": 7}, "'schema'")
    refused({"table_mm": [200, 150]}, "table_mm")
    refused({"homography": [[1, 0], [0, 1]]}, "homography")
    missing = {k: v for k, v in data.items() if k != "image_size"}
    r = client.put("/api/calibration", json=missing, headers=AUTH)
    assert r.status_code == 422 and "image_size" in r.json()["detail"]
    # Nothing refused replaced the uploaded profile.
    assert client.get("/api/calibration").json()["source"] == "upload"


def test_the_server_starts_with_the_calibration_file_when_it_exists(tmp_path: Path) -> None:
    save_profile(corner_profile(CORNERS), tmp_path / "table.json")
    settings = ServerSettings(game=GAME, players=2, seed=3, journal_path=tmp_path / "j.sqlite",
                              calibration_path=tmp_path / "table.json")
    with TestClient(create_app(settings)) as c:
        out = c.get("/api/calibration").json()
    assert out["calibrated"] and out["source"] == "file" and out["saved"]
    assert out["path"] == str(tmp_path / "table.json")
    assert np.allclose(out["layout"]["table_px"], CORNERS, atol=0.1)


def test_serve_refuses_a_calibration_file_of_another_game(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from cardtrack.cli import main

    save_profile(corner_profile(CORNERS, players=2), tmp_path / "table.json")
    code = main(["serve", "--players", "3", "--calibration", str(tmp_path / "table.json"),
                 "--journal", str(tmp_path / "j.sqlite"), "--port", "0"])
    assert code == 2
    assert "'players'" in capsys.readouterr().err


# -- the camera feed takes a new profile between two frames ------------------------------------------


class NoCards:
    """Stub finder and identifier: an empty table."""

    def find(self, image: np.ndarray, *, frame_index: int) -> Detections:
        return Detections.empty()

    def identify(self, crops: Sequence[np.ndarray], *, corners: np.ndarray,
                 frame_index: int) -> list[tuple[FaceCandidate, ...]]:
        return [() for _ in crops]


def blank_frames(folder: Path, n: int) -> Path:
    folder.mkdir()
    for k in range(n):
        cv2.imwrite(str(folder / f"{k:03d}.png"), np.full((SIZE[1], SIZE[0], 3), 90, np.uint8))
    return folder


def camera_feed(tmp_path: Path, frames: int, **kwargs: Any) -> VisionFeed:
    pipeline = Pipeline(
        PipelineConfig.for_game(GAME, camera_check=False), game=GAME, players=2,
        profile=corner_profile(CORNERS), finder=NoCards(), identifier=NoCards(),
    )
    return VisionFeed(pipeline, str(blank_frames(tmp_path / "frames", frames)), **kwargs)


def test_a_profile_set_from_another_thread_is_applied_before_the_next_frame(tmp_path: Path) -> None:
    from server.session import Session

    new = corner_profile(OTHER_CORNERS, table_mm=(1000.0, 750.0))
    seen: list[tuple[int, TableProfile, float]] = []
    feed: VisionFeed

    def listener(step: PipelineStep, results: list[dict[str, Any]]) -> None:
        pipeline = feed.pipeline
        seen.append((step.frame_index, pipeline.profile, pipeline.layout.table_mm[0]))
        if step.frame_index == 1:
            setter = threading.Thread(target=feed.set_profile, args=(new,))
            setter.start()
            setter.join()
            assert feed.profile is new and pipeline.profile is not new  # waiting for frame 2

    feed = camera_feed(tmp_path, 4, step_listener=listener)
    old_zones = {k: v.copy() for k, v in feed.pipeline.zone_polygons.items()}
    session = Session.start(journal_path=tmp_path / "j.sqlite", game=GAME, players=2)
    try:
        feed.run(session, threading.Event())
    finally:
        session.close()
    assert [(i, p is new, w) for i, p, w in seen] == [
        (0, False, 900.0), (1, False, 900.0), (2, True, 1000.0), (3, True, 1000.0),
    ]
    assert feed.frame_size == SIZE
    moved = feed.pipeline.zone_polygons["resource-pile-1"]
    assert not np.allclose(moved, old_zones["resource-pile-1"])
    expected = new.table_to_image(np.asarray(feed.pipeline.layout.zone("resource-pile-1").polygon))
    assert np.allclose(moved, expected, atol=1.0)


def test_corners_posted_to_a_server_with_a_camera_feed_reach_its_pipeline(tmp_path: Path) -> None:
    feed = camera_feed(tmp_path, 3)
    settings = ServerSettings(game=GAME, players=2, journal_path=tmp_path / "j.sqlite", feed=feed,
                              feed_autostart=False)
    app = create_app(settings)
    with TestClient(app) as c:
        out = c.get("/api/calibration").json()
        assert out["source"] == "feed" and out["applied"] is True and out["path"] is None
        assert np.allclose(out["layout"]["table_px"], CORNERS, atol=0.1)
        r = c.post("/api/calibration/corners", json={"corners": OTHER_CORNERS})
        assert r.status_code == 200, r.text
        assert r.json()["source"] == "corners" and r.json()["saved"] is False
        assert feed.profile.image_size == SIZE  # taken from the feed's profile
        c.post("/api/feed/start")
        assert app.state.runner.finished.wait(30)
        assert np.allclose(feed.pipeline.profile.image_to_table(np.asarray(OTHER_CORNERS)),
                           [[0, 0], [900, 0], [900, 650], [0, 650]], atol=1e-6)
        after = c.get("/api/calibration").json()
        assert after["source"] == "corners" and after["camera_size"] == list(SIZE)
