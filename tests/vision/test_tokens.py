"""The tokens model on seeded rendered mk. I tables: token counts per zone and the die's face
read exactly; empty in, empty out; a missing or wrong model is a clear error; counts reach the
snapshot only for readable zones."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from calibration.layout import build_layout
from vision.pipeline import build_snapshot
from vision.synth.camera import sample_camera
from vision.synth.effects import sample_style
from vision.synth.faces import FaceLibrary
from vision.synth.render import SceneRenderer
from vision.synth.scene import Scene, TableSpec, table_markers
from vision.synth.tokens import TokenTable
from vision.tokens import (
    CROP_PX,
    DEFAULT_MODEL,
    STRIDE,
    TokenConfig,
    TokenCounter,
    TokenModel,
    TokenModelError,
    counter_zone_ids,
    crop_px_to_mm,
    mm_to_crop_px,
)
from vision.zoning import ZoneContents

pytestmark = pytest.mark.skipif(not DEFAULT_MODEL.is_file(), reason="models/tokens.onnx is not built")


@pytest.fixture(scope="module")
def model() -> TokenModel:
    return TokenModel(DEFAULT_MODEL)


def _table(seed: int, players: int, counts: dict[str, int] | None = None, *, effects: float = 0.6
           ) -> tuple[np.ndarray, dict[str, int], TokenCounter, TokenModel]:
    rng = np.random.default_rng(seed)
    layout = build_layout("minecraft-mk1", players)
    w, h = layout.table_mm
    zones = counter_zone_ids(layout)
    if counts is None:
        counts = {z: (int(rng.integers(0, 7)) if z == "die" else int(rng.integers(0, 9))) for z in zones}
    table = TokenTable(layout=layout, rng=np.random.default_rng([seed, 1]))
    table.load({z: ("d6" if z == "die" else z.rsplit("-", 1)[0] if z != "daylight" else "daylight", n)
                for z, n in counts.items()})
    camera = sample_camera(rng, (-40.0, -40.0, w + 40.0, h + 40.0), (1280, 720))
    # A settled table is read only when nothing moves: no motion blur (as in rendered footage).
    style = replace(sample_style(rng, strength=effects), motion_blur_px=0.0)
    scene = Scene(table=TableSpec(seed=seed, extent_mm=(-260.0, -260.0, w + 260.0, h + 260.0)),
                  tokens=table.placements(), markers=table_markers(w, h))
    image = SceneRenderer(FaceLibrary(), noise_seed=seed).render(scene, camera, style, seed=seed).image

    def to_image(pts: np.ndarray) -> np.ndarray:
        p = np.asarray(pts, np.float64).reshape(-1, 2)
        return camera.project(np.column_stack([p, np.zeros(len(p))]))

    m = TokenModel(DEFAULT_MODEL)
    return image, counts, TokenCounter(model=m, layout=layout, table_to_image=to_image), m


@pytest.mark.parametrize(("seed", "players"), [(11, 3), (12, 5), (13, 4)])
def test_counts_and_die_read_exactly(seed: int, players: int) -> None:
    image, counts, counter, _ = _table(seed, players)
    assert dict(counter.counts(image)) == counts


def test_empty_table_reads_zero_everywhere() -> None:
    image, counts, counter, _ = _table(21, 3, counts=None)
    zeros = dict.fromkeys(counts, 0)
    image, _, counter, _ = _table(21, 3, counts=zeros)
    assert dict(counter.counts(image)) == zeros


def test_empty_in_empty_out(model: TokenModel) -> None:
    assert model.heatmaps(np.zeros((0, CROP_PX, CROP_PX, 3), np.uint8)).shape[0] == 0
    assert model.pieces(np.zeros((0, CROP_PX, CROP_PX, 3), np.uint8), []) == []
    image, _, counter, _ = _table(22, 3, counts=None)
    assert counter.read(image, zones=[]) == {}
    assert counter.read(np.zeros((0, 0, 3), np.uint8)) == {}
    assert counter.read(image, zones=["hotbar-1"]) == {}  # not a counter zone


def test_metadata_names_the_classes(model: TokenModel) -> None:
    assert {"health", "hunger", "daylight"} <= set(model.classes)
    assert {f"d6:{i}" for i in range(1, 7)} <= set(model.classes)


def test_crop_coordinates_round_trip() -> None:
    pts = np.array([[10.0, 20.0], [123.4, -5.5]])
    centre = (50.0, 60.0)
    assert np.allclose(crop_px_to_mm(centre, mm_to_crop_px(centre, pts)), pts)


def test_missing_model_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(TokenModelError, match="cardtrack train tokens"):
        TokenModel(tmp_path / "nope.onnx")


def test_wrong_model_is_a_clear_error(tmp_path: Path) -> None:
    junk = tmp_path / "junk.onnx"
    junk.write_bytes(b"not a model")
    with pytest.raises(TokenModelError, match="not a readable ONNX model"):
        TokenModel(junk)
    other = Path(__file__).resolve().parents[2] / "models" / "identifier.onnx"
    if other.is_file():
        with pytest.raises(TokenModelError, match="not a cardtrack tokens model"):
            TokenModel(other)


def test_snapshot_carries_counts_of_readable_zones_only() -> None:
    contents = ZoneContents(zones={}, outside=())
    snap = build_snapshot(contents, frozenset({"health-1", "die"}), 5, 0.2,
                          {"health-1": 4, "die": 6, "hunger-1": 3})
    assert dict(snap.counts) == {"health-1": 4, "die": 6}
    assert snap.settled == frozenset({"health-1", "die"})


class _Heat(TokenModel):
    """A tokens model that always sees the same heatmaps (no ONNX file)."""

    has_die_classifier = False

    def __init__(self, heat: np.ndarray, classes: tuple[str, ...]) -> None:
        self.classes = classes
        self._heat = heat

    def heatmaps(self, crops: np.ndarray) -> np.ndarray:
        return np.stack([self._heat] * len(crops))

    def heatmaps_turned(self, crop: np.ndarray) -> np.ndarray:
        return self._heat


class _TurnedHeat(_Heat):
    """A tokens model whose turned views see other heatmaps than the plain crop."""

    def __init__(self, heat: np.ndarray, turned: np.ndarray, classes: tuple[str, ...]) -> None:
        super().__init__(heat, classes)
        self._turned = turned
        self.turned_reads = 0

    def heatmaps_turned(self, crop: np.ndarray) -> np.ndarray:
        self.turned_reads += 1
        return self._turned


def test_a_faint_token_counts_only_if_the_turned_views_confirm_it() -> None:
    """A faint peak (0.5) that fades in the turned views (a knot in the wood) is not a token;
    a faint one that stays (a real token far from the camera) is; a strong one is never looked
    at again, and a crop without a faint peak is read once."""
    classes = ("health", "hunger", "daylight", "d6", *(f"d6:{k}" for k in range(1, 7)))
    cells = CROP_PX // STRIDE
    k = classes.index("hunger")
    heat = np.full((len(classes), cells, cells), 0.02, np.float32)
    heat[k, 10, 10], heat[k, 30, 10], heat[k, 30, 40] = 0.95, 0.5, 0.55
    turned = heat.copy()
    turned[k, 10, 10], turned[k, 30, 10], turned[k, 30, 40] = 0.3, 0.2, 0.6
    crops = np.zeros((1, CROP_PX, CROP_PX, 3), np.float32)
    model = _TurnedHeat(heat, turned, classes)
    (found,) = model.pieces(crops, [(0.0, 0.0)], TokenConfig())
    kept = sorted((round(p.score, 2), p.kind) for p in found)
    assert kept == [(0.55, "hunger"), (0.95, "hunger")] and model.turned_reads == 1
    (all_three,) = model.pieces(crops, [(0.0, 0.0)], TokenConfig(confirm_below=0.0))
    assert len(all_three) == 3 and model.turned_reads == 1
    strong = heat.copy()
    strong[k, 30, 10] = strong[k, 30, 40] = 0.02
    sure = _TurnedHeat(strong, turned, classes)
    (one,) = sure.pieces(crops, [(0.0, 0.0)], TokenConfig())
    assert len(one) == 1 and sure.turned_reads == 0


def test_a_faint_die_is_read_in_its_zone_only() -> None:
    """A die peaking at 0.35 (white on a pale cloth) is read in a die zone, which holds one die
    at most; the same peak elsewhere is not a piece."""
    classes = ("health", "hunger", "daylight", "d6", *(f"d6:{k}" for k in range(1, 7)))
    cells = CROP_PX // STRIDE
    heat = np.full((len(classes), cells, cells), 0.02, np.float32)
    heat[classes.index("d6"), 20, 30] = 0.35
    heat[classes.index("d6:5"), 20, 30] = 0.3
    model = _Heat(heat, classes)
    crops = np.zeros((2, CROP_PX, CROP_PX, 3), np.float32)
    die_zone, token_zone = model.pieces(crops, [(0.0, 0.0), (0.0, 0.0)], TokenConfig(), die=[True, False])
    assert [p.kind for p in die_zone] == ["d6:5"] and not token_zone
    (strict,) = model.pieces(crops[:1], [(0.0, 0.0)], TokenConfig(die_threshold=0.45), die=[True])
    assert not strict


def test_a_die_against_its_zone_edge_is_its_zone_s() -> None:
    """A die whose centre lies just outside the die zone (rolled against its edge), in no
    other zone, is read; one well outside is not."""
    layout = build_layout("minecraft-mk1", 3)
    zone = layout.zone("die")
    classes = ("health", "hunger", "daylight", "d6", *(f"d6:{k}" for k in range(1, 7)))
    cells = CROP_PX // STRIDE
    half_height = (zone.bounds[3] - zone.bounds[1]) / 2

    def reading(mm_above_centre: float, config: TokenConfig | None = None) -> int:
        heat = np.full((len(classes), cells, cells), 0.02, np.float32)
        cell = round((CROP_PX / 2 - mm_above_centre * 2.0) / STRIDE - 0.5)  # 2 px per mm
        heat[classes.index("d6"), cell, cells // 2] = 0.9
        heat[classes.index("d6:4"), cell, cells // 2] = 0.9
        model = _Heat(heat, classes)
        counter = TokenCounter(model=model, layout=layout, config=config or TokenConfig(),
                               table_to_image=lambda pts: np.asarray(pts, np.float64).reshape(-1, 2) * 0.5)
        return counter.counts(np.zeros((600, 800, 3), np.uint8), ["die"])["die"]

    assert reading(0.0) == 4
    assert reading(half_height + 3.0) == 4
    assert reading(half_height + 20.0) == 0
    assert reading(half_height + 3.0, TokenConfig(die_margin_mm=0.0)) == 0
