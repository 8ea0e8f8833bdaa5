"""The `cardtrack` command line.

Each subcommand lives in its own module under `cardtrack.commands` and exposes
`register(subparsers)`, which adds its parser and sets `func` to the handler. A handler takes
the parsed arguments and returns the process exit code. Malformed input (a bad file, an unknown
card) is reported as one clear line on stderr with exit code 2, never as a traceback.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from cardtrack import __version__

COMMAND_MODULES = ("demo", "rules", "simulate", "replay", "deck", "calibrate", "bench", "synth", "serve", "train", "run", "eval")

DESCRIPTION = """\
cardtrack follows a real card game from a webcam over the table: it finds and identifies every
card, turns what changed into game moves, checks them against the rules and serves the live
state to a web overlay. Games: minecraft-card-game, minecraft-explorers, minecraft-mk1,
angry-birds-power-cards.

Start with `cardtrack demo`. Every subcommand has its own --help.
"""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="cardtrack",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"cardtrack {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        module = importlib.import_module(f"cardtrack.commands.{name}")
        module.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 0
    try:
        return int(args.func(args) or 0)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except (ValueError, OSError) as exc:
        # Malformed input and missing files: one clear line, no traceback.
        print(f"cardtrack {args.command}: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
