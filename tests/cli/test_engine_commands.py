"""The engine's commands as a user runs them: simulate, rules check, bench, demo."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cardtrack.cli import main


def test_simulate_prints_statistics_and_writes_a_scenario_that_checks_green(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "game.yaml"
    assert main(["simulate", "--players", "3", "--games", "20", "--seed", "1",
                 "--write-scenario", str(out)]) == 0
    text = capsys.readouterr().out
    stats = json.loads(text[: text.rindex("}") + 1])
    assert stats["games"] == 20
    assert stats["finished"] == 20
    assert sum(stats["wins_by_seat"].values()) == 20
    assert stats["warnings_in_legal_play"] == 0
    assert main(["rules", "check", str(out)]) == 0


def test_bench_engine_reports_applies_per_second(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "engine", "--games", "3"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["applies"] > 0
    assert report["applies_per_second"] > 0


def test_demo_narrates_a_whole_game_with_a_warning(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo", "--narrate", "--players", "3", "--seed", "7"]) == 0
    out = capsys.readouterr().out
    assert "WARNING too-many-actions" in out
    assert "winner: player" in out


def test_bad_option_is_one_clear_error_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["simulate", "--games", "1", "--option", "setup=sideways"]) == 2
    err = capsys.readouterr().err
    assert "choose one of" in err and "Traceback" not in err
