"""Enrollment: name maps, finding and rectifying a card in scans and in synthetic table photos,
and enrolling the real Explorers scans into a pack that covers every face.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import cv2
import numpy as np
import pytest

from engine.catalog import Orientation, load_catalog
from vision.art.enroll import (
    EnrollError,
    ExtractConfig,
    ExtractMethod,
    FileStatus,
    NameMap,
    NameMapError,
    enroll,
    extract_card,
    list_images,
    load_name_map,
    order_corners,
    shipped_name_map,
    summarise,
)
from vision.art.pack import PackSource, load_pack

REPO = Path(__file__).resolve().parents[2]
SCANS = REPO.parent / "shared" / "decks" / "explorers-scans"
EXPLORERS_MAP = REPO / "datasets" / "namemaps" / "minecraft-explorers.json"
needs_scans = pytest.mark.skipif(not SCANS.is_dir(), reason="Explorers scans not next to repo")


def scan(relative: str) -> np.ndarray:
    image = cv2.imread(str(SCANS / relative))
    assert image is not None, relative
    return image


def ncc(a: np.ndarray, b: np.ndarray) -> float:
    """Normalised cross-correlation of two images in grey, `b` resized to `a`."""
    b = cv2.resize(b, (a.shape[1], a.shape[0]), interpolation=cv2.INTER_AREA)
    x = cv2.cvtColor(a, cv2.COLOR_BGR2GRAY).astype(np.float64)
    y = cv2.cvtColor(b, cv2.COLOR_BGR2GRAY).astype(np.float64)
    x -= x.mean()
    y -= y.mean()
    return float((x * y).mean() / (x.std() * y.std()))


# ------------------------------------------------------------------ synthetic table photos


def rounded_mask(h: int, w: int, r: int) -> np.ndarray:
    mask = np.zeros((h, w), np.uint8)
    cv2.rectangle(mask, (r, 0), (w - 1 - r, h - 1), 255, -1)
    cv2.rectangle(mask, (0, r), (w - 1, h - 1 - r), 255, -1)
    for cx, cy in ((r, r), (w - 1 - r, r), (r, h - 1 - r), (w - 1 - r, h - 1 - r)):
        cv2.circle(mask, (cx, cy), r, 255, -1)
    return mask


def table_photo(
    card: np.ndarray, corners: list[list[float]], rng: np.random.Generator
) -> np.ndarray:
    """A 1280×720 photo: wood-grain table, uneven light, sensor noise, the card in perspective
    at `corners` (its top-left, top-right, bottom-right, bottom-left)."""
    h, w = card.shape[:2]
    y = np.arange(720)[:, None]
    x = np.arange(1280)[None, :]
    grain = 18 * np.sin(y / 7.0 + 3 * np.sin(x / 90.0))[..., None]
    table = np.array([60, 95, 140], np.float32) + grain + rng.normal(0, 10, (720, 1280, 3))
    src = np.float32([[0, 0], [w - 1, 0], [w - 1, h - 1], [0, h - 1]])
    matrix = cv2.getPerspectiveTransform(src, np.float32(corners))
    warped = cv2.warpPerspective(card, matrix, (1280, 720), flags=cv2.INTER_AREA)
    alpha = cv2.warpPerspective(rounded_mask(h, w, int(0.05 * min(h, w))), matrix, (1280, 720))
    a = alpha.astype(np.float32)[..., None] / 255
    photo = warped * a + table * (1 - a)
    photo = photo * np.linspace(0.85, 1.1, 1280)[None, :, None]
    return np.clip(photo + rng.normal(0, 3, photo.shape), 0, 255).astype(np.uint8)


PHOTOS = [
    ("mobs/mob_zombie.jpg", [[520, 90], [840, 130], [800, 640], [450, 600]], "portrait"),
    ("landscapes/landscape_woods.jpg", [[350, 180], [900, 140], [940, 520], [330, 540]], "landscape"),
    ("items/item_wood.jpg", [[700, 100], [1000, 300], [760, 650], [420, 430]], "portrait"),
]


@needs_scans
@pytest.mark.parametrize("method", [None, ExtractMethod.EDGES])
@pytest.mark.parametrize(("name", "corners", "orientation"), PHOTOS)
def test_card_recovered_from_a_table_photo(
    name: str, corners: list[list[float]], orientation: str, method: ExtractMethod | None
) -> None:
    card = scan(name)
    photo = table_photo(card, corners, np.random.default_rng(7))
    config = ExtractConfig() if method is None else ExtractConfig(methods=(method,))
    crop = extract_card(photo, (59, 91), Orientation(orientation), config)
    assert crop.method is not ExtractMethod.WHOLE
    assert np.abs(crop.corners - np.float32(corners)).max() < 3.0
    h, w = crop.image.shape[:2]
    assert (w > h) == (orientation == "landscape")
    assert abs(max(w, h) / min(w, h) - 91 / 59) < 0.02
    assert ncc(crop.image, card) > 0.95
    assert not crop.rotated


@needs_scans
def test_card_lying_across_is_turned_to_its_face_orientation() -> None:
    card = scan("mobs/mob_spider.jpg")
    # A portrait card photographed lying on its side (its top edge on the right).
    corners = [[900, 150], [900, 550], [300, 550], [300, 150]]
    photo = table_photo(card, corners, np.random.default_rng(3))
    crop = extract_card(photo, (59, 91), Orientation.PORTRAIT)
    assert crop.rotated
    h, w = crop.image.shape[:2]
    assert h > w
    # Turned a quarter the other way from how it was laid, so it is upright or upside down.
    best = max(ncc(crop.image, card), ncc(crop.image, card[::-1, ::-1]))
    assert best > 0.95


@needs_scans
def test_scan_with_a_margin_is_cropped_to_the_card() -> None:
    card = scan("chests/chest_07.jpg")
    h, w = card.shape[:2]
    canvas = np.full((h + 200, w + 160, 3), 250, np.uint8)
    canvas[120 : 120 + h, 70 : 70 + w] = card
    centre = (canvas.shape[1] / 2, canvas.shape[0] / 2)
    tilt = cv2.getRotationMatrix2D(centre, 3.0, 1.0)
    canvas = cv2.warpAffine(canvas, tilt, canvas.shape[1::-1], borderValue=(250, 250, 250))
    crop = extract_card(canvas, (59, 91))
    assert crop.method is ExtractMethod.BACKGROUND
    assert 280 < crop.native_dpi < 310
    assert ncc(crop.image, card) > 0.95


def test_whole_image_when_no_outline() -> None:
    flat = np.full((300, 200, 3), 128, np.uint8)
    crop = extract_card(flat, (59, 91), config=ExtractConfig(dpi=50))
    assert crop.method is ExtractMethod.WHOLE
    assert crop.image.shape[:2] == (round(91 / 25.4 * 50), round(59 / 25.4 * 50))


def test_order_corners() -> None:
    pts = np.array([[10, 90], [100, 95], [5, 5], [95, 0]], np.float32)
    assert order_corners(pts).tolist() == [[5, 5], [95, 0], [100, 95], [10, 90]]


# ------------------------------------------------------------------ name maps


@needs_scans
def test_shipped_map_names_every_scan_with_a_catalog_face() -> None:
    catalog = load_catalog("minecraft-explorers")
    assert shipped_name_map("minecraft-explorers", REPO) == EXPLORERS_MAP
    name_map = load_name_map(EXPLORERS_MAP)
    faces = [name_map.face_for(f, catalog.faces) for f in list_images(SCANS)]
    assert None not in faces
    assert sorted(f or "" for f in faces) == sorted(catalog.faces)
    # The rule order matters: the back is not a mob called "back".
    assert name_map.face_for("mobs/mob_back.jpg", catalog.faces) == "mob_back"
    assert name_map.face_for("x/ITEM_IRON_MOB.JPG", catalog.faces) == "item.iron_mob"


def test_identity_fallback_needs_no_rule() -> None:
    faces = {"mob.zombie", "wood-hoe/craft"}
    name_map = NameMap()
    assert name_map.face_for("mob.zombie.png", faces) == "mob.zombie"
    assert name_map.face_for("wood-hoe/craft.png", faces) == "wood-hoe/craft"
    assert name_map.face_for("photos/mob.zombie.jpg", faces) == "mob.zombie"
    assert name_map.face_for("IMG_0001.jpg", faces) is None


def test_csv_map(tmp_path: Path) -> None:
    path = tmp_path / "map.csv"
    path.write_text(
        "# my photos\nfile,face\nIMG_0001.jpg,mob.zombie\nbacks/*.jpg,mob_back\n",
        encoding="utf-8",
    )
    name_map = load_name_map(path)
    faces = {"mob.zombie", "mob_back"}
    assert name_map.face_for("IMG_0001.JPG", faces) == "mob.zombie"
    assert name_map.face_for("sub/IMG_0001.jpg", faces) == "mob.zombie"
    assert name_map.face_for("backs/b1.jpg", faces) == "mob_back"
    assert name_map.face_for("IMG_0002.jpg", faces) is None


BAD_MAPS = {
    "bad.json": ('{"schema": 1, "rules": [{"regex": "(", "face": "x"}]}', "rules[0]: 'regex'"),
    "group.json": (
        '{"schema": 1, "rules": [{"regex": "a(?P<y>b)", "face": "f.{x}"}]}',
        "rules[0]: 'face' 'f.{x}' uses x",
    ),
    "both.json": (
        '{"schema": 1, "rules": [{"regex": "a", "glob": "b", "face": "f"}]}',
        "rules[0]: give exactly one",
    ),
    "schema.json": ('{"rules": []}', "'schema' must be 1"),
    "broken.json": ('{"schema": 1', "not valid JSON"),
    "header.csv": ("path,id\na.jpg,x\n", "header 'file,face'"),
    "row.csv": ("file,face\na.jpg,\n", "row 2: both 'file' and 'face'"),
    "map.txt": ("file,face\n", "a .json or .csv file"),
}


@pytest.mark.parametrize("name", sorted(BAD_MAPS))
def test_bad_name_maps_name_file_and_rule(tmp_path: Path, name: str) -> None:
    text, fragment = BAD_MAPS[name]
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    with pytest.raises(NameMapError) as info:
        load_name_map(path)
    assert str(info.value).startswith(str(path))
    assert fragment in str(info.value)


# ------------------------------------------------------------------ enrolling folders


@needs_scans
def test_real_scans_enroll_into_a_complete_pack(tmp_path: Path) -> None:
    out = tmp_path / "pack"
    report = enroll(
        "minecraft-explorers",
        SCANS,
        out,
        load_name_map(EXPLORERS_MAP),
        config=ExtractConfig(dpi=60),
        progress=False,
    )
    assert report.complete and report.missing == ()
    assert len(report.of_status(FileStatus.ENROLLED)) == 85
    assert report.of_status(FileStatus.UNMATCHED) == ()
    pack = load_pack(out)
    assert pack.source is PackSource.ENROLLED and report.pack.root == out
    manifest = json.loads((out / "pack.json").read_text(encoding="utf-8"))
    assert manifest["source"] == "enrolled" and manifest["game"] == "minecraft-explorers"
    assert manifest["card_size_mm"] == [59.0, 91.0]
    catalog = load_catalog("minecraft-explorers")
    assert set(manifest["faces"]) == set(catalog.faces)
    for face_id, relative in manifest["faces"].items():
        image = cv2.imread(str(out / relative))
        h, w = image.shape[:2]
        landscape = catalog.face(face_id).orientation is Orientation.LANDSCAPE
        assert (w > h) == landscape, face_id
        assert max(w, h) == round(91 / 25.4 * 60)
    # Tightly cropped scans: the card is the whole picture, none turned.
    assert not any(r.rotated for r in report.results)


def test_report_lists_missing_unmatched_unknown_and_duplicates(tmp_path: Path) -> None:
    images = tmp_path / "photos"
    images.mkdir()
    card = np.full((182, 118, 3), 40, np.uint8)
    cv2.putText(card, "Z", (30, 120), cv2.FONT_HERSHEY_SIMPLEX, 3, (0, 200, 0), 6)
    for name in ("IMG_1.png", "IMG_2.png", "IMG_3.png", "holiday.png", "mob.witch.png"):
        cv2.imwrite(str(images / name), card)
    (images / "notes.txt").write_text("not an image", encoding="utf-8")
    (images / "IMG_4.jpg").write_bytes(b"not really a jpeg")
    name_map_path = tmp_path / "map.csv"
    name_map_path.write_text(
        "file,face\nIMG_1.png,mob.zombie\nIMG_2.png,mob.zombie\nIMG_3.png,mob.dragon\n"
        "IMG_4.jpg,mob_back\n",
        encoding="utf-8",
    )
    out = tmp_path / "pack"
    report = enroll(
        "minecraft-explorers", images, out, load_name_map(name_map_path), progress=False
    )
    assert dict(report.faces) == {"mob.witch": "mob.witch.png", "mob.zombie": "IMG_1.png"}
    by_status = {r.file: r.status for r in report.results}
    assert by_status == {
        "IMG_1.png": FileStatus.ENROLLED,
        "IMG_2.png": FileStatus.DUPLICATE,
        "IMG_3.png": FileStatus.UNKNOWN_FACE,
        "IMG_4.jpg": FileStatus.UNREADABLE,
        "holiday.png": FileStatus.UNMATCHED,
        "mob.witch.png": FileStatus.ENROLLED,
    }
    assert len(report.missing) == 83 and "mob_back" in report.missing
    text = "\n".join(summarise(report))
    assert "missing face: mob_back" in text
    assert "unmatched: holiday.png" in text
    assert "'mob.dragon'" in text and "already comes from IMG_1.png" in text
    assert set(load_pack(out).faces) == {"mob.witch", "mob.zombie"}


def test_enroll_input_errors(tmp_path: Path) -> None:
    with pytest.raises(EnrollError, match="not a folder of images"):
        enroll("minecraft-explorers", tmp_path / "absent", tmp_path / "out", progress=False)
    (tmp_path / "empty").mkdir()
    with pytest.raises(EnrollError, match="no image files"):
        enroll("minecraft-explorers", tmp_path / "empty", tmp_path / "out", progress=False)


@needs_scans
def test_enroll_command_reports_missing_faces(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from cardtrack.cli import main

    images = tmp_path / "scans" / "mobs"
    images.mkdir(parents=True)
    for name in ("mob_zombie.jpg", "mob_back.jpg"):
        shutil.copyfile(SCANS / "mobs" / name, images / name)
    (images / "IMG_0042.jpg").write_bytes((SCANS / "mobs" / "mob_witch.jpg").read_bytes())
    out = tmp_path / "pack"
    argv = ["deck", "enroll", "--game", "minecraft-explorers", "--images", str(tmp_path / "scans"),
            "--out", str(out), "--dpi", "50", "-q"]
    assert main(argv) == 1  # faces are missing: the pack is written, the exit says so
    text = capsys.readouterr().out
    assert "minecraft-explorers.json" in text  # the shipped map is the default
    assert "2 faces enrolled" in text and "83 missing" in text
    assert "missing face: mob.witch" in text
    assert "unmatched: mobs/IMG_0042.jpg" in text
    assert set(load_pack(out).faces) == {"mob.zombie", "mob_back"}

    (tmp_path / "busy").mkdir()
    (tmp_path / "busy" / "keep.txt").write_text("x", encoding="utf-8")
    argv[argv.index(str(out))] = str(tmp_path / "busy")
    assert main(argv) == 2
    assert "not empty" in capsys.readouterr().err
