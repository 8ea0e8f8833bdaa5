"""Random still scenes for training the card finder, written as JPEGs + COCO + a truth file.

A still is a table seen by a random webcam: piles with a face-up top card and visible
thickness, overlapping rows, fanned spreads, single cards at any angle, cards standing in
holders, sleeved decks, hands reaching in, clutter, and sometimes the four calibration markers.
Scene `i` of seed `s` is drawn from its own generator `(s, i)`, so any still can be reproduced
alone. `write_stills` renders N of them with a progress bar into `DIR/images/`, with
`DIR/annotations.coco.json` and `DIR/truth.json`.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path

import cv2
import numpy as np
from tqdm import tqdm

from vision.synth.camera import Camera, CameraEnvelope, sample_camera
from vision.synth.clutter import random_clutter
from vision.synth.coco import coco_document
from vision.synth.effects import RenderStyle, sample_style
from vision.synth.errors import SynthError
from vision.synth.faces import FaceLibrary
from vision.synth.hands import random_hand
from vision.synth.library import Deck
from vision.synth.render import RenderResult, SceneRenderer, camera_truth
from vision.synth.scene import (
    CardPlacement,
    MarkerPlacement,
    Scene,
    TableSpec,
    fan,
    pile,
    table_markers,
    with_tracks,
)
from vision.synth.surfaces import TABLE_KINDS
from vision.synth.truth import ClipInfo, FrameTruth, MediaRef, Truth, write_truth

GENERATOR = "cardtrack synth scenes"


@dataclass(frozen=True, slots=True, kw_only=True)
class StillsConfig:
    """Options of a batch of stills (defaults: a realistic mix)."""

    count: int
    seed: int = 0
    size: tuple[int, int] = (1280, 720)
    max_groups: int = 7
    hand_probability: float = 0.5
    marker_probability: float = 0.5
    sleeve_probability: float = 0.2
    max_clutter: int = 6
    effects: float = 1.0
    surface_seeds: int = 48
    min_visible: float = 0.05
    jpeg_quality: int = 92


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class Still:
    scene: Scene
    camera: Camera
    style: RenderStyle


def _orientation(rng: np.random.Generator) -> float:
    """Card turns: mostly squared with the table (any quarter turn), sometimes anything."""
    if rng.random() < 0.7:
        return float(rng.choice([0.0, 90.0, 180.0, 270.0]) + rng.normal(0.0, 4.0))
    return float(rng.uniform(0.0, 360.0))


def _card_size(lib: FaceLibrary, face: str) -> tuple[float, float]:
    return lib.size_mm(face)


def random_cards(rng: np.random.Generator, lib: FaceLibrary, deck: Deck,
                 area: tuple[float, float], max_groups: int) -> list[CardPlacement]:
    """Random groups of cards over a `width × height` area (bottom card first)."""
    w, h = area
    out: list[CardPlacement] = []
    z_base = 0.0
    for _ in range(int(rng.integers(1, max_groups + 1))):
        kind = rng.choice(["pile", "row", "fan", "single", "single", "standing"],
                          p=[0.27, 0.18, 0.1, 0.2, 0.17, 0.08])
        c = (float(rng.uniform(0.1 * w, 0.9 * w)), float(rng.uniform(0.12 * h, 0.88 * h)))
        rot = _orientation(rng)
        # Groups laid later may overlap earlier ones: they lie on top of them.
        z_base += 0.4
        if kind == "pile":
            n = int(rng.integers(2, 26))
            cards = [deck.sample(rng) for _ in range(n)]
            faces = [dc.back for dc in cards]
            if rng.random() < 0.65:
                faces[-1] = cards[-1].front
            out += pile(faces, c, rng=rng, rotation_deg=rot, jitter_mm=float(rng.uniform(0.2, 2.5)),
                        jitter_deg=float(rng.uniform(0.3, 3.0)), z0_mm=z_base,
                        cards=[dc.card for dc in cards])
            z_base += n * 0.32
        elif kind == "row":
            n = int(rng.integers(2, 7))
            cards = [deck.sample(rng) for _ in range(n)]
            fw, _ = _card_size(lib, cards[0].front)
            step = fw * float(rng.uniform(0.25, 1.15))
            r = math.radians(rot)
            for i, dc in enumerate(cards):
                pos = (c[0] + math.cos(r) * step * (i - n / 2), c[1] + math.sin(r) * step * (i - n / 2))
                face = dc.front if rng.random() < 0.85 else dc.back
                out.append(CardPlacement(face_id=face, center_mm=pos, rotation_deg=rot + rng.normal(0, 2.5),
                                         z_mm=z_base + i * 0.32, card=dc.card))
            z_base += n * 0.32
        elif kind == "fan":
            n = int(rng.integers(3, 8))
            cards = [deck.sample(rng) for _ in range(n)]
            size = _card_size(lib, cards[0].front)
            placed = fan([dc.front for dc in cards], c, card_size_mm=size, rotation_deg=rot,
                         spread_deg=float(rng.uniform(20, 70)), z0_mm=z_base)
            out += [CardPlacement(face_id=p.face_id, center_mm=p.center_mm, rotation_deg=p.rotation_deg,
                                  z_mm=p.z_mm, card=dc.card) for p, dc in zip(placed, cards, strict=True)]
            z_base += n * 0.32
        elif kind == "single":
            dc = deck.sample(rng)
            face = dc.front if rng.random() < 0.75 else dc.back
            out.append(CardPlacement(face_id=face, center_mm=c, rotation_deg=rot, z_mm=z_base, card=dc.card))
            z_base += 0.32
        else:  # standing in a holder, facing the camera's side more or less
            dc = deck.sample(rng)
            out.append(CardPlacement(face_id=dc.front, center_mm=c,
                                     rotation_deg=float(rng.normal(0.0, 20.0)),
                                     tilt_deg=float(rng.uniform(50.0, 82.0)), z_mm=0.0, card=dc.card))
    return out


def random_still(rng: np.random.Generator, lib: FaceLibrary, deck: Deck, config: StillsConfig) -> Still:
    """One random scene, camera and look."""
    w, h = config.size
    for shrink in (1.0, 0.8, 0.6, 0.45):
        aw = float(rng.uniform(420.0, 950.0)) * shrink
        ah = float(rng.uniform(300.0, 650.0)) * shrink
        markers: tuple[MarkerPlacement, ...] = ()
        if rng.random() < config.marker_probability:
            markers = table_markers(aw, ah, float(rng.uniform(40.0, 65.0)))
        margin = 40.0 if markers else 0.0
        try:
            camera = sample_camera(rng, (-margin, -margin, aw + margin, ah + margin), (w, h),
                                   CameraEnvelope())
            break
        except SynthError:
            continue
    else:  # pragma: no cover - the smallest area always fits the envelope
        raise SynthError("could not place a camera over the play area")
    cards = random_cards(rng, lib, deck, (aw, ah), config.max_groups)
    if rng.random() < config.sleeve_probability:
        cards = [replace(c, sleeve=True) for c in cards]
    elif rng.random() < 0.3:
        cards = [replace(c, sleeve=bool(rng.random() < 0.3)) for c in cards]
    cards = list(with_tracks(cards))
    hands = []
    n_hands = 0 if rng.random() >= config.hand_probability else int(rng.choice([1, 1, 1, 2]))
    for _ in range(n_hands):
        target = cards[int(rng.integers(len(cards)))].center_mm if cards and rng.random() < 0.8 else (
            float(rng.uniform(0, aw)), float(rng.uniform(0, ah)))
        edge = rng.choice(["bottom", "bottom", "left", "right", "top"])
        t = float(rng.uniform(0.2, 0.8))
        origin = {"bottom": (t * aw, ah + 250.0), "top": (t * aw, -250.0),
                  "left": (-250.0, t * ah), "right": (aw + 250.0, t * ah)}[str(edge)]
        hands.append(random_hand(rng, target, origin))
    clutter = random_clutter(rng, (-120.0, -120.0, aw + 120.0, ah + 120.0),
                             int(rng.integers(0, config.max_clutter + 1)))
    cx, cy = aw / 2, ah / 2
    table = TableSpec(
        surface=TABLE_KINDS[int(rng.integers(len(TABLE_KINDS)))],
        seed=int(rng.integers(config.surface_seeds)),
        extent_mm=(cx - float(rng.uniform(aw / 2 + 80, 800)), cy - float(rng.uniform(ah / 2 + 80, 600)),
                   cx + float(rng.uniform(aw / 2 + 80, 800)), cy + float(rng.uniform(ah / 2 + 80, 600))),
    )
    # Quantise the table to whole metres of texture so surfaces are reused from the cache.
    table = TableSpec(surface=table.surface, seed=table.seed, extent_mm=_quantised(table.extent_mm))
    scene = Scene(table=table, cards=tuple(cards), hands=tuple(hands), clutter=clutter, markers=markers)
    style = sample_style(rng, strength=config.effects)
    return Still(scene=scene, camera=camera, style=style)


def _quantised(ext: tuple[float, float, float, float]) -> tuple[float, float, float, float]:
    x0, y0, x1, y1 = ext
    w = max(400.0, math.ceil((x1 - x0) / 200.0) * 200.0)
    h = max(400.0, math.ceil((y1 - y0) / 200.0) * 200.0)
    cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
    return (cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2)


def iter_stills(lib: FaceLibrary, deck: Deck, config: StillsConfig) -> Iterator[tuple[int, Still, RenderResult]]:
    """Render the stills in order: yields (index, still, RenderResult)."""
    renderer = SceneRenderer(lib, noise_seed=config.seed)
    for i in range(config.count):
        rng = np.random.default_rng([config.seed, i])
        still = random_still(rng, lib, deck, config)
        result = renderer.render(still.scene, still.camera, still.style, seed=(config.seed, i, 1))
        yield i, still, result


def write_stills(
    out_dir: str | Path,
    lib: FaceLibrary,
    deck: Deck,
    config: StillsConfig,
    *,
    art: tuple[str, ...] = (),
    progress: bool = True,
) -> Truth:
    """Render `config.count` stills into `out_dir`; returns the truth that was written."""
    out = Path(out_dir)
    images = out / "images"
    images.mkdir(parents=True, exist_ok=True)
    frames: list[FrameTruth] = []
    coco_images = []
    bar = tqdm(iter_stills(lib, deck, config), total=config.count, desc="synth scenes",
               unit="scene", disable=not progress)
    w, h = config.size
    for i, still, result in bar:
        name = f"images/{i:06d}.jpg"
        ok, buf = cv2.imencode(".jpg", result.image, [cv2.IMWRITE_JPEG_QUALITY, config.jpeg_quality])
        if not ok:
            raise SynthError(f"{out / name}: JPEG encoding failed")
        (out / name).write_bytes(buf.tobytes())
        frames.append(FrameTruth(index=i, image=name, camera=camera_truth(still.camera),
                                 cards=result.cards, markers=result.markers, hands=result.hands))
        coco_images.append((name, w, h, result.cards))
    truth = Truth(clip=ClipInfo(game=deck.game, frame_size=(w, h), source="synthetic",
                                media=MediaRef(kind="images", path="images"), generator=GENERATOR,
                                seed=config.seed, art=art))
    truth = Truth(clip=truth.clip, frames=tuple(frames))
    write_truth(truth, out / "truth.json")
    doc = coco_document(coco_images, min_visible=config.min_visible)
    (out / "annotations.coco.json").write_text(json.dumps(doc, separators=(",", ":")) + "\n",
                                               encoding="utf-8")
    return truth
