"""Zone layouts: where each game's piles, slots and player areas lie on the table, in mm.

A layout is data. Each game has a template file `calibration/layouts/<game>.json`: shared
zones placed relative to the table centre, per-player zones placed relative to the player's
seat (a position on a table edge), the seats used for each player count, and a recommended
table size per player count. `build_layout(game, players, table_mm)` turns the template into
a plain `Layout` (zone ids like `player-2`, polygons in table millimetres, see
`calibration.homography` for the frame) and validates it: unknown kind or stacking, duplicate
id, a zone off the table or over a corner marker, two zones overlapping (only a zone declared
nested in a `parent` may lie on it). `zone_at` / `assign_zones` name the zone under a point,
the innermost one where zones nest (an mk1 hotbar slot inside its hotbar).

Template coordinates: a shared zone's `center` is `[x, y]` mm from the table centre (x to the
right, y down the image); a player zone's is `[u, v]` in the seat frame: u along the edge to
the player's right, v from the table edge inwards; `size` is `[across, deep]` in the same
frame. `polygon` (a convex list of points in the same frame) may replace `center` + `size`.
`repeat: n` with `step: [du, dv]` makes n zones centred on the given position, `{i}` in the id
numbering them 1..n in the frame's positive direction; `{p}` is the player number.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from functools import cache
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from calibration import fields
from calibration.errors import LayoutError
from calibration.markers import DEFAULT_MARKER_MM

LAYOUT_DIR = Path(__file__).resolve().parent / "layouts"
LAYOUT_SCHEMA = 1
QUIET_ZONE_MM = 10.0  # white margin kept free around each printed marker
_TOLERANCE_MM = 0.5
_ZONE_KEYS = {"id", "kind", "stacking", "center", "size", "polygon", "repeat", "step", "parent", "note"}
_TOP_KEYS = {"schema", "game", "name", "card_mm", "players", "table_mm", "seats", "zones",
             "player_zones", "notes"}


class ZoneKind(StrEnum):
    """What a zone holds, which tells vision what to expect there."""

    PILE = "pile"  # a stack: only the top card is seen
    SPREAD = "spread"  # several cards laid side by side or fanned
    SLOT = "slot"  # a place for one card (or one stack) at a time
    HOLDER = "holder"  # a card stand: the card is upright, seen foreshortened
    TOKEN_AREA = "token-area"  # counted tokens, no cards
    DIE = "die"  # where the die is rolled and read


class Stacking(StrEnum):
    """How cards in a zone cover each other."""

    TOP_VISIBLE = "top-visible"  # a pile: the top card hides the rest
    ALL_VISIBLE = "all-visible"  # side by side, every card seen whole
    FANNED = "fanned"  # overlapping, each card partly seen, the last one whole
    SINGLE = "single"  # at most one card
    COUNTED = "counted"  # tokens or a die: counted or read, not stacked


class Edge(StrEnum):
    """The table edge a player sits at, as seen in the camera image."""

    BOTTOM = "bottom"
    LEFT = "left"
    TOP = "top"
    RIGHT = "right"


# Seat frame per edge: (u axis, v axis) in table coordinates; v points into the table.
_FRAMES: dict[Edge, tuple[tuple[float, float], tuple[float, float]]] = {
    Edge.BOTTOM: ((1.0, 0.0), (0.0, -1.0)),
    Edge.LEFT: ((0.0, 1.0), (1.0, 0.0)),
    Edge.TOP: ((-1.0, 0.0), (0.0, 1.0)),
    Edge.RIGHT: ((0.0, -1.0), (-1.0, 0.0)),
}
_FACING_DEG = {Edge.BOTTOM: 0.0, Edge.LEFT: 90.0, Edge.TOP: 180.0, Edge.RIGHT: 270.0}


@dataclass(frozen=True, slots=True, kw_only=True)
class Seat:
    """Where player `player` sits: an edge and a fraction along it (from the image's left or
    top). `facing_deg` is the clockwise angle, in the image, of the up direction of a card
    the player reads upright (0 for the bottom edge)."""

    player: int
    edge: Edge
    at: float
    facing_deg: float


@dataclass(frozen=True, slots=True, kw_only=True)
class Zone:
    """One named area of the table: a convex polygon in table mm and what it holds."""

    id: str
    kind: ZoneKind
    stacking: Stacking
    polygon: tuple[tuple[float, float], ...]
    player: int | None = None
    parent: str | None = None
    note: str = ""

    @property
    def center(self) -> tuple[float, float]:
        """Mean of the polygon's vertices (the centre of a rectangle)."""
        pts = np.asarray(self.polygon)
        return float(pts[:, 0].mean()), float(pts[:, 1].mean())

    @property
    def bounds(self) -> tuple[float, float, float, float]:
        """(x0, y0, x1, y1) bounding box in mm."""
        pts = np.asarray(self.polygon)
        return (float(pts[:, 0].min()), float(pts[:, 1].min()),
                float(pts[:, 0].max()), float(pts[:, 1].max()))

    def to_dict(self) -> dict[str, Any]:
        """Plain data."""
        data: dict[str, Any] = {
            "id": self.id,
            "kind": str(self.kind),
            "stacking": str(self.stacking),
            "polygon": [[round(x, 2), round(y, 2)] for x, y in self.polygon],
        }
        if self.player is not None:
            data["player"] = self.player
        if self.parent is not None:
            data["parent"] = self.parent
        if self.note:
            data["note"] = self.note
        return data


@dataclass(frozen=True, slots=True, kw_only=True)
class Layout:
    """The zones of one game for one player count on a table of `table_mm` (plain data)."""

    game: str
    players: int
    table_mm: tuple[float, float]
    card_mm: tuple[float, float]
    zones: tuple[Zone, ...]
    seats: tuple[Seat, ...]
    keepout_mm: float
    source: str = ""

    def zone(self, zone_id: str) -> Zone:
        """The zone with this id (KeyError names the known ids)."""
        for z in self.zones:
            if z.id == zone_id:
                return z
        raise KeyError(f"{self.game} has no zone {zone_id!r}; zones: {', '.join(self.ids())}")

    def ids(self) -> tuple[str, ...]:
        """Zone ids in layout order."""
        return tuple(z.id for z in self.zones)

    def depth(self, zone: Zone) -> int:
        """Nesting depth (0 for a top-level zone)."""
        return len(_ancestors(zone, {z.id: z for z in self.zones}))

    def zone_at(self, point_mm: Sequence[float]) -> str | None:
        """The innermost zone containing `point_mm`, or None."""
        return assign_zones(self, np.asarray(point_mm, np.float64).reshape(1, 2))[0]

    def assign_zones(self, points_mm: np.ndarray) -> list[str | None]:
        """Vectorised `zone_at` over `(n,2)` points."""
        return assign_zones(self, points_mm)

    def marker_keepouts(self) -> tuple[tuple[tuple[float, float], ...], ...]:
        """The parts of the table under each corner marker and its quiet zone (squares)."""
        w, h = self.table_mm
        k = self.keepout_mm / 2
        out = []
        for cx, cy in ((0.0, 0.0), (w, 0.0), (w, h), (0.0, h)):
            out.append(((cx - k, cy - k), (cx + k, cy - k), (cx + k, cy + k), (cx - k, cy + k)))
        return tuple(out)

    def to_dict(self) -> dict[str, Any]:
        """Plain data: what `cardtrack calibrate layout --json` prints."""
        return {
            "schema": LAYOUT_SCHEMA,
            "game": self.game,
            "players": self.players,
            "table_mm": list(self.table_mm),
            "card_mm": list(self.card_mm),
            "keepout_mm": self.keepout_mm,
            "seats": [
                {"player": s.player, "edge": str(s.edge), "at": s.at, "facing_deg": s.facing_deg}
                for s in self.seats
            ],
            "zones": [z.to_dict() for z in self.zones],
        }


def _contains(polygon: np.ndarray, pts: np.ndarray) -> np.ndarray:
    """Boolean `(n,)`: points inside (or on the edge of) a polygon, by ray casting."""
    x, y = pts[:, 0:1], pts[:, 1:2]
    px, py = polygon[:, 0], polygon[:, 1]
    qx, qy = np.roll(px, -1), np.roll(py, -1)
    crosses = (py > y) != (qy > y)
    with np.errstate(divide="ignore", invalid="ignore"):
        x_at = px + (y - py) * (qx - px) / (qy - py)
    inside = np.logical_and(crosses, x < x_at).sum(axis=1) % 2 == 1
    x0, y0 = polygon.min(axis=0)
    x1, y1 = polygon.max(axis=0)
    # Ray casting is ambiguous on the boundary: accept points within a hair of an edge.
    near = np.zeros(pts.shape[0], bool)
    box = (pts[:, 0] >= x0 - 1e-6) & (pts[:, 0] <= x1 + 1e-6) & (pts[:, 1] >= y0 - 1e-6) & (
        pts[:, 1] <= y1 + 1e-6
    )
    if np.any(box & ~inside):
        for a, b in zip(polygon, np.roll(polygon, -1, axis=0), strict=True):
            ab = b - a
            t = np.clip(((pts - a) @ ab) / max(float(ab @ ab), 1e-12), 0.0, 1.0)
            dist = np.linalg.norm(pts - (a + t[:, None] * ab), axis=1)
            near |= dist < 1e-6
    result: np.ndarray = inside | near
    return result


def assign_zones(layout: Layout, points_mm: np.ndarray) -> list[str | None]:
    """The innermost zone id for each of `(n,2)` table points, None where no zone is."""
    pts = np.asarray(points_mm, np.float64).reshape(-1, 2)
    best: list[str | None] = [None] * pts.shape[0]
    best_depth = np.full(pts.shape[0], -1)
    by_id = {z.id: z for z in layout.zones}
    for zone in layout.zones:
        depth = len(_ancestors(zone, by_id))
        hit = _contains(np.asarray(zone.polygon, np.float64), pts) & (depth > best_depth)
        for i in np.flatnonzero(hit):
            best[i] = zone.id
        best_depth[hit] = depth
    return best


def zone_at(layout: Layout, point_mm: Sequence[float]) -> str | None:
    """The innermost zone containing one table point in mm, or None."""
    return layout.zone_at(point_mm)


# --- templates ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class ZoneSpec:
    """One zone entry of a template (before repetition and seat placement)."""

    id: str
    kind: ZoneKind
    stacking: Stacking
    shape: tuple[tuple[float, float], ...]  # polygon in the entry's frame
    repeat: int
    step: tuple[float, float]
    parent: str | None
    note: str


@dataclass(frozen=True, slots=True, kw_only=True)
class LayoutTemplate:
    """A game's layout file, parsed: shared and per-player zone specs, seats, table sizes."""

    game: str
    source: str
    card_mm: tuple[float, float]
    min_players: int
    max_players: int
    table_mm: Mapping[int, tuple[float, float]]
    seats: Mapping[int, tuple[tuple[Edge, float], ...]]
    zones: tuple[ZoneSpec, ...]
    player_zones: tuple[ZoneSpec, ...]

    def recommended_table(self, players: int) -> tuple[float, float]:
        """The table size (between marker centres) the layout is drawn for."""
        self.check_players(players)
        return self.table_mm[players]

    def check_players(self, players: int) -> None:
        """Raise `LayoutError` for a player count the game does not support."""
        if not self.min_players <= players <= self.max_players:
            raise LayoutError(
                f"{self.game} is played by {self.min_players}–{self.max_players} players, "
                f"not {players}; pass --players between {self.min_players} and {self.max_players}"
            )


def available_games() -> tuple[str, ...]:
    """Games that have a layout file."""
    return tuple(sorted(p.stem for p in LAYOUT_DIR.glob("*.json")))


def load_template(game_or_path: str | Path) -> LayoutTemplate:
    """Parse and check a layout template: a game id (built-in file) or a path to a JSON file."""
    path = Path(game_or_path)
    if path.suffix != ".json":
        path = LAYOUT_DIR / f"{game_or_path}.json"
        if not path.exists():
            raise LayoutError(
                f"no zone layout for game {str(game_or_path)!r}; known games: "
                f"{', '.join(available_games())}"
            )
    return _load_template_cached(path.resolve())


@cache
def _load_template_cached(path: Path) -> LayoutTemplate:
    data = fields.read_json_file(path, LayoutError, "fix the layout file")
    return template_from_dict(data, path.name)


def template_from_dict(data: Mapping[str, Any], where: str) -> LayoutTemplate:
    """Build a `LayoutTemplate` from parsed JSON, errors naming `where` and the field."""
    unknown = set(data) - _TOP_KEYS
    if unknown:
        raise LayoutError(f"{where}: unknown field(s) {sorted(unknown)}; allowed: {sorted(_TOP_KEYS)}")
    schema = fields.integer(data, "schema", where, LayoutError)
    if schema != LAYOUT_SCHEMA:
        raise LayoutError(f"{where}: field 'schema' is {schema}, this version reads {LAYOUT_SCHEMA}")
    game = fields.text(data, "game", where, LayoutError)
    card_mm = fields.size_pair(data, "card_mm", where, LayoutError)
    players = fields.array(data, "players", where, LayoutError, (2,), "[min, max] player counts")
    lo, hi = int(players[0]), int(players[1])
    if lo != players[0] or hi != players[1] or not 1 <= lo <= hi <= 8:
        raise LayoutError(f"{where}: field 'players' must be [min, max] with 1 ≤ min ≤ max ≤ 8")
    table_raw = fields.mapping(data, "table_mm", where, LayoutError)
    seats_raw = fields.mapping(data, "seats", where, LayoutError)
    table: dict[int, tuple[float, float]] = {}
    seats: dict[int, tuple[tuple[Edge, float], ...]] = {}
    for n in range(lo, hi + 1):
        table[n] = fields.size_pair(table_raw, str(n), f"{where}: table_mm", LayoutError)
        seat_list = fields.field(seats_raw, str(n), f"{where}: seats", LayoutError)
        if not isinstance(seat_list, list) or len(seat_list) != n:
            raise LayoutError(f"{where}: seats.{n} must list {n} seats as [edge, fraction] pairs")
        parsed = []
        for k, seat in enumerate(seat_list):
            label = f"{where}: seats.{n}[{k}]"
            if (
                not isinstance(seat, list)
                or len(seat) != 2
                or seat[0] not in Edge.__members__.values()
                or isinstance(seat[1], bool)
                or not isinstance(seat[1], int | float)
                or not 0.0 < seat[1] < 1.0
            ):
                raise LayoutError(
                    f"{label} must be [edge, fraction] with edge one of "
                    f"{[str(e) for e in Edge]} and 0 < fraction < 1, got {seat!r}"
                )
            parsed.append((Edge(seat[0]), float(seat[1])))
        seats[n] = tuple(parsed)
    zones = _zone_specs(data, "zones", where, player=False)
    player_zones = _zone_specs(data, "player_zones", where, player=True)
    return LayoutTemplate(
        game=game, source=where, card_mm=card_mm, min_players=lo, max_players=hi,
        table_mm=table, seats=seats, zones=zones, player_zones=player_zones,
    )


def _zone_specs(data: Mapping[str, Any], name: str, where: str, *, player: bool) -> tuple[ZoneSpec, ...]:
    raw = data.get(name, [])
    if not isinstance(raw, list):
        raise LayoutError(f"{where}: field '{name}' must be a list of zones")
    specs = []
    for k, entry in enumerate(raw):
        label = f"{where}: {name}[{k}]"
        if not isinstance(entry, dict):
            raise LayoutError(f"{label} must be an object")
        if "id" in entry and isinstance(entry["id"], str):
            label = f"{where}: zone '{entry['id']}'"
        unknown = set(entry) - _ZONE_KEYS
        if unknown:
            raise LayoutError(f"{label}: unknown field(s) {sorted(unknown)}; allowed: {sorted(_ZONE_KEYS)}")
        zone_id = fields.text(entry, "id", label, LayoutError)
        if not re.fullmatch(r"[a-z0-9{}]+(-[a-z0-9{}]+)*", zone_id):
            raise LayoutError(f"{label}: field 'id' must be lower-case words joined by '-'")
        if player and "{p}" not in zone_id:
            raise LayoutError(f"{label}: a player zone id must contain '{{p}}' (the player number)")
        kind_raw = fields.text(entry, "kind", label, LayoutError)
        if kind_raw not in ZoneKind.__members__.values():
            raise LayoutError(
                f"{label}: unknown kind {kind_raw!r}; use one of {[str(k) for k in ZoneKind]}"
            )
        stacking_raw = fields.text(entry, "stacking", label, LayoutError)
        if stacking_raw not in Stacking.__members__.values():
            raise LayoutError(
                f"{label}: unknown stacking {stacking_raw!r}; use one of {[str(s) for s in Stacking]}"
            )
        shape = _shape(entry, label)
        repeat = entry.get("repeat", 1)
        if isinstance(repeat, bool) or not isinstance(repeat, int) or repeat < 1:
            raise LayoutError(f"{label}: field 'repeat' must be a whole number ≥ 1, got {repeat!r}")
        if repeat > 1 and "{i}" not in zone_id:
            raise LayoutError(f"{label}: a repeated zone id must contain '{{i}}' (its number)")
        step = (0.0, 0.0)
        if repeat > 1:
            arr = fields.array(entry, "step", label, LayoutError, (2,), "a [du, dv] offset")
            step = (float(arr[0]), float(arr[1]))
        parent = entry.get("parent")
        if parent is not None and not isinstance(parent, str):
            raise LayoutError(f"{label}: field 'parent' must be a zone id")
        note = entry.get("note", "")
        specs.append(
            ZoneSpec(id=zone_id, kind=ZoneKind(kind_raw), stacking=Stacking(stacking_raw),
                     shape=shape, repeat=repeat, step=step, parent=parent, note=str(note))
        )
    return tuple(specs)


def _shape(entry: Mapping[str, Any], label: str) -> tuple[tuple[float, float], ...]:
    if "polygon" in entry:
        if "center" in entry or "size" in entry:
            raise LayoutError(f"{label}: give either 'polygon' or 'center' + 'size', not both")
        poly = fields.array(entry, "polygon", label, LayoutError, (None, 2), "a list of [x, y] points")
        if poly.shape[0] < 3:
            raise LayoutError(f"{label}: field 'polygon' needs at least 3 points")
        if not cv2.isContourConvex(poly.astype(np.float32).reshape(-1, 1, 2)):
            raise LayoutError(f"{label}: field 'polygon' must be convex (split it into convex zones)")
        return tuple((float(x), float(y)) for x, y in poly)
    c = fields.array(entry, "center", label, LayoutError, (2,), "an [x, y] point")
    w, h = fields.size_pair(entry, "size", label, LayoutError)
    cx, cy = float(c[0]), float(c[1])
    return ((cx - w / 2, cy - h / 2), (cx + w / 2, cy - h / 2),
            (cx + w / 2, cy + h / 2), (cx - w / 2, cy + h / 2))


def _expand(spec: ZoneSpec, player: int | None) -> list[tuple[str, str | None, np.ndarray]]:
    """(id, parent id, polygon in the spec's frame) for each repetition of `spec`."""
    out = []
    base = np.asarray(spec.shape, np.float64)
    for k in range(spec.repeat):
        offset = (k - (spec.repeat - 1) / 2) * np.asarray(spec.step)
        zid = spec.id.replace("{i}", str(k + 1))
        parent = spec.parent.replace("{i}", str(k + 1)) if spec.parent else None
        if player is not None:
            zid = zid.replace("{p}", str(player))
            parent = parent.replace("{p}", str(player)) if parent else None
        out.append((zid, parent, base + offset))
    return out


def build_layout(
    game: str | Path,
    players: int,
    table_mm: tuple[float, float] | None = None,
    *,
    marker_mm: float = DEFAULT_MARKER_MM,
    validate: bool = True,
) -> Layout:
    """The validated layout of `game` for `players` on a `table_mm` table (default: the
    template's recommended size for that player count)."""
    template = load_template(game)
    template.check_players(players)
    w, h = table_mm or template.recommended_table(players)
    zones: list[Zone] = []
    centre = np.array([w / 2, h / 2])
    for spec in template.zones:
        for zid, parent, poly in _expand(spec, None):
            zones.append(_zone(spec, zid, parent, poly + centre, None))
    seats = []
    for number, (edge, at) in enumerate(template.seats[players], start=1):
        u, v = (np.asarray(a) for a in _FRAMES[edge])
        origin = np.array([at * w, h]) if edge is Edge.BOTTOM else (
            np.array([at * w, 0.0]) if edge is Edge.TOP else
            np.array([0.0, at * h]) if edge is Edge.LEFT else np.array([w, at * h])
        )
        seats.append(Seat(player=number, edge=edge, at=at, facing_deg=_FACING_DEG[edge]))
        for spec in template.player_zones:
            for zid, parent, poly in _expand(spec, number):
                table_poly = origin + poly[:, :1] * u + poly[:, 1:2] * v
                zones.append(_zone(spec, zid, parent, table_poly, number))
    layout = Layout(
        game=template.game, players=players, table_mm=(float(w), float(h)),
        card_mm=template.card_mm, zones=tuple(zones), seats=tuple(seats),
        keepout_mm=marker_mm + 2 * QUIET_ZONE_MM, source=template.source,
    )
    if validate:
        validate_layout(layout, recommended=template.table_mm[players])
    return layout


def _zone(spec: ZoneSpec, zid: str, parent: str | None, poly: np.ndarray, player: int | None) -> Zone:
    return Zone(
        id=zid, kind=spec.kind, stacking=spec.stacking,
        polygon=tuple((float(x), float(y)) for x, y in poly),
        player=player, parent=parent, note=spec.note,
    )


def _overlap_area(a: np.ndarray, b: np.ndarray) -> float:
    area, _ = cv2.intersectConvexConvex(a.astype(np.float32), b.astype(np.float32))
    return float(area)


def validate_layout(layout: Layout, *, recommended: tuple[float, float] | None = None) -> None:
    """Raise `LayoutError` for duplicate ids, bad nesting, zones off the table or over a
    marker, and overlapping zones that are not nested."""
    where = f"{layout.source or layout.game} ({layout.players} players, table "
    where += f"{layout.table_mm[0]:g}×{layout.table_mm[1]:g} mm)"
    if recommended and tuple(recommended) != tuple(layout.table_mm):
        hint = (f"; use a larger --table-size (this layout is drawn for "
                f"{recommended[0]:g}×{recommended[1]:g} mm)")
    else:
        hint = "; fix the layout file"
    seen: set[str] = set()
    by_id: dict[str, Zone] = {}
    for z in layout.zones:
        if z.id in seen:
            raise LayoutError(f"{where}: duplicate zone id {z.id!r}")
        seen.add(z.id)
        by_id[z.id] = z
        if not isinstance(z.kind, ZoneKind):
            raise LayoutError(f"{where}: zone {z.id!r} has unknown kind {z.kind!r}")
        if not isinstance(z.stacking, Stacking):
            raise LayoutError(f"{where}: zone {z.id!r} has unknown stacking {z.stacking!r}")
        poly = np.asarray(z.polygon, np.float64)
        if poly.ndim != 2 or poly.shape[0] < 3 or poly.shape[1] != 2:
            raise LayoutError(f"{where}: zone {z.id!r} needs a polygon of at least 3 points")
        if abs(cv2.contourArea(poly.astype(np.float32))) < 1.0:
            raise LayoutError(f"{where}: zone {z.id!r} has no area")
        if not cv2.isContourConvex(poly.astype(np.float32).reshape(-1, 1, 2)):
            raise LayoutError(f"{where}: zone {z.id!r} is not convex")
    w, h = layout.table_mm
    for z in layout.zones:
        x0, y0, x1, y1 = z.bounds
        if x0 < -_TOLERANCE_MM or y0 < -_TOLERANCE_MM or x1 > w + _TOLERANCE_MM or y1 > h + _TOLERANCE_MM:
            raise LayoutError(
                f"{where}: zone {z.id!r} spans x {x0:.0f}..{x1:.0f}, y {y0:.0f}..{y1:.0f} mm, "
                f"off the table (0..{w:g} × 0..{h:g} mm){hint}"
            )
        if z.parent is not None:
            if z.parent not in by_id:
                raise LayoutError(f"{where}: zone {z.id!r} names an unknown parent {z.parent!r}")
            parent = np.asarray(by_id[z.parent].polygon)
            inside = _contains(parent, np.asarray(z.polygon))
            if not inside.all():
                raise LayoutError(f"{where}: zone {z.id!r} is not inside its parent {z.parent!r}")
        for corner, square in zip(("top-left", "top-right", "bottom-right", "bottom-left"),
                                  layout.marker_keepouts(), strict=True):
            if _overlap_area(np.asarray(z.polygon), np.asarray(square)) > 1.0:
                raise LayoutError(
                    f"{where}: zone {z.id!r} covers the {corner} marker (keep "
                    f"{layout.keepout_mm / 2:g} mm around each marker centre free){hint}"
                )
    _check_cycles(layout, by_id, where)
    _check_overlaps(layout, by_id, where, hint)


def _ancestors(zone: Zone, by_id: Mapping[str, Zone]) -> set[str]:
    out: set[str] = set()
    while zone.parent is not None and zone.parent not in out:
        out.add(zone.parent)
        zone = by_id[zone.parent]
    return out


def _check_cycles(layout: Layout, by_id: Mapping[str, Zone], where: str) -> None:
    for z in layout.zones:
        if z.id in _ancestors(z, by_id):
            raise LayoutError(f"{where}: zone {z.id!r} is nested inside itself")


def _check_overlaps(layout: Layout, by_id: Mapping[str, Zone], where: str, hint: str) -> None:
    zones = layout.zones
    polys = [np.asarray(z.polygon, np.float64) for z in zones]
    boxes = np.array([z.bounds for z in zones])
    ancestors = [_ancestors(z, by_id) for z in zones]
    for i in range(len(zones)):
        for j in range(i + 1, len(zones)):
            a, b = boxes[i], boxes[j]
            if a[2] <= b[0] or b[2] <= a[0] or a[3] <= b[1] or b[3] <= a[1]:
                continue
            if zones[j].id in ancestors[i] or zones[i].id in ancestors[j]:
                continue
            area = _overlap_area(polys[i], polys[j])
            if area > 1.0:
                raise LayoutError(
                    f"{where}: zones {zones[i].id!r} and {zones[j].id!r} overlap by "
                    f"{area:.0f} mm² (only a zone declared nested with 'parent' may lie on "
                    f"another){hint}"
                )


def layout_summary(layout: Layout) -> Iterable[str]:
    """Human lines describing a layout (one per zone), for the command line."""
    yield (f"{layout.game}: {layout.players} players, table {layout.table_mm[0]:g}×"
           f"{layout.table_mm[1]:g} mm between marker centres, cards "
           f"{layout.card_mm[0]:g}×{layout.card_mm[1]:g} mm, {len(layout.zones)} zones")
    for s in layout.seats:
        yield f"  seat of player {s.player}: {s.edge} edge at {s.at:.0%}"
    for z in layout.zones:
        x0, y0, x1, y1 = z.bounds
        extra = f" in {z.parent}" if z.parent else ""
        yield (f"  {z.id:<22} {z.kind!s:<10} {z.stacking!s:<12} x {x0:6.0f}..{x1:<6.0f} "
               f"y {y0:6.0f}..{y1:<6.0f}{extra}")


def layout_json(layout: Layout) -> str:
    """The layout as indented JSON text."""
    return json.dumps(layout.to_dict(), indent=1, ensure_ascii=False)
