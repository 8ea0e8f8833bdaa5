"""The table profile a server works with: which one is active, where it came from, and how it changes.

`ProfileStore` holds the active `calibration.profile.TableProfile` of one server. At start-up it
takes the profile of the camera feed when the feed has one (the pipeline was built with it),
else the file named by the settings' `calibration_path` when that file exists. A new profile
(uploaded as a profile file's JSON, or fitted from four table corners clicked in the console)
is checked against the game being played, written to `calibration_path` when one is set, and
handed to the feed, which applies it between two frames. `describe` turns the active profile
into plain data for `GET /api/calibration`: the table size, the homography, its error figures,
and the game's zones in table millimetres and, through the profile, in camera pixels (what the
console draws over the camera picture). Every refusal is a `CalibrationInputError` (a
`ValueError`) whose message names the field at fault and says what to do.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np

from calibration.errors import CalibrationError
from calibration.homography import TableGeometry
from calibration.layout import Layout, available_games, build_layout, load_template
from calibration.markers import DEFAULT_MARKER_MM
from calibration.profile import TableProfile, load_profile, profile_from_dict, save_profile
from calibration.table import calibrate_from_corners

log = logging.getLogger(__name__)

CORNER_ORDER = ("top-left", "top-right", "bottom-right", "bottom-left")
"""The order of the four clicked table corners, as seen in the camera image (marker 0 first)."""


class CalibrationInputError(ValueError):
    """A profile or corner set the server cannot use; the message names the field."""


class ProfileSource(StrEnum):
    """Where the active profile came from."""

    NONE = "none"  # no profile yet
    FILE = "file"  # the calibration file, read at start-up
    FEED = "feed"  # the camera feed's own (its pipeline was built with it, or re-fitted it)
    UPLOAD = "upload"  # PUT /api/calibration
    CORNERS = "corners"  # POST /api/calibration/corners


@runtime_checkable
class ProfileTaker(Protocol):
    """A feed that follows a table profile (the camera feed)."""

    @property
    def profile(self) -> TableProfile: ...

    def set_profile(self, profile: TableProfile) -> None: ...


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class ActiveProfile:
    """The profile in force (None before any calibration), its source, and the feed's frame size."""

    profile: TableProfile | None
    source: ProfileSource
    path: Path | None
    saved: bool
    applied: bool
    camera_size: tuple[int, int] | None


class ProfileStore:
    """The active table profile of one server (see the module docstring); thread-safe."""

    def __init__(self, path: Path | None, feed: object | None = None) -> None:
        self.path = path
        self.feed = feed if isinstance(feed, ProfileTaker) else None
        self._lock = threading.Lock()
        self._profile: TableProfile | None = None
        self._source = ProfileSource.NONE
        self._saved = False
        on_file = path is not None and path.is_file()
        if self.feed is not None:
            # The feed was built with the calibration file when there is one.
            self._profile = self.feed.profile
            self._source = ProfileSource.FILE if on_file else ProfileSource.FEED
            self._saved = on_file
        elif path is not None and on_file:
            self._profile, self._source, self._saved = load_profile(path), ProfileSource.FILE, True

    def active(self) -> ActiveProfile:
        """The profile in force now; a feed's own re-fit (a bumped camera) counts as the feed's."""
        with self._lock:
            profile, source, saved = self._profile, self._source, self._saved
        applied = False
        if self.feed is not None:
            live = self.feed.profile
            applied = True
            if live is not profile:
                profile, source, saved = live, ProfileSource.FEED, False
        size = getattr(self.feed, "frame_size", None) if self.feed is not None else None
        return ActiveProfile(
            profile=profile, source=source, path=self.path, saved=saved, applied=applied,
            camera_size=(int(size[0]), int(size[1])) if size is not None else None,
        )

    def set(self, profile: TableProfile, source: ProfileSource) -> ActiveProfile:
        """Make `profile` the active one: saved to the calibration file when there is one (an
        `OSError` leaves everything as it was), then handed to the feed."""
        with self._lock:
            saved = False
            if self.path is not None:
                save_profile(profile, self.path)
                saved = True
            self._profile, self._source, self._saved = profile, source, saved
            if self.feed is not None:
                self.feed.set_profile(profile)
        log.info("table profile from %s in force (%s)", source, self.path or "not saved")
        return self.active()


# -- checking what arrives -----------------------------------------------------------------------


def check_for_game(profile: TableProfile, game: str, players: int, where: str) -> Layout:
    """The layout `profile` gives the game being played; refuses a profile made for another
    game or player count, or a table its zones do not fit."""
    if profile.game != game:
        raise CalibrationInputError(
            f"{where}: field 'game' is {profile.game!r} but this table plays {game!r}; calibrate "
            "for this game or start a new game of that one"
        )
    if profile.players != players:
        raise CalibrationInputError(
            f"{where}: field 'players' is {profile.players} but this game has {players} players; "
            "calibrate for this player count (the zones depend on it)"
        )
    try:
        return build_layout(game, players, profile.table_mm, marker_mm=profile.marker_mm)
    except CalibrationError as exc:
        raise CalibrationInputError(f"{where}: field 'table_mm': {exc}") from None


def profile_from_upload(data: Mapping[str, Any], game: str, players: int) -> TableProfile:
    """A profile file's JSON (as `cardtrack calibrate table` writes it), checked."""
    where = "profile"
    try:
        profile = profile_from_dict(data, where)
    except CalibrationError as exc:
        raise CalibrationInputError(str(exc)) from None
    except (TypeError, KeyError, IndexError, ArithmeticError, np.linalg.LinAlgError) as exc:
        raise CalibrationInputError(f"{where}: cannot be read as a table profile ({exc})") from None
    check_for_game(profile, game, players, where)
    return profile


def profile_from_corners(
    corners: Sequence[Sequence[float]],
    *,
    game: str,
    players: int,
    image_size: tuple[int, int] | None,
    table_mm: tuple[float, float] | None,
    base: TableProfile | None,
    created: str,
) -> TableProfile:
    """Fit a profile to four table corners (camera pixels, in `CORNER_ORDER`).

    The image size, table size and marker size default to those of `base` (the active
    profile), else the table the game's layout is drawn for; `base`'s lens is kept when it was
    made at the same image size.
    """
    if game not in available_games():
        raise CalibrationInputError(f"game: {game!r} has no zone layout to calibrate for")
    size = image_size or (base.image_size if base is not None else None)
    if size is None:
        raise CalibrationInputError(
            "image_size: give the camera frame's [width, height] in pixels (no profile is active "
            "to take it from)"
        )
    w, h = int(size[0]), int(size[1])
    if not (w > 0 and h > 0):
        raise CalibrationInputError(f"image_size: {w}×{h} is not an image size")
    pts = np.asarray(corners, np.float64).reshape(4, 2)
    if not np.all(np.isfinite(pts)):
        raise CalibrationInputError("corners: every coordinate must be a finite number of pixels")
    outside = [k for k, (x, y) in enumerate(pts) if not (-w <= x <= 2 * w and -h <= y <= 2 * h)]
    if outside:
        k = outside[0]
        raise CalibrationInputError(
            f"corners[{k}] ({CORNER_ORDER[k]}) {pts[k].tolist()} lies far outside the {w}×{h} "
            "camera image; give pixels of the camera frame"
        )
    _check_quad(pts)
    try:
        template = load_template(game)
        template.check_players(players)
        if table_mm is None:
            table_mm = base.table_mm if base is not None else template.recommended_table(players)
        marker_mm = base.marker_mm if base is not None else DEFAULT_MARKER_MM
        geometry = TableGeometry(table_mm=(float(table_mm[0]), float(table_mm[1])), marker_mm=marker_mm)
    except (CalibrationError, ValueError) as exc:
        raise CalibrationInputError(f"table_mm: {exc}") from None
    lens = base.lens if base is not None and tuple(base.image_size) == (w, h) else None
    try:
        profile = calibrate_from_corners(
            pts, image_size=(w, h), game=game, players=players, geometry=geometry, lens=lens,
            created=created,
        )
        # The same checks as a loaded file: invertible, the whole image maps onto the table plane.
        profile_from_dict(profile.to_dict(), "corners")
    except CalibrationError as exc:
        raise CalibrationInputError(f"corners: {exc}") from None
    check_for_game(profile, game, players, "corners")
    return profile


def _check_quad(pts: np.ndarray) -> None:
    # Image y runs down: top-left, top-right, bottom-right, bottom-left turn clockwise on
    # screen, which is a positive shoelace sum here. Every turn must have the same sign.
    turns = []
    for k in range(4):
        a, b, c = pts[k], pts[(k + 1) % 4], pts[(k + 2) % 4]
        turns.append(float((b[0] - a[0]) * (c[1] - b[1]) - (b[1] - a[1]) * (c[0] - b[0])))
    order = ", ".join(CORNER_ORDER)
    if all(t < 0 for t in turns):
        raise CalibrationInputError(
            f"corners: they go anticlockwise; give them in this order: {order}"
        )
    if not all(t > 0 for t in turns):
        raise CalibrationInputError(
            f"corners: the four points do not outline the table (their sides cross or three lie "
            f"on a line); give them in this order: {order}"
        )


# -- what GET /api/calibration shows ---------------------------------------------------------------


def _pairs(points: np.ndarray, digits: int) -> list[list[float]] | None:
    if not np.all(np.isfinite(points)):
        return None
    return [[round(float(x), digits), round(float(y), digits)] for x, y in points]


def _errors(profile: TableProfile) -> dict[str, Any] | None:
    return profile.errors.to_dict() if profile.errors is not None else None


def layout_out(layout: Layout, profile: TableProfile | None) -> dict[str, Any]:
    """The zones in table millimetres and, with a profile, in camera pixels."""
    zones = []
    for zone in layout.zones:
        mm = np.asarray(zone.polygon, np.float64)
        px = None
        if profile is not None:
            with np.errstate(all="ignore"):
                px = _pairs(profile.table_to_image(mm), 1)
        zones.append({
            "id": zone.id, "kind": str(zone.kind), "stacking": str(zone.stacking),
            "player": zone.player, "parent": zone.parent, "polygon_mm": _pairs(mm, 2) or [],
            "polygon_px": px,
        })
    table = np.array([[0.0, 0.0], [layout.table_mm[0], 0.0], [layout.table_mm[0], layout.table_mm[1]],
                      [0.0, layout.table_mm[1]]])
    table_px = None
    if profile is not None:
        with np.errstate(all="ignore"):
            table_px = _pairs(profile.table_to_image(table), 1)
    return {
        "game": layout.game, "players": layout.players, "table_mm": list(layout.table_mm),
        "card_mm": list(layout.card_mm), "table_px": table_px, "zones": zones,
    }


def describe(active: ActiveProfile, *, game: str, players: int) -> dict[str, Any]:
    """Plain data for `GET /api/calibration` (see `server.schemas.CalibrationOut`)."""
    profile = active.profile
    layout: Layout | None = None
    layout_error = None
    if game in available_games():
        try:
            if profile is not None and profile.game == game and profile.players == players:
                layout = build_layout(game, players, profile.table_mm, marker_mm=profile.marker_mm)
            else:
                layout = build_layout(game, players)
        except CalibrationError as exc:
            layout_error = str(exc)
    else:
        layout_error = f"{game} has no zone layout"
    matches = profile is not None and profile.game == game and profile.players == players
    if profile is not None and not matches:
        layout_error = (
            f"the profile is for {profile.players} players of {profile.game}; this table plays "
            f"{players} players of {game}: calibrate again"
        )
    return {
        "calibrated": profile is not None,
        "source": str(active.source),
        "path": str(active.path) if active.path is not None else None,
        "saved": active.saved,
        "applied": active.applied,
        "game": game,
        "players": players,
        "corner_order": list(CORNER_ORDER),
        "camera_size": list(active.camera_size) if active.camera_size else (
            list(profile.image_size) if profile is not None else None),
        "profile": _profile_out(profile) if profile is not None else None,
        "fit_error": _errors(profile) if profile is not None else None,
        "layout": layout_out(layout, profile if matches else None) if layout is not None else None,
        "layout_error": layout_error,
    }


def _profile_out(profile: TableProfile) -> dict[str, Any]:
    return {
        "game": profile.game,
        "players": profile.players,
        "table_mm": [float(profile.table_mm[0]), float(profile.table_mm[1])],
        "marker_mm": float(profile.marker_mm),
        "image_size": [int(profile.image_size[0]), int(profile.image_size[1])],
        "method": str(profile.method),
        "homography": [[float(f"{v:.12g}") for v in row] for row in profile.homography],
        "lens": profile.lens is not None,
        "created": profile.created,
        "errors": _errors(profile),
    }
