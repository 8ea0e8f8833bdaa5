"""The identifier's accuracy report: held-out crops matched against each deck's gallery.

For every deck (the proxy art of each game, and an enrolled pack of the real Minecraft:
Explorers scans) the gallery is built from the pack images exactly as at run time
(`vision.identify.Gallery`), and each face is queried, as printed and turned 180°, with crops
from `vision.train.augment.webcam_crop` (the `EVAL_CROPS` mix) drawn from evaluation seeds
that training and calibration never use. Where the scene renderer is available, cards are also
cut out of rendered table scenes with their true corners (rolled by a random quarter turn, as
an uninformed corner order would be, so that the landscape rule and the 180° reading are
exercised), and, with a finder, at the corners the finder found for them (what the tracker
crops, corner errors included). A crop counts as right when the best candidate is its face,
and, for a face whose orientation can be seen, its turn as well. The report also lists the worst confusions, how
often a correct crop is flagged unknown, and how faces of a deck absent from the gallery score.
Every number is on synthetic or rendered crops, never on camera footage.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from tqdm import tqdm

from vision.identify import Embedder, Gallery, Match
from vision.train.augment import (
    DEFAULT_CROPS,
    EVAL_CROPS,
    CropConfig,
    master,
    rotate_180,
    webcam_crop,
)
from vision.train.data import EVAL_FAMILY, design_masters
from vision.train.scenes import scene_cuts, stills_shots


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class Queries:
    """Crops with their true face and turn."""

    crops: list[np.ndarray] = field(default_factory=list)
    faces: list[str] = field(default_factory=list)
    turned: list[bool] = field(default_factory=list)

    def extend(self, other: Queries) -> Queries:
        return Queries(crops=self.crops + other.crops, faces=self.faces + other.faces,
                       turned=self.turned + other.turned)

    def __len__(self) -> int:
        return len(self.crops)


def make_queries(images: Mapping[str, np.ndarray], *, seed: int | Sequence[int], per_turn: int,
                 crops: CropConfig = DEFAULT_CROPS) -> Queries:
    """`per_turn` webcam-like crops of each face as printed and turned 180°."""
    rng = np.random.default_rng(seed if isinstance(seed, int) else list(seed))
    out = Queries()
    for face, image in images.items():
        m = master(image)
        for turned in (False, True):
            src = rotate_180(m) if turned else m
            for _ in range(per_turn):
                out.crops.append(webcam_crop(src, rng, crops))
                out.faces.append(face)
                out.turned.append(turned)
    return out


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class SceneQueries:
    """Cards cut out of rendered scenes: at their true corners, and (with a finder) at the
    corners the finder found for them; `missed`: cards the finder did not find."""

    truth: Queries
    found: Queries | None = None
    missed: int = 0


def scene_queries(game: str, pack_root: Path, *, seed: int, stills: int,
                  min_visible: float = 0.75, finder: Any = None, progress: bool = False) -> SceneQueries:
    """Cards cut out of rendered scenes of a pack (`vision.train.scenes.scene_cuts`). With a
    `finder` (`vision.finder.Finder`, its refiner included), each card is also cut at the
    corners of the detection that overlaps it most (IoU ≥ 0.5), in the finder's own corner
    order: the crops the tracker hands the identifier, with the finder's corner errors."""
    from vision.synth.library import build_library

    lib, deck = build_library(game, str(pack_root))
    truth, found = Queries(), Queries()
    missed = 0
    shots = stills_shots(lib, deck, seed=seed, stills=stills, progress=progress)
    for c in scene_cuts(lib, shots, seed=seed, min_visible=min_visible, finder=finder):
        truth.crops.append(c.truth)
        truth.faces.append(c.face)
        truth.turned.append(c.truth_turned)
        missed += c.missed
        if c.found is not None:
            found.crops.append(c.found)
            found.faces.append(c.face)
            found.turned.append(c.found_turned)
    return SceneQueries(truth=truth, found=found if finder is not None else None, missed=missed)


@dataclass(frozen=True, slots=True, kw_only=True)
class DeckResult:
    """Accuracy of one query set against one gallery."""

    name: str
    faces: int
    crops: int
    top1: float  # face and (where it can be seen) turn right
    top1_face: float  # face right, whatever the turn
    top5_face: float
    flagged_unknown: float  # correct crops whose best score fell below the threshold
    mean_best_score: float
    confusions: tuple[tuple[str, str, int], ...]  # (true, read as, count), worst first
    worst_faces: tuple[tuple[str, float], ...]  # (face, top-1), worst first


@dataclass(frozen=True, slots=True, kw_only=True)
class ForeignResult:
    """Crops of faces a gallery lacks: how many the identifier calls unknown."""

    name: str
    crops: int
    flagged_unknown: float
    mean_best_score: float


def _label(face: str, turned: bool) -> str:
    return f"{face}@180" if turned else face


def score_matches(name: str, gallery: Gallery, queries: Queries, matches: Sequence[Match]) -> DeckResult:
    sym = dict(zip(gallery.faces, gallery.symmetric.tolist(), strict=True))
    right = right_face = top5 = flagged = 0
    best_scores: list[float] = []
    confusions: Counter[tuple[str, str]] = Counter()
    per_face: dict[str, list[int]] = {}
    for face, turned, m in zip(queries.faces, queries.turned, matches, strict=True):
        best = m.best
        assert best is not None
        best_scores.append(best.score)
        face_ok = best.face == face
        ok = face_ok and (sym.get(face, False) or best.rotated_180 == turned)
        right += ok
        right_face += face_ok
        top5 += any(c.face == face for c in m.candidates[:5])
        flagged += ok and m.unknown
        per_face.setdefault(face, []).append(int(ok))
        if not ok:
            read = best.face if sym.get(best.face, False) else _label(best.face, best.rotated_180)
            truth = face if sym.get(face, False) else _label(face, turned)
            confusions[(truth, read)] += 1
    n = max(len(queries), 1)
    worst = sorted(((f, sum(v) / len(v)) for f, v in per_face.items()), key=lambda t: (t[1], t[0]))
    return DeckResult(
        name=name, faces=len(gallery.faces), crops=len(queries), top1=right / n,
        top1_face=right_face / n, top5_face=top5 / n, flagged_unknown=flagged / max(right, 1),
        mean_best_score=float(np.mean(best_scores)) if best_scores else 0.0,
        confusions=tuple((a, b, c) for (a, b), c in confusions.most_common(10)),
        worst_faces=tuple((f, round(a, 3)) for f, a in worst[:10] if a < 1.0),
    )


def foreign_result(name: str, gallery: Gallery, matches: Sequence[Match]) -> ForeignResult:
    best = [m.best.score if m.best else 0.0 for m in matches]
    return ForeignResult(name=name, crops=len(matches),
                         flagged_unknown=float(np.mean([m.unknown for m in matches])) if matches else 0.0,
                         mean_best_score=float(np.mean(best)) if best else 0.0)


def _match(embedder: Embedder, gallery: Gallery, queries: Queries, chunk: int = 512) -> list[Match]:
    out: list[Match] = []
    for i in range(0, len(queries), chunk):
        out.extend(gallery.match(embedder.embed(queries.crops[i:i + chunk]), top_k=5))
    return out


@dataclass(frozen=True, slots=True, kw_only=True)
class EvalReport:
    decks: tuple[DeckResult, ...]
    foreign: tuple[ForeignResult, ...]
    seconds: float
    per_turn: int
    seed: int


def evaluate(embedder: Embedder, decks: Mapping[str, tuple[Any, Mapping[str, np.ndarray]]], *,
             seed: int = 0, per_turn: int = 10, scenes: Mapping[str, SceneQueries] | None = None,
             progress: bool = False) -> EvalReport:
    """`decks`: name -> (art pack, its face images). `scenes`: name -> scene crops of a deck."""
    start = time.perf_counter()
    results: list[DeckResult] = []
    galleries: dict[str, Gallery] = {}
    bar = tqdm(list(decks.items()), desc="evaluating decks", unit="deck", disable=not progress)
    for d, (name, (pack, images)) in enumerate(bar):
        gallery = Gallery.from_images(images, embedder, game=getattr(pack, "game", ""))
        galleries[name] = gallery
        queries = make_queries(images, seed=(EVAL_FAMILY + seed, d), per_turn=per_turn, crops=EVAL_CROPS)
        matches = _match(embedder, gallery, queries)
        results.append(score_matches(name, gallery, queries, matches))
        if scenes and name in scenes:
            for label, sq in (("rendered scenes", scenes[name].truth),
                              ("rendered scenes, finder's corners", scenes[name].found)):
                if sq is not None and len(sq):
                    results.append(score_matches(f"{name} ({label})", gallery, sq, _match(embedder, gallery, sq)))
    foreign: list[ForeignResult] = []
    names = list(decks)
    designs = dict(design_masters(EVAL_FAMILY + seed, 100, 0.0))
    design_q = make_queries(designs, seed=(EVAL_FAMILY + seed, 0xF0), per_turn=1, crops=EVAL_CROPS)
    for d, name in enumerate(names):
        other = names[(d + 1) % len(names)]
        if other != name:
            oq = make_queries(decks[other][1], seed=(EVAL_FAMILY + seed, 0xF1, d), per_turn=1, crops=EVAL_CROPS)
            foreign.append(foreign_result(f"{other} crops vs {name} gallery", galleries[name],
                                          _match(embedder, galleries[name], oq)))
        foreign.append(foreign_result(f"random designs vs {name} gallery", galleries[name],
                                      _match(embedder, galleries[name], design_q)))
    return EvalReport(decks=tuple(results), foreign=tuple(foreign),
                      seconds=time.perf_counter() - start, per_turn=per_turn, seed=seed)


def report_markdown(report: EvalReport) -> str:
    """The report as Markdown tables (pasted into the model card)."""
    lines = [
        "| query set | faces | crops | top-1 (face + turn) | top-1 face | top-5 face | correct but flagged unknown | mean best score |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in report.decks:
        lines.append(f"| {r.name} | {r.faces} | {r.crops} | {100 * r.top1:.2f}% | {100 * r.top1_face:.2f}% | "
                     f"{100 * r.top5_face:.2f}% | {100 * r.flagged_unknown:.1f}% | {r.mean_best_score:.3f} |")
    lines += ["", "| absent faces | crops | flagged unknown | mean best score |", "|---|---|---|---|"]
    for f in report.foreign:
        lines.append(f"| {f.name} | {f.crops} | {100 * f.flagged_unknown:.1f}% | {f.mean_best_score:.3f} |")
    for r in report.decks:
        if r.confusions:
            lines += ["", f"Worst confusions, {r.name}: " + "; ".join(
                f"{a} → {b} ×{c}" for a, b, c in r.confusions)]
    return "\n".join(lines) + "\n"


def report_dict(report: EvalReport) -> dict[str, Any]:
    from dataclasses import asdict

    return asdict(report)
