"""The operator's camera view endpoint: 404 until the feed publishes a frame, then the JPEG."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
from fastapi.testclient import TestClient

from server.app import create_app
from server.settings import ServerSettings


def test_camera_view_is_served_once_published_and_needs_the_token(tmp_path: Path) -> None:
    settings = ServerSettings(game="minecraft-card-game", players=2, seed=3,
                              journal_path=tmp_path / "j.sqlite", token="secret-token")
    with TestClient(create_app(settings)) as client:
        auth = {"Authorization": "Bearer secret-token"}
        missing = client.get("/api/camera.jpg", headers=auth)
        assert missing.status_code == 404 and "no camera view yet" in missing.json()["detail"]
        assert client.get("/api/camera.jpg").status_code == 401
        image = np.full((90, 160, 3), 128, np.uint8)
        ok, buf = cv2.imencode(".jpg", image)
        assert ok
        client.app.state.session.publish_camera(bytes(buf))
        got = client.get("/api/camera.jpg", headers=auth)
        assert got.status_code == 200 and got.headers["content-type"] == "image/jpeg"
        decoded = cv2.imdecode(np.frombuffer(got.content, np.uint8), cv2.IMREAD_COLOR)
        assert decoded.shape == (90, 160, 3)


def test_a_camera_that_moved_beyond_refitting_reaches_the_view_model(tmp_path: Path) -> None:
    from types import SimpleNamespace

    from server.session import CameraState
    from server.vision_feed import camera_state

    moved = SimpleNamespace(camera=SimpleNamespace(status=SimpleNamespace(value="camera-moved")))
    steady = SimpleNamespace(camera=SimpleNamespace(status=SimpleNamespace(value="recalibrated")))
    assert camera_state(moved) is CameraState.MOVED  # type: ignore[arg-type]
    assert camera_state(steady) is CameraState.OK  # type: ignore[arg-type]
    settings = ServerSettings(game="minecraft-card-game", players=2, seed=3,
                              journal_path=tmp_path / "j.sqlite")
    with TestClient(create_app(settings)) as client:
        client.app.state.session.report_status(camera=camera_state(moved))  # type: ignore[arg-type]
        state = client.get("/api/state", params={"audience": "public"}).json()
        assert state["status"]["camera"] == "moved"
