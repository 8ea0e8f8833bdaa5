"""Turning plain dictionaries (scenario files, journal rows, API bodies) into typed moves.

Each game declares its moves as frozen dataclasses with a `NAME` class variable; this module
decodes `{"player": 1, "move": "mine", "pile": 3}` into the matching class, checking that
every field is present and of the right type, and encodes moves back to dictionaries.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Mapping, Sequence
from functools import cache
from typing import Any, ClassVar, Protocol

from engine.errors import MoveFormatError


class MoveType(Protocol):
    NAME: ClassVar[str]
    player: int


@cache
def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def _coerce(value: Any, hint: Any, where: str) -> Any:
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin in (types.UnionType, typing.Union):
        if value is None and type(None) in args:
            return None
        errors = []
        for arg in args:
            if arg is type(None):
                continue
            try:
                return _coerce(value, arg, where)
            except MoveFormatError as exc:
                errors.append(str(exc))
        raise MoveFormatError(errors[0] if errors else f"{where}: bad value {value!r}")
    if origin is tuple:
        if isinstance(value, str) or not isinstance(value, Sequence):
            raise MoveFormatError(f"{where}: expected a list, got {value!r}")
        item = args[0]
        return tuple(_coerce(v, item, f"{where}[{i}]") for i, v in enumerate(value))
    if origin in (Mapping, dict) or hint is Mapping:
        if not isinstance(value, Mapping):
            raise MoveFormatError(f"{where}: expected a mapping, got {value!r}")
        kt, vt = args
        return tuple(
            sorted((_coerce(k, kt, where), _coerce(v, vt, f"{where}.{k}")) for k, v in value.items())
        )
    if hint is int:
        if isinstance(value, bool) or not isinstance(value, int):
            if isinstance(value, str) and value.strip().isdigit():
                return int(value)
            raise MoveFormatError(f"{where}: expected a whole number, got {value!r}")
        return value
    if hint is str:
        if not isinstance(value, str):
            raise MoveFormatError(f"{where}: expected text, got {value!r}")
        return value
    if hint is bool:
        if not isinstance(value, bool):
            raise MoveFormatError(f"{where}: expected true or false, got {value!r}")
        return value
    raise TypeError(f"unsupported move field type {hint!r}")  # programmer error


def decode_move(classes: Sequence[type], data: Mapping[str, Any]) -> Any:
    """Build the move named by `data["move"]` from one of `classes`."""
    if not isinstance(data, Mapping):
        raise MoveFormatError(f"a move must be a mapping, got {data!r}")
    by_name: dict[str, type] = {getattr(c, "NAME"): c for c in classes}  # noqa: B009
    name = data.get("move")
    if name not in by_name:
        known = ", ".join(sorted(by_name))
        raise MoveFormatError(f"unknown move {name!r}; this game's moves are: {known}")
    cls = by_name[name]
    hints = _hints(cls)
    kwargs: dict[str, Any] = {}
    fields = {f.name: f for f in dataclasses.fields(cls)}
    keys = {f.metadata.get("key", f.name): f.name for f in fields.values()}
    extra = set(data) - set(keys) - {"move", "expect", "note"}
    if extra:
        raise MoveFormatError(
            f"move {name!r}: unknown field(s) {', '.join(sorted(extra))}; "
            f"allowed: {', '.join(keys)}"
        )
    for key, fname in keys.items():
        f = fields[fname]
        if key in data:
            kwargs[fname] = _coerce(data[key], hints[fname], f"move {name!r} field {key!r}")
        elif f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
            raise MoveFormatError(f"move {name!r}: missing field {key!r}")
    return cls(**kwargs)


def encode_move(move: Any) -> dict[str, Any]:
    """The plain-dictionary form of a move, omitting fields left at their default."""
    out: dict[str, Any] = {"player": move.player, "move": type(move).NAME}
    for f in dataclasses.fields(move):
        if f.name == "player":
            continue
        value = getattr(move, f.name)
        if f.default is not dataclasses.MISSING and value == f.default:
            continue
        if isinstance(value, tuple) and value and isinstance(value[0], tuple):
            value = dict(value)
        elif isinstance(value, tuple):
            value = list(value)
        out[f.metadata.get("key", f.name)] = value
    return out
