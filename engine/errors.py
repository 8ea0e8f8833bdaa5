"""Errors for malformed input and programmer mistakes.

A rule broken at the table is never an exception (it is a `GameWarning`); these are raised only
when the input itself cannot be understood: an unknown card id, a move with missing or
mistyped fields, a catalog or scenario file that does not hold together. All derive from
`ValueError` so callers can catch them in one place, and every message says what was wrong and
what to do about it.
"""

from __future__ import annotations


class EngineError(ValueError):
    """Base class for every malformed-input error raised by the engine."""


class CatalogError(EngineError):
    """A catalog file is missing, unreadable or inconsistent."""


class UnknownCardError(EngineError):
    """A card or face id that the game's catalog does not contain."""


class MoveFormatError(EngineError):
    """A move whose name, fields or field types do not match the game's move set."""


class SetupError(EngineError):
    """An explicit table setup or option value that the game cannot start from."""


class ScenarioError(EngineError):
    """A scenario file that does not follow the documented format."""


class UnknownGameError(EngineError):
    """A game id that is not registered."""
