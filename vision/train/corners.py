"""Training of the corner refiner: data from rendered scenes, the torch network, export to ONNX.

Data: full-resolution scenes (1280×720) from the still renderer (every game's proxy art mixed
with random card designs, hands, clutter, camera effects) and, optionally, frames of rendered
footage clips (a truth file beside each). For every card at least `CUT_VISIBLE` visible the
shard keeps a patch of the frame around it, the true corners (of the whole card, hidden ones
included), how much of it shows, and the corners the shipped finder gives for it (when it
finds it), so training sees the finder's real mistakes; training takes the cards at least
`CornerTrainConfig.min_visible` visible. A
training sample takes a coarse quad — the finder's own (jittered a little), or the truth moved,
turned, scaled and bent by an error drawn from 1 % to 30 % of the card's width — warps the
patch onto the canvas of `vision.corners` (the same function inference uses) and asks for the
true corners there, in the coarse quad's canonical order. The network is a small encoder–
decoder with one heatmap per corner at a quarter of the canvas resolution and a soft arg-max, trained
with L1 on the positions. Shards are cached under the system temp folder; training is seeded,
resumable from its checkpoint and ends with an ONNX export checked against torch. torch is
imported here only.
"""

from __future__ import annotations

import json
import math
import pickle
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np
from tqdm import tqdm

from vision.corners import (
    CANVAS_HEIGHT,
    CANVAS_WIDTH,
    INNER,
    canvas_transform,
    map_points,
    warp_to_canvas,
)
from vision.finder import canonical_order
from vision.train.common import (
    TrainResult,
    cosine_lr,
    load_checkpoint,
    require_torch,
    save_checkpoint,
)

RENDER_SIZE = (1280, 720)
SHARD_SIZE = 40
CUT_VISIBLE = 0.2  # cards less visible than this are not cut into shards
MIN_VISIBLE = 0.5  # the shipped model's `CornerTrainConfig.min_visible`
FOUND_IOU = 0.3  # a found quad stands for the card it overlaps best when at least this much
PATCH_MARGIN = 0.9  # patch = card bounding box grown by this many card widths on every side
GAMES = ("minecraft-card-game", "minecraft-explorers", "minecraft-mk1", "angry-birds-power-cards")
HEAT_STRIDE = 4


class CornerTrainError(ValueError):
    """Bad training input (a shard, a checkpoint, a folder); the message says what to do."""


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class CardPatch:
    """One card: a patch of its frame, the patch's origin in the frame, the true corners (own
    order, frame pixels), the finder's corners for it (canonical order) or None, and the share
    of the card that shows."""

    patch: np.ndarray
    origin: tuple[int, int]
    truth: np.ndarray
    found: np.ndarray | None
    visible: float


def _card_width(quad: np.ndarray) -> float:
    edges = np.linalg.norm(quad - np.roll(quad, -1, axis=0), axis=1)
    return float(min(edges[0] + edges[2], edges[1] + edges[3]) / 2)


def cut_patches(image: np.ndarray, quads: np.ndarray, visible: np.ndarray,
                found: np.ndarray) -> list[CardPatch]:
    """The patches of one frame's cards (those at least CUT_VISIBLE visible), each paired with
    the found quad it owns, if any (`match_found`)."""
    h, w = image.shape[:2]
    owner = match_found(found, quads, visible)
    out = []
    for j, (q, v) in enumerate(zip(quads, visible, strict=True)):
        if v < CUT_VISIBLE:
            continue
        width = _card_width(q)
        if width < 8:
            continue
        pad = PATCH_MARGIN * width
        x0, y0 = (np.floor(q.min(axis=0) - pad)).astype(int)
        x1, y1 = (np.ceil(q.max(axis=0) + pad)).astype(int)
        x0, y0, x1, y1 = max(0, x0), max(0, y0), min(w, x1), min(h, y1)
        if x1 - x0 < 8 or y1 - y0 < 8:
            continue
        f = found[owner[j]].astype(np.float32) if owner[j] >= 0 else None
        out.append(CardPatch(patch=np.ascontiguousarray(image[y0:y1, x0:x1]), origin=(int(x0), int(y0)),
                             truth=np.asarray(q, np.float32), found=f, visible=float(v)))
    return out


def match_found(found: np.ndarray, quads: np.ndarray, visible: np.ndarray) -> np.ndarray:
    """For each true card, the index of the found quad standing for it, or -1: the cards, most
    visible first, each take the free quad that overlaps them best, if by at least `FOUND_IOU`.
    In a fan or a pile the quad found for the top card overlaps the cards under it as well;
    taken by the top card first, it is never taught as an outline of a card under it."""
    from vision.detections import iou_matrix

    owner = np.full(len(quads), -1, int)
    if not len(found) or not len(quads):
        return owner
    iou = iou_matrix(found, quads)
    free = np.ones(len(found), bool)
    for j in np.argsort(-np.asarray(visible), kind="stable"):
        col = np.where(free, iou[:, j], -1.0)
        i = int(col.argmax())
        if col[i] >= FOUND_IOU:
            owner[j], free[i] = i, False
    return owner


def render_shard(out_dir: Path, *, seed: int, shard: int, finder_model: Path,
                 count: int = SHARD_SIZE, designs: int = 200, full_bleed: bool = False) -> Path:
    """Render stills `shard*count …` of data seed `seed` at 1280×720, run the finder on each and
    keep every card's patch in `out_dir/shard-XXXXX.pkl`; with `full_bleed` the shard's random
    designs print their pictures to the edge (`vision.synth.designs`), its stills are others
    and it is kept in `out_dir/bleed-XXXXX.pkl`."""
    from vision.finder import Finder, FinderConfig, Refine
    from vision.synth.library import build_library
    from vision.synth.render import SceneRenderer
    from vision.synth.stills import StillsConfig, random_still

    path = out_dir / f"{'bleed' if full_bleed else 'shard'}-{shard:05d}.pkl"
    if path.is_file():
        return path
    game = GAMES[shard % len(GAMES)]
    lib, deck = build_library(game, "proxy", mixed=True, seed=seed * 1000 + shard, designs=designs,
                              full_bleed=full_bleed)
    config = StillsConfig(count=count, seed=seed, size=RENDER_SIZE)
    renderer = SceneRenderer(lib, noise_seed=seed * 1000 + shard)
    finder = Finder(finder_model, threads=1, config=FinderConfig(refine=Refine.NONE), corner_model=None)
    patches: list[CardPatch] = []
    for k in range(count):
        i = shard * count + k
        rng = np.random.default_rng([seed, i, 0xB1EED] if full_bleed else [seed, i])
        still = random_still(rng, lib, deck, config)
        result = renderer.render(still.scene, still.camera, still.style, seed=(seed, i, 1))
        quads = np.array([c.corners for c in result.cards], np.float32).reshape(-1, 4, 2)
        vis = np.array([c.visible for c in result.cards], np.float32)
        patches += cut_patches(result.image, quads, vis, finder.find_one(result.image).corners)
    return _write(out_dir, path, patches)


def footage_shard(out_dir: Path, clip_dir: Path, *, finder_model: Path, every: int = 4) -> Path:
    """Every `every`-th frame of a rendered clip (`clip.mp4` or `frames/` + its truth file) cut into
    card patches in `out_dir/clip-<name>.pkl`."""
    from vision.capture import open_source
    from vision.finder import Finder, FinderConfig, Refine
    from vision.synth.truth import load_truth

    path = out_dir / f"clip-{clip_dir.name}.pkl"
    if path.is_file():
        return path
    truth_path = next((clip_dir / n for n in ("truth.json.gz", "truth.json") if (clip_dir / n).is_file()), None)
    if truth_path is None:
        raise CornerTrainError(f"{clip_dir}: no truth.json(.gz) here; render footage with `cardtrack synth footage`")
    truth = load_truth(truth_path)
    media = clip_dir / "clip.mp4" if (clip_dir / "clip.mp4").is_file() else clip_dir / "frames"
    frames = {f.index: f for f in truth.frames}
    finder = Finder(finder_model, threads=1, config=FinderConfig(refine=Refine.NONE), corner_model=None)
    patches: list[CardPatch] = []
    with open_source(media) as source:
        for frame in source:
            if frame.index % every or frame.index not in frames:
                continue
            cards = frames[frame.index].cards
            quads = np.array([c.corners for c in cards], np.float32).reshape(-1, 4, 2)
            vis = np.array([c.visible for c in cards], np.float32)
            patches += cut_patches(frame.image, quads, vis, finder.find_one(frame.image).corners)
    return _write(out_dir, path, patches)


def _write(out_dir: Path, path: Path, patches: list[CardPatch]) -> Path:
    out_dir.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    with tmp.open("wb") as f:
        pickle.dump([(p.patch, p.origin, p.truth, p.found, p.visible) for p in patches], f, protocol=5)
    tmp.replace(path)
    return path


def load_shard(path: Path) -> list[CardPatch]:
    """The card patches of one shard file (written by this module only)."""
    try:
        with path.open("rb") as f:
            rows = pickle.load(f)
        return [CardPatch(patch=p, origin=tuple(o), truth=t, found=f, visible=float(v)) for p, o, t, f, v in rows]
    except (OSError, pickle.UnpicklingError, ValueError, TypeError, EOFError) as exc:
        raise CornerTrainError(f"{path}: not a corner data shard of this version ({exc}); delete it to "
                               "re-render") from None


# --- samples ---------------------------------------------------------------------------------


def coarse_quad(card: CardPatch, rng: np.random.Generator) -> np.ndarray:
    """A coarse quad for a card as the finder could have given it (frame pixels, canonical)."""
    width = _card_width(card.truth)
    if card.found is not None and rng.random() < 0.5:
        q = card.found + rng.normal(0.0, 0.01 * width, (4, 2))
    else:
        err = math.exp(rng.uniform(math.log(0.01), math.log(0.3))) * width
        centre = card.truth.mean(axis=0)
        angle = rng.normal(0.0, err / width * 0.5)
        scale = 1.0 + rng.normal(0.0, err / width * 0.5)
        c, s = math.cos(angle), math.sin(angle)
        rot = np.array([[c, -s], [s, c]])
        q = (card.truth - centre) @ rot.T * scale + centre + rng.normal(0.0, err * 0.6, 2)
        q = q + rng.normal(0.0, err * 0.4, (4, 2))
    return canonical_order(q[None])[0]


def aligned_truth(truth: np.ndarray, coarse: np.ndarray) -> np.ndarray:
    """The true corners in the cyclic order closest to the coarse quad's."""
    options = [np.roll(truth, k, axis=0) for k in range(4)]
    return min(options, key=lambda t: float(np.linalg.norm(t - coarse, axis=1).sum()))


def make_sample(card: CardPatch, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """(canvas BGR uint8, true corners on the canvas (4, 2)) for one card."""
    origin = np.asarray(card.origin, np.float64)
    coarse = coarse_quad(card, rng) - origin
    transform = canvas_transform(coarse)
    canvas = warp_to_canvas(card.patch, transform)
    target = map_points(aligned_truth(card.truth - origin, coarse), transform)
    return canvas, target.astype(np.float32)


def photometric(canvas: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    img = canvas.astype(np.float32)
    img = img * rng.uniform(0.7, 1.3) + rng.uniform(-25, 25)
    img = img * rng.uniform(0.9, 1.1, 3)
    if rng.random() < 0.3:
        img = cv2.GaussianBlur(img, (0, 0), rng.uniform(0.3, 1.2))
    if rng.random() < 0.5:
        img = img + rng.normal(0.0, rng.uniform(1, 8), img.shape)
    if rng.random() < 0.1:
        img[...] = img.mean(axis=2, keepdims=True)
    return np.clip(img, 0, 255).astype(np.uint8)


def batches(cards: Sequence[CardPatch], batch: int, seed: int) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """Endless training batches: inputs (n, 3, H, W) in [0, 1] and targets (n, 4, 2)."""
    from vision.corners import to_input

    rng = np.random.default_rng(seed)
    while True:
        idx = rng.integers(0, len(cards), batch)
        pairs = [make_sample(cards[i], rng) for i in idx]
        canvases = np.stack([photometric(c, rng) for c, _ in pairs])
        yield to_input(canvases), np.stack([t for _, t in pairs])


# --- network ---------------------------------------------------------------------------------


def _torch():  # type: ignore[no-untyped-def]
    return require_torch(CornerTrainError, "the corner refiner")


def build_net():  # type: ignore[no-untyped-def]
    """Input (N, 3, 120, 96) in [0, 1] → corners (N, 4, 2) in canvas pixels: an encoder to
    stride 8 (a single stride-2 stem convolution: the canvas already enlarges most cards, so
    little is to be had at full resolution), a top-down step back to stride 4, four heatmaps and
    a soft arg-max (sub-pixel from a coarse grid). About 35 M multiply-adds per card and pass,
    half those of the network before it (`git show b281704:vision/train/corners.py`), whose
    shipped model cut worse than this one's (models/corners.md)."""
    torch = _torch()
    nn = torch.nn

    def cbr(cin: int, cout: int, s: int = 1, k: int = 3):  # type: ignore[no-untyped-def]
        return nn.Sequential(nn.Conv2d(cin, cout, k, s, k // 2, bias=False), nn.BatchNorm2d(cout),
                             nn.ReLU(inplace=True))

    hh, hw = CANVAS_HEIGHT // HEAT_STRIDE, CANVAS_WIDTH // HEAT_STRIDE
    ys = torch.arange(hh, dtype=torch.float32) * HEAT_STRIDE + (HEAT_STRIDE - 1) / 2
    xs = torch.arange(hw, dtype=torch.float32) * HEAT_STRIDE + (HEAT_STRIDE - 1) / 2
    grid_y = ys.view(1, 1, hh, 1).expand(1, 1, hh, hw).reshape(1, 1, hh * hw)
    grid_x = xs.view(1, 1, 1, hw).expand(1, 1, hh, hw).reshape(1, 1, hh * hw)

    class Net(nn.Module):  # type: ignore[misc]
        def __init__(self) -> None:
            nn.Module.__init__(self)
            self.s2 = cbr(3, 16, 2)                                               # 60×48
            self.s4 = nn.Sequential(cbr(16, 32, 2), cbr(32, 32))                  # 30×24
            self.s8 = nn.Sequential(cbr(32, 64, 2), cbr(64, 64), cbr(64, 64))     # 15×12
            self.lat = cbr(64, 32, 1, 1)
            self.up = nn.Upsample(scale_factor=2, mode="bilinear", align_corners=False)
            self.fuse = cbr(32, 32)
            self.head = nn.Conv2d(32, 4, 1)
            self.register_buffer("gx", grid_x)
            self.register_buffer("gy", grid_y)

        def forward(self, x):  # type: ignore[no-untyped-def]
            x = (x - 0.45) / 0.25
            f4 = self.s4(self.s2(x))
            f8 = self.s8(f4)
            p4 = self.fuse(f4 + self.up(self.lat(f8)))
            prob = torch.softmax(self.head(p4).flatten(2), dim=2)  # (N, 4, hh*hw)
            cx = (prob * self.gx).sum(dim=2)
            cy = (prob * self.gy).sum(dim=2)
            return torch.stack([cx, cy], dim=2)

    return Net()


# --- training --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class CornerTrainConfig:
    """Corner refiner training options (defaults: the shipped model)."""

    steps: int = 4000
    batch: int = 32
    lr: float = 2e-3
    weight_decay: float = 1e-4
    threads: int = 2
    checkpoint_every: int = 100
    max_minutes: float = 30.0
    min_visible: float = MIN_VISIBLE

    def __post_init__(self) -> None:
        if not CUT_VISIBLE <= self.min_visible <= 1.0:
            raise CornerTrainError(f"min_visible {self.min_visible}: the data shards keep no card less than "
                                   f"{CUT_VISIBLE} visible; give {CUT_VISIBLE} to 1")


def load_cards(data_dir: Path, *, min_visible: float = CUT_VISIBLE) -> list[CardPatch]:
    """The card patches of every shard in `data_dir`, those at least `min_visible` visible."""
    paths = sorted(data_dir.glob("*.pkl"))
    if not paths:
        raise CornerTrainError(f"{data_dir}: no corner data shards; render some first (`cardtrack train corners`)")
    cards: list[CardPatch] = []
    for p in paths:
        cards += [c for c in load_shard(p) if c.visible >= min_visible]
    if not cards:
        raise CornerTrainError(f"{data_dir}: no card in its shards is at least {min_visible:.0%} visible; "
                               "lower the visibility floor or render more shards")
    return cards


def train_corners(out: Path, *, data_dir: Path, work_dir: Path, seed: int = 0,
                  config: CornerTrainConfig | None = None, resume: bool = True,
                  progress: bool = True) -> TrainResult:
    """Train on the shards in `data_dir`, checkpointing into `work_dir`, then export to `out`.
    Stops after `config.steps` steps or `config.max_minutes`, whichever first (both count the
    whole run, resumed sessions included)."""
    torch = _torch()
    config = config or CornerTrainConfig()
    torch.set_num_threads(config.threads)
    torch.manual_seed(seed)
    work_dir.mkdir(parents=True, exist_ok=True)
    cards = load_cards(data_dir, min_visible=config.min_visible)
    net = build_net()
    opt = torch.optim.AdamW(net.parameters(), lr=config.lr, weight_decay=config.weight_decay)
    ckpt = work_dir / "checkpoint.pt"
    log_path = work_dir / "train.jsonl"
    step, elapsed = load_checkpoint(torch, ckpt, net, opt, CornerTrainError) if resume else (0, 0.0)
    stream = batches(cards, config.batch, seed * 7919 + step)
    start = time.perf_counter() - elapsed

    def lr_at(s: int) -> float:
        return cosine_lr(config.lr, s, config.steps, time.perf_counter() - start, config.max_minutes)

    net.train()
    bar = tqdm(total=config.steps, initial=step, desc="train corners", unit="step", disable=not progress,
               mininterval=10.0)
    loss_avg = float("nan")
    with log_path.open("a", encoding="utf-8") as log:
        while step < config.steps and (time.perf_counter() - start) < config.max_minutes * 60:
            x, target = (torch.from_numpy(a) for a in next(stream))
            for g in opt.param_groups:
                g["lr"] = lr_at(step)
            pred = net(x)
            loss = torch.nn.functional.smooth_l1_loss(pred, target, beta=1.0)
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(net.parameters(), 5.0)
            opt.step()
            step += 1
            v = loss.item()
            loss_avg = v if math.isnan(loss_avg) else 0.98 * loss_avg + 0.02 * v
            bar.update(1)
            bar.set_postfix(loss=f"{loss_avg:.3f}")
            if step % 20 == 0:
                err = float((pred.detach() - target).norm(dim=2).median())
                log.write(json.dumps({"step": step, "loss": round(v, 4), "median_px": round(err, 3),
                                      "lr": lr_at(step), "seconds": round(time.perf_counter() - start, 1)}) + "\n")
                log.flush()
            if step % config.checkpoint_every == 0 or step == config.steps:
                save_checkpoint(torch, ckpt, net, opt, step, time.perf_counter() - start)
    bar.close()
    seconds = time.perf_counter() - start
    save_checkpoint(torch, ckpt, net, opt, step, seconds)
    diff = export_onnx(net, out)
    params = sum(p.numel() for p in net.parameters())
    return TrainResult(out=out, steps=step, seconds=seconds, parameters=int(params), final_loss=loss_avg,
                       export_max_diff=diff, cards=len(cards), log=log_path)


def export_onnx(net, out: Path, *, check_batch: int = 3) -> float:  # type: ignore[no-untyped-def]
    """Export `net` to `out` (opset 17, dynamic batch); returns the largest onnxruntime vs torch
    difference on random input (raises above 1e-3 canvas pixels)."""
    torch = _torch()
    import onnx
    import onnxruntime as ort

    net.eval()
    out.parent.mkdir(parents=True, exist_ok=True)
    x = torch.rand(check_batch, 3, CANVAS_HEIGHT, CANVAS_WIDTH, generator=torch.Generator().manual_seed(0))
    tmp = out.with_suffix(".tmp.onnx")
    torch.onnx.export(net, (x,), str(tmp), input_names=["canvas"], output_names=["corners"],
                      dynamic_axes={"canvas": {0: "batch"}, "corners": {0: "batch"}},
                      opset_version=17, dynamo=False)
    model = onnx.load(str(tmp))
    meta = {"cardtrack.model": "corners", "canvas_size": f"{CANVAS_WIDTH}x{CANVAS_HEIGHT}",
            "inner": json.dumps(INNER.tolist())}
    for k, v in meta.items():
        entry = model.metadata_props.add()
        entry.key, entry.value = k, v
    onnx.save(model, str(tmp))
    with torch.no_grad():
        ref = net(x).numpy()
    got = ort.InferenceSession(str(tmp), providers=["CPUExecutionProvider"]).run(None, {"canvas": x.numpy()})[0]
    diff = float(np.abs(ref - got).max())
    if diff > 1e-3:
        raise CornerTrainError(f"{tmp}: onnxruntime differs from torch by {diff:.2e} (> 1e-3)")
    tmp.replace(out)
    return diff


def render_shards(data_dir: Path, *, seed: int, shards: Sequence[int], finder_model: Path,
                  progress: bool = True, full_bleed: bool = False) -> list[Path]:
    """Render the listed still shards (skipping those already there) with a progress bar."""
    return [render_shard(data_dir, seed=seed, shard=k, finder_model=finder_model, full_bleed=full_bleed)
            for k in tqdm(list(shards), desc="corner data", unit="shard", disable=not progress, mininterval=5.0)]
