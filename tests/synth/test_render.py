"""Rendering: reproducible pixels, visible fractions, real scans, random stills, effects."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from vision.art.pack import load_pack
from vision.synth.camera import overhead_camera, sample_camera
from vision.synth.effects import RenderStyle, sample_style
from vision.synth.faces import FaceArt, FaceLibrary
from vision.synth.hands import random_hand
from vision.synth.library import design_library
from vision.synth.render import SceneRenderer
from vision.synth.scene import CardPlacement, HandPlacement, Scene, TableSpec, pile
from vision.synth.stills import StillsConfig, random_still
from vision.synth.surfaces import SurfaceKind

SIZE = (480, 270)


def _flat_library() -> FaceLibrary:
    grey = np.full((88, 63, 3), 200, np.uint8)
    return FaceLibrary([FaceArt(face_id="a", image=grey, size_mm=(63.0, 88.0)),
                        FaceArt(face_id="big", image=grey, size_mm=(100.0, 130.0))])


def _still(seed: int, size: tuple[int, int] = SIZE):  # type: ignore[no-untyped-def]
    lib, deck = design_library(7, 24)
    cfg = StillsConfig(count=1, seed=seed, size=size)
    still = random_still(np.random.default_rng([seed, 0]), lib, deck, cfg)
    return lib, still


def test_same_seed_same_pixels_and_different_seeds_differ() -> None:
    lib, still = _still(3)
    a = SceneRenderer(lib).render(still.scene, still.camera, still.style, seed=5)
    _, still_again = _still(3)
    b = SceneRenderer(lib).render(still_again.scene, still_again.camera, still_again.style, seed=5)
    assert np.array_equal(a.image, b.image)
    assert a.cards == b.cards
    _, other = _still(4)
    c = SceneRenderer(lib).render(other.scene, other.camera, other.style, seed=5)
    assert not np.array_equal(a.image, c.image)
    # Same scene, another noise seed: the sensor noise differs.
    noisy = replace(still.style, noise_sigma=4.0)
    d = SceneRenderer(lib).render(still.scene, still.camera, noisy, seed=5)
    e = SceneRenderer(lib).render(still.scene, still.camera, noisy, seed=6)
    assert not np.array_equal(d.image, e.image)


def test_visible_fraction_covered_uncovered_and_cut_by_the_border() -> None:
    camera = overhead_camera((0.0, 0.0, 400.0, 225.0), SIZE, fill=1.0)
    cards = (
        CardPlacement(face_id="a", center_mm=(100.0, 110.0)),  # covered below
        CardPlacement(face_id="big", center_mm=(100.0, 110.0), z_mm=0.3),  # covers it
        CardPlacement(face_id="a", center_mm=(260.0, 110.0), rotation_deg=17.0),  # alone
        CardPlacement(face_id="a", center_mm=(400.0, 110.0)),  # on the right border
    )
    scene = Scene(table=TableSpec(color=(50, 50, 50)), cards=cards)
    result = SceneRenderer(_flat_library()).render(scene, camera, RenderStyle.clean())
    vis = [c.visible for c in result.cards]
    assert vis[0] == pytest.approx(0.0, abs=0.01)
    assert vis[1] == 1.0
    assert vis[2] == 1.0
    assert vis[3] == pytest.approx(0.5, abs=0.06)
    assert result.cards[0].corner_visible == (False, False, False, False)
    assert result.cards[2].corner_visible == (True, True, True, True)
    assert result.cards[3].corner_visible == (True, False, False, True)


def test_a_hand_hides_what_it_covers() -> None:
    camera = overhead_camera((0.0, 0.0, 400.0, 225.0), SIZE, fill=1.0)
    card = CardPlacement(face_id="a", center_mm=(200.0, 110.0))
    hand = HandPlacement(wrist_mm=(200.0, 230.0), direction_deg=-90.0, height_mm=40.0,
                         arm_to_mm=(200.0, 500.0))
    lib = _flat_library()
    bare = SceneRenderer(lib).render(Scene(cards=(card,)), camera, RenderStyle.clean())
    covered = SceneRenderer(lib).render(Scene(cards=(card,), hands=(hand,)), camera, RenderStyle.clean())
    assert bare.cards[0].visible == 1.0
    assert 0.0 < covered.cards[0].visible < 0.8
    assert covered.hands == 1
    assert not np.array_equal(bare.image, covered.image)


def test_piles_report_only_their_top_card_as_visible(scan_pack: Path) -> None:
    lib = FaceLibrary.from_pack(load_pack(scan_pack))
    rng = np.random.default_rng(0)
    faces = ["mob_back"] * 9 + ["mob.zombie"]
    cards = pile(faces, (150.0, 110.0), rng=rng, jitter_mm=0.3, first_track=0)
    camera = sample_camera(rng, (0.0, 0.0, 300.0, 220.0), SIZE)
    style = sample_style(rng)
    result = SceneRenderer(lib).render(Scene(table=TableSpec(surface=SurfaceKind.FELT, seed=2), cards=cards),
                                       camera, style, seed=1)
    vis = [c.visible for c in result.cards]
    assert vis[-1] > 0.95
    assert max(vis[:-1]) < 0.5
    assert [c.face for c in result.cards][-1] == "mob.zombie"


def test_footage_frames_reuse_the_static_layer_and_match_a_fresh_render() -> None:
    lib, still = _still(11)
    scene = replace(still.scene, hands=())
    moving = CardPlacement(face_id=scene.cards[0].face_id if scene.cards else lib.ids()[0],
                           center_mm=(120.0, 90.0), z_mm=30.0, track=999)
    hand = random_hand(np.random.default_rng(1), (120.0, 90.0), (120.0, 500.0))
    renderer = SceneRenderer(lib)
    frames = []
    for i in range(3):
        m = replace(moving, center_mm=(120.0 + 20.0 * i, 90.0))
        frames.append(renderer.render(replace(scene, moving_cards=(m,), hands=(hand,)), still.camera,
                                      still.style, seed=i))
    fresh = SceneRenderer(lib).render(replace(scene, moving_cards=(replace(moving, center_mm=(160.0, 90.0)),),
                                              hands=(hand,)), still.camera, still.style, seed=2)
    assert np.array_equal(frames[2].image, fresh.image)
    assert frames[2].cards == fresh.cards
    assert not np.array_equal(frames[0].image, frames[1].image)


def test_drifted_camera_truth_follows_the_turn() -> None:
    lib, still = _still(5)
    base = still.camera
    turned = base.rotated(np.array([0.004, -0.003, 0.002]))
    renderer = SceneRenderer(lib, canvas_margin=0.03)
    a = renderer.render(still.scene, base, RenderStyle.clean())
    b = renderer.render(still.scene, turned, RenderStyle.clean())
    moved = [np.abs(np.array(x.corners) - np.array(y.corners)).max() for x, y in zip(a.cards, b.cards, strict=True)]
    assert all(m > 0.5 for m in moved)
    assert not np.array_equal(a.image, b.image)
    h = np.array(b.camera_truth().homography)
    assert np.allclose(h, turned.homography())
