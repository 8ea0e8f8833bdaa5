"""Training of the tokens model: rendered counter zones, a small heatmap network, ONNX export.

Data: whole frames from the scene renderer (`vision.synth.render`) with the footage's camera and
look (`sample_camera` over a mk. I sized table at 1280×720, `sample_style`), each holding several
zone-sized areas of tokens (`vision.synth.tokens.scatter_tokens`: one kind or mixed, 0–8 of them,
touching or overlapping a little) or the die (any face), random card designs lying around and
sometimes partly over an area. Every area is rectified exactly as `vision.tokens` does at run
time (through the camera's table-to-image mapping), and each piece's label is where the centre
of its top face lands in the crop. Frames are cached as `.npz` shards in a work folder, so a
resumed run reuses them. The network (`TokenNet`) is a small fully convolutional net to stride 4
(dilated 3×3 convolutions give it a receptive field wider than a token) ending in one logit map
per class; the loss is the CenterNet focal loss on Gaussian targets. The die's face is read by a
second small net (`DieNet`, cross-entropy over six faces) on a patch cut around the die's top
face; both are exported together as one ONNX model with two inputs. Training is resumable from
its checkpoint and ends by exporting `models/tokens.onnx` with metadata (classes, crop geometry)
checked against torch. `evaluate_crops` (no torch) scores a model on fresh shards. torch is
imported here only, inside the functions that need it.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from tqdm import tqdm

from vision.tokens import (
    CROP_MM,
    CROP_PX,
    DIE_PATCH_MM,
    DIE_PATCH_PX,
    DIE_PREFIX,
    PX_PER_MM,
    STRIDE,
    crop_maps,
    mm_to_crop_px,
    rectify,
)
from vision.train.common import (
    TrainResult,
    cosine_lr,
    load_checkpoint,
    require_torch,
    save_checkpoint,
)

# The die has a presence class (`d6`, wherever it lies) and one class per face (`d6:1`..`d6:6`).
CLASSES = ("health", "hunger", "daylight", *(f"{DIE_PREFIX}{i}" for i in range(1, 7)), DIE_PREFIX[:-1])
TOKEN_KINDS = ("health", "hunger", "daylight")
FRAMES_PER_SHARD = 8
TABLES = ((800.0, 600.0), (1000.0, 750.0), (1200.0, 800.0))
SIGMA_CELLS = 1.3
DIE_CLASS = len(CLASSES) - 1
DIE_SHARE = 0.3  # share of the areas of a rendered table that hold the die


class TokenTrainError(ValueError):
    """Bad training input (a shard, a checkpoint, a folder); the message says what to do."""


# --- data ------------------------------------------------------------------------------------


def _table_to_image(camera: Any) -> Any:
    def f(pts: np.ndarray) -> np.ndarray:
        p = np.asarray(pts, np.float64).reshape(-1, 2)
        return camera.project(np.column_stack([p, np.zeros(len(p))]))

    return f


def _on_table(camera: Any, pts3: np.ndarray) -> np.ndarray:
    """Where 3-D points appear, as table-plane mm (what the rectified crop shows there)."""
    px = camera.lens.undistort(camera.project(pts3))
    h_inv = np.linalg.inv(camera.homography())
    q = np.column_stack([px, np.ones(len(px))]) @ h_inv.T
    return q[:, :2] / q[:, 2:3]


def render_frame_crops(seed: int, index: int, lib: Any, designs: Sequence[str]
                       ) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """One rendered frame's crops and labels `(k, 3)` = (class, x px, y px) per crop."""
    from vision.synth.camera import sample_camera
    from vision.synth.effects import sample_style
    from vision.synth.render import SceneRenderer
    from vision.synth.scene import CardPlacement, Scene, TableSpec, table_markers
    from vision.synth.surfaces import TABLE_KINDS
    from vision.synth.tokens import die_in_zone, scatter_tokens

    rng = np.random.default_rng([seed, index, 0x70C])
    w, h = TABLES[int(rng.integers(len(TABLES)))]
    camera = sample_camera(rng, (-40.0, -40.0, w + 40.0, h + 40.0), (1280, 720))
    style = sample_style(rng, strength=float(rng.uniform(0.5, 1.0)))
    # Area centres on a jittered grid, clear of the markers.
    cells = [(x, y) for x in np.arange(110.0, w - 100.0, 135.0) for y in np.arange(110.0, h - 100.0, 120.0)]
    rng.shuffle(cells)
    areas = cells[: int(rng.integers(8, 14))]
    tokens = []
    centres = []
    for cx, cy in areas:
        c = np.array([cx, cy]) + rng.normal(0.0, 6.0, 2)
        u = np.array([1.0, 0.0]) if rng.random() < 0.6 else np.array([0.0, 1.0])
        half = np.array([rng.uniform(36.0, 44.0), rng.uniform(22.0, 28.0)])
        r = rng.random()
        if r < 0.1:
            pass
        elif r < 0.1 + DIE_SHARE:
            tokens.append(die_in_zone(rng, int(rng.integers(1, 7)), c, u, half))
            if rng.random() < 0.3:
                tokens += scatter_tokens(rng, str(rng.choice(TOKEN_KINDS)), int(rng.integers(1, 4)), c, u, half,
                                         avoid=[tokens[-1].center_mm])
        elif r < 0.88:
            tokens += scatter_tokens(rng, str(rng.choice(TOKEN_KINDS)), int(rng.integers(1, 9)), c, u, half,
                                     overlap=float(rng.uniform(0.0, 0.3)))
        else:
            placed: list[tuple[float, float]] = []
            for kind in rng.choice(TOKEN_KINDS, size=2, replace=False):
                more = scatter_tokens(rng, str(kind), int(rng.integers(1, 5)), c, u, half, avoid=placed)
                placed += [t.center_mm for t in more]
                tokens += more
        centres.append(c)
    cards = []
    for _ in range(int(rng.integers(4, 14))):
        near = centres[int(rng.integers(len(centres)))] if centres and rng.random() < 0.5 else None
        if near is not None:
            p = near + rng.choice([-1.0, 1.0]) * np.array([rng.uniform(60, 95), rng.uniform(-40, 40)])
        else:
            p = np.array([rng.uniform(60, w - 60), rng.uniform(60, h - 60)])
        cards.append(CardPlacement(face_id=str(designs[int(rng.integers(len(designs)))]),
                                   center_mm=(float(p[0]), float(p[1])), rotation_deg=float(rng.uniform(-180, 180)),
                                   z_mm=0.0))
    scene = Scene(table=TableSpec(surface=TABLE_KINDS[int(rng.integers(len(TABLE_KINDS)))],
                                  seed=int(rng.integers(1000)), extent_mm=(-260.0, -260.0, w + 260.0, h + 260.0)),
                  cards=tuple(cards), tokens=tuple(tokens), markers=table_markers(w, h))
    renderer = SceneRenderer(lib, noise_seed=seed * 7 + index)
    image = renderer.render(scene, camera, style, seed=(seed, index)).image
    to_image = _table_to_image(camera)
    crops, labels = [], []
    tops = _on_table(camera, np.concatenate([t.top_center_3d() for t in tokens])) if tokens else np.zeros((0, 2))
    kinds = [CLASSES.index(f"{DIE_PREFIX}{t.pips}" if t.is_die else t.token) for t in tokens]
    for c in centres:
        jitter = rng.normal(0.0, 4.0, 2)
        centre = c + jitter
        crops.append(rectify(image, crop_maps(centre, to_image)))
        px = mm_to_crop_px(centre, tops) if len(tops) else np.zeros((0, 2))
        inside = (px[:, 0] > -12) & (px[:, 0] < CROP_PX + 12) & (px[:, 1] > -12) & (px[:, 1] < CROP_PX + 12)
        lab = np.column_stack([np.asarray(kinds, np.float32)[inside], px[inside]]).astype(np.float32)
        labels.append(lab.reshape(-1, 3))
    return crops, labels


def render_shard(out_dir: Path, *, seed: int, shard: int, frames: int = FRAMES_PER_SHARD) -> Path:
    """Render frames `shard*frames …` of data seed `seed` into `out_dir/shard-XXXXX.npz`."""
    from vision.synth.faces import FaceLibrary

    path = out_dir / f"shard-{shard:05d}.npz"
    if path.is_file():
        return path
    lib = FaceLibrary()
    designs = lib.add_designs(seed * 1000 + shard, 12)
    crops: list[np.ndarray] = []
    labels: list[np.ndarray] = []
    for k in range(frames):
        c, lab = render_frame_crops(seed, shard * frames + k, lib, designs)
        crops += c
        labels += lab
    out_dir.mkdir(parents=True, exist_ok=True)
    tmp = out_dir / f".shard-{shard:05d}.tmp.npz"
    counts = np.array([len(x) for x in labels], np.int32)
    flat = np.concatenate(labels) if labels else np.zeros((0, 3), np.float32)
    np.savez_compressed(tmp, crops=np.stack(crops), labels=flat, counts=counts)
    tmp.replace(path)
    return path


def load_shard(path: Path) -> tuple[np.ndarray, list[np.ndarray]]:
    try:
        with np.load(path) as z:
            crops, flat, counts = z["crops"], z["labels"], z["counts"]
    except (OSError, KeyError, ValueError) as exc:
        raise TokenTrainError(f"{path}: not a tokens data shard ({exc}); delete it to render it again") from None
    ends = np.cumsum(counts)
    return crops, [flat[e - n : e] for e, n in zip(ends, counts, strict=True)]


def heat_target(labels: np.ndarray, n_classes: int = len(CLASSES), size: int = CROP_PX // STRIDE) -> np.ndarray:
    """`(C, size, size)` Gaussian peaks (max-combined) at the label positions, at stride STRIDE."""
    out = np.zeros((n_classes, size, size), np.float32)
    ys, xs = np.mgrid[0:size, 0:size].astype(np.float32)
    for c, x, y in labels:
        gx, gy = x / STRIDE - 0.5, y / STRIDE - 0.5
        g = np.exp(-((xs - gx) ** 2 + (ys - gy) ** 2) / (2 * SIGMA_CELLS**2))
        ix, iy = round(gx), round(gy)
        if 0 <= ix < size and 0 <= iy < size:
            g[iy, ix] = 1.0
        else:
            g = np.minimum(g, 0.99)
        out[int(c)] = np.maximum(out[int(c)], g)
        if CLASSES[int(c)].startswith(DIE_PREFIX):
            out[DIE_CLASS] = np.maximum(out[DIE_CLASS], g)
    return out


def _augment(rng: np.random.Generator, crop: np.ndarray, labels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A random quarter turn / mirror (pips counted alike) and a brightness/contrast change."""
    lab = labels.copy()
    k = int(rng.integers(4))
    img = np.rot90(crop, k).copy()
    for _ in range(k):  # rot90 turns anticlockwise: (x, y) -> (y, W - x)
        lab[:, 1], lab[:, 2] = lab[:, 2].copy(), CROP_PX - lab[:, 1]
    if rng.random() < 0.5:
        img = img[:, ::-1].copy()
        lab[:, 1] = CROP_PX - lab[:, 1]
    a, b = rng.uniform(0.8, 1.2), rng.uniform(-18, 18)
    img = np.clip(img.astype(np.float32) * a + b, 0, 255).astype(np.uint8)
    return img, lab


def _window(rng: np.random.Generator, img: np.ndarray, lab: np.ndarray, size: int) -> tuple[np.ndarray, np.ndarray]:
    """A random `size`-pixel square of the crop (a multiple of STRIDE), labels moved with it
    (the network is fully convolutional: it trains on parts and runs on the whole)."""
    if size >= CROP_PX:
        return img, lab
    x0 = int(rng.integers(0, (CROP_PX - size) // STRIDE + 1)) * STRIDE
    y0 = int(rng.integers(0, (CROP_PX - size) // STRIDE + 1)) * STRIDE
    out = lab.copy()
    out[:, 1] -= x0
    out[:, 2] -= y0
    return img[y0 : y0 + size, x0 : x0 + size], out


def batches(paths: Sequence[Path], batch: int, seed: int, window: int = CROP_PX) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """Endless shuffled augmented batches (x (n,3,H,W) float32, heat (n,C,h,w)) of random
    `window`-pixel squares of the crops."""
    rng = np.random.default_rng(seed)
    crops: list[np.ndarray] = []
    labels: list[np.ndarray] = []
    for p in paths:
        c, lab = load_shard(p)
        crops += list(c)
        labels += lab
    if not crops:
        raise TokenTrainError("no tokens training data: render shards first")
    while True:
        idx = rng.choice(len(crops), size=batch, replace=len(crops) < batch)
        xs, hs = [], []
        for i in idx:
            img, lab = _augment(rng, crops[i], labels[i])
            img, lab = _window(rng, img, lab, window)
            xs.append(img)
            hs.append(heat_target(lab, size=window // STRIDE))
        x = np.ascontiguousarray(np.stack(xs).transpose(0, 3, 1, 2), np.float32) / 255.0
        yield x, np.stack(hs)


# --- network and loss ------------------------------------------------------------------------


def _torch() -> Any:
    return require_torch(TokenTrainError, "the tokens model")


def build_net(width: int = 32) -> Any:
    """TokenNet: stride-2 stem, stride-4 stage, dilated context, one logit map per class."""
    torch = _torch()
    nn = torch.nn

    def block(cin: int, cout: int, stride: int = 1, dil: int = 1) -> Any:
        return nn.Sequential(nn.Conv2d(cin, cout, 3, stride, padding=dil, dilation=dil, bias=False),
                             nn.BatchNorm2d(cout), nn.ReLU(inplace=True))

    class TokenNet(nn.Module):  # type: ignore[misc, name-defined]
        def __init__(self) -> None:
            nn.Module.__init__(self)
            self.body = nn.Sequential(
                block(3, 16, 2), block(16, 24), block(24, width, 2), block(width, width),
                block(width, width, dil=2), block(width, width, dil=4), block(width, width, dil=2),
            )
            self.head = nn.Sequential(block(width, width), nn.Conv2d(width, len(CLASSES), 1))
            self.head[-1].bias.data.fill_(-2.2)

        def forward(self, x: Any) -> Any:
            return self.head(self.body(x))

    return TokenNet()


def focal_loss(logits: Any, target: Any) -> Any:
    """CenterNet focal loss on Gaussian targets (normalised by the number of peaks)."""
    torch = _torch()
    p = torch.sigmoid(logits).clamp(1e-4, 1 - 1e-4)
    pos = target.eq(1.0).float()
    neg = 1.0 - pos
    pos_loss = torch.log(p) * (1 - p) ** 2 * pos
    neg_loss = torch.log(1 - p) * p**2 * (1 - target) ** 4 * neg
    n = pos.sum().clamp(min=1.0)
    return -(pos_loss.sum() + neg_loss.sum()) / n


# --- training --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class TokenTrainConfig:
    """Tokens training options (defaults: the shipped model)."""

    steps: int = 1500
    batch: int = 16
    window: int = 128
    lr: float = 3e-3
    width: int = 32
    threads: int = 2
    checkpoint_every: int = 100
    max_minutes: float = 12.0


def render_shards(data_dir: Path, *, seed: int, shards: Sequence[int], progress: bool = True) -> list[Path]:
    """Render the listed shards (skipping those already there) with a progress bar."""
    return [render_shard(data_dir, seed=seed, shard=k)
            for k in tqdm(list(shards), desc="tokens data", unit="shard", disable=not progress)]


def train_tokens(out: Path, *, data_dir: Path, work_dir: Path, seed: int = 0,
                 config: TokenTrainConfig | None = None, resume: bool = True,
                 progress: bool = True) -> TrainResult:
    """Train on the shards in `data_dir`, checkpointing into `work_dir`, then export to `out`.

    Stops after `config.steps` steps or `config.max_minutes`, whichever first; with `resume`,
    continues from `work_dir/checkpoint.pt` when it is there."""
    torch = _torch()
    config = config or TokenTrainConfig()
    torch.set_num_threads(config.threads)
    torch.manual_seed(seed)
    work_dir.mkdir(parents=True, exist_ok=True)
    net = build_net(config.width)
    opt = torch.optim.AdamW(net.parameters(), lr=config.lr, weight_decay=1e-4)
    ckpt = work_dir / "checkpoint.pt"
    log_path = work_dir / "train.jsonl"
    step, elapsed = load_checkpoint(torch, ckpt, net, opt, TokenTrainError) if resume else (0, 0.0)
    paths = sorted(data_dir.glob("shard-*.npz"))
    stream = batches(paths, config.batch, seed * 7919 + step, config.window)
    if not paths:
        raise TokenTrainError(f"{data_dir}: no data shards; render some with --shards N")
    start = time.perf_counter() - elapsed

    def lr_at(s: int) -> float:
        return cosine_lr(config.lr, s, config.steps, time.perf_counter() - start, config.max_minutes, warmup=50)

    net.train()
    bar = tqdm(total=config.steps, initial=step, desc="train tokens", unit="step", disable=not progress,
               mininterval=10.0)
    loss_avg = float("nan")
    with log_path.open("a", encoding="utf-8") as log:
        while step < config.steps and (time.perf_counter() - start) < config.max_minutes * 60:
            x, heat = (torch.from_numpy(a) for a in next(stream))
            for g in opt.param_groups:
                g["lr"] = lr_at(step)
            loss = focal_loss(net(x), heat)
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(net.parameters(), 5.0)
            opt.step()
            step += 1
            v = loss.item()
            loss_avg = v if math.isnan(loss_avg) else 0.97 * loss_avg + 0.03 * v
            bar.update(1)
            bar.set_postfix(loss=f"{loss_avg:.3f}")
            if step % 20 == 0:
                log.write(json.dumps({"step": step, "loss": round(v, 4), "lr": lr_at(step),
                                      "seconds": round(time.perf_counter() - start, 1)}) + "\n")
                log.flush()
            if step % config.checkpoint_every == 0:
                save_checkpoint(torch, ckpt, net, opt, step, time.perf_counter() - start)
                # Shards rendered beside the run join it.
                now = sorted(data_dir.glob("shard-*.npz"))
                if len(now) > len(paths):
                    paths = now
                    stream = batches(paths, config.batch, seed * 7919 + step, config.window)
    bar.close()
    seconds = time.perf_counter() - start
    save_checkpoint(torch, ckpt, net, opt, step, seconds)
    die_net = train_die(work_dir, data_dir, seed=seed, threads=config.threads, progress=progress)
    diff = export_onnx(net, die_net, out)
    params = sum(p.numel() for p in net.parameters()) + sum(p.numel() for p in die_net.parameters())
    return TrainResult(out=out, steps=step, seconds=seconds, parameters=int(params),
                       final_loss=loss_avg, export_max_diff=diff, log=log_path)


def _joined(net: Any, die_net: Any) -> Any:
    torch = _torch()

    class Joined(torch.nn.Module):  # type: ignore[misc, name-defined]
        def __init__(self) -> None:
            torch.nn.Module.__init__(self)
            self.net, self.die_net = net, die_net

        def forward(self, crop: Any, die: Any) -> Any:
            return self.net(crop), self.die_net(die)

    return Joined()


def export_onnx(net: Any, die_net: Any, out: Path) -> float:
    """Export the heatmap net and the die-face classifier as one ONNX model at `out` (inputs
    `crop` and `die`, outputs `heatmap` and `die_logits`; opset 17, dynamic batch, metadata)
    and return the largest difference between onnxruntime and torch on random input (raises
    above 1e-4)."""
    torch = _torch()
    import onnx
    import onnxruntime as ort

    net.eval()
    die_net.eval()
    joined = _joined(net, die_net).eval()
    out.parent.mkdir(parents=True, exist_ok=True)
    gen = torch.Generator().manual_seed(0)
    x = torch.rand(2, 3, CROP_PX, CROP_PX, generator=gen)
    d = torch.rand(3, 3, DIE_PATCH_PX, DIE_PATCH_PX, generator=gen)
    tmp = out.with_suffix(".tmp.onnx")
    torch.onnx.export(joined, (x, d), str(tmp), input_names=["crop", "die"], output_names=["heatmap", "die_logits"],
                      dynamic_axes={"crop": {0: "batch"}, "heatmap": {0: "batch"}, "die": {0: "dice"},
                                    "die_logits": {0: "dice"}}, opset_version=17, dynamo=False)
    model = onnx.load(str(tmp))
    meta = {"cardtrack.model": "tokens", "classes": json.dumps(list(CLASSES)), "px_per_mm": str(PX_PER_MM),
            "stride": str(STRIDE), "crop_mm": str(CROP_MM), "die_patch_mm": str(DIE_PATCH_MM)}
    for k, v in meta.items():
        entry = model.metadata_props.add()
        entry.key, entry.value = k, v
    onnx.save(model, str(tmp))
    with torch.no_grad():
        ref = [t.numpy() for t in joined(x, d)]
    got = ort.InferenceSession(str(tmp), providers=["CPUExecutionProvider"]).run(
        None, {"crop": x.numpy(), "die": d.numpy()})
    diff = max(float(np.abs(a - b).max()) for a, b in zip(ref, got, strict=True))
    if diff > 1e-4:
        raise TokenTrainError(f"{tmp}: onnxruntime differs from torch by {diff:.2e} (> 1e-4)")
    tmp.replace(out)
    return diff


# --- evaluation (no torch) -------------------------------------------------------------------


def evaluate_crops(model_path: Path, paths: Sequence[Path], *, tolerance_px: float = 10.0) -> dict[str, Any]:
    """Per-crop exact-count rate (all token kinds and the die face right) on shards."""
    from vision.tokens import TokenConfig, TokenModel, decode_peaks

    model = TokenModel(model_path)
    cfg = TokenConfig()
    crops_total = exact = die_total = die_ok = 0
    for p in paths:
        crops, labels = load_shard(p)
        heats = model.heatmaps(crops)
        for heat, lab in zip(heats, labels, strict=True):
            inner = lab[(lab[:, 1] >= 0) & (lab[:, 1] < CROP_PX) & (lab[:, 2] >= 0) & (lab[:, 2] < CROP_PX)]
            found = decode_peaks(heat, model.classes, cfg)
            want = sorted(CLASSES[int(c)] for c in inner[:, 0])
            got = sorted(k for k, x, y, _ in found if 8 <= x < CROP_PX - 8 and 8 <= y < CROP_PX - 8)
            edge = [CLASSES[int(c)] for c, x, y in inner if not (8 <= x < CROP_PX - 8 and 8 <= y < CROP_PX - 8)]
            crops_total += 1
            exact += int(want == got or (bool(edge) and set(got) <= set(want)))
            for c, _x, _y in inner:
                if CLASSES[int(c)].startswith(DIE_PREFIX):
                    die_total += 1
                    die_ok += int(CLASSES[int(c)] in got)
    return {"crops": crops_total, "exact_rate": exact / max(1, crops_total),
            "dice": die_total, "die_rate": die_ok / max(1, die_total)}


def _frames_of(clip: Path, wanted: set[int], media: Any) -> Iterator[tuple[int, np.ndarray]]:
    """The clip's frames whose index is in `wanted` (video read in order, or image files)."""
    import cv2

    if media.kind == "video":
        cap = cv2.VideoCapture(str(clip / media.path))
        try:
            i = 0
            last = max(wanted, default=-1)
            while i <= last:
                ok, img = cap.read()
                if not ok:
                    break
                if i in wanted:
                    yield i, img
                i += 1
        finally:
            cap.release()
        return
    for i in sorted(wanted):
        img = cv2.imread(str(clip / media.path / f"{i:06d}.jpg"))
        if img is not None:
            yield i, img


def evaluate_clip(model_path: Path, clip: Path, *, progress: bool = True) -> dict[str, Any]:
    """Counts read at each checkpoint of a rendered clip against its truth: the share of
    (checkpoint, token zone) pairs counted exactly, the share of checkpoints with every counter
    right, and the die read rate over checkpoints where a die lies on the table."""
    from calibration.layout import build_layout
    from vision.pipeline import profile_from_truth
    from vision.synth.truth import load_truth
    from vision.tokens import TokenCounter, TokenModel

    truth_path = clip / "truth.json" if (clip / "truth.json").is_file() else clip / "truth.json.gz"
    truth = load_truth(truth_path)
    if truth.clip.game is None or truth.clip.players is None:
        raise TokenTrainError(f"{truth_path}: the clip names no game or player count")
    profile = profile_from_truth(truth, source=str(truth_path))
    layout = build_layout(truth.clip.game, truth.clip.players, profile.table_mm)
    counter = TokenCounter(model=TokenModel(model_path), layout=layout, table_to_image=profile.table_to_image)
    cps = {cp.frame: cp for cp in truth.checkpoints if cp.counts}
    zones_total = zones_ok = cps_ok = die_total = die_ok = 0
    misses: list[dict[str, Any]] = []
    bar = tqdm(total=len(cps), desc=f"tokens {clip.name}", unit="checkpoint", disable=not progress)
    for frame, image in _frames_of(clip, set(cps), truth.clip.media):
        want = cps[frame].counts
        got = counter.counts(image)
        all_ok = True
        for zone, n in want.items():
            if zone == "die":
                if n > 0:
                    die_total += 1
                    die_ok += int(got.get(zone) == n)
                all_ok &= got.get(zone) == n
                continue
            zones_total += 1
            ok = got.get(zone) == n
            zones_ok += int(ok)
            all_ok &= ok
            if not ok:
                misses.append({"frame": frame, "zone": zone, "truth": n, "read": got.get(zone)})
        cps_ok += int(all_ok)
        bar.update(1)
    bar.close()
    return {"clip": clip.name, "players": truth.clip.players, "checkpoints": len(cps),
            "zone_counts": zones_total, "zone_exact_rate": zones_ok / max(1, zones_total),
            "checkpoint_exact_rate": cps_ok / max(1, len(cps)), "die_checkpoints": die_total,
            "die_rate": die_ok / max(1, die_total) if die_total else None, "misses": misses[:20]}


# --- the die-face classifier -----------------------------------------------------------------

DIE_MARGIN_PX = 6  # room around a die patch for the training jitter


def die_patches(paths: Sequence[Path]) -> tuple[np.ndarray, np.ndarray]:
    """Every die of the shards as a patch `DIE_PATCH_PX + 2*DIE_MARGIN_PX` square around the
    centre of its top face (crop pixels), and its face (0..5)."""
    import cv2

    size = DIE_PATCH_PX + 2 * DIE_MARGIN_PX
    patches, faces = [], []
    for p in paths:
        crops, labels = load_shard(p)
        for crop, lab in zip(crops, labels, strict=True):
            for c, x, y in lab:
                name = CLASSES[int(c)]
                if not name.startswith(DIE_PREFIX) or not (8 <= x < CROP_PX - 8 and 8 <= y < CROP_PX - 8):
                    continue
                patches.append(cv2.getRectSubPix(crop, (size, size), (float(x) - 0.5, float(y) - 0.5)))
                faces.append(int(name[len(DIE_PREFIX):]) - 1)
    if not patches:
        raise TokenTrainError("no die in the tokens training data: render more shards")
    return np.stack(patches), np.asarray(faces, np.int64)


def build_die_net() -> Any:
    """DieNet: four conv blocks with pooling between, global average, six face logits."""
    torch = _torch()
    nn = torch.nn

    def block(cin: int, cout: int) -> Any:
        return nn.Sequential(nn.Conv2d(cin, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout),
                             nn.ReLU(inplace=True))

    return nn.Sequential(block(3, 16), nn.MaxPool2d(2), block(16, 32), nn.MaxPool2d(2), block(32, 48),
                         nn.MaxPool2d(2), block(48, 64), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(64, 6))


def train_die(work_dir: Path, data_dir: Path, *, seed: int = 0, steps: int = 600, batch: int = 48,
              threads: int = 2, progress: bool = True) -> Any:
    """Train the die-face classifier on the dice of the shards (resumable); returns the net."""
    torch = _torch()
    torch.set_num_threads(threads)
    torch.manual_seed(seed)
    patches, faces = die_patches(sorted(data_dir.glob("shard-*.npz")))
    net = build_die_net()
    opt = torch.optim.AdamW(net.parameters(), lr=3e-3, weight_decay=1e-4)
    ckpt = work_dir / "die.pt"
    step = 0
    if ckpt.is_file():
        state = torch.load(ckpt, map_location="cpu", weights_only=False)
        net.load_state_dict(state["net"])
        opt.load_state_dict(state["opt"])
        step = int(state["step"])
    rng = np.random.default_rng(seed * 31 + step)
    net.train()
    for s in tqdm(range(step, steps), desc="train die faces", unit="step", disable=not progress, mininterval=10.0):
        idx = rng.integers(0, len(patches), batch)
        xs = []
        for i in idx:
            dx, dy = rng.integers(0, 2 * DIE_MARGIN_PX + 1, 2)
            img = patches[i][dy : dy + DIE_PATCH_PX, dx : dx + DIE_PATCH_PX]
            img = np.rot90(img, int(rng.integers(4)))
            if rng.random() < 0.5:
                img = img[:, ::-1]
            img = np.clip(img.astype(np.float32) * rng.uniform(0.8, 1.2) + rng.uniform(-15, 15), 0, 255)
            xs.append(img)
        x = torch.from_numpy(np.ascontiguousarray(np.stack(xs).transpose(0, 3, 1, 2)) / 255.0).float()
        y = torch.from_numpy(faces[idx])
        for g in opt.param_groups:
            g["lr"] = 3e-3 * 0.5 * (1 + math.cos(math.pi * s / steps))
        loss = torch.nn.functional.cross_entropy(net(x), y, label_smoothing=0.05)
        opt.zero_grad()
        loss.backward()
        opt.step()
        if (s + 1) % 100 == 0:
            tmp = ckpt.with_suffix(".tmp")
            torch.save({"net": net.state_dict(), "opt": opt.state_dict(), "step": s + 1}, tmp)
            tmp.replace(ckpt)
    net.eval()
    return net


def export_from_checkpoints(work_dir: Path, out: Path, width: int = 32) -> float:
    """Export the model from a run's checkpoints (`checkpoint.pt`, `die.pt`) in `work_dir`."""
    torch = _torch()
    net, die_net = build_net(width), build_die_net()
    for module, name in ((net, "checkpoint.pt"), (die_net, "die.pt")):
        path = work_dir / name
        if not path.is_file():
            raise TokenTrainError(f"{path}: no checkpoint; train first")
        module.load_state_dict(torch.load(path, map_location="cpu", weights_only=False)["net"])
    return export_onnx(net, die_net, out)
