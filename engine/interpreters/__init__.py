"""Per-game interpreter modules: how each game looks on camera and which moves explain a change.

`interpreter_for(ruleset)` returns the `GameInterpreter` registered for the ruleset's game id;
the generic search lives in `engine.interpret`. A game's interpreter is named in `_MODULES`
(game id → module and class), imported only when asked for.
"""

from __future__ import annotations

import importlib
from typing import Any

from engine.core import Ruleset
from engine.errors import UnknownGameError

_MODULES: dict[str, tuple[str, str]] = {
    "angry-birds-power-cards": ("engine.interpreters.angry_birds_power_cards", "AbInterpreter"),
    "minecraft-card-game": ("engine.interpreters.minecraft_card_game", "McgInterpreter"),
    "minecraft-explorers": ("engine.interpreters.minecraft_explorers", "ExplorersInterpreter"),
    "minecraft-mk1": ("engine.interpreters.minecraft_mk1", "Mk1Interpreter"),
}


def interpreter_for(ruleset: Ruleset[Any, Any]) -> Any:
    """The interpreter object for `ruleset`, or a clear error naming the games served."""
    try:
        module_name, class_name = _MODULES[ruleset.id]
    except KeyError:
        served = ", ".join(sorted(_MODULES))
        raise UnknownGameError(
            f"no snapshot interpreter for game {ruleset.id!r}; interpreters exist for: {served}"
        ) from None
    cls = getattr(importlib.import_module(module_name), class_name)
    return cls(ruleset)
