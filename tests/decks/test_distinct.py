"""Distinctness check: the documented measure, duplicated and turned faces, the real Explorers
scans and the built-in proxy packs.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import cv2
import numpy as np
import pytest

from engine.catalog import load_catalog
from vision.art.distinct import (
    DEFAULT_MARGIN,
    DistinctConfig,
    check_distinct,
    descriptor,
)

REPO = Path(__file__).resolve().parents[2]
SCANS = REPO.parent / "shared" / "decks" / "explorers-scans"
GAMES = ("minecraft-card-game", "minecraft-explorers", "minecraft-mk1", "angry-birds-power-cards")


def random_faces(n: int, seed: int = 5) -> dict[str, np.ndarray]:
    """Distinct synthetic faces: coloured blocks on random backgrounds, none symmetric."""
    rng = np.random.default_rng(seed)
    faces = {}
    for i in range(n):
        image = np.full((182, 118, 3), rng.integers(0, 256, 3), np.uint8)
        for _ in range(4):
            x, y = rng.integers(0, 90), rng.integers(0, 150)
            colour = tuple(int(c) for c in rng.integers(0, 256, 3))
            cv2.rectangle(image, (int(x), int(y)), (int(x) + 30, int(y) + 30), colour, -1)
        cv2.rectangle(image, (0, 0), (117, 25), (255, 255, 255), -1)  # a header: not symmetric
        faces[f"face-{i}"] = image
    return faces


def test_distinct_faces_pass() -> None:
    report = check_distinct(random_faces(8), top=5)
    assert report.ok and report.failing == ()
    assert len(report.closest) == 5
    distances = [p.distance for p in report.closest]
    assert distances == sorted(distances) and distances[0] >= DEFAULT_MARGIN
    assert report.turn_symmetric == ()


def test_duplicated_face_fails() -> None:
    faces = random_faces(6)
    faces["copy"] = faces["face-2"].copy()
    report = check_distinct(faces)
    assert not report.ok
    (pair,) = report.failing
    assert {pair.a, pair.b} == {"face-2", "copy"}
    assert pair.distance == pytest.approx(0.0, abs=1e-4)
    assert report.closest[0] == pair


def test_a_face_equal_to_another_turned_fails_as_turned() -> None:
    faces = random_faces(4)
    faces["turned"] = np.ascontiguousarray(faces["face-1"][::-1, ::-1])
    report = check_distinct(faces)
    (pair,) = report.failing
    assert {pair.a, pair.b} == {"face-1", "turned"} and pair.turned


def test_small_mark_keeps_faces_apart() -> None:
    # Alike but for one badge in a corner, as the Explorers "reveal a mob" items are.
    faces = random_faces(1)
    marked = faces["face-0"].copy()
    cv2.rectangle(marked, (5, 30), (25, 50), (0, 0, 255), -1)
    report = check_distinct({"plain": faces["face-0"], "marked": marked})
    assert report.ok
    assert report.closest[0].mean < DEFAULT_MARGIN < report.closest[0].peak


def test_turn_symmetric_face_is_reported() -> None:
    symmetric = np.full((182, 118, 3), 90, np.uint8)
    cv2.rectangle(symmetric, (30, 50), (87, 131), (0, 200, 255), -1)  # centred exactly
    report = check_distinct({"disc": symmetric, **random_faces(2)})
    assert [p.a for p in report.turn_symmetric] == ["disc"]
    assert report.ok  # informative, not a failure


def test_landscape_face_is_compared_in_portrait() -> None:
    face = random_faces(1)["face-0"]
    lying = cv2.rotate(face, cv2.ROTATE_90_COUNTERCLOCKWISE)
    assert np.allclose(descriptor(face), descriptor(lying), atol=1e-3)
    assert descriptor(face).shape == (24, 16, 3)


def test_grid_must_divide_thumbnail() -> None:
    with pytest.raises(ValueError, match="does not divide"):
        descriptor(random_faces(1)["face-0"], DistinctConfig(grid=(7, 12)))


@pytest.mark.skipif(not SCANS.is_dir(), reason="Explorers scans not next to repo")
def test_real_explorers_faces_are_distinct() -> None:
    images = {p.stem: cv2.imread(str(p)) for p in sorted(SCANS.rglob("*.jpg"))}
    report = check_distinct(images)
    assert report.ok, report.failing
    assert report.faces == 85
    # The "reveal a mob" variants differ from their plain item by the corner badge only.
    badge = check_distinct({k: images[k] for k in ("item_emerald", "item_emerald_mob")})
    assert badge.ok


@pytest.mark.parametrize("game", GAMES)
def test_proxy_faces_are_distinct(game: str) -> None:
    proxy = pytest.importorskip("vision.art.proxy")
    catalog = load_catalog(game)
    images = {face: proxy.render_face(catalog, face, dpi=60) for face in catalog.faces}
    report = check_distinct(images)
    assert report.ok, [(p.a, p.b, round(p.distance, 1)) for p in report.failing]


def test_check_command_passes_a_proxy_pack_and_fails_a_duplicated_face(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from cardtrack.cli import main
    from vision.art.pack import load_pack, render_proxy_pack

    pack = render_proxy_pack("minecraft-mk1", tmp_path / "pack", dpi=60)
    assert main(["deck", "check", str(pack.root), "--top", "3", "-q"]) == 0
    out = capsys.readouterr().out
    assert "closest pairs" in out and "ok: every pair" in out
    assert len([line for line in out.splitlines() if " ~ " in line]) == 3

    # The same picture listed for two faces: the check must fail and name the pair.
    shutil.copyfile(pack.path("wood"), pack.path("stone"))
    assert load_pack(pack.root).faces["stone"] != load_pack(pack.root).faces["wood"]
    assert main(["deck", "check", str(pack.root), "-q"]) == 1
    out = capsys.readouterr().out
    assert "FAIL: 1 pairs closer than the margin 10" in out
    assert "stone ~ wood" in out or "wood ~ stone" in out


def test_check_command_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from cardtrack.cli import main

    assert main(["deck", "check", str(tmp_path / "absent"), "-q"]) == 2
    assert "not a folder" in capsys.readouterr().err
    assert main(["deck", "check", "proxy", "-q"]) == 2
    assert "needs --game" in capsys.readouterr().err
