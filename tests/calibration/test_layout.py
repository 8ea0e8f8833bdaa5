"""Zone layouts: every game and player count validates, with the public zone ids; zones are
found under points; bad layouts are refused with the reason."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

from calibration.errors import LayoutError
from calibration.layout import (
    Edge,
    Stacking,
    ZoneKind,
    assign_zones,
    available_games,
    build_layout,
    load_template,
    template_from_dict,
    zone_at,
)

PLAYERS = {
    "minecraft-card-game": range(2, 5),
    "minecraft-explorers": range(1, 5),
    "minecraft-mk1": range(2, 7),
    "angry-birds-power-cards": range(2, 5),
}


def _expected_ids(game: str, n: int) -> set[str]:
    per = range(1, n + 1)
    if game == "minecraft-card-game":
        return ({f"resource-pile-{i}" for i in range(1, 6)} | {f"craft-pile-{i}" for i in range(1, 5)}
                | {"discard", "set-aside"} | {f"player-{p}" for p in per} | {f"reserve-{p}" for p in per})
    if game == "minecraft-explorers":
        return ({"landscape-deck", "mob-deck", "mobs", "chests", "hunger", "discard"}
                | {f"display-{i}" for i in range(1, 8)} | {f"player-{p}" for p in per})
    if game == "minecraft-mk1":
        piles = {"wood", "sticks", "mining", "hunting", "gardening", "sword", "axe", "pickaxe", "armor",
                 "effects-weather", "daylight", "weather", "die"}
        players = set()
        for p in per:
            players |= {f"hotbar-{p}", f"health-{p}", f"hunger-{p}"} | {f"hotbar-{p}-{s}" for s in (1, 2, 3)}
        return piles | players
    return {"pot"} | {f"{z}-{p}" for z in ("battle", "structure", "deck") for p in per}


def test_every_game_has_a_layout() -> None:
    assert set(available_games()) == set(PLAYERS)


@pytest.mark.parametrize(("game", "n"), [(g, n) for g, ns in PLAYERS.items() for n in ns])
def test_layouts_validate_with_the_public_ids(game: str, n: int) -> None:
    layout = build_layout(game, n)
    assert set(layout.ids()) == _expected_ids(game, n)
    assert len(layout.seats) == n
    parents = {z.parent for z in layout.zones}
    for zone in layout.zones:
        assert zone.kind in ZoneKind and zone.stacking in Stacking
        x0, y0, x1, y1 = zone.bounds
        assert 0 <= x0 < x1 <= layout.table_mm[0] and 0 <= y0 < y1 <= layout.table_mm[1]
        if zone.id not in parents:
            assert layout.zone_at(zone.center) == zone.id
        if zone.id.startswith(("player-", "reserve-", "hotbar-", "health-", "hunger-", "battle-",
                               "structure-", "deck-")):
            assert zone.player == int(re.findall(r"\d+", zone.id)[0])
    json.dumps(layout.to_dict())


def test_card_sizes_follow_the_games() -> None:
    assert load_template("minecraft-card-game").card_mm == (63.0, 88.0)
    assert load_template("minecraft-mk1").card_mm == (63.0, 88.0)
    assert load_template("minecraft-explorers").card_mm == (59.0, 91.0)
    assert load_template("angry-birds-power-cards").card_mm == (59.0, 91.0)
    display = build_layout("minecraft-explorers", 2).zone("display-1")
    x0, y0, x1, y1 = display.bounds
    assert x1 - x0 > y1 - y0  # landscapes lie in landscape format


def test_seats_go_round_the_table_to_the_left() -> None:
    layout = build_layout("minecraft-mk1", 4)
    assert [s.edge for s in layout.seats] == [Edge.BOTTOM, Edge.LEFT, Edge.TOP, Edge.RIGHT]
    assert [s.facing_deg for s in layout.seats] == [0.0, 90.0, 180.0, 270.0]
    w, h = layout.table_mm
    assert layout.zone("hotbar-1").center[1] > h / 2
    assert layout.zone("hotbar-2").center[0] < w / 2
    assert layout.zone("hotbar-3").center[1] < h / 2
    # Slots run from the player's left to right: for the bottom player that is +x.
    xs = [layout.zone(f"hotbar-1-{i}").center[0] for i in (1, 2, 3)]
    assert xs == sorted(xs)


def test_zone_at_finds_the_innermost_zone() -> None:
    layout = build_layout("minecraft-mk1", 2)
    slot = layout.zone("hotbar-1-2")
    assert zone_at(layout, slot.center) == "hotbar-1-2"
    parent = layout.zone("hotbar-1")
    gap_x = (layout.zone("hotbar-1-1").bounds[2] + layout.zone("hotbar-1-2").bounds[0]) / 2
    assert zone_at(layout, (gap_x, slot.center[1])) == "hotbar-1"
    assert parent.kind is ZoneKind.SPREAD and slot.parent == "hotbar-1"
    assert zone_at(layout, (3.0, layout.table_mm[1] / 2)) is None


def test_assign_zones_is_vectorised_and_agrees_with_zone_at() -> None:
    layout = build_layout("minecraft-card-game", 4)
    rng = np.random.default_rng(7)
    points = rng.uniform((0, 0), layout.table_mm, size=(400, 2))
    points = np.vstack([points, [z.center for z in layout.zones]])
    assigned = assign_zones(layout, points)
    assert assigned == [layout.zone_at(p) for p in points]
    assert assigned[-len(layout.zones):] == list(layout.ids())
    assert layout.assign_zones(np.zeros((0, 2))) == []


def test_a_table_too_small_is_refused_with_the_size_to_use() -> None:
    with pytest.raises(LayoutError, match=r"off the table.*1000×750 mm|covers the .* marker|overlap"):
        build_layout("minecraft-card-game", 4, (700.0, 500.0))
    with pytest.raises(LayoutError, match="2–4 players, not 5"):
        build_layout("minecraft-card-game", 5)
    with pytest.raises(LayoutError, match="no zone layout for game 'chess'"):
        build_layout("chess", 2)


def _template(**changes):  # type: ignore[no-untyped-def]
    data = {
        "schema": 1, "game": "test-game", "card_mm": [63, 88], "players": [2, 2],
        "table_mm": {"2": [800, 600]}, "seats": {"2": [["bottom", 0.5], ["top", 0.5]]},
        "zones": [{"id": "pile", "kind": "pile", "stacking": "top-visible", "center": [0, 0], "size": [83, 108]}],
        "player_zones": [{"id": "area-{p}", "kind": "spread", "stacking": "all-visible", "center": [0, 70], "size": [300, 120]}],
    }
    data.update(changes)
    return data


def _build(tmp_path: Path, data) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "test-game.json"
    path.write_text(json.dumps(data))
    build_layout(path, 2)


def test_a_good_test_template_builds(tmp_path: Path) -> None:
    _build(tmp_path, _template())


@pytest.mark.parametrize(
    ("zones", "message"),
    [
        ([{"id": "a", "kind": "heap", "stacking": "top-visible", "center": [0, 0], "size": [50, 50]}], "unknown kind 'heap'"),
        ([{"id": "a", "kind": "pile", "stacking": "sideways", "center": [0, 0], "size": [50, 50]}], "unknown stacking 'sideways'"),
        ([{"id": "a", "kind": "pile", "stacking": "top-visible", "center": [0, 0], "size": [50, 50]},
          {"id": "a", "kind": "pile", "stacking": "top-visible", "center": [100, 0], "size": [50, 50]}], "duplicate zone id 'a'"),
        ([{"id": "a", "kind": "pile", "stacking": "top-visible", "center": [0, 0], "size": [50, 50]},
          {"id": "b", "kind": "pile", "stacking": "top-visible", "center": [30, 0], "size": [50, 50]}], "zones 'a' and 'b' overlap"),
        ([{"id": "a", "kind": "pile", "stacking": "top-visible", "center": [380, 0], "size": [50, 50]}], "zone 'a' spans x 755..805"),
        ([{"id": "a", "kind": "pile", "stacking": "top-visible", "center": [-365, -265], "size": [50, 50]}], "covers the top-left marker"),
        ([{"id": "a", "kind": "slot", "stacking": "single", "center": [0, 0], "size": [50, 50], "parent": "b"}], "unknown parent 'b'"),
        ([{"id": "a", "kind": "spread", "stacking": "all-visible", "center": [0, 0], "size": [50, 50]},
          {"id": "b", "kind": "slot", "stacking": "single", "center": [20, 0], "size": [30, 30], "parent": "a"}], "'b' is not inside its parent 'a'"),
        ([{"id": "a", "kind": "pile", "stacking": "top-visible", "polygon": [[0, 0], [50, 0], [10, 10], [0, 50]]}], "must be convex"),
        ([{"id": "a", "kind": "pile", "stacking": "top-visible", "center": [0, 0], "size": [50, 50], "colour": "red"}], "unknown field(s) ['colour']"),
        ([{"id": "a-{i}", "kind": "pile", "stacking": "top-visible", "center": [0, 0], "size": [50, 50], "repeat": 0}], "'repeat' must be a whole number"),
        ([{"id": "a", "kind": "pile", "stacking": "top-visible", "center": [0, 0], "size": [50, 50], "repeat": 2, "step": [60, 0]}], "must contain '{i}'"),
    ],
)
def test_bad_templates_are_refused_with_the_reason(tmp_path: Path, zones, message: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(LayoutError) as caught:
        _build(tmp_path, _template(zones=zones, player_zones=[]))
    assert message in str(caught.value)
    assert "test-game" in str(caught.value)


def test_nested_zones_may_overlap_their_parent(tmp_path: Path) -> None:
    zones = [
        {"id": "bar", "kind": "spread", "stacking": "all-visible", "center": [0, 0], "size": [200, 110]},
        {"id": "bar-{i}", "kind": "slot", "stacking": "single", "center": [0, 0], "size": [60, 100], "repeat": 3,
         "step": [65, 0], "parent": "bar"},
    ]
    _build(tmp_path, _template(zones=zones, player_zones=[]))


def test_template_seats_must_match_the_player_count() -> None:
    data = _template(seats={"2": [["bottom", 0.5]]})
    with pytest.raises(LayoutError, match=r"seats.2 must list 2 seats"):
        template_from_dict(data, "t.json")
    data = _template(seats={"2": [["under", 0.5], ["top", 0.5]]})
    with pytest.raises(LayoutError, match=r"seats.2\[0\] must be \[edge, fraction\]"):
        template_from_dict(data, "t.json")
