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

from cardtrack.commands.eval import add_reading_options, inset_share
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
    fnd = bsub.add_parser("finder", help="card finder: milliseconds per 1280×720 frame")
    fnd.add_argument("--model", default=None, help="finder model (default models/finder.onnx)")
    fnd.add_argument("--frames", type=int, default=50, help="timed calls")
    fnd.add_argument("--threads", type=int, default=1)
    fnd.add_argument("--seed", type=int, default=9001)
    fnd.set_defaults(func=bench_finder)
    ident = bsub.add_parser("identifier", help="card identifier: embed + match milliseconds per card")
    ident.add_argument("--model", default=None, help="identifier model (default models/identifier.onnx)")
    ident.add_argument("--game", default="minecraft-card-game", help="proxy pack to match against")
    ident.add_argument("--batch", type=int, default=10, help="crops per call")
    ident.add_argument("--calls", type=int, default=200, help="timed calls")
    ident.add_argument("--threads", type=int, default=1)
    ident.add_argument("--inset", type=inset_share, default=None,
                       help="share trimmed off each side for the crop's second view (default: "
                       "vision.identify.CARD_INSET; 0: each crop read once)")
    ident.add_argument("--seed", type=int, default=9002)
    ident.set_defaults(func=bench_identifier)
    pipe = bsub.add_parser(
        "pipeline", help="whole pipeline on bundled footage: fps, ms per stage, settle-to-move time"
    )
    pipe.add_argument("--clip", default="datasets/footage/mattel-2p-tnt-endgame",
                      help="folder with clip.mp4 and truth.json.gz")
    pipe.add_argument("--oracle", action="store_true",
                      help="truth stand-ins instead of the models: measures everything downstream")
    pipe.add_argument("--finder", default=None, help="finder model (default models/finder.onnx)")
    pipe.add_argument("--identifier", default=None, help="identifier model (default models/identifier.onnx)")
    pipe.add_argument("--art", default=None, metavar="PACK",
                      help="art pack the identifier matches against (default: the game's proxy art)")
    pipe.add_argument("--frames", type=int, default=None, help="stop after this many frames")
    pipe.add_argument("--threads", type=int, default=1)
    add_reading_options(pipe)
    pipe.set_defaults(func=bench_pipeline)
    interp = bsub.add_parser(
        "interpret",
        help="interpreter on simulated games read from camera-like snapshots: move precision, "
        "recall, final scores, ms per snapshot",
    )
    interp.add_argument("--game", default="minecraft-card-game")
    interp.add_argument("--games", type=int, default=10)
    interp.add_argument("--players", type=int, default=2)
    interp.add_argument("--seed", type=int, default=100, help="first game's seed")
    interp.add_argument("--noise", type=float, default=0.0,
                        help="chance a card's first face candidate is wrong (right face second)")
    interp.add_argument("--missing", type=float, default=0.0,
                        help="chance a card is missing from one read")
    interp.add_argument("--merge", type=float, default=0.0,
                        help="chance the next move follows before the table goes quiet")
    interp.add_argument("--rereads", type=int, default=2, help="reads of each quiet table, at most")
    interp.add_argument("--hands", action="store_true",
                        help="reads say which zones a hand reached (every zone the moves changed), "
                        "as the live pipeline's do")
    interp.set_defaults(func=bench_interpret)


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


def bench_finder(args: argparse.Namespace) -> int:
    """The finder on rendered 1280×720 stills: the first stage alone (what the live pipeline
    runs every frame), and with the corner refiner on every card (the finder's full output; the
    pipeline refines only the cards it crops for the identifier)."""
    import numpy as np

    from vision.finder import DEFAULT_MODEL, Finder, FinderConfig, Refine
    from vision.synth.library import build_library
    from vision.synth.stills import StillsConfig, iter_stills

    finder = Finder(args.model or DEFAULT_MODEL, threads=args.threads)
    lib, deck = build_library("minecraft-card-game", "proxy", mixed=True, seed=args.seed, designs=40)
    images = [r.image for _, _, r in iter_stills(lib, deck, StillsConfig(count=4, seed=args.seed))]
    stages = {"first_stage": FinderConfig(refine=Refine.NONE), "with_corner_refiner": FinderConfig(refine=Refine.MODEL)}
    out: dict[str, Any] = {}
    cards = 0
    for name, config in stages.items():
        finder.find_one(images[0], config)
        times, cards = [], 0
        for i in range(args.frames):
            start = time.perf_counter()
            cards += len(finder.find_one(images[i % len(images)], config))
            times.append((time.perf_counter() - start) * 1000.0)
        q = np.percentile(times, [50, 95])
        out[name] = {"p50": round(float(q[0]), 2), "p95": round(float(q[1]), 2)}
    print(json.dumps({
        "benchmark": "finder",
        "frame": "1280x720 synthetic still",
        "frames": args.frames,
        "threads": args.threads,
        "ms_per_frame": out,
        "cards_per_frame": round(cards / max(args.frames, 1), 1),
        "machine": machine(),
    }, indent=2))
    return 0


def bench_identifier(args: argparse.Namespace) -> int:
    import tempfile

    import numpy as np

    from vision.art.pack import proxy_pack
    from vision.identify import DEFAULT_MODEL, Gallery, Identifier
    from vision.train.augment import master, webcam_crop

    identifier = Identifier(args.model or DEFAULT_MODEL, threads=args.threads, inset=args.inset)
    pack = proxy_pack(args.game)
    start = time.perf_counter()
    with tempfile.TemporaryDirectory() as cache:
        gallery = Gallery.build(pack, identifier, cache_dir=cache)
    build_s = time.perf_counter() - start
    rng = np.random.default_rng(args.seed)
    faces = list(pack.faces)
    crops = [webcam_crop(master(pack.image(faces[i % len(faces)])), rng) for i in range(args.batch * 8)]
    batches = [crops[i:i + args.batch] for i in range(0, len(crops), args.batch)]
    gallery.match(identifier.embed(batches[0]))
    embed_ms, match_ms = [], []
    for i in range(args.calls):
        batch = batches[i % len(batches)]
        t0 = time.perf_counter()
        emb = identifier.embed(batch)
        t1 = time.perf_counter()
        gallery.match(emb, top_k=5)
        t2 = time.perf_counter()
        embed_ms.append((t1 - t0) * 1000.0 / len(batch))
        match_ms.append((t2 - t1) * 1000.0 / len(batch))
    total = np.array(embed_ms) + np.array(match_ms)
    covered = _bench_covered(identifier, gallery, crops, args.calls) if identifier.cell_grid is not None else None
    print(json.dumps({
        "benchmark": "identifier",
        "game": args.game,
        "gallery_entries": int(gallery.embeddings.shape[0]),
        "gallery_build_s": round(build_s, 2),
        "batch": args.batch,
        "calls": args.calls,
        "threads": args.threads,
        "inset": identifier.inset,
        "ms_per_card": {
            "embed_p50": round(float(np.median(embed_ms)), 3),
            "match_p50": round(float(np.median(match_ms)), 3),
            "total_p50": round(float(np.median(total)), 3),
            "total_p95": round(float(np.percentile(total, 95)), 3),
        },
        "covered_card_ms": covered,
        "machine": machine(),
    }, indent=2))
    return 0


def _bench_covered(identifier: Any, gallery: Any, crops: list[Any], calls: int) -> dict[str, float]:
    """Milliseconds to read one card of a fan from its visible part as the pipeline does
    (`GalleryIdentifier.identify_visible`): a neighbour on each side, so the three masks of
    either, the other, and both lying on it."""
    import numpy as np

    from vision.pipeline import GalleryIdentifier

    reader = GalleryIdentifier(identifier, gallery)
    ms: list[float] = []
    for i in range(max(1, calls)):
        crop = crops[i % len(crops)]
        h, w = crop.shape[:2]
        left, right, both = (np.ones((h, w), np.uint8) for _ in range(3))
        left[:, : w // 4] = 0
        right[:, w // 2:] = 0
        both[:, : w // 4] = 0
        both[:, w // 2:] = 0
        t0 = time.perf_counter()
        reader.identify_visible(crop, [left, right, both], corners=np.zeros((4, 2), np.float32), frame_index=0)
        ms.append((time.perf_counter() - t0) * 1000.0)
    return {"masks": 3, "p50": round(float(np.median(ms)), 3), "p95": round(float(np.percentile(ms, 95)), 3)}


def bench_pipeline(args: argparse.Namespace) -> int:
    """Every frame of a bundled clip through the pipeline, as fast as it goes (the clip is
    loaded and replayed by the same code as `cardtrack eval`)."""
    from pathlib import Path

    import numpy as np

    from vision.evaluate import ModelChoice, clip_pipeline, footage_at, load_clip, replay_clip
    from vision.pipeline import score_moves

    folder = Path(args.clip)
    found = footage_at(folder)
    if isinstance(found, str):
        raise ValueError(f"{folder}: {found} (render a clip with `cardtrack synth footage`)")
    clip = load_clip(found)
    truth, fps = clip.truth, clip.fps
    models = ModelChoice(finder=Path(args.finder) if args.finder else None,
                         identifier=Path(args.identifier) if args.identifier else None,
                         oracle=args.oracle, threads=args.threads, art=Path(args.art) if args.art else None,
                         read_covered=args.read_covered, zoom=args.zoom)
    pipeline = clip_pipeline(clip, models)
    run = replay_clip(pipeline, clip, max_frames=args.frames)
    frame_ms = [s.ms for s in run.steps]
    settle_to_move: list[float] = []
    pending_since: int | None = None
    for step in run.steps:
        if step.pending and pending_since is None:
            pending_since = step.frame
        if step.moves:
            # From the frame that first read the settled change to the move, in camera time
            # (frames waited at the clip's rate) plus this frame's compute.
            waited = 0.0 if pending_since is None else (step.frame - pending_since) * 1000.0 / fps
            settle_to_move.append(waited + step.ms)
        if not step.pending:
            pending_since = None
    score = score_moves(run.emitted, [(m.frame, dict(m.move)) for m in truth.moves])

    def pct(values: list[float]) -> dict[str, float | None]:
        if not values:
            return {"p50": None, "p95": None}
        q = np.percentile(values, [50, 95])
        return {"p50": round(float(q[0]), 2), "p95": round(float(q[1]), 2)}

    view = run.final_view
    print(json.dumps({
        "benchmark": "pipeline",
        "clip": str(folder),
        "models": "truth stand-ins (--oracle)" if args.oracle else "onnx",
        "frames": len(frame_ms),
        "frame_size": list(truth.clip.frame_size),
        "fps": round(len(frame_ms) / max(sum(frame_ms) / 1000.0, 1e-9), 1),
        "ms_per_frame": pct(frame_ms),
        "ms_per_stage": {
            name: {"p50": round(s.p50_ms, 3), "p95": round(s.p95_ms, 3), "calls": s.count}
            for name, s in pipeline.timer.stats().items()
        },
        "settle_to_move_ms": pct(settle_to_move),
        "truth_completion_to_move_ms": pct([d * 1000.0 / fps for d in score.delays_frames]),
        "moves": {"emitted": score.emitted, "truth": score.expected, "matched": score.matched,
                  "precision": round(score.precision, 3), "recall": round(score.recall, 3)},
        "final_scores": {"read": view.get("scores"),
                         "truth": (truth.final_state or {}).get("scores")},
        "machine": machine(),
    }, indent=2))
    return 0


def bench_interpret(args: argparse.Namespace) -> int:
    """Simulated games played on a virtual table and read back by the interpreter alone."""
    from tqdm import tqdm

    from engine.interpret_bench import CameraNoise, read_games, summarize_readings

    ruleset = get_game(args.game)
    noise = CameraNoise(
        wrong_top=args.noise, missing=args.missing, merge=args.merge, rereads=args.rereads,
        hands=args.hands,
    )
    readings = list(
        tqdm(
            read_games(ruleset, players=args.players, games=args.games, seed=args.seed, noise=noise),
            total=args.games,
            desc="games",
            unit="game",
        )
    )
    report = {
        "benchmark": "interpret",
        "game": args.game,
        "players": args.players,
        "seeds": [args.seed, args.seed + args.games - 1],
        "noise": {"wrong_top": args.noise, "missing": args.missing, "merge": args.merge,
                  "rereads": args.rereads, "hands": args.hands},
        **summarize_readings(readings),
        "machine": machine(),
    }
    print(json.dumps(report, indent=2))
    return 0
