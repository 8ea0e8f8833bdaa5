"""The identifier's training crops and its scene measure: slipped edges, and scene cards cut at
the corners the shipped finder found for them, labelled with the turn those corners imply."""

from __future__ import annotations

import hashlib
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from vision.art.pack import proxy_pack
from vision.finder import Finder
from vision.identify import Gallery, Identifier
from vision.train.augment import MASTER_HEIGHT, MASTER_WIDTH, CropConfig, webcam_crop
from vision.train.data import pool_from_masters, sample_batch
from vision.train.evaluate import _match, scene_queries, score_matches


def _framed_master() -> np.ndarray:
    """Mid grey with a black frame 8 px wide: a slipped edge shows in the frame band."""
    m = np.full((MASTER_HEIGHT, MASTER_WIDTH, 3), 128, np.uint8)
    m[:8], m[-8:], m[:, :8], m[:, -8:] = 0, 0, 0, 0
    return m


def _bands(crop: np.ndarray) -> list[float]:
    """Mean brightness of the outermost two pixels of each side."""
    return [float(crop[:2].mean()), float(crop[:, -2:].mean()), float(crop[-2:].mean()), float(crop[:, :2].mean())]


def test_a_slipped_edge_cuts_the_card_or_shows_the_table() -> None:
    clean = replace(CropConfig.clean(), min_width=100, max_width=100)
    slipped = replace(clean, edge_slip_probability=1.0, max_edge_slip=0.2)
    m = _framed_master()
    rng = np.random.default_rng(3)
    assert all(max(_bands(webcam_crop(m, rng, clean))) < 10 for _ in range(10))
    moved = [max(_bands(webcam_crop(m, rng, slipped))) >= 15 for _ in range(40)]
    # A slip of under a frame's width leaves the band dark; most slips are wider.
    assert sum(moved) >= 28


def test_an_object_leaning_over_a_card_hides_a_large_part_of_it_from_one_side() -> None:
    clean = replace(CropConfig.clean(), min_width=80, max_width=80)
    leaning = replace(clean, object_probability=1.0, max_object=0.55)
    m = np.full((MASTER_HEIGHT, MASTER_WIDTH, 3), 128, np.uint8)
    rng = np.random.default_rng(5)
    plain = webcam_crop(m, rng, clean)
    hidden = []
    for _ in range(60):
        crop = webcam_crop(m, rng, leaning)
        changed = np.abs(crop.astype(int) - plain.astype(int)).max(axis=2) > 12
        hidden.append(float(changed.mean()))
        # It comes in from a side: the opposite side of the card stays clear.
        bands = [changed[:4].mean(), changed[:, -4:].mean(), changed[-4:].mean(), changed[:, :4].mean()]
        assert min(bands) < 0.05
    assert max(hidden) <= 0.6
    assert np.median(hidden) >= 0.15  # a mug, not a fingertip
    assert max(hidden) >= 0.35


def test_a_mix_without_objects_draws_the_same_crops_as_before_objects_existed() -> None:
    """The training mix of the model before objects (`--objects 0`) must stay reproducible:
    these crops were hashed with the crop generator as it was before objects were added."""
    m = _framed_master()
    old = CropConfig()
    digest = hashlib.sha256()
    for k in range(12):
        digest.update(webcam_crop(m, np.random.default_rng(k), old).tobytes())
    assert digest.hexdigest()[:16] == "57efdb76560dd155"
    with_objects = [webcam_crop(m, np.random.default_rng(k), replace(old, object_probability=1.0)) for k in range(12)]
    assert not all(np.array_equal(webcam_crop(m, np.random.default_rng(k), old), x) for k, x in enumerate(with_objects))


def test_a_neighbouring_card_covers_one_side_of_the_card_and_leaves_the_other() -> None:
    clean = replace(CropConfig.clean(), min_width=80, max_width=80)
    row = replace(clean, neighbour_probability=1.0, max_neighbour=0.6)
    grey = np.full((MASTER_HEIGHT, MASTER_WIDTH, 3), 128, np.uint8)
    black = np.zeros_like(grey)
    rng = np.random.default_rng(9)
    shares = []
    for _ in range(60):
        crop = webcam_crop(grey, rng, row, black)
        dark = crop.max(axis=2) < 40  # the neighbour's own pixels
        shares.append(float(dark.mean()))
        bands = [dark[:3].mean(), dark[:, -3:].mean(), dark[-3:].mean(), dark[:, :3].mean()]
        assert max(bands) > 0.5  # it lies over one whole side ...
        assert min(bands) < 0.05  # ... and never reaches the opposite one
    assert min(shares) >= 0.12 and max(shares) <= 0.68
    assert np.median(shares) >= 0.3


def test_a_mix_without_neighbours_draws_the_same_crops_whether_or_not_one_is_given() -> None:
    """Training batches pass a neighbour only when the mix asks for one; even given one, a mix
    at probability 0 (the shipped model's) must draw the very same crops."""
    m = _framed_master()
    other = np.zeros_like(m)
    for k in range(12):
        assert np.array_equal(webcam_crop(m, np.random.default_rng(k), CropConfig(), other),
                              webcam_crop(m, np.random.default_rng(k), CropConfig()))


def test_training_batches_lay_a_card_of_the_pool_beside_the_card_only_when_the_mix_asks() -> None:
    grey = np.full((MASTER_HEIGHT, MASTER_WIDTH, 3), 128, np.uint8)
    pool = pool_from_masters([("design:grey", grey), ("design:black", np.zeros_like(grey))])
    grey_class = pool.names.index("design:grey@any")
    clean = replace(CropConfig.clean(), min_width=60, max_width=60)

    def darkened(crops: CropConfig) -> list[bool]:
        images, labels = sample_batch(pool, np.random.default_rng(4), 80, proxy_share=0.0, crops=crops)
        return [bool((img.max(axis=2) < 40).mean() > 0.1) for img, cls in zip(images, labels, strict=True)
                if cls == grey_class]

    assert not any(darkened(clean))
    beside = darkened(replace(clean, neighbour_probability=1.0))
    # The neighbour is any card of the pool: the black one about half the time.
    assert 0.25 <= sum(beside) / len(beside) <= 0.75


@pytest.fixture(scope="module")
def mattel_gallery() -> Gallery:
    pack = proxy_pack("minecraft-card-game")
    return Gallery.from_images({f: pack.image(f) for f in pack.faces}, Identifier(), game=pack.game)


def test_scene_cards_cut_at_the_finders_corners_read_with_their_turn(mattel_gallery: Gallery) -> None:
    scenes = scene_queries("minecraft-card-game", Path("proxy"), seed=404, stills=6, finder=Finder())
    assert scenes.found is not None
    assert len(scenes.truth) >= 12
    # Every card is either cut at the finder's corners or counted as missed.
    assert len(scenes.found) + scenes.missed <= len(scenes.truth)
    assert len(scenes.found) >= 0.7 * len(scenes.truth)
    result = score_matches("found", mattel_gallery, scenes.found,
                           _match(Identifier(), mattel_gallery, scenes.found))
    # A wrong turn label (the finder's corner order misread) would halve the face + turn figure.
    assert result.top1_face >= 0.8
    assert result.top1 >= result.top1_face - 0.1


@pytest.fixture(scope="module")
def scene_pool(tmp_path_factory: pytest.TempPathFactory) -> tuple[tuple[str, ...], Path]:
    """Mattel proxy cards and four random designs cut out of a few rendered scenes."""
    from vision.finder import DEFAULT_MODEL
    from vision.train.data import design_masters, proxy_masters
    from vision.train.scenes import build_scene_pool

    family = 4_040_000
    pool = pool_from_masters(proxy_masters(("minecraft-card-game",)) + design_masters(family, 4, 0.0))
    root = tmp_path_factory.mktemp("scenes")
    path = build_scene_pool(pool.names, games=("minecraft-card-game",), family=family, designs=4,
                            shots=3, stills=3, seed=11, finder_path=DEFAULT_MODEL, root=root)
    return pool.names, path


def test_scene_pool_cards_are_labelled_with_their_face_and_turn(
        scene_pool: tuple[tuple[str, ...], Path], mattel_gallery: Gallery) -> None:
    from vision.preprocess import INPUT_HEIGHT, INPUT_WIDTH
    from vision.train.scenes import load_scene_pool

    names, path = scene_pool
    scenes = load_scene_pool(path)
    assert len(scenes) >= 15 and scenes.crops.shape[1:] == (INPUT_HEIGHT, INPUT_WIDTH, 3)
    labels = [names[int(c)] for c in scenes.labels]
    assert {n.split(":")[0] for n in labels} == {"minecraft-card-game", "design"}
    # The shipped identifier reads the Mattel cards as their labels say, turn included: a label
    # with the wrong turn (the finder's corner order misread) would fail about half of them.
    mattel = [i for i, n in enumerate(labels) if n.startswith("minecraft-card-game:")]
    matches = mattel_gallery.match(Identifier().embed([scenes.crops[i] for i in mattel]), top_k=1)
    agree = 0
    for i, m in zip(mattel, matches, strict=True):
        face, turn = labels[i].split(":", 1)[1].rsplit("@", 1)
        best = m.candidates[0]
        agree += best.face == face and (turn == "any" or best.rotated_180 == (turn == "180"))
    assert agree >= 0.8 * len(mattel)


def test_scene_pool_is_rendered_once_then_read_from_disk(scene_pool: tuple[tuple[str, ...], Path]) -> None:
    from vision.finder import DEFAULT_MODEL
    from vision.train.scenes import build_scene_pool

    names, path = scene_pool
    before = path.stat().st_mtime_ns
    again = build_scene_pool(names, games=("minecraft-card-game",), family=4_040_000, designs=4,
                             shots=3, stills=3, seed=11, finder_path=DEFAULT_MODEL, root=path.parent)
    assert again == path and path.stat().st_mtime_ns == before
    # Anything that shapes the cards makes another pool.
    other = build_scene_pool(names, games=("minecraft-card-game",), family=4_040_000, designs=4,
                             shots=1, stills=0, seed=11, finder_path=DEFAULT_MODEL, root=path.parent)
    assert other != path


def test_a_batch_draws_its_scene_share_from_the_scene_pool(scene_pool: tuple[tuple[str, ...], Path]) -> None:
    from vision.train.data import ClassPool, design_masters
    from vision.train.scenes import load_scene_pool

    _, path = scene_pool
    scenes = load_scene_pool(path)
    pool: ClassPool = pool_from_masters(design_masters(4_040_000, 4, 0.0))
    crops, labels = sample_batch(pool, np.random.default_rng(1), 16, proxy_share=0.0, scenes=scenes,
                                 scene_share=1.0)
    # Each is a stored card, spoiled a little more, with the stored card's label.
    def standard(x: np.ndarray) -> np.ndarray:  # light and colour shifts leave the pattern
        x = x.astype(np.float32).reshape(len(x), -1)
        x -= x.mean(axis=1, keepdims=True)
        return x / np.linalg.norm(x, axis=1, keepdims=True)

    assert all(c.shape == scenes.crops.shape[1:] for c in crops)
    nearest = np.argmax(standard(np.stack(crops)) @ standard(np.asarray(scenes.crops)).T, axis=1)
    assert scenes.labels[nearest].tolist() == labels.tolist()
    # With no share, the batch is the one drawn without any scene pool: runs before it are kept.
    a, la = sample_batch(pool, np.random.default_rng(2), 8, proxy_share=0.0, scenes=scenes, scene_share=0.0)
    b, lb = sample_batch(pool, np.random.default_rng(2), 8, proxy_share=0.0)
    assert [x.tobytes() for x in a] == [x.tobytes() for x in b] and la.tolist() == lb.tolist()
