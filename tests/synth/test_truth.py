"""The truth format: schema, round trip, and clear errors (with and without jsonschema)."""

from __future__ import annotations

import builtins
import json
from pathlib import Path
from typing import Any

import pytest

from vision.synth import truth as truth_mod
from vision.synth.errors import TruthError
from vision.synth.truth import (
    CameraTruth,
    CardTruth,
    Checkpoint,
    ClipInfo,
    FrameTruth,
    LensTruth,
    MarkerTruth,
    MediaRef,
    MoveTruth,
    Truth,
    ZoneCard,
    load_truth,
    write_truth,
)


def _sample() -> Truth:
    cam = CameraTruth(homography=((1.5, 0.0, 10.0), (0.0, 1.5, 20.0), (0.0, 0.0, 1.0)),
                      lens=LensTruth(fx=900.0, fy=900.0, cx=640.0, cy=360.0, k1=-0.125, k2=0.0625))
    card = CardTruth(face="wood-2", corners=((1.0, 2.0), (3.5, 2.0), (3.5, 7.25), (1.0, 7.25)),
                     visible=0.75, corner_visible=(True, True, False, True), zone="player-1",
                     track=3, card="wood-2")
    frames = (
        FrameTruth(index=0, time_s=0.0, camera=cam, cards=(card,),
                   markers=(MarkerTruth(id=0, corners=((0, 0), (1, 0), (1, 1), (0, 1))),), hands=0),
        FrameTruth(index=1, time_s=1 / 32),
        FrameTruth(index=5, time_s=5 / 32, cards=(card,), hands=1),
    )
    return Truth(
        clip=ClipInfo(game="minecraft-card-game", players=2, fps=32.0, frame_size=(1280, 720),
                      source="synthetic", media=MediaRef(kind="video", path="clip.mp4"),
                      generator="test", seed=4, art=("proxy",)),
        frames=frames,
        checkpoints=(Checkpoint(frame=1, zones={"player-1": (ZoneCard(face="wood-2", card="wood-2", track=3),),
                                                "discard": ()}),),
        moves=(MoveTruth(frame=5, move={"player": 1, "move": "mine", "pile": 3}),),
        final_state={"winner": None},
    )


@pytest.fixture(params=["jsonschema", "builtin"])
def validator(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Run a test with jsonschema, then with the built-in structural validator."""
    if request.param == "builtin":
        real_import = builtins.__import__

        def no_jsonschema(name: str, *args: Any, **kwargs: Any) -> Any:
            if name == "jsonschema" or name.startswith("jsonschema."):
                raise ImportError(name)
            return real_import(name, *args, **kwargs)

        monkeypatch.setattr(builtins, "__import__", no_jsonschema)
    return str(request.param)


def test_the_schema_is_valid_draft_2020_12() -> None:
    jsonschema = pytest.importorskip("jsonschema")
    jsonschema.Draft202012Validator.check_schema(truth_mod.load_schema())


def test_round_trip(tmp_path: Path, validator: str) -> None:
    t = _sample()
    path = write_truth(t, tmp_path / "truth.json")
    assert load_truth(path) == t
    data = json.loads(path.read_text())
    assert data["truth_version"] == 1
    assert data["frames"][1]["cards"] == []


def _broken(tmp_path: Path, edit) -> Path:  # type: ignore[no-untyped-def]
    data = json.loads(truth_mod.dumps_truth(_sample()))
    edit(data)
    path = tmp_path / "broken.json"
    path.write_text(json.dumps(data))
    return path


CASES = {
    "three corners": (lambda d: d["frames"][0]["cards"][0]["corners"].pop(), "$.frames[0].cards[0].corners"),
    "visible above 1": (lambda d: d["frames"][2]["cards"][0].update(visible=1.5), "$.frames[2].cards[0].visible"),
    "unknown field": (lambda d: d["frames"][0]["cards"][0].update(colour="red"), "$.frames[0].cards[0]"),
    "no clip": (lambda d: d.pop("clip"), "$"),
    "wrong version": (lambda d: d.update(truth_version=2), "$.truth_version"),
    "bad source": (lambda d: d["clip"].update(source="drawn"), "$.clip.source"),
    "lens without k2": (lambda d: d["frames"][0]["camera"]["lens"].pop("k2"), "$.frames[0].camera.lens"),
    "frames out of order": (lambda d: d["frames"][2].update(index=1), "$.frames[2].index"),
    "move after the end": (lambda d: d["moves"][0].update(frame=99), "$.moves[0].frame"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_errors_name_file_path_and_reason(tmp_path: Path, validator: str, case: str) -> None:
    edit, where = CASES[case]
    path = _broken(tmp_path, edit)
    with pytest.raises(TruthError) as info:
        load_truth(path)
    msg = str(info.value)
    assert msg.startswith(f"{path}: at {where}:"), msg
    assert len(msg) > len(f"{path}: at {where}: ") + 5


def test_unreadable_and_malformed_files(tmp_path: Path) -> None:
    with pytest.raises(TruthError, match="cannot read truth file"):
        load_truth(tmp_path / "missing.json")
    bad = tmp_path / "bad.json"
    bad.write_text('{"truth_version": 1,\n "clip": }')
    with pytest.raises(TruthError, match=r"bad.json: not valid JSON at line 2"):
        load_truth(bad)


def test_write_refuses_an_invalid_truth(tmp_path: Path) -> None:
    t = _sample()
    broken = Truth(clip=t.clip, frames=(t.frames[1], t.frames[0]))
    with pytest.raises(TruthError, match=r"\$\.frames\[1\]\.index"):
        write_truth(broken, tmp_path / "t.json")
    assert not (tmp_path / "t.json").exists()


def test_the_readme_example_is_a_valid_truth_file(tmp_path: Path) -> None:
    readme = truth_mod.SCHEMA_PATH.parent / "README.md"
    text = readme.read_text(encoding="utf-8")
    example = text.split("```json", 1)[1].split("```", 1)[0]
    path = tmp_path / "example.json"
    path.write_text(example, encoding="utf-8")
    t = load_truth(path)
    assert t.frames[0].cards[0].face == "iron-3"


@pytest.mark.parametrize("bad_frame", [3, 4])
def test_long_clips_are_checked_frame_by_frame_with_true_paths(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, bad_frame: int
) -> None:
    monkeypatch.setattr(truth_mod, "JSONSCHEMA_FRAMES", 2)
    t = _sample()
    frames = tuple(FrameTruth(index=i, cards=t.frames[0].cards) for i in range(6))
    data = json.loads(truth_mod.dumps_truth(Truth(clip=t.clip, frames=frames)))
    data["frames"][bad_frame]["cards"][0]["visible"] = -1
    path = tmp_path / "long.json"
    path.write_text(json.dumps(data))
    with pytest.raises(TruthError, match=rf"at \$\.frames\[{bad_frame}\]\.cards\[0\]\.visible"):
        load_truth(path)
