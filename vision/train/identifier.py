"""Training the card identifier with torch, and exporting it to ONNX (imported only by
`cardtrack train`; torch is the optional `train` extra).

The network is a small plain CNN (seven 3×3 convolutions with batch norm and ReLU, four of them
stride 2; 0.64 M parameters, 34 M multiply-adds per crop) on the 80 × 112 input of
`vision.preprocess`. Its 160-channel 5 × 7 map feeds the embedding twice: reduced by a 1×1
convolution and *flattened* (where things are on the card, so a 180° turn is plain to see) and
averaged over the map (what is on the card wherever it sits, which tolerates imperfect
corners); a linear layer maps both to a 128-d embedding, L2-normalised. Training is metric
learning by classification: a cosine classifier with an additive margin (CosFace: logits
`s · (cos θ − m·[target])`) over every class of `vision.train.data` (a face one way up). Batches
are drawn by `vision.train.data` from the run's seed and the step number, so a run resumed from
a checkpoint sees the same batches; a checkpoint is written every `checkpoint_every` steps.
After training, the calibration of the scores is fitted (`vision.train.calibrate`), and the
model is exported to ONNX (opset 17, dynamic batch) with the calibration and the preprocessing
version in its metadata, then checked against torch.
"""

from __future__ import annotations

import json
import math
import os
import time
import warnings
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Final

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn
from tqdm import tqdm

from vision.identify import META_PREFIX, Calibration
from vision.preprocess import INPUT_HEIGHT, INPUT_WIDTH, PREPROCESS_VERSION, preprocess_batch
from vision.train.augment import DEFAULT_CROPS, OPTIONAL_EFFECTS, CropConfig
from vision.train.data import (
    TRAIN_FAMILY,
    ClassPool,
    PoolConfig,
    batch_rng,
    build_pool,
    cache_root,
    sample_batch,
)
from vision.train.scenes import SCENE_SEED, build_scene_pool, load_scene_pool

OPSET: Final = 17
CONV_SPEC: Final = ((16, 2), (32, 2), (48, 1), (64, 2), (96, 1), (128, 2), (160, 1))


class TrainError(ValueError):
    """A training request that cannot run as given (bad options, a foreign checkpoint)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class TrainConfig:
    """Everything that shapes a training run (the seed comes separately)."""

    steps: int = 4800
    batch: int = 128
    lr: float = 2e-3
    weight_decay: float = 1e-4
    warmup: int = 150
    scale: float = 20.0
    margin: float = 0.2
    dim: int = 128
    head_channels: int = 48
    conv: tuple[tuple[int, int], ...] = CONV_SPEC
    checkpoint_every: int = 250
    log_every: int = 25
    threads: int = 2
    workers: int = 1
    pool: PoolConfig = field(default_factory=PoolConfig)
    crops: CropConfig = DEFAULT_CROPS
    scene_share: float = 0.0  # of a batch: cards cut from rendered scenes at the finder's corners
    scene_shots: int = 500  # shots of games in play per training game, for those cards ...
    scene_stills: int = 1000  # ... and stills of the pool's random designs

    def model_config(self) -> dict[str, Any]:
        return {"dim": self.dim, "head_channels": self.head_channels, "conv": [list(c) for c in self.conv]}


class IdentifierNet(nn.Module):
    """Crops (n, 3, 112, 80) -> unit embeddings (n, dim)."""

    def __init__(self, *, dim: int = 128, head_channels: int = 48,
                 conv: Sequence[Sequence[int]] = CONV_SPEC) -> None:
        super().__init__()
        layers: list[nn.Module] = []
        cin = 3
        h, w = INPUT_HEIGHT, INPUT_WIDTH
        for cout, stride in conv:
            layers += [nn.Conv2d(cin, cout, 3, stride, 1, bias=False), nn.BatchNorm2d(cout),
                       nn.ReLU(inplace=True)]
            cin = cout
            h, w = (h - 1) // stride + 1, (w - 1) // stride + 1
        self.features = nn.Sequential(*layers)
        self.reduce = nn.Sequential(nn.Conv2d(cin, head_channels, 1, bias=False),
                                    nn.BatchNorm2d(head_channels), nn.ReLU(inplace=True))
        self.embed = nn.Linear(head_channels * h * w + cin, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        z = self.features(x)
        # Where things are on the card (the flattened map) and what is on it, wherever it is
        # (the global average): the second tolerates imperfect corners.
        layout = torch.flatten(self.reduce(z), 1)
        content = z.mean(dim=(2, 3))
        return F.normalize(self.embed(torch.cat([layout, content], dim=1)), dim=1)


class CosFaceHead(nn.Module):
    """Cosine classifier with an additive margin on the target class."""

    def __init__(self, dim: int, classes: int, scale: float, margin: float) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.randn(classes, dim) * 0.01)
        self.scale = scale
        self.margin = margin

    def forward(self, emb: torch.Tensor, labels: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        cos = emb @ F.normalize(self.weight, dim=1).T
        onehot = F.one_hot(labels, cos.shape[1]).to(cos.dtype)
        logits = self.scale * (cos - self.margin * onehot)
        return F.cross_entropy(logits, labels), cos


@dataclass(frozen=True, slots=True, kw_only=True)
class TrainResult:
    """What a finished run produced and measured."""

    out: Path
    steps: int
    seconds: float
    final_loss: float
    final_accuracy: float
    export_max_diff: float
    calibration: Calibration
    classes: int
    parameters: int
    log: Path


class _Batches(torch.utils.data.IterableDataset):  # type: ignore[type-arg]
    """Batches `start..steps-1` of a run, each from its own generator (seed, step)."""

    def __init__(self, pool: ClassPool, seed: int, start: int, steps: int, config: TrainConfig,
                 scenes: Path | None = None) -> None:
        super().__init__()
        self.pool, self.seed, self.start, self.steps, self.config = pool, seed, start, steps, config
        self.scenes = scenes  # the scene pool's crops file, mapped by each process that draws

    def __iter__(self) -> Iterator[tuple[torch.Tensor, torch.Tensor]]:
        import cv2

        cv2.setNumThreads(1)
        info = torch.utils.data.get_worker_info()
        if info is not None:
            torch.set_num_threads(1)
        scenes = load_scene_pool(self.scenes) if self.scenes is not None else None
        for step in range(self.start, self.steps):
            images, labels = sample_batch(self.pool, batch_rng(self.seed, step), self.config.batch,
                                          proxy_share=self.config.pool.proxy_share,
                                          crops=self.config.crops, scenes=scenes,
                                          scene_share=self.config.scene_share)
            yield torch.from_numpy(preprocess_batch(images)), torch.from_numpy(labels)


def _lr_at(step: int, config: TrainConfig) -> float:
    if step < config.warmup:
        return config.lr * (step + 1) / config.warmup
    t = (step - config.warmup) / max(1, config.steps - config.warmup)
    return config.lr * 0.5 * (1.0 + math.cos(math.pi * min(1.0, t)))


def _save(path: Path, state: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    torch.save(state, tmp)
    os.replace(tmp, path)


def _without_off_effects(record: Any) -> Any:
    """`record` (a config record, or whatever a checkpoint holds in its place) with the fields
    of the crop effects that are off taken out, in place; returned for convenience."""
    crops = record.get("crops") if isinstance(record, dict) else None
    if isinstance(crops, dict):
        for probability, fields in OPTIONAL_EFFECTS:
            if not crops.get(probability):
                for key in (probability, *fields):
                    crops.pop(key, None)
    return record


def _config_record(config: TrainConfig, seed: int) -> dict[str, Any]:
    """What a checkpoint must have been made with to be resumed: every option that shapes the
    batches or the model, less those that may change on resume and the fields of crop effects
    that are off (`vision.train.augment.OPTIONAL_EFFECTS`: a run without one is the run made
    before it existed, and resumes its checkpoints)."""
    record = asdict(config)
    record["seed"] = seed
    for key in ("steps", "checkpoint_every", "log_every", "threads", "workers"):
        record.pop(key)  # may change on resume
    if not config.scene_share:  # no scene crops: the run made before they existed
        for key in ("scene_share", "scene_shots", "scene_stills"):
            record.pop(key)
    _without_off_effects(record)
    out: dict[str, Any] = json.loads(json.dumps(record))
    return out


def train_identifier(
    out: str | Path,
    *,
    seed: int = 0,
    config: TrainConfig = TrainConfig(),
    work_dir: str | Path,
    resume: str | Path | None = None,
    progress: bool = True,
    calibrate: Callable[[IdentifierNet, int], Calibration] | None = None,
) -> TrainResult:
    """Train, calibrate, export to `out` and verify; checkpoints and the log go to `work_dir`.

    `calibrate(model, seed)` fits the score calibration on held-out data (the default is
    `vision.train.calibrate.fit_for_model`).
    """
    if config.steps < 1 or config.batch < 2:
        raise TrainError(f"--steps must be at least 1 and the batch at least 2 (got {config.steps}, {config.batch})")
    work = Path(work_dir)
    work.mkdir(parents=True, exist_ok=True)
    log_path = work / "train.log"
    torch.manual_seed(seed)
    torch.set_num_threads(max(1, config.threads))
    pool = build_pool(config.pool, TRAIN_FAMILY + seed, progress=progress)
    scenes = None
    if config.scene_share > 0:
        from vision.finder import DEFAULT_MODEL as FINDER_MODEL

        scenes = build_scene_pool(
            pool.names, games=config.pool.games, family=TRAIN_FAMILY + seed,
            designs=config.pool.designs, shots=config.scene_shots, stills=config.scene_stills,
            seed=SCENE_SEED + seed, finder_path=FINDER_MODEL, root=cache_root(), progress=progress)
    model = IdentifierNet(dim=config.dim, head_channels=config.head_channels, conv=config.conv)
    head = CosFaceHead(config.dim, pool.num_classes, config.scale, config.margin)
    model = model.to(memory_format=torch.channels_last)  # type: ignore[call-overload]
    decay = [p for n, p in model.named_parameters() if p.ndim > 1]
    no_decay = [p for n, p in model.named_parameters() if p.ndim <= 1]
    optimizer = torch.optim.AdamW(
        [{"params": decay, "weight_decay": config.weight_decay},
         {"params": no_decay, "weight_decay": 0.0},
         {"params": head.parameters(), "weight_decay": 0.0}],
        lr=config.lr,
    )
    start, elapsed = 0, 0.0
    record = _config_record(config, seed)
    if resume is not None:
        ckpt_path = Path(resume)
        try:
            state = torch.load(ckpt_path, map_location="cpu", weights_only=False)
        except (OSError, RuntimeError, EOFError) as exc:
            raise TrainError(f"{ckpt_path}: cannot read the checkpoint ({exc}); pass a file written by this command") from None
        if _without_off_effects(state.get("config")) != record or state.get("classes") != pool.num_classes:
            raise TrainError(
                f"{ckpt_path}: the checkpoint was made with other options or seed; resume with the "
                "same --seed and options, or start afresh without --resume"
            )
        model.load_state_dict(state["model"])
        head.load_state_dict(state["head"])
        optimizer.load_state_dict(state["optimizer"])
        start, elapsed = int(state["step"]), float(state["elapsed"])
    params = sum(p.numel() for p in model.parameters())

    loader = torch.utils.data.DataLoader(
        _Batches(pool, seed, start, config.steps, config, scenes), batch_size=None,
        num_workers=config.workers, prefetch_factor=4 if config.workers else None,
        # A forked worker can inherit OpenCV's and torch's thread pools mid-lock: spawn it.
        multiprocessing_context="spawn" if config.workers else None,
    )
    bar = tqdm(total=config.steps, initial=start, desc="training identifier", unit="step",
               disable=not progress)
    model.train()
    loss_avg, acc_avg = float("nan"), float("nan")
    t0 = time.perf_counter() - elapsed
    last_log = time.perf_counter()
    step = start
    with log_path.open("a", encoding="utf-8") as log:
        log.write(json.dumps({"event": "start", "step": start, "classes": pool.num_classes,
                              "parameters": params, "config": record}) + "\n")
        for x, y in loader:
            for group in optimizer.param_groups:
                group["lr"] = _lr_at(step, config)
            x = x.contiguous(memory_format=torch.channels_last)
            emb = model(x)
            loss, cos = head(emb, y)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            acc = float((cos.argmax(1) == y).float().mean())
            lv = float(loss.detach())
            loss_avg = lv if math.isnan(loss_avg) else 0.95 * loss_avg + 0.05 * lv
            acc_avg = acc if math.isnan(acc_avg) else 0.95 * acc_avg + 0.05 * acc
            step += 1
            bar.update(1)
            bar.set_postfix(loss=f"{loss_avg:.3f}", acc=f"{acc_avg:.3f}")
            if step % config.log_every == 0 or step == config.steps:
                now = time.perf_counter()
                log.write(json.dumps({
                    "step": step, "loss": round(loss_avg, 4), "accuracy": round(acc_avg, 4),
                    "lr": round(_lr_at(step - 1, config), 6),
                    "crops_per_second": round(config.log_every * config.batch / max(now - last_log, 1e-9), 1),
                    "elapsed_s": round(now - t0, 1)}) + "\n")
                log.flush()
                last_log = now
            if step % config.checkpoint_every == 0 or step == config.steps:
                _save(work / "checkpoint.pt", {
                    "step": step, "elapsed": time.perf_counter() - t0, "config": record,
                    "classes": pool.num_classes, "model": model.state_dict(),
                    "head": head.state_dict(), "optimizer": optimizer.state_dict()})
    bar.close()
    seconds = time.perf_counter() - t0

    model = model.to(memory_format=torch.contiguous_format).eval()
    if calibrate is None:
        from vision.train.calibrate import fit_for_model

        calibration = fit_for_model(model, seed, progress=progress)
    else:
        calibration = calibrate(model, seed)
    meta = {
        f"{META_PREFIX}preprocess": PREPROCESS_VERSION,
        f"{META_PREFIX}seed": str(seed),
        f"{META_PREFIX}steps": str(config.steps),
        f"{META_PREFIX}train_seconds": f"{seconds:.0f}",
        f"{META_PREFIX}model": json.dumps(config.model_config()),
        **calibration.to_metadata(),
    }
    out_path = Path(out)
    export_onnx(model, out_path, meta)
    diff = verify_export(model, out_path, seed=seed)
    with log_path.open("a", encoding="utf-8") as log:
        log.write(json.dumps({"event": "done", "step": step, "seconds": round(seconds, 1),
                              "export_max_diff": diff, "calibration": asdict(calibration),
                              "out": str(out_path)}) + "\n")
    return TrainResult(out=out_path, steps=step, seconds=seconds, final_loss=loss_avg,
                       final_accuracy=acc_avg, export_max_diff=diff, calibration=calibration,
                       classes=pool.num_classes, parameters=params, log=log_path)


def torch_embed(model: IdentifierNet, batch: np.ndarray, chunk: int = 256) -> np.ndarray:
    """Embeddings of preprocessed crops with the torch model (eval mode)."""
    model.eval()
    outs = []
    with torch.no_grad():
        for i in range(0, len(batch), chunk):
            outs.append(model(torch.from_numpy(np.ascontiguousarray(batch[i:i + chunk]))).numpy())
    return np.concatenate(outs) if outs else np.zeros((0, model.embed.out_features), np.float32)


def export_onnx(model: IdentifierNet, path: Path, metadata: dict[str, str]) -> None:
    """Write the model as ONNX (opset 17, input `crops` (n, 3, 112, 80), output `embeddings`,
    and the per-cell outputs of `vision.train.cells`)."""
    import onnx

    from vision.train.cells import add_cell_outputs

    model.eval()
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    dummy = torch.zeros(1, 3, INPUT_HEIGHT, INPUT_WIDTH)
    with warnings.catch_warnings():
        # The TorchScript exporter (dynamo=False) is deprecated but needs no extra package and
        # gives a plain opset-17 graph; the export is checked against torch below.
        warnings.simplefilter("ignore", DeprecationWarning)
        torch.onnx.export(
            model, (dummy,), str(tmp), input_names=["crops"], output_names=["embeddings"],
            dynamic_axes={"crops": {0: "n"}, "embeddings": {0: "n"}}, opset_version=OPSET,
            dynamo=False,
        )
    proto = onnx.load(str(tmp))
    del proto.metadata_props[:]
    for key, value in metadata.items():
        entry = proto.metadata_props.add()
        entry.key, entry.value = key, value
    proto.doc_string = "cardtrack card identifier: rectified card crop -> unit embedding"
    # The per-cell terms that read the visible part of a covered card (`vision.train.cells`).
    proto = add_cell_outputs(proto)
    onnx.checker.check_model(proto)
    onnx.save(proto, str(tmp))
    os.replace(tmp, path)


def verify_export(model: IdentifierNet, path: Path, *, seed: int = 0, n: int = 6) -> float:
    """Largest absolute difference between onnxruntime and torch on a few random inputs."""
    import onnxruntime as ort

    rng = np.random.default_rng([seed, 0xE4])
    x = rng.normal(0.0, 1.0, (n, 3, INPUT_HEIGHT, INPUT_WIDTH)).astype(np.float32)
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    got = session.run(None, {session.get_inputs()[0].name: x})[0]
    want = torch_embed(model, x)
    diff = float(np.abs(got - want).max())
    if not diff <= 1e-4:
        raise TrainError(f"{path}: onnxruntime and torch disagree by {diff:.2e} (> 1e-4); the export is broken")
    return diff
