"""The bundled clips: small enough to ship, readable, and true to the games they film."""

from __future__ import annotations

from pathlib import Path

import cv2
import pytest
import yaml

from engine import get_game
from engine.scenario import parse_scenario, run_scenario
from vision.synth.truth import load_truth

ROOT = Path(__file__).resolve().parents[2] / "datasets" / "footage"
CLIPS = sorted(p for p in ROOT.iterdir() if (p / "truth.json.gz").exists())


def test_at_least_two_clips_ship_under_ten_megabytes_together() -> None:
    assert len(CLIPS) >= 2
    total = sum(f.stat().st_size for clip in CLIPS for f in clip.iterdir())
    assert total < 10_000_000, f"bundled footage takes {total / 1e6:.1f} MB"


@pytest.mark.parametrize("clip", CLIPS, ids=lambda p: p.name)
def test_clip_truth_matches_its_script_and_the_video(clip: Path) -> None:
    truth = load_truth(clip / "truth.json.gz")
    script = yaml.safe_load((ROOT / "scripts" / f"{clip.name}.yaml").read_text())
    scenario = parse_scenario(script, clip.name)
    result = run_scenario(scenario)
    assert result.ok, result.mismatches
    ruleset = get_game(scenario.game)
    # The moves filmed are the script's moves, in order, each completing after the previous.
    assert [ruleset.parse_move(m.move) for m in truth.moves] == [
        ruleset.parse_move(m) for m in scenario.moves
    ]
    frames = [m.frame for m in truth.moves]
    assert frames == sorted(frames)
    # The final state in the truth is the engine's, with the script's winner.
    assert truth.final_state is not None
    assert truth.final_state["scores"] == list(ruleset.scores(result.final))
    assert truth.final_state["winner"] == scenario.expect["winner"]
    # Every frame of the video is annotated, at the stated size.
    video = cv2.VideoCapture(str(clip / "clip.mp4"))
    count = 0
    ok, image = video.read()
    assert ok, "the clip cannot be decoded"
    assert (image.shape[1], image.shape[0]) == tuple(truth.clip.frame_size)
    while ok:
        count += 1
        ok, _ = video.read()
    assert count == len(truth.frames)
