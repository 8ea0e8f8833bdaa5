"""`cardtrack synth scenes`: files, COCO consistency, truth validity, clean errors."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest

from cardtrack.cli import main
from vision.synth import library
from vision.synth.truth import load_truth


def test_scenes_writes_images_coco_and_a_valid_truth(scan_pack: Path, tmp_path: Path) -> None:
    out = tmp_path / "scenes"
    rc = main(["synth", "scenes", "--game", "minecraft-explorers", "--art", str(scan_pack),
               "--count", "3", "--out", str(out), "--seed", "2", "--size", "320x180", "--quiet"])
    assert rc == 0
    truth = load_truth(out / "truth.json")
    assert truth.clip.game == "minecraft-explorers" and truth.clip.frame_size == (320, 180)
    assert [f.index for f in truth.frames] == [0, 1, 2]
    coco = json.loads((out / "annotations.coco.json").read_text())
    assert [c["name"] for c in coco["categories"]] == ["card"]
    assert len(coco["images"]) == 3
    catalog_faces = set(json.loads((scan_pack / "pack.json").read_text())["faces"])
    for frame, image in zip(truth.frames, coco["images"], strict=True):
        assert frame.image == image["file_name"]
        img = cv2.imread(str(out / image["file_name"]))
        assert img is not None and img.shape == (180, 320, 3)
        anns = [a for a in coco["annotations"] if a["image_id"] == image["id"]]
        shown = [c for c in frame.cards if c.visible >= 0.05]
        assert len(anns) <= len(shown)
        for a in anns:
            assert len(a["keypoints"]) == 12 and len(a["segmentation"][0]) == 8
            x, y, w, h = a["bbox"]
            assert x >= 0 and y >= 0 and x + w <= 320 and y + h <= 180
            assert a["attributes"]["face"] in catalog_faces
        for c in frame.cards:
            assert c.face in catalog_faces and c.card is not None


def test_scenes_rejects_bad_input_with_one_line(scan_pack: Path, tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    rc = main(["synth", "scenes", "--game", "minecraft-card-game", "--art", str(scan_pack),
               "--count", "1", "--out", str(tmp_path / "x"), "--quiet"])
    assert rc == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "pack.json" in err and "minecraft-explorers" in err
    rc = main(["synth", "scenes", "--game", "minecraft-explorers", "--art", str(tmp_path / "none"),
               "--count", "1", "--out", str(tmp_path / "y"), "--quiet"])
    assert rc == 2
    assert "none" in capsys.readouterr().err


def test_mixed_library_adds_other_games_and_random_designs(
    scan_pack: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CARDTRACK_CACHE", str(tmp_path / "cache"))
    # One other game keeps the test quick; the real command mixes all four.
    monkeypatch.setattr(library, "GAMES", ("minecraft-explorers", "minecraft-mk1"))
    lib, deck = library.build_library("minecraft-explorers", str(scan_pack), mixed=True, seed=1, designs=12)
    ids = lib.ids()
    assert any(i.startswith("minecraft-mk1:") for i in ids)
    assert any(i.startswith("random-1-") for i in ids)
    own = [c for c in deck.cards if c.card is not None]
    assert own and all(":" not in c.front for c in own)
    assert all(c.card is None for c in deck.cards if c.front.startswith("minecraft-mk1:"))
    rng = np.random.default_rng(0)
    assert {deck.sample(rng).front.split(":")[0] for _ in range(200)} > {"minecraft-mk1"}
