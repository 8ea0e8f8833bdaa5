"""Wire schemas: what the HTTP API accepts and returns, apart from the engine's domain types.

Request bodies are validated here (unknown fields are refused, sizes are bounded) so that a
malformed request is a 422 with a readable message before it reaches the session; a move's own
fields are the engine's business (a move it cannot read is a 400 with the engine's message).
Response models document the API in OpenAPI and keep what leaves the server explicit.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

OptionValue = Annotated[str, Field(max_length=100)] | int | bool
Name = Annotated[str, Field(max_length=40)]
GameId = Annotated[str, Field(min_length=1, max_length=64, pattern=r"^[a-z0-9][a-z0-9-]*$")]


class AudienceParam(StrEnum):
    public = "public"
    operator = "operator"
    player = "player"


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid")


class MoveBody(_Body):
    """A move typed by the operator, as the engine's plain dictionary."""

    move: dict[str, Any] = Field(
        description='The move, e.g. {"player": 1, "move": "mine", "pile": 3}; '
        "`cardtrack rules show --game G` lists a game's moves.",
        json_schema_extra={"example": {"player": 1, "move": "mine", "pile": 3}},
    )


class NamesBody(_Body):
    names: list[Name] = Field(max_length=16, description="Player names in seat order.")


class OptionsBody(_Body):
    options: dict[Annotated[str, Field(max_length=64)], OptionValue] = Field(
        max_length=32, description="Rule options to change; others keep their value."
    )


class NewGameBody(_Body):
    game: GameId | None = Field(default=None, description="Game id; default: the current game.")
    players: int | None = Field(default=None, ge=1, le=16)
    options: dict[Annotated[str, Field(max_length=64)], OptionValue] | None = Field(
        default=None, max_length=32
    )
    names: list[Name] | None = Field(default=None, max_length=16)
    seed: int | None = Field(default=None, ge=0, le=2**31 - 1)


class WarningOut(BaseModel):
    seq: int
    code: str
    message: str
    rule: str
    players: list[int]
    move_index: int


class MoveOut(BaseModel):
    seq: int
    player: int | None
    move: dict[str, Any]
    text: str
    source: str
    replaced: bool = False


class SubmitOut(BaseModel):
    """The journal entry a write created, and the warnings the move raised."""

    seq: int
    move: dict[str, Any] | None = None
    warnings: list[WarningOut] = []


class PlayerOut(BaseModel):
    n: int
    name: str
    score: int
    zones: dict[str, list[str | None]]


class StatusOut(BaseModel):
    feed: Literal["running", "stopped"]
    feed_name: str | None = None
    camera: Literal["none", "ok", "lost", "moved"]
    fps: float | None = None
    stage_ms: dict[str, float] = {}
    pending: list[dict[str, Any]] = []
    message: str | None = None


class ViewModelOut(BaseModel):
    """What one audience sees (server contract: the view model)."""

    seq: int
    game: str
    game_name: str
    game_no: int
    players: list[PlayerOut]
    target: int | None
    current: int | None
    actions: int | None
    allowed: int | None
    actions_left: int | None
    turn: int | None
    zones: dict[str, list[str | None]]
    tops: dict[str, str | None]
    counts: dict[str, int]
    warnings: list[WarningOut]
    moves: list[MoveOut]
    move_count: int
    winner: int | None
    winner_name: str | None
    over: bool
    status: StatusOut
    audience: AudienceParam
    player: int | None
    delay_s: float
    details: dict[str, Any]


class MovesOut(BaseModel):
    seq: int
    moves: list[MoveOut]


class WarningsOut(BaseModel):
    seq: int
    warnings: list[WarningOut]


class JournalEntryOut(BaseModel):
    seq: int
    kind: Literal["move", "undo", "replace", "note"]
    time: float
    move: dict[str, Any] | None
    target: int | None
    frame: int | None
    source: str
    evidence: dict[str, Any]
    warnings: list[dict[str, Any]]


class JournalOut(BaseModel):
    path: str
    game_no: int
    entries: list[JournalEntryOut]


class OptionOut(BaseModel):
    name: str
    value: OptionValue
    default: OptionValue
    choices: list[OptionValue]
    help: str


class MoveFieldOut(BaseModel):
    name: str
    type: str
    required: bool


class MoveSpecOut(BaseModel):
    name: str
    doc: str
    fields: list[MoveFieldOut]


class GameOut(BaseModel):
    game: str
    game_name: str
    game_no: int
    players: int
    min_players: int
    max_players: int
    names: list[str]
    seed: int | None
    journal: str
    options: list[OptionOut]
    moves: list[MoveSpecOut]
    language: str = "en"


class GamesOut(BaseModel):
    games: list[dict[str, Any]]


class HealthOut(BaseModel):
    status: Literal["ok"]
    feed: Literal["running", "stopped"]
    seq: int


class MetricsOut(BaseModel):
    fps: float | None
    stage_ms: dict[str, float]
    queues: dict[str, int]
    subscribers: int
    moves: int
    seq: int
    feed: Literal["running", "stopped"]
    broadcast: dict[str, Any]


class FeedOut(BaseModel):
    feed: Literal["running", "stopped"]
    name: str | None
    changed: bool


class ErrorOut(BaseModel):
    detail: str


# -- calibration --------------------------------------------------------------------------------

Finite = Annotated[float, Field(allow_inf_nan=False)]
Pixel = Annotated[float, Field(allow_inf_nan=False, ge=-100_000, le=100_000)]
Millimetres = Annotated[float, Field(allow_inf_nan=False, gt=0, le=100_000)]
ImageSide = Annotated[int, Field(ge=1, le=20_000)]


class CornersBody(_Body):
    """Four table corners clicked on the camera picture."""

    corners: list[tuple[Pixel, Pixel]] = Field(
        min_length=4, max_length=4,
        description="Camera-frame pixels [x, y] of the table corners (the centres of the corner "
        "markers), in this order as seen in the image: top-left, top-right, bottom-right, "
        "bottom-left.",
        json_schema_extra={"example": [[349, 200], [957, 98], [1085, 595], [281, 656]]},
    )
    image_size: tuple[ImageSide, ImageSide] | None = Field(
        default=None,
        description="[width, height] of the camera frame the corners are in; default: the "
        "active profile's.",
    )
    table_mm: tuple[Millimetres, Millimetres] | None = Field(
        default=None,
        description="Table size [W, H] in mm between the corners; default: the active profile's, "
        "else the size the game's layout is drawn for.",
    )


class MarkerIn(BaseModel):
    model_config = ConfigDict(extra="allow")

    size_mm: Finite
    dictionary: str | None = None


class ErrorFiguresIn(BaseModel):
    rms_px: Finite
    max_px: Finite
    rms_mm: Finite
    max_mm: Finite
    points: int


class ObservationIn(BaseModel):
    id: int
    corners_px: list[tuple[Finite, Finite]] = Field(max_length=4)
    frames: int
    spread_px: Finite
    rotation: int = 0


class ProfileBody(BaseModel):
    """A table profile as `cardtrack calibrate table` writes it (`table.json`, schema 1)."""

    model_config = ConfigDict(extra="allow")

    schema_: int = Field(alias="schema", description="Profile format version (1).")
    kind: str = Field(description='"cardtrack-table-profile"')
    game: GameId
    players: int = Field(ge=1, le=16)
    table_mm: tuple[Millimetres, Millimetres]
    marker: MarkerIn
    image_size: tuple[ImageSide, ImageSide]
    method: str = Field(max_length=32, description="markers or corners")
    homography: list[list[Finite]] = Field(
        min_length=3, max_length=3, description="3×3 image → table mm (undistorted pixels)."
    )
    lens: dict[str, Any] | None = None
    errors: ErrorFiguresIn | None = None
    observations: list[ObservationIn] = Field(default=[], max_length=4)
    created: str | None = Field(default=None, max_length=64)

    def to_file_dict(self) -> dict[str, Any]:
        """The body as the profile file's plain data."""
        return self.model_dump(by_alias=True)


class ErrorFiguresOut(BaseModel):
    rms_px: float
    max_px: float
    rms_mm: float
    max_mm: float
    points: int


class ZoneOut(BaseModel):
    id: str
    kind: str
    stacking: str
    player: int | None
    parent: str | None
    polygon_mm: list[list[float]]
    polygon_px: list[list[float]] | None = Field(
        description="The zone in camera-frame pixels (null without a profile for this game)."
    )


class LayoutOut(BaseModel):
    game: str
    players: int
    table_mm: list[float]
    card_mm: list[float]
    table_px: list[list[float]] | None
    zones: list[ZoneOut]


class ProfileOut(BaseModel):
    game: str
    players: int
    table_mm: list[float]
    marker_mm: float
    image_size: list[int]
    method: str
    homography: list[list[float]]
    lens: bool
    created: str | None
    errors: ErrorFiguresOut | None


class CalibrationOut(BaseModel):
    """The active table profile and the game's zones on it."""

    calibrated: bool
    source: Literal["none", "file", "feed", "upload", "corners"]
    path: str | None = Field(description="The calibration file (set with --calibration).")
    saved: bool = Field(description="Whether the active profile is the one in that file.")
    applied: bool = Field(description="Whether a camera feed follows this profile.")
    game: str
    players: int
    corner_order: list[str]
    camera_size: list[int] | None = Field(description="[width, height] of the camera frames.")
    profile: ProfileOut | None
    fit_error: ErrorFiguresOut | None
    layout: LayoutOut | None
    layout_error: str | None
