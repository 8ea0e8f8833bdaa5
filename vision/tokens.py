"""Tokens and the die: find them in counter zones, count them per zone, read the die.

A sibling of the card finder for the small round pieces. Each counter zone of the layout (token
areas such as `health-2`, `daylight`, and the die's zone) is rectified from the camera frame into
a square crop of the table, `CROP_MM` wide around the zone's centre at `PX_PER_MM`, through the
calibration (lens and homography, `table_to_image`); the crop maps are computed once per
calibration. The ONNX model (`models/tokens.onnx`, trained by `cardtrack train tokens`) turns a
crop into one centre heatmap per class, at stride `STRIDE`: the token kinds (health, hunger,
daylight), the die (`d6`) and one class per die face (`d6:1` .. `d6:6`). Peaks of the heatmaps are the pieces;
their crop position is a table position, so each piece is assigned to the layout's zone under
its centre, and a zone counts only the pieces whose centre lies in it (a crowded neighbour's
tokens spill into the crop but are not counted). A token area counts the tokens of its own kind
(the zone id without its player number, e.g. `health-2` → `health`), or every token when the
model knows no such kind; the die zone reads the face of its strongest die peak, 0 without one
(its crop read as the average of its eight quarter-turned and mirrored views: the pips are small),
and the face comes from the model's die-face classifier, on a `DIE_PATCH_MM` patch cut around the
die's top face (also averaged over eight views).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import MappingProxyType
from typing import Any

import cv2
import numpy as np

from calibration.layout import Layout, Stacking, ZoneKind
from vision.onnx import open_model

CROP_MM = 112.0
PX_PER_MM = 2.0
CROP_PX = round(CROP_MM * PX_PER_MM)
STRIDE = 4
DIE_PATCH_MM = 24.0  # the die-face classifier's patch around the die's top face
DIE_PATCH_PX = round(DIE_PATCH_MM * PX_PER_MM)
DIE_PREFIX = "d6:"
MODEL_KIND = "tokens"
DEFAULT_MODEL = Path(__file__).resolve().parents[1] / "models" / "tokens.onnx"
TRAIN_COMMAND = "cardtrack train tokens"

TableToImage = Callable[[np.ndarray], np.ndarray]


class TokenModelError(ValueError):
    """A missing or unusable tokens model; the message says how to get one."""


@dataclass(frozen=True, slots=True, kw_only=True)
class TokenConfig:
    """Reading knobs. `threshold`: least peak score of a piece (lower finds tokens half hidden
    but also counts look-alikes); `die_threshold`: the same in a die zone, which holds one die
    at most, so a faint die (white on a pale cloth, far from the camera) is still read, while
    an empty die zone of the rendered clips in `models/tokens.md` reads none; `die_margin_mm`:
    a die whose centre lies this far outside its zone, in no other zone, is still its zone's
    (half a die: one rolled against the zone's edge); `min_distance_mm`: two peaks closer than
    this are one piece (below a token's radius: overlapping tokens still count twice);
    `confirm_below`: a token peak scoring less than this is looked at again, in the average of
    its crop's eight turned views (`TokenModel.heatmaps_turned`), and counts only if it reaches
    `confirm_threshold` there: a look-alike in the cloth (a knot in wood under brown tokens)
    fades when turned, a real faint token does not (0 turns the second look off)."""

    threshold: float = 0.45
    confirm_below: float = 0.7
    confirm_threshold: float = 0.5
    die_threshold: float = 0.25
    die_margin_mm: float = 8.0
    min_distance_mm: float = 9.0


@dataclass(frozen=True, slots=True, kw_only=True)
class Piece:
    """One token or the die: its class (`health`, `d6:4`...), table position (mm) and score."""

    kind: str
    center_mm: tuple[float, float]
    score: float

    @property
    def die_face(self) -> int | None:
        return int(self.kind[len(DIE_PREFIX):]) if self.kind.startswith(DIE_PREFIX) else None


@dataclass(frozen=True, slots=True, kw_only=True)
class ZoneReading:
    """What one counter zone shows: its number (tokens counted, or the die's face; 0 for no
    die) and the pieces whose centre lies in it."""

    zone: str
    count: int
    pieces: tuple[Piece, ...] = ()


def crop_grid(centre_mm: Sequence[float]) -> np.ndarray:
    """`(CROP_PX*CROP_PX, 2)` table mm of every crop pixel centre (row major)."""
    step = 1.0 / PX_PER_MM
    offs = (np.arange(CROP_PX) + 0.5) * step - CROP_MM / 2.0
    xs, ys = np.meshgrid(offs + float(centre_mm[0]), offs + float(centre_mm[1]))
    return np.column_stack([xs.ravel(), ys.ravel()])


def crop_maps(centre_mm: Sequence[float], table_to_image: TableToImage) -> np.ndarray:
    """`(CROP_PX, CROP_PX, 2)` float32 image coordinates of the crop's pixels (for cv2.remap)."""
    px = table_to_image(crop_grid(centre_mm))
    return np.asarray(px, np.float32).reshape(CROP_PX, CROP_PX, 2)


def rectify(image: np.ndarray, maps: np.ndarray) -> np.ndarray:
    """The crop of `image` (BGR uint8) seen through `maps`."""
    return cv2.remap(image, maps, None, cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT, borderValue=(0, 0, 0))


def crop_px_to_mm(centre_mm: Sequence[float], px: np.ndarray) -> np.ndarray:
    """Crop pixel coordinates (continuous, pixel centres at +0.5) → table mm."""
    return np.asarray(px, np.float64) / PX_PER_MM - CROP_MM / 2.0 + np.asarray(centre_mm, np.float64)


def mm_to_crop_px(centre_mm: Sequence[float], mm: np.ndarray) -> np.ndarray:
    return (np.asarray(mm, np.float64) - np.asarray(centre_mm, np.float64) + CROP_MM / 2.0) * PX_PER_MM


def to_input(crops: np.ndarray) -> np.ndarray:
    """`(n, H, W, 3)` BGR uint8 crops → `(n, 3, H, W)` float32 in [0, 1]."""
    return np.ascontiguousarray(crops.transpose(0, 3, 1, 2), np.float32) * (1.0 / 255.0)


def piece_classes(classes: Sequence[str]) -> list[int]:
    """Indices of the piece classes (tokens and `d6`; not the die's face classes `d6:k`)."""
    return [i for i, n in enumerate(classes) if ":" not in n]


def decode_peaks(heat: np.ndarray, classes: Sequence[str], config: TokenConfig) -> list[tuple[str, float, float, float]]:
    """Peaks of one crop's `(C, h, w)` sigmoid heatmaps: (class, x px, y px, score), best first.

    A peak is a local maximum over the piece classes (3×3) above `threshold`, given its best
    class; a piece with face classes (`d6` has `d6:1`..`d6:6`) is given its strongest face;
    peaks closer than `min_distance_mm` to a stronger one are dropped. Positions are refined by
    the heat-weighted mean of the 3×3 neighbourhood, in crop pixels."""
    objects = piece_classes(classes)
    best = heat[objects].max(axis=0)
    cls = np.asarray(objects)[heat[objects].argmax(axis=0)]
    dil = cv2.dilate(best.astype(np.float32), np.ones((3, 3), np.uint8))
    ys, xs = np.nonzero((best >= dil) & (best >= config.threshold))
    order = np.argsort(-best[ys, xs])
    h, w = best.shape
    out: list[tuple[str, float, float, float]] = []
    min_px = config.min_distance_mm * PX_PER_MM
    for k in order:
        y, x = int(ys[k]), int(xs[k])
        y0, y1, x0, x1 = max(0, y - 1), min(h, y + 2), max(0, x - 1), min(w, x + 2)
        patch = best[y0:y1, x0:x1]
        gy, gx = np.mgrid[y0:y1, x0:x1]
        wsum = float(patch.sum())
        fx = float((gx * patch).sum() / wsum) if wsum > 0 else float(x)
        fy = float((gy * patch).sum() / wsum) if wsum > 0 else float(y)
        px, py = (fx + 0.5) * STRIDE, (fy + 0.5) * STRIDE
        if any((px - a) ** 2 + (py - b) ** 2 < min_px**2 for _, a, b, _ in out):
            continue
        c = int(cls[y, x])
        faces = [i for i, n in enumerate(classes) if n.startswith(classes[c] + ":")]
        if faces:
            # A die: its face is the face class strongest over the peak's neighbourhood.
            c = faces[int(np.argmax(heat[faces, y0:y1, x0:x1].sum(axis=(1, 2))))]
        out.append((classes[c], px, py, float(best[y, x])))
    return out


def zone_token_kind(zone_id: str, kind: ZoneKind, classes: Sequence[str]) -> str | None:
    """The class a token area counts (`health-2` → `health`), 'die' for a die zone, None for
    any token."""
    if kind is ZoneKind.DIE:
        return "die"
    base = re.sub(r"-\d+$", "", zone_id)
    return base if base in classes else None


def count_zone(zone_id: str, token_kind: str | None, pieces: Sequence[Piece]) -> int:
    """A zone's number from the pieces lying in it."""
    if token_kind == "die":
        faces = [p for p in pieces if p.die_face is not None]
        return max(faces, key=lambda p: p.score).die_face or 0 if faces else 0
    return sum(1 for p in pieces if p.die_face is None and (token_kind is None or p.kind == token_kind))


class TokenModel:
    """The ONNX tokens model: crops in, per-class centre heatmaps out (stateless per call)."""

    def __init__(self, model_path: str | Path = DEFAULT_MODEL, *, threads: int = 1,
                 providers: Sequence[str] = ("CPUExecutionProvider",)) -> None:
        path = Path(model_path)
        self.model_path = path
        self.session, meta = open_model(
            path, kind=MODEL_KIND, label="tokens", input_shape=(3, CROP_PX, CROP_PX), error=TokenModelError,
            train_command=TRAIN_COMMAND, providers=providers, threads=threads)
        inputs = self.session.get_inputs()
        names = [i.name for i in inputs]
        if names[:1] != ["crop"]:
            raise TokenModelError(f"{path}: not a cardtrack tokens model (its first input is {names[:1]}, "
                                  f"not 'crop'); re-create it with `{TRAIN_COMMAND}`")
        # The die-face classifier: a second input `die` of patches around the die's top face.
        self.has_die_classifier = "die" in names and list(inputs[names.index("die")].shape[1:]) == [
            3, DIE_PATCH_PX, DIE_PATCH_PX]
        try:
            classes = json.loads(meta["classes"])
            if float(meta["px_per_mm"]) != PX_PER_MM or int(meta["stride"]) != STRIDE:
                raise ValueError("crop geometry")
        except (KeyError, ValueError, TypeError):
            raise TokenModelError(f"{path}: tokens model metadata (classes, px_per_mm, stride) missing or "
                                  f"not this version's; re-create it with `{TRAIN_COMMAND}`") from None
        self.classes: tuple[str, ...] = tuple(str(c) for c in classes)
        self.input_name = inputs[0].name

    def heatmaps(self, crops: np.ndarray) -> np.ndarray:
        """`(n, CROP_PX, CROP_PX, 3)` BGR crops → `(n, C, h, w)` sigmoid heatmaps."""
        if len(crops) == 0:
            return np.zeros((0, len(self.classes), CROP_PX // STRIDE, CROP_PX // STRIDE), np.float32)
        feed = {self.input_name: to_input(np.asarray(crops))}
        if self.has_die_classifier:
            feed["die"] = np.zeros((1, 3, DIE_PATCH_PX, DIE_PATCH_PX), np.float32)
        logits = self.session.run(None, feed)[0]
        return 1.0 / (1.0 + np.exp(-logits))

    def die_faces(self, patches: np.ndarray) -> np.ndarray:
        """`(n, DIE_PATCH_PX, DIE_PATCH_PX, 3)` BGR patches centred on the die's top face →
        `(n, 6)` face probabilities (faces 1..6), averaged over the eight turned views."""
        if not self.has_die_classifier:
            raise TokenModelError(f"{self.model_path}: this tokens model has no die-face classifier; "
                                  f"re-create it with `{TRAIN_COMMAND}`")
        if len(patches) == 0:
            return np.zeros((0, 6), np.float32)
        views = [np.rot90(p, k)[:, ::-1] if f else np.rot90(p, k) for p in patches for k in range(4) for f in (0, 1)]
        feed = {self.input_name: np.zeros((1, 3, CROP_PX, CROP_PX), np.float32),
                "die": to_input(np.ascontiguousarray(np.stack(views)))}
        logits = self.session.run(None, feed)[1].reshape(len(patches), 8, -1)
        e = np.exp(logits - logits.max(axis=2, keepdims=True))
        return (e / e.sum(axis=2, keepdims=True)).mean(axis=1)

    def heatmaps_turned(self, crop: np.ndarray) -> np.ndarray:
        """`(C, h, w)` heatmaps of one crop averaged over its four quarter turns and their
        mirrors (each turned back): steadier for the die's small pips."""
        views, undo = [], []
        for k in range(4):
            for flip in (False, True):
                v = np.rot90(crop, k)
                views.append(np.ascontiguousarray(v[:, ::-1] if flip else v))
                undo.append((k, flip))
        heats = self.heatmaps(np.stack(views))
        acc = np.zeros_like(heats[0])
        for h, (k, flip) in zip(heats, undo, strict=True):
            h = h[:, :, ::-1] if flip else h
            acc += np.rot90(h, -k, axes=(1, 2))
        return acc / len(views)

    def pieces(self, crops: np.ndarray, centres_mm: Sequence[Sequence[float]],
               config: TokenConfig | None = None, *, turned: Sequence[bool] | None = None,
               die: Sequence[bool] | None = None) -> list[list[Piece]]:
        """The pieces in each crop, positions in table mm; crops flagged in `turned` are read
        as the average of their turned views (`heatmaps_turned`), crops flagged in `die` (a die
        zone) with `TokenConfig.die_threshold`."""
        cfg = config or TokenConfig()
        dies = list(die) if die is not None else [False] * len(crops)
        out = []
        flags = list(turned) if turned is not None else [False] * len(crops)
        plain = [i for i, f in enumerate(flags) if not f]
        heats: list[np.ndarray] = [np.empty(0)] * len(crops)
        for i, h in zip(plain, self.heatmaps(np.asarray(crops)[plain]) if plain else [], strict=True):
            heats[i] = h
        for i, f in enumerate(flags):
            if f:
                heats[i] = self.heatmaps_turned(crops[i])
        for i, (heat, centre, in_die_zone) in enumerate(zip(heats, centres_mm, dies, strict=True)):
            zone_cfg = replace(cfg, threshold=cfg.die_threshold) if in_die_zone else cfg
            peaks = decode_peaks(heat, self.classes, zone_cfg)
            if not in_die_zone and not flags[i]:
                peaks = self._confirmed(crops[i], peaks, cfg)
            found = []
            for kind, px, py, score in peaks:
                mm = crop_px_to_mm(centre, np.array([px, py]))
                found.append(Piece(kind=kind, center_mm=(float(mm[0]), float(mm[1])), score=score))
            out.append(found)
        return out

    def _confirmed(self, crop: np.ndarray, peaks: list[tuple[str, float, float, float]],
                   cfg: TokenConfig) -> list[tuple[str, float, float, float]]:
        """`peaks` without the faint token peaks (`TokenConfig.confirm_below`) that do not reach
        `confirm_threshold` in the crop's turned views (read only when there is such a peak)."""
        faint = [p for p in peaks if p[3] < cfg.confirm_below and not p[0].startswith(DIE_PREFIX)]
        if not faint:
            return peaks
        heat = self.heatmaps_turned(crop)
        best = heat[piece_classes(self.classes)].max(axis=0)
        h, w = best.shape

        def turned_score(px: float, py: float) -> float:
            x, y = int(px // STRIDE), int(py // STRIDE)
            return float(best[max(0, y - 1):min(h, y + 2), max(0, x - 1):min(w, x + 2)].max())

        return [p for p in peaks if p not in faint or turned_score(p[1], p[2]) >= cfg.confirm_threshold]


def counter_zone_ids(layout: Layout) -> tuple[str, ...]:
    """The layout's counted zones: token areas and die zones."""
    return tuple(z.id for z in layout.zones
                 if z.stacking is Stacking.COUNTED or z.kind in (ZoneKind.TOKEN_AREA, ZoneKind.DIE))


@dataclass(slots=True)
class TokenCounter:
    """Counts the tokens of every counter zone of one layout under one calibration.

    `table_to_image` maps table mm to raw image pixels (`TableProfile.table_to_image`).
    """

    model: TokenModel
    layout: Layout
    table_to_image: TableToImage
    config: TokenConfig = field(default_factory=TokenConfig)
    turned_die: bool = True  # read the die zone as the average of its turned views
    _maps: dict[str, np.ndarray] = field(default_factory=dict)
    _kinds: dict[str, str | None] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for zone_id in counter_zone_ids(self.layout):
            z = self.layout.zone(zone_id)
            self._maps[zone_id] = crop_maps(z.center, self.table_to_image)
            self._kinds[zone_id] = zone_token_kind(zone_id, z.kind, self.model.classes)

    @property
    def zones(self) -> tuple[str, ...]:
        return tuple(self._maps)

    def read(self, image: np.ndarray, zones: Sequence[str] | None = None) -> dict[str, ZoneReading]:
        """The reading of each counter zone in `zones` (default: all of them)."""
        wanted = [z for z in (self._maps if zones is None else zones) if z in self._maps]
        if not wanted or image is None or image.size == 0:
            return {}
        crops = np.stack([rectify(image, self._maps[z]) for z in wanted])
        centres = [self.layout.zone(z).center for z in wanted]
        out: dict[str, ZoneReading] = {}
        dies = [self._kinds[z] == "die" for z in wanted]
        turned = [d and self.turned_die for d in dies]
        found_all = self.model.pieces(crops, centres, self.config, turned=turned, die=dies)
        for zone_id, found in zip(wanted, found_all, strict=True):
            mine = tuple(p for p in found if self._belongs(p, zone_id))
            if self._kinds[zone_id] == "die" and self.model.has_die_classifier:
                mine = tuple(self._read_die(image, p) if p.die_face is not None else p for p in mine)
            out[zone_id] = ZoneReading(zone=zone_id, count=count_zone(zone_id, self._kinds[zone_id], mine),
                                       pieces=mine)
        return out

    def _belongs(self, piece: Piece, zone_id: str) -> bool:
        """Whether `piece` counts in `zone_id`: its centre lies in it, or, for a die zone, in
        no zone and within `die_margin_mm` of it."""
        under = self.layout.zone_at(piece.center_mm)
        if under == zone_id:
            return True
        if under is not None or self._kinds[zone_id] != "die":
            return False
        x0, y0, x1, y1 = self.layout.zone(zone_id).bounds
        x, y = piece.center_mm
        dx, dy = max(x0 - x, 0.0, x - x1), max(y0 - y, 0.0, y - y1)
        return bool(np.hypot(dx, dy) <= self.config.die_margin_mm)

    def _read_die(self, image: np.ndarray, piece: Piece) -> Piece:
        """The die's face from the classifier, on a patch cut around the piece's centre."""
        step = 1.0 / PX_PER_MM
        offs = (np.arange(DIE_PATCH_PX) + 0.5) * step - DIE_PATCH_MM / 2.0
        xs, ys = np.meshgrid(offs + piece.center_mm[0], offs + piece.center_mm[1])
        maps = np.asarray(self.table_to_image(np.column_stack([xs.ravel(), ys.ravel()])), np.float32)
        patch = rectify(image, maps.reshape(DIE_PATCH_PX, DIE_PATCH_PX, 2))
        probs = self.model.die_faces(patch[None])[0]
        face = int(np.argmax(probs)) + 1
        return Piece(kind=f"{DIE_PREFIX}{face}", center_mm=piece.center_mm, score=piece.score)

    def counts(self, image: np.ndarray, zones: Sequence[str] | None = None, *,
               frame_index: int | None = None) -> Mapping[str, int]:
        """Zone id → number (tokens, or the die's face) for `zones` (default: all).
        `frame_index` is not needed here (stand-ins that read a truth file take it)."""
        del frame_index
        return MappingProxyType({z: r.count for z, r in self.read(image, zones).items()})


def describe(model: TokenModel) -> dict[str, Any]:
    """Plain data about a loaded model (for reports)."""
    return {"path": str(model.model_path), "classes": list(model.classes), "crop_px": CROP_PX,
            "px_per_mm": PX_PER_MM, "stride": STRIDE}
