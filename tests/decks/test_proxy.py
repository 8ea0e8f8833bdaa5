"""The proxy renderer: sizes, determinism, 180° turns, distinct faces, unseen catalogs.

Distinctness uses the simple measure documented in docs/decks.md: the mean absolute
difference of 64×64 grey thumbnails (grey levels 0-255), which must exceed `MARGIN` between
any two faces of a game and between a face and itself turned 180°. Renders run at low dpi to
keep the suite fast; the layout is defined in millimetres, so the picture is the same.
"""

from __future__ import annotations

from itertools import combinations

import cv2
import numpy as np
import pytest

from engine.catalog import available_games, load_catalog, parse_catalog
from vision.art.errors import ArtError
from vision.art.proxy import (
    RENDERER_VERSION,
    Style,
    design_face,
    face_size_px,
    render_face,
    safe_text,
)

MARGIN = 6.0  # grey levels; see docs/decks.md
TEST_DPI = 50
GAMES = available_games()


def thumb(image: np.ndarray) -> np.ndarray:
    grey = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
    return cv2.resize(grey, (64, 64), interpolation=cv2.INTER_AREA).astype(np.float32)


def distance(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.mean(np.abs(thumb(a) - thumb(b))))


@pytest.fixture(scope="module", params=GAMES)
def rendered(request: pytest.FixtureRequest) -> tuple[str, dict[str, np.ndarray]]:
    catalog = load_catalog(request.param)
    return request.param, {fid: render_face(catalog, fid, TEST_DPI) for fid in catalog.faces}


def test_every_face_has_the_card_size(rendered: tuple[str, dict[str, np.ndarray]]) -> None:
    game, images = rendered
    catalog = load_catalog(game)
    for fid, image in images.items():
        w, h = face_size_px(catalog, fid, TEST_DPI)
        assert image.shape == (h, w, 3) and image.dtype == np.uint8, fid
        landscape = catalog.faces[fid].orientation == "landscape"
        assert (w > h) == landscape, fid


def test_true_size_at_300_dpi() -> None:
    mattel = load_catalog("minecraft-card-game")
    assert render_face(mattel, "wood-1").shape == (1039, 744, 3)  # 63×88 mm
    assert render_face(mattel, "resource-back", dpi=600).shape == (2079, 1488, 3)
    if "minecraft-explorers" in GAMES:
        explorers = load_catalog("minecraft-explorers")
        w, h = explorers.card_size_mm
        landscape = next(f for f in explorers.faces.values() if f.orientation == "landscape")
        image = render_face(explorers, landscape.id)
        assert image.shape[:2] == (round(w / 25.4 * 300), round(h / 25.4 * 300))


def test_rendering_is_deterministic() -> None:
    catalog = load_catalog("minecraft-card-game")
    for fid in ("wood-2", "diamond-pickaxe/craft", "diamond-pickaxe/tool", "resource-back"):
        assert np.array_equal(render_face(catalog, fid, 60), render_face(catalog, fid, 60))
    assert RENDERER_VERSION


def test_a_turned_face_looks_different(rendered: tuple[str, dict[str, np.ndarray]]) -> None:
    _, images = rendered
    for fid, image in images.items():
        turned = np.ascontiguousarray(image[::-1, ::-1])
        assert distance(image, turned) > MARGIN, fid


def test_faces_of_a_game_are_pairwise_distinct(rendered: tuple[str, dict[str, np.ndarray]]) -> None:
    _, images = rendered
    thumbs = {fid: thumb(img) for fid, img in images.items()}
    worst = min(
        (float(np.mean(np.abs(thumbs[a] - thumbs[b]))), a, b)
        for a, b in combinations(sorted(thumbs), 2)
    )
    assert worst[0] > MARGIN, worst


def test_quantities_differ_strongly() -> None:
    catalog = load_catalog("minecraft-card-game")
    one, two, three = (render_face(catalog, f"wood-{n}", TEST_DPI) for n in (1, 2, 3))
    assert min(distance(one, two), distance(two, three), distance(one, three)) > 2 * MARGIN
    assert [design_face(catalog, f"wood-{n}").icon_count for n in (1, 2, 3)] == [1, 2, 3]
    assert [design_face(catalog, f"wood-{n}").numeral for n in (1, 2, 3)] == ["1", "2", "3"]


def test_craft_side_and_tool_side_look_clearly_different() -> None:
    catalog = load_catalog("minecraft-card-game")
    craft = design_face(catalog, "iron-sword/craft")
    tool = design_face(catalog, "iron-sword/tool")
    assert craft.style is Style.FRONT and tool.style is Style.BACK_CONTENT
    assert any(s.title == "recipe" for s in craft.sections)
    assert not any(s.title == "recipe" for s in tool.sections) and tool.text
    a, b = render_face(catalog, "iron-sword/craft", TEST_DPI), render_face(catalog, "iron-sword/tool", TEST_DPI)
    assert distance(a, b) > 3 * MARGIN
    assert design_face(catalog, "resource-back").style is Style.PLAIN_BACK


def test_header_band_is_at_the_top_only() -> None:
    catalog = load_catalog("minecraft-card-game")
    image = render_face(catalog, "tnt", 100)
    h = image.shape[0]
    band_colour = image[int(h * 0.05), image.shape[1] // 2].astype(int)
    assert band_colour[2] > 150 and band_colour[1] < 100  # TNT red (BGR) at the top
    bottom = image[int(h * 0.95), image.shape[1] // 2].astype(int)
    assert np.abs(bottom - band_colour).sum() > 60


def unseen_catalog() -> dict:
    faces = [
        {"id": "back", "side": "back"},
        {"id": "zorb", "name": "Zorb", "attrs": {"glow": 3, "tags": ["a", "b"]}},
        {"id": "quix", "name": "Quix (gold edition)", "attrs": {"cost": {"moonstone": 2}}},
        {"id": "flarn", "name": "Flärn", "attrs": {"orientation": "landscape", "armed": True}},
        {"id": "blip", "name": "Blip"},
    ]
    cards = [
        {"id": f["id"], "kind": "thing" if i % 2 else "gizmo", "count": 2, "front": f["id"], "back": "back"}
        for i, f in enumerate(faces[1:])
    ]
    return {
        "schema": 1, "game": "unseen-game", "name": "Unseen", "card_size_mm": [57, 89],
        "total": 8, "faces": faces, "cards": cards,
    }  # fmt: skip


def test_an_unseen_catalog_renders_distinct_legible_cards() -> None:
    catalog = parse_catalog(unseen_catalog(), "unseen.json")
    images = {fid: render_face(catalog, fid, TEST_DPI) for fid in catalog.faces}
    assert images["flarn"].shape[1] > images["flarn"].shape[0]  # landscape
    assert images["zorb"].shape[:2] == (round(89 / 25.4 * TEST_DPI), round(57 / 25.4 * TEST_DPI))
    for a, b in combinations(sorted(images), 2):
        assert distance(images[a], images[b]) > MARGIN, (a, b)
    zorb = design_face(catalog, "zorb")
    assert zorb.icon.name == "identicon" and zorb.numeral == ""
    assert design_face(catalog, "quix").subtitle == "gold edition"
    assert design_face(catalog, "back").style is Style.PLAIN_BACK


def test_text_the_font_cannot_draw_is_spelled_out() -> None:
    assert safe_text("Wood ×2 → 3") == "Wood x2 > 3"
    assert safe_text("Flärn é") == "Flarn e"
    assert "?" in safe_text("雪")


def test_bad_requests_raise_clear_errors() -> None:
    catalog = load_catalog("minecraft-card-game")
    with pytest.raises(ValueError, match="unknown face 'nope'"):
        render_face(catalog, "nope")
    with pytest.raises(ArtError, match="dpi must be between"):
        render_face(catalog, "wood-1", dpi=5)
