"""The identifier's training classes and batches: every class is one face seen one way up.

Faces come from the proxy art of the training games (`TRAIN_GAMES`; Minecraft: Explorers is
left out entirely, so its numbers measure a deck the model never saw) and from a family of
procedural random designs (`vision.synth.designs`), a share of which get a *sibling*: a
near-copy with one small local change, so the model learns to tell apart faces that differ by a
badge or a numeral. A face that looks different turned 180° gives two classes (0° and 180°),
because orientation is game information; a face that looks the same both ways gives one class
and is shown either way up. Design families are numbered from the seed so that training,
calibration and evaluation never share a design: training uses `TRAIN_FAMILY + seed`,
calibration `CALIBRATION_FAMILY + seed`, evaluation `EVAL_FAMILY + seed`. Batch `step` of a
run is drawn from its own generator `(seed, step)`, so a resumed run sees the same batches.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Final

import numpy as np
from tqdm import tqdm

from vision.art.pack import proxy_pack
from vision.synth.designs import random_design
from vision.train.augment import (
    DEFAULT_CROPS,
    SCENE_CROPS,
    CropConfig,
    is_symmetric,
    master,
    rotate_180,
    sibling,
    webcam_crop,
)
from vision.train.scenes import ScenePool

TRAIN_GAMES: Final = ("minecraft-card-game", "minecraft-mk1", "angry-birds-power-cards")
HELD_OUT_GAMES: Final = ("minecraft-explorers",)
TRAIN_FAMILY: Final = 1_000_000
CALIBRATION_FAMILY: Final = 2_000_000
EVAL_FAMILY: Final = 3_000_000
POOL_VERSION: Final = 2


@dataclass(frozen=True, slots=True, kw_only=True)
class PoolConfig:
    """Which faces become classes, and how often each source is drawn."""

    games: tuple[str, ...] = TRAIN_GAMES
    designs: int = 3000
    max_siblings: int = 2  # each design gets up to this many siblings ...
    sibling_fraction: float = 0.5  # ... each one with this probability
    proxy_share: float = 0.25  # of the samples in a batch drawn from the proxy decks

    def key(self, family: int) -> str:
        text = json.dumps({"v": POOL_VERSION, "family": family, **asdict(self)}, sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()[:16]


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class ClassPool:
    """Masters (n, H, W, 3) and the classes over them (a master index and a turn each)."""

    masters: np.ndarray
    master_of: np.ndarray  # (classes,) int: which master a class shows
    rotated: np.ndarray  # (classes,) bool: the class is the master turned 180°
    symmetric: np.ndarray  # (classes,) bool: one class for both turns
    names: tuple[str, ...]  # per class: "<source>:<face id>@0" / "@180" / "@any"
    proxy_classes: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    design_classes: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))

    @property
    def num_classes(self) -> int:
        return len(self.names)

    def image(self, cls: int, turn_symmetric: bool = False) -> np.ndarray:
        """The master image of a class, turned as the class says."""
        m = self.masters[int(self.master_of[cls])]
        return rotate_180(m) if (self.rotated[cls] or turn_symmetric) else m


def design_masters(family: int, count: int, sibling_fraction: float, *, max_siblings: int = 1,
                   progress: bool = False, desc: str = "designs") -> list[tuple[str, np.ndarray]]:
    """(name, master) of `count` random designs of a family and their siblings (up to
    `max_siblings` per design, each with probability `sibling_fraction`)."""
    out: list[tuple[str, np.ndarray]] = []
    rng = np.random.default_rng([family, 0x51B])
    for i in tqdm(range(count), desc=desc, unit="design", disable=not progress):
        design = random_design(family, i)
        m = master(design.image)
        out.append((f"design:{design.face_id}", m))
        for k in range(max_siblings):
            if rng.random() < sibling_fraction:
                out.append((f"design:{design.face_id}~sibling{k}", sibling(m, rng)))
    return out


def proxy_masters(games: tuple[str, ...], *, progress: bool = False) -> list[tuple[str, np.ndarray]]:
    """(name, master) of every face of the proxy art of `games`."""
    out: list[tuple[str, np.ndarray]] = []
    for game in games:
        pack = proxy_pack(game, progress=progress)
        out.extend((f"{game}:{fid}", master(pack.image(fid))) for fid in pack.faces)
    return out


def pool_from_masters(named: list[tuple[str, np.ndarray]]) -> ClassPool:
    """Classes over masters: two per asymmetric face (0°, 180°), one per symmetric face."""
    masters = np.stack([m for _, m in named])
    master_of: list[int] = []
    rotated: list[bool] = []
    symmetric: list[bool] = []
    names: list[str] = []
    proxy: list[int] = []
    designs: list[int] = []
    for i, (name, m) in enumerate(named):
        sym = is_symmetric(m)
        turns = ((False, "@any"),) if sym else ((False, "@0"), (True, "@180"))
        for rot, tag in turns:
            (designs if name.startswith("design:") else proxy).append(len(names))
            master_of.append(i)
            rotated.append(rot)
            symmetric.append(sym)
            names.append(name + tag)
    return ClassPool(
        masters=masters,
        master_of=np.array(master_of, np.int64),
        rotated=np.array(rotated, bool),
        symmetric=np.array(symmetric, bool),
        names=tuple(names),
        proxy_classes=np.array(proxy, np.int64),
        design_classes=np.array(designs, np.int64),
    )


def cache_root() -> Path:
    base = os.environ.get("CARDTRACK_CACHE")
    return (Path(base).expanduser() if base else Path.home() / ".cache" / "cardtrack") / "train"


def build_pool(config: PoolConfig, family: int, *, cache: bool = True,
               progress: bool = False) -> ClassPool:
    """The training pool of `config` with designs of `family`, cached on disk by its key."""
    path = cache_root() / f"identifier-pool-{config.key(family)}.npz"
    if cache and path.is_file():
        try:
            with np.load(path, allow_pickle=False) as data:
                named = list(zip(data["names"].tolist(), data["masters"], strict=True))
            return pool_from_masters(named)
        except (OSError, ValueError, KeyError):
            path.unlink(missing_ok=True)
    named = proxy_masters(config.games, progress=progress)
    named += design_masters(family, config.designs, config.sibling_fraction,
                            max_siblings=config.max_siblings, progress=progress)
    if cache:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp.npz")
        np.savez(tmp, names=np.array([n for n, _ in named]), masters=np.stack([m for _, m in named]))
        os.replace(tmp, path)
    return pool_from_masters(named)


def sample_batch(pool: ClassPool, rng: np.random.Generator, size: int, *,
                 proxy_share: float, crops: CropConfig = DEFAULT_CROPS,
                 scenes: ScenePool | None = None, scene_share: float = 0.0,
                 ) -> tuple[list[np.ndarray], np.ndarray]:
    """`size` spoiled crops and their class labels; with `scenes`, a `scene_share` of them are
    cards cut out of rendered scenes at the finder's corners instead (`vision.train.scenes`),
    spoiled a little more (`SCENE_CROPS`)."""
    labels = np.empty(size, np.int64)
    images: list[np.ndarray] = []
    for k in range(size):
        if scenes is not None and scene_share > 0 and len(scenes) and rng.random() < scene_share:
            i = int(rng.integers(len(scenes)))
            images.append(webcam_crop(np.asarray(scenes.crops[i]), rng, SCENE_CROPS))
            labels[k] = scenes.labels[i]
            continue
        source = pool.proxy_classes if (len(pool.proxy_classes) and rng.random() < proxy_share) \
            else pool.design_classes
        if not len(source):
            source = pool.proxy_classes
        cls = int(source[int(rng.integers(len(source)))])
        turn = bool(pool.symmetric[cls] and rng.random() < 0.5)
        other = None
        if crops.neighbour_probability > 0:  # drawn only then: a mix without keeps its crops
            other = pool.image(int(source[int(rng.integers(len(source)))]), bool(rng.random() < 0.5))
        images.append(webcam_crop(pool.image(cls, turn), rng, crops, other))
        labels[k] = cls
    return images, labels


def batch_rng(seed: int, step: int) -> np.random.Generator:
    """The generator of batch `step` of a run with `seed`."""
    return np.random.default_rng([seed, step, 0xBA7C])
