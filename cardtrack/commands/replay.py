"""`cardtrack replay JOURNAL`: rebuild a recorded game from its journal and print it, or serve
it through the overlay, console and spectator pages (`--serve`), move by move."""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

from engine import Audience, get_game
from server.feeds import JournalReplayFeed
from server.journal import Journal
from server.settings import DEFAULT_HOST, DEFAULT_PORT, ServerSettings


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        "replay",
        help="rebuild a game from its journal (SQLite): print it, or serve it to the pages",
        description="Replays the journal's moves (after the operator's undos and corrections) "
        "through the rules and prints each move with its warnings, then the final scores. "
        "--json prints the final state instead. --serve plays the game again through the "
        "overlay, console and spectator pages, with the recorded pauses divided by --speed; the "
        "journal itself is only read.",
    )
    parser.add_argument("journal", type=Path, metavar="JOURNAL")
    parser.add_argument("--json", action="store_true", help="print the final state as JSON")
    parser.add_argument("--serve", action="store_true", help="serve the replay to the pages")
    parser.add_argument(
        "--speed", type=float, default=1.0, help="--serve: 2 plays twice as fast, 0 at once"
    )
    parser.add_argument("--host", default=DEFAULT_HOST)
    parser.add_argument("--port", type=int, default=DEFAULT_PORT, help="0 picks a free port")
    parser.add_argument("--lang", default="en", help="default page language: en fr fa pl nl")
    parser.set_defaults(func=run)


def replay_settings(
    journal: Path, *, speed: float, host: str, port: int, lang: str, workdir: Path
) -> ServerSettings:
    """Server settings that play `journal` again into a scratch journal in `workdir`."""
    feed = JournalReplayFeed(journal, speed=speed)  # a bad file is a clear error here
    header = feed.header
    return ServerSettings(
        game=header.game,
        players=header.players,
        names=header.names,
        options=header.options,
        seed=header.seed,
        journal_path=workdir / "replay.sqlite",
        feed=feed,
        host=host,
        port=port,
        language=lang,
    )


def run(args: argparse.Namespace) -> int:
    if args.serve:
        from cardtrack.commands.serve import announce, serve_app
        from server.app import create_app

        with tempfile.TemporaryDirectory(prefix="cardtrack-replay-") as tmp:
            settings = replay_settings(
                args.journal, speed=args.speed, host=args.host, port=args.port, lang=args.lang,
                workdir=Path(tmp),
            )
            app = create_app(settings)
            serve_app(app, settings, on_started=lambda port: announce(app, settings, port))
        return 0
    with Journal.open(args.journal) as journal:
        header = journal.header
        moves = journal.effective_moves()
        result = journal.rebuild()
    ruleset = get_game(header.game)
    if args.json:
        view = ruleset.view(result.state, Audience.OPERATOR)
        print(json.dumps({"moves": len(moves), **view}, indent=2))
        return 0
    print(f"{ruleset.name}: {header.players} players, {len(moves)} moves")
    for (seq, data), step in zip(moves, result.steps, strict=True):
        fields = " ".join(f"{k}={v}" for k, v in data.items() if k not in ("player", "move"))
        print(f"#{seq:<4d} player {data.get('player')} {data.get('move')} {fields}".rstrip())
        for w in step.warnings:
            print(f"      WARNING {w.code}: {w.message}")
    print(f"scores: {list(ruleset.scores(result.state))}")
    winner = ruleset.winner(result.state)
    print(f"winner: player {winner}" if winner else "no winner yet")
    return 0
