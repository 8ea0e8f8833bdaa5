"""`cardtrack run`: follow a game from a camera or a recording, live.

Frames from `--source` (a webcam index, a video file, an image folder, a stream URL) go through
the vision pipeline (`vision.pipeline`); the moves it reads are recorded in the session's
journal. With `--headless` every move, its rule warnings, and each change the rules hold as
pending are printed as JSON lines on stdout (for scripts); otherwise the overlay, console and
spectator pages are served as by `cardtrack serve`, fed by the camera. The table geometry comes
from `--calibration` (a profile written by `cardtrack calibrate table`); for bundled footage,
whose truth file (`truth.json.gz` or `truth.json`) lies next to the clip, it may be omitted:
the geometry and the opening deal are then read from the truth file. The opening deal can be
given with `--setup` (a YAML or JSON file with a `setup` mapping, as in scenario files).
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
from pathlib import Path
from typing import Any

import yaml

from calibration.profile import load_profile
from cardtrack.commands.eval import add_reading_options, inset_share, reading_changes
from engine import get_game
from engine.core import Audience
from server.session import Session
from server.settings import DEFAULT_HOST, DEFAULT_PORT, ServerSettings
from server.vision_feed import VisionFeed, pending_items
from vision.art.pack import open_pack
from vision.pipeline import (
    Pipeline,
    PipelineConfig,
    PipelineStep,
    profile_from_truth,
    setup_from_truth,
)
from vision.synth.truth import Truth, load_truth

TRUTH_NAMES = ("truth.json.gz", "truth.json")


class RunError(ValueError):
    """Arguments of `cardtrack run` that cannot be used; the message says what to do."""


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        "run",
        help="follow a game from a camera or a recording (overlay, or JSON lines with --headless)",
        description="Reads frames, finds and identifies the cards, and turns what settles on "
        "the table into moves. Without --calibration, a clip with its truth file next to it "
        "takes the table geometry and opening deal from the truth.",
    )
    parser.add_argument("--source", required=True, help="webcam index, video file, image folder or URL")
    parser.add_argument("--game", default="minecraft-card-game")
    parser.add_argument("--players", type=int, default=None, help="default: the clip's, else 2")
    parser.add_argument("--calibration", type=Path, default=None, help="table profile (JSON)")
    parser.add_argument("--setup", type=Path, default=None, help="opening deal (YAML/JSON 'setup')")
    parser.add_argument("--headless", action="store_true", help="print JSON lines, serve nothing")
    parser.add_argument("--journal", type=Path, default=None, help="SQLite journal (resumed if it exists)")
    parser.add_argument("--realtime", action="store_true", help="play a file at its frame rate")
    parser.add_argument("--finder", type=Path, default=None, help="finder model (default models/finder.onnx)")
    parser.add_argument("--identifier", type=Path, default=None,
                        help="identifier model (default models/identifier.onnx)")
    parser.add_argument("--identifier-inset", type=inset_share, default=None, metavar="SHARE",
                        help="share of a crop trimmed off each side for the identifier's second view "
                             "(default: vision.identify.CARD_INSET; 0: each crop read once, about "
                             "half the identifier's time per card, with more cards named wrongly)")
    add_reading_options(parser)
    parser.add_argument("--threads", type=int, default=1, help="threads for each model")
    parser.add_argument("--art", default="proxy", metavar="PACK|proxy",
                        help="the deck's art pack the identifier matches against: a folder written by "
                             "`cardtrack deck enroll` for your own cards, or 'proxy' (default) for the "
                             "printable proxy deck")
    parser.add_argument("--host", default=DEFAULT_HOST)
    parser.add_argument("--port", type=int, default=DEFAULT_PORT, help="0 picks a free port")
    parser.add_argument("--token", default=None, help="access token (required off 127.0.0.1)")
    parser.set_defaults(func=run)


def truth_beside(source: str) -> Path | None:
    """The truth file lying next to a clip (or inside a frame folder), if any."""
    path = Path(source)
    if source.isdigit() or "://" in source or not path.exists():
        return None
    folder = path if path.is_dir() else path.parent
    return next((folder / n for n in TRUTH_NAMES if (folder / n).is_file()), None)


def read_setup(path: Path) -> dict[str, Any]:
    """The `setup` mapping of a YAML/JSON file (a scenario file, or the mapping alone)."""
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        raise RunError(f"{path}: not YAML or JSON ({str(exc).splitlines()[0]})") from None
    if isinstance(data, dict) and isinstance(data.get("setup"), dict):
        data = data["setup"]
    if not isinstance(data, dict) or not data:
        raise RunError(f"{path}: expected a mapping of zone ids to card lists (or a 'setup' field)")
    return {str(k): v for k, v in data.items()}


def prepare(args: argparse.Namespace) -> tuple[Pipeline, dict[str, Any] | None, float | None]:
    """Geometry, deal and models, checked before anything starts; returns the pipeline, the
    opening deal and the source's frame rate when known."""
    truth: Truth | None = None
    truth_path = truth_beside(str(args.source))
    if truth_path is not None and (args.calibration is None or args.setup is None):
        truth = load_truth(truth_path)
    players = args.players or (truth.clip.players if truth and truth.clip.players else 2)
    if truth is not None and (truth.clip.game != args.game or truth.clip.players != players):
        raise RunError(
            f"{truth_path}: the clip is a {truth.clip.players}-player {truth.clip.game} game; "
            f"pass --game {truth.clip.game} --players {truth.clip.players}"
        )
    if args.calibration is not None:
        profile = load_profile(args.calibration)
        if profile.game != args.game or profile.players != players:
            raise RunError(
                f"{args.calibration}: calibrated for {profile.players} players of {profile.game}; "
                "calibrate again for this game (`cardtrack calibrate table`)"
            )
    elif truth is not None:
        profile = profile_from_truth(truth, source=str(truth_path))
    else:
        raise RunError(
            "no table geometry: pass --calibration PROFILE (written by `cardtrack calibrate "
            "table`); only bundled clips with a truth file next to them run without one"
        )
    ruleset = get_game(args.game)
    setup: dict[str, Any] | None = None
    if args.setup is not None:
        setup = read_setup(args.setup)
    elif truth is not None:
        setup = setup_from_truth(truth, ruleset, source=str(truth_path))
    fps = truth.clip.fps if truth is not None else None
    config = PipelineConfig.for_game(args.game, fps=fps, camera_check=args.calibration is not None,
                                     **reading_changes(args))
    pack = open_pack(args.art, args.game) if args.art != "proxy" else None
    pipeline = Pipeline.from_models(
        config, game=args.game, players=players, profile=profile, finder_path=args.finder,
        identifier_path=args.identifier, threads=args.threads, setup=setup, pack=pack,
        identifier_inset=args.identifier_inset,
    )
    return pipeline, setup, fps


def step_lines(step: PipelineStep, results: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The JSON lines of one step: each move with its warnings (a move that replaces one read
    before, `replace` with the seq it `replaces`; a move withdrawn, `undo` with its `target`),
    then any pending change."""
    lines: list[dict[str, Any]] = []
    for result in results:
        if "error" in result:
            lines.append({"type": "refused", "frame": step.frame_index, **result})
            continue
        if "undo" in result:
            lines.append({"type": "undo", "frame": step.frame_index, "seq": result["seq"], "target": result["undo"]})
            continue
        line = {
            "type": "move", "frame": step.frame_index, "time": round(step.time, 3), "seq": result["seq"],
            "move": result["move"], "evidence": dict(step.evidence or {}),
        }
        if "replaces" in result:
            line.update(type="replace", target=result["replaces"])
        lines.append(line)
        for code in result["warnings"]:  # of the move that stands at that seq
            lines.append({"type": "warning", "frame": step.frame_index, "seq": result.get("replaces", result["seq"]),
                          "code": code})
    for item in pending_items(step):
        lines.append({"type": "pending", **item})
    return lines


def run(args: argparse.Namespace) -> int:
    pipeline, setup, _ = prepare(args)
    live = True if args.realtime else None
    if args.headless:
        session = Session.start(journal_path=args.journal, game=args.game, players=pipeline.players)

        def emit(step: PipelineStep, results: list[dict[str, Any]]) -> None:
            for line in step_lines(step, results):
                print(json.dumps(line, sort_keys=True), flush=True)

        feed = VisionFeed(pipeline, args.source, live=live, setup=setup, step_listener=emit)
        stop = threading.Event()
        try:
            feed.run(session, stop)
        except KeyboardInterrupt:
            stop.set()
        finally:
            snap = session.snapshot
            view = snap.ruleset.view(snap.state, Audience.OPERATOR)
            print(json.dumps({"type": "end", "frames": feed.frames, "moves": feed.submitted,
                              "scores": view.get("scores"), "journal": str(session.journal_path)},
                             sort_keys=True), flush=True)
            session.close()
        return 0

    from cardtrack.commands.serve import announce, serve_app
    from server.app import create_app

    feed = VisionFeed(pipeline, args.source, live=live, setup=setup)
    settings = ServerSettings(
        game=args.game, players=pipeline.players, journal_path=args.journal, feed=feed,
        host=args.host, port=args.port, token=args.token, calibration_path=args.calibration,
    )
    Session.preflight(journal_path=settings.journal_path, game=settings.game, players=settings.players)
    app = create_app(settings)
    serve_app(app, settings, on_started=lambda port: announce(app, settings, port))
    print("stopped", file=sys.stderr)
    return 0
