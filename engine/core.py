"""The interface every game implements, and the values that flow through it.

A game is a `Ruleset`: it builds an initial state from players, options and a seed or an
explicit table, and `apply(state, move)` returns a `Step` (the new state and the warnings the
move raised). `apply` is pure: no clock, no randomness (a seed comes in with the setup and
reshuffles are derived from it), no I/O. An illegal move that physically happened is still
applied and reported as a `GameWarning`; exceptions are reserved for malformed input.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Generic, Protocol, TypeVar

from engine.catalog import Catalog
from engine.errors import SetupError, UnknownGameError


class Audience(StrEnum):
    """Who is looking: the public sees only what is face up on the table."""

    PUBLIC = "public"
    OPERATOR = "operator"
    PLAYER = "player"


@dataclass(frozen=True, slots=True, kw_only=True)
class GameWarning:
    """A rule broken at the table. `code` is stable and part of the public vocabulary."""

    code: str
    message: str
    rule: str
    move_index: int
    players: tuple[int, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "code": self.code,
            "message": self.message,
            "rule": self.rule,
            "move_index": self.move_index,
            "players": list(self.players),
        }


S = TypeVar("S")
M = TypeVar("M")


@dataclass(frozen=True, slots=True)
class Step(Generic[S]):
    """What one move did: the state after it and the warnings it raised."""

    state: S
    warnings: tuple[GameWarning, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class OptionSpec:
    """A named rule option where the rule sheets are ambiguous, with its documented default."""

    name: str
    default: str | int | bool
    choices: tuple[str | int | bool, ...] = ()
    help: str = ""

    @classmethod
    def of(cls, name: str, default: StrEnum, help: str = "") -> OptionSpec:
        """An option whose values are the members of `default`'s enum, `default` first."""
        return cls(name=name, default=default.value, choices=tuple(m.value for m in type(default)), help=help)

    def coerce(self, value: object) -> str | int | bool:
        if self.choices and value not in self.choices:
            allowed = ", ".join(str(c) for c in self.choices)
            raise SetupError(
                f"option {self.name!r} cannot be {value!r}; choose one of: {allowed}"
            )
        if not isinstance(value, str | int | bool):
            raise SetupError(f"option {self.name!r} must be a string, number or boolean")
        return value


def resolve_options(
    specs: Sequence[OptionSpec], given: Mapping[str, object] | None
) -> dict[str, str | int | bool]:
    """Defaults for every option, overridden by `given`; unknown names are an error."""
    by_name = {s.name: s for s in specs}
    out: dict[str, str | int | bool] = {s.name: s.default for s in specs}
    for name, value in (given or {}).items():
        norm = name.replace("-", "_")
        if norm not in by_name:
            known = ", ".join(sorted(by_name)) or "(none)"
            raise SetupError(f"unknown option {name!r}; this game's options are: {known}")
        out[norm] = by_name[norm].coerce(value)
    return out


class Ruleset(Protocol[S, M]):
    """One game. Implementations are stateless objects registered under their id."""

    id: str
    name: str
    min_players: int
    max_players: int

    @property
    def catalog(self) -> Catalog: ...

    @property
    def options(self) -> tuple[OptionSpec, ...]: ...

    def initial_state(
        self,
        *,
        players: int,
        options: Mapping[str, object] | None = None,
        seed: int | None = None,
        setup: Mapping[str, Any] | None = None,
    ) -> S: ...

    def parse_move(self, data: Mapping[str, Any]) -> M: ...

    def move_to_dict(self, move: M) -> dict[str, Any]: ...

    def validate(self, state: S, move: M) -> tuple[GameWarning, ...]: ...

    def apply(self, state: S, move: M) -> Step[S]: ...

    def legal_moves(self, state: S) -> Iterator[M]: ...

    def zones(self, state: S) -> dict[str, tuple[str | None, ...]]: ...

    def scores(self, state: S) -> tuple[int, ...]: ...

    def winner(self, state: S) -> int | None: ...

    def is_over(self, state: S) -> bool: ...

    def view(self, state: S, audience: Audience, player: int | None = None) -> dict[str, Any]: ...


def is_legal(ruleset: Ruleset[S, M], state: S, move: M) -> bool:
    """A move is legal when validating it raises no warning."""
    return not ruleset.validate(state, move)


@dataclass(frozen=True, slots=True)
class Replay(Generic[S]):
    """The result of folding a move list over an initial state."""

    state: S
    steps: tuple[Step[S], ...] = field(default=())

    @property
    def warnings(self) -> tuple[GameWarning, ...]:
        return tuple(w for s in self.steps for w in s.warnings)


def replay(ruleset: Ruleset[S, M], initial: S, moves: Iterable[M]) -> Replay[S]:
    """Replay is a fold of `apply` over the moves."""
    state = initial
    steps: list[Step[S]] = []
    for move in moves:
        step = ruleset.apply(state, move)
        steps.append(step)
        state = step.state
    return Replay(state, tuple(steps))


_REGISTRY: dict[str, Ruleset[Any, Any]] = {}


def register(ruleset: Ruleset[Any, Any]) -> Ruleset[Any, Any]:
    if ruleset.id in _REGISTRY:
        raise ValueError(f"game {ruleset.id!r} is already registered")
    _REGISTRY[ruleset.id] = ruleset
    return ruleset


def get_game(game_id: str) -> Ruleset[Any, Any]:
    """The registered ruleset for a game id, or a clear error listing the known ids."""
    import engine.games  # noqa: F401  (registers the built-in games)

    try:
        return _REGISTRY[game_id]
    except KeyError:
        known = ", ".join(sorted(_REGISTRY))
        raise UnknownGameError(f"unknown game {game_id!r}; known games: {known}") from None


def game_ids() -> tuple[str, ...]:
    import engine.games  # noqa: F401

    return tuple(sorted(_REGISTRY))
