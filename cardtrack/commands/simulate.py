"""`cardtrack simulate`: random legal games, their statistics, and a game as a scenario file."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import yaml
from tqdm import tqdm

from engine import game_ids, get_game
from engine.simulate import DEFAULT_MAX_MOVES, simulate_game, summarize


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        "simulate",
        help="play random legal games and print length, score and win statistics",
        description="Play GAMES random legal games (seeds SEED, SEED+1, ...) and print "
        "statistics as JSON. --write-scenario saves the first game as a scenario file, which "
        "`cardtrack rules check` replays and synthetic footage can be scripted from.",
    )
    parser.add_argument("--game", default="minecraft-card-game", choices=game_ids())
    parser.add_argument("--players", type=int, default=3)
    parser.add_argument("--games", type=int, default=100)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--option", action="append", default=[], metavar="NAME=VALUE", help="a rule option"
    )
    parser.add_argument("--max-moves", type=int, default=DEFAULT_MAX_MOVES)
    parser.add_argument(
        "--write-scenario", type=Path, metavar="FILE", help="write the first game as a scenario"
    )
    parser.set_defaults(func=run)


def parse_options(pairs: list[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep:
            raise ValueError(f"--option expects NAME=VALUE, got {pair!r}")
        out[name.strip()] = value.strip()
    return out


def run(args: argparse.Namespace) -> int:
    if args.games < 1:
        raise ValueError("--games must be at least 1")
    ruleset = get_game(args.game)
    options = parse_options(args.option)
    results = []
    for i in tqdm(range(args.games), desc="games", unit="game", disable=args.games < 200):
        results.append(
            simulate_game(
                ruleset,
                players=args.players,
                seed=args.seed + i,
                options=options,
                max_moves=args.max_moves,
            )
        )
    stats = summarize(results).to_dict()
    stats = {"game": args.game, "players": args.players, "seed": args.seed, **stats}
    print(json.dumps(stats, indent=2))
    if args.write_scenario:
        doc = results[0].to_scenario(ruleset)
        args.write_scenario.parent.mkdir(parents=True, exist_ok=True)
        args.write_scenario.write_text(yaml.safe_dump(doc, sort_keys=False, width=100))
        print(f"wrote {args.write_scenario} ({len(results[0].moves)} moves)")
    return 0
