"""`cardtrack bench`: measured speed figures (never asserted by tests).

`bench engine` replays simulated games and reports `apply` calls per second on one core;
other benchmarks register here as the pipeline grows.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from typing import Any

from engine import get_game
from engine.simulate import simulate_game


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        "bench",
        help="measure speed: engine applies per second (more benchmarks as stages land)",
        description="Benchmarks print JSON with the figures and the machine they ran on.",
    )
    bsub = parser.add_subparsers(dest="bench_command", metavar="WHAT", required=True)
    engine = bsub.add_parser("engine", help="rules engine: apply() calls per second, one core")
    engine.add_argument("--game", default="minecraft-card-game")
    engine.add_argument("--players", type=int, default=3)
    engine.add_argument("--games", type=int, default=100)
    engine.add_argument("--seed", type=int, default=1000)
    engine.set_defaults(func=bench_engine)


def machine() -> dict[str, Any]:
    return {
        "python": platform.python_version(),
        "processor": platform.processor() or platform.machine(),
        "cpus": os.cpu_count(),
        "platform": platform.platform(),
    }


def bench_engine(args: argparse.Namespace) -> int:
    ruleset = get_game(args.game)
    games = [
        simulate_game(ruleset, players=args.players, seed=args.seed + i)
        for i in range(args.games)
    ]
    initial = [ruleset.initial_state(players=args.players, seed=g.seed) for g in games]
    applies = sum(len(g.moves) for g in games)
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        for state, game in zip(initial, games, strict=True):
            for move in game.moves:
                state = ruleset.apply(state, move).state
        best = min(best, time.perf_counter() - start)
    start = time.perf_counter()
    legal = 0
    for state, game in zip(initial, games, strict=True):
        for move in game.moves:
            legal += sum(1 for _ in ruleset.legal_moves(state))
            state = ruleset.apply(state, move).state
    enum_time = time.perf_counter() - start - best
    print(
        json.dumps(
            {
                "benchmark": "engine",
                "game": args.game,
                "players": args.players,
                "games": args.games,
                "applies": applies,
                "applies_per_second": round(applies / best),
                "microseconds_per_apply": round(best / applies * 1e6, 2),
                "legal_moves_per_second": round(legal / enum_time) if enum_time > 0 else None,
                "threads": 1,
                "machine": machine(),
            },
            indent=2,
        )
    )
    return 0
