"""Scenario files: a game's setup, a list of moves, and what must be true afterwards.

A scenario is a plain mapping (read from YAML or JSON by the caller; the engine stays
stdlib-only). `run_scenario` replays it and returns every mismatch between what the rules did
and what the file expects, as readable lines. The format is documented in docs/scenarios.md.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from engine.core import GameWarning, Ruleset, get_game
from engine.errors import EngineError, ScenarioError

# Zones whose order matters when compared (piles, top first); others compare as multisets.
ORDERED_ZONE_PREFIXES = ("resource-pile-", "craft-pile-", "landscape-deck", "mob-deck")

_TOP_KEYS = {
    "name",
    "description",
    "game",
    "players",
    "options",
    "seed",
    "setup",
    "moves",
    "expect",
    "source",
}
_EXPECT_KEYS = {"warnings", "scores", "winner", "over", "zones", "used_tools", "current", "turn"}


@dataclass(frozen=True, slots=True, kw_only=True)
class Scenario:
    """A validated scenario: everything needed to replay it and check the outcome."""

    name: str
    game: str
    players: int
    options: Mapping[str, Any]
    seed: int | None
    setup: Mapping[str, Any] | None
    moves: tuple[Mapping[str, Any], ...]
    expect: Mapping[str, Any]
    move_expect: Mapping[int, Mapping[str, Any]]
    source: str = "<scenario>"
    description: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class ScenarioResult:
    scenario: Scenario
    mismatches: tuple[str, ...]
    warnings: tuple[GameWarning, ...] = field(default=())
    final: Any = None

    @property
    def ok(self) -> bool:
        return not self.mismatches


def parse_scenario(data: Any, source: str = "<scenario>") -> Scenario:
    """Check the shape of a decoded scenario document; errors name the file and the field."""
    if not isinstance(data, Mapping):
        raise ScenarioError(f"{source}: a scenario must be a mapping with 'game' and 'moves'")
    unknown = set(data) - _TOP_KEYS
    if unknown:
        raise ScenarioError(
            f"{source}: unknown top-level field(s) {', '.join(sorted(unknown))}; "
            f"allowed: {', '.join(sorted(_TOP_KEYS))}"
        )
    for key in ("game", "players", "moves"):
        if key not in data:
            raise ScenarioError(f"{source}: missing field {key!r}")
    if not isinstance(data["game"], str):
        raise ScenarioError(f"{source}: 'game' must be a game id")
    allowed = _EXPECT_KEYS | _game_expect_keys(data["game"])
    players = data["players"]
    if not isinstance(players, int) or isinstance(players, bool):
        raise ScenarioError(f"{source}: 'players' must be a whole number")
    if "seed" in data and "setup" in data:
        raise ScenarioError(f"{source}: give either 'seed' or 'setup', not both")
    seed = data.get("seed")
    if seed is not None and (not isinstance(seed, int) or isinstance(seed, bool)):
        raise ScenarioError(f"{source}: 'seed' must be a whole number")
    setup = data.get("setup")
    if setup is not None and not isinstance(setup, Mapping):
        raise ScenarioError(f"{source}: 'setup' must map zone ids to card lists")
    options = data.get("options") or {}
    if not isinstance(options, Mapping):
        raise ScenarioError(f"{source}: 'options' must be a mapping of option names to values")
    moves = data["moves"] or []
    if not isinstance(moves, Sequence) or isinstance(moves, str):
        raise ScenarioError(f"{source}: 'moves' must be a list")
    move_expect: dict[int, Mapping[str, Any]] = {}
    for i, move in enumerate(moves):
        if not isinstance(move, Mapping):
            raise ScenarioError(f"{source}: moves[{i}] must be a mapping like {{player: 1, move: ...}}")
        if "expect" in move:
            inline = move["expect"]
            if not isinstance(inline, Mapping):
                raise ScenarioError(f"{source}: moves[{i}].expect must be a mapping")
            bad = set(inline) - allowed
            if bad:
                raise ScenarioError(
                    f"{source}: moves[{i}].expect: unknown field(s) {', '.join(sorted(bad))}"
                )
            move_expect[i] = inline
    expect = data.get("expect") or {}
    if not isinstance(expect, Mapping):
        raise ScenarioError(f"{source}: 'expect' must be a mapping")
    bad = set(expect) - allowed
    if bad:
        raise ScenarioError(
            f"{source}: expect: unknown field(s) {', '.join(sorted(bad))}; "
            f"allowed: {', '.join(sorted(allowed))}"
        )
    warnings = expect.get("warnings", {})
    if not isinstance(warnings, Mapping):
        raise ScenarioError(
            f"{source}: expect.warnings must map a move index (0-based) to a list of codes"
        )
    for key, codes in warnings.items():
        try:
            index = int(key)
        except (TypeError, ValueError):
            raise ScenarioError(
                f"{source}: expect.warnings key {key!r} is not a move index"
            ) from None
        if not 0 <= index < len(moves):
            raise ScenarioError(
                f"{source}: expect.warnings names move {index}, but there are {len(moves)} moves"
            )
        if isinstance(codes, str):
            codes = [codes]
        merged = dict(move_expect.get(index, {}))
        merged["warnings"] = [*merged.get("warnings", []), *codes]
        move_expect[index] = merged
    return Scenario(
        name=str(data.get("name", source)),
        description=str(data.get("description", "")),
        game=data["game"],
        players=players,
        options=dict(options),
        seed=seed,
        setup=setup,
        moves=tuple(moves),
        expect=expect,
        move_expect=move_expect,
        source=source,
    )


def _game_expect_keys(game: str) -> set[str]:
    """Expectations a game adds (its ruleset's `expectation_keys`, checked by its
    `check_expectation(state, key, want)`, which returns None or what differs)."""
    try:
        ruleset = get_game(game)
    except EngineError:
        return set()
    return set(getattr(ruleset, "expectation_keys", ()))


def _fmt(cards: Sequence[Any]) -> str:
    return "[" + ", ".join("?" if c is None else str(c) for c in cards) + "]"


def _check_state(
    ruleset: Ruleset[Any, Any], state: Any, expect: Mapping[str, Any], where: str
) -> list[str]:
    out: list[str] = []
    if "scores" in expect:
        got = list(ruleset.scores(state))
        want = list(expect["scores"])
        if got != want:
            out.append(f"{where}: scores expected {want}, got {got}")
    if "winner" in expect:
        got_w = ruleset.winner(state)
        if got_w != expect["winner"]:
            out.append(f"{where}: winner expected {expect['winner']}, got {got_w}")
    if "over" in expect:
        got_o = ruleset.is_over(state)
        if got_o != bool(expect["over"]):
            out.append(f"{where}: game over expected {expect['over']}, got {got_o}")
    for key in ("current", "turn"):
        if key in expect:
            got_v = getattr(state, key, None)
            if got_v != expect[key]:
                out.append(f"{where}: {key} expected {expect[key]}, got {got_v}")
    if "used_tools" in expect:
        got_u = sorted(getattr(state, "used", ()))
        want_u = sorted(expect["used_tools"])
        if got_u != want_u:
            out.append(f"{where}: used tools expected {want_u}, got {got_u}")
    for key in sorted(set(expect) - _EXPECT_KEYS):
        problem = ruleset.check_expectation(state, key, expect[key])  # type: ignore[attr-defined]
        if problem is not None:
            out.append(f"{where}: {problem}")
    zones = expect.get("zones") or {}
    if zones:
        actual = ruleset.zones(state)
        for zone, want in zones.items():
            if zone not in actual:
                out.append(f"{where}: no zone {zone!r} in this game (zones: {', '.join(actual)})")
                continue
            have = actual[zone]
            if isinstance(want, Mapping):
                if "count" in want and len(have) != want["count"]:
                    out.append(
                        f"{where}: {zone} expected {want['count']} cards, got {len(have)} {_fmt(have)}"
                    )
                if "top" in want and (have[0] if have else None) != want["top"]:
                    out.append(
                        f"{where}: {zone} top expected {want['top']}, got {have[0] if have else 'nothing'}"
                    )
                if "contains" in want:
                    present: Counter[str] = Counter(str(c) for c in have if c is not None)
                    missing: Counter[str] = Counter(map(str, want["contains"])) - present
                    if missing:
                        out.append(
                            f"{where}: {zone} should contain {_fmt(sorted(missing.elements()))}; "
                            f"it holds {_fmt(have)}"
                        )
                continue
            if isinstance(want, int) and not isinstance(want, bool):
                # A number: how many cards (or tokens, for a game's token zones) lie there.
                if len(have) != want:
                    out.append(f"{where}: {zone} expected {want} cards, got {len(have)} {_fmt(have)}")
                continue
            if isinstance(want, str):
                want = [want]
            want_list = list(want or [])
            if zone.startswith(ORDERED_ZONE_PREFIXES):
                if list(have) != want_list:
                    out.append(f"{where}: {zone} expected {_fmt(want_list)}, got {_fmt(have)}")
            elif Counter(have) != Counter(want_list):
                out.append(
                    f"{where}: {zone} expected {_fmt(sorted(want_list, key=str))}, "
                    f"got {_fmt(sorted(have, key=str))}"
                )
    return out


def run_scenario(scenario: Scenario) -> ScenarioResult:
    """Replay a scenario; malformed moves are reported as mismatches at their index."""
    src = scenario.source
    try:
        ruleset = get_game(scenario.game)
        state = ruleset.initial_state(
            players=scenario.players,
            options=scenario.options,
            seed=scenario.seed,
            setup=scenario.setup,
        )
    except EngineError as exc:
        raise ScenarioError(f"{src}: cannot set up the game: {exc}") from None
    mismatches: list[str] = []
    all_warnings: list[GameWarning] = []
    for i, data in enumerate(scenario.moves):
        label = f"move {i} ({_describe(data)})"
        try:
            move = ruleset.parse_move(data)
            step = ruleset.apply(state, move)
        except EngineError as exc:
            mismatches.append(f"{label}: {exc}")
            break
        state = step.state
        all_warnings.extend(step.warnings)
        got = sorted(w.code for w in step.warnings)
        inline = scenario.move_expect.get(i, {})
        want = sorted(inline.get("warnings", []))
        if got != want:
            detail = "; ".join(f"{w.code}: {w.message}" for w in step.warnings)
            mismatches.append(
                f"{label}: expected warnings {want or 'none'}, got {got or 'none'}"
                + (f" ({detail})" if detail else "")
            )
        state_expect = {k: v for k, v in inline.items() if k != "warnings"}
        if state_expect:
            mismatches.extend(_check_state(ruleset, state, state_expect, f"after {label}"))
    final = {k: v for k, v in scenario.expect.items() if k != "warnings"}
    mismatches.extend(_check_state(ruleset, state, final, "at the end"))
    return ScenarioResult(
        scenario=scenario,
        mismatches=tuple(mismatches),
        warnings=tuple(all_warnings),
        final=state,
    )


def _describe(move: Mapping[str, Any]) -> str:
    parts = [f"player {move.get('player')}", str(move.get("move"))]
    parts += [f"{k}={v}" for k, v in move.items() if k not in ("player", "move", "expect", "note")]
    return " ".join(parts)
