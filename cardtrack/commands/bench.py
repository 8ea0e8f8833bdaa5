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

from cardtrack.commands.synth import add_bench_arguments
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
    synth = bsub.add_parser("synth", help="synthetic footage frames rendered per second")
    add_bench_arguments(synth)
    srv = bsub.add_parser(
        "server", help="time from a move being decided to its arrival at websocket viewers"
    )
    srv.add_argument("--viewers", type=int, default=50)
    srv.add_argument("--moves", type=int, default=100)
    srv.add_argument("--interval", type=float, default=0.05, help="seconds between moves")
    srv.add_argument("--players", type=int, default=3)
    srv.add_argument("--seed", type=int, default=1000)
    srv.set_defaults(func=bench_server)


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


def bench_server(args: argparse.Namespace) -> int:
    """A real uvicorn server on loopback (in a thread), `--viewers` websocket clients, and a
    simulated game submitted move by move: latency = arrival of the move's event at a viewer
    minus the instant the move was handed to the session (journal commit included)."""
    import asyncio
    import statistics
    import tempfile
    import threading
    from pathlib import Path

    import uvicorn
    from websockets.asyncio.client import connect

    from server.app import create_app
    from server.settings import ServerSettings

    game = "minecraft-card-game"
    ruleset = get_game(game)
    moves = simulate_game(ruleset, players=args.players, seed=args.seed).moves[: args.moves]
    with tempfile.TemporaryDirectory(prefix="cardtrack-bench-") as tmp:
        settings = ServerSettings(
            game=game, players=args.players, seed=args.seed, port=0,
            journal_path=Path(tmp) / "bench.sqlite",
        )
        app = create_app(settings)
        server = uvicorn.Server(uvicorn.Config(
            app, host=settings.host, port=0, log_level="warning", ws_per_message_deflate=False
        ))
        thread = threading.Thread(target=server.run, daemon=True)
        thread.start()
        while not server.started:
            if not thread.is_alive():
                raise OSError("the benchmark server did not start")
            time.sleep(0.02)
        port = server.servers[0].sockets[0].getsockname()[1]
        session = app.state.session
        decided: dict[int, float] = {}
        arrivals: list[dict[int, float]] = [{} for _ in range(args.viewers)]

        def play() -> None:
            for move in moves:
                at = time.perf_counter()
                decided[session.submit(ruleset.move_to_dict(move), source="bench").seq] = at
                time.sleep(args.interval)

        async def viewer(i: int, ready: asyncio.Event, ready_count: list[int]) -> None:
            url = f"ws://127.0.0.1:{port}/ws?audience=public"
            async with connect(url, max_size=None) as ws:
                await ws.recv()  # the initial state
                ready_count[0] += 1
                if ready_count[0] == args.viewers:
                    ready.set()
                while len(arrivals[i]) < len(moves):
                    message = json.loads(await ws.recv())
                    if message["type"] == "event" and message["event"]["kind"] == "move":
                        arrivals[i][message["seq"]] = time.perf_counter()

        async def main() -> float:
            ready = asyncio.Event()
            count = [0]
            tasks = [asyncio.create_task(viewer(i, ready, count)) for i in range(args.viewers)]
            await asyncio.wait_for(ready.wait(), 30)
            start = time.perf_counter()
            await asyncio.to_thread(play)
            await asyncio.wait(tasks, timeout=30)
            for task in tasks:
                task.cancel()
            return time.perf_counter() - start

        wall = asyncio.run(main())
        server.should_exit = True
        thread.join(10)
    latencies = sorted(
        (got[seq] - at) * 1000 for got in arrivals for seq, at in decided.items() if seq in got
    )
    expected = len(decided) * args.viewers
    q = statistics.quantiles(latencies, n=100) if len(latencies) > 1 else latencies * 99
    print(
        json.dumps(
            {
                "benchmark": "server",
                "viewers": args.viewers,
                "moves": len(decided),
                "interval_s": args.interval,
                "deliveries": len(latencies),
                "missing": expected - len(latencies),
                "latency_ms": {
                    "p50": round(q[49], 2),
                    "p95": round(q[94], 2),
                    "max": round(latencies[-1], 2) if latencies else None,
                },
                "wall_s": round(wall, 2),
                "transport": "websocket on loopback, uvicorn in a thread of this process",
                "machine": machine(),
            },
            indent=2,
        )
    )
    return 0
