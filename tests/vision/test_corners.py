"""The corner refiner: the canvas warp is exact, the shipped model pulls corners that are off
back onto the cards of a seeded rendered scene, empty and degenerate input pass through, bad
model files and a missing refiner give clear errors, a two-step training run exports a model
the refiner loads (only where torch is installed), and the training data pairs a found outline
with one card only and keeps how much of each card shows."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from vision.corners import (
    DEFAULT_MODEL,
    INNER,
    CornerModelError,
    CornerRefiner,
    KeptRefinements,
    canvas_transform,
    map_points,
)
from vision.finder import DEFAULT_MODEL as FINDER_MODEL
from vision.finder import Finder, FinderConfig, FinderModelError, Refine, canonical_order


@pytest.fixture(scope="module")
def refiner() -> CornerRefiner:
    return CornerRefiner()


def _corner_error(pred: np.ndarray, truth: np.ndarray) -> float:
    """Median corner distance, over the cyclic order that fits best (the finder's order may
    start at either end of a card)."""
    return min(float(np.median(np.linalg.norm(np.roll(pred, k, axis=0) - truth, axis=1))) for k in range(4))


def test_canvas_transform_puts_the_quad_on_the_inner_rectangle() -> None:
    rng = np.random.default_rng(1)
    for _ in range(20):
        quad = canonical_order(
            (np.array([[0, 0], [63, 0], [63, 88], [0, 88]], float) + rng.normal(0, 3, (4, 2))
             + rng.uniform(0, 600, 2))[None])[0]
        t = canvas_transform(quad)
        np.testing.assert_allclose(map_points(quad, t), INNER, atol=1e-3)
        np.testing.assert_allclose(map_points(INNER, np.linalg.inv(t)), quad, atol=1e-3)


def test_shipped_model_is_small_and_pulls_corners_onto_the_cards(refiner: CornerRefiner) -> None:
    from vision.synth.library import build_library
    from vision.synth.stills import StillsConfig, iter_stills

    assert DEFAULT_MODEL.stat().st_size < 10 * 1024 * 1024
    lib, deck = build_library("minecraft-card-game", "proxy", mixed=True, seed=4243, designs=24)
    config = StillsConfig(count=3, seed=4243, max_groups=3, hand_probability=0.0, max_clutter=0)
    rng = np.random.default_rng(5)
    before, after = [], []
    for _, _, result in iter_stills(lib, deck, config):
        for card in result.cards:
            if card.visible < 0.9:
                continue
            truth = np.asarray(card.corners, float)
            width = float(np.linalg.norm(truth[1] - truth[0]))
            off = truth + rng.normal(0, 0.5, 2) * 0.15 * width + rng.normal(0, 0.05 * width, (4, 2))
            coarse = canonical_order(off[None])[0]
            (fine,) = refiner.refine(result.image, coarse[None])
            before.append(_corner_error(coarse, truth) / width)
            after.append(_corner_error(fine, truth) / width)
    assert len(before) >= 5
    assert np.median(after) < 0.5 * np.median(before)
    assert np.median(after) < 0.06


def test_empty_in_empty_out_and_degenerate_quads_pass_through(refiner: CornerRefiner) -> None:
    image = np.full((720, 1280, 3), 120, np.uint8)
    assert refiner.refine(image, np.zeros((0, 4, 2))).shape == (0, 4, 2)
    assert refiner.predict(np.zeros((0, 120, 96, 3), np.uint8)).shape == (0, 4, 2)
    flat = np.array([[[100.0, 100.0]] * 4])
    np.testing.assert_array_equal(refiner.refine(image, flat), flat)


_SHIFT = np.array([1.0, 2.0])


class _Shifts:
    """A stand-in refiner: moves every corner by (1, 2) px and counts the quads it was given."""

    def __init__(self) -> None:
        self.seen = 0

    def refine(self, image: np.ndarray, quads: np.ndarray) -> np.ndarray:
        self.seen += len(quads)
        return np.asarray(quads, np.float64) + _SHIFT


def test_kept_refinements_answer_a_still_card_again_without_the_model() -> None:
    image = np.zeros((10, 10, 3), np.uint8)
    a = np.array([[10, 10], [40, 10], [40, 52], [10, 52]], np.float64)
    b = a + np.array([100.0, 0.0])
    inner = _Shifts()
    kept = KeptRefinements(inner, tolerance_px=1.0, keep_calls=3)
    np.testing.assert_allclose(kept.refine(image, np.stack([a, b])), np.stack([a, b]) + _SHIFT)
    assert inner.seen == 2
    jitter = a + np.array([0.6, -0.4])  # the finder's corners of the same still card, a frame later
    np.testing.assert_allclose(kept.refine(image, np.stack([jitter]))[0], a + _SHIFT)
    assert inner.seen == 2  # answered from memory
    moved = a + np.array([3.0, 0.0])
    np.testing.assert_allclose(kept.refine(image, np.stack([moved, jitter]))[0], moved + _SHIFT)
    assert inner.seen == 3  # only the card that moved went to the model
    assert kept.refine(image, np.zeros((0, 4, 2))).shape == (0, 4, 2)
    for _ in range(3):
        kept.refine(image, np.zeros((0, 4, 2)))  # three calls without b: forgotten
    kept.refine(image, np.stack([b]))
    assert inner.seen == 4
    with pytest.raises(ValueError, match="keep_calls"):
        KeptRefinements(inner, keep_calls=0)


def test_missing_corrupt_and_wrong_model_files_are_refused(tmp_path: Path) -> None:
    with pytest.raises(CornerModelError, match=r"nope\.onnx.*cardtrack train corners"):
        CornerRefiner(tmp_path / "nope.onnx")
    bad = tmp_path / "corners.onnx"
    bad.write_bytes(b"not a model")
    with pytest.raises(CornerModelError, match=r"corners\.onnx.*not a readable ONNX model"):
        CornerRefiner(bad)
    with pytest.raises(CornerModelError, match="not a cardtrack corner model"):
        CornerRefiner(FINDER_MODEL)


def test_finder_refines_with_the_model_by_default_and_says_when_it_has_none() -> None:
    assert FinderConfig().refine is Refine.MODEL
    finder = Finder(corner_model=None)
    with pytest.raises(FinderModelError, match="corner model"):
        finder.find_one(np.zeros((360, 640, 3), np.uint8))
    assert len(finder.find_one(np.zeros((360, 640, 3), np.uint8), FinderConfig(refine=Refine.NONE))) == 0


def test_training_smoke(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    from vision.train.corners import CornerTrainConfig, render_shard, train_corners

    data = tmp_path / "data"
    render_shard(data, seed=5, shard=0, finder_model=FINDER_MODEL, count=2, designs=8)
    out = tmp_path / "corners.onnx"
    result = train_corners(out, data_dir=data, work_dir=tmp_path / "work", seed=0,
                           config=CornerTrainConfig(steps=2, batch=4, threads=1), progress=False)
    assert result.steps == 2 and result.export_max_diff <= 1e-3 and result.cards > 0
    assert (tmp_path / "work" / "checkpoint.pt").is_file()
    quads = np.array([[[10.0, 10.0], [73.0, 10.0], [73.0, 98.0], [10.0, 98.0]]])
    assert CornerRefiner(out).refine(np.zeros((200, 200, 3), np.uint8), quads).shape == (1, 4, 2)


def test_full_bleed_shards_are_other_stills_kept_beside_the_printed_ones(tmp_path: Path) -> None:
    from vision.train.corners import load_cards, load_shard, render_shard

    printed = render_shard(tmp_path, seed=5, shard=0, finder_model=FINDER_MODEL, count=1, designs=8)
    bleed = render_shard(tmp_path, seed=5, shard=0, finder_model=FINDER_MODEL, count=1, designs=8,
                         full_bleed=True)
    assert (printed.name, bleed.name) == ("shard-00000.pkl", "bleed-00000.pkl")
    a, b = load_shard(printed), load_shard(bleed)
    assert a and b
    assert len(load_cards(tmp_path)) == len(a) + len(b)
    assert not np.array_equal(a[0].truth, b[0].truth), "another scene, not the printed one re-dressed"


def _rect(x: float, y: float, w: float = 40.0, h: float = 56.0) -> np.ndarray:
    return np.array([[x, y], [x + w, y], [x + w, y + h], [x, y + h]], np.float32)


def test_a_found_outline_teaches_the_card_it_belongs_to_not_the_one_under_it() -> None:
    from vision.train.corners import match_found

    # A fan: the top card (wholly visible) lies 12 px right of the card under it (0.3 visible),
    # which lies on a card of the pile under both (nothing of it shows). The finder found the top
    # card only, a little off: its outline overlaps the card under by far more than 0.3.
    under, top, hidden = _rect(100, 100), _rect(112, 100), _rect(112, 100)
    quads = np.stack([under, top, hidden])
    found = (top + 2.0)[None]
    visible = np.array([0.3, 1.0, 0.0])
    assert match_found(found, quads, visible).tolist() == [-1, 0, -1]
    # The card under, found too, gets its own outline; the top card keeps its own.
    both = np.stack([top + 2.0, under - 1.0])
    assert match_found(both, quads, visible).tolist() == [1, 0, -1]
    # An outline far from every card stands for none; nothing found, nothing paired.
    assert match_found(_rect(400, 400)[None], quads, visible).tolist() == [-1, -1, -1]
    assert match_found(np.zeros((0, 4, 2), np.float32), quads, visible).tolist() == [-1, -1, -1]


def test_training_takes_the_cards_from_its_visibility_floor_up(tmp_path: Path) -> None:
    from vision.train.corners import CardPatch, CornerTrainError, _write, cut_patches, load_cards

    image = np.full((300, 400, 3), 90, np.uint8)
    quads = np.stack([_rect(100, 100), _rect(112, 100), _rect(250, 80)])
    patches = cut_patches(image, quads, np.array([0.3, 1.0, 0.1]), np.zeros((0, 4, 2), np.float32))
    assert [p.visible for p in patches] == pytest.approx([0.3, 1.0]), "a card under the floor is not cut"
    assert all(isinstance(p, CardPatch) and p.found is None for p in patches)
    _write(tmp_path, tmp_path / "shard-00000.pkl", patches)
    assert len(load_cards(tmp_path)) == 2
    assert [c.visible for c in load_cards(tmp_path, min_visible=0.5)] == [1.0]
    with pytest.raises(CornerTrainError, match="at least 101% visible"):
        load_cards(tmp_path, min_visible=1.01)
    # A shard of the format before visibility was kept is refused with what to do.
    import pickle

    (tmp_path / "shard-00001.pkl").write_bytes(pickle.dumps([(patches[0].patch, (0, 0), quads[0], None)]))
    with pytest.raises(CornerTrainError, match="delete it to re-render"):
        load_cards(tmp_path)
