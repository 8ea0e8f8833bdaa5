"""The card identifier: an ONNX embedding model and a gallery of the active art pack's faces.

`Identifier` runs the model (`models/identifier.onnx`) on rectified card crops and returns one
L2-normalised embedding per crop; it keeps nothing per call. `Gallery` holds the embedding of
every face of an art pack twice, as printed (0°) and turned 180°, because orientation is game
information (a damaged tool in Minecraft: Explorers is turned). A new deck needs only its
gallery embedded, a few seconds; galleries are cached on disk under
`$CARDTRACK_CACHE/galleries` (default `~/.cache/cardtrack/galleries`), keyed by a hash of the
model file, the preprocessing and every face image, so any change rebuilds them.

Every crop, and every gallery view of a face, is embedded twice: as cut, and with
`CARD_INSET` of its width and height trimmed off every side (`inset_view`); the two embeddings
are added (`Identifier.embed`). Cut at the finder's corners, a crop often takes in a sliver of
what lies beyond the card (a neighbour's border in a row, the cloth); the trimmed view does not.

Scores are calibrated probabilities. With cosine similarities `s_j` between a crop and every
gallery entry, the score of entry j is `exp(s_j / T) / (Σ_k exp(s_k / T) + exp(c / T))`: a
softmax with a fitted temperature `T` and one extra "none of these faces" entry at the fitted
similarity level `c`. The remaining mass is the `unknown_score`; a match whose best score is
below the fitted `threshold` is `unknown` (a card of another deck, a hand, a blur). `T`, `c` and
the threshold are fitted at training time on held-out crops (the training decks at unused
seeds, random designs never trained on, and crops matched against galleries that lack their
face) by minimising the negative log-likelihood (`vision.train.calibrate`), and travel in the
model file's metadata. A face that looks the same
turned (its two embeddings closer than `SYMMETRIC_COSINE`) cannot show its orientation: its two
entries are merged into one candidate reported as not turned.

A card half under another card is read from the part that shows: a model with per-cell
outputs (`vision.train.cells`; the shipped one) gives its embedding's terms per cell of its
last feature map (`Identifier.cells`), the gallery keeps each face's, and `Gallery.match_visible`
compares the cells seen (`visible_cells` of a mask of the crop) with the same cells of every
face (`masked_embeddings`).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Protocol, cast

import numpy as np
from tqdm import tqdm

from vision.art.pack import CACHE_ENV, ArtPack
from vision.preprocess import (
    INPUT_HEIGHT,
    INPUT_WIDTH,
    PREPROCESS_VERSION,
    preprocess_batch,
    to_portrait,
)

DEFAULT_MODEL: Final = Path(__file__).resolve().parent.parent / "models" / "identifier.onnx"
GALLERY_VERSION: Final = 3
CARD_INSET: Final = 0.08
"""Each crop is embedded twice, as cut and with this share of its width and height trimmed off
every side (then enlarged back), and the two embeddings are added (`Identifier.embed`)."""
SYMMETRIC_COSINE: Final = 0.9
MIN_SCORE: Final = 1e-9  # scores are floored here so every candidate stays strictly positive
META_PREFIX: Final = "cardtrack."
CELLS_KEY: Final = META_PREFIX + "cells"
"""Metadata key of a model with per-cell outputs: its feature grid, rows x columns (`"7x5"`)."""
CELL_LAYOUT: Final = "cell_layout"  # the per-cell outputs' names (`vision.train.cells`)
CELL_CONTENT: Final = "cell_content"
VISIBLE_CELL: Final = 0.5
"""A cell of the feature grid counts as seen when at least this share of it is visible."""
MIN_VISIBLE_CELLS: Final = 3
"""Fewer cells seen than this and a covered card is not read from its visible part."""
HOW_TO_GET = "run `cardtrack train identifier --out {path}` (or restore the shipped models/identifier.onnx)"


class IdentifierError(ValueError):
    """A missing, unreadable or incompatible identifier model, or a bad gallery request."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Calibration:
    """How cosine similarities become probabilities (see the module docstring)."""

    temperature: float = 0.05
    unknown_level: float = 0.6
    threshold: float = 0.5

    def to_metadata(self) -> dict[str, str]:
        return {
            f"{META_PREFIX}temperature": repr(self.temperature),
            f"{META_PREFIX}unknown_level": repr(self.unknown_level),
            f"{META_PREFIX}threshold": repr(self.threshold),
        }

    @classmethod
    def from_metadata(cls, meta: Mapping[str, str], where: str) -> Calibration:
        values: dict[str, float] = {}
        for name in ("temperature", "unknown_level", "threshold"):
            text = meta.get(f"{META_PREFIX}{name}")
            if text is None:
                continue
            try:
                values[name] = float(text)
            except ValueError:
                raise IdentifierError(
                    f"{where}: metadata {META_PREFIX}{name} must be a number, got {text!r}; "
                    + HOW_TO_GET.format(path=where)
                ) from None
        cal = cls(**values)
        if not (cal.temperature > 0 and 0 <= cal.threshold <= 1):
            raise IdentifierError(f"{where}: calibration out of range ({cal}); " + HOW_TO_GET.format(path=where))
        return cal


@dataclass(frozen=True, slots=True, kw_only=True)
class FaceCandidate:
    """One face a crop may show, which way up, and its calibrated score in (0, 1]."""

    face: str
    rotated_180: bool
    score: float


@dataclass(frozen=True, slots=True, kw_only=True)
class Match:
    """The identifier's reading of one crop: candidates best first, and whether it is unknown."""

    candidates: tuple[FaceCandidate, ...]
    unknown: bool
    unknown_score: float

    @property
    def best(self) -> FaceCandidate | None:
        return self.candidates[0] if self.candidates else None


class Embedder(Protocol):
    """What a gallery needs from a model: embeddings, a digest of the model and its calibration."""

    @property
    def digest(self) -> str: ...

    @property
    def calibration(self) -> Calibration: ...

    def embed(self, crops: Sequence[np.ndarray] | np.ndarray) -> np.ndarray: ...


class CellEmbedder(Embedder, Protocol):
    """An embedder that also gives per-cell terms (`Identifier.cells`)."""

    @property
    def cell_grid(self) -> tuple[int, int] | None: ...

    def cells(self, crops: Sequence[np.ndarray] | np.ndarray) -> tuple[np.ndarray, np.ndarray]: ...


def masked_embeddings(layout: np.ndarray, content: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """(masks, n, dim) unit embeddings of what each mask leaves seen of n crops, from the
    crops' per-cell terms, cell-major (cells, n, dim), and the masks' cell weights (masks,
    cells), 1 where a cell is seen: the layout terms summed over the seen cells plus the
    content terms' mean over them (`vision.train.cells`), every mask in one matrix product.
    With every cell seen this is the model's own embedding."""
    w = np.asarray(weights, np.float32)
    cells, n, dim = layout.shape
    flat = (cells, n * dim)  # cell-major terms reshape without a copy
    raw = w @ np.asarray(layout, np.float32).reshape(flat)
    raw += (w @ np.asarray(content, np.float32).reshape(flat)) / np.maximum(w.sum(axis=1, keepdims=True), 1e-6)
    raw = raw.reshape(len(w), n, dim)
    return raw / np.maximum(np.linalg.norm(raw, axis=2, keepdims=True), 1e-12)


def visible_cells(mask: np.ndarray, grid: tuple[int, int], inset: float) -> np.ndarray:
    """(views, rows × columns) cell weights of a crop's visibility mask (the crop's shape, True
    or 1 where the card is seen): the crop as cut, then its `inset` view when `inset` is above
    0, each turned portrait as the crop is (`vision.preprocess.to_portrait`). A cell counts
    when `VISIBLE_CELL` of it is seen."""
    import cv2

    rows, cols = grid
    m = to_portrait(np.asarray(mask, np.float32))
    views = [m, inset_view(m, inset)] if inset else [m]
    return np.stack([
        (cv2.resize(v, (cols, rows), interpolation=cv2.INTER_AREA) >= VISIBLE_CELL).astype(np.float32).ravel()
        for v in views
    ])


def calibrated_probabilities(similarities: np.ndarray, symmetric: np.ndarray,
                             calibration: Calibration) -> np.ndarray:
    """Cosine similarities (n, 2 × faces) -> calibrated scores (n, 2 × faces + 1).

    The last column is "none of these faces"; a symmetric face's two entries are summed into
    its 0° entry (module docstring).
    """
    n, m = similarities.shape
    logits = np.empty((n, m + 1), np.float64)
    logits[:, :-1] = similarities
    logits[:, -1] = calibration.unknown_level
    logits /= calibration.temperature
    logits -= logits.max(axis=1, keepdims=True)
    p = np.exp(logits)
    p /= p.sum(axis=1, keepdims=True)
    sym = np.flatnonzero(symmetric)
    if len(sym):
        p[:, 2 * sym] += p[:, 2 * sym + 1]
        p[:, 2 * sym + 1] = 0.0
    return p


def _normalise_rows(x: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    return (x / np.maximum(norms, 1e-12)).astype(np.float32)


class Identifier:
    """The embedding model in onnxruntime: crops in, (n, dim) unit vectors out.

    `threads` sets onnxruntime's intra-op threads (1 keeps the other pipeline stages their
    cores). Nothing about a call is stored on the instance, so one identifier may serve
    several threads.
    """

    def __init__(self, model_path: str | Path = DEFAULT_MODEL,
                 providers: Sequence[str] = ("CPUExecutionProvider",), threads: int = 1,
                 inset: float | None = None) -> None:
        import onnxruntime as ort

        try:
            self._inset = check_inset(CARD_INSET if inset is None else inset)  # None: the shipped reading
        except IdentifierError as exc:
            raise IdentifierError(f"inset: {exc}") from None

        path = Path(model_path)
        where = str(path)
        if not path.is_file():
            raise IdentifierError(f"{where}: identifier model not found; " + HOW_TO_GET.format(path=where))
        data = path.read_bytes()
        options = ort.SessionOptions()
        options.intra_op_num_threads = max(1, int(threads))
        options.inter_op_num_threads = 1
        options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        options.log_severity_level = 3
        try:
            session = ort.InferenceSession(data, options, providers=list(providers))
        except Exception as exc:  # onnxruntime raises its own types for broken or foreign files
            first = str(exc).strip().splitlines()[0][:160] if str(exc).strip() else type(exc).__name__
            raise IdentifierError(
                f"{where}: not a readable ONNX identifier model ({first}); " + HOW_TO_GET.format(path=where)
            ) from None
        inputs, outputs = session.get_inputs(), session.get_outputs()
        shape = list(inputs[0].shape) if inputs else []
        if len(inputs) != 1 or len(shape) != 4 or shape[1:] != [3, INPUT_HEIGHT, INPUT_WIDTH]:
            raise IdentifierError(
                f"{where}: the model takes {shape}, but cardtrack feeds (n, 3, {INPUT_HEIGHT}, "
                f"{INPUT_WIDTH}) crops; " + HOW_TO_GET.format(path=where)
            )
        out_shape = outputs[0].shape if outputs else []
        if len(out_shape) != 2 or not isinstance(out_shape[1], int):
            raise IdentifierError(f"{where}: the model's output {out_shape} is not (n, dim); " + HOW_TO_GET.format(path=where))
        meta = dict(session.get_modelmeta().custom_metadata_map)
        self._grid = _cell_grid(outputs, meta, int(out_shape[1]), where)
        version = meta.get(f"{META_PREFIX}preprocess")
        if version is not None and version != PREPROCESS_VERSION:
            raise IdentifierError(
                f"{where}: the model was trained with preprocessing {version!r}, this cardtrack "
                f"uses {PREPROCESS_VERSION!r}; " + HOW_TO_GET.format(path=where)
            )
        self._session = session
        self._input = inputs[0].name
        self._output = outputs[0].name
        self._path = path
        self._dim = int(out_shape[1])
        digest = hashlib.sha256(data)
        if self._inset != CARD_INSET:  # another way of embedding: galleries of its own
            digest.update(f"|inset {self._inset!r}".encode())
        self._digest = digest.hexdigest()
        self._calibration = Calibration.from_metadata(meta, where)
        self._metadata = meta

    @property
    def model_path(self) -> Path:
        return self._path

    @property
    def dim(self) -> int:
        return self._dim

    @property
    def digest(self) -> str:
        """SHA-256 of the model file (and of the inset, where it is not `CARD_INSET`)."""
        return self._digest

    @property
    def inset(self) -> float:
        return self._inset

    @property
    def calibration(self) -> Calibration:
        return self._calibration

    @property
    def metadata(self) -> Mapping[str, str]:
        return dict(self._metadata)

    @property
    def cell_grid(self) -> tuple[int, int] | None:
        """The feature grid (rows, columns) of a model with per-cell outputs, which can read a
        covered card from its visible part (`cells`); None for a model without them."""
        return self._grid

    def embed_tensors(self, batch: np.ndarray) -> np.ndarray:
        """Embeddings of already preprocessed crops, (n, 3, H, W) float32 -> (n, dim)."""
        if batch.shape[0] == 0:
            return np.zeros((0, self._dim), np.float32)
        out = self._session.run([self._output], {self._input: np.ascontiguousarray(batch, np.float32)})[0]
        return _normalise_rows(np.asarray(out))

    def cells(self, crops: Sequence[np.ndarray] | np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The per-cell terms of crops, layout and content, each (views, cells, n, dim): the
        crops as cut, then their `inset` views when the inset is above 0 (as `embed` reads
        them). `masked_embeddings` of a view's terms with the cells seen gives what is seen."""
        if self._grid is None:
            raise IdentifierError(
                f"{self._path}: this identifier model has no per-cell outputs, so it cannot read "
                "the visible part of a covered card; add them with `python -m vision.train.cells "
                f"{self._path}` or use the shipped models/identifier.onnx"
            )
        n = len(crops)
        views = 2 if self._inset else 1
        cells = self._grid[0] * self._grid[1]
        if not n:
            empty = np.zeros((views, cells, 0, self._dim), np.float32)
            return empty, empty.copy()
        layout, content = self._session.run([CELL_LAYOUT, CELL_CONTENT], {self._input: preprocess_batch(self._views(crops))})
        shape = (views, n, cells, self._dim)
        return (np.ascontiguousarray(np.asarray(layout, np.float32).reshape(shape).transpose(0, 2, 1, 3)),
                np.ascontiguousarray(np.asarray(content, np.float32).reshape(shape).transpose(0, 2, 1, 3)))

    def _views(self, crops: Sequence[np.ndarray] | np.ndarray) -> list[np.ndarray]:
        """The crops as cut, then their `inset` views when the inset is above 0."""
        return [*crops, *(inset_view(c, self._inset) for c in crops)] if self._inset else list(crops)

    def embed(self, crops: Sequence[np.ndarray] | np.ndarray) -> np.ndarray:
        """Embeddings of rectified BGR uint8 card crops (any size; see `vision.preprocess`):
        the model's embedding of each crop plus that of the crop with `inset` of it trimmed off
        every side (`inset_view`), normalised. The trimmed view leaves out what lies just
        beyond the card's edges when its corners are off (a neighbour's border, the cloth):
        on crops the live pipeline cut out of rendered Explorers footage, matched against the
        scans, the two name more crops right than the crop alone and half as many wrongly or
        fewer (`models/identifier.md`). Each crop costs two model runs."""
        if not self._inset:
            return self.embed_tensors(preprocess_batch(crops))
        n = len(crops)
        both = self.embed_tensors(preprocess_batch(self._views(crops)))
        return _normalise_rows(both[:n] + both[n:])


def _cell_grid(outputs: Sequence[object], meta: Mapping[str, str], dim: int, where: str) -> tuple[int, int] | None:
    """The feature grid of a model with per-cell outputs (`vision.train.cells`), or None."""
    names = [getattr(o, "name", "") for o in outputs]
    if CELL_LAYOUT not in names and CELL_CONTENT not in names and CELLS_KEY not in meta:
        return None
    fix = "re-export it, or restore the shipped models/identifier.onnx"
    text = meta.get(CELLS_KEY, "")
    try:
        rows, cols = (int(v) for v in text.split("x"))
    except ValueError:
        raise IdentifierError(
            f"{where}: per-cell outputs need the grid in the metadata {CELLS_KEY!r} as 'ROWSxCOLS', "
            f"got {text!r}; {fix}"
        ) from None
    for name in (CELL_LAYOUT, CELL_CONTENT):
        found = [o for o in outputs if getattr(o, "name", "") == name]
        shape = list(getattr(found[0], "shape", [])) if found else None
        if shape is None or len(shape) != 3 or shape[1:] != [rows * cols, dim]:
            raise IdentifierError(
                f"{where}: expected an output {name!r} of shape (n, {rows * cols}, {dim}) for the "
                f"{rows}x{cols} grid, got {shape}; {fix}"
            )
    return rows, cols


def check_inset(inset: float) -> float:
    """`inset` as a share of the crop trimmed off each side: from 0 (each crop read once) to
    under one half (something of the crop must stay). The one rule for every caller (the
    identifier, and the `--inset` / `--identifier-inset` options of the commands)."""
    if not 0.0 <= inset < 0.5:
        raise IdentifierError(f"expected a share of the crop from 0 to under 0.5, got {inset}")
    return float(inset)


def inset_view(crop: np.ndarray, inset: float) -> np.ndarray:
    """The crop with `inset` of its width and height trimmed off every side, enlarged back."""
    import cv2

    h, w = crop.shape[:2]
    dy, dx = round(h * inset), round(w * inset)
    if h - 2 * dy < 2 or w - 2 * dx < 2:
        return crop
    return cv2.resize(crop[dy:h - dy, dx:w - dx], (w, h), interpolation=cv2.INTER_LINEAR)


def gallery_views(image: np.ndarray) -> list[np.ndarray]:
    """The crops a face is embedded from (their mean embedding is its gallery entry): the
    portrait face image, and the same image at a webcam-like 52 pixels of width."""
    import cv2

    portrait = to_portrait(image)
    h, w = portrait.shape[:2]
    small_w = 52
    small = cv2.resize(portrait, (small_w, max(2, round(h * small_w / w))), interpolation=cv2.INTER_AREA)
    return [portrait, small]


def _face_embeddings(images: Mapping[str, np.ndarray], embedder: Embedder,
                     progress: bool) -> np.ndarray:
    """(2 × faces, dim): for each face its 0° then its 180° entry."""
    rows: list[np.ndarray] = []
    for fid, image in tqdm(images.items(), desc="embedding gallery", unit="face", disable=not progress):
        views = gallery_views(image)
        turned = [np.ascontiguousarray(v[::-1, ::-1]) for v in views]
        emb = embedder.embed(views + turned)
        n = len(views)
        rows.append(emb[:n].mean(axis=0))
        rows.append(emb[n:].mean(axis=0))
        del fid
    if not rows:
        return np.zeros((0, 0), np.float32)
    return _normalise_rows(np.stack(rows))


def _face_cells(images: Mapping[str, np.ndarray], embedder: CellEmbedder) -> tuple[np.ndarray, np.ndarray]:
    """Per-cell terms of every gallery entry, layout then content, each (views, cells,
    2 × faces, dim) as `Identifier.cells` gives them: per face the mean over its
    `gallery_views` (as its embedding is their mean), its 0° entry then its 180° one."""
    layouts: list[np.ndarray] = []
    contents: list[np.ndarray] = []
    for image in images.values():
        views = gallery_views(image)
        turned = [np.ascontiguousarray(v[::-1, ::-1]) for v in views]
        layout, content = embedder.cells(views + turned)
        n = len(views)
        for part in (slice(0, n), slice(n, 2 * n)):
            layouts.append(layout[:, :, part].mean(axis=2))
            contents.append(content[:, :, part].mean(axis=2))
    return (np.ascontiguousarray(np.stack(layouts, axis=2), np.float32),
            np.ascontiguousarray(np.stack(contents, axis=2), np.float32))


def default_cache_dir() -> Path:
    """`$CARDTRACK_CACHE/galleries`, else `~/.cache/cardtrack/galleries`."""
    base = os.environ.get(CACHE_ENV)
    root = Path(base).expanduser() if base else Path.home() / ".cache" / "cardtrack"
    return root / "galleries"


def pack_key(pack: ArtPack, embedder: Embedder) -> str:
    """The cache key of a pack's gallery: model, preprocessing, gallery version, every image."""
    h = hashlib.sha256()
    h.update(f"{embedder.digest}|{PREPROCESS_VERSION}|gallery {GALLERY_VERSION}|".encode())
    for fid in sorted(pack.faces):
        h.update(fid.encode("utf-8") + b"\0")
        h.update(hashlib.sha256(pack.path(fid).read_bytes()).digest())
    return h.hexdigest()


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class Gallery:
    """Every face of a pack embedded at 0° and 180°, and how to match crops against them.

    `embeddings` row 2i is face i as printed, row 2i + 1 the same face turned 180°.
    """

    faces: tuple[str, ...]
    embeddings: np.ndarray
    calibration: Calibration
    game: str = ""
    key: str = ""
    from_cache: bool = False
    cell_layout: np.ndarray | None = None
    """Per-cell terms of the entries (views, cells, entries as the rows of `embeddings`, dim)
    when the model has them (`Identifier.cells`): what `match_visible` compares the visible
    part of a card with."""
    cell_content: np.ndarray | None = None

    def __post_init__(self) -> None:
        if self.embeddings.ndim != 2 or self.embeddings.shape[0] != 2 * len(self.faces):
            raise IdentifierError(
                f"gallery: embeddings of shape {self.embeddings.shape} do not hold two rows per "
                f"face for {len(self.faces)} faces"
            )

    @property
    def dim(self) -> int:
        return int(self.embeddings.shape[1])

    @property
    def symmetric(self) -> np.ndarray:
        """Per face: True when it looks the same turned (its orientation cannot be read)."""
        e = self.embeddings
        return np.einsum("ij,ij->i", e[0::2], e[1::2]) >= SYMMETRIC_COSINE

    def orientation_sensitive(self, face: str) -> bool:
        """Whether the camera can tell this face's 180° turn from its printed way up."""
        try:
            i = self.faces.index(face)
        except ValueError:
            raise IdentifierError(f"gallery: no face {face!r} ({len(self.faces)} faces)") from None
        return not bool(self.symmetric[i])

    @property
    def reads_covered(self) -> bool:
        """Whether the gallery holds per-cell terms, so `match_visible` can read part of a card."""
        return self.cell_layout is not None and self.cell_content is not None

    @classmethod
    def from_images(cls, images: Mapping[str, np.ndarray], embedder: Embedder, *,
                    game: str = "", progress: bool = False) -> Gallery:
        """A gallery of face images (face id -> BGR uint8), without any caching; with per-cell
        terms when the embedder has them (`Identifier.cell_grid`)."""
        emb = _face_embeddings(images, embedder, progress)
        if not len(images):
            emb = np.zeros((0, 1), np.float32)
        layout = content = None
        if len(images) and getattr(embedder, "cell_grid", None) is not None:
            layout, content = _face_cells(images, cast(CellEmbedder, embedder))
        return cls(faces=tuple(images), embeddings=emb, calibration=embedder.calibration, game=game,
                   cell_layout=layout, cell_content=content)

    @classmethod
    def build(cls, pack: ArtPack, embedder: Embedder, *, cache_dir: str | Path | None = None,
              use_cache: bool = True, progress: bool = False) -> Gallery:
        """The gallery of an art pack, loaded from the cache when pack and model are unchanged."""
        if not pack.faces:
            raise IdentifierError(f"{pack.root}: the art pack lists no faces; nothing to identify")
        key = pack_key(pack, embedder)
        root = Path(cache_dir) if cache_dir is not None else default_cache_dir()
        path = root / f"{pack.game}-{key[:24]}.npz"
        wants_cells = getattr(embedder, "cell_grid", None) is not None
        if use_cache and path.is_file():
            try:
                with np.load(path, allow_pickle=False) as data:
                    faces = tuple(str(f) for f in data["faces"].tolist())
                    emb = np.asarray(data["embeddings"], np.float32)
                    stored = str(data["key"])
                    layout = np.asarray(data["cell_layout"], np.float32) if wants_cells else None
                    content = np.asarray(data["cell_content"], np.float32) if wants_cells else None
                if layout is not None and (layout.ndim != 4 or layout.shape[2] != 2 * len(faces)):
                    raise IdentifierError("cached per-cell terms of another shape")
                if stored == key and faces == tuple(pack.faces):
                    return cls(faces=faces, embeddings=emb, calibration=embedder.calibration,
                               game=pack.game, key=key, from_cache=True, cell_layout=layout,
                               cell_content=content)
            except (OSError, ValueError, KeyError, IdentifierError):
                pass  # a damaged or foreign cache file is rebuilt below
        images = {fid: pack.image(fid) for fid in pack.faces}
        gallery = cls.from_images(images, embedder, game=pack.game, progress=progress)
        gallery = cls(faces=gallery.faces, embeddings=gallery.embeddings,
                      calibration=gallery.calibration, game=pack.game, key=key,
                      cell_layout=gallery.cell_layout, cell_content=gallery.cell_content)
        if use_cache:
            root.mkdir(parents=True, exist_ok=True)
            tmp = root / f".{path.stem}.{os.getpid()}.tmp.npz"
            arrays: dict[str, Any] = {"faces": np.array(gallery.faces), "embeddings": gallery.embeddings,
                                      "key": np.array(key)}
            if gallery.cell_layout is not None and gallery.cell_content is not None:
                arrays.update(cell_layout=gallery.cell_layout, cell_content=gallery.cell_content)
            np.savez(tmp, **arrays)
            os.replace(tmp, path)
        return gallery

    def probabilities(self, embeddings: np.ndarray) -> np.ndarray:
        """(n, 2 × faces + 1) calibrated scores: the gallery entries, then "none of these".

        The two entries of a symmetric face are summed into its 0° entry (its 180° entry is 0).
        """
        q = np.asarray(embeddings, np.float32)
        if q.ndim != 2 or (q.shape[0] and q.shape[1] != self.dim):
            raise IdentifierError(f"gallery: expected embeddings (n, {self.dim}), got shape {q.shape}")
        return calibrated_probabilities(q @ self.embeddings.T, self.symmetric, self.calibration)

    def match(self, embeddings: np.ndarray, top_k: int = 5,
              threshold: float | None = None) -> list[Match]:
        """The `top_k` best (face, turn) candidates of each embedding, calibrated."""
        if top_k < 1:
            raise IdentifierError(f"top_k must be at least 1, got {top_k}")
        return self._matches(self.probabilities(embeddings), top_k, threshold)

    def match_visible(self, layout: np.ndarray, content: np.ndarray, weights: np.ndarray,
                      top_k: int = 5, threshold: float | None = None) -> list[Match]:
        """What is seen of one crop, matched against what the same cells show of every entry:
        `layout` and `content` are the crop's per-cell terms (views, cells, 1, dim;
        `Identifier.cells` of one crop), `weights` (masks, views, cells) which cells are seen
        (`visible_cells`), one answer per mask. The entries are masked as the crop is, so a
        card half under another is compared with the half of each face that shows."""
        if self.cell_layout is None or self.cell_content is None:
            raise IdentifierError(
                "gallery: built without per-cell terms (a model without them), so it cannot "
                "read the visible part of a covered card"
            )
        if top_k < 1:
            raise IdentifierError(f"top_k must be at least 1, got {top_k}")
        w = np.asarray(weights, np.float32)
        views, cells, _, dim = self.cell_layout.shape
        if w.ndim != 3 or w.shape[1:] != (views, cells) or layout.shape != (views, cells, 1, dim):
            raise IdentifierError(
                f"gallery: expected one crop's cells {(views, cells, 1, dim)} and weights "
                f"(masks, {views}, {cells}), got {layout.shape} and {w.shape}"
            )
        entries = sum(masked_embeddings(self.cell_layout[v], self.cell_content[v], w[:, v]) for v in range(views))
        query = sum(masked_embeddings(layout[v], content[v], w[:, v]) for v in range(views))
        entries /= np.maximum(np.linalg.norm(entries, axis=2, keepdims=True), 1e-12)
        sims = np.einsum("knd,kd->kn", entries, _normalise_rows(query[:, 0]))
        return self._matches(calibrated_probabilities(sims, self.symmetric, self.calibration), top_k, threshold)

    def _matches(self, p: np.ndarray, top_k: int, threshold: float | None) -> list[Match]:
        limit = self.calibration.threshold if threshold is None else threshold
        valid = np.ones(p.shape[1] - 1, bool)
        valid[2 * np.flatnonzero(self.symmetric) + 1] = False  # merged into the 0° entry
        entries = np.where(valid, p[:, :-1], -1.0)
        k = min(top_k, int(valid.sum()))
        if k == 0:
            return [Match(candidates=(), unknown=True, unknown_score=1.0) for _ in range(p.shape[0])]
        top = np.argpartition(-entries, k - 1, axis=1)[:, :k]
        out: list[Match] = []
        for row, unknown_p, idx in zip(entries, p[:, -1], top, strict=True):
            idx = idx[np.argsort(-row[idx], kind="stable")]
            cands = tuple(
                FaceCandidate(face=self.faces[j // 2], rotated_180=bool(j % 2),
                              score=max(float(row[j]), MIN_SCORE))
                for j in idx
            )
            out.append(Match(candidates=cands, unknown=cands[0].score < limit,
                             unknown_score=float(unknown_p)))
        return out
