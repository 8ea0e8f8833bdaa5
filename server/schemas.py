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
