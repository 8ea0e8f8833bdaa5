"""Speed of the renderer on footage frames: a static table, a hand carrying a card across it.

The benchmark builds one busy clip (piles, rows, clutter, markers, a distorted lens, every
camera effect on), renders a warm-up frame that fills the static cache, then times frames
in which a hand moves a card over the table and the camera drifts slightly — what footage
rendering does per frame. Figures are reported, never asserted.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, replace

import numpy as np

from vision.synth.camera import Camera, sample_camera
from vision.synth.clutter import random_clutter
from vision.synth.effects import sample_style
from vision.synth.hands import random_hand
from vision.synth.library import design_library
from vision.synth.render import SceneRenderer
from vision.synth.scene import (
    CardPlacement,
    Scene,
    TableSpec,
    pile,
    row,
    table_markers,
    with_tracks,
)
from vision.synth.surfaces import SurfaceKind


@dataclass(frozen=True, slots=True, kw_only=True)
class BenchFigures:
    frames: int
    size: tuple[int, int]
    cards: int
    seconds: float
    fps: float
    ms_per_frame: float
    first_frame_ms: float
    jpeg: bool
    drift: bool


def bench_footage(*, frames: int = 120, size: tuple[int, int] = (1280, 720), seed: int = 0,
                  jpeg: bool = False, drift: bool = True) -> BenchFigures:
    """Render `frames` footage frames; returns the measured figures."""
    lib, deck = design_library(seed, 40)
    rng = np.random.default_rng([seed, 0xBE9C])
    area = (800.0, 560.0)
    cards: list[CardPlacement] = []
    for k in range(5):
        faces = [deck.sample(rng).back for _ in range(14)] + [deck.sample(rng).front]
        cards += pile(faces, (120.0 + k * 140.0, 140.0), rng=rng)
    cards += row([deck.sample(rng).front for _ in range(6)], (150.0, 330.0), step_mm=(60.0, 0.0), rng=rng)
    cards += row([deck.sample(rng).front for _ in range(4)], (200.0, 470.0), step_mm=(95.0, 0.0), rng=rng)
    static = with_tracks(cards)
    carried_face = deck.sample(rng).front
    scene0 = Scene(
        table=TableSpec(surface=SurfaceKind.WOOD, seed=seed, extent_mm=(-400, -300, 1200, 900)),
        cards=static,
        clutter=random_clutter(rng, (-100.0, -100.0, 900.0, 660.0), 5),
        markers=table_markers(*area),
    )
    camera = sample_camera(rng, (-40.0, -40.0, area[0] + 40.0, area[1] + 40.0), size)
    style = sample_style(rng)
    style = replace(style, jpeg_quality=style.jpeg_quality if jpeg else None)
    renderer = SceneRenderer(lib, canvas_margin=0.03 if drift else 0.0)

    def frame_scene(i: int) -> tuple[Scene, Camera]:
        t = i / max(frames - 1, 1)
        x = 100.0 + 600.0 * t
        y = 450.0 - 250.0 * math.sin(math.pi * t)
        carried = CardPlacement(face_id=carried_face, center_mm=(x, y), rotation_deg=20.0 * t,
                                z_mm=40.0, track=len(static))
        hand = random_hand(np.random.default_rng([seed, 7]), (x, y), (x, area[1] + 300.0))
        hand = replace(hand, wrist_mm=(x - 10.0, y + 110.0), direction_deg=-95.0, height_mm=60.0)
        cam = camera.rotated(np.array([0.002 * math.sin(i / 9), 0.002 * math.cos(i / 13), 0.0])) if drift else camera
        return replace(scene0, moving_cards=(carried,), hands=(hand,)), cam

    s0, c0 = frame_scene(0)
    t0 = time.perf_counter()
    renderer.render(s0, c0, style, seed=(seed, 0))
    first = time.perf_counter() - t0
    t0 = time.perf_counter()
    for i in range(1, frames + 1):
        s, c = frame_scene(i)
        renderer.render(s, c, style, seed=(seed, i))
    dt = time.perf_counter() - t0
    return BenchFigures(frames=frames, size=size, cards=len(static) + 1, seconds=dt,
                        fps=frames / dt, ms_per_frame=1000.0 * dt / frames,
                        first_frame_ms=1000.0 * first, jpeg=jpeg, drift=drift)
