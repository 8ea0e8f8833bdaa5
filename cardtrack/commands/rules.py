"""`cardtrack rules`: check scenario files against the rules, and describe a game's rules."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import yaml

from engine import ScenarioError, game_ids, get_game
from engine.scenario import parse_scenario, run_scenario

SCENARIO_SUFFIXES = (".yaml", ".yml", ".json")


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        "rules",
        help="check scenario files against the rules; show a game's options and moves",
        description="Work with the rules engine directly, without a camera.",
    )
    rsub = parser.add_subparsers(dest="rules_command", metavar="ACTION", required=True)
    check = rsub.add_parser(
        "check",
        help="replay scenario files and compare with their expectations",
        description="Replay each scenario file (YAML or JSON; folders are searched for "
        "*.yaml, *.yml, *.json) and print a readable diff of every expectation that does not "
        "hold. Exit code 1 if any scenario fails, 2 if a file is malformed. The format is "
        "documented in docs/scenarios.md.",
    )
    check.add_argument("paths", nargs="+", metavar="FILE", help="scenario files or folders")
    check.add_argument("-q", "--quiet", action="store_true", help="print failures only")
    check.set_defaults(func=check_command)
    show = rsub.add_parser("show", help="list a game's options, moves and warning codes")
    show.add_argument("--game", required=True, choices=game_ids())
    show.set_defaults(func=show_command)


def load_scenario_file(path: Path) -> Any:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ScenarioError(f"{path}: cannot read ({exc.strerror})") from None
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1} column {mark.column + 1}" if mark else ""
        raise ScenarioError(f"{path}: not valid YAML/JSON{where}") from None


def scenario_files(paths: list[str]) -> list[Path]:
    files: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            files.extend(sorted(p for p in path.rglob("*") if p.suffix in SCENARIO_SUFFIXES))
        elif path.exists():
            files.append(path)
        else:
            raise ScenarioError(f"{path}: no such file or folder")
    return files


def check_command(args: argparse.Namespace) -> int:
    files = scenario_files(args.paths)
    if not files:
        print("no scenario files found", file=sys.stderr)
        return 2
    failed = malformed = 0
    for path in files:
        try:
            scenario = parse_scenario(load_scenario_file(path), str(path))
            result = run_scenario(scenario)
        except ScenarioError as exc:
            malformed += 1
            print(f"ERROR {exc}")
            continue
        if result.ok:
            if not args.quiet:
                print(f"ok    {path}  ({len(scenario.moves)} moves)")
            continue
        failed += 1
        print(f"FAIL  {path}: {scenario.name}")
        for line in result.mismatches:
            print(f"      - {line}")
    passed = len(files) - failed - malformed
    print(f"{passed} passed, {failed} failed" + (f", {malformed} malformed" if malformed else ""))
    if malformed:
        return 2
    return 1 if failed else 0


def show_command(args: argparse.Namespace) -> int:
    game = get_game(args.game)
    out: dict[str, Any] = {
        "game": game.id,
        "name": game.name,
        "players": f"{game.min_players}-{game.max_players}",
        "options": [
            {"name": o.name, "default": o.default, "choices": list(o.choices), "help": o.help}
            for o in game.options
        ],
    }
    moves = getattr(game, "move_types", ())
    if moves:
        out["moves"] = [m.NAME for m in moves]
    module = sys.modules[type(game).__module__]
    rules = getattr(module, "RULES", {})
    if rules:
        out["warnings"] = {str(code): text for code, text in rules.items()}
    print(json.dumps(out, indent=2, ensure_ascii=False))
    return 0
