"""`cardtrack calibrate` end to end: sheets, table (markers and corners), layout, check,
and malformed input reported as one line with exit code 2."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest
from calibration_helpers import TABLE_MM, max_table_error

from calibration.profile import load_profile
from calibration.sheets import pdf_page_sizes_mm
from calibration.synthetic import hide_markers, render, table_camera
from cardtrack.cli import main


@pytest.fixture(scope="module")
def camera():  # type: ignore[no-untyped-def]
    return table_camera(TABLE_MM, tilt_deg=22.0, azimuth_deg=-12.0, roll_deg=1.5)


def test_markers_and_board(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    assert main(["calibrate", "markers", "--paper", "letter", "--out", str(tmp_path / "m.pdf"), "--dpi", "150"]) == 0
    assert "215.9×279.4 mm" in capsys.readouterr().out
    assert main(["calibrate", "board", "--paper", "a4", "--out", str(tmp_path / "b.pdf"), "--dpi", "150"]) == 0
    (w, h), = pdf_page_sizes_mm(tmp_path / "b.pdf")
    assert abs(w - 210) < 0.5 and abs(h - 297) < 0.5


def test_table_from_a_folder_with_preview(tmp_path: Path, capsys, camera, texture, geometry) -> None:  # type: ignore[no-untyped-def]
    folder = tmp_path / "frames"
    folder.mkdir()
    for k in range(3):
        frame = render(texture, camera, seed=k)
        if k == 1:
            frame = hide_markers(frame, camera, geometry, [2])
        cv2.imwrite(str(folder / f"{k}.png"), frame)
    out = tmp_path / "table.json"
    code = main(["calibrate", "table", "--source", str(folder), "--game", "minecraft-explorers",
                 "--players", "4", "--table-size", "1000x750", "--out", str(out)])
    text = capsys.readouterr().out
    assert code == 0, text
    assert "marker 2 bottom-right: seen in 2 of 3 frame(s)" in text
    profile = load_profile(out)
    assert profile.created is not None and profile.players == 4
    assert max_table_error(profile.image_to_table, camera) < 1.0
    preview = cv2.imread(str(tmp_path / "table.preview.png"))
    assert preview is not None and preview.shape == (720, 1280, 3)
    assert main(["calibrate", "check", str(out)]) == 0
    assert "zones fit the table" in capsys.readouterr().out


def test_table_from_corners(tmp_path: Path, capsys, camera, texture, geometry) -> None:  # type: ignore[no-untyped-def]
    image = tmp_path / "frame.jpg"
    cv2.imwrite(str(image), render(texture, camera, seed=5))
    corners = ",".join(f"{v:.2f}" for v in camera.project(geometry.table_corners()).ravel())
    out = tmp_path / "hand.json"
    assert main(["calibrate", "table", "--source", str(image), "--game", "minecraft-card-game", "--players", "2",
                 "--table-size", "1000x750", "--corners", corners, "--out", str(out),
                 "--preview", str(tmp_path / "p.png")]) == 0
    assert (tmp_path / "p.png").exists()
    profile = load_profile(out)
    assert profile.method == "corners" and max_table_error(profile.image_to_table, camera) < 0.5


def test_layout_prints_plain_data_and_draws(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    png = tmp_path / "layout.png"
    assert main(["calibrate", "layout", "--game", "minecraft-mk1", "--players", "5", "--json", "--out", str(png)]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["players"] == 5 and len(data["seats"]) == 5
    assert {"hotbar-5-3", "effects-weather", "die"} <= {z["id"] for z in data["zones"]}
    image = cv2.imread(str(png))
    assert image is not None and image.shape[1] == 1200 + 100
    assert main(["calibrate", "layout", "--game", "angry-birds-power-cards", "--players", "2"]) == 0
    assert "structure-2" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["calibrate", "check", "missing.json"], "missing.json: file not found"),
        (["calibrate", "layout", "--game", "minecraft-mk1", "--players", "7"], "2–6 players, not 7"),
        (["calibrate", "layout", "--game", "minecraft-card-game", "--players", "4", "--table-size", "600x400"], "larger --table-size"),
        (["calibrate", "layout", "--game", "minecraft-card-game", "--players", "4", "--table-size", "big"], "--table-size 'big'"),
        (["calibrate", "table", "--source", "nowhere", "--game", "minecraft-mk1", "--players", "2"], "nowhere: no such file"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(argv, message: str, capsys, tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.chdir(tmp_path)
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and "\n" not in err and "Traceback" not in err


def test_a_frame_without_markers_says_to_use_corners(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    image = tmp_path / "blank.png"
    cv2.imwrite(str(image), np.full((720, 1280, 3), 100, np.uint8))
    assert main(["calibrate", "table", "--source", str(image), "--game", "minecraft-mk1", "--players", "2",
                 "--out", str(tmp_path / "t.json")]) == 2
    assert "--corners" in capsys.readouterr().err


def test_selftest_reports_figures(capsys) -> None:  # type: ignore[no-untyped-def]
    assert main(["calibrate", "selftest", "--poses", "1", "--max-tilt", "20"]) == 0
    out = capsys.readouterr().out
    assert "all four markers" in out and "one marker hidden" in out and "(4 fits)" in out
