"""Typed readers for fields of the JSON files calibration loads (profiles, lens files, layouts).

Each reader takes the parsed mapping, the field name and a `where` label (the file name plus
the path to the mapping inside it) and returns the value in the wanted type, or raises the
given error class with a message naming the file, the field, what was found and what to do.
Keeping this in one place makes every loader's messages look the same.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from calibration.errors import CalibrationError


def read_json_file(path: Path, error: type[CalibrationError], hint: str) -> Mapping[str, Any]:
    """Parse a JSON object from `path`, raising `error` (with `hint`) if it cannot."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise error(f"{path}: file not found; {hint}") from None
    except OSError as exc:
        raise error(f"{path}: cannot read the file ({exc.strerror}); {hint}") from None
    except UnicodeDecodeError:
        raise error(f"{path}: not a UTF-8 text file; {hint}") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise error(
            f"{path}: not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg}); {hint}"
        ) from None
    if not isinstance(data, dict):
        raise error(f"{path}: expected a JSON object at the top level, got {_kind(data)}; {hint}")
    return data


def _kind(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return f"the number {value}"
    if isinstance(value, str):
        return f"the string {value!r}"
    if isinstance(value, list):
        return f"a list of {len(value)}"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


def field(data: Mapping[str, Any], name: str, where: str, error: type[CalibrationError]) -> Any:
    """The raw value of a required field."""
    if name not in data:
        raise error(f"{where}: field '{name}' is missing")
    return data[name]


def number(
    data: Mapping[str, Any],
    name: str,
    where: str,
    error: type[CalibrationError],
    *,
    positive: bool = False,
) -> float:
    """A required finite number (optionally > 0)."""
    value = field(data, name, where, error)
    if isinstance(value, bool) or not isinstance(value, int | float) or not np.isfinite(value):
        raise error(f"{where}: field '{name}' must be a number, got {_kind(value)}")
    if positive and value <= 0:
        raise error(f"{where}: field '{name}' must be greater than 0, got {value}")
    return float(value)


def integer(
    data: Mapping[str, Any], name: str, where: str, error: type[CalibrationError]
) -> int:
    """A required integer."""
    value = field(data, name, where, error)
    if isinstance(value, bool) or not isinstance(value, int):
        raise error(f"{where}: field '{name}' must be an integer, got {_kind(value)}")
    return value


def text(data: Mapping[str, Any], name: str, where: str, error: type[CalibrationError]) -> str:
    """A required non-empty string."""
    value = field(data, name, where, error)
    if not isinstance(value, str) or not value:
        raise error(f"{where}: field '{name}' must be a non-empty string, got {_kind(value)}")
    return value


def mapping(
    data: Mapping[str, Any], name: str, where: str, error: type[CalibrationError]
) -> Mapping[str, Any]:
    """A required JSON object."""
    value = field(data, name, where, error)
    if not isinstance(value, dict):
        raise error(f"{where}: field '{name}' must be an object, got {_kind(value)}")
    return value


def array(
    data: Mapping[str, Any],
    name: str,
    where: str,
    error: type[CalibrationError],
    shape: tuple[int | None, ...],
    description: str,
) -> np.ndarray:
    """A required numeric array of the given shape (None = any length on that axis)."""
    value = field(data, name, where, error)
    return as_array(value, f"{where}: field '{name}'", error, shape, description)


def as_array(
    value: object,
    label: str,
    error: type[CalibrationError],
    shape: tuple[int | None, ...],
    description: str,
) -> np.ndarray:
    """Convert `value` to a float64 array of `shape`, or raise `error` naming `label`."""
    try:
        arr = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise error(f"{label} must be {description} (numbers only)") from None
    if arr.ndim != len(shape) or any(
        want is not None and got != want for got, want in zip(arr.shape, shape, strict=True)
    ):
        got = "×".join(str(n) for n in arr.shape) if arr.ndim else "a single value"
        raise error(f"{label} must be {description}, got shape {got}")
    if not np.all(np.isfinite(arr)):
        raise error(f"{label} must be {description} of finite numbers (found NaN or infinity)")
    return arr


def size_pair(
    data: Mapping[str, Any],
    name: str,
    where: str,
    error: type[CalibrationError],
    *,
    integral: bool = False,
) -> tuple[float, float]:
    """A required [width, height] pair of positive numbers."""
    arr = array(data, name, where, error, (2,), "a [width, height] pair")
    if np.any(arr <= 0):
        raise error(f"{where}: field '{name}' must hold two positive numbers, got {arr.tolist()}")
    if integral and np.any(arr != np.round(arr)):
        raise error(f"{where}: field '{name}' must hold two whole numbers, got {arr.tolist()}")
    return float(arr[0]), float(arr[1])
