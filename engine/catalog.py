"""Card catalogs: every card of a game, how many copies, its attributes and its two faces.

A catalog is a JSON data file in `engine/catalogs/<game>.json` (so an owner can edit a deck
without touching code). A *card* is a card type (`wood-2`, of which the deck holds 10 copies);
a *face* is what a camera can tell apart, and several cards may share a face (every resource
card has the face `resource-back` on its back). Loading validates the file and raises
`CatalogError` naming the file and the entry at fault.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from functools import cache
from pathlib import Path
from types import MappingProxyType
from typing import Any

from engine.errors import CatalogError, UnknownCardError

CATALOG_DIR = Path(__file__).resolve().parent / "catalogs"
CATALOG_DIR_ENV = "CARDTRACK_CATALOG_DIR"
SCHEMA_VERSION = 1

AttrValue = str | int | float | bool | tuple[Any, ...] | Mapping[str, Any] | None

# Card, face and token ids: lower case, digits and the separators the games use
# (`wood-2`, `wood-hoe/craft`, `lush-cave.iron-ingot+1`, `item.iron_mob`).
ID_PATTERN = re.compile(r"[a-z0-9][a-z0-9._+/-]*")

TOP_FIELDS = frozenset(
    {"schema", "game", "name", "publisher", "card_size_mm", "total", "placeholder", "notes",
     "faces", "cards", "tokens"}
)
FACE_FIELDS = frozenset({"id", "name", "side", "attrs"})
CARD_FIELDS = frozenset({"id", "name", "kind", "count", "front", "back", "attrs"})
TOKEN_FIELDS = frozenset({"id", "name", "count", "attrs"})


class Side(StrEnum):
    """Which printed side of a card a face is."""

    FRONT = "front"
    BACK = "back"


class Orientation(StrEnum):
    """How a face is printed: portrait (the default) or landscape (width and height swap)."""

    PORTRAIT = "portrait"
    LANDSCAPE = "landscape"


@dataclass(frozen=True, slots=True, kw_only=True)
class Face:
    """One printed side that the camera can recognise."""

    id: str
    name: str
    side: str  # a `Side` value: "front" or "back"
    attrs: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))

    @property
    def orientation(self) -> Orientation:
        """Landscape faces are printed with the card's width and height swapped."""
        return Orientation(self.attrs.get("orientation", Orientation.PORTRAIT))


@dataclass(frozen=True, slots=True, kw_only=True)
class CardType:
    """A card type of the deck: its id, copies, game attributes and its two faces."""

    id: str
    name: str
    kind: str
    count: int
    front: str
    back: str
    attrs: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))


@dataclass(frozen=True, slots=True, kw_only=True)
class TokenType:
    """A non-card playing piece (health token, die): counted or read, not identified by face."""

    id: str
    name: str
    count: int
    attrs: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))


@dataclass(frozen=True, slots=True, kw_only=True)
class Catalog:
    """A validated, read-only deck description."""

    game: str
    name: str
    publisher: str
    card_size_mm: tuple[float, float]
    total: int
    placeholder: bool
    cards: Mapping[str, CardType]
    faces: Mapping[str, Face]
    tokens: Mapping[str, TokenType]
    notes: str = ""

    def card(self, card_id: str) -> CardType:
        """The card type with this id, or a clear error listing how to find valid ids."""
        try:
            return self.cards[card_id]
        except KeyError:
            raise UnknownCardError(
                f"unknown card {card_id!r} for game {self.game!r}; "
                f"`cardtrack deck list --game {self.game}` lists the valid ids"
            ) from None

    def face(self, face_id: str) -> Face:
        try:
            return self.faces[face_id]
        except KeyError:
            raise UnknownCardError(
                f"unknown face {face_id!r} for game {self.game!r}"
            ) from None

    def deck(self) -> Iterator[str]:
        """Every physical card of the deck, copies repeated, in catalog order."""
        for card in self.cards.values():
            for _ in range(card.count):
                yield card.id

    def cards_of_kind(self, kind: str) -> tuple[CardType, ...]:
        return tuple(c for c in self.cards.values() if c.kind == kind)

    def cards_showing(self, face_id: str) -> tuple[CardType, ...]:
        """The card types that have this face on one of their sides."""
        return tuple(c for c in self.cards.values() if face_id in (c.front, c.back))

    def faces_once(self) -> frozenset[str]:
        """The faces that only one physical card of the deck shows (on either side): a table
        cannot show such a face twice."""
        shown: dict[str, int] = {}
        for c in self.cards.values():
            for face in {c.front, c.back}:
                shown[face] = shown.get(face, 0) + c.count
        return frozenset(f for f, n in shown.items() if n == 1)


def _freeze(value: Any) -> Any:
    if isinstance(value, dict):
        return MappingProxyType({k: _freeze(v) for k, v in value.items()})
    if isinstance(value, list):
        return tuple(_freeze(v) for v in value)
    return value


def _require(entry: Mapping[str, Any], key: str, kind: type, where: str) -> Any:
    if key not in entry:
        raise CatalogError(f"{where}: missing field {key!r}")
    value = entry[key]
    if kind is float and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise CatalogError(
            f"{where}: field {key!r} must be {kind.__name__}, got {type(value).__name__}"
        )
    return value


def _optional(entry: Mapping[str, Any], key: str, kind: type, default: Any, where: str) -> Any:
    if key not in entry:
        return default
    return _require(entry, key, kind, where)


def _check_fields(entry: Mapping[str, Any], allowed: frozenset[str], where: str) -> None:
    """Unknown fields are almost always typos (`count` spelt `cout`): name them."""
    unknown = sorted(str(k) for k in entry if k not in allowed)
    if unknown:
        raise CatalogError(
            f"{where}: unknown field(s) {', '.join(map(repr, unknown))}; "
            f"allowed: {', '.join(sorted(allowed))}"
        )


def _check_id(value: str, what: str, where: str) -> None:
    if not ID_PATTERN.fullmatch(value):
        raise CatalogError(
            f"{where}: {what} {value!r} is not a valid id; use lower case letters, digits "
            f"and . _ + / - (starting with a letter or digit)"
        )


def _attrs(entry: Mapping[str, Any], where: str) -> Mapping[str, Any]:
    attrs = entry.get("attrs", {})
    if not isinstance(attrs, Mapping):
        raise CatalogError(f"{where}: field 'attrs' must be an object, got {type(attrs).__name__}")
    frozen: Mapping[str, Any] = _freeze(dict(attrs))
    return frozen


def _entries(data: Mapping[str, Any], key: str, source: str, required: bool) -> list[Any]:
    if not required and key not in data:
        return []
    entries: list[Any] = _require(data, key, list, source)
    return entries


def _parse_face(entry: Any, index: int, source: str) -> Face:
    where = f"{source}: faces[{index}]"
    if not isinstance(entry, Mapping):
        raise CatalogError(f"{where}: must be an object")
    fid = _require(entry, "id", str, where)
    where = f"{source}: face {fid!r}"
    _check_fields(entry, FACE_FIELDS, where)
    _check_id(fid, "face id", where)
    side = entry.get("side", Side.FRONT)
    if side not in tuple(Side):
        raise CatalogError(f"{where}: 'side' must be 'front' or 'back', got {side!r}")
    attrs = _attrs(entry, where)
    orientation = attrs.get("orientation", Orientation.PORTRAIT)
    if orientation not in tuple(Orientation):
        raise CatalogError(
            f"{where}: 'attrs.orientation' must be 'portrait' or 'landscape', got {orientation!r}"
        )
    return Face(
        id=fid,
        name=_optional(entry, "name", str, fid, where),
        side=Side(side),
        attrs=attrs,
    )


def _parse_card(entry: Any, index: int, source: str, faces: Mapping[str, Face]) -> CardType:
    where = f"{source}: cards[{index}]"
    if not isinstance(entry, Mapping):
        raise CatalogError(f"{where}: must be an object")
    cid = _require(entry, "id", str, where)
    where = f"{source}: card {cid!r}"
    _check_fields(entry, CARD_FIELDS, where)
    _check_id(cid, "card id", where)
    count = _require(entry, "count", int, where)
    if count < 1:
        raise CatalogError(f"{where}: 'count' must be at least 1, got {count}")
    kind = _require(entry, "kind", str, where)
    if not kind:
        raise CatalogError(f"{where}: 'kind' must not be empty")
    front = _require(entry, "front", str, where)
    back = _require(entry, "back", str, where)
    for side_name, fid in (("front", front), ("back", back)):
        if fid not in faces:
            raise CatalogError(
                f"{where}: {side_name} face {fid!r} is not in 'faces'; add it there or fix the id"
            )
    if faces[front].side != Side.FRONT:
        raise CatalogError(
            f"{where}: front face {front!r} is declared with side 'back'; a card's front "
            f"must be a 'front' face"
        )
    # A card printed alike on both sides names the same face twice.
    if back != front and faces[back].side != Side.BACK:
        raise CatalogError(
            f"{where}: back face {back!r} is declared with side 'front'; a card's back "
            f"must be a 'back' face (or the same face as its front)"
        )
    return CardType(
        id=cid,
        name=_optional(entry, "name", str, cid, where),
        kind=kind,
        count=count,
        front=front,
        back=back,
        attrs=_attrs(entry, where),
    )


def _parse_token(entry: Any, index: int, source: str) -> TokenType:
    where = f"{source}: tokens[{index}]"
    if not isinstance(entry, Mapping):
        raise CatalogError(f"{where}: must be an object")
    tid = _require(entry, "id", str, where)
    where = f"{source}: token {tid!r}"
    _check_fields(entry, TOKEN_FIELDS, where)
    _check_id(tid, "token id", where)
    count = _require(entry, "count", int, where)
    if count < 1:
        raise CatalogError(f"{where}: 'count' must be at least 1, got {count}")
    return TokenType(
        id=tid,
        name=_optional(entry, "name", str, tid, where),
        count=count,
        attrs=_attrs(entry, where),
    )


def parse_catalog(data: Mapping[str, Any], source: str = "<catalog>") -> Catalog:
    """Validate a decoded catalog document and build a `Catalog`.

    Every error is a `CatalogError` whose message starts with `source` and names the entry
    (`face 'mob.zombie'`, `card 'woods.wood'`) and the field at fault.
    """
    if not isinstance(data, Mapping):
        raise CatalogError(f"{source}: a catalog must be a JSON object")
    schema = data.get("schema")
    if schema != SCHEMA_VERSION:
        raise CatalogError(
            f"{source}: field 'schema' must be {SCHEMA_VERSION}, got {schema!r}"
        )
    _check_fields(data, TOP_FIELDS, source)
    game = _require(data, "game", str, source)
    _check_id(game, "game id", source)
    size = _require(data, "card_size_mm", list, source)
    if len(size) != 2 or not all(
        isinstance(v, int | float) and not isinstance(v, bool) and v > 0 for v in size
    ):
        raise CatalogError(f"{source}: 'card_size_mm' must be [width, height] in mm")

    faces: dict[str, Face] = {}
    for i, entry in enumerate(_entries(data, "faces", source, required=True)):
        face = _parse_face(entry, i, source)
        if face.id in faces:
            raise CatalogError(f"{source}: faces[{i}]: duplicate face id {face.id!r}")
        faces[face.id] = face

    cards: dict[str, CardType] = {}
    used_faces: set[str] = set()
    for i, entry in enumerate(_entries(data, "cards", source, required=True)):
        card = _parse_card(entry, i, source, faces)
        if card.id in cards:
            raise CatalogError(f"{source}: card {card.id!r}: duplicate card id")
        cards[card.id] = card
        used_faces.update((card.front, card.back))
    unused = sorted(set(faces) - used_faces)
    if unused:
        raise CatalogError(
            f"{source}: faces not on any card: {', '.join(unused)}; "
            f"remove them or name them as a card's front or back"
        )

    tokens: dict[str, TokenType] = {}
    for i, entry in enumerate(_entries(data, "tokens", source, required=False)):
        token = _parse_token(entry, i, source)
        if token.id in tokens or token.id in cards:
            raise CatalogError(f"{source}: tokens[{i}]: duplicate id {token.id!r}")
        tokens[token.id] = token

    total = _require(data, "total", int, source)
    counted = sum(c.count for c in cards.values())
    if counted != total:
        raise CatalogError(
            f"{source}: card counts add up to {counted} but 'total' says {total}; "
            f"fix a card's 'count' or the 'total'"
        )
    return Catalog(
        game=game,
        name=_optional(data, "name", str, game, source),
        publisher=_optional(data, "publisher", str, "", source),
        card_size_mm=(float(size[0]), float(size[1])),
        total=total,
        placeholder=_optional(data, "placeholder", bool, False, source),
        cards=MappingProxyType(cards),
        faces=MappingProxyType(faces),
        tokens=MappingProxyType(tokens),
        notes=_optional(data, "notes", str, "", source),
    )


def load_catalog_file(path: str | Path) -> Catalog:
    """Read and validate a catalog JSON file."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise CatalogError(f"{path}: cannot read catalog ({exc.strerror})") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise CatalogError(
            f"{path}: not valid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}"
        ) from None
    return parse_catalog(data, str(path))


def available_games() -> tuple[str, ...]:
    """The game ids that have a built-in catalog, sorted."""
    return tuple(sorted(p.stem for p in CATALOG_DIR.glob("*.json")))


def catalog_dirs() -> tuple[Path, ...]:
    """Where catalogs are looked for, first match wins: the folders listed in the environment
    variable `CARDTRACK_CATALOG_DIR` (an owner's decks, separated like PATH), then the built-in
    folder. Read when a game's catalog is first loaded (catalogs are cached per process)."""
    extra = os.environ.get(CATALOG_DIR_ENV, "")
    return (*(Path(p) for p in extra.split(os.pathsep) if p), CATALOG_DIR)


@cache
def load_catalog(game: str) -> Catalog:
    """The catalog of a game id: an owner's file from `CARDTRACK_CATALOG_DIR`, else built in."""
    path = CATALOG_DIR / f"{game}.json"
    if ID_PATTERN.fullmatch(game):
        path = next(
            (d / f"{game}.json" for d in catalog_dirs() if (d / f"{game}.json").exists()), path
        )
    if not ID_PATTERN.fullmatch(game) or not path.exists():
        known = ", ".join(available_games())
        raise CatalogError(f"no catalog for game {game!r}; known games: {known}")
    catalog = load_catalog_file(path)
    if catalog.game != game:
        raise CatalogError(
            f"{path}: field 'game' is {catalog.game!r} but the file is named for {game!r}; "
            f"make them agree"
        )
    return catalog
