"""The built-in catalogs: totals and ids as GAMES.md gives them, the Explorers faces against the
real scans, and a clear `CatalogError` naming the file and the entry for every malformed catalog.
"""

from __future__ import annotations

import copy
import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from engine import catalog as catalog_module
from engine.catalog import Orientation, available_games, load_catalog, load_catalog_file
from engine.errors import CatalogError

REPO = Path(__file__).resolve().parents[2]
SCANS = REPO.parent / "shared" / "decks" / "explorers-scans"

TOTALS = {
    "minecraft-card-game": 100,
    "minecraft-explorers": 110,
    "minecraft-mk1": 166,
    "angry-birds-power-cards": 36,
}


def test_every_game_has_a_catalog_with_its_total() -> None:
    assert set(TOTALS) <= set(available_games())
    for game, total in TOTALS.items():
        cat = load_catalog(game)
        assert cat.game == game
        assert cat.total == total
        assert sum(1 for _ in cat.deck()) == total


def test_card_sizes() -> None:
    assert load_catalog("minecraft-explorers").card_size_mm == (59.0, 91.0)
    assert load_catalog("angry-birds-power-cards").card_size_mm == (59.0, 91.0)
    assert load_catalog("minecraft-mk1").card_size_mm == (63.0, 88.0)


# ------------------------------------------------------------------ Explorers


def scan_face_id(relative: str) -> str:
    """The face id of a scan file, by the naming rules of GAMES.md section 2."""
    stem = Path(relative).stem
    for prefix, dotted in (("landscape_", "landscape."), ("item_", "item.")):
        if stem.startswith(prefix):
            return dotted + stem[len(prefix) :]
    if stem.startswith("mob_") and stem not in ("mob_back", "mob_game_over"):
        return "mob." + stem[len("mob_") :]
    return stem


@pytest.mark.skipif(not SCANS.is_dir(), reason="the Explorers scans are not next to the repo")
def test_explorers_faces_are_exactly_the_scanned_faces() -> None:
    cat = load_catalog("minecraft-explorers")
    scanned = {scan_face_id(str(p.relative_to(SCANS))) for p in SCANS.rglob("*.jpg")}
    assert len(scanned) == 85
    assert scanned == set(cat.faces)


def test_explorers_split_adds_up() -> None:
    cat = load_catalog("minecraft-explorers")
    per_kind = Counter[str]()
    for card in cat.cards.values():
        per_kind[card.kind] += card.count
    assert per_kind == {"mob": 30, "game-over": 1, "landscape": 60, "chest": 12, "turn": 7}
    mobs = {c.id: (c.count, c.attrs["cost"]) for c in cat.cards_of_kind("mob")}
    assert mobs == {
        "zombie": (6, 2), "skeleton": (6, 2), "spider": (6, 2),
        "creeper": (4, 3), "witch": (4, 3), "enderman": (4, 4),
    }
    assert cat.card("hunger").count == 6 and cat.card("night").count == 1
    assert [c.id for c in cat.cards_of_kind("chest")] == [f"chest-{i:02d}" for i in range(1, 13)]
    assert {c.back for c in cat.cards_of_kind("chest")} == {"chest_filled"}
    assert {c.back for c in cat.cards.values() if c.kind in ("mob", "game-over")} == {"mob_back"}


# GAMES.md section 2: landscape type -> (copies, cost, shield, danger).
LANDSCAPES = {
    "woods": (4, 2, None, False), "cherry-blossom": (3, 2, None, False),
    "lush-cave": (4, 2, "pickaxe", True), "geode": (3, 2, "pickaxe", False),
    "taiga": (4, 3, None, False), "shipwreck": (4, 3, None, False),
    "jungle": (3, 3, "sword", False), "desert-temple": (4, 3, None, True),
    "illager-outpost": (3, 3, "sword", True), "mineshaft": (4, 3, "pickaxe", True),
    "witch-hut": (4, 3, "sword", True), "chasm": (3, 4, "pickaxe", False),
    "ruined-portal": (3, 4, None, False), "deep-cave": (4, 4, "pickaxe", True),
    "woodland-mansion": (1, 7, "sword", True), "ocean-monument": (1, 7, "sword", True),
}
VILLAGERS = {
    "librarian": "bookshelf", "cleric": "glowstone", "fletcher": "crossbow",
    "armorer": "iron-armor", "toolsmith": "diamond-pickaxe", "weaponsmith": "diamond-sword",
    "cartographer": "explorer-map", "farmer": "bread",
}


def test_explorers_landscapes_follow_games_md() -> None:
    cat = load_catalog("minecraft-explorers")
    copies = Counter[str]()
    for card in cat.cards_of_kind("landscape"):
        kind, item = card.id.split(".", 1)
        assert kind == card.attrs["landscape"]
        assert re.fullmatch(r"[a-z-]+(\+[12])?", item), card.id
        reveal = int(item.split("+")[1]) if "+" in item else 0
        assert card.attrs["reveal"] == reveal == cat.face(card.back).attrs["reveal"]
        front = cat.face(card.front)
        assert front.orientation is Orientation.LANDSCAPE
        assert cat.face(card.back).orientation is Orientation.PORTRAIT
        copies[kind] += card.count
    for kind, (n, cost, shield, danger) in LANDSCAPES.items():
        assert copies[kind] == n, kind
        card = next(c for c in cat.cards_of_kind("landscape") if c.attrs["landscape"] == kind)
        assert (card.attrs["cost"], card.attrs["shield"], card.attrs["danger"]) == (
            cost, shield, danger,
        )
    for villager, item in VILLAGERS.items():
        (card,) = [c for c in cat.cards_of_kind("landscape") if c.attrs.get("villager") == villager]
        assert card.id == f"village-{villager}.{item}"
        assert card.attrs["cost"] == 1 and card.attrs["trade"]["receive"] == item
    assert sum(copies.values()) == 60
    assert cat.card("woods.wood").count == 2
    assert cat.card("lush-cave.iron-ingot+1").back == "item.iron_mob"
    assert cat.card("woodland-mansion.totem-of-undying+2").back == "item.totem_of_undying"


def test_explorers_item_totals_match_games_md() -> None:
    cat = load_catalog("minecraft-explorers")
    items = Counter[str]()
    for card in cat.cards_of_kind("landscape"):
        items[card.attrs["item"]] += card.count
    expected = {
        "wood": 5, "iron-ingot": 5, "emerald": 5, "iron-armor": 5, "iron-sword": 1,
        "gold-sword": 2, "diamond-sword": 2, "iron-pickaxe": 2, "gold-pickaxe": 2,
        "diamond-pickaxe": 2, "crossbow": 4, "spyglass": 4, "explorer-map": 2,
    }
    for item, n in expected.items():
        assert items[item] == n, item
    foods = {
        c.attrs["item"]: c.attrs["food"]
        for c in cat.cards_of_kind("landscape") if c.attrs["category"] == "food"
    }
    assert foods == {
        "bread": 3, "carrot": 3, "apple": 2, "melon": 2, "glow-berries": 1,
        "sweet-berries": 1, "golden-apple": 4,
    }


# ------------------------------------------------------------------ mk1 and Angry Birds


def test_mk1_counts_and_tokens_follow_the_seed() -> None:
    cat = load_catalog("minecraft-mk1")
    counts = {c.id: c.count for c in cat.cards.values()}
    assert counts == {
        "wood": 20, "stick": 12, "stone": 20, "shiny": 20, "food": 20, "leather": 12,
        "sapling": 12, "seed": 12, "tree": 12, "sword": 5, "axe": 5, "pickaxe": 5, "armor": 6,
        "furnace": 1, "shelter": 1, "water": 1, "storm": 1, "rain": 1,
    }
    assert {t.id: t.count for t in cat.tokens.values()} == {
        "health": 48, "hunger": 48, "daylight": 4, "d6": 1,
    }
    piles = {"wood", "sticks", "mining", "hunting", "gardening", "sword", "axe", "pickaxe",
             "armor", "effects-weather"}
    assert {c.back for c in cat.cards.values()} == {f"back.{p}" for p in piles}
    assert cat.card("stone").back == cat.card("shiny").back == "back.mining"
    assert cat.card("food").back == cat.card("leather").back == "back.hunting"
    assert cat.card("pickaxe").attrs["recipe"] == {"stick": 2, "wood": 3}


def test_angry_birds_placeholder_deck() -> None:
    cat = load_catalog("angry-birds-power-cards")
    assert cat.placeholder
    assert all(c.count == 1 for c in cat.cards.values())
    assert len({c.front for c in cat.cards.values()}) == 36
    backs = Counter(c.back for c in cat.cards.values())
    assert backs["back.pig"] == 9
    for material in ("wood", "stone", "ice"):
        assert backs[f"back.{material}-vertical"] == 6
        assert backs[f"back.{material}-horizontal"] == 3
    stats = set()
    for card in cat.cards.values():
        s = card.attrs
        assert all(1 <= s[k] <= 10 for k in ("power", "distance", "aim", "slingshot"))
        assert 1 <= s["rarity"] <= 5
        stats.add(tuple(s[k] for k in ("power", "distance", "aim", "rarity", "slingshot")))
    assert len(stats) == 36
    # Every front is one card's; the backs are shared by several.
    assert cat.faces_once() == {c.front for c in cat.cards.values()}


def test_faces_once_are_the_faces_a_single_card_shows() -> None:
    mattel = load_catalog("minecraft-card-game")
    once = mattel.faces_once()
    assert "diamond-3" in once and "resource-back" not in once
    for face in once:
        (card,) = mattel.cards_showing(face)
        assert card.count == 1
    mk1 = load_catalog("minecraft-mk1").faces_once()
    assert {"furnace", "shelter"} <= mk1 and "food" not in mk1


def test_ids_are_well_formed_and_sides_consistent() -> None:
    for game in TOTALS:
        cat = load_catalog(game)
        for card in cat.cards.values():
            assert catalog_module.ID_PATTERN.fullmatch(card.id)
            assert cat.face(card.front).side == "front"
            assert card.back == card.front or cat.face(card.back).side == "back"


# ------------------------------------------------------------------ malformed catalogs


def minimal() -> dict[str, Any]:
    return {
        "schema": 1, "game": "tiny", "name": "Tiny", "publisher": "", "card_size_mm": [63, 88],
        "total": 3, "placeholder": True, "notes": "",
        "faces": [
            {"id": "back", "name": "Back", "side": "back"},
            {"id": "ace", "name": "Ace", "side": "front", "attrs": {"orientation": "landscape"}},
            {"id": "two", "name": "Two", "side": "front"},
        ],
        "cards": [
            {"id": "ace", "name": "Ace", "kind": "rank", "count": 1, "front": "ace", "back": "back"},
            {"id": "two", "name": "Two", "kind": "rank", "count": 2, "front": "two", "back": "back"},
        ],
        "tokens": [{"id": "chip", "name": "Chip", "count": 5}],
    }


def write(tmp_path: Path, doc: Any) -> Path:
    path = tmp_path / "tiny.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def test_minimal_catalog_loads(tmp_path: Path) -> None:
    cat = load_catalog_file(write(tmp_path, minimal()))
    assert cat.total == 3 and list(cat.deck()) == ["ace", "two", "two"]
    assert cat.face("ace").orientation is Orientation.LANDSCAPE


def _set(path: tuple[Any, ...], value: Any) -> Any:
    def edit(doc: dict[str, Any]) -> None:
        target: Any = doc
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value

    return edit


def _delete(path: tuple[Any, ...]) -> Any:
    def edit(doc: dict[str, Any]) -> None:
        target: Any = doc
        for key in path[:-1]:
            target = target[key]
        del target[path[-1]]

    return edit


BAD = {
    "unknown face": (_set(("cards", 0, "front"), "acee"), ["card 'ace'", "'acee'", "not in 'faces'"]),
    "counts off": (_set(("total",), 4), ["add up to 3", "'total' says 4"]),
    "duplicate card": (_set(("cards", 1, "id"), "ace"), ["card 'ace'", "duplicate card id"]),
    "duplicate face": (_set(("faces", 2, "id"), "ace"), ["faces[2]", "duplicate face id 'ace'"]),
    "bad orientation": (
        _set(("faces", 1, "attrs", "orientation"), "sideways"),
        ["face 'ace'", "orientation", "'sideways'"],
    ),
    "bad side": (_set(("faces", 2, "side"), "top"), ["face 'two'", "'side'", "'top'"]),
    "front is a back": (_set(("cards", 0, "front"), "back"), ["card 'ace'", "front face 'back'"]),
    "back is a front": (_set(("cards", 0, "back"), "two"), ["card 'ace'", "back face 'two'"]),
    "unused face": (
        lambda d: d["faces"].append({"id": "joker", "side": "front"}),
        ["faces not on any card", "joker"],
    ),
    "zero count": (_set(("cards", 1, "count"), 0), ["card 'two'", "at least 1"]),
    "count not int": (_set(("cards", 1, "count"), "2"), ["card 'two'", "'count' must be int"]),
    "missing kind": (_delete(("cards", 1, "kind")), ["card 'two'", "missing field 'kind'"]),
    "typo field": (_set(("cards", 1, "cout"), 2), ["card 'two'", "unknown field", "'cout'"]),
    "typo top": (_set(("card",), []), ["unknown field", "'card'"]),
    "bad id": (_set(("cards", 1, "id"), "Two Cards"), ["card 'Two Cards'", "not a valid id"]),
    "attrs not object": (_set(("faces", 2, "attrs"), [1]), ["face 'two'", "'attrs'"]),
    "bad size": (_set(("card_size_mm",), [63]), ["card_size_mm"]),
    "bad schema": (_set(("schema",), 2), ["'schema' must be 1"]),
    "token count": (_set(("tokens", 0, "count"), 0), ["token 'chip'", "at least 1"]),
    "token clash": (_set(("tokens", 0, "id"), "two"), ["tokens[0]", "duplicate id 'two'"]),
    "placeholder not bool": (_set(("placeholder",), "yes"), ["'placeholder' must be bool"]),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_malformed_catalog_names_file_and_entry(tmp_path: Path, case: str) -> None:
    edit, fragments = BAD[case]
    doc = copy.deepcopy(minimal())
    edit(doc)
    path = write(tmp_path, doc)
    with pytest.raises(CatalogError) as info:
        load_catalog_file(path)
    message = str(info.value)
    assert message.startswith(str(path))
    for fragment in fragments:
        assert fragment in message, (case, message)


def test_unreadable_and_invalid_json(tmp_path: Path) -> None:
    with pytest.raises(CatalogError, match="cannot read catalog"):
        load_catalog_file(tmp_path / "absent.json")
    path = tmp_path / "broken.json"
    path.write_text('{"schema": 1,', encoding="utf-8")
    with pytest.raises(CatalogError, match=r"broken\.json: not valid JSON at line 1"):
        load_catalog_file(path)


def test_builtin_catalog_must_match_its_file_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "other.json").write_text(json.dumps(minimal()), encoding="utf-8")
    monkeypatch.setattr(catalog_module, "CATALOG_DIR", tmp_path)
    catalog_module.load_catalog.cache_clear()
    try:
        with pytest.raises(CatalogError, match=r"other\.json: field 'game' is 'tiny'"):
            load_catalog("other")
        with pytest.raises(CatalogError, match=r"no catalog for game '\.\./x'; known games: other"):
            load_catalog("../x")
    finally:
        catalog_module.load_catalog.cache_clear()
