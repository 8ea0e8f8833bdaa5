"""`cardtrack serve`: the web server for one table (overlay, operator console, spectator, API).

Binds 127.0.0.1:8765 by default. With `--journal FILE` the game is recorded there and resumed
from it when the file exists (a killed server comes back into the same game). `--feed
simulated` plays the game with simulated players until the camera tracker is connected;
`--feed none` takes moves from the operator only. Binding another address needs `--token`.
`--calibration FILE` is the table profile: read when it exists, and written when the operator
calibrates from the console (`/api/calibration`).
"""

from __future__ import annotations

import argparse
import contextlib
import threading
import time
from collections.abc import Callable
from pathlib import Path

import uvicorn
from fastapi import FastAPI

from calibration.profile import load_profile
from cardtrack.commands.simulate import parse_options
from server.app import create_app
from server.feeds import Feed, SimulatedFeed
from server.session import Session
from server.settings import DEFAULT_HOST, DEFAULT_PORT, ServerSettings
from server.table_profile import check_for_game


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        "serve",
        help="serve the live game to the overlay, console and spectator pages",
        description="Starts the web server: pages at /overlay, /console, /spectator, the API at "
        "/docs, live updates at /ws. Runs until Ctrl-C.",
    )
    parser.add_argument("--game", default="minecraft-card-game")
    parser.add_argument("--players", type=int, default=3)
    parser.add_argument("--names", default="", help="player names, comma-separated")
    parser.add_argument(
        "--option", action="append", default=[], metavar="NAME=VALUE", help="a rule option"
    )
    parser.add_argument("--seed", type=int, default=None, help="deal seed (default: random)")
    parser.add_argument(
        "--journal", type=Path, default=None,
        help="SQLite journal: resumed when it exists, created otherwise "
        "(default: a new file in a temporary folder)",
    )
    parser.add_argument(
        "--calibration", type=Path, default=None, metavar="FILE",
        help="table profile (`cardtrack calibrate table`); read when it exists, written by a "
        "calibration made in the console",
    )
    parser.add_argument("--feed", choices=("simulated", "none"), default="none")
    parser.add_argument(
        "--pace", type=float, default=1.5, help="seconds per simulated move (--feed simulated)"
    )
    parser.add_argument("--host", default=DEFAULT_HOST)
    parser.add_argument("--port", type=int, default=DEFAULT_PORT, help="0 picks a free port")
    parser.add_argument(
        "--token", default=None,
        help="access token for writing and the console (required off 127.0.0.1)",
    )
    parser.add_argument(
        "--delay", type=float, default=0.0, help="seconds the public audience lags behind"
    )
    parser.add_argument("--lang", default="en", help="default page language: en fr fa pl nl")
    parser.set_defaults(func=run)


def settings_from(args: argparse.Namespace, feed: Feed | None = None) -> ServerSettings:
    names = tuple(n.strip() for n in args.names.split(",")) if args.names else ()
    return ServerSettings(
        game=args.game,
        players=args.players,
        names=names,
        options=parse_options(args.option),
        seed=args.seed,
        journal_path=args.journal,
        calibration_path=args.calibration,
        feed=feed,
        host=args.host,
        port=args.port,
        token=args.token,
        broadcast_delay_s=args.delay,
        language=args.lang,
    )


def run(args: argparse.Namespace) -> int:
    feed = None
    if args.feed == "simulated":
        feed = SimulatedFeed(
            args.game, args.players, seed=args.seed or 0, seconds_per_move=args.pace,
            names=tuple(n.strip() for n in args.names.split(",")) if args.names else None,
        )
    settings = settings_from(args, feed)
    Session.preflight(
        journal_path=settings.journal_path, game=settings.game, players=settings.players,
        options=settings.options, names=settings.names,
    )
    check_calibration(settings)
    app = create_app(settings)
    serve_app(app, settings, on_started=lambda port: announce(app, settings, port))
    return 0


def check_calibration(settings: ServerSettings) -> None:
    """Refuse a calibration file that cannot be read or is for another game (ValueError)."""
    path = settings.calibration_path
    if path is None or not path.exists():
        return
    profile = load_profile(path)
    check_for_game(profile, settings.game, settings.players, str(path))


def page_urls(settings: ServerSettings, port: int) -> dict[str, str]:
    host = settings.host if settings.host not in ("0.0.0.0", "::") else "127.0.0.1"
    base = f"http://{host}:{port}"
    token = f"?token={settings.token}" if settings.token else ""
    return {
        "overlay": f"{base}/overlay",
        "console": f"{base}/console{token}",
        "spectator": f"{base}/spectator",
        "api": f"{base}/docs",
    }


def announce(app: FastAPI, settings: ServerSettings, port: int) -> None:
    session = app.state.session
    snap = session.snapshot
    how = f"resumed at move seq {snap.seq}" if session.resumed else "new game"
    print(f"cardtrack: {snap.ruleset.name}, {snap.players} players ({how})")
    print(f"journal: {session.journal_path}")
    if settings.calibration_path is not None:
        print(f"calibration: {settings.calibration_path}")
    for name, url in page_urls(settings, port).items():
        print(f"  {name:<10s}{url}")
    print("Ctrl-C stops the server.", flush=True)


def serve_app(
    app: FastAPI,
    settings: ServerSettings,
    *,
    on_started: Callable[[int], None] | None = None,
    stop: threading.Event | None = None,
) -> None:
    """Run uvicorn in this thread until Ctrl-C or until `stop` is set; `on_started(port)` is
    called once the socket is listening (with the real port when --port 0)."""
    server = uvicorn.Server(
        uvicorn.Config(
            app, host=settings.host, port=settings.port, log_level="warning",
            timeout_graceful_shutdown=2, ws_ping_interval=20.0,
            # Every viewer gets the same text: compressing it once per connection costs more
            # CPU than the bytes are worth on a local network (see `cardtrack bench server`).
            ws_per_message_deflate=False,
        )
    )

    def watch() -> None:
        while not server.started and not server.should_exit:
            time.sleep(0.05)
        if server.started and on_started is not None:
            port = server.servers[0].sockets[0].getsockname()[1] if server.servers else settings.port
            on_started(port)
        if stop is not None:
            while not server.should_exit:
                if stop.wait(0.1):
                    server.should_exit = True

    threading.Thread(target=watch, name="serve-watch", daemon=True).start()
    # uvicorn shuts down cleanly on Ctrl-C and then re-raises it: that is the normal way out.
    # It exits when the port is taken, having logged why: that is reported below.
    with contextlib.suppress(KeyboardInterrupt, SystemExit):
        server.run()
    if not server.started:
        raise OSError(
            f"the server could not start on {settings.host}:{settings.port} (see the message "
            "above; another --port may help)"
        )
