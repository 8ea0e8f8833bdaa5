"""Random legal games: for statistics, property tests, and scripts for synthetic footage.

A simulated player picks among the ruleset's `legal_moves` with a seeded `random.Random`,
weighted by move name (a game may declare `sim_weights`; unknown names weigh 1). Everything is
reproducible from the seed. A game that has not ended after `max_moves` is reported unfinished
instead of looping forever.
"""

from __future__ import annotations

import random
import statistics
from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from engine.core import GameWarning, Ruleset

DEFAULT_MAX_MOVES = 5000
DEFAULT_WEIGHTS: Mapping[str, float] = {"end-turn": 0.05}


@dataclass(frozen=True, slots=True, kw_only=True)
class SimulatedGame:
    """One random game: its seed, moves in order, final state and outcome."""

    game: str
    players: int
    seed: int
    options: Mapping[str, Any]
    moves: tuple[Any, ...]
    final: Any
    scores: tuple[int, ...]
    winner: int | None
    finished: bool
    turns: int
    warnings: tuple[GameWarning, ...] = field(default=())

    def to_scenario(self, ruleset: Ruleset[Any, Any]) -> dict[str, Any]:
        """The game as a scenario document (docs/scenarios.md)."""
        return {
            "name": f"simulated {self.game}, {self.players} players, seed {self.seed}",
            "description": "A random legal game written by `cardtrack simulate`.",
            "game": self.game,
            "players": self.players,
            "options": dict(self.options),
            "seed": self.seed,
            "moves": [ruleset.move_to_dict(m) for m in self.moves],
            "expect": {
                "scores": list(self.scores),
                "winner": self.winner,
                "over": self.finished,
            },
        }


def choose(rng: random.Random, moves: list[Any], weights: Mapping[str, float]) -> Any:
    w = [weights.get(type(m).NAME, 1.0) for m in moves]
    return rng.choices(moves, weights=w, k=1)[0]


def simulate_game(
    ruleset: Ruleset[Any, Any],
    *,
    players: int,
    seed: int,
    options: Mapping[str, Any] | None = None,
    max_moves: int = DEFAULT_MAX_MOVES,
) -> SimulatedGame:
    """Play one random legal game from a seeded deal."""
    rng = random.Random(f"simulate:{ruleset.id}:{seed}")
    weights = {**DEFAULT_WEIGHTS, **getattr(ruleset, "sim_weights", {})}
    state = ruleset.initial_state(players=players, options=options, seed=seed)
    moves: list[Any] = []
    warnings: list[GameWarning] = []
    for _ in range(max_moves):
        if ruleset.is_over(state):
            break
        legal = list(ruleset.legal_moves(state))
        if not legal:
            break
        move = choose(rng, legal, weights)
        step = ruleset.apply(state, move)
        warnings.extend(step.warnings)
        moves.append(move)
        state = step.state
    return SimulatedGame(
        game=ruleset.id,
        players=players,
        seed=seed,
        options=dict(options or {}),
        moves=tuple(moves),
        final=state,
        scores=tuple(ruleset.scores(state)),
        winner=ruleset.winner(state),
        finished=ruleset.is_over(state),
        turns=int(getattr(state, "turn", 0)),
        warnings=tuple(warnings),
    )


def simulate_many(
    ruleset: Ruleset[Any, Any],
    *,
    players: int,
    games: int,
    seed: int,
    options: Mapping[str, Any] | None = None,
    max_moves: int = DEFAULT_MAX_MOVES,
) -> Iterator[SimulatedGame]:
    for i in range(games):
        yield simulate_game(
            ruleset, players=players, seed=seed + i, options=options, max_moves=max_moves
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class SimulationStats:
    games: int
    finished: int
    moves_mean: float
    moves_median: float
    moves_max: int
    turns_mean: float
    winners: Mapping[str, int]
    winning_score_mean: float
    score_mean: tuple[float, ...]
    warnings: int

    def to_dict(self) -> dict[str, Any]:
        return {
            "games": self.games,
            "finished": self.finished,
            "moves": {
                "mean": round(self.moves_mean, 1),
                "median": self.moves_median,
                "max": self.moves_max,
            },
            "turns_mean": round(self.turns_mean, 1),
            "wins_by_seat": dict(self.winners),
            "winning_score_mean": round(self.winning_score_mean, 2),
            "score_mean_by_seat": [round(s, 2) for s in self.score_mean],
            "warnings_in_legal_play": self.warnings,
        }


def summarize(results: list[SimulatedGame]) -> SimulationStats:
    if not results:
        raise ValueError("no games to summarize")
    lengths = [len(r.moves) for r in results]
    winners: Counter[str] = Counter(
        f"player-{r.winner}" if r.winner is not None else ("draw" if r.finished else "unfinished")
        for r in results
    )
    win_scores = [r.scores[r.winner - 1] for r in results if r.winner is not None]
    players = len(results[0].scores)
    return SimulationStats(
        games=len(results),
        finished=sum(r.finished for r in results),
        moves_mean=statistics.fmean(lengths),
        moves_median=statistics.median(lengths),
        moves_max=max(lengths),
        turns_mean=statistics.fmean(r.turns for r in results),
        winners=dict(sorted(winners.items())),
        winning_score_mean=statistics.fmean(win_scores) if win_scores else 0.0,
        score_mean=tuple(statistics.fmean(r.scores[i] for r in results) for i in range(players)),
        warnings=sum(len(r.warnings) for r in results),
    )
