"""Fitting the identifier's score calibration: temperature, "none of these" level, threshold.

The data are held out from training: the galleries of the training games' proxy decks queried
with crops at other seeds, and galleries of random designs of the calibration family (never
trained on), each queried with crops of its own faces (label: that face, that way up) and of
faces it does not hold (label: none of these). The temperature `T` and the level `c` of
`vision.identify.Calibration` minimise the mean negative log-likelihood of the labels over a
grid (T geometric from 0.01 to 0.3, c from 0 to 0.95); the threshold is then the best score
that best separates correctly identified crops from crops of absent faces (balanced accuracy).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

import numpy as np

from vision.art.pack import proxy_pack
from vision.identify import Calibration, Embedder, Gallery, calibrated_probabilities
from vision.preprocess import preprocess_batch
from vision.train.data import CALIBRATION_FAMILY, TRAIN_GAMES, design_masters
from vision.train.evaluate import Queries, make_queries

if TYPE_CHECKING:
    from vision.train.identifier import IdentifierNet

TEMPERATURES: Final = np.geomspace(0.01, 0.3, 28)
LEVELS: Final = np.linspace(0.0, 0.95, 39)


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class CalibrationCase:
    """One gallery and the embeddings of its queries, with their target column."""

    gallery: Gallery
    queries: np.ndarray  # (n, dim)
    targets: np.ndarray  # (n,) column of `Gallery.probabilities`; the last column = none

    @property
    def similarities(self) -> np.ndarray:
        return self.queries @ self.gallery.embeddings.T


def targets_of(gallery: Gallery, queries: Queries) -> np.ndarray:
    """Probability column of each query's truth (the last one for a face not in the gallery)."""
    index = {f: i for i, f in enumerate(gallery.faces)}
    sym = gallery.symmetric
    out = np.empty(len(queries.faces), np.int64)
    for k, (face, turned) in enumerate(zip(queries.faces, queries.turned, strict=True)):
        i = index.get(face)
        if i is None:
            out[k] = 2 * len(gallery.faces)
        else:
            out[k] = 2 * i + (0 if sym[i] else int(turned))
    return out


def nll(cases: Sequence[CalibrationCase], cal: Calibration,
        sims: Sequence[np.ndarray] | None = None) -> float:
    """Mean negative log-likelihood of the cases' targets under a calibration."""
    total, n = 0.0, 0
    for k, case in enumerate(cases):
        s = case.similarities if sims is None else sims[k]
        p = calibrated_probabilities(s, case.gallery.symmetric, cal)
        total += float(-np.log(p[np.arange(len(p)), case.targets] + 1e-12).sum())
        n += len(p)
    return total / max(n, 1)


def fit(cases: Sequence[CalibrationCase]) -> Calibration:
    """The grid's (T, c) of least NLL, then the balanced-accuracy threshold."""
    best = (float("inf"), Calibration())
    sims = [case.similarities for case in cases]
    for t in TEMPERATURES:
        for c in LEVELS:
            cal = Calibration(temperature=float(t), unknown_level=float(c))
            value = nll(cases, cal, sims)
            if value < best[0]:
                best = (value, cal)
    cal = best[1]
    known, absent = [], []
    for case in cases:
        g = dataclasses.replace(case.gallery, calibration=cal)
        p = g.probabilities(case.queries)[:, :-1]
        top = p.argmax(1)
        score = p.max(1)
        none = case.targets == p.shape[1]
        known.extend(score[~none & (top == case.targets)].tolist())
        absent.extend(score[none].tolist())
    k, a = np.array(known), np.array(absent)
    thresholds = np.linspace(0.05, 0.95, 91)
    if len(k) and len(a):
        balanced = [0.5 * (float((k >= t).mean()) + float((a < t).mean())) for t in thresholds]
        threshold = float(thresholds[int(np.argmax(balanced))])
    else:
        threshold = 0.5
    return Calibration(temperature=round(cal.temperature, 5), unknown_level=round(cal.unknown_level, 4),
                       threshold=round(threshold, 3))


def calibration_cases(embedder: Embedder, seed: int, *, designs: int = 240, group: int = 90,
                      per_turn: int = 1, progress: bool = False) -> list[CalibrationCase]:
    """Galleries and queries of the calibration data (module docstring)."""
    cases: list[CalibrationCase] = []
    decks: list[tuple[Mapping[str, np.ndarray], Mapping[str, np.ndarray]]] = []
    for game in TRAIN_GAMES:
        pack = proxy_pack(game)
        images = {fid: pack.image(fid) for fid in pack.faces}
        decks.append((images, images))
    named = design_masters(CALIBRATION_FAMILY + seed, designs, 0.5, max_siblings=2, progress=progress,
                           desc="calibration designs")
    for i in range(0, len(named), group):
        chunk = dict(named[i:i + group])
        decks.append((chunk, chunk))
    for d, (gallery_images, query_images) in enumerate(decks):
        gallery = Gallery.from_images(gallery_images, embedder)
        own = make_queries(query_images, seed=(seed, 0xCA1, d), per_turn=per_turn)
        other = decks[(d + 1) % len(decks)][1]
        names = list(other)[: max(8, len(gallery_images) // 3)]
        absent = make_queries({f"absent:{n}": other[n] for n in names}, seed=(seed, 0xCA2, d),
                              per_turn=1)
        queries = own.extend(absent)
        emb = embedder.embed(queries.crops)
        cases.append(CalibrationCase(gallery=gallery, queries=emb, targets=targets_of(gallery, queries)))
    return cases


class TorchEmbedder:
    """A torch model seen through the `Embedder` interface (for fitting before export)."""

    def __init__(self, model: IdentifierNet) -> None:
        self._model = model

    @property
    def digest(self) -> str:
        return "torch"

    @property
    def calibration(self) -> Calibration:
        return Calibration()

    def embed(self, crops: Sequence[np.ndarray] | np.ndarray) -> np.ndarray:
        from vision.train.identifier import torch_embed

        return torch_embed(self._model, preprocess_batch(crops))


def fit_for_model(model: IdentifierNet, seed: int, *, progress: bool = False) -> Calibration:
    """The calibration of a trained torch model."""
    return fit(calibration_cases(TorchEmbedder(model), seed, progress=progress))
