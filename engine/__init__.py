"""Pure game rules: catalogs, states, moves, warnings, replay and per-viewer views.

Standard library only. `get_game(id)` returns a registered `Ruleset`; `apply(state, move)`
returns a `Step` with the new state and the `GameWarning`s the move raised.
"""

from engine.catalog import CardType, Catalog, Face, load_catalog
from engine.core import (
    Audience,
    GameWarning,
    OptionSpec,
    Replay,
    Ruleset,
    Step,
    game_ids,
    get_game,
    is_legal,
    replay,
)
from engine.errors import (
    CatalogError,
    EngineError,
    MoveFormatError,
    ScenarioError,
    SetupError,
    UnknownCardError,
    UnknownGameError,
)

__all__ = [
    "Audience",
    "CardType",
    "Catalog",
    "CatalogError",
    "EngineError",
    "Face",
    "GameWarning",
    "MoveFormatError",
    "OptionSpec",
    "Replay",
    "Ruleset",
    "ScenarioError",
    "SetupError",
    "Step",
    "UnknownCardError",
    "UnknownGameError",
    "game_ids",
    "get_game",
    "is_legal",
    "load_catalog",
    "replay",
]
