"""Per-game interpreter modules: how each game looks on camera and which moves explain a change.

`interpreter_for(ruleset)` returns the `GameInterpreter` registered for the ruleset's game id;
the generic search lives in `engine.interpret`.
"""

from __future__ import annotations

from typing import Any

from engine.core import Ruleset
from engine.errors import UnknownGameError


def interpreter_for(ruleset: Ruleset[Any, Any]) -> Any:
    """The interpreter module object for `ruleset`, or a clear error naming the games served."""
    if ruleset.id == "minecraft-card-game":
        from engine.interpreters.minecraft_card_game import McgInterpreter

        return McgInterpreter(ruleset)
    raise UnknownGameError(
        f"no snapshot interpreter for game {ruleset.id!r}; interpreters exist for: "
        "minecraft-card-game"
    )
