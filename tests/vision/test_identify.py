"""The card identifier with the shipped model: embeddings, galleries, cache, matching, errors.

Small art packs are drawn with the proxy renderer into temporary folders; galleries are cached
in a temporary folder too. The last test trains two steps with torch and is skipped without it.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from engine.catalog import load_catalog
from vision.art.pack import ArtPack, save_pack
from vision.art.proxy import render_face
from vision.identify import (
    CARD_INSET,
    DEFAULT_MODEL,
    MIN_SCORE,
    Gallery,
    Identifier,
    IdentifierError,
    Match,
    inset_view,
    masked_embeddings,
    visible_cells,
)
from vision.preprocess import INPUT_HEIGHT, INPUT_WIDTH, preprocess_batch

OWN = ("wood-1", "wood-3", "stone-2", "diamond-1", "creeper", "tnt", "iron-pickaxe/craft",
       "iron-pickaxe/tool", "gold-sword/craft", "resource-back")
FOREIGN = ("back.wood", "back.mining", "storm", "rain", "wood", "stick")


def _pack(root: Path, game: str, faces: tuple[str, ...], dpi: float = 120) -> ArtPack:
    catalog = load_catalog(game)
    images = {fid: render_face(catalog, fid, dpi) for fid in faces}
    return save_pack(root, game=game, name=f"test {game}", source="proxy", images=images)


@pytest.fixture(scope="module")
def identifier() -> Identifier:
    return Identifier()


@pytest.fixture(scope="module")
def own_pack(tmp_path_factory: pytest.TempPathFactory) -> ArtPack:
    return _pack(tmp_path_factory.mktemp("own"), "minecraft-card-game", OWN)


@pytest.fixture(scope="module")
def gallery(own_pack: ArtPack, identifier: Identifier, tmp_path_factory: pytest.TempPathFactory) -> Gallery:
    return Gallery.build(own_pack, identifier, cache_dir=tmp_path_factory.mktemp("galleries"))


def top_floor(n: int) -> float:
    """Scores are floored at MIN_SCORE, so n candidates may exceed the true mass by that much."""
    return n * MIN_SCORE + 1e-12


def _webcam_size(image: np.ndarray, width: int = 90) -> np.ndarray:
    import cv2

    h, w = image.shape[:2]
    return cv2.resize(image, (width, round(h * width / w)), interpolation=cv2.INTER_AREA)


def test_empty_in_empty_out(identifier: Identifier) -> None:
    assert identifier.embed([]).shape == (0, identifier.dim)
    assert identifier.embed(np.zeros((0, 40, 30, 3), np.uint8)).shape == (0, identifier.dim)


def test_embeddings_are_unit_vectors_one_per_crop(identifier: Identifier) -> None:
    rng = np.random.default_rng(11)
    crops = [rng.integers(0, 256, (h, w, 3), dtype=np.uint8) for h, w in ((120, 86), (60, 90), (200, 140))]
    emb = identifier.embed(crops)
    assert emb.shape == (3, identifier.dim) and emb.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(emb, axis=1), 1.0, atol=1e-5)
    # The same preprocessing as training: each crop's embedding is the model's embedding of
    # the crop plus that of its inset view, normalised.
    views = identifier.embed_tensors(preprocess_batch([*crops, *(inset_view(c, CARD_INSET) for c in crops)]))
    summed = views[:3] + views[3:]
    np.testing.assert_allclose(summed / np.linalg.norm(summed, axis=1, keepdims=True), emb, atol=1e-6)
    single = Identifier(identifier.model_path, inset=0.0)
    np.testing.assert_allclose(single.embed(crops), single.embed_tensors(preprocess_batch(crops)), atol=1e-6)
    # Galleries of the two ways of embedding are not mixed up in the cache.
    assert single.digest != identifier.digest


def test_the_inset_view_trims_every_side_and_keeps_the_size() -> None:
    crop = np.zeros((100, 50, 3), np.uint8)
    crop[10:90, 5:45] = 200  # a frame 10 % of the height and width wide around a bright card
    view = inset_view(crop, 0.1)
    assert view.shape == crop.shape
    assert view[1:-1, 1:-1].min() >= 190  # the frame is gone, the card fills the view
    with pytest.raises(IdentifierError, match="inset"):
        Identifier(DEFAULT_MODEL, inset=0.5)


def test_identifier_keeps_nothing_per_call(identifier: Identifier) -> None:
    before = dict(vars(identifier))
    identifier.embed([np.zeros((90, 60, 3), np.uint8)])
    assert vars(identifier).keys() == before.keys()
    assert all(vars(identifier)[k] is v for k, v in before.items())


def test_shipped_model_carries_its_calibration(identifier: Identifier) -> None:
    meta = identifier.metadata
    assert meta["cardtrack.preprocess"]
    cal = identifier.calibration
    assert cal.temperature > 0 and 0 < cal.threshold < 1
    assert identifier.model_path == DEFAULT_MODEL
    assert DEFAULT_MODEL.stat().st_size < 10 * 1024 * 1024


def test_missing_model_says_how_to_get_one(tmp_path: Path) -> None:
    missing = tmp_path / "nope.onnx"
    with pytest.raises(IdentifierError) as info:
        Identifier(missing)
    assert str(missing) in str(info.value)
    assert "cardtrack train identifier" in str(info.value)


def test_corrupt_model_is_a_clear_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"this is not an onnx file" * 10)
    with pytest.raises(IdentifierError) as info:
        Identifier(bad)
    assert str(bad) in str(info.value) and "cardtrack train identifier" in str(info.value)
    truncated = tmp_path / "truncated.onnx"
    truncated.write_bytes(DEFAULT_MODEL.read_bytes()[:5000])
    with pytest.raises(IdentifierError, match=r"truncated\.onnx"):
        Identifier(truncated)


def test_gallery_is_built_once_then_loaded_from_cache(own_pack: ArtPack, identifier: Identifier,
                                                      tmp_path: Path) -> None:
    first = Gallery.build(own_pack, identifier, cache_dir=tmp_path)
    assert not first.from_cache
    assert first.faces == OWN and first.embeddings.shape == (2 * len(OWN), identifier.dim)
    second = Gallery.build(own_pack, identifier, cache_dir=tmp_path)
    assert second.from_cache and second.key == first.key
    np.testing.assert_array_equal(second.embeddings, first.embeddings)
    # The per-cell terms that read a covered card are cached with the embeddings.
    assert first.reads_covered and second.reads_covered
    assert first.cell_layout is not None and second.cell_layout is not None
    np.testing.assert_array_equal(second.cell_layout, first.cell_layout)
    # The 0° and 180° entries of a face differ: the proxy art is never turn-symmetric.
    assert first.orientation_sensitive("creeper")


def test_gallery_cache_follows_the_images(own_pack: ArtPack, identifier: Identifier, tmp_path: Path) -> None:
    import shutil

    copy = tmp_path / "pack"
    shutil.copytree(own_pack.root, copy)
    from vision.art.pack import load_pack

    pack = load_pack(copy)
    cache = tmp_path / "cache"
    Gallery.build(pack, identifier, cache_dir=cache)
    # Repaint one face: the cached gallery no longer matches and is rebuilt.
    catalog = load_catalog("minecraft-card-game")
    import cv2

    cv2.imwrite(str(pack.path("tnt")), render_face(catalog, "wood-2", 120))
    again = Gallery.build(pack, identifier, cache_dir=cache)
    assert not again.from_cache


def test_clean_crops_match_their_face_and_turn(gallery: Gallery, own_pack: ArtPack,
                                               identifier: Identifier) -> None:
    crops = [_webcam_size(own_pack.image(fid)) for fid in OWN]
    turned = [np.ascontiguousarray(c[::-1, ::-1]) for c in crops]
    matches = gallery.match(identifier.embed(crops + turned), top_k=3)
    n = len(OWN)
    for fid, m in zip(OWN, matches[:n], strict=True):
        assert m.best is not None and (m.best.face, m.best.rotated_180) == (fid, False), m
        assert not m.unknown
    for fid, m in zip(OWN, matches[n:], strict=True):
        assert m.best is not None and (m.best.face, m.best.rotated_180) == (fid, True), m


def test_match_candidates_are_ranked_probabilities(gallery: Gallery, own_pack: ArtPack,
                                                   identifier: Identifier) -> None:
    matches = gallery.match(identifier.embed([_webcam_size(own_pack.image("wood-3"), 60)]), top_k=4)
    (m,) = matches
    assert isinstance(m, Match) and len(m.candidates) == 4
    scores = [c.score for c in m.candidates]
    assert scores == sorted(scores, reverse=True)
    assert all(0.0 < s <= 1.0 for s in scores)
    assert sum(scores) + m.unknown_score <= 1.0 + top_floor(len(scores))
    assert len({(c.face, c.rotated_180) for c in m.candidates}) == 4
    assert gallery.match(np.zeros((0, gallery.dim), np.float32)) == []
    with pytest.raises(IdentifierError, match="top_k"):
        gallery.match(identifier.embed([_webcam_size(own_pack.image("wood-3"))]), top_k=0)


def test_faces_of_another_deck_score_low(gallery: Gallery, own_pack: ArtPack, identifier: Identifier,
                                         tmp_path: Path) -> None:
    foreign = _pack(tmp_path / "foreign", "minecraft-mk1", FOREIGN)
    own = gallery.match(identifier.embed([_webcam_size(own_pack.image(f)) for f in OWN]))
    other = gallery.match(identifier.embed([_webcam_size(foreign.image(f)) for f in FOREIGN]))
    own_best = np.mean([m.best.score for m in own if m.best])
    other_best = np.mean([m.best.score for m in other if m.best])
    assert other_best < own_best
    assert sum(m.unknown for m in other) >= len(other) / 2
    assert np.mean([m.unknown_score for m in other]) > np.mean([m.unknown_score for m in own])


def _fanned(under: np.ndarray, over: np.ndarray, shown: float) -> tuple[np.ndarray, np.ndarray]:
    """`under` with `over` laid on it from `shown` of its width on (a fan): the crop, and the
    mask of what shows of `under`."""
    cut = round(under.shape[1] * shown)
    crop = under.copy()
    crop[:, cut:] = over[:, : under.shape[1] - cut]
    mask = np.zeros(crop.shape[:2], np.uint8)
    mask[:, :cut] = 1
    return crop, mask


def test_the_cell_terms_sum_to_the_embedding(identifier: Identifier, own_pack: ArtPack) -> None:
    crops = [_webcam_size(own_pack.image(f)) for f in OWN[:4]]
    layout, content = identifier.cells(crops)
    rows, cols = identifier.cell_grid or (0, 0)
    assert layout.shape == content.shape == (2, rows * cols, 4, identifier.dim)
    # Every cell seen: each view's own embedding, and the two views added, the crop's.
    every = np.ones((1, rows * cols), np.float32)
    views = masked_embeddings(layout[0], content[0], every)[0] + masked_embeddings(layout[1], content[1], every)[0]
    summed = views / np.linalg.norm(views, axis=1, keepdims=True)
    np.testing.assert_allclose(summed, identifier.embed(crops), atol=1e-5)
    # Several masks at once are each the mask alone.
    half = np.zeros((1, rows * cols), np.float32)
    half[0, : rows * cols // 2] = 1
    both = masked_embeddings(layout[0], content[0], np.concatenate([every, half]))
    np.testing.assert_allclose(both[1], masked_embeddings(layout[0], content[0], half)[0], atol=1e-6)
    assert not np.allclose(both[0], both[1], atol=1e-3)
    empty_layout, _ = identifier.cells([])
    assert empty_layout.shape == (2, rows * cols, 0, identifier.dim)


def test_visible_cells_follow_the_mask_and_the_crops_turn(identifier: Identifier) -> None:
    grid = identifier.cell_grid
    assert grid is not None
    rows, cols = grid
    left = np.zeros((112, 80), np.uint8)
    left[:, :40] = 1  # the left half of a portrait crop
    w = visible_cells(left, grid, 0.0)
    assert w.shape == (1, rows * cols)
    cells = w[0].reshape(rows, cols)
    assert cells[:, : cols // 2].all() and not cells[:, cols // 2 + 1:].any()
    # A landscape crop is read turned a quarter clockwise: its top strip becomes the right side.
    top = np.zeros((80, 112), np.uint8)
    top[:30] = 1
    turned = visible_cells(top, grid, CARD_INSET)
    assert turned.shape == (2, rows * cols)
    assert turned[0].reshape(rows, cols)[:, -1].all() and not turned[0].reshape(rows, cols)[:, 0].any()


def test_a_card_half_under_another_is_read_from_its_visible_part(gallery: Gallery, own_pack: ArtPack,
                                                                identifier: Identifier) -> None:
    pairs = [("wood-3", "diamond-1"), ("creeper", "tnt"), ("iron-pickaxe/tool", "gold-sword/craft"),
             ("diamond-1", "wood-3")]
    unknown_whole = 0
    for under, over in pairs:
        crop, mask = _fanned(_webcam_size(own_pack.image(under)), _webcam_size(own_pack.image(over)), 0.42)
        (whole,) = gallery.match(identifier.embed([crop]))
        unknown_whole += whole.unknown or whole.best is None or whole.best.face != under
        layout, content = identifier.cells([crop])
        weights = visible_cells(mask, identifier.cell_grid or (0, 0), identifier.inset)
        (seen,) = gallery.match_visible(layout, content, weights[None])
        assert seen.best is not None and seen.best.face == under and not seen.unknown, (under, seen)
        # The same crop with the whole of it taken as seen reads as the whole crop does (within
        # the gallery's views, whose cell terms are averaged, not their unit embeddings).
        (as_whole,) = gallery.match_visible(layout, content, np.ones_like(weights)[None])
        assert as_whole.best is not None and whole.best is not None
        assert as_whole.best.face == whole.best.face
        assert as_whole.best.score == pytest.approx(whole.best.score, abs=0.02)
    assert unknown_whole >= 3  # whole, such a crop shows two cards and is mostly not named


def test_match_visible_needs_the_cell_terms_and_their_shape(gallery: Gallery, identifier: Identifier,
                                                            own_pack: ArtPack) -> None:
    layout, content = identifier.cells([_webcam_size(own_pack.image("wood-1"))])
    rows, cols = identifier.cell_grid or (0, 0)
    with pytest.raises(IdentifierError, match="weights"):
        gallery.match_visible(layout, content, np.ones((1, rows * cols), np.float32))
    bare = Gallery(faces=gallery.faces, embeddings=gallery.embeddings, calibration=gallery.calibration)
    assert not bare.reads_covered
    with pytest.raises(IdentifierError, match="per-cell"):
        bare.match_visible(layout, content, np.ones((1, 2, rows * cols), np.float32))


def test_a_symmetric_face_reads_one_way_up(identifier: Identifier) -> None:
    # A face that looks the same turned has its two entries merged into one, never "turned".
    rng = np.random.default_rng(2)
    quarter = rng.integers(0, 256, (45, 32, 3), dtype=np.uint8)
    top = np.concatenate([quarter, quarter[:, ::-1]], axis=1)
    sym = np.ascontiguousarray(np.concatenate([top, top[::-1, ::-1]], axis=0))
    g = Gallery.from_images({"sym": sym, "other": np.full((90, 64, 3), 40, np.uint8)}, identifier)
    assert not g.orientation_sensitive("sym")
    (m,) = g.match(identifier.embed([np.ascontiguousarray(sym[::-1, ::-1])]), top_k=5)
    assert all(not c.rotated_180 for c in m.candidates if c.face == "sym")
    assert [c.face for c in m.candidates].count("sym") == 1


def test_training_two_steps_exports_a_working_model(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("torch")
    pytest.importorskip("onnx")
    from vision.identify import Calibration
    from vision.train.data import PoolConfig
    from vision.train.identifier import TrainConfig, train_identifier

    monkeypatch.setenv("CARDTRACK_CACHE", str(tmp_path / "cache"))
    config = TrainConfig(steps=2, batch=8, workers=0, threads=1, checkpoint_every=1,
                         pool=PoolConfig(games=(), designs=6))
    out = tmp_path / "tiny.onnx"
    result = train_identifier(out, seed=5, config=config, work_dir=tmp_path / "work", progress=False,
                              calibrate=lambda model, seed: Calibration(temperature=0.1))
    assert result.steps == 2 and result.export_max_diff <= 1e-4
    assert (tmp_path / "work" / "checkpoint.pt").is_file()
    model = Identifier(out)
    assert model.calibration.temperature == pytest.approx(0.1)
    emb = model.embed([np.zeros((INPUT_HEIGHT, INPUT_WIDTH, 3), np.uint8)])
    assert emb.shape == (1, 128)
    assert model.cell_grid == (7, 5)  # the export adds the per-cell outputs
    # Resuming from the last checkpoint with more steps continues from step 2.
    more = TrainConfig(steps=3, batch=8, workers=0, threads=1, checkpoint_every=1,
                       pool=PoolConfig(games=(), designs=6))
    again = train_identifier(out, seed=5, config=more, work_dir=tmp_path / "work", progress=False,
                             resume=tmp_path / "work" / "checkpoint.pt",
                             calibrate=lambda model, seed: Calibration())
    assert again.steps == 3


def test_a_checkpoint_made_before_a_crop_effect_existed_resumes_while_the_effect_is_off(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    torch = pytest.importorskip("torch")
    pytest.importorskip("onnx")
    from dataclasses import replace

    from vision.identify import Calibration
    from vision.train.data import PoolConfig
    from vision.train.identifier import TrainConfig, TrainError, train_identifier

    monkeypatch.setenv("CARDTRACK_CACHE", str(tmp_path / "cache"))
    config = TrainConfig(steps=1, batch=8, workers=0, threads=1, checkpoint_every=1,
                         pool=PoolConfig(games=(), designs=6))
    work = tmp_path / "work"
    train_identifier(tmp_path / "a.onnx", seed=5, config=config, work_dir=work, progress=False,
                     calibrate=lambda model, seed: Calibration())
    ckpt = work / "checkpoint.pt"
    state = torch.load(ckpt, map_location="cpu", weights_only=False)
    # Checkpoints written before neighbours existed held the fields of the object effect, off.
    assert "neighbour_probability" not in state["config"]["crops"]
    assert not any(key.startswith("scene_") for key in state["config"])  # no scene crops drawn
    state["config"]["crops"].update(object_probability=0.0, max_object=0.55)
    torch.save(state, ckpt)
    more = replace(config, steps=2)
    again = train_identifier(tmp_path / "b.onnx", seed=5, config=more, work_dir=work, progress=False,
                             resume=ckpt, calibrate=lambda model, seed: Calibration())
    assert again.steps == 2
    # With the effect on, the batches differ from the checkpoint's: it is refused.
    on = replace(config, steps=3, crops=replace(config.crops, neighbour_probability=0.3))
    with pytest.raises(TrainError, match="other options"):
        train_identifier(tmp_path / "c.onnx", seed=5, config=on, work_dir=work, progress=False,
                         resume=ckpt, calibrate=lambda model, seed: Calibration())


def test_training_with_scene_crops_records_them_in_its_checkpoint(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    torch = pytest.importorskip("torch")
    pytest.importorskip("onnx")
    from dataclasses import replace

    from vision.identify import Calibration
    from vision.train.data import PoolConfig
    from vision.train.identifier import TrainConfig, TrainError, train_identifier

    monkeypatch.setenv("CARDTRACK_CACHE", str(tmp_path / "cache"))
    config = TrainConfig(steps=2, batch=8, workers=0, threads=1, checkpoint_every=1,
                         pool=PoolConfig(games=(), designs=12), scene_share=0.5, scene_shots=1,
                         scene_stills=4)
    work = tmp_path / "work"
    result = train_identifier(tmp_path / "s.onnx", seed=5, config=config, work_dir=work, progress=False,
                              calibrate=lambda model, seed: Calibration())
    assert result.steps == 2
    # The designs' cards were cut out of rendered scenes once, into the training cache.
    assert len(list((tmp_path / "cache" / "train").glob("identifier-scenes-*.crops.npy"))) == 1
    state = torch.load(work / "checkpoint.pt", map_location="cpu", weights_only=False)
    assert state["config"]["scene_share"] == 0.5
    # Its batches are not those of a run without scene crops: resuming as one is refused.
    with pytest.raises(TrainError, match="other options"):
        train_identifier(tmp_path / "t.onnx", seed=5, config=replace(config, steps=3, scene_share=0.0),
                         work_dir=work, progress=False, resume=work / "checkpoint.pt",
                         calibrate=lambda model, seed: Calibration())


def _without_cells(model: object) -> object:
    """A copy of an ONNX identifier with its per-cell outputs, nodes and grid taken out."""
    import onnx

    out = onnx.ModelProto()
    out.CopyFrom(model)  # type: ignore[arg-type]
    kept = [n for n in out.graph.node if not any(o.startswith("cells/") or o.startswith("cell_") for o in n.output)]
    del out.graph.node[:]
    out.graph.node.extend(kept)
    outputs = [o for o in out.graph.output if o.name == "embeddings"]
    del out.graph.output[:]
    out.graph.output.extend(outputs)
    inits = [i for i in out.graph.initializer if not i.name.startswith("cells/")]
    del out.graph.initializer[:]
    out.graph.initializer.extend(inits)
    meta = [m for m in out.metadata_props if m.key != "cardtrack.cells"]
    del out.metadata_props[:]
    out.metadata_props.extend(meta)
    return out


def test_cell_outputs_are_added_to_a_model_without_them(tmp_path: Path, own_pack: ArtPack) -> None:
    onnx = pytest.importorskip("onnx")
    from vision.pipeline import GalleryIdentifier
    from vision.train.cells import add_cell_outputs, add_cell_outputs_file, main

    bare = tmp_path / "bare.onnx"
    onnx.save(_without_cells(onnx.load(str(DEFAULT_MODEL))), str(bare))
    old = Identifier(bare)
    assert old.cell_grid is None
    with pytest.raises(IdentifierError, match="no per-cell outputs"):
        old.cells([np.zeros((INPUT_HEIGHT, INPUT_WIDTH, 3), np.uint8)])
    gallery = Gallery.build(own_pack, old, cache_dir=tmp_path / "cache")
    assert not gallery.reads_covered and not GalleryIdentifier(old, gallery).reads_covered
    added = add_cell_outputs_file(bare, tmp_path / "cells.onnx")
    # The command does the same and says how close the sum is; a missing file is an error.
    assert main([str(bare), str(tmp_path / "again.onnx")]) == 0
    assert Identifier(tmp_path / "again.onnx").cell_grid == (7, 5)
    assert main([str(tmp_path / "missing.onnx")]) == 1 and main([]) == 2
    new = Identifier(added)
    assert new.cell_grid == (7, 5)
    crops = [_webcam_size(own_pack.image(f)) for f in OWN[:3]]
    np.testing.assert_allclose(new.embed(crops), old.embed(crops), atol=1e-6)
    assert GalleryIdentifier(new, Gallery.build(own_pack, new, cache_dir=tmp_path / "cache")).reads_covered
    # Adding them twice changes nothing; a grid that does not fit the outputs is refused.
    again = add_cell_outputs(onnx.load(str(added)))
    assert len(again.graph.output) == 3
    for grid, error in (("5x7x", "ROWSxCOLS"), ("5x5", "cell_layout")):
        for entry in again.metadata_props:
            if entry.key == "cardtrack.cells":
                entry.value = grid
        onnx.save(again, str(tmp_path / "bad.onnx"))
        with pytest.raises(IdentifierError, match=error):
            Identifier(tmp_path / "bad.onnx")
