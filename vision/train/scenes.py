"""Cards cut out of rendered scenes, as the live pipeline cuts them, for training and measuring
the identifier.

`scene_cuts` cuts every card of rendered shots (stills of random arrangements, `stills_shots`,
or shots of games in play laid out as footage lays them, `game_shots`) that is visible enough
twice: at its true corners (the corner order rolled by a random quarter turn), and at the
corners of the finder's detection that overlaps it most (IoU ≥ 0.5, in the finder's own corner
order, refiner included): the crop the tracker hands the identifier, with the finder's corner
errors, a neighbour's edge taken in, the blur of the render. `vision.train.evaluate.scene_queries`
measures a model on them; `build_scene_pool` keeps the finder's cuts of the training decks and
random designs as a training source (`TrainConfig.scene_share`), so that the identifier learns
the crops it is handed in footage and not only the `vision.train.augment` imitation of them.
Minecraft: Explorers (`vision.train.data.HELD_OUT_GAMES`) is never rendered for training.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import numpy as np
from tqdm import tqdm

from vision.preprocess import INPUT_HEIGHT, INPUT_WIDTH, rectify, resize_to_input, to_portrait

SCENE_POOL_VERSION: Final = 2
SCENE_SEED: Final = 0x5CE7
"""The stills of a scene pool are rendered with seed `SCENE_SEED + run seed`; the accuracy
report's scenes use 9000 + its seed, so the two never share a still."""


@dataclass(frozen=True, slots=True, kw_only=True)
class SceneCut:
    """One card of a rendered scene: its face, its crop at the true corners, and (with a finder)
    its crop at the finder's corners; `turned`: the crop shows the face turned 180°."""

    face: str
    truth: np.ndarray
    truth_turned: bool
    found: np.ndarray | None = None
    found_turned: bool = False
    missed: bool = False  # a finder ran and found no detection over the card


def turned(k: int, landscape: bool) -> bool:
    """Whether a crop whose first corner is the card's corner `k` shows the card turned 180°."""
    return k in (1, 2) if landscape else k in (2, 3)


def cut(image: np.ndarray, quad: np.ndarray) -> np.ndarray | None:
    """The rectified crop of a quad, at its own size (None when it is too small to read)."""
    cw = 0.5 * (np.linalg.norm(quad[1] - quad[0]) + np.linalg.norm(quad[2] - quad[3]))
    ch = 0.5 * (np.linalg.norm(quad[3] - quad[0]) + np.linalg.norm(quad[2] - quad[1]))
    if min(cw, ch) < 12:
        return None
    return rectify(image, quad, width=round(cw), height=round(ch))


def stills_shots(lib: Any, deck: Any, *, seed: int, stills: int,
                 progress: bool = False) -> Iterator[tuple[np.ndarray, Sequence[Any]]]:
    """(image, cards) of `stills` rendered stills of random card arrangements."""
    from vision.synth.stills import StillsConfig, iter_stills

    config = StillsConfig(count=stills, seed=seed)
    for _, _, result in tqdm(iter_stills(lib, deck, config), total=stills, desc="rendering scenes",
                             unit="scene", disable=not progress):
        yield result.image, result.cards


def game_shots(game: str, lib: Any, *, seed: int, count: int, render_seed: tuple[int, ...],
               size: tuple[int, int] = (1280, 720),
               progress: bool = False) -> Iterator[tuple[np.ndarray, Sequence[Any]]]:
    """(image, cards) of `count` shots of games of `game` in play at `size`, laid out as footage
    lays them (`vision.synth.footage.game_stills`, effects 0.8); shot k is rendered with seed
    `(*render_seed, k)`. The finder's game-shot training data comes from here too."""
    from vision.synth.footage import game_stills
    from vision.synth.render import SceneRenderer

    renderer = SceneRenderer(lib, noise_seed=seed)
    shots = game_stills(game, lib, seed=seed, count=count, size=size, effects=0.8)
    for k, (scene, camera, style) in enumerate(tqdm(shots, total=count, desc=f"rendering {game} shots",
                                                    unit="shot", disable=not progress)):
        result = renderer.render(scene, camera, style, seed=(*render_seed, k))
        yield result.image, result.cards


def scene_cuts(lib: Any, shots: Iterable[tuple[np.ndarray, Sequence[Any]]], *, seed: int,
               min_visible: float = 0.75, finder: Any = None) -> Iterator[SceneCut]:
    """The cards of rendered `shots` of `lib`'s faces (module docstring), in order; `seed`
    draws the corner order of the true-corner cuts."""
    from vision.detections import iou_matrix

    rng = np.random.default_rng([seed, 0x5CE])
    for image, cards in shots:
        h, w = image.shape[:2]
        dets = finder.find_one(image).corners if finder is not None else np.zeros((0, 4, 2))
        for card in cards:
            if card.face not in lib or card.visible < min_visible:
                continue
            q = np.asarray(card.corners, np.float32)
            if q.min() < 0 or q[:, 0].max() > w - 1 or q[:, 1].max() > h - 1:
                continue
            fw, fh = lib.size_mm(card.face)
            landscape = fw > fh
            k = int(rng.integers(4))
            crop = cut(image, np.roll(q, -k, axis=0))
            if crop is None:
                continue
            if finder is None:
                yield SceneCut(face=card.face, truth=crop, truth_turned=turned(k, landscape))
                continue
            iou = iou_matrix(q[None], dets)[0] if len(dets) else np.zeros(0)
            if not len(iou) or iou.max() < 0.5:
                yield SceneCut(face=card.face, truth=crop, truth_turned=turned(k, landscape), missed=True)
                continue
            d = np.asarray(dets[int(iou.argmax())], np.float32)
            # Which of the card's corners the detection starts at: the roll that fits best.
            r = int(np.argmin([np.linalg.norm(d - np.roll(q, -j, axis=0), axis=1).sum() for j in range(4)]))
            yield SceneCut(face=card.face, truth=crop, truth_turned=turned(k, landscape),
                           found=cut(image, d), found_turned=turned(r, landscape))


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class ScenePool:
    """Cards cut at the finder's corners, at the model's input size, and their pool classes."""

    crops: np.ndarray  # (n, INPUT_HEIGHT, INPUT_WIDTH, 3) uint8, portrait
    labels: np.ndarray  # (n,) int64: classes of the training pool

    def __len__(self) -> int:
        return int(self.labels.shape[0])


def pool_class(names: dict[str, int], name: str, is_turned: bool) -> int | None:
    """The training pool's class of a face (its pool name, `game:face` or `design:face`) seen
    one way up (None: not in the pool)."""
    for tag in ("@180" if is_turned else "@0", "@any"):
        cls = names.get(name + tag)
        if cls is not None:
            return cls
    return None


def scene_pool_files(root: Path, key: dict[str, Any]) -> tuple[Path, Path]:
    """The crops and labels files of a scene pool (`.npy`, so that a worker maps them)."""
    text = json.dumps({"v": SCENE_POOL_VERSION, **key}, sort_keys=True)
    stem = f"identifier-scenes-{hashlib.sha256(text.encode()).hexdigest()[:16]}"
    return root / f"{stem}.crops.npy", root / f"{stem}.labels.npy"


def load_scene_pool(crops_path: Path) -> ScenePool:
    """A scene pool written by `build_scene_pool`, its crops mapped from disk."""
    labels_path = crops_path.with_name(crops_path.name.replace(".crops.npy", ".labels.npy"))
    return ScenePool(crops=np.load(crops_path, mmap_mode="r"),
                     labels=np.asarray(np.load(labels_path), np.int64))


def build_scene_pool(pool_names: Sequence[str], *, games: tuple[str, ...], family: int,
                     designs: int, shots: int, stills: int, seed: int, finder_path: Path,
                     root: Path, min_visible: float = 0.6, progress: bool = False) -> Path:
    """Cut the training faces out of rendered scenes at the finder's corners (module docstring)
    and label them with the pool's classes: `shots` shots of games in play of each of `games`
    (proxy art) and `stills` stills of random arrangements of the pool's designs. Written once
    under `root`, keyed by everything that shapes them (the finder's and the refiner's bytes
    included); returns the crops file (`load_scene_pool`)."""
    from vision.finder import DEFAULT_CORNER_MODEL, Finder
    from vision.synth.library import build_library, design_library

    digest = hashlib.sha256()
    for p in (finder_path, DEFAULT_CORNER_MODEL):
        digest.update(Path(p).read_bytes())
    crops_path, labels_path = scene_pool_files(root, {
        "games": list(games), "family": family, "designs": designs, "shots": shots,
        "stills": stills, "seed": seed, "min_visible": min_visible,
        "finder": digest.hexdigest()[:16], "classes": len(pool_names)})
    if crops_path.is_file() and labels_path.is_file():
        return crops_path
    names = {n: i for i, n in enumerate(pool_names)}
    finder = Finder(finder_path, threads=1)
    crops: list[np.ndarray] = []
    labels: list[int] = []

    def take(lib: Any, source: Iterable[tuple[np.ndarray, Sequence[Any]]], prefix: str, k: int) -> None:
        for c in scene_cuts(lib, source, seed=seed + k, min_visible=min_visible, finder=finder):
            cls = None if c.found is None else pool_class(names, prefix + c.face, c.found_turned)
            if c.found is not None and cls is not None:
                crops.append(resize_to_input(to_portrait(c.found)))
                labels.append(cls)

    for k, game in enumerate(games):
        lib, _ = build_library(game, "proxy")
        shot_seed = seed * 100 + k
        take(lib, game_shots(game, lib, seed=shot_seed, count=shots, render_seed=(shot_seed, 2),
                             progress=progress), f"{game}:", k)
    if stills:
        lib, deck = design_library(family, designs)
        take(lib, stills_shots(lib, deck, seed=seed, stills=stills, progress=progress), "design:", len(games))
    root.mkdir(parents=True, exist_ok=True)
    for path, array in ((labels_path, np.array(labels, np.int64)),
                        (crops_path, np.stack(crops) if crops else np.zeros((0, INPUT_HEIGHT, INPUT_WIDTH, 3), np.uint8))):
        tmp = path.with_name(f".{path.name}.tmp.npy")
        np.save(tmp, array)
        os.replace(tmp, path)
    return crops_path
