"""Training of the card finder: synthetic data, the torch network, losses, export to ONNX.

Scenes come from the still renderer (`vision.synth.stills`) with every game's proxy art and
random card designs mixed, hands, clutter and all camera effects, and from shots of games in
play (`vision.synth.footage.game_stills`: footage layouts, many small cards); they are rendered
at (or shrunk to) 640×360 (the size a 1280×720 frame has in the finder's letterbox) and cached
as compressed `.npz` shards in a work folder under the system temp folder, so generation can run beside training
and a resumed run reuses them. The network (`FinderNet`) is a small CenterNet: a
depthwise-separable backbone down to stride 32, a top-down path back to stride 8, and a head
with a card-centre heatmap (focal loss on Gaussian targets) and eight corner offsets from the
centre (L1, taken as the smallest over the four cyclic corner orders, so the network never has
to guess which end of a face-down card is its top; `vision.finder` puts the decoded corners in
a canonical order). Training is resumable from its checkpoint and ends by exporting an ONNX
model (opset 17, dynamic batch, free height and width) checked against torch. torch is imported here only.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import cv2
import numpy as np
from tqdm import tqdm

from vision.letterbox import INPUT_HEIGHT, INPUT_WIDTH, STRIDE, letterbox_params, to_letterbox
from vision.train.common import (
    TrainResult,
    cosine_lr,
    load_checkpoint,
    require_torch,
    save_checkpoint,
)

if TYPE_CHECKING:
    from vision.synth.truth import CardTruth, Quad

RENDER_SIZE = (640, 360)
SHARD_SIZE = 25
GAMES = ("minecraft-card-game", "minecraft-explorers", "minecraft-mk1", "angry-birds-power-cards")
POSITIVE_VISIBLE = 0.3  # cards at least this visible are targets
IGNORE_VISIBLE = 0.04  # cards between this and POSITIVE_VISIBLE neither count for nor against
OFFSET_SCALE = 32.0  # corner offsets are regressed in units of this many input pixels


class FinderTrainError(ValueError):
    """Bad training input (a shard, a checkpoint, a folder); the message says what to do."""


# --- data ------------------------------------------------------------------------------------


def render_shard(out_dir: Path, *, seed: int, shard: int, count: int = SHARD_SIZE,
                 designs: int = 200, tables: bool = False) -> Path:
    """Render scenes `shard*count …` of data seed `seed` into `out_dir/shard-XXXXX.npz`.

    Stills (the default): the base deck rotates through the four games; every other game's
    proxy art and `designs` random designs (family `seed*1000 + shard`) are mixed in. With
    `tables`, into `out_dir/tables-XXXXX.npz`: shots of games in play laid out as footage lays
    them (`vision.synth.footage.game_stills`, the game rotating with the shard), rendered at
    1280×720 and shrunk as the letterbox shrinks a webcam frame."""
    path = out_dir / f"{'tables' if tables else 'shard'}-{shard:05d}.npz"
    if path.is_file():
        return path
    game = GAMES[shard % len(GAMES)]
    images, quads, visible, counts = [], [], [], []
    shots = (_table_shots(game, seed=seed, shard=shard, count=count) if tables
             else _stills(game, seed=seed, shard=shard, count=count, designs=designs))
    for image, cards in shots:
        cards = [c for c in cards if c.visible >= IGNORE_VISIBLE]
        images.append(image)
        quads += [np.asarray(c.corners, np.float32) for c in cards]
        visible += [c.visible for c in cards]
        counts.append(len(cards))
    out_dir.mkdir(parents=True, exist_ok=True)
    tmp = out_dir / f".{path.stem}.tmp.npz"
    np.savez_compressed(tmp, images=np.stack(images), quads=np.asarray(quads, np.float32).reshape(-1, 4, 2),
                        visible=np.asarray(visible, np.float32), counts=np.asarray(counts, np.int32))
    tmp.replace(path)
    return path


def _stills(game: str, *, seed: int, shard: int, count: int, designs: int,
            ) -> Iterator[tuple[np.ndarray, Sequence[CardTruth]]]:
    from vision.synth.library import build_library
    from vision.synth.render import SceneRenderer
    from vision.synth.stills import StillsConfig, random_still

    lib, deck = build_library(game, "proxy", mixed=True, seed=seed * 1000 + shard, designs=designs)
    config = StillsConfig(count=count, seed=seed, size=RENDER_SIZE)
    renderer = SceneRenderer(lib, noise_seed=seed * 1000 + shard)
    for k in range(count):
        i = shard * count + k
        still = random_still(np.random.default_rng([seed, i]), lib, deck, config)
        result = renderer.render(still.scene, still.camera, still.style, seed=(seed, i, 1))
        yield result.image, result.cards


def _game_shots(game: str, *, count: int, size: tuple[int, int], seed: int, render_seed: tuple[int, ...],
                ) -> Iterator[tuple[np.ndarray, Sequence[CardTruth]]]:
    """`count` rendered shots of games of `game` in play (`vision.train.scenes.game_shots`, proxy
    art) at `size`; shot k is rendered with seed `(*render_seed, k)`."""
    from vision.synth.library import build_library
    from vision.train.scenes import game_shots

    lib, _ = build_library(game, "proxy")
    yield from game_shots(game, lib, seed=seed, count=count, render_seed=render_seed, size=size)


def _table_shots(game: str, *, seed: int, shard: int, count: int) -> Iterator[tuple[np.ndarray, Sequence[CardTruth]]]:
    """A training shard's game shots: rendered at 1280×720, shrunk as the letterbox shrinks it."""
    frame = (2 * RENDER_SIZE[0], 2 * RENDER_SIZE[1])
    for image, cards in _game_shots(game, count=count, size=frame, seed=seed * 1000 + shard,
                                    render_seed=(seed, shard)):
        yield (cv2.resize(image, RENDER_SIZE, interpolation=cv2.INTER_AREA),
               [replace(c, corners=_halved(c.corners)) for c in cards])


def _halved(q: Quad) -> Quad:
    a, b, c, d = q
    return ((a[0] / 2, a[1] / 2), (b[0] / 2, b[1] / 2), (c[0] / 2, c[1] / 2), (d[0] / 2, d[1] / 2))


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class Sample:
    """One rendered scene: the image and its cards' corners (own order) and visible fractions."""

    image: np.ndarray
    quads: np.ndarray
    visible: np.ndarray


def load_shard(path: Path) -> list[Sample]:
    """The samples of one shard file."""
    try:
        with np.load(path) as data:
            images, quads, visible, counts = (data["images"], data["quads"], data["visible"],
                                              data["counts"])
    except (OSError, KeyError, ValueError) as exc:
        raise FinderTrainError(f"{path}: not a finder data shard ({exc}); delete it to re-render") from None
    out, start = [], 0
    for img, n in zip(images, counts, strict=True):
        out.append(Sample(image=img, quads=quads[start:start + n], visible=visible[start:start + n]))
        start += int(n)
    return out


def shard_paths(data_dir: Path) -> list[Path]:
    """The stills and table-shot shards in a folder."""
    return sorted([*data_dir.glob("shard-*.npz"), *data_dir.glob("tables-*.npz")])


# --- targets ---------------------------------------------------------------------------------


def _augment(sample: Sample, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Random scale, shift, flips and colour of a scene, placed in the finder's input size."""
    img = sample.image
    h, w = img.shape[:2]
    scale = float(np.exp(rng.uniform(math.log(0.7), math.log(1.5))))
    base = min(INPUT_WIDTH / w, INPUT_HEIGHT / h)
    s = base * scale
    nw, nh = w * s, h * s
    tx = float(rng.uniform(min(0.0, INPUT_WIDTH - nw), max(0.0, INPUT_WIDTH - nw)))
    ty = float(rng.uniform(min(0.0, INPUT_HEIGHT - nh), max(0.0, INPUT_HEIGHT - nh)))
    if rng.random() < 0.5:  # most frames are letterboxed exactly like inference
        tx, ty, s = 0.0, (INPUT_HEIGHT - h * base) / 2.0, base
    m = np.array([[s, 0.0, tx], [0.0, s, ty]], np.float32)
    out = cv2.warpAffine(img, m, (INPUT_WIDTH, INPUT_HEIGHT), flags=cv2.INTER_LINEAR,
                         borderMode=cv2.BORDER_CONSTANT, borderValue=(114, 114, 114))
    quads = sample.quads * s + np.array([tx, ty], np.float32)
    if rng.random() < 0.5:
        out = out[:, ::-1]
        quads = quads.copy()
        quads[..., 0] = INPUT_WIDTH - quads[..., 0]
        quads = quads[:, ::-1]  # a mirror reverses the winding: keep corners clockwise
    if rng.random() < 0.3:
        out = out[::-1]
        quads = quads.copy()
        quads[..., 1] = INPUT_HEIGHT - quads[..., 1]
        quads = quads[:, ::-1]
    out = np.ascontiguousarray(out).astype(np.float32)
    out = out * float(rng.uniform(0.75, 1.25)) + float(rng.uniform(-20, 20))
    out += rng.uniform(-12, 12, size=3).astype(np.float32)
    if rng.random() < 0.2:
        out = out.mean(axis=2, keepdims=True).repeat(3, axis=2)
    return np.clip(out, 0, 255).astype(np.uint8), quads.astype(np.float32), sample.visible


def make_targets(quads: np.ndarray, visible: np.ndarray, size: tuple[int, int] = (INPUT_WIDTH, INPUT_HEIGHT),
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Heatmap (1, H, W), ignore weight (1, H, W), offsets (8, H, W) and their mask (1, H, W).

    A card at least `POSITIVE_VISIBLE` visible puts a Gaussian at its centre (sigma a sixth of
    its shorter side, in output cells) and its four corner offsets at the centre cell and its
    neighbours; a barely visible one only zeroes the heatmap loss around its centre."""
    gh, gw = size[1] // STRIDE, size[0] // STRIDE
    heat = np.zeros((gh, gw), np.float32)
    weight = np.ones((gh, gw), np.float32)
    offs = np.zeros((8, gh, gw), np.float32)
    omask = np.zeros((gh, gw), np.float32)
    best = np.zeros((gh, gw), np.float32)
    ys, xs = np.mgrid[0:gh, 0:gw].astype(np.float32)
    for q, v in zip(quads, visible, strict=True):
        c = q.mean(axis=0) / STRIDE
        cx, cy = float(c[0]), float(c[1])
        if not (0 <= cx < gw and 0 <= cy < gh):
            continue
        sides = np.linalg.norm(q - np.roll(q, -1, axis=0), axis=1) / STRIDE
        sigma = max(0.7, float(sides.min()) / 6.0)
        ix, iy = int(cx), int(cy)  # the peak sits on the centre's cell
        g = np.exp(-((xs - ix) ** 2 + (ys - iy) ** 2) / (2 * sigma * sigma))
        if v < POSITIVE_VISIBLE:
            weight[g > 0.05] = 0.0
            continue
        heat = np.maximum(heat, g)
        for dy in (-1, 0, 1):
            for dx in (-1, 0, 1):
                x, y = ix + dx, iy + dy
                if 0 <= x < gw and 0 <= y < gh and g[y, x] > best[y, x]:
                    best[y, x] = g[y, x]
                    centre = np.array([(x + 0.5) * STRIDE, (y + 0.5) * STRIDE], np.float32)
                    offs[:, y, x] = ((q - centre) / OFFSET_SCALE).reshape(8)
                    omask[y, x] = 1.0 if (dx, dy) == (0, 0) else 0.5
        weight[iy, ix] = 1.0
    return heat[None], weight[None], offs, omask[None]


class ShardStream:
    """Endless augmented batches from the shards in a folder (re-scanned every pass, so shards
    rendered during training join in). Keeps up to `cache_shards` shards decoded in memory."""

    def __init__(self, data_dir: Path, *, seed: int, cache_shards: int = 400) -> None:
        self.data_dir = data_dir
        self.rng = np.random.default_rng(seed)
        self.cache: dict[Path, list[Sample]] = {}
        self.cache_shards = cache_shards

    def _samples(self) -> list[Sample]:
        paths = shard_paths(self.data_dir)
        if not paths:
            raise FinderTrainError(f"{self.data_dir}: no data shards; render some first")
        for p in paths:
            if p not in self.cache and len(self.cache) < self.cache_shards:
                self.cache[p] = load_shard(p)
        return [s for p in paths if p in self.cache for s in self.cache[p]]

    def batches(self, batch: int, crop: tuple[int, int] = (INPUT_WIDTH, INPUT_HEIGHT),
                ) -> Iterator[tuple[np.ndarray, ...]]:
        """Endless (input, heatmap, heat weight, offsets, offset mask) batches of `crop`-sized
        windows (whole stride cells) cut from augmented letterboxed scenes."""
        cw, ch = crop
        while True:
            samples = self._samples()
            order = self.rng.permutation(len(samples))
            for start in range(0, len(order) - batch + 1, batch):
                xs, targets = [], []
                for j in order[start:start + batch]:
                    img, q, v = _augment(samples[int(j)], self.rng)
                    x0 = STRIDE * int(self.rng.integers(0, (INPUT_WIDTH - cw) // STRIDE + 1))
                    y0 = STRIDE * int(self.rng.integers(0, (INPUT_HEIGHT - ch) // STRIDE + 1))
                    xs.append(to_letterbox_input(img[y0:y0 + ch, x0:x0 + cw]))
                    targets.append(make_targets(q - np.array([x0, y0], np.float32), v, (cw, ch)))
                yield (np.stack(xs), *(np.stack([t[k] for t in targets]) for k in range(4)))


def to_letterbox_input(img_in_letterbox: np.ndarray) -> np.ndarray:
    """An image already the input size → the network's (3, H, W) float32 in [0, 1], RGB."""
    return np.ascontiguousarray(img_in_letterbox[:, :, ::-1].transpose(2, 0, 1), np.float32) / 255.0


# --- network ---------------------------------------------------------------------------------


def _torch():  # type: ignore[no-untyped-def]
    return require_torch(FinderTrainError, "the finder")


def build_net(width: float = 1.0):  # type: ignore[no-untyped-def]
    """The finder network (a torch module): input (N, 3, H, W) in [0, 1] with H, W multiples
    of 32 (384×640 at inference); outputs the centre heatmap logits (N, 1, H/8, W/8) and corner
    offsets (N, 8, H/8, W/8). Plain 3×3 convolutions (they train far faster than depthwise ones
    on a CPU), stride 32 for context, a top-down path back to stride 8."""
    torch = _torch()
    nn = torch.nn

    def ch(c: int) -> int:
        return max(8, round(c * width / 8) * 8)

    def cbr(cin: int, cout: int, s: int = 1, k: int = 3):  # type: ignore[no-untyped-def]
        return nn.Sequential(nn.Conv2d(cin, cout, k, s, k // 2, bias=False), nn.BatchNorm2d(cout),
                             nn.ReLU(inplace=True))

    class Net(nn.Module):  # type: ignore[misc]
        def __init__(self) -> None:
            nn.Module.__init__(self)
            c1, c2, c3, c4, c5 = ch(16), ch(24), ch(32), ch(48), ch(64)
            self.stem = nn.Sequential(cbr(3, c1, 2), cbr(c1, c2, 2), cbr(c2, c2))  # stride 4
            self.s8 = nn.Sequential(cbr(c2, c3, 2), cbr(c3, c3))
            self.s16 = nn.Sequential(cbr(c3, c4, 2), cbr(c4, c4), cbr(c4, c4))
            self.s32 = nn.Sequential(cbr(c4, c5, 2), cbr(c5, c5), cbr(c5, c5))
            self.lat16 = cbr(c5, c4, 1, 1)
            self.fuse16 = cbr(c4, c4)
            self.lat8 = cbr(c4, c3, 1, 1)
            self.fuse8 = cbr(c3, c3)
            self.up = nn.Upsample(scale_factor=2, mode="nearest")
            self.heat = nn.Sequential(cbr(c3, c3), nn.Conv2d(c3, 1, 1))
            self.offs = nn.Sequential(cbr(c3, c3), nn.Conv2d(c3, 8, 1))
            nn.init.constant_(self.heat[-1].bias, -4.6)

        def forward(self, x):  # type: ignore[no-untyped-def]
            x = (x - 0.45) / 0.25
            f8 = self.s8(self.stem(x))
            f16 = self.s16(f8)
            f32 = self.s32(f16)
            p16 = self.fuse16(f16 + self.up(self.lat16(f32)))
            p8 = self.fuse8(f8 + self.up(self.lat8(p16)))
            return self.heat(p8), self.offs(p8)

    return Net()


def focal_loss(logits, target, weight):  # type: ignore[no-untyped-def]
    """CenterNet's penalty-reduced focal loss, normalised by the number of centres."""
    torch = _torch()
    p = torch.sigmoid(logits).clamp(1e-4, 1 - 1e-4)
    pos = (target >= 0.999).float()
    neg = (1 - pos) * weight
    pos_loss = -torch.log(p) * (1 - p) ** 2 * pos
    neg_loss = -torch.log(1 - p) * p ** 2 * (1 - target) ** 4 * neg
    n = pos.sum().clamp(min=1.0)
    return (pos_loss.sum() + neg_loss.sum()) / n


def offset_loss(pred, target, mask):  # type: ignore[no-untyped-def]
    """L1 on the corner offsets, the least over the four cyclic orders of the true corners."""
    torch = _torch()
    n, _, h, w = pred.shape
    p = pred.view(n, 4, 2, h, w)
    t = target.view(n, 4, 2, h, w)
    losses = torch.stack([(p - torch.roll(t, k, dims=1)).abs().sum(dim=(1, 2)) for k in range(4)])
    best = losses.min(dim=0).values  # (n, h, w)
    m = mask[:, 0]
    return (best * m).sum() / m.sum().clamp(min=1.0) / 8.0


# --- training --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class FinderTrainConfig:
    """Finder training options (defaults: the shipped model)."""

    steps: int = 4000
    batch: int = 12
    crop: tuple[int, int] = (320, 192)
    lr: float = 3e-3
    weight_decay: float = 1e-4
    offset_weight: float = 1.0
    width: float = 1.0
    threads: int = 2
    checkpoint_every: int = 100
    max_minutes: float = 35.0
    cache_shards: int = 120


def train_finder(out: Path, *, data_dir: Path, work_dir: Path, seed: int = 0,
                 config: FinderTrainConfig | None = None, resume: bool = True,
                 init: Path | None = None, progress: bool = True) -> TrainResult:
    """Train on the shards in `data_dir`, checkpointing into `work_dir`, then export to `out`.

    Stops after `config.steps` steps or `config.max_minutes` of training, whichever first;
    with `resume`, continues from `work_dir/checkpoint.pt` when it is there. Without a
    checkpoint, `init` (an exported finder, e.g. the shipped one) gives the starting weights
    (`load_onnx_weights`); its batch norms are folded away, so such a run holds their statistics,
    and `work_dir/init.json` says so to a resumed run."""
    torch = _torch()
    config = config or FinderTrainConfig()
    torch.set_num_threads(config.threads)
    torch.manual_seed(seed)
    work_dir.mkdir(parents=True, exist_ok=True)
    net = build_net(config.width)
    opt = torch.optim.AdamW(net.parameters(), lr=config.lr, weight_decay=config.weight_decay)
    ckpt = work_dir / "checkpoint.pt"
    log_path = work_dir / "train.jsonl"
    step, elapsed = load_checkpoint(torch, ckpt, net, opt, FinderTrainError) if resume else (0, 0.0)
    started_from = work_dir / "init.json"
    if step == 0:
        started_from.unlink(missing_ok=True)
        if init is not None:
            load_onnx_weights(net, init)
            started_from.write_text(json.dumps({"init": str(init)}) + "\n", encoding="utf-8")
    hold_norms = started_from.is_file()
    stream = ShardStream(data_dir, seed=seed * 7919 + step, cache_shards=config.cache_shards,
                         ).batches(config.batch, config.crop)

    def lr_at(s: int) -> float:
        return cosine_lr(config.lr, s, config.steps, time.perf_counter() - start, config.max_minutes)

    net.train()
    if hold_norms:
        for m in net.modules():
            if isinstance(m, torch.nn.BatchNorm2d):
                m.eval()
    bar = tqdm(total=config.steps, initial=step, desc="train finder", unit="step", disable=not progress,
               mininterval=10.0)
    loss_avg = float("nan")
    start = time.perf_counter() - elapsed
    with log_path.open("a", encoding="utf-8") as log:
        while step < config.steps and (time.perf_counter() - start) < config.max_minutes * 60:
            x, heat, weight, offs, omask = (torch.from_numpy(a) for a in next(stream))
            for g in opt.param_groups:
                g["lr"] = lr_at(step)
            h_logits, o_pred = net(x)
            lh = focal_loss(h_logits, heat, weight)
            lo = offset_loss(o_pred, offs, omask)
            loss = lh + config.offset_weight * lo
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(net.parameters(), 5.0)
            opt.step()
            step += 1
            v = loss.item()
            loss_avg = v if math.isnan(loss_avg) else 0.98 * loss_avg + 0.02 * v
            bar.update(1)
            bar.set_postfix(loss=f"{loss_avg:.3f}", heat=f"{float(lh):.3f}", offs=f"{float(lo):.3f}")
            if step % 20 == 0:
                log.write(json.dumps({"step": step, "loss": round(v, 4), "heat": round(float(lh), 4),
                                      "offs": round(float(lo), 4), "lr": lr_at(step),
                                      "seconds": round(time.perf_counter() - start, 1)}) + "\n")
                log.flush()
            if step % config.checkpoint_every == 0 or step == config.steps:
                save_checkpoint(torch, ckpt, net, opt, step, time.perf_counter() - start)
    bar.close()
    seconds = time.perf_counter() - start
    save_checkpoint(torch, ckpt, net, opt, step, seconds)
    diff = export_onnx(net, out)
    params = sum(p.numel() for p in net.parameters())
    return TrainResult(out=out, steps=step, seconds=seconds, parameters=int(params),
                       final_loss=loss_avg, export_max_diff=diff, log=log_path)


def load_onnx_weights(net, model: Path) -> float:  # type: ignore[no-untyped-def]
    """Put the weights of an exported finder (`export_onnx`) into `net` (`build_net` of the same
    width) and return the largest difference of their outputs on random input.

    The export folds each batch norm into its convolution, so the convolution takes the folded
    weights and its batch norm becomes the folded bias alone (scale 1, mean 0, variance 1 − eps):
    the same function, whose statistics a run must then hold (`train_finder` does).
    Raises `FinderTrainError` for a file that is not a finder of this shape."""
    torch = _torch()
    import onnx
    from onnx import numpy_helper

    if not model.is_file():
        raise FinderTrainError(f"{model}: no such file; give an exported finder such as models/finder.onnx")
    try:
        graph = onnx.load(str(model)).graph
    except Exception as exc:
        raise FinderTrainError(f"{model}: not an ONNX model ({exc}); give an exported finder") from None
    weights = {t.name: numpy_helper.to_array(t) for t in graph.initializer}
    convs = [n for n in graph.node if n.op_type == "Conv"]
    pairs: list[tuple[Any, Any]] = []  # (conv, its batch norm or None), in the order forward runs them
    mods = list(net.modules())
    for i, m in enumerate(mods):
        if isinstance(m, torch.nn.Conv2d):
            nxt = mods[i + 1] if i + 1 < len(mods) else None
            pairs.append((m, nxt if isinstance(nxt, torch.nn.BatchNorm2d) else None))
    if len(convs) != len(pairs):
        raise FinderTrainError(f"{model}: {len(convs)} convolutions, the finder network has {len(pairs)}; "
                               "give a finder exported by `cardtrack train finder` of the same width")
    with torch.no_grad():
        for node, (conv, norm) in zip(convs, pairs, strict=True):
            w = weights.get(node.input[1])
            b = weights.get(node.input[2]) if len(node.input) > 2 else None
            if w is None or tuple(w.shape) != tuple(conv.weight.shape):
                raise FinderTrainError(f"{model}: convolution {node.name or node.output[0]} has weights of shape "
                                       f"{None if w is None else w.shape}, the network {tuple(conv.weight.shape)}")
            conv.weight.copy_(torch.from_numpy(w.copy()))
            bias = torch.from_numpy(b.copy()) if b is not None else torch.zeros(conv.out_channels)
            if norm is not None:
                norm.weight.fill_(1.0)
                norm.bias.copy_(bias)
                norm.running_mean.zero_()
                norm.running_var.fill_(1.0 - norm.eps)
            elif conv.bias is not None:
                conv.bias.copy_(bias)
    diff = onnx_difference(net, model, batch=1)
    if diff > 1e-3:
        raise FinderTrainError(f"{model}: the network with its weights differs from the model by {diff:.2e}; "
                               "is it a finder of this version?")
    return diff


def _check_input(batch: int):  # type: ignore[no-untyped-def]
    torch = _torch()
    return torch.rand(batch, 3, INPUT_HEIGHT, INPUT_WIDTH, generator=torch.Generator().manual_seed(0))


def onnx_difference(net, model: Path, *, batch: int = 2) -> float:  # type: ignore[no-untyped-def]
    """The largest difference between `net` (put in eval mode) and the ONNX `model` on a fixed
    random input of `batch` images, over both outputs."""
    torch = _torch()
    import onnxruntime as ort

    net.eval()
    x = _check_input(batch)
    with torch.no_grad():
        ref = [t.numpy() for t in net(x)]
    got = ort.InferenceSession(str(model), providers=["CPUExecutionProvider"]).run(None, {"image": x.numpy()})
    return max(float(np.abs(a - b).max()) for a, b in zip(ref, got, strict=True))


def export_onnx(net, out: Path, *, check_batch: int = 2) -> float:  # type: ignore[no-untyped-def]
    """Export `net` to `out` (opset 17, dynamic batch; height and width free, as
    `vision.train.free_size` names them: the net is fully convolutional) and return the largest difference
    between onnxruntime and torch on random input (raises if above 1e-4)."""
    torch = _torch()

    net.eval()
    out.parent.mkdir(parents=True, exist_ok=True)
    x = _check_input(check_batch)
    tmp = out.with_suffix(".tmp.onnx")
    torch.onnx.export(net, (x,), str(tmp), input_names=["image"], output_names=["heatmap", "offsets"],
                      dynamic_axes={"image": {0: "batch", 2: "height", 3: "width"},
                                    "heatmap": {0: "batch", 2: "rows", 3: "columns"},
                                    "offsets": {0: "batch", 2: "rows", 3: "columns"}},
                      opset_version=17, dynamo=False)
    import onnx

    model = onnx.load(str(tmp))
    meta = {"cardtrack.model": "finder", "input_size": f"{INPUT_WIDTH}x{INPUT_HEIGHT}",
            "stride": str(STRIDE), "offset_scale": str(OFFSET_SCALE)}
    for k, v in meta.items():
        entry = model.metadata_props.add()
        entry.key, entry.value = k, v
    onnx.save(model, str(tmp))
    diff = onnx_difference(net, tmp, batch=check_batch)
    if diff > 1e-4:
        raise FinderTrainError(f"{tmp}: onnxruntime differs from torch by {diff:.2e} (> 1e-4)")
    tmp.replace(out)
    return diff


def render_shards(data_dir: Path, *, seed: int, shards: Sequence[int], progress: bool = True,
                  tables: bool = False) -> list[Path]:
    """Render the listed shards (skipping those already there) with a progress bar."""
    paths = []
    for k in tqdm(list(shards), desc="finder game shots" if tables else "finder data", unit="shard",
                  disable=not progress, mininterval=5.0):
        paths.append(render_shard(data_dir, seed=seed, shard=k, tables=tables))
    return paths


def letterbox_quads(quads: np.ndarray, frame_size: tuple[int, int]) -> np.ndarray:
    """Quads in frame pixels → letterbox pixels (what the network sees)."""
    return to_letterbox(quads, letterbox_params(frame_size))


# --- evaluation (no torch) -------------------------------------------------------------------

EVAL_GAME = "minecraft-explorers"


@dataclass(frozen=True, slots=True, kw_only=True)
class FinderReport:
    """Accuracy of a finder on held-out synthetic scenes (all figures on synthetic data)."""

    scenes: int
    seed: int
    frame_size: tuple[int, int]
    tables: bool  # shots of games in play (footage layouts), not stills of random arrangements
    cards: int  # cards at least POSITIVE_VISIBLE visible (the AP's ground truth)
    cards_60: int  # cards at least 60 % visible
    ap50: float
    recall_60: float
    recall_30: float
    false_per_frame: float
    corner_px: float  # median corner error of found cards ≥ 60 % visible, pixels
    corner_pct: float  # … as % of the card's width (shorter side)
    refined_corner_px: float  # … with edge refinement
    refined_corner_pct: float
    ms_per_frame: float  # median finder time per frame (letterbox, model, decode)
    threads: int
    model_corner_px: float | None = None  # … with the corner refiner (the finder's default output)
    model_corner_pct: float | None = None
    ms_per_frame_refined: float | None = None  # … including the corner refiner
    adjacent: DetectionCounts | None = None  # … decoded with `FinderConfig(peaks='adjacent')`


@dataclass(frozen=True, slots=True, kw_only=True)
class DetectionCounts:
    """AP, recall and false detections of one way of decoding, on a held-out set."""

    ap50: float
    recall_60: float
    recall_30: float
    false_per_frame: float


class _Tally:
    """Detections matched to the truth frame by frame (greedy, best score first, IoU ≥ 0.5)."""

    def __init__(self) -> None:
        self.scores: list[np.ndarray] = []
        self.tp: list[np.ndarray] = []
        self.n30 = self.n60 = self.found30 = self.found60 = self.false = 0

    def add(self, det: Any, truth: np.ndarray, vis: np.ndarray) -> np.ndarray:
        """Score one frame; returns, per truth card, the index of its detection or -1."""
        from vision.detections import iou_matrix

        pos = vis >= POSITIVE_VISIBLE
        ign = (vis >= IGNORE_VISIBLE) & ~pos
        iou = iou_matrix(det.corners, truth) if len(det) and len(truth) else np.zeros((len(det), len(truth)))
        matched = np.full(len(truth), -1)
        tp = np.zeros(len(det), bool)
        keep = np.ones(len(det), bool)
        for d in np.argsort(-det.scores, kind="stable"):
            cand = np.where(pos & (matched < 0) & (iou[d] >= 0.5), iou[d], -1.0)
            if len(cand) and cand.max() >= 0.5:
                matched[int(cand.argmax())] = d
                tp[d] = True
            elif len(truth) and (iou[d][ign] >= 0.5).any():
                keep[d] = False  # a barely visible card: neither right nor wrong
            # otherwise a false positive (a duplicate of a found card is one too)
        self.scores.append(det.scores[keep])
        self.tp.append(tp[keep])
        self.false += int((~tp & keep).sum())
        self.n30 += int(pos.sum())
        self.found30 += int((matched[pos] >= 0).sum())
        sel60 = vis >= 0.6
        self.n60 += int(sel60.sum())
        self.found60 += int((matched[sel60] >= 0).sum())
        return matched

    def ap50(self) -> float:
        if not self.scores:
            return 0.0
        return _average_precision(np.concatenate(self.scores), np.concatenate(self.tp), self.n30)

    def recall_60(self) -> float:
        return self.found60 / max(self.n60, 1)

    def recall_30(self) -> float:
        return self.found30 / max(self.n30, 1)

    def counts(self, scenes: int) -> DetectionCounts:
        return DetectionCounts(ap50=self.ap50(), recall_60=self.recall_60(), recall_30=self.recall_30(),
                               false_per_frame=self.false / max(scenes, 1))


def _corner_errors(pred: np.ndarray, truth: np.ndarray) -> np.ndarray:
    """Per-corner distances under the best cyclic correspondence (the finder's corner order is
    canonical, the truth's is the card's own)."""
    best = None
    for k in range(4):
        d = np.linalg.norm(np.roll(pred, k, axis=0) - truth, axis=1)
        if best is None or d.mean() < best.mean():
            best = d
    assert best is not None
    return best


def _average_precision(scores: np.ndarray, tp: np.ndarray, n_truth: int) -> float:
    if n_truth == 0:
        return float("nan")
    order = np.argsort(-scores, kind="stable")
    tps = np.cumsum(tp[order])
    fps = np.cumsum(~tp[order])
    recall = tps / n_truth
    precision = tps / np.maximum(tps + fps, 1)
    mrec = np.concatenate([[0.0], recall, [1.0]])
    mpre = np.concatenate([[1.0], precision, [0.0]])
    mpre = np.maximum.accumulate(mpre[::-1])[::-1]
    idx = np.nonzero(mrec[1:] != mrec[:-1])[0]
    return float(np.sum((mrec[idx + 1] - mrec[idx]) * mpre[idx + 1]))


def evaluate_finder(model: Path, *, scenes: int = 100, seed: int = 9_001, threads: int = 1,
                    size: tuple[int, int] = (1280, 720), progress: bool = True,
                    corner_model: Path | None = None, tables: bool = False,
                    with_adjacent: bool = True) -> FinderReport:
    """Render `scenes` held-out stills (data seed `seed`, designs of a family never trained on,
    every game's proxy art) at `size` and measure the finder at `model` on them: its own
    corners, with edge refinement and, when a corner model is given or shipped, with the corner
    refiner. With `tables`, the scenes are shots of games in play instead (footage layouts of
    the four games in turn, proxy art, games of seed `seed` never trained on). With
    `with_adjacent`, AP, recall and false detections are measured again with
    `FinderConfig(peaks='adjacent')` (the cards of tight fans)."""
    from vision.corners import DEFAULT_MODEL as CORNER_MODEL
    from vision.detections import iou_matrix
    from vision.finder import Finder, FinderConfig, Peaks, Refine
    from vision.synth.library import build_library
    from vision.synth.stills import StillsConfig, iter_stills

    corner_model = corner_model or (CORNER_MODEL if CORNER_MODEL.is_file() else None)
    finder = Finder(model, threads=threads, corner_model=corner_model, config=FinderConfig(refine=Refine.NONE))
    refined = FinderConfig(refine=Refine.EDGES)
    by_model = FinderConfig(refine=Refine.MODEL)
    fans = FinderConfig(refine=Refine.NONE, peaks=Peaks.ADJACENT)
    merrs: list[np.ndarray] = []
    mtimes: list[float] = []
    tally = _Tally()
    adjacent = _Tally() if with_adjacent else None
    errs: list[np.ndarray] = []
    rerrs: list[np.ndarray] = []
    times = []
    if tables:
        shots = _eval_table_shots(scenes, seed=seed, size=size)
    else:
        lib, deck = build_library(EVAL_GAME, "proxy", mixed=True, seed=seed, designs=200)
        shots = ((r.image, r.cards) for _, _, r in iter_stills(lib, deck, StillsConfig(count=scenes, seed=seed,
                                                                                      size=size)))
    for image, cards in tqdm(shots, total=scenes, desc="finder eval", unit="scene", disable=not progress,
                             mininterval=5.0):
        t0 = time.perf_counter()
        det = finder.find_one(image)
        times.append(time.perf_counter() - t0)
        ref = finder.find_one(image, refined)
        if corner_model is not None:
            t0 = time.perf_counter()
            mod = finder.find_one(image, by_model)
            mtimes.append(time.perf_counter() - t0)
        truth = np.array([c.corners for c in cards], np.float32).reshape(-1, 4, 2)
        vis = np.array([c.visible for c in cards], np.float32)
        matched = tally.add(det, truth, vis)
        if adjacent is not None:
            adjacent.add(finder.find_one(image, fans), truth, vis)
        sel60 = np.nonzero(vis >= 0.6)[0]
        riou = iou_matrix(ref.corners, truth) if len(ref) and len(truth) else None
        for j in sel60:
            if matched[j] < 0:
                continue
            width = float(np.linalg.norm(truth[j] - np.roll(truth[j], -1, axis=0), axis=1).min())
            e = _corner_errors(det.corners[matched[j]], truth[j])
            errs.append(np.stack([e, e / width * 100.0], axis=1))
            if riou is not None and riou[:, j].max() >= 0.5:
                r = _corner_errors(ref.corners[int(riou[:, j].argmax())], truth[j])
                rerrs.append(np.stack([r, r / width * 100.0], axis=1))
            if corner_model is not None and len(mod):
                miou = iou_matrix(mod.corners, truth[j:j + 1])[:, 0]
                if miou.max() >= 0.5:
                    m = _corner_errors(mod.corners[int(miou.argmax())], truth[j])
                    merrs.append(np.stack([m, m / width * 100.0], axis=1))
    e = np.concatenate(errs) if errs else np.full((1, 2), np.nan)
    r = np.concatenate(rerrs) if rerrs else np.full((1, 2), np.nan)
    return FinderReport(
        scenes=scenes, seed=seed, frame_size=size, tables=tables, cards=tally.n30, cards_60=tally.n60,
        ap50=tally.ap50(), recall_60=tally.recall_60(), recall_30=tally.recall_30(),
        false_per_frame=tally.false / max(scenes, 1),
        adjacent=adjacent.counts(scenes) if adjacent is not None else None,
        corner_px=float(np.median(e[:, 0])), corner_pct=float(np.median(e[:, 1])),
        refined_corner_px=float(np.median(r[:, 0])), refined_corner_pct=float(np.median(r[:, 1])),
        ms_per_frame=float(np.median(times) * 1000.0), threads=threads,
        model_corner_px=float(np.median(np.concatenate(merrs)[:, 0])) if merrs else None,
        model_corner_pct=float(np.median(np.concatenate(merrs)[:, 1])) if merrs else None,
        ms_per_frame_refined=float(np.median(mtimes) * 1000.0) if mtimes else None,
    )


def _eval_table_shots(scenes: int, *, seed: int, size: tuple[int, int],
                      ) -> Iterator[tuple[np.ndarray, Sequence[CardTruth]]]:
    """Held-out shots of games in play at `size`: the four games in turn, proxy art."""
    per_game = [scenes // len(GAMES) + (k < scenes % len(GAMES)) for k in range(len(GAMES))]
    for k, (game, n) in enumerate(zip(GAMES, per_game, strict=True)):
        if n:
            yield from _game_shots(game, count=n, size=size, seed=seed * 1000 + k, render_seed=(seed, k))


REPORT_START = "<!-- finder-eval:start -->"
REPORT_END = "<!-- finder-eval:end -->"


def report_markdown(report: FinderReport) -> str:
    """The report as (part of) the model card's metrics section."""
    w, h = report.frame_size
    what = (f"Held-out shots of games in play: {report.scenes} at {w}×{h}, the four games' footage "
            f"layouts in turn with their proxy art, seed {report.seed} (games never used in training)."
            if report.tables else
            f"Held-out synthetic scenes: {report.scenes} stills at {w}×{h}, data seed {report.seed} "
            f"(designs and scenes never used in training), every game's proxy art and random designs.")
    return "\n".join([
        what,
        "",
        "| metric | value | target |",
        "|---|---|---|",
        f"| AP@0.5 (quad IoU, cards ≥ {POSITIVE_VISIBLE:.0%} visible, n = {report.cards}) | {report.ap50:.3f} | |",
        f"| recall, cards ≥ 60% visible (n = {report.cards_60}) | {report.recall_60:.3f} | ≥ 0.99 |",
        f"| recall, cards ≥ {POSITIVE_VISIBLE:.0%} visible | {report.recall_30:.3f} | |",
        f"| false detections per frame | {report.false_per_frame:.2f} | |",
        *([f"| … decoded with `peaks='adjacent'` (the cards of tight fans): AP@0.5 / recall ≥ 60% / "
           f"recall ≥ {POSITIVE_VISIBLE:.0%} / false per frame | {a.ap50:.3f} / {a.recall_60:.3f} / "
           f"{a.recall_30:.3f} / {a.false_per_frame:.2f} | |"] if (a := report.adjacent) is not None else []),
        *([f"| median corner error, the finder's output (corner refiner, found cards ≥ 60% visible) | "
           f"{report.model_corner_px:.2f} px = {report.model_corner_pct:.2f}% of card width | ≤ 2% |"]
          if report.model_corner_px is not None and report.model_corner_pct is not None else []),
        f"| … first stage only (`refine='none'`) | {report.corner_px:.2f} px = "
        f"{report.corner_pct:.2f}% | |",
        f"| … first stage + edge fits (`refine='edges'`) | {report.refined_corner_px:.2f} px = "
        f"{report.refined_corner_pct:.2f}% | |",
        f"| first stage time per {w}×{h} frame ({report.threads} thread, median) | {report.ms_per_frame:.1f} ms | |",
        *([f"| finder time with the corner refiner ({report.threads} thread, median) | "
           f"{report.ms_per_frame_refined:.1f} ms | ≤ 15 ms |"] if report.ms_per_frame_refined is not None else []),
    ])


def write_report(card: Path, reports: Sequence[FinderReport]) -> None:
    """Replace the metrics section of the model card `card` (between its report markers)."""
    try:
        text = card.read_text(encoding="utf-8")
    except OSError as exc:
        raise FinderTrainError(f"{card}: cannot read the model card ({exc})") from None
    if REPORT_START not in text or REPORT_END not in text:
        raise FinderTrainError(f"{card}: no metrics section; add the lines {REPORT_START} and "
                               f"{REPORT_END} where the report goes")
    head, rest = text.split(REPORT_START, 1)
    _, tail = rest.split(REPORT_END, 1)
    body = "\n\n".join(report_markdown(r) for r in reports)
    card.write_text(f"{head}{REPORT_START}\n{body}\n{REPORT_END}{tail}", encoding="utf-8")
