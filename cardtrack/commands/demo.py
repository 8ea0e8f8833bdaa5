"""`cardtrack demo`: the most complete thing that runs end to end today.

Until the camera pipeline is wired in, the demo plays a seeded game of the Mattel game with
simulated players, narrating every move, the scores and the referee's warnings. Partway through,
one player takes a third action, as happens at real tables, so the demo shows a warning too.
"""

from __future__ import annotations

import argparse
import time
from typing import Any

from engine import get_game
from engine.games.minecraft_card_game import Mine
from engine.simulate import simulate_game

GAME = "minecraft-card-game"


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        "demo",
        help="play a narrated game of the Mattel game with the referee watching",
        description="Plays one seeded game with simulated players and narrates each move, "
        "the scores and every rule warning. Reproducible: the same --seed gives the same game.",
    )
    parser.add_argument("--players", type=int, default=3, choices=(2, 3, 4))
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument(
        "--delay", type=float, default=0.0, help="seconds to pause between moves (e.g. 0.3)"
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
