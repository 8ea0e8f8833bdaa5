"""`cardtrack eval`: how well the pipeline reads recorded footage, and how good the models are.

`cardtrack eval FOOTAGE... --report DIR` replays each clip (a video with its truth file beside
it, a clip folder, a frame folder) through the live pipeline and writes `summary.json`,
`report.md`, plots and contact sheets of the wrong moves (`vision.evaluate`, `vision.report`);
paths that are not footage are skipped with a notice. `--baseline FILE` compares the figures
with a committed baseline and exits 1 outside its tolerance; `--write-baseline FILE` writes one.
Clips run in parallel (`--jobs`), and `--shard K/N` takes every N-th clip from clip K so a
corpus splits across machines; `cardtrack eval merge SUMMARY...` joins the shard summaries.
`cardtrack eval models` runs the model accuracy reports of `cardtrack train ... --eval-only`
(no torch needed). The first word decides: `models` and `merge` are these two modes, anything
else is footage (a clip folder named `models` is given as `./models`).
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
from pathlib import Path
from typing import Any

from vision.evaluate import (
    STAND_INS,
    EvalOptions,
    EvaluationError,
    ModelChoice,
    build_summary,
    collect_footage,
    compare_to_baseline,
    evaluate_all,
    load_summary,
    merge_summaries,
    parse_shard,
    select_shard,
    write_summary,
)
from vision.pipeline import FAN_ZOOM

MODES = ("models", "merge")
FOOTAGE_ONLY = ("truth", "tolerance", "shard", "oracle", "stand_in", "frames", "calibration", "setup",
                "read_covered", "zoom")
MODELS_ONLY = ("scenes", "eval_seed", "card", "per_turn", "scans", "identifier_scenes", "seed", "only", "work",
               "threads")
REBASELINE = ("cardtrack eval datasets/footage/* --report out/eval "
              "--write-baseline datasets/baselines/bundled-footage.json")

EPILOG = """\
modes (the first word decides; footage in a folder named `models` or `merge` is given as ./models):
  cardtrack eval FOOTAGE... --report DIR     replay clips through the live pipeline and score them
  cardtrack eval merge SUMMARY... --report DIR
                                             join shard summaries (summary.json files or report folders)
  cardtrack eval models [--only finder|identifier]
                                             the model accuracy reports (train ... --eval-only)

examples:
  cardtrack eval datasets/footage/* --report out/eval
  cardtrack eval datasets/footage/* --baseline datasets/baselines/bundled-footage.json
  cardtrack eval my-game.mp4 --truth my-game.truth.json --report out/mine
  cardtrack eval corpus/* --shard 0/4 --report out/shard0     (then: cardtrack eval merge out/shard* --report out/all)
  cardtrack eval models --card models/finder.md

See docs/evaluation.md for what each figure means and how to annotate your own footage.
"""


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected 1 or more, got {value}")
    return value


def _count(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number of frames, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected 0 or more, got {value}")
    return value


def zoom_factor(text: str) -> float:
    """A `PipelineConfig.zoom` from the command line: a scale more than 0, or 0 for none."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a scale such as {FAN_ZOOM:g}, or 0 for none; got {text!r}") from None
    if not (value >= 0 and value < float("inf")):
        raise argparse.ArgumentTypeError(f"expected a scale more than 0, or 0 for none; got {text!r}")
    return value


def add_reading_options(parser: argparse.ArgumentParser) -> None:
    """`--read-covered` and `--zoom`, the pipeline's optional ways of reading fanned cards, as
    `cardtrack run`, `cardtrack eval` and `cardtrack bench pipeline` all take them
    (`reading_changes`)."""
    parser.add_argument("--read-covered", action="store_true",
                        help="read a card another card overlaps (a fanned hand) from its visible part as "
                             "well (PipelineConfig.read_covered; measured in models/identifier.md)")
    parser.add_argument("--zoom", type=zoom_factor, default=None, metavar="FACTOR",
                        help="read each player's area a second time with its cards FACTOR times as large "
                             f"as in the whole frame, e.g. {FAN_ZOOM:g}: finds more fanned cards, at about "
                             "twice the finder's time (PipelineConfig.zoom; default and 0: never; measured "
                             "in models/finder.md)")


def reading_changes(args: argparse.Namespace) -> dict[str, Any]:
    """The `PipelineConfig` changes the options of `add_reading_options` ask for."""
    zoom = getattr(args, "zoom", None)
    return {"read_covered": getattr(args, "read_covered", False),
            **({} if zoom is None else {"zoom": zoom or None})}


def inset_share(text: str) -> float:
    """An identifier inset (`vision.identify.check_inset`): a share of the crop from 0 to under 0.5."""
    from vision.identify import IdentifierError, check_inset

    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a share of the crop such as 0.08, got {text!r}") from None
    try:
        return check_inset(value)
    except IdentifierError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        "eval",
        help="score the pipeline on recorded footage with truth (report, plots, baseline), or the models",
        description="Replays footage through the exact live pipeline and reports finder AP, "
        "identification accuracy, move precision/recall, latency, the final state and speed.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("footage", nargs="+", metavar="FOOTAGE",
                        help="videos (truth file beside them), clip folders or frame folders; or `models`, "
                        "or `merge SUMMARY...`")
    parser.add_argument("--report", type=Path, default=None, metavar="DIR",
                        help="write summary.json, report.md, plots and contact sheets here")
    parser.add_argument("--baseline", type=Path, default=None, metavar="FILE",
                        help="compare with this baseline; exit 1 when a figure is outside its tolerance")
    parser.add_argument("--write-baseline", type=Path, default=None, metavar="FILE",
                        help="write the summary as a baseline file")
    parser.add_argument("--finder", type=Path, default=None, help="finder model (default models/finder.onnx)")
    parser.add_argument("--identifier", type=Path, default=None,
                        help="identifier model (default models/identifier.onnx)")
    parser.add_argument("--identifier-inset", type=inset_share, default=None, metavar="SHARE",
                        help="share of a crop trimmed off each side for its second view (default: "
                             "vision.identify.CARD_INSET; 0: each crop read once, as before it)")
    add_reading_options(parser)
    parser.add_argument("--art", type=Path, default=None, metavar="PACK",
                        help="art pack the identifier matches against (default: the game's proxy "
                             "art), e.g. a deck enrolled with `cardtrack deck enroll`")
    parser.add_argument("--quiet", action="store_true", help="no progress bars")

    foot = parser.add_argument_group("footage")
    foot.add_argument("--truth", type=Path, default=None, metavar="FILE",
                      help="the truth file of a single clip (default: truth.json.gz / truth.json beside it)")
    foot.add_argument("--tolerance", type=_count, default=None, metavar="FRAMES",
                      help="a read move matches a truth move this many frames apart at most "
                      "(default: 2 s of the clip's frames)")
    foot.add_argument("--jobs", type=_positive, default=None, metavar="N",
                      help="clips evaluated in parallel (default: the number of cores)")
    foot.add_argument("--shard", default=None, metavar="K/N",
                      help="only every N-th clip starting at clip K (0-based), after sorting by path")
    foot.add_argument("--frames", type=_positive, default=None, metavar="N",
                      help="only the first N frames of each clip (a quick look; the final state is not compared)")
    foot.add_argument("--oracle", action="store_true",
                      help="truth stand-ins instead of the models: measures everything downstream of them")
    foot.add_argument("--stand-in", choices=STAND_INS, default=None, metavar="MODEL",
                      help="the truth stand-in for this model only (finder or identifier): measures what "
                           "the other model costs")
    foot.add_argument("--calibration", type=Path, default=None, metavar="PROFILE",
                      help="table profile, for footage whose truth has no camera geometry")
    foot.add_argument("--setup", type=Path, default=None, metavar="FILE",
                      help="opening deal (YAML/JSON 'setup'), for footage whose truth has no checkpoint")
    foot.add_argument("--no-sheets", action="store_true", help="no contact sheets of the wrong moves")

    mod = parser.add_argument_group("models (cardtrack eval models; the flags of `train ... --eval-only`)")
    mod.add_argument("--only", choices=("finder", "identifier"), default=None, help="one model only")
    mod.add_argument("--threads", type=_positive, default=None, help="onnxruntime threads (default 1)")
    mod.add_argument("--scenes", type=_positive, default=None,
                     help="finder: held-out scenes to measure on (default 100)")
    mod.add_argument("--eval-seed", type=int, default=None, help="finder: seed of the held-out scenes (default 9001)")
    mod.add_argument("--card", type=Path, default=None, help="finder: model card to write the metrics into")
    mod.add_argument("--per-turn", type=_positive, default=None, help="identifier: crops per face and turn (default 10)")
    mod.add_argument("--scans", type=Path, default=None,
                     help="identifier: the Explorers scans (default ../shared/decks/explorers-scans)")
    mod.add_argument("--identifier-scenes", type=int, default=None,
                     help="identifier: rendered scenes to cut crops from (default 40; 0: none)")
    mod.add_argument("--seed", type=int, default=None, help="identifier: evaluation seed (default 0)")
    mod.add_argument("--work", type=Path, default=None, help="identifier: folder for the enrolled scans pack")
    parser.set_defaults(func=evaluate)


def _refuse(args: argparse.Namespace, names: tuple[str, ...], mode: str) -> None:
    for name in names:
        value = getattr(args, name)
        if value not in (None, False):
            flag = "--" + name.replace("_", "-")
            raise EvaluationError(f"{flag} does not apply to {mode}; see `cardtrack eval --help`")


def evaluate(args: argparse.Namespace) -> int:
    first = args.footage[0]
    if first == "models":
        if len(args.footage) > 1:
            raise EvaluationError(f"`cardtrack eval models` takes no paths, got {' '.join(args.footage[1:])}; "
                                  "footage in a folder named models is given as ./models")
        _refuse(args, (*FOOTAGE_ONLY, "baseline", "write_baseline", "jobs", "no_sheets"), "`cardtrack eval models`")
        return eval_models(args)
    if first == "merge":
        _refuse(args, (*FOOTAGE_ONLY, *MODELS_ONLY, "jobs", "no_sheets", "finder", "identifier", "identifier_inset"),
                "`cardtrack eval merge`")
        return eval_merge(args)
    _refuse(args, MODELS_ONLY, "footage (they are for `cardtrack eval models`)")
    return eval_footage(args)


def eval_footage(args: argparse.Namespace) -> int:
    clips, notices = collect_footage(args.footage, truth=args.truth)
    for notice in notices:
        print(notice, file=sys.stderr)
    shard = parse_shard(args.shard) if args.shard else None
    if shard is not None:
        clips = tuple(select_shard(clips, *shard))
        print(f"shard {shard[0]}/{shard[1]}: {len(clips)} clip(s): {', '.join(c.name for c in clips) or 'none'}",
              file=sys.stderr)
    setup = None
    if args.setup is not None:
        from cardtrack.commands.run import read_setup

        setup = read_setup(args.setup)
    models = ModelChoice(finder=args.finder, identifier=args.identifier, oracle=args.oracle,
                         stand_in=args.stand_in, threads=1,
                         art=args.art, identifier_inset=args.identifier_inset, read_covered=args.read_covered,
                         zoom=args.zoom)
    options = EvalOptions(models=models, tolerance_frames=args.tolerance, max_frames=args.frames,
                          sheets=not args.no_sheets, profile=args.calibration, setup=setup)
    jobs = args.jobs or os.cpu_count() or 1
    entries = evaluate_all(clips, options, jobs=jobs, report_dir=args.report, progress=not args.quiet)
    summary = build_summary(entries, models=models.describe(), shard=shard)
    return _finish(args, summary)


def eval_merge(args: argparse.Namespace) -> int:
    sources = args.footage[1:]
    if not sources:
        raise EvaluationError("`cardtrack eval merge` needs the shard summaries: summary.json files or report folders")
    loaded = [(str(s), load_summary(Path(s))) for s in sources]
    summary = merge_summaries(loaded)
    if args.report is not None:
        for source, _ in loaded:
            folder = Path(source) if Path(source).is_dir() else Path(source).parent
            if (folder / "sheets").is_dir() and folder.resolve() != args.report.resolve():
                shutil.copytree(folder / "sheets", args.report / "sheets", dirs_exist_ok=True)
    return _finish(args, summary)


def _finish(args: argparse.Namespace, summary: dict[str, Any]) -> int:
    print_summary(summary)
    if args.report is not None:
        from vision.report import write_report

        write_report(summary, args.report)
        print(f"wrote {args.report / 'report.md'} and {args.report / 'summary.json'}")
    if args.write_baseline is not None:
        write_summary(summary, args.write_baseline)
        print(f"wrote the baseline {args.write_baseline}")
    if args.baseline is not None:
        baseline = load_summary(args.baseline)
        diffs, notes = compare_to_baseline(summary, baseline)
        for note in notes:
            print(f"note: {note}")
        if diffs:
            print(f"{len(diffs)} figure(s) outside the tolerance of {args.baseline} "
                  "(datasets/baselines/README.md):")
            for diff in diffs:
                print(f"  {diff.describe()}")
            print(f"if the change is intended (new models, a pipeline change), re-baseline: {REBASELINE}")
            return 1
        print(f"within the tolerance of {args.baseline}")
    return 0


def _f(value: Any, digits: int = 3) -> str:
    return "-" if value is None else f"{value:.{digits}f}" if isinstance(value, float) else str(value)


def print_summary(summary: dict[str, Any]) -> None:
    """One line per clip and one overall: the headline figures."""
    rows = [("clip", "frames", "AP50", "AP50:95", "top-1", "moves P/R/F1", "lat p50", "state", "scores", "fps")]

    def row(name: str, c: dict[str, Any]) -> None:
        m, s, sc = c["moves"], c["final_state"], c.get("final_scores") or {"compared": 0}
        state = "-" if not s["compared"] else f"{s['equal']}/{s['compared']}"
        scores = "-" if not sc["compared"] else f"{sc['equal']}/{sc['compared']}"
        rows.append((name, str(c["speed"]["frames"]), _f(c["finder"]["ap50"]), _f(c["finder"]["ap50_95"]),
                     _f(c["identifier"]["top1"]),
                     f"{_f(m['precision'], 2)}/{_f(m['recall'], 2)}/{_f(m['f1'], 2)} ({m['matched']}/{m['truth']})",
                     _f(c["latency_frames"]["p50"], 1), state, scores, _f(c["speed"]["fps"], 1)))

    for name, clip in summary["clips"].items():
        row(name, clip)
    row("overall", summary["overall"])
    widths = [max(len(r[k]) for r in rows) for k in range(len(rows[0]))]
    for r in rows:
        print("  ".join(cell.ljust(w) for cell, w in zip(r, widths, strict=True)).rstrip())
    referee = summary["overall"].get("referee", {})
    if referee.get("rounds"):
        print(f"referee: {referee['called']} of {referee['rounds']} rounds announced right "
              f"({_f(referee['accuracy'])})")


def eval_models(args: argparse.Namespace) -> int:
    """The accuracy reports of `train finder --eval-only` and `train identifier --eval-only`,
    with their code (neither needs torch)."""
    threads = args.threads or 1
    finder_flags = {"--scenes": args.scenes, "--eval-seed": args.eval_seed, "--card": args.card}
    identifier_flags = {"--per-turn": args.per_turn, "--scans": args.scans,
                        "--identifier-scenes": args.identifier_scenes, "--seed": args.seed, "--work": args.work}
    for only, flags, owner in (("identifier", finder_flags, "finder"), ("finder", identifier_flags, "identifier")):
        given = [k for k, v in flags.items() if v is not None]
        if args.only == only and given:
            raise EvaluationError(f"{', '.join(given)}: for the {owner}, which --only {only} leaves out")
    if args.report is not None:
        args.report.mkdir(parents=True, exist_ok=True)
    if args.only in (None, "finder"):
        from vision.finder import DEFAULT_MODEL as FINDER_MODEL
        from vision.train import finder as ft

        model = args.finder or FINDER_MODEL
        reports = [ft.evaluate_finder(Path(model), scenes=args.scenes or 100,
                                      seed=9_001 if args.eval_seed is None else args.eval_seed,
                                      threads=threads, progress=not args.quiet, tables=tables)
                   for tables in (False, True)]
        text = "\n\n".join(ft.report_markdown(r) for r in reports)
        print(f"## Finder: {model}\n\n{text}\n")
        if args.card is not None:
            ft.write_report(args.card, reports)
            print(f"wrote the metrics into {args.card}")
        if args.report is not None:
            (args.report / "finder.md").write_text(f"# Finder: {model}\n\n{text}\n", encoding="utf-8")
            print(f"wrote {args.report / 'finder.md'}")
    if args.only in (None, "identifier"):
        from cardtrack.commands.train import eval_identifier
        from vision.finder import DEFAULT_MODEL as FINDER_MODEL
        from vision.identify import DEFAULT_MODEL as IDENTIFIER_MODEL

        print(f"## Identifier: {args.identifier or IDENTIFIER_MODEL}\n")
        ns = argparse.Namespace(
            out=str(args.identifier or IDENTIFIER_MODEL), threads=threads, work=args.work, quiet=args.quiet,
            scans=args.scans, scenes=40 if args.identifier_scenes is None else args.identifier_scenes,
            seed=args.seed or 0, per_turn=args.per_turn or 10, finder=str(args.finder or FINDER_MODEL),
            report=str(args.report / "identifier.json") if args.report is not None else None,
            inset=args.identifier_inset,
        )
        code = eval_identifier(ns)
        if code:
            return code
    return 0
