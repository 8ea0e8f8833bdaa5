"""Art packs: save/load round trip, malformed packs with clear errors, the cached proxy pack,
and the `cardtrack deck list|render` commands.
"""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest

import vision.art.pack as pack_module
from cardtrack.cli import main
from engine.catalog import load_catalog
from vision.art.errors import PackError
from vision.art.pack import (
    PACK_FILE,
    ArtPack,
    PackSource,
    default_cache_dir,
    face_file_name,
    load_pack,
    proxy_pack,
    save_pack,
)
from vision.art.proxy import render_face

GAME = "minecraft-card-game"
DPI = 40


def small_images(faces: tuple[str, ...]) -> dict[str, np.ndarray]:
    catalog = load_catalog(GAME)
    return {fid: render_face(catalog, fid, DPI) for fid in faces}


@pytest.fixture
def pack_dir(tmp_path: Path) -> Path:
    save_pack(
        tmp_path / "pack", game=GAME, name="test pack", source="enrolled",
        images=small_images(("wood-1", "wood-hoe/craft", "resource-back")),
        created_from="unit test",
    )  # fmt: skip
    return tmp_path / "pack"


def test_round_trip(pack_dir: Path) -> None:
    pack = load_pack(pack_dir)
    assert isinstance(pack, ArtPack)
    assert pack.game == GAME and pack.name == "test pack" and pack.source is PackSource.ENROLLED
    assert pack.card_size_mm == (63.0, 88.0) and pack.created_from == "unit test"
    assert set(pack.faces) == {"wood-1", "wood-hoe/craft", "resource-back"}
    assert pack.faces["wood-hoe/craft"] == "faces/wood-hoe_craft.png"
    original = small_images(("wood-hoe/craft",))["wood-hoe/craft"]
    assert np.array_equal(pack.image("wood-hoe/craft"), original)  # PNG is lossless
    missing = pack.missing_faces(load_catalog(GAME))
    assert "wood-2" in missing and "wood-1" not in missing
    assert len(missing) == len(load_catalog(GAME).faces) - 3
    manifest = json.loads((pack_dir / PACK_FILE).read_text())
    assert manifest == pack.manifest()
    assert manifest["schema"] == 1 and manifest["source"] == "enrolled"


def test_image_of_a_face_not_in_the_pack(pack_dir: Path) -> None:
    with pytest.raises(PackError, match="no image for face 'wood-2'"):
        load_pack(pack_dir).image("wood-2")


def test_face_file_names_are_portable() -> None:
    assert face_file_name("wood-hoe/craft") == "wood-hoe_craft.png"
    assert face_file_name("landscape.lush_cave") == "landscape.lush_cave.png"


def edit_manifest(pack_dir: Path, **changes: object) -> None:
    path = pack_dir / PACK_FILE
    data = json.loads(path.read_text())
    data.update(changes)
    for key, value in changes.items():
        if value is None:
            del data[key]
    path.write_text(json.dumps(data))


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"schema": 2}, r"field 'schema' must be 1, got 2"),
        ({"game": "chess"}, r"field 'game': no catalog for game 'chess'"),
        ({"game": None}, r"missing field 'game'"),
        ({"source": "scanned"}, r"field 'source' must be one of proxy, enrolled, imported"),
        ({"card_size_mm": [63]}, r"'card_size_mm' must be \[width, height\]"),
        ({"faces": ["wood-1"]}, r"field 'faces' must be an object"),
        ({"faces": {"wood-9": "faces/wood-1.png"}}, r"face 'wood-9': not a face of game"),
        ({"faces": {"wood-1": "faces/nothing.png"}}, r"face 'wood-1': image file .*nothing.png does not exist"),
        ({"faces": {"wood-1": "../outside.png"}}, r"face 'wood-1': image path '../outside.png' must stay inside"),
        ({"name": 5}, r"field 'name' must be the pack's name"),
    ],
)
def test_malformed_manifest(pack_dir: Path, changes: dict, message: str) -> None:
    edit_manifest(pack_dir, **changes)
    with pytest.raises(PackError, match=message) as info:
        load_pack(pack_dir)
    assert str(pack_dir / PACK_FILE) in str(info.value)


def test_undecodable_image_names_file_and_face(pack_dir: Path) -> None:
    (pack_dir / "faces" / "wood-1.png").write_bytes(b"not a png")
    with pytest.raises(PackError, match=r"face 'wood-1'.*wood-1.png is not a readable image"):
        load_pack(pack_dir)
    assert load_pack(pack_dir, check_images=False).faces["wood-1"]  # existence only


def test_missing_or_broken_manifest(tmp_path: Path) -> None:
    with pytest.raises(PackError, match="not a folder"):
        load_pack(tmp_path / "absent")
    with pytest.raises(PackError, match=r"pack.json: missing"):
        load_pack(tmp_path)
    (tmp_path / PACK_FILE).write_text("{ not json")
    with pytest.raises(PackError, match=r"not valid JSON \(line 1 column 3"):
        load_pack(tmp_path)
    (tmp_path / PACK_FILE).write_text("[1, 2]")
    with pytest.raises(PackError, match="must be a JSON object"):
        load_pack(tmp_path)


def test_save_rejects_bad_input(tmp_path: Path) -> None:
    image = small_images(("wood-1",))["wood-1"]
    with pytest.raises(PackError, match="not a face of game"):
        save_pack(tmp_path, game=GAME, name="x", source="proxy", images={"wood-9": image})
    with pytest.raises(PackError, match="source must be one of"):
        save_pack(tmp_path, game=GAME, name="x", source="drawn", images={"wood-1": image})
    with pytest.raises(PackError, match="expected a BGR uint8 image"):
        save_pack(tmp_path, game=GAME, name="x", source="proxy", images={"wood-1": image[:, :, 0]})


def test_proxy_pack_is_rendered_once_and_reused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    real = pack_module.render_face

    def counting(catalog, face_id, dpi):  # type: ignore[no-untyped-def]
        calls.append(face_id)
        return real(catalog, face_id, dpi)

    monkeypatch.setattr(pack_module, "render_face", counting)
    game = "minecraft-mk1"
    faces = load_catalog(game).faces
    first = proxy_pack(game, tmp_path, dpi=DPI)
    assert len(calls) == len(faces) and set(first.faces) == set(faces)
    assert first.source is PackSource.PROXY and first.missing_faces(load_catalog(game)) == ()
    assert first.root.parent == tmp_path and first.root.name.startswith(f"{game}-proxy-")
    again = proxy_pack(game, tmp_path, dpi=DPI)
    assert len(calls) == len(faces) and again.root == first.root  # reused, not redrawn
    other = proxy_pack(game, tmp_path, dpi=DPI + 10)  # another key: drawn afresh
    assert other.root != first.root and len(calls) == 2 * len(faces)
    assert load_pack(first.root).image("wood").shape == render_face(load_catalog(game), "wood", DPI).shape
    # A broken cache entry is replaced.
    (first.root / first.faces["wood"]).unlink()
    repaired = proxy_pack(game, tmp_path, dpi=DPI)
    assert repaired.root == first.root and (repaired.root / repaired.faces["wood"]).is_file()
    assert not list(tmp_path.glob(".*"))  # no temporary folders left behind


def test_cache_folder_follows_the_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CARDTRACK_CACHE", str(tmp_path))
    assert default_cache_dir() == tmp_path / "packs"
    monkeypatch.delenv("CARDTRACK_CACHE")
    assert default_cache_dir() == Path.home() / ".cache" / "cardtrack" / "packs"


def test_deck_list(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["deck", "list", "--game", GAME]) == 0
    out = capsys.readouterr().out
    assert "diamond-pickaxe" in out and "resource-back" in out and "recipe=3Diamond+2Wood" in out
    assert "100 cards in 45 types, 71 distinct faces" in out
    assert "by kind: resource 54, wild 11, creeper 5, tnt 5, craft 25" in out


def test_deck_list_unknown_game(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["deck", "list", "--game", "chess"]) == 2
    assert "no catalog for game 'chess'" in capsys.readouterr().err


def test_deck_render_writes_a_valid_pack(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "proxy"
    assert main(["deck", "render", "--game", "angry-birds-power-cards", "--out", str(out), "--dpi", "40", "-q"]) == 0
    pack = load_pack(out)
    catalog = load_catalog("angry-birds-power-cards")
    assert pack.missing_faces(catalog) == () and pack.source is PackSource.PROXY
    image = cv2.imread(str(out / pack.faces["red-1"]))
    assert np.array_equal(image, render_face(catalog, "red-1", 40))
    assert "wrote 43 faces" in capsys.readouterr().out
    (tmp_path / "busy").mkdir()
    (tmp_path / "busy" / "notes.txt").write_text("x")
    assert main(["deck", "render", "--game", GAME, "--out", str(tmp_path / "busy"), "-q"]) == 2
    assert "not empty" in capsys.readouterr().err
