"""`cardtrack train`: train the vision models and measure them.

`train identifier` trains the card identifier (torch, the optional `train` extra: `pip install
-e .[train]`), fits its score calibration, exports it to ONNX and checks the export; with
`--eval-only` it needs no torch and writes the accuracy report of an existing model instead
(held-out crops of every game's proxy deck and of an enrolled pack of the real Minecraft:
Explorers scans, plus crops cut from rendered scenes at their true corners and at the corners
the finder found). Each model is a subcommand with its own
handler and `add_parser` block, so `train finder` sits beside it.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from dataclasses import replace
from pathlib import Path

from cardtrack.commands.eval import inset_share
from vision.finder import DEFAULT_MODEL as FINDER_MODEL
from vision.identify import DEFAULT_MODEL

REPO_ROOT = Path(__file__).resolve().parents[2]
DEFAULT_SCANS = REPO_ROOT.parent / "shared" / "decks" / "explorers-scans"
EVAL_GAMES = ("minecraft-card-game", "minecraft-mk1", "angry-birds-power-cards", "minecraft-explorers")


def _number(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None


def _fraction(text: str) -> float:
    value = _number(text)
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"expected a number from 0 to 1, got {value}")
    return value


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected 1 or more, got {value}")
    return value


def _rate(text: str) -> float:
    value = _number(text)
    if not 0.0 < value <= 1.0:
        raise argparse.ArgumentTypeError(f"expected a learning rate above 0 and at most 1, got {value}")
    return value


def _scans_pack(scans: Path, work: Path, quiet: bool) -> Path:
    """Enroll the Explorers scans into a pack under `work` (reused when already there)."""
    from vision.art.enroll import enroll, load_name_map, shipped_name_map
    from vision.art.pack import PACK_FILE

    out = work / "explorers-scans-pack"
    if (out / PACK_FILE).is_file():
        return out
    names = shipped_name_map("minecraft-explorers")
    report = enroll("minecraft-explorers", scans, out, load_name_map(names) if names else None,
                    progress=not quiet)
    if report.missing:
        print(f"note: the scans lack {len(report.missing)} faces: {', '.join(report.missing[:8])}")
    return out


def eval_identifier(args: argparse.Namespace) -> int:
    from vision.art.pack import load_pack, proxy_pack
    from vision.identify import Identifier
    from vision.train.evaluate import (
        SceneQueries,
        evaluate,
        report_dict,
        report_markdown,
        scene_queries,
    )

    identifier = Identifier(args.out, threads=args.threads, inset=args.inset)
    work = Path(args.work) if args.work else Path(tempfile.gettempdir()) / "cardtrack-identifier-eval"
    work.mkdir(parents=True, exist_ok=True)
    decks = {}
    for game in EVAL_GAMES:
        pack = proxy_pack(game, progress=not args.quiet)
        decks[f"{game} proxy"] = (pack, {fid: pack.image(fid) for fid in pack.faces})
    scenes: dict[str, SceneQueries] = {}
    scans = Path(args.scans) if args.scans else (DEFAULT_SCANS if DEFAULT_SCANS.is_dir() else None)
    if scans is not None:
        if not scans.is_dir():
            raise ValueError(f"{scans}: not a folder of scans; pass the Explorers scans with --scans")
        pack_dir = _scans_pack(scans, work, args.quiet)
        pack = load_pack(pack_dir)
        name = "minecraft-explorers real scans"
        decks[name] = (pack, {fid: pack.image(fid) for fid in pack.faces})
        if args.scenes:
            finder = None
            if args.finder != "none":
                from vision.finder import Finder

                finder = Finder(args.finder, threads=args.threads)
            scenes[name] = scene_queries("minecraft-explorers", pack_dir, seed=9_000 + args.seed,
                                         stills=args.scenes, finder=finder, progress=not args.quiet)
            if finder is not None:
                print(f"the finder missed {scenes[name].missed} of the scene cards (IoU < 0.5); "
                      "they are left out of the finder's-corners crops")
    else:
        print("note: no Explorers scans found; pass --scans to include the real deck")
    report = evaluate(identifier, decks, seed=args.seed, per_turn=args.per_turn, scenes=scenes,
                      progress=not args.quiet)
    text = report_markdown(report)
    print(text)
    if args.report:
        Path(args.report).write_text(json.dumps(report_dict(report), indent=1) + "\n", encoding="utf-8")
        print(f"wrote {args.report}")
    print(f"evaluated in {report.seconds:.0f} s")
    return 0


def train_identifier_command(args: argparse.Namespace) -> int:
    if args.eval_only:
        return eval_identifier(args)
    # Idle OpenMP threads sleep instead of spinning: on a shared two-core machine spinning
    # threads steal the cores the crop-making worker needs.
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    try:
        import torch  # noqa: F401
    except ImportError:
        raise ValueError(
            "training needs torch, which is an optional extra: `pip install -e .[train]` "
            "(or use --eval-only to measure an existing model)"
        ) from None
    from vision.train.data import PoolConfig, cache_root
    from vision.train.identifier import TrainConfig, train_identifier

    default = TrainConfig()
    config = TrainConfig(
        steps=args.steps or default.steps,
        batch=args.batch,
        threads=args.threads,
        workers=args.workers,
        checkpoint_every=args.checkpoint_every,
        pool=PoolConfig(designs=args.designs or PoolConfig().designs),
        scene_share=default.scene_share if args.scene_crops is None else args.scene_crops,
        scene_shots=args.scene_shots or default.scene_shots,
        scene_stills=args.scene_stills or default.scene_stills,
        crops=replace(
            default.crops,
            edge_slip_probability=default.crops.edge_slip_probability if args.edge_slip is None else args.edge_slip,
            min_width=args.min_width or default.crops.min_width,
            object_probability=default.crops.object_probability if args.objects is None else args.objects,
            neighbour_probability=(default.crops.neighbour_probability if args.neighbours is None
                                   else args.neighbours),
        ),
    )
    work = Path(args.work) if args.work else cache_root() / f"identifier-seed{args.seed}"
    start = time.perf_counter()
    result = train_identifier(args.out, seed=args.seed, config=config, work_dir=work,
                              resume=args.resume, progress=not args.quiet)
    print(f"wrote {result.out}: {result.parameters} parameters, {result.classes} classes, "
          f"{result.steps} steps in {result.seconds:.0f} s of training "
          f"({time.perf_counter() - start:.0f} s in all)")
    print(f"final loss {result.final_loss:.3f}, batch accuracy {result.final_accuracy:.3f}; "
          f"onnxruntime vs torch max difference {result.export_max_diff:.1e}")
    cal = result.calibration
    print(f"calibration: temperature {cal.temperature}, unknown level {cal.unknown_level}, "
          f"threshold {cal.threshold}; log: {result.log}")
    return 0


def train_finder_command(args: argparse.Namespace) -> int:
    """`train finder`: render data shards, train, export; or with --eval-only measure a model."""
    from vision.train import finder as ft

    out = Path(args.out)
    if args.eval_only:
        reports = [ft.evaluate_finder(out, scenes=args.scenes, seed=args.eval_seed, threads=args.threads_eval,
                                      progress=not args.quiet, tables=tables) for tables in (False, True)]
        print("\n\n".join(ft.report_markdown(r) for r in reports))
        if args.card:
            ft.write_report(Path(args.card), reports)
            print(f"wrote the metrics into {args.card}")
        return 0
    root = Path(args.work) if args.work else Path(tempfile.gettempdir()) / "cardtrack-finder"
    data = root / f"data-seed{args.data_seed}"
    if args.shards:
        ft.render_shards(data, seed=args.data_seed, shards=range(args.shards), progress=not args.quiet)
    if args.tables:
        ft.render_shards(data, seed=args.data_seed, shards=range(args.tables), progress=not args.quiet,
                         tables=True)
    config = ft.FinderTrainConfig(steps=args.steps, batch=args.batch, threads=args.threads,
                                  max_minutes=args.minutes, lr=args.lr)
    init = Path(args.init) if args.init else None
    result = ft.train_finder(out, data_dir=data, work_dir=root / f"work-seed{args.seed}", seed=args.seed,
                             config=config, resume=not args.restart, init=init, progress=not args.quiet)
    print(result.describe())
    return 0


def train_corners_command(args: argparse.Namespace) -> int:
    """`train corners`: cut card patches from rendered stills (and clips), train, export."""
    from vision.finder import DEFAULT_MODEL as FINDER_MODEL
    from vision.train import corners as ct

    root = Path(args.work) if args.work else Path(tempfile.gettempdir()) / "cardtrack-corners"
    data = root / f"data-seed{args.data_seed}"
    finder = Path(args.finder) if args.finder else FINDER_MODEL
    # Options are checked before any shard is rendered.
    min_visible = ct.MIN_VISIBLE if args.min_visible is None else args.min_visible
    try:
        config = ct.CornerTrainConfig(steps=args.steps, batch=args.batch, threads=args.threads,
                                      max_minutes=args.minutes, min_visible=min_visible)
    except ct.CornerTrainError as exc:
        raise ct.CornerTrainError(f"--min-visible: {exc}") from None
    if args.shards:
        ct.render_shards(data, seed=args.data_seed, shards=range(args.shards), finder_model=finder,
                         progress=not args.quiet)
    if args.bleed_shards:
        ct.render_shards(data, seed=args.data_seed, shards=range(args.bleed_shards), finder_model=finder,
                         progress=not args.quiet, full_bleed=True)
    for clip in args.clips:
        ct.footage_shard(data, Path(clip), finder_model=finder)
    result = ct.train_corners(Path(args.out), data_dir=data, work_dir=root / f"work-seed{args.seed}",
                              seed=args.seed, config=config, resume=not args.restart, progress=not args.quiet)
    print(result.describe())
    return 0


def train_tokens_command(args: argparse.Namespace) -> int:
    """`train tokens`: render token/die zone crops, train, export; with --eval-only measure."""
    from vision.train import tokens as tt

    out = Path(args.out)
    root = Path(args.work) if args.work else Path(tempfile.gettempdir()) / "cardtrack-tokens"
    if args.eval_only:
        if args.clips:
            for clip in args.clips:
                print(json.dumps(tt.evaluate_clip(out, Path(clip), progress=not args.quiet), indent=1))
            return 0
        held = root / f"data-seed{args.eval_seed}"
        paths = tt.render_shards(held, seed=args.eval_seed, shards=range(args.eval_shards), progress=not args.quiet)
        print(json.dumps(tt.evaluate_crops(out, paths), indent=1))
        return 0
    data = root / f"data-seed{args.data_seed}"
    if args.shards:
        tt.render_shards(data, seed=args.data_seed, shards=range(args.shards), progress=not args.quiet)
    config = tt.TokenTrainConfig(steps=args.steps, batch=args.batch, threads=args.threads, max_minutes=args.minutes)
    result = tt.train_tokens(out, data_dir=data, work_dir=root / f"work-seed{args.seed}", seed=args.seed,
                             config=config, resume=not args.restart, progress=not args.quiet)
    print(result.describe())
    return 0


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        "train",
        help="train a vision model (torch extra) or measure one (--eval-only)",
        description="Train the vision models. Training needs the optional torch extra "
        "(`pip install -e .[train]`); measuring a model does not.",
    )
    tsub = parser.add_subparsers(dest="train_command", metavar="MODEL", required=True)

    ident = tsub.add_parser(
        "identifier",
        help="the card identifier: embedding model + gallery matching",
        description="Train the card identifier on proxy art of three games and random designs "
        "(never Minecraft: Explorers), calibrate, export to ONNX and verify it. With --eval-only, "
        "write the accuracy report of the model at --out instead.",
    )
    ident.add_argument("--out", default=str(DEFAULT_MODEL), help="the ONNX model to write (or to measure)")
    ident.add_argument("--seed", type=int, default=0)
    ident.add_argument("--steps", type=_positive, default=None, help="training steps (default: the shipped model's, models/identifier.md)")
    ident.add_argument("--batch", type=_positive, default=128)
    ident.add_argument("--designs", type=_positive, default=None, help="random designs in the training pool (default: the shipped model's)")
    ident.add_argument("--edge-slip", type=_fraction, default=None,
                       help="share of training crops with one edge slipped in or out (default: the training mix's)")
    ident.add_argument("--objects", type=_fraction, default=None,
                       help="share of training crops with a mug or glass leaning over up to half the card "
                       "(default 0, the shipped model's mix: see models/identifier.md for a run with 0.12)")
    ident.add_argument("--neighbours", type=_fraction, default=None,
                       help="share of training crops with a neighbouring card of a row or fan over 20-60%% of "
                       "one side (default 0, the shipped model's mix)")
    ident.add_argument("--scene-crops", type=_fraction, default=None,
                       help="share of training crops that are cards of the training decks and designs cut "
                       "out of rendered scenes at the finder's corners, as the live pipeline cuts them "
                       "(default 0; rendered once and cached, see models/identifier.md)")
    ident.add_argument("--scene-shots", type=_positive, default=None,
                       help="shots of games in play rendered per training game for --scene-crops (default 500)")
    ident.add_argument("--scene-stills", type=_positive, default=None,
                       help="stills of random designs rendered for --scene-crops (default 1000)")
    ident.add_argument("--min-width", type=_positive, default=None,
                       help="narrowest training card in pixels (default: the training mix's)")
    ident.add_argument("--resume", default=None, help="checkpoint to continue from (WORK/checkpoint.pt)")
    ident.add_argument("--work", default=None, help="folder for checkpoints and the log (default ~/.cache/cardtrack/train/identifier-seedN)")
    ident.add_argument("--checkpoint-every", type=_positive, default=250)
    ident.add_argument("--threads", type=_positive, default=2, help="torch / onnxruntime threads")
    ident.add_argument("--workers", type=int, default=1, choices=(0, 1, 2), help="crop-making processes")
    ident.add_argument("--eval-only", action="store_true", help="measure the model at --out, no training")
    ident.add_argument("--per-turn", type=_positive, default=10, help="eval crops per face and turn")
    ident.add_argument("--inset", type=inset_share, default=None,
                       help="with --eval-only: share trimmed off each side of a crop for its second view "
                       "(default vision.identify.CARD_INSET; 0: each crop read once)")
    ident.add_argument("--scans", default=None, help="folder of the Explorers scans (default ../shared/decks/explorers-scans)")
    ident.add_argument("--scenes", type=int, default=40, help="rendered scenes to cut eval crops from (0: none)")
    ident.add_argument("--finder", default=str(FINDER_MODEL),
                       help="finder model whose corners the scene cards are also cut at (none: only true corners)")
    ident.add_argument("--report", default=None, help="write the eval report as JSON here")
    ident.add_argument("--quiet", action="store_true")
    ident.set_defaults(func=train_identifier_command)

    fnd = tsub.add_parser(
        "finder",
        help="the card finder: corners of every card (CenterNet-style ONNX detector)",
        description="Render synthetic scenes (every game's proxy art mixed with random designs) "
        "into data shards under WORK, train the finder on them (resumable), export it to ONNX and "
        "verify it against torch. With --eval-only, measure the model at --out on held-out scenes "
        "and, with --card, write the figures into its model card.",
    )
    fnd.add_argument("--out", default="models/finder.onnx", help="the ONNX model to write (or to measure)")
    fnd.add_argument("--seed", type=int, default=0, help="training seed")
    fnd.add_argument("--data-seed", type=int, default=1, help="seed of the rendered training scenes")
    fnd.add_argument("--shards", type=int, default=40, help="data shards of 25 scenes to render first (0: use what is there)")
    fnd.add_argument("--tables", type=int, default=48,
                     help="data shards of 25 shots of games in play (footage layouts) to render first (0: use what is there)")
    fnd.add_argument("--steps", type=_positive, default=4000)
    fnd.add_argument("--batch", type=_positive, default=12)
    fnd.add_argument("--minutes", type=float, default=32.0, help="stop training after this many minutes")
    fnd.add_argument("--threads", type=_positive, default=2, help="torch threads")
    fnd.add_argument("--work", default=None, help="folder for data shards and checkpoints (default TMP/cardtrack-finder)")
    fnd.add_argument("--restart", action="store_true", help="ignore an existing checkpoint")
    fnd.add_argument("--lr", type=_rate, default=3e-3, help="peak learning rate (cosine decay over the run)")
    fnd.add_argument("--init", default=None,
                     help="start from this exported finder (e.g. models/finder.onnx) when WORK holds no "
                     "checkpoint; its batch-norm statistics are held, in a resumed run too")
    fnd.add_argument("--eval-only", action="store_true", help="measure the model at --out, no training")
    fnd.add_argument("--scenes", type=_positive, default=100, help="held-out scenes to measure on")
    fnd.add_argument("--eval-seed", type=int, default=9001, help="seed of the held-out scenes")
    fnd.add_argument("--threads-eval", type=_positive, default=1, help="onnxruntime threads when measuring")
    fnd.add_argument("--card", default=None, help="model card to write the metrics into (models/finder.md)")
    fnd.add_argument("--quiet", action="store_true")
    fnd.set_defaults(func=train_finder_command)

    cor = tsub.add_parser(
        "corners",
        help="the corner refiner: the finder's second stage, corners to the pixel",
        description="Render synthetic stills at 1280x720 (every game's proxy art mixed with random "
        "designs), run the finder on them, cut a patch around every card into data shards under WORK "
        "(plus every 4th frame of any rendered clips given with --clip), train the corner refiner "
        "(resumable), export it to ONNX and verify it against torch. Its accuracy is measured with "
        "the finder's (`cardtrack train finder --eval-only`).",
    )
    cor.add_argument("--out", default="models/corners.onnx", help="the ONNX model to write")
    cor.add_argument("--seed", type=int, default=0, help="training seed")
    cor.add_argument("--data-seed", type=int, default=3, help="seed of the rendered training stills")
    cor.add_argument("--shards", type=int, default=48, help="still shards of 40 scenes to render first (0: use what is there)")
    cor.add_argument("--bleed-shards", type=int, default=0,
                     help="more still shards of 40 scenes whose random designs print their pictures to the "
                     "card's edge inside a thin, mostly black border, as many printed decks do")
    cor.add_argument("--clip", dest="clips", action="append", default=[],
                     help="a rendered clip folder (clip.mp4 + truth) to cut patches from; repeatable")
    cor.add_argument("--finder", default=None, help="the finder whose mistakes the data shows (default: the shipped one)")
    cor.add_argument("--min-visible", type=_fraction, default=None, metavar="SHARE",
                     help="train on the cards at least this share visible (default: the shipped "
                     "model's, vision.train.corners.MIN_VISIBLE; shards keep every card from "
                     "CUT_VISIBLE up)")
    cor.add_argument("--steps", type=_positive, default=4000)
    cor.add_argument("--batch", type=_positive, default=32)
    cor.add_argument("--minutes", type=float, default=30.0, help="stop training after this many minutes")
    cor.add_argument("--threads", type=_positive, default=2, help="torch threads")
    cor.add_argument("--work", default=None, help="folder for data shards and checkpoints (default TMP/cardtrack-corners)")
    cor.add_argument("--restart", action="store_true", help="ignore an existing checkpoint")
    cor.add_argument("--quiet", action="store_true")
    cor.set_defaults(func=train_corners_command)

    tok = tsub.add_parser(
        "tokens",
        help="the tokens model: health/hunger/daylight tokens and the die's face in counter zones",
        description="Render synthetic tables with tokens and the die into zone-crop shards under WORK, "
        "train the tokens heatmap model (resumable), export it to ONNX with its metadata and verify it "
        "against torch. With --eval-only, measure the model at --out on held-out crops.",
    )
    tok.add_argument("--out", default="models/tokens.onnx", help="the ONNX model to write (or to measure)")
    tok.add_argument("--seed", type=int, default=0, help="training seed")
    tok.add_argument("--data-seed", type=int, default=1, help="seed of the rendered training tables")
    tok.add_argument("--shards", type=int, default=80, help="shards of 8 tables to render first (0: use what is there)")
    tok.add_argument("--steps", type=_positive, default=1500)
    tok.add_argument("--batch", type=_positive, default=16)
    tok.add_argument("--minutes", type=float, default=12.0, help="stop training after this many minutes")
    tok.add_argument("--threads", type=_positive, default=2, help="torch threads")
    tok.add_argument("--work", default=None, help="folder for data shards and checkpoints (default TMP/cardtrack-tokens)")
    tok.add_argument("--restart", action="store_true", help="ignore an existing checkpoint")
    tok.add_argument("--eval-only", action="store_true", help="measure the model at --out, no training")
    tok.add_argument("--eval-seed", type=int, default=9101, help="seed of the held-out tables")
    tok.add_argument("--eval-shards", type=_positive, default=6, help="held-out shards to measure on")
    tok.add_argument("--clip", dest="clips", action="append", default=[],
                     help="with --eval-only: a rendered mk. I clip folder to measure the counts on; repeatable")
    tok.add_argument("--quiet", action="store_true")
    tok.set_defaults(func=train_tokens_command)
