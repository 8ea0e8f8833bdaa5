"""The built-in proxy art: a legible, camera-friendly picture of any face of any catalog.

`design_face` turns a face's catalog data (its side, the kind of the cards showing it and its
attributes) into a `FaceDesign`: title, type colour, pixel-art icon, corner numeral, recipe and
cost chips, stat rows. `draw_design` paints a design at a given pixel size; `render_face` does
both at a dpi and returns a BGR image exactly the printed card size (landscape faces, marked
`attrs.orientation == "landscape"`, swap width and height). Nothing here knows a game by name:
known words (wood, creeper, pickaxe...) pick icons and colours, and anything unknown falls back
to a colour and an identicon derived from its id, so a new catalog still renders distinct cards.
A header band at the top only and numerals in two opposite corners make every card readable
from both ends yet never rotationally symmetric, so a 180° turn is visible to the camera.
Output is deterministic: the same catalog and `RENDERER_VERSION` give identical pixels.
"""

from __future__ import annotations

import hashlib
import math
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from functools import lru_cache
from typing import Any, Final

import cv2
import numpy as np
from PIL import Image, ImageDraw, ImageFont

from engine.catalog import Catalog, Face, Orientation
from vision.art.errors import ArtError
from vision.art.icons import (
    ICONS,
    TOOL_ICONS,
    PixelIcon,
    Rgb,
    hex_rgb,
    identicon,
    material_overrides,
)

RENDERER_VERSION: Final = "1"
MM_PER_INCH: Final = 25.4
MIN_DPI: Final = 30
MAX_DPI: Final = 1200


class Style(StrEnum):
    """The overall look of a face."""

    FRONT = "front"  # light body: the side a player reads
    BACK_CONTENT = "back-content"  # dark body: a back that still carries game content
    PLAIN_BACK = "plain-back"  # patterned: a back shared by many cards, no content


@dataclass(frozen=True, slots=True, kw_only=True)
class IconRef:
    """An icon by name, with palette overrides (a tool head in gold, a bird in blue)."""

    name: str
    overrides: tuple[tuple[str, str], ...] = ()
    seed: str = ""  # only for identicons: the text the pattern is derived from

    def icon(self, colour: Rgb) -> PixelIcon:
        if self.name == "identicon":
            return identicon(self.seed, "#{:02x}{:02x}{:02x}".format(*colour))
        return ICONS[self.name]


@dataclass(frozen=True, slots=True, kw_only=True)
class Chip:
    """One small icon with a short text: `2x wood` in a recipe, `danger`, `-4`."""

    icon: IconRef | None
    text: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Section:
    """A titled row of chips in the info plate (RECIPE, NEEDS, TRADE, COST...)."""

    title: str
    chips: tuple[Chip, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class Stat:
    """A named number, drawn as icon, label, numeral and a row of pips (values 1-10)."""

    label: str
    value: int
    icon: IconRef | None


@dataclass(frozen=True, slots=True, kw_only=True)
class FaceDesign:
    """Everything that is drawn on one face, decided from catalog data only."""

    face_id: str
    title: str
    subtitle: str
    style: Style
    orientation: Orientation
    colour: Rgb
    icon: IconRef
    icon_count: int
    art: tuple[IconRef, ...]  # when set, drawn in a row instead of `icon` × `icon_count`
    numeral: str
    sections: tuple[Section, ...]
    stats: tuple[Stat, ...]
    text: str
    reveal: int
    footer: str


# --- words -> colours and icons ------------------------------------------------------------

TYPE_COLOURS: Final[Mapping[str, str]] = {
    # materials and resources
    # (materials spread in brightness too, so a grey camera tells them apart)
    "wood": "#7a4f22", "stone": "#8f8f8f", "iron": "#d4d8de", "gold": "#f2c318",
    "diamond": "#1a9aa8", "wild": "#9b4fd1", "emerald": "#1fae55", "ice": "#8fd3f0",
    "stick": "#b08850", "shiny": "#30c8e8", "leather": "#a0582a", "netherite": "#4a4349",
    # Minecraft mobs and hazards
    "creeper": "#3f9e2e", "tnt": "#d8322a", "zombie": "#2f7a46", "skeleton": "#a9a99e",
    "spider": "#6a2424", "witch": "#6a3a8a", "enderman": "#2a1840", "game-over": "#141414",
    # item categories
    "food": "#d8742a", "lighting": "#f0b020", "furnishing": "#b0603a", "tool": "#5a7aa8",
    "armor": "#8090a8", "crossbow": "#7a5030", "spyglass": "#c08a30", "map": "#d2b868",
    "special": "#c8388a", "resource": "#8a6a4a", "chest": "#a8702c", "hunger": "#c8502a",
    "night": "#1c2450", "turn": "#c8502a",
    # landscapes
    "woods": "#3a7a2a", "cherry-blossom": "#e890c0", "lush-cave": "#7ab83a", "geode": "#8a5ac8",
    "taiga": "#1f5a3a", "shipwreck": "#2a6aa0", "jungle": "#1f9a30", "desert-temple": "#e0c070",
    "illager-outpost": "#5a5a6a", "mineshaft": "#8a6a3a", "witch-hut": "#4a2a5a",
    "chasm": "#484848", "ruined-portal": "#6a2aa8", "deep-cave": "#24243a",
    "woodland-mansion": "#6a4a2a", "ocean-monument": "#2a8a8a", "village": "#c8a060",
    # villager professions (robe colours, spread in brightness)
    "librarian": "#efe9d8", "cleric": "#8a3ab8", "fletcher": "#7ab84a", "armorer": "#2a2a2a",
    "toolsmith": "#5a6a78", "weaponsmith": "#3a2418", "cartographer": "#c8c8c0",
    "farmer": "#b07a3a",
    # generators, effects, weather, piles
    "sapling": "#5cae3a", "seed": "#8ac23a", "tree": "#2e7a2a", "furnace": "#5e5e5e",
    "shelter": "#b83a2a", "water": "#2a6ae0", "storm": "#3a3a6a", "rain": "#5a8ac0",
    "mining": "#505a64", "hunting": "#a04a2a", "gardening": "#3a8a2a", "sticks": "#b08850",
    "effects-weather": "#3a6a9a", "sword": "#6a7a9a", "axe": "#8a6a5a", "pickaxe": "#5a6a7a",
    # birds, pigs and structure parts
    "red": "#d8262a", "chuck": "#f2d21a", "bomb": "#2a2a2a", "matilda": "#ececec",
    "blues": "#3a7ae0", "hal": "#3aae3a", "terence": "#8a1a1a", "bubbles": "#f08a1a",
    "stella": "#f06aa8", "pig": "#6ac23a", "king-pig": "#e0c020", "corporal-pig": "#4a8a2a",
    "foreman-pig": "#c87a2a", "chef-pig": "#f0f0f0", "professor-pig": "#7a5ac8",
    "minion-pig": "#8ad05a", "beam": "#b08040",
    # plain backs
    "resource-back": "#2f6a2a", "mob-back": "#3a2a4a",
}  # fmt: skip

# Strong, well separated colours for subjects without a colour of their own (picked by hash).
FALLBACK_COLOURS: Final = (
    "#d8262a", "#2a6ae0", "#2fae3a", "#f0b020", "#8a3ac8", "#f06a1a", "#1aa8a8", "#c8388a",
    "#6a4a2a", "#3a3a8a", "#8ab82a", "#a81a4a", "#2a8a5a", "#c89a2a", "#5a5a5a", "#e060b0",
)  # fmt: skip

# Word -> icon, with palette overrides. Words are ids in kebab-case.
_GOLD = (("R", "#f5d130"), ("r", "#c08a10"), ("W", "#fff59a"))
_BEAMS = {
    "wood": (),
    "stone": (("L", "#9a9a9a"), ("W", "#7a7a7a"), ("B", "#4a4a4a")),
    "ice": (("L", "#bfe8f8"), ("W", "#8fd3f0"), ("B", "#4a9ac8")),
}
ICON_WORDS: Final[Mapping[str, IconRef]] = {
    **{name: IconRef(name=name) for name in ICONS},
    "iron-ingot": IconRef(name="iron"), "ingot": IconRef(name="iron"),
    "gold-ingot": IconRef(name="gold"), "golden-apple": IconRef(name="apple", overrides=_GOLD),
    "gold-apple": IconRef(name="apple", overrides=_GOLD),
    "glow-berries": IconRef(name="berries", overrides=(("R", "#ffb020"), ("r", "#c07010"))),
    "sweet-berries": IconRef(name="berries"), "wildberry": IconRef(name="berries"),
    "glowberry": IconRef(name="berries", overrides=(("R", "#ffb020"), ("r", "#c07010"))),
    "jack-o-lantern": IconRef(name="pot", overrides=(("O", "#f08a1a"),)),
    "sea-lantern": IconRef(name="lantern", overrides=(("Y", "#a8f0e0"), ("G", "#2a6a6a"))),
    "lantern": IconRef(name="lantern"), "glowstone": IconRef(name="glow"),
    "froglight": IconRef(name="glow", overrides=(("Y", "#c8f080"), ("O", "#6ab02a"))),
    "bookshelf": IconRef(name="book"), "decorated-pot": IconRef(name="pot"),
    "clay-pot": IconRef(name="pot"), "potted-flower": IconRef(name="flower"),
    "illager-banner": IconRef(name="banner"), "explorer-map": IconRef(name="map"),
    "totem-of-undying": IconRef(name="totem"), "wet-sponge": IconRef(name="sponge"),
    "iron-armor": IconRef(name="armor"), "furnishing": IconRef(name="house"),
    "lighting": IconRef(name="sun"), "hunger": IconRef(name="food"),
    "health": IconRef(name="heart"), "night": IconRef(name="moon"), "day": IconRef(name="sun"),
    "daylight": IconRef(name="sun"), "game-over": IconRef(name="skull"),
    "danger": IconRef(name="skull"), "shiny": IconRef(name="diamond"),
    "wild": IconRef(name="star"), "points": IconRef(name="star"), "rarity": IconRef(name="star"),
    "power": IconRef(name="bolt"), "aim": IconRef(name="eye"), "cost": IconRef(name="food"),
    "reveal": IconRef(name="zombie"), "defeats": IconRef(name="sword"),
    "distance": IconRef(name="bird"), "slingshot": IconRef(name="stick"),
    "shelter": IconRef(name="house"), "water": IconRef(name="drop"), "storm": IconRef(name="bolt"),
    "rain": IconRef(name="cloud"), "sticks": IconRef(name="stick"), "mining": IconRef(name="pickaxe"),
    "hunting": IconRef(name="sword"), "gardening": IconRef(name="sapling"),
    "effects-weather": IconRef(name="cloud"), "effect": IconRef(name="sun"),
    "weather": IconRef(name="cloud"), "generator": IconRef(name="sapling"),
    "material": IconRef(name="chest"), "village": IconRef(name="villager"),
    "mob": IconRef(name="zombie"), "turn": IconRef(name="food"), "chest-filled": IconRef(name="chest"),
    "resource-back": IconRef(name="grass"), "resource": IconRef(name="grass"),
    "pig": IconRef(name="pig"), "beam": IconRef(name="beam-v"),
    # landscapes
    "woods": IconRef(name="tree"),
    "cherry-blossom": IconRef(name="tree", overrides=(("G", "#e890c0"), ("L", "#ffc8e0"))),
    "lush-cave": IconRef(name="berries", overrides=(("R", "#ffb020"), ("r", "#c07010"))),
    "geode": IconRef(name="diamond", overrides=(("C", "#a070e0"), ("D", "#6a3ab0"), ("W", "#e8d0ff"))),
    "taiga": IconRef(name="tree", overrides=(("G", "#1f5a3a"), ("L", "#3a7a4a"))),
    "shipwreck": IconRef(name="chest", overrides=(("B", "#3a5a7a"), ("L", "#5a8ab0"))),
    "jungle": IconRef(name="tree", overrides=(("G", "#1f9a30"), ("L", "#8ad02a"))),
    "desert-temple": IconRef(name="triangle", overrides=(("S", "#e8c878"),)),
    "illager-outpost": IconRef(name="banner"),
    "mineshaft": IconRef(name="pickaxe", overrides=(("M", "#8c8c8c"), ("m", "#5c5c5c"), ("W", "#b8b8b8"))),
    "witch-hut": IconRef(name="witch"),
    "chasm": IconRef(name="mountain", overrides=(("G", "#585858"), ("W", "#a8a8a8"))),
    "ruined-portal": IconRef(name="square", overrides=(("S", "#7a2ab8"),)),
    "deep-cave": IconRef(name="skull"),
    "woodland-mansion": IconRef(name="house", overrides=(("R", "#5a3a1a"), ("W", "#c8a878"))),
    "ocean-monument": IconRef(name="hexagon", overrides=(("S", "#3ab8a8"),)),
}  # fmt: skip

BIRD_COLOURS: Final[Mapping[str, tuple[str, str]]] = {
    "red": ("#e02a2a", "#f4e4c8"), "chuck": ("#f2d21a", "#fff4c0"), "bomb": ("#2a2a2a", "#e8e0d0"),
    "matilda": ("#f4f4f4", "#f4e4c8"), "blues": ("#3a7ae0", "#c8e0ff"),
    "hal": ("#3aae3a", "#e8f4c8"), "terence": ("#8a1a1a", "#e8c8b0"),
    "bubbles": ("#f08a1a", "#ffe0a0"), "stella": ("#f06aa8", "#ffe0f0"),
}  # fmt: skip

# Short rule reminders for words the catalogs use; shown when a face has no text attribute.
RULE_HINTS: Final[Mapping[tuple[str, str], str]] = {
    ("kind", "creeper"): "When flipped up: every player discards one resource card.",
    ("kind", "tnt"): "Take the top card of every pile; keep 2 resources, discard the rest.",
    ("tool-side", "sword"): "Cancel your own creeper discard.",
    ("tool-side", "shovel"): "An opponent skips one action of their next turn.",
    ("tool-side", "pickaxe"): "+1 action this turn.",
    ("tool-side", "axe"): "Counts as 2 wood when crafting.",
    ("tool-side", "hoe"): "Discard the top card of every resource pile.",
    ("category", "crossbow"): "Discard: defeat 2 mobs on the table.",
    ("category", "spyglass"): "Discard: look at the backs of the display.",
    ("category", "map"): "Discard: fetch the mansion or the monument.",
    ("category", "armor"): "Discard: cancel one mob reveal.",
    ("category", "emerald"): "Pays any villager.",
    ("category", "tool"): "Used once: turn 180°. Used twice: discard.",
    ("kind", "game-over"): "Everybody loses.",
}

# Numeric attributes shown as the corner numeral, first present wins.
NUMERAL_KEYS: Final = (
    "quantity", "points", "value", "cost", "chest", "power", "hunger", "food", "reduction",
    "defeats",
)  # fmt: skip
# Attributes that describe setup or bookkeeping, not what a player reads on the card.
HIDDEN_KEYS: Final = frozenset(
    {"orientation", "per_player", "per_player_minus_one", "start", "fixed", "kind", "back_part",
     "stackable", "harvest_turns", "first_game"}
)  # fmt: skip
# Attributes whose value names the subject of the face (consumed by colour and icon choice).
SUBJECT_KEYS: Final = (
    "tool", "mob", "character", "villager", "item", "resource", "part", "landscape", "material",
    "category", "beam", "pile",
)  # fmt: skip


def _norm(word: Any) -> str:
    return str(word).strip().lower().replace("_", "-").replace(" ", "-")


def _tail(face_id: str) -> str:
    """`landscape.lush_cave` -> `lush-cave`; `wood-hoe/craft` -> `wood-hoe`."""
    tail = face_id.split("/")[0]
    return _norm(tail.rsplit(".", 1)[-1])


def _hash_pick(text: str, n: int) -> int:
    return int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:4], "big") % n


def _mix(a: Rgb, b: Rgb, t: float) -> Rgb:
    """`t` of the way from a to b."""
    return (
        round(a[0] + (b[0] - a[0]) * t),
        round(a[1] + (b[1] - a[1]) * t),
        round(a[2] + (b[2] - a[2]) * t),
    )


def _luma(c: Rgb) -> float:
    return 0.299 * c[0] + 0.587 * c[1] + 0.114 * c[2]


def _ink(bg: Rgb) -> Rgb:
    return (20, 20, 20) if _luma(bg) > 150 else (250, 250, 250)


def icon_for_word(word: Any) -> IconRef | None:
    """The icon for a catalog word (`diamond-pickaxe`, `iron-ingot`, `zombie`), if any."""
    w = _norm(word)
    if not w or w in ("none", "true", "false"):
        return None
    if w in ICON_WORDS:
        return ICON_WORDS[w]
    parts = w.split("-")
    # A material-tool pair: `diamond-pickaxe` -> pickaxe with a diamond head.
    if len(parts) == 2 and parts[1] in TOOL_ICONS:
        return IconRef(name=parts[1], overrides=tuple(sorted(material_overrides(parts[0]).items())))
    if w.startswith("village-"):
        return ICON_WORDS["village"]
    for part in reversed(parts):
        if part in ICON_WORDS and part not in ("back", "card"):
            return ICON_WORDS[part]
    return None


def colour_for_word(word: Any) -> str | None:
    """The type colour for a catalog word, trying its last parts (`resource-back`) too."""
    w = _norm(word)
    if w in TYPE_COLOURS:
        return TYPE_COLOURS[w]
    if w.startswith("village-"):
        return TYPE_COLOURS["village"]
    return None


# --- catalog data -> design ------------------------------------------------------------------


def face_size_mm(catalog: Catalog, face_id: str) -> tuple[float, float]:
    """(width, height) in mm of a face as printed: the catalog card size, turned if landscape."""
    w, h = catalog.card_size_mm
    if catalog.face(face_id).orientation is Orientation.LANDSCAPE:
        return (max(w, h), min(w, h))
    return (min(w, h), max(w, h))


def mm_to_px(mm: float, dpi: float) -> int:
    return round(mm * dpi / MM_PER_INCH)


def face_size_px(catalog: Catalog, face_id: str, dpi: float) -> tuple[int, int]:
    """(width, height) in pixels of a face rendered at `dpi`."""
    w, h = face_size_mm(catalog, face_id)
    return (mm_to_px(w, dpi), mm_to_px(h, dpi))


def _face_attrs(catalog: Catalog, face: Face) -> dict[str, Any]:
    """The face's attributes, plus those of its card when the face is one card's front.

    Keys that describe the card's other face (its back's item, material...) are left out.
    """
    attrs: dict[str, Any] = {}
    cards = catalog.cards_showing(face.id)
    if face.side == "front" and len(cards) == 1 and cards[0].front == face.id:
        card = cards[0]
        other = catalog.faces[card.back].attrs if card.back != face.id else {}
        attrs.update({k: v for k, v in card.attrs.items() if k not in other})
    attrs.update(face.attrs)
    return attrs


def _kind(catalog: Catalog, face: Face) -> str:
    kinds = sorted({c.kind for c in catalog.cards_showing(face.id)})
    if "kind" in face.attrs:
        return _norm(face.attrs["kind"])
    return kinds[0] if len(kinds) == 1 else ""


def _split_name(name: str) -> tuple[str, str]:
    """`Wood Hoe (crafting side)` -> (`Wood Hoe`, `crafting side`)."""
    if name.endswith(")") and " (" in name:
        head, _, rest = name.partition(" (")
        return head, rest[:-1]
    return name, ""


def _humanize(key: str) -> str:
    return key.replace("_", " ").replace("-", " ")


def _chips_for_mapping(value: Mapping[str, Any]) -> tuple[Chip, ...]:
    chips = []
    for k, v in value.items():
        icon = icon_for_word(k)
        amount = v if isinstance(v, int | float) and not isinstance(v, bool) else None
        if amount is None:
            chips.append(Chip(icon=icon, text=f"{_humanize(k)}" if icon is None else str(v)))
            continue
        num = f"{amount:g}"
        chips.append(Chip(icon=icon, text=f"x{num}" if icon else f"{_humanize(k)} {num}"))
    return tuple(chips)


def _chips_for_words(words: Iterable[Any]) -> tuple[Chip, ...]:
    chips = []
    for w in words:
        icon = icon_for_word(w)
        chips.append(Chip(icon=icon, text="" if icon else _humanize(str(w))))
    return tuple(chips)


def _pick_colour(catalog: Catalog, face: Face, attrs: Mapping[str, Any], kind: str) -> Rgb:
    order = (
        "resource", "material", "character", "mob", "villager", "landscape", "category", "item",
        "part",
    )  # fmt: skip
    candidates = [attrs[k] for k in order if isinstance(attrs.get(k), str)]
    candidates += [_tail(face.id)]
    candidates += [attrs[k] for k in ("pile",) if isinstance(attrs.get(k), str)]
    candidates += [kind]
    for word in candidates:
        found = colour_for_word(word)
        if found:
            return hex_rgb(found)
    key = f"{catalog.game}:{next((_norm(w) for w in candidates if w), face.id)}"
    return hex_rgb(FALLBACK_COLOURS[_hash_pick(key, len(FALLBACK_COLOURS))])


def _pick_icon(catalog: Catalog, face: Face, attrs: Mapping[str, Any], kind: str) -> IconRef:
    tool = attrs.get("tool")
    if isinstance(tool, str) and _norm(tool) in TOOL_ICONS:
        material = attrs.get("material")
        over = material_overrides(_norm(material)) if isinstance(material, str) else {}
        return IconRef(name=_norm(tool), overrides=tuple(sorted(over.items())))
    character = attrs.get("character")
    if isinstance(character, str):
        c = _norm(character)
        if c in BIRD_COLOURS:
            body, belly = BIRD_COLOURS[c]
            return IconRef(name="bird", overrides=(("R", body), ("W", belly)))
        if "pig" in c:
            return IconRef(name="pig")
    part, beam = attrs.get("part"), attrs.get("beam")
    if isinstance(part, str) and _norm(part) == "beam":
        orient = "beam-h" if _norm(beam) == "horizontal" else "beam-v"
        return IconRef(name=orient, overrides=_BEAMS.get(_norm(attrs.get("material", "")), ()))
    if isinstance(attrs.get("chest"), int):
        return IconRef(name="chest")
    words: list[Any] = [attrs.get(k) for k in ("mob", "villager", "item", "resource", "part")]
    words += [_tail(face.id), attrs.get("landscape"), attrs.get("pile"), attrs.get("category"), kind]
    words += _norm(face.name).split("-")
    for word in words:
        if word is None:
            continue
        found = icon_for_word(word)
        if found:
            return found
    return IconRef(name="identicon", seed=f"{catalog.game}:{face.id}")


def _numeral(attrs: Mapping[str, Any]) -> tuple[str, str]:
    """(numeral text, the key it came from) or ("", "")."""
    for key in NUMERAL_KEYS:
        v = attrs.get(key)
        if isinstance(v, int | float) and not isinstance(v, bool):
            return (f"{v:g}", key)
    return ("", "")


def design_face(catalog: Catalog, face_id: str) -> FaceDesign:
    """Decide what to draw on a face from its catalog data (no drawing here)."""
    face = catalog.face(face_id)
    attrs = _face_attrs(catalog, face)
    kind = _kind(catalog, face)
    shared = len(catalog.cards_showing(face_id)) > 1
    content = {k for k in attrs if k not in HIDDEN_KEYS and k != "pile"}
    if (face.side == "back" and not content) or (face.side == "back" and shared and set(attrs) <= {"part", "pile"} | HIDDEN_KEYS):
        style = Style.PLAIN_BACK
    elif face.side == "back":
        style = Style.BACK_CONTENT
    else:
        style = Style.FRONT
    colour = _pick_colour(catalog, face, attrs, kind)
    icon = _pick_icon(catalog, face, attrs, kind)
    title, subtitle = _split_name(face.name)
    if not subtitle:
        group = next(
            (attrs[k] for k in ("category", "part") if isinstance(attrs.get(k), str)), kind
        )
        if style is Style.PLAIN_BACK:
            subtitle = "card back"
        elif group:
            subtitle = _humanize(_norm(group))
    numeral, numeral_key = _numeral(attrs)

    quantity = attrs.get("quantity")
    icon_count = quantity if isinstance(quantity, int) and 1 <= quantity <= 4 else 1
    art: tuple[IconRef, ...] = ()
    needs = attrs.get("needs")
    trade = attrs.get("trade")
    if isinstance(needs, tuple) and needs and all(isinstance(n, str) for n in needs):
        # What a chest needs is what tells chests apart: draw it large.
        art = tuple(icon_for_word(n) or IconRef(name="identicon", seed=str(n)) for n in needs)
    elif isinstance(trade, Mapping) and isinstance(trade.get("receive"), str):
        art = (icon, icon_for_word(trade["receive"]) or IconRef(name="identicon", seed=trade["receive"]))

    sections: list[Section] = []
    stats: list[Stat] = []
    used = set(SUBJECT_KEYS) | HIDDEN_KEYS | {"quantity", "name", "text", "reveal"}
    for key, value in attrs.items():
        if key in used:
            continue
        label = _humanize(key)
        if isinstance(value, bool):
            if value:
                sections.append(Section(title="", chips=(Chip(icon=icon_for_word(key), text=label),)))
            continue
        if isinstance(value, int | float):
            if key == numeral_key and key == "chest":
                continue
            stats.append(Stat(label=label, value=int(value), icon=icon_for_word(key)))
            continue
        if isinstance(value, Mapping):
            if key == "trade":
                chips = _chips_for_words([value.get("pay", "?")])
                chips += (Chip(icon=None, text=">"), *_chips_for_words([value.get("receive", "?")]))
                if value.get("or_emerald"):
                    chips += (Chip(icon=None, text="or"), Chip(icon=icon_for_word("emerald"), text=""))
                sections.append(Section(title="trade", chips=chips))
            else:
                sections.append(Section(title=label, chips=_chips_for_mapping(value)))
            continue
        if isinstance(value, tuple):
            if value and all(isinstance(v, Mapping) for v in value):
                options: tuple[Chip, ...] = ()
                for i, option in enumerate(value):
                    if i:
                        options += (Chip(icon=None, text="or"),)
                    options += _chips_for_mapping(option)
                sections.append(Section(title=label, chips=options))
            else:
                sections.append(Section(title=label, chips=_chips_for_words(value)))
            continue
        if isinstance(value, str):
            icon_ref = icon_for_word(value)
            sections.append(
                Section(title=label, chips=(Chip(icon=icon_ref, text="" if icon_ref else _humanize(value)),))
            )

    text = str(attrs.get("text", ""))
    if not text:
        tool = attrs.get("tool")
        if face.side == "back" and isinstance(tool, str) and "recipe" not in attrs and not attrs.get("category"):
            text = RULE_HINTS.get(("tool-side", _norm(tool)), "")
        if not text and isinstance(attrs.get("category"), str):
            text = RULE_HINTS.get(("category", _norm(attrs["category"])), "")
        if not text and kind:
            text = RULE_HINTS.get(("kind", kind), "")
    if style is Style.BACK_CONTENT and isinstance(attrs.get("tool"), str) and not attrs.get("category"):
        subtitle = subtitle or "tool side"
    reveal = attrs.get("reveal")
    pile = attrs.get("pile")
    footer = face.id if not isinstance(pile, str) else f"{face.id} · pile {pile}"
    return FaceDesign(
        face_id=face.id,
        title=title,
        subtitle=subtitle,
        style=style,
        orientation=face.orientation,
        colour=colour,
        icon=icon,
        icon_count=icon_count,
        art=art,
        numeral=numeral,
        sections=tuple(sections),
        stats=tuple(stats),
        text=text,
        reveal=reveal if isinstance(reveal, int) and not isinstance(reveal, bool) else 0,
        footer=footer,
    )


# --- drawing -----------------------------------------------------------------------------------

DARK: Final[Rgb] = (24, 24, 24)
WHITE: Final[Rgb] = (255, 255, 255)
PLATE: Final[Rgb] = (250, 247, 238)
TOOL_BODY: Final[Rgb] = (78, 84, 92)
TEXTURE_CONTRAST: Final = 0.36
TEXTURE_CELL_MM: Final = 5.0


@lru_cache(maxsize=64)
def _font(size_px: int) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    return ImageFont.load_default(size=max(6, size_px))


_SUBSTITUTES: Final = {"×": "x", "−": "-", "–": "-", "—": "-", "→": ">", "←": "<", "★": "*"}


@lru_cache(maxsize=4096)
def _has_glyph(ch: str) -> bool:
    font = _font(24)
    return ch.isspace() or bytes(font.getmask(ch)) != bytes(font.getmask("\uffff"))


def safe_text(text: str) -> str:
    """Text the built-in font can draw: common symbols spelled in ASCII, accents dropped."""
    out = []
    for ch in text:
        ch = _SUBSTITUTES.get(ch, ch)
        if len(ch) == 1 and not _has_glyph(ch):
            base = "".join(
                c for c in unicodedata.normalize("NFKD", ch) if not unicodedata.combining(c)
            )
            ch = base if base and all(_has_glyph(c) for c in base) else "?"
        out.append(ch)
    return "".join(out)


@dataclass(frozen=True, slots=True)
class _Box:
    x0: int
    y0: int
    x1: int
    y1: int

    @property
    def w(self) -> int:
        return self.x1 - self.x0

    @property
    def h(self) -> int:
        return self.y1 - self.y0

    def inset(self, d: int) -> _Box:
        return _Box(self.x0 + d, self.y0 + d, self.x1 - d, self.y1 - d)


class _Painter:
    """Drawing helpers on one PIL image, in millimetre units."""

    def __init__(self, image: Image.Image, px_per_mm: float) -> None:
        self.image = image
        self.draw = ImageDraw.Draw(image)
        self.k = px_per_mm

    def px(self, mm: float) -> int:
        return round(mm * self.k)

    def text_width(self, text: str, size: int) -> int:
        box = self.draw.textbbox((0, 0), safe_text(text), font=_font(size))
        return int(box[2] - box[0])

    def fit_size(self, text: str, max_w: int, max_size: int, min_size: int = 6) -> int:
        size = max_size
        while size > min_size and self.text_width(text, size) > max_w:
            size = max(min_size, int(size * 0.92))
        return size

    def text(
        self,
        xy: tuple[int, int],
        text: str,
        size: int,
        fill: Rgb,
        anchor: str = "la",
        bold: bool = False,
    ) -> None:
        stroke = max(1, size // 16) if bold else 0
        self.draw.text(
            xy, safe_text(text), font=_font(size), fill=fill, anchor=anchor, stroke_width=stroke, stroke_fill=fill
        )

    def wrap(self, text: str, size: int, max_w: int) -> list[str]:
        lines: list[str] = []
        current = ""
        for word in text.split():
            trial = f"{current} {word}".strip()
            if self.text_width(trial, size) <= max_w or not current:
                current = trial
            else:
                lines.append(current)
                current = word
        if current:
            lines.append(current)
        return lines

    def icon(self, ref: IconRef, box: _Box, colour: Rgb, halo: Rgb | None = None) -> None:
        """Draw an icon as large as fits in `box`, centred, scaled by a whole factor.

        With `halo`, the icon gets a one-pixel sticker border of that colour, which keeps it
        legible on a textured panel.
        """
        icon = ref.icon(colour)
        rgba = icon.rgba(dict(ref.overrides) if ref.overrides else None)
        if halo is not None:
            padded = np.zeros((rgba.shape[0] + 2, rgba.shape[1] + 2, 4), np.uint8)
            padded[1:-1, 1:-1] = rgba
            grown = cv2.dilate(padded[:, :, 3], np.ones((3, 3), np.uint8))
            ring = (grown > 0) & (padded[:, :, 3] == 0)
            padded[ring] = (*halo, 255)
            rgba = padded
        h, w = rgba.shape[:2]
        # Nearest-neighbour keeps the pixel look at the largest size that fits, so the icon
        # covers the same share of the card at every dpi.
        scale = min(box.w / w, box.h / h)
        size = (max(1, int(w * scale)), max(1, int(h * scale)))
        big = cv2.resize(rgba, size, interpolation=cv2.INTER_NEAREST)
        tile = Image.fromarray(big, "RGBA")
        x = box.x0 + (box.w - tile.width) // 2
        y = box.y0 + (box.h - tile.height) // 2
        self.image.paste(tile, (x, y), tile)


def _badge(numeral: str, icon: IconRef, colour: Rgb, size: int) -> Image.Image:
    """The corner numeral (or a small icon when the face has no number), as its own image."""
    img = Image.new("RGBA", (size, size), (0, 0, 0, 0))
    d = ImageDraw.Draw(img)
    r = max(2, size // 6)
    line = max(2, size // 14)
    d.rounded_rectangle((0, 0, size - 1, size - 1), radius=r, fill=WHITE, outline=DARK, width=line)
    if numeral:
        turnable = any(ch in "69" for ch in numeral)
        fsize = int(size * (0.78 if len(numeral) == 1 else 0.6) * (0.86 if turnable else 1.0))
        stroke = max(1, fsize // 14)
        d.text(
            (size / 2, size * (0.44 if turnable else 0.5)), safe_text(numeral), font=_font(fsize), fill=DARK, anchor="mm",
            stroke_width=stroke, stroke_fill=DARK,
        )  # fmt: skip
        if turnable:
            # Underline 6 and 9 so the turned corner never reads as the other number.
            y = int(size * 0.8)
            d.rectangle((size * 0.28, y, size * 0.72, y + max(1, size // 16)), fill=DARK)
    else:
        p = _Painter(img, 1.0)
        inner = size - 4 * line
        p.icon(icon, _Box(2 * line, 2 * line, 2 * line + inner, 2 * line + inner), colour)
    return img


def _cell_bit(seed: str, i: int, j: int) -> bool:
    return bool(hashlib.sha256(f"{seed}#{i},{j}".encode()).digest()[0] & 1)


def _checker(draw: ImageDraw.ImageDraw, box: _Box, cell: float, a: Rgb, b: Rgb, seed: str) -> None:
    """A two-tone block texture (like a Minecraft block) filling `box`, fixed by `seed`.

    Each cell's tone depends only on the seed and its column and row, and the grid has a
    whole number of cells of about `cell` px, so a face shows the same pattern at every dpi.
    """
    draw.rectangle((box.x0, box.y0, box.x1 - 1, box.y1 - 1), fill=a)
    nx = max(1, int(box.w / cell + 0.5))
    ny = max(1, int(box.h / cell + 0.5))
    for j in range(ny):
        y0 = box.y0 + round(j * box.h / ny)
        y1 = box.y0 + round((j + 1) * box.h / ny)
        for i in range(nx):
            if _cell_bit(seed, i, j):
                x0 = box.x0 + round(i * box.w / nx)
                x1 = box.x0 + round((i + 1) * box.w / nx)
                draw.rectangle((x0, y0, x1 - 1, y1 - 1), fill=b)


def draw_design(design: FaceDesign, width_px: int, height_px: int) -> np.ndarray:
    """Paint a design on a `width_px` × `height_px` card; returns BGR uint8."""
    if width_px < 40 or height_px < 40:
        raise ArtError(f"face {design.face_id!r}: {width_px}×{height_px} px is too small to draw")
    landscape = width_px > height_px
    short_mm = 63.0
    k = min(width_px, height_px) / short_mm  # px per "design millimetre"
    img = Image.new("RGB", (width_px, height_px), WHITE)
    p = _Painter(img, k)
    d = p.draw
    colour = design.colour
    ink_band = _ink(colour)

    if design.style is Style.FRONT:
        body = _mix(colour, WHITE, 0.62)
    elif design.style is Style.BACK_CONTENT:
        body = _mix(TOOL_BODY, colour, 0.18)
    else:
        body = _mix(colour, DARK, 0.45)

    # Card outline: dark rounded border, body inside.
    radius = p.px(3.2)
    border = p.px(1.6)
    d.rounded_rectangle((0, 0, width_px - 1, height_px - 1), radius=radius, fill=DARK)
    inner = _Box(border, border, width_px - border, height_px - border)
    d.rounded_rectangle(
        (inner.x0, inner.y0, inner.x1 - 1, inner.y1 - 1), radius=max(1, radius - border), fill=body
    )

    pad = p.px(1.8)
    band_h = p.px(15.0 if not landscape else 13.0)
    band = _Box(inner.x0, inner.y0, inner.x1, inner.y0 + band_h)
    d.rounded_rectangle(
        (band.x0, band.y0, band.x1 - 1, band.y1 - 1), radius=max(1, radius - border), fill=colour
    )
    d.rectangle((band.x0, band.y0 + band_h // 2, band.x1 - 1, band.y1 - 1), fill=colour)
    d.rectangle((band.x0, band.y1, band.x1 - 1, band.y1 + p.px(0.7)), fill=DARK)

    # Corner numerals: top-left upright, bottom-right turned 180°.
    badge_size = band_h - 2 * pad
    badge = _badge(design.numeral, design.icon, colour, badge_size)
    img.paste(badge, (band.x0 + pad, band.y0 + pad), badge)
    foot_h = p.px(9.0)
    small = foot_h - p.px(1.6)
    badge_b = _badge(design.numeral, design.icon, colour, small).rotate(180)
    img.paste(badge_b, (inner.x1 - pad - small, inner.y1 - p.px(0.8) - small), badge_b)

    # Title and subtitle in the band.
    tx = band.x0 + pad + badge_size + pad
    tw = band.x1 - pad - tx
    band_inner = band_h - 2 * pad
    title_size = p.fit_size(design.title, tw, min(p.px(7.2), int(band_inner * 0.62)))
    p.text((tx, band.y0 + pad + p.px(0.3)), design.title, title_size, ink_band, bold=True)
    if design.subtitle:
        sub = design.subtitle.upper()
        sub_size = p.fit_size(sub, tw, min(p.px(3.4), int(band_inner * 0.28)))
        p.text((tx, band.y1 - pad), sub, sub_size, ink_band, anchor="ls")

    # Footer: face id, small, bottom left (the bottom never mirrors the header band).
    ink_body = _ink(body)
    foot_y = inner.y1 - p.px(0.8) - small // 2
    foot_text_w = inner.w - 3 * pad - small
    foot_size = p.fit_size(design.footer, foot_text_w, p.px(3.0))
    p.text((inner.x0 + pad + p.px(1.0), foot_y), design.footer, foot_size, ink_body, anchor="lm")

    content = _Box(inner.x0 + pad, band.y1 + p.px(0.7) + pad, inner.x1 - pad, inner.y1 - foot_h - p.px(0.6))
    info_needed = _info_height(p, design, content.w if not landscape else content.w // 2)
    if landscape:
        split = content.x0 + int(content.w * 0.46)
        art = _Box(content.x0, content.y0, split, content.y1)
        info = _Box(split + pad, content.y0, content.x1, content.y1)
    else:
        info_h = min(info_needed, int(content.h * 0.6))
        art = _Box(content.x0, content.y0, content.x1, content.y1 - (info_h + pad if info_h else 0))
        info = _Box(content.x0, art.y1 + pad, content.x1, content.y1)

    _draw_art(p, design, art, body)
    if info.h > p.px(3) and info_needed:
        _draw_info(p, design, info)
    out = np.asarray(img, dtype=np.uint8)[:, :, ::-1]
    return np.ascontiguousarray(out)


def _art_panel_colours(design: FaceDesign, body: Rgb) -> tuple[Rgb, Rgb]:
    # The two tones of the panel texture differ by a fixed share of darkness, so the pattern
    # (unique per face) stays visible to a grey camera whatever the type colour.
    if design.style is Style.FRONT:
        a = _mix(design.colour, WHITE, 0.84)
    elif design.style is Style.BACK_CONTENT:
        a = _mix(body, WHITE, 0.3)
    else:
        a = _mix(design.colour, WHITE, 0.1)
    return a, _mix(a, DARK, TEXTURE_CONTRAST)


def _draw_art(p: _Painter, design: FaceDesign, box: _Box, body: Rgb) -> None:
    d = p.draw
    a, b = _art_panel_colours(design, body)
    halo = a
    line = max(1, p.px(0.6))
    d.rectangle((box.x0, box.y0, box.x1 - 1, box.y1 - 1), fill=DARK)
    panel = box.inset(line)
    _checker(d, panel, TEXTURE_CELL_MM * p.k, a, b, f"{design.face_id}:{design.style}")

    art = panel.inset(p.px(1.5))
    if design.reveal > 0:
        # Reveal marker: a dark strip on the right edge with one mob head per revealed mob.
        strip_w = max(p.px(9), art.w // 4)
        strip = _Box(panel.x1 - strip_w, panel.y0, panel.x1, panel.y1)
        d.rectangle((strip.x0, strip.y0, strip.x1 - 1, strip.y1 - 1), fill=(40, 24, 40))
        heads = min(design.reveal, 3)
        head = min(strip.w - p.px(2), (strip.h - p.px(10)) // (heads + 1))
        hx = strip.x0 + (strip.w - head) // 2
        y = strip.y0 + p.px(2)
        for _ in range(heads):
            p.icon(IconRef(name="zombie"), _Box(hx, y, hx + head, y + head), design.colour)
            y += head + p.px(1)
        label = f"+{design.reveal}"
        size = p.fit_size(label, strip.w - p.px(1), p.px(8))
        centre = (strip.x0 + strip.x1) // 2
        p.text((centre, strip.y1 - p.px(2)), label, size, (255, 200, 60), anchor="ms", bold=True)
        art = _Box(art.x0, art.y0, strip.x0 - p.px(1.5), art.y1)

    if design.art:
        _draw_row(p, design.art, art, design.colour, halo)
        return
    n = design.icon_count
    if n <= 1:
        p.icon(design.icon, art, design.colour, halo)
        return
    # Several icons: staggered down a tall panel (across a wide one) so counts read at a glance.
    stagger = {2: (0.0, 1.0), 3: (0.0, 1.0, 0.5), 4: (0.0, 1.0, 0.0, 1.0)}[n]
    for i in range(n):
        if art.h >= art.w:
            cell_w, cell_h = int(art.w * 0.62), art.h // n
            x = art.x0 + int((art.w - cell_w) * stagger[i])
            y = art.y0 + i * cell_h
            spot = _Box(x, y, x + cell_w, y + cell_h)
        else:
            cell_w = art.w // n
            x = art.x0 + i * cell_w
            spot = _Box(x, art.y0, x + cell_w, art.y1)
        p.icon(design.icon, spot, design.colour, halo)


def _draw_row(
    p: _Painter, icons: Sequence[IconRef], box: _Box, colour: Rgb, halo: Rgb | None = None
) -> None:
    """Several icons side by side (stacked when the box is tall), as large as they fit."""
    n = len(icons)
    tall = box.h > box.w * 1.2
    for i, ref in enumerate(icons):
        if tall:
            step = box.h // n
            cell = _Box(box.x0, box.y0 + i * step, box.x1, box.y0 + (i + 1) * step)
        else:
            step = box.w // n
            cell = _Box(box.x0 + i * step, box.y0, box.x0 + (i + 1) * step, box.y1)
        p.icon(ref, cell.inset(p.px(1.0)), colour, halo)


def _section_rows(design: FaceDesign) -> list[Section]:
    return [s for s in design.sections if s.chips]


def _info_height(p: _Painter, design: FaceDesign, width: int) -> int:
    rows = len(_section_rows(design)) + len(design.stats)
    text_lines = len(p.wrap(design.text, p.px(3.6), width - p.px(4))) if design.text else 0
    if rows == 0 and text_lines == 0:
        return 0
    return p.px(2) + rows * p.px(9.0) + text_lines * p.px(4.6) + p.px(1.5)


def _draw_info(p: _Painter, design: FaceDesign, box: _Box) -> None:
    d = p.draw
    d.rounded_rectangle(
        (box.x0, box.y0, box.x1 - 1, box.y1 - 1), radius=p.px(1.5), fill=PLATE, outline=DARK,
        width=max(1, p.px(0.5)),
    )  # fmt: skip
    sections = _section_rows(design)
    rows = len(sections) + len(design.stats)
    text_size = p.px(3.6)
    lines = p.wrap(design.text, text_size, box.w - p.px(4)) if design.text else []
    avail = box.h - p.px(3) - len(lines) * p.px(4.6)
    row_h = min(p.px(11), max(p.px(4), avail // rows)) if rows else 0
    y = box.y0 + p.px(1.5)
    x0 = box.x0 + p.px(2)
    label_w = int(box.w * 0.3)
    stat_label_w = int(box.w * 0.27)
    for section in sections:
        cell = _Box(x0, y, box.x1 - p.px(2), y + row_h)
        if section.title:
            size = p.fit_size(section.title.upper(), label_w - p.px(1), int(row_h * 0.42))
            p.text((cell.x0, cell.y0 + row_h // 2), section.title.upper(), size, DARK, anchor="lm")
            chips_box = _Box(cell.x0 + label_w, cell.y0, cell.x1, cell.y1)
        else:
            chips_box = cell
        _draw_chips(p, section.chips, chips_box)
        y += row_h
    for stat in design.stats:
        cell = _Box(x0, y, box.x1 - p.px(2), y + row_h)
        _draw_stat(p, stat, cell, stat_label_w, design.colour)
        y += row_h
    for line in lines:
        p.text((x0, y + p.px(0.6)), line, text_size, DARK, anchor="la")
        y += p.px(4.6)


def _draw_chips(p: _Painter, chips: Sequence[Chip], box: _Box) -> None:
    icon_s = int(box.h * 0.86)
    text_size = int(box.h * 0.55)
    widths = []
    for chip in chips:
        w = (icon_s if chip.icon else 0) + (p.text_width(chip.text, text_size) + p.px(0.8) if chip.text else 0)
        widths.append(w + p.px(1.2))
    total = sum(widths)
    if total > box.w and total > 0:
        shrink = box.w / total
        icon_s = max(4, int(icon_s * shrink))
        text_size = max(6, int(text_size * shrink))
    x = box.x0
    cy = (box.y0 + box.y1) // 2
    for chip in chips:
        if chip.icon:
            p.icon(chip.icon, _Box(x, cy - icon_s // 2, x + icon_s, cy + icon_s // 2), (90, 90, 90))
            x += icon_s
        if chip.text:
            x += p.px(0.4)
            p.text((x, cy), chip.text, text_size, DARK, anchor="lm", bold=True)
            x += p.text_width(chip.text, text_size) + p.px(0.4)
        x += p.px(1.2)


def _draw_stat(p: _Painter, stat: Stat, box: _Box, label_w: int, colour: Rgb) -> None:
    cy = (box.y0 + box.y1) // 2
    icon_s = int(box.h * 0.8)
    x = box.x0
    if stat.icon:
        p.icon(stat.icon, _Box(x, cy - icon_s // 2, x + icon_s, cy + icon_s // 2), colour)
    x += icon_s + p.px(0.8)
    label_size = p.fit_size(stat.label.upper(), label_w - icon_s - p.px(2.2), int(box.h * 0.4))
    p.text((x, cy), stat.label.upper(), label_size, DARK, anchor="lm")
    x = box.x0 + label_w
    num = str(stat.value)
    num_size = int(box.h * 0.72)
    p.text((x, cy), num, num_size, DARK, anchor="lm", bold=True)
    x += int(box.h * 1.25) + p.px(1.5)  # a fixed column, so the pips sit alike at any dpi
    if 0 < stat.value <= 10:
        # Ten large pips: the filled count reads at a glance and differs strongly between cards.
        pip_w = (box.x1 - x) // 10
        pip_h = int(box.h * 0.85)
        full = colour if _luma(colour) < 130 else _mix(colour, DARK, 0.6)
        gap = max(1, pip_w // 6)
        for i in range(10):
            fill = full if i < stat.value else PLATE
            p.draw.rectangle(
                (x + i * pip_w, cy - pip_h // 2, x + (i + 1) * pip_w - gap, cy + pip_h // 2),
                fill=fill, outline=DARK, width=max(1, pip_w // 10),
            )  # fmt: skip


def render_face(catalog: Catalog, face_id: str, dpi: float = 300) -> np.ndarray:
    """The proxy image of one face: BGR uint8, exactly the printed card size at `dpi`."""
    if not MIN_DPI <= dpi <= MAX_DPI:
        raise ArtError(f"dpi must be between {MIN_DPI} and {MAX_DPI}, got {dpi}")
    design = design_face(catalog, face_id)
    w, h = face_size_px(catalog, face_id, dpi)
    return draw_design(design, w, h)


# --- tokens and the die ----------------------------------------------------------------------

TOKEN_DIAMETER_MM: Final = 20.0
DIE_EDGE_MM: Final = 16.0
# Opposite faces of a die add up to seven; pips per face as (x, y) on a 3 × 3 grid.
PIPS: Final[Mapping[int, tuple[tuple[int, int], ...]]] = {
    1: ((1, 1),),
    2: ((0, 0), (2, 2)),
    3: ((0, 0), (1, 1), (2, 2)),
    4: ((0, 0), (2, 0), (0, 2), (2, 2)),
    5: ((0, 0), (2, 0), (1, 1), (0, 2), (2, 2)),
    6: ((0, 0), (2, 0), (0, 1), (2, 1), (0, 2), (2, 2)),
}
# Each token kind differs in colour AND in shape, so the camera and a colour-blind player
# both tell them apart: health a red disc with a heart, hunger a brown disc with a drumstick,
# daylight a yellow disc with a sun.
TOKEN_COLOURS: Final[Mapping[str, tuple[str, str, str]]] = {
    "health": ("#d0262b", "#7a0f12", "#ffffff"),
    "hunger": ("#8a5a2b", "#4a2c10", "#f3d9b1"),
    "daylight": ("#f7cf2a", "#a87800", "#e0650c"),
}


def _heart(d: ImageDraw.ImageDraw, c: float, r: float, fill: Rgb) -> None:
    lobe = 0.52 * r
    for sx in (-1, 1):
        cx = c + sx * 0.48 * r
        d.ellipse((cx - lobe, c - 0.62 * r - lobe * 0.2, cx + lobe, c - 0.62 * r + 2 * lobe - lobe * 0.2), fill=fill)
    d.polygon([(c - 0.98 * r, c - 0.18 * r), (c + 0.98 * r, c - 0.18 * r), (c, c + 0.92 * r)], fill=fill)


def _drumstick(d: ImageDraw.ImageDraw, c: float, r: float, meat: Rgb, bone: Rgb) -> None:
    # A bone running down-left from a round piece of meat at the top right.
    w = 0.16 * r
    x0, y0, x1, y1 = c - 0.55 * r, c + 0.55 * r, c + 0.1 * r, c - 0.1 * r
    d.line([(x0, y0), (x1, y1)], fill=bone, width=max(1, round(2 * w)))
    for kx, ky in ((-0.18, 0.0), (0.0, 0.18)):
        k = 0.17 * r
        cx, cy = x0 + kx * r, y0 + ky * r
        d.ellipse((cx - k, cy - k, cx + k, cy + k), fill=bone)
    d.ellipse((c - 0.2 * r, c - 0.8 * r, c + 0.78 * r, c + 0.2 * r), fill=meat)


def _sun(d: ImageDraw.ImageDraw, c: float, r: float, fill: Rgb) -> None:
    for i in range(8):
        a = i * math.pi / 4
        tip = (c + math.cos(a) * 0.92 * r, c + math.sin(a) * 0.92 * r)
        side = [(c + math.cos(a + s) * 0.5 * r, c + math.sin(a + s) * 0.5 * r) for s in (-0.3, 0.3)]
        d.polygon([tip, *side], fill=fill)
    d.ellipse((c - 0.46 * r, c - 0.46 * r, c + 0.46 * r, c + 0.46 * r), fill=fill)


def render_token(token_id: str, px_per_mm: float) -> np.ndarray:
    """A token's printed disc, BGR uint8, a square `TOKEN_DIAMETER_MM` wide at `px_per_mm`
    (white outside the disc). Unknown token ids get a colour from their id and a ring."""
    size = max(8, round(TOKEN_DIAMETER_MM * px_per_mm))
    scale = 4
    big = size * scale
    img = Image.new("RGB", (big, big), (255, 255, 255))
    d = ImageDraw.Draw(img)
    fill_hex, rim_hex, ink_hex = TOKEN_COLOURS.get(token_id, ("", "", ""))
    if fill_hex:
        fill, rim, ink = hex_rgb(fill_hex), hex_rgb(rim_hex), hex_rgb(ink_hex)
    else:
        h = _hash_pick(token_id, 360)
        rgb = cv2.cvtColor(np.uint8([[[h // 2, 160, 200]]]), cv2.COLOR_HSV2RGB)[0, 0]
        fill = (int(rgb[0]), int(rgb[1]), int(rgb[2]))
        rim, ink = _mix(fill, (0, 0, 0), 0.5), _ink(fill)
    c, r = big / 2, big / 2
    d.ellipse((0, 0, big - 1, big - 1), fill=rim)
    d.ellipse((0.08 * big, 0.08 * big, 0.92 * big - 1, 0.92 * big - 1), fill=fill)
    inner = 0.62 * r
    if token_id == "health":
        _heart(d, c, inner, ink)
    elif token_id == "hunger":
        _drumstick(d, c, inner, hex_rgb("#c2452d"), ink)
    elif token_id == "daylight":
        _sun(d, c, inner, ink)
    else:
        d.ellipse((c - 0.4 * r, c - 0.4 * r, c + 0.4 * r, c + 0.4 * r), outline=ink, width=max(1, big // 16))
    out = np.asarray(img.resize((size, size), Image.Resampling.LANCZOS))
    return np.ascontiguousarray(out[:, :, ::-1])


def render_die_face(pips: int, px_per_mm: float, edge_mm: float = DIE_EDGE_MM) -> np.ndarray:
    """One face of the die, BGR uint8, `edge_mm` square: white with black pips."""
    if pips not in PIPS:
        raise ArtError(f"a die face shows 1 to 6 pips, got {pips}")
    size = max(8, round(edge_mm * px_per_mm))
    scale = 4
    big = size * scale
    img = Image.new("RGB", (big, big), (250, 250, 246))
    d = ImageDraw.Draw(img)
    pr = 0.095 * big
    for gx, gy in PIPS[pips]:
        cx, cy = big * (0.25 + 0.25 * gx), big * (0.25 + 0.25 * gy)
        d.ellipse((cx - pr, cy - pr, cx + pr, cy + pr), fill=(15, 15, 15))
    out = np.asarray(img.resize((size, size), Image.Resampling.LANCZOS))
    return np.ascontiguousarray(out[:, :, ::-1])


def render_die_net(px_per_mm: float, edge_mm: float = DIE_EDGE_MM) -> np.ndarray:
    """A printable net of the die (a cross of six faces, opposite faces adding to seven, with
    glue tabs), BGR uint8 on white: cut along the outline, fold along the grey lines."""
    e = round(edge_mm * px_per_mm)
    tab = max(2, round(0.3 * e))
    w, h = 4 * e + 2 * tab, 3 * e + 2 * tab
    img = np.full((h, w, 3), 255, np.uint8)
    # Row 1: 2 - 1 ... the cross: 1 in the middle, 2 above, 5 below, 3 left, 4 right, 6 far right.
    cells = {1: (1, 1), 2: (1, 0), 5: (1, 2), 3: (0, 1), 4: (2, 1), 6: (3, 1)}
    line = max(1, round(0.15 * px_per_mm))
    for n, (cx, cy) in cells.items():
        x0, y0 = tab + cx * e, tab + cy * e
        img[y0 : y0 + e, x0 : x0 + e] = render_die_face(n, px_per_mm, edge_mm)[:e, :e]
        cv2.rectangle(img, (x0, y0), (x0 + e - 1, y0 + e - 1), (150, 150, 150), line)
    # Glue tabs on the free side edges of the top and bottom faces (they meet faces 3 and 4).
    for cy in (0, 2):
        y0 = tab + cy * e
        for x_edge, out in ((tab + e, -tab), (tab + 2 * e, tab)):
            pts = np.array([[x_edge, y0], [x_edge + out, y0 + tab], [x_edge + out, y0 + e - tab],
                            [x_edge, y0 + e]], np.int32)
            cv2.fillConvexPoly(img, pts, (225, 225, 225))
            cv2.polylines(img, [pts], True, (60, 60, 60), line)
    return img


def token_kind(catalog: Catalog, token_id: str) -> str:
    """'die' for a token with `sides`, else 'disc'."""
    token = catalog.tokens.get(token_id)
    if token is None:
        raise ArtError(f"{catalog.game}: no token {token_id!r} in the catalog's tokens")
    return "die" if "sides" in token.attrs else "disc"


__all__ = [
    "RENDERER_VERSION",
    "FaceDesign",
    "Orientation",
    "Style",
    "design_face",
    "draw_design",
    "face_size_mm",
    "face_size_px",
    "mm_to_px",
    "render_die_face",
    "render_die_net",
    "render_face",
    "render_token",
]
