"""`cardtrack demo`: the most complete thing that runs end to end today.

Until the camera pipeline is wired in, the demo serves the live pages (overlay, console,
spectator) on http://127.0.0.1:8765/ while simulated players play the Mattel game, a new game
after each one, until Ctrl-C (`--once`: one game, then exit). `--narrate` plays one seeded game
in the console instead, narrating every move, the scores and the referee's warnings; partway
through, one player takes a third action, as happens at real tables, so it shows a warning too.
"""

from __future__ import annotations

import argparse
import threading
import time
from pathlib import Path
from typing import Any

from fastapi import FastAPI

from cardtrack.commands.serve import announce, serve_app
from engine import get_game
from engine.games.minecraft_card_game import Mine
from engine.simulate import simulate_game
from server.app import create_app
from server.feeds import SimulatedFeed
from server.session import Session
from server.settings import DEFAULT_PORT, ServerSettings

GAME = "minecraft-card-game"


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        "demo",
        help="watch simulated players play the Mattel game live in the web pages",
        description="Serves the overlay, console and spectator pages on http://127.0.0.1:8765/ "
        "while simulated players play the Mattel game with the referee watching, game after "
        "game, until Ctrl-C. --narrate plays one seeded game in the console instead, narrating "
        "each move, the scores and every rule warning (the same --seed gives the same game).",
    )
    parser.add_argument("--players", type=int, default=3, choices=(2, 3, 4))
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--narrate", action="store_true", help="narrate one game in the console")
    parser.add_argument(
        "--delay", type=float, default=0.0,
        help="--narrate: seconds to pause between moves (e.g. 0.3)",
    )
    parser.add_argument("--once", action="store_true", help="serve one game, then exit")
    parser.add_argument("--pace", type=float, default=1.5, help="seconds per simulated move")
    parser.add_argument("--port", type=int, default=DEFAULT_PORT, help="0 picks a free port")
    parser.add_argument(
        "--journal", type=Path, default=None, help="record (and resume) the games in this file"
    )
    parser.set_defaults(func=run)


def describe(move: Any) -> str:
    name = type(move).NAME
    fields = {f: getattr(move, f) for f in move.__dataclass_fields__}
    who = f"player {fields.pop('player')}"
    fields.pop("reveal", None)
    if name == "mine":
        return f"{who} mines resource pile {fields['pile']}"
    if name == "craft":
        pay = ", ".join(fields["pay"]) or "nothing"
        axes = f" and axes {', '.join(fields['axes'])}" if fields["axes"] else ""
        return f"{who} crafts {fields['card']} from {fields['source']}, paying {pay}{axes}"
    if name == "reserve":
        return f"{who} reserves the top of craft pile {fields['pile']}"
    if name == "tnt-keep":
        return f"{who} keeps {', '.join(fields['cards']) or 'nothing'} from the TNT blast"
    if name == "creeper-discard":
        what = fields["card"] or f"the sword {fields['sword']}"
        return f"{who} answers the creeper with {what}"
    if name == "use-tool":
        target = f" on player {fields['target']}" if fields.get("target") else ""
        return f"{who} uses {fields['card']}{target}"
    if name == "end-turn":
        return f"{who} ends the turn"
    return f"{who} {name} {fields}"


def run(args: argparse.Namespace) -> int:
    return narrate(args) if args.narrate else serve(args)


def serve(args: argparse.Namespace) -> int:
    feed = SimulatedFeed(
        GAME, args.players, seed=args.seed, seconds_per_move=args.pace, loop=not args.once,
        pause_s=5.0,
    )
    settings = ServerSettings(
        game=GAME, players=args.players, seed=args.seed, journal_path=args.journal, feed=feed,
        port=args.port,
    )
    Session.preflight(journal_path=args.journal, game=GAME, players=args.players)
    app = create_app(settings)
    done = threading.Event()

    def started(port: int) -> None:
        announce(app, settings, port)
        if args.once:
            threading.Thread(target=_when_finished, args=(app, done), daemon=True).start()

    serve_app(app, settings, on_started=started, stop=done)
    if args.once:
        snap = app.state.session.snapshot
        ruleset = snap.ruleset
        print(f"final scores: {list(ruleset.scores(snap.state))}")
        winner = ruleset.winner(snap.state)
        print(f"winner: {snap.names[winner - 1]}" if winner else "no winner")
    return 0


def _when_finished(app: FastAPI, done: threading.Event) -> None:
    app.state.runner.finished.wait()
    done.set()


def narrate(args: argparse.Namespace) -> int:
    ruleset = get_game(GAME)
    game = simulate_game(ruleset, players=args.players, seed=args.seed)
    state = ruleset.initial_state(players=args.players, seed=args.seed)
    print(f"{ruleset.name}: {args.players} players, seed {args.seed}")
    tops = ", ".join(str(p[0]) for p in state.resource_piles)
    print(f"resource piles show: {tops}")
    warned = False
    for i, move in enumerate(game.moves):
        step = ruleset.apply(state, move)
        before = ruleset.scores(state)
        state = step.state
        after = ruleset.scores(state)
        gained = [a - b for a, b in zip(after, before, strict=True)]
        line = f"{i + 1:3d}. {describe(move)}"
        if any(gained):
            line += f"  -> scores {list(after)}"
        print(line)
        for w in step.warnings:
            print(f"     WARNING {w.code}: {w.message}")
        if not warned and not state.over and state.actions >= state.allowed and i > 10:
            # A player reaches for a third card: the referee flags it and play goes on.
            p = state.current
            pile = next((k + 1 for k, pl in enumerate(state.resource_piles) if pl), None)
            if pile is not None:
                extra = Mine(player=p, pile=pile)
                step = ruleset.apply(state, extra)
                print(f"  !  {describe(extra)} (a third action)")
                for w in step.warnings:
                    print(f"     WARNING {w.code}: {w.message} [{w.rule}]")
                # Once told, the player puts the card back: play goes on from before it.
                warned = True
        if args.delay:
            time.sleep(args.delay)
    winner = ruleset.winner(state)
    print(f"final scores: {list(ruleset.scores(state))}")
    print(f"winner: player {winner}" if winner else "no winner")
    return 0
