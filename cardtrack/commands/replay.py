"""`cardtrack replay JOURNAL`: rebuild a recorded game from its journal and print it."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from engine import Audience, get_game
from server.journal import Journal


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        "replay",
        help="rebuild a game from its journal (SQLite) and print moves, warnings and the result",
        description="Replays the journal's moves (after the operator's undos and corrections) "
        "through the rules and prints each move with its warnings, then the final scores. "
        "--json prints the final public view instead.",
    )
    parser.add_argument("journal", type=Path, metavar="JOURNAL")
    parser.add_argument("--json", action="store_true", help="print the final state as JSON")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
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
