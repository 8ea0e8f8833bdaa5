"""`cardtrack synth`: synthetic table scenes with exact truth, for training and measuring.

`synth scenes` writes random still scenes (JPEG), COCO annotations and a truth file;
`synth footage` animates a simulated game into a clip with its truth; `synth bench` measures
how fast footage frames render. Each subcommand is a handler function
and an `add_parser` block in `register`.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
from dataclasses import asdict
from pathlib import Path

from cardtrack.commands.rules import load_scenario_file
from vision.synth.bench import bench_footage
from vision.synth.errors import SynthError
from vision.synth.faces import FaceLibrary, faces_of_pack
from vision.synth.footage import FootageConfig, make_footage
from vision.synth.library import GAMES, build_library, open_pack
from vision.synth.stills import StillsConfig, write_stills


def _size(text: str) -> tuple[int, int]:
    try:
        w, h = (int(v) for v in text.lower().split("x"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"size must look like 1280x720, got {text!r}") from None
    if not (32 <= w <= 8192 and 32 <= h <= 8192):
        raise argparse.ArgumentTypeError(f"size {w}x{h} is out of range (32..8192 per side)")
    return (w, h)


def scenes_command(args: argparse.Namespace) -> int:
    if args.count < 1:
        raise SynthError(f"--count must be at least 1, got {args.count}")
    out = Path(args.out)
    if out.exists() and any(out.iterdir()) and not args.force:
        raise SynthError(f"{out}: folder is not empty; choose a new --out or pass --force")
    lib, deck = build_library(args.game, args.art, mixed=args.mixed, seed=args.seed,
                              designs=args.designs, progress=not args.quiet)
    config = StillsConfig(count=args.count, seed=args.seed, size=args.size, effects=args.effects)
    truth = write_stills(out, lib, deck, config, art=tuple(lib.sources), progress=not args.quiet)
    cards = sum(len(f.cards) for f in truth.frames)
    print(f"wrote {len(truth.frames)} scenes ({cards} cards, {len(lib)} faces) to {out}: "
          "images/, annotations.coco.json, truth.json")
    return 0


def transcode_h264(path: Path, *, crf: int) -> None:
    """Re-encode an MP4 in place as H.264 (OpenCV writes MPEG-4 part 2 only; it reads H.264).

    Uses the ffmpeg binary that the `imageio-ffmpeg` package ships (the `media` extra).
    """
    try:
        import imageio_ffmpeg
    except ImportError:
        raise SynthError(
            "--h264 needs the ffmpeg that imageio-ffmpeg ships: pip install -e .[media]"
        ) from None
    tmp = path.with_suffix(".h264.mp4")
    cmd = [imageio_ffmpeg.get_ffmpeg_exe(), "-loglevel", "error", "-y", "-i", str(path),
           "-c:v", "libx264", "-preset", "slow", "-crf", str(crf), "-pix_fmt", "yuv420p",
           "-movflags", "+faststart", str(tmp)]
    result = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise SynthError(f"{path}: H.264 re-encoding failed: {result.stderr.strip()[-300:]}")
    tmp.replace(path)


def footage_command(args: argparse.Namespace) -> int:
    if args.moves is not None and args.moves < 0:
        raise SynthError(f"--moves must be 0 or more, got {args.moves}")
    if args.fps <= 0:
        raise SynthError(f"--fps must be positive, got {args.fps}")
    out = Path(args.out)
    if out.exists() and any(out.iterdir()) and not args.force:
        raise SynthError(f"{out}: folder is not empty; choose a new --out or pass --force")
    pack = open_pack(args.art, args.game, progress=not args.quiet)
    lib = FaceLibrary(faces_of_pack(pack))
    script = None
    if args.scenario:
        script = load_scenario_file(Path(args.scenario))
    config = FootageConfig(game=args.game, players=args.players, seed=args.seed, moves=args.moves,
                           fps=args.fps, size=args.size, effects=args.effects, drift=not args.still_camera,
                           video=not args.frames, compress_truth=args.gzip, script=script)
    truth = make_footage(config, lib, out, art=(pack.name,), progress=not args.quiet)
    if args.h264 is not None and not args.frames:
        transcode_h264(out / "clip.mp4", crf=args.h264)
    media = "clip.mp4" if not args.frames else "frames/"
    truth_name = "truth.json.gz" if args.gzip else "truth.json"
    print(f"wrote {len(truth.frames)} frames ({len(truth.frames) / args.fps:.1f} s, {len(truth.moves)} moves) "
          f"to {out}: {media}, {truth_name}")
    return 0


def bench_command(args: argparse.Namespace) -> int:
    figures = bench_footage(frames=args.frames, size=args.size, seed=args.seed, jpeg=args.jpeg,
                            drift=not args.no_drift)
    machine = {"python": platform.python_version(), "cpus": os.cpu_count(), "platform": platform.platform()}
    print(json.dumps({"benchmark": "synth footage frames", **asdict(figures), "machine": machine}, indent=1))
    return 0


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        "synth",
        help="synthetic table scenes with exact truth (training data, evaluation clips)",
        description="Render synthetic webcam views of a card table with exact ground truth.",
    )
    ssub = parser.add_subparsers(dest="synth_command", metavar="WHAT", required=True)

    scenes = ssub.add_parser(
        "scenes",
        help="random still scenes: JPEGs + COCO annotations + truth file",
        description="Writes DIR/images/NNNNNN.jpg, DIR/annotations.coco.json (category 'card', "
        "quad segmentation, corner keypoints) and DIR/truth.json (datasets/truth/README.md).",
    )
    scenes.add_argument("--game", required=True, choices=GAMES)
    scenes.add_argument("--art", required=True, metavar="PACK|proxy",
                        help="an art pack folder for the game, or 'proxy' for the built-in proxy art")
    scenes.add_argument("--count", type=int, required=True, metavar="N")
    scenes.add_argument("--out", required=True, metavar="DIR")
    scenes.add_argument("--mixed", action="store_true",
                        help="mix in every other game's proxy art and random card designs")
    scenes.add_argument("--seed", type=int, default=0)
    scenes.add_argument("--size", type=_size, default=(1280, 720), metavar="WxH")
    scenes.add_argument("--effects", type=float, default=1.0,
                        help="strength of camera effects, 0 (clean) to 1 (default)")
    scenes.add_argument("--designs", type=int, default=120,
                        help="random designs added with --mixed (default 120)")
    scenes.add_argument("--force", action="store_true", help="write into a non-empty folder")
    scenes.add_argument("--quiet", action="store_true", help="no progress bar")
    scenes.set_defaults(func=scenes_command)

    footage = ssub.add_parser(
        "footage",
        help="a simulated game played by hands on a rendered table: MP4 (or frames) + truth",
        description="Simulates a random legal game and animates it at --fps: a hand reaches in, picks "
        "a card, carries it, puts it down and leaves. Writes DIR/clip.mp4 (or DIR/frames/) and "
        "DIR/truth.json with per-frame cards, checkpoints after every move, the moves and the final state.",
    )
    footage.add_argument("--game", required=True, choices=GAMES)
    footage.add_argument("--players", type=int, required=True)
    footage.add_argument("--seed", type=int, default=0)
    footage.add_argument("--out", required=True, metavar="DIR")
    footage.add_argument("--art", default="proxy", metavar="PACK|proxy")
    footage.add_argument("--moves", type=int, default=None, help="only the first N moves (default: all)")
    footage.add_argument("--scenario", metavar="FILE",
                         help="film this scenario file (docs/scenarios.md) instead of a simulated game")
    footage.add_argument("--gzip", action="store_true", help="write truth.json.gz (a fraction of the size)")
    footage.add_argument("--h264", type=int, metavar="CRF", default=None,
                         help="re-encode the clip as H.264 at this quality (18 best .. 35 smallest); "
                         "needs the `media` extra (imageio-ffmpeg), used for the bundled clips")
    footage.add_argument("--fps", type=float, default=30.0)
    footage.add_argument("--size", type=_size, default=(1280, 720), metavar="WxH")
    footage.add_argument("--effects", type=float, default=1.0)
    footage.add_argument("--frames", action="store_true", help="write a JPEG frame folder, not an MP4")
    footage.add_argument("--still-camera", action="store_true", help="no camera drift")
    footage.add_argument("--force", action="store_true", help="write into a non-empty folder")
    footage.add_argument("--quiet", action="store_true", help="no progress bar")
    footage.set_defaults(func=footage_command)

    add_bench_arguments(ssub.add_parser("bench", help="frames per second rendering footage frames"))


def add_bench_arguments(bench: argparse.ArgumentParser) -> None:
    """The footage-frame benchmark's options (also `cardtrack bench synth`)."""
    bench.add_argument("--frames", type=int, default=120)
    bench.add_argument("--size", type=_size, default=(1280, 720), metavar="WxH")
    bench.add_argument("--seed", type=int, default=0)
    bench.add_argument("--jpeg", action="store_true", help="include a JPEG re-encode per frame")
    bench.add_argument("--no-drift", action="store_true", help="keep the camera perfectly still")
    bench.set_defaults(func=bench_command)
