"""Small pure helpers on the tuples game states are made of (states are immutable)."""

from __future__ import annotations

from typing import Any


def replace_at(items: tuple[Any, ...], index: int, value: Any) -> tuple[Any, ...]:
    """`items` with the entry at `index` replaced by `value`."""
    return (*items[:index], value, *items[index + 1 :])


def remove_one(items: tuple[str, ...], card: str) -> tuple[str, ...] | None:
    """`items` without one copy of `card`, or None when it is not there."""
    try:
        i = items.index(card)
    except ValueError:
        return None
    return items[:i] + items[i + 1 :]
