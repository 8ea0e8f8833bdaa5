"""Enrollment: build an art pack from scans or photos of a real deck.

Each image in a folder is mapped to a face id by a *name map* (ordered regex or glob rules
that turn a file path into a face id, or a CSV of `file,face` rows; a file whose stem already
is a face id needs no rule), then the card is cut out of it: the card's outline is found
against the background (a scan bed, a plain table seen from above) or else as the largest
convex quadrilateral among the image's edges, its four corners are fitted
as the intersections of straight lines along the card's sides (so rounded corners do not pull
them inwards), and the card is perspective-corrected to its true aspect at the requested
resolution, never above the image's own resolution unless asked. Landscape faces (catalog
attr `orientation`) come out landscape. The report lists every face still missing, every file
that matched no rule, and every file whose card could not be read.
"""

from __future__ import annotations

import csv
import fnmatch
import json
import re
import string
from collections.abc import Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from types import MappingProxyType
from typing import Any

import cv2
import numpy as np
from tqdm import tqdm

from engine.catalog import Catalog, Orientation, load_catalog
from vision.art.pack import ArtPack, PackSource, save_pack

IMAGE_SUFFIXES = frozenset({".jpg", ".jpeg", ".png", ".bmp", ".tif", ".tiff", ".webp"})
MM_PER_INCH = 25.4


class EnrollError(ValueError):
    """Enrollment input that cannot be used: a missing folder, a bad name map."""


class NameMapError(EnrollError):
    """A name map file that does not follow the documented format."""


# ------------------------------------------------------------------ name maps


@dataclass(frozen=True, slots=True, kw_only=True)
class NameRule:
    """One rule of a name map: a file path pattern and the face id it gives.

    `face` is a template: `{name}` is replaced by the regex group `name` of the match, in
    lower case. Patterns match the whole path relative to the image folder, with `/`
    separators, ignoring case.
    """

    pattern: re.Pattern[str]
    face: str
    where: str

    def face_for(self, relative: str) -> str | None:
        match = self.pattern.fullmatch(relative)
        if match is None:
            return None
        # Matching ignores case and face ids are lower case: `ITEM_IRON.JPG` is `item.iron`.
        groups = {k: (v or "").lower() for k, v in match.groupdict().items()}
        return self.face.format(**groups)


@dataclass(frozen=True, slots=True, kw_only=True)
class NameMap:
    """Ordered rules mapping image files to face ids; the first rule that matches wins."""

    rules: tuple[NameRule, ...] = ()
    source: str = "file names"

    def face_for(self, relative: str, faces: Collection[str]) -> str | None:
        """The face id for a file path, or None when no rule matches.

        A file whose path without suffix, or whose stem, is a face id of the catalog maps to
        that face with no rule (`mob.zombie.png`, `wood-hoe/craft.png`).
        """
        for rule in self.rules:
            face = rule.face_for(relative)
            if face is not None:
                return face
        without_suffix = relative.rsplit(".", 1)[0] if "." in Path(relative).name else relative
        for candidate in (without_suffix, Path(without_suffix).name):
            if candidate in faces:
                return candidate
        return None


def _template_fields(template: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(template) if name is not None}


def _glob_rule(glob: str, face: str, where: str) -> NameRule:
    if _template_fields(face):
        raise NameMapError(f"{where}: a glob rule's face must be a plain face id, got {face!r}")
    translated = fnmatch.translate(glob)  # "(?s:...)\\Z"
    inner = translated[len("(?s:") : -len(")\\Z")]
    # A glob without a folder part matches the file name in any folder.
    prefix = "" if "/" in glob else "(?:.*/)?"
    regex = f"(?s:{prefix}{inner})"
    return NameRule(pattern=re.compile(regex, re.IGNORECASE), face=face, where=where)


def _regex_rule(regex: str, face: str, where: str) -> NameRule:
    try:
        pattern = re.compile(regex, re.IGNORECASE)
    except re.error as exc:
        raise NameMapError(f"{where}: 'regex' {regex!r} does not compile: {exc}") from None
    try:
        missing = _template_fields(face) - set(pattern.groupindex)
    except ValueError as exc:
        raise NameMapError(f"{where}: 'face' template {face!r} is malformed: {exc}") from None
    if missing:
        raise NameMapError(
            f"{where}: 'face' {face!r} uses {', '.join(sorted(missing))} but the regex has "
            f"no such named group; name it with (?P<{sorted(missing)[0]}>...)"
        )
    return NameRule(pattern=pattern, face=face, where=where)


def parse_name_map(data: Any, source: str = "<name map>") -> NameMap:
    """Validate a decoded JSON name map: `{"schema": 1, "rules": [{"regex"|"glob", "face"}]}`."""
    if not isinstance(data, Mapping):
        raise NameMapError(f"{source}: a name map must be a JSON object")
    if data.get("schema") != 1:
        raise NameMapError(f"{source}: field 'schema' must be 1, got {data.get('schema')!r}")
    rules_data = data.get("rules")
    if not isinstance(rules_data, list) or not rules_data:
        raise NameMapError(f"{source}: field 'rules' must be a non-empty list")
    rules: list[NameRule] = []
    for i, entry in enumerate(rules_data):
        where = f"{source}: rules[{i}]"
        if not isinstance(entry, Mapping):
            raise NameMapError(f"{where}: must be an object")
        face = entry.get("face")
        if not isinstance(face, str) or not face:
            raise NameMapError(f"{where}: field 'face' must be a face id or template")
        has_regex, has_glob = "regex" in entry, "glob" in entry
        if has_regex == has_glob:
            raise NameMapError(f"{where}: give exactly one of 'regex' or 'glob'")
        value = entry["regex"] if has_regex else entry["glob"]
        if not isinstance(value, str) or not value:
            raise NameMapError(f"{where}: the pattern must be a non-empty string")
        rules.append(
            _regex_rule(value, face, where) if has_regex else _glob_rule(value, face, where)
        )
    return NameMap(rules=tuple(rules), source=source)


def load_name_map(path: str | Path) -> NameMap:
    """Read a name map: `.json` rules, or a `.csv` with a `file,face` header (globs allowed)."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise NameMapError(f"{path}: cannot read name map ({exc.strerror})") from None
    if path.suffix.lower() == ".json":
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise NameMapError(
                f"{path}: not valid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}"
            ) from None
        return parse_name_map(data, str(path))
    if path.suffix.lower() != ".csv":
        raise NameMapError(f"{path}: a name map is a .json or .csv file")
    lines = [ln for ln in text.splitlines() if ln.strip() and not ln.lstrip().startswith("#")]
    reader = csv.DictReader(lines)
    if reader.fieldnames is None or {"file", "face"} - {f.strip() for f in reader.fieldnames}:
        raise NameMapError(f"{path}: the first line must be the header 'file,face'")
    rules = []
    for row_number, row in enumerate(reader, start=2):
        where = f"{path}: row {row_number}"
        file_pattern = (row.get("file") or "").strip()
        face = (row.get("face") or "").strip()
        if not file_pattern or not face:
            raise NameMapError(f"{where}: both 'file' and 'face' must be filled in")
        rules.append(_glob_rule(file_pattern, face, where))
    if not rules:
        raise NameMapError(f"{path}: no rows after the header")
    return NameMap(rules=tuple(rules), source=str(path))


def shipped_name_map(game: str, root: Path | None = None) -> Path | None:
    """The name map shipped for a game in `datasets/namemaps/`, when there is one."""
    base = (root or Path(__file__).resolve().parents[2]) / "datasets" / "namemaps"
    for suffix in (".json", ".csv"):
        candidate = base / f"{game}{suffix}"
        if candidate.is_file():
            return candidate
    return None


# ------------------------------------------------------------------ finding the card


class ExtractMethod(StrEnum):
    """How the card outline was found in an image."""

    BACKGROUND = "background"  # against a plain background (scan bed, plain table)
    EDGES = "edges"  # the largest convex quadrilateral among image edges
    THRESHOLD = "threshold"  # a dark card on a light surface or the reverse
    WHOLE = "whole"  # no outline found: the image is taken as the card (a tight crop)


@dataclass(frozen=True, slots=True, kw_only=True)
class ExtractConfig:
    """How cards are found and resampled.

    `dpi`: output resolution; an image of lower resolution is kept at its own unless
    `upscale`. `min_area_fraction`: a card outline must cover at least this share of the
    image (smaller shapes are art or clutter). `min_fill`: how much of the fitted
    quadrilateral the outline must fill (a card is a rectangle; blobs are rejected).
    `max_aspect_error`: how far the outline's side ratio may stray from the card's under
    perspective, as a fraction. `methods`: the outline finders to try, in order.
    """

    dpi: float = 300.0
    upscale: bool = False
    min_area_fraction: float = 0.05
    min_fill: float = 0.9
    max_aspect_error: float = 0.35
    work_size: int = 1000
    methods: tuple[ExtractMethod, ...] = (
        ExtractMethod.BACKGROUND,
        ExtractMethod.EDGES,
        ExtractMethod.THRESHOLD,
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class CardCrop:
    """A card cut out of an image: the rectified picture and where it was found."""

    image: np.ndarray
    corners: np.ndarray  # (4, 2) float32, source pixels: top-left, top-right, bottom-right, bottom-left
    method: ExtractMethod
    native_dpi: float
    dpi: float
    rotated: bool  # turned 90° because the outline's orientation disagreed with the face's


def order_corners(points: np.ndarray) -> np.ndarray:
    """Four points as top-left, top-right, bottom-right, bottom-left (clockwise on screen)."""
    pts = np.asarray(points, dtype=np.float64).reshape(4, 2)
    centre = pts.mean(axis=0)
    angles = np.arctan2(pts[:, 1] - centre[1], pts[:, 0] - centre[0])
    pts = pts[np.argsort(angles)]  # clockwise in image coordinates (y down)
    start = int(np.argmin(pts.sum(axis=1)))
    return np.roll(pts, -start, axis=0).astype(np.float32)


def _approx_quad(hull: np.ndarray) -> np.ndarray | None:
    perimeter = cv2.arcLength(hull, True)
    for eps in (0.01, 0.015, 0.02, 0.03, 0.04, 0.05, 0.07):
        approx = cv2.approxPolyDP(hull, eps * perimeter, True)
        if len(approx) == 4:
            return approx.reshape(4, 2).astype(np.float64)
        if len(approx) < 4:
            return None
    return None


def _line_intersection(a: np.ndarray, b: np.ndarray) -> np.ndarray | None:
    # Lines as (vx, vy, x0, y0).
    d1, p1, d2, p2 = a[:2], a[2:], b[:2], b[2:]
    denom = d1[0] * d2[1] - d1[1] * d2[0]
    if abs(denom) < 1e-6:
        return None
    t = ((p2[0] - p1[0]) * d2[1] - (p2[1] - p1[1]) * d2[0]) / denom
    point: np.ndarray = p1 + t * d1
    return point


def refine_quad(contour: np.ndarray, rough: np.ndarray, inset: float = 0.0) -> np.ndarray:
    """Corners as intersections of lines fitted to the straight middle of each side.

    Rounded card corners make a polygon approximation cut the corner; the sides themselves
    are straight, so their fitted lines meet at the corner of the printed rectangle. `inset`
    moves every side that many pixels inwards (an outline traced around a thickened edge
    lies outside the true edge by the thickening).
    """
    points = contour.reshape(-1, 2).astype(np.float64)
    corners = order_corners(rough).astype(np.float64)
    centre = corners.mean(axis=0)
    lines = []
    for k in range(4):
        start, end = corners[k], corners[(k + 1) % 4]
        side = end - start
        length = float(np.hypot(*side))
        if length < 1:
            return corners.astype(np.float32)
        unit = side / length
        rel = points - start
        t = rel @ unit / length
        dist = np.abs(rel[:, 0] * unit[1] - rel[:, 1] * unit[0])
        near = points[(t > 0.12) & (t < 0.88) & (dist < max(3.0, 0.03 * length))]
        if len(near) < 8:
            return corners.astype(np.float32)
        line = cv2.fitLine(near.astype(np.float32), cv2.DIST_HUBER, 0, 0.01, 0.01).ravel()
        line = line.astype(np.float64)
        if inset:
            normal = np.array([-line[1], line[0]])
            inward = centre - line[2:]
            line[2:] += inset * normal * (1.0 if normal @ inward > 0 else -1.0)
        lines.append(line)
    refined = []
    shortest = min(
        float(np.hypot(*(corners[(k + 1) % 4] - corners[k]))) for k in range(4)
    )
    for k in range(4):
        point = _line_intersection(lines[(k - 1) % 4], lines[k])
        if point is None or np.hypot(*(point - corners[k])) > 0.1 * shortest:
            return corners.astype(np.float32)
        refined.append(point)
    return np.asarray(refined, dtype=np.float32)


def _side_lengths(quad: np.ndarray) -> tuple[float, float]:
    """Mean length of the top/bottom sides and of the left/right sides."""
    q = quad.astype(np.float64)
    horizontal = (np.hypot(*(q[1] - q[0])) + np.hypot(*(q[2] - q[3]))) / 2
    vertical = (np.hypot(*(q[3] - q[0])) + np.hypot(*(q[2] - q[1]))) / 2
    return float(horizontal), float(vertical)


def _masks(image: np.ndarray) -> Iterator[tuple[ExtractMethod, np.ndarray, int, float]]:
    """Binary images whose contours may outline the card, best first.

    Each comes with its contour retrieval mode and how far its outlines lie outside the
    true edge (in pixels).
    """
    h, w = image.shape[:2]
    patch = max(3, round(0.01 * min(h, w)))
    corner_colours = np.array(
        [
            np.median(image[ys, xs].reshape(-1, 3), axis=0)
            for ys, xs in (
                (slice(0, patch), slice(0, patch)),
                (slice(0, patch), slice(w - patch, w)),
                (slice(h - patch, h), slice(0, patch)),
                (slice(h - patch, h), slice(w - patch, w)),
            )
        ]
    )
    spread = np.max(np.ptp(corner_colours, axis=0))
    kernel = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (5, 5))
    if spread < 40:
        background = np.median(corner_colours, axis=0)
        blurred = cv2.GaussianBlur(image, (5, 5), 0).astype(np.float32)
        distance = np.linalg.norm(blurred - background.astype(np.float32), axis=2)
        scaled = np.clip(distance, 0, 255).astype(np.uint8)
        # The background is one dominant peak near 0 with a tail (grain, shading): the
        # triangle method puts the threshold at the foot of that peak.
        level, _ = cv2.threshold(scaled, 0, 255, cv2.THRESH_BINARY + cv2.THRESH_TRIANGLE)
        mask = (distance > float(np.clip(level, 30.0, 60.0))).astype(np.uint8) * 255
        mask = cv2.morphologyEx(mask, cv2.MORPH_OPEN, kernel, iterations=2)
        mask = cv2.morphologyEx(mask, cv2.MORPH_CLOSE, kernel, iterations=2)
        yield ExtractMethod.BACKGROUND, mask, cv2.RETR_EXTERNAL, 0.0
    grey = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
    grey = cv2.GaussianBlur(grey, (5, 5), 0)
    median = float(np.median(grey))
    edges = cv2.Canny(grey, max(10.0, 0.5 * median), max(40.0, 1.2 * median))
    edges = cv2.dilate(edges, kernel)
    yield ExtractMethod.EDGES, edges, cv2.RETR_LIST, 2.0
    _, otsu = cv2.threshold(grey, 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU)
    for mask in (otsu, 255 - otsu):
        # A split that leaves (almost) nothing on one side found no shape at all.
        if 0.02 < float(np.count_nonzero(mask)) / mask.size < 0.98:
            yield ExtractMethod.THRESHOLD, mask, cv2.RETR_EXTERNAL, 0.0


def find_card_quad(
    image: np.ndarray, aspect: float, config: ExtractConfig = ExtractConfig()
) -> tuple[np.ndarray, ExtractMethod]:
    """The four corners of the card (ordered, source pixels) and how they were found.

    `aspect` is the card's long side over its short side. The largest convex quadrilateral
    that fills its outline and has a plausible side ratio wins; with none, the whole image.
    """
    h, w = image.shape[:2]
    scale = min(1.0, config.work_size / max(h, w))
    small = cv2.resize(image, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA) if (
        scale < 1.0
    ) else image
    area = small.shape[0] * small.shape[1]
    for method, mask, mode, inset in _masks(small):
        if method not in config.methods:
            continue
        contours, _ = cv2.findContours(mask, mode, cv2.CHAIN_APPROX_NONE)
        best: tuple[float, np.ndarray] | None = None
        for contour in sorted(contours, key=cv2.contourArea, reverse=True)[:12]:
            hull = cv2.convexHull(contour)
            hull_area = cv2.contourArea(hull)
            if hull_area < config.min_area_fraction * area:
                break
            rough = _approx_quad(hull)
            if rough is None:
                continue
            quad = refine_quad(contour, rough, inset)
            quad_area = cv2.contourArea(quad)
            # The outline must fill the quadrilateral and not spill out of it (a card
            # merged with table clutter does both).
            if quad_area <= 0 or cv2.contourArea(contour) / quad_area < config.min_fill:
                continue
            if hull_area / quad_area > 2.0 - config.min_fill:
                continue
            if not cv2.isContourConvex(quad.reshape(-1, 1, 2).astype(np.float32)):
                continue
            sides = _side_lengths(quad)
            ratio = max(sides) / max(1e-6, min(sides))
            if abs(ratio - aspect) / aspect > config.max_aspect_error:
                continue
            if best is None or quad_area > best[0]:
                best = (quad_area, quad)
        if best is not None:
            return (best[1] / scale).astype(np.float32), method
    whole = np.array([[0, 0], [w - 1, 0], [w - 1, h - 1], [0, h - 1]], dtype=np.float32)
    return whole, ExtractMethod.WHOLE


def extract_card(
    image: np.ndarray,
    card_size_mm: tuple[float, float],
    orientation: Orientation = Orientation.PORTRAIT,
    config: ExtractConfig = ExtractConfig(),
) -> CardCrop:
    """Find the card in an image and rectify it to its true aspect.

    `card_size_mm` is the catalog's (width, height) of a portrait card; a landscape face
    comes out with width and height swapped. When the found outline lies the other way
    round, the card is turned 90° clockwise to match and `rotated` says so.
    """
    if image is None or image.ndim != 3 or image.shape[2] != 3:
        raise EnrollError("extract_card needs a BGR colour image")
    short_mm, long_mm = sorted(card_size_mm)
    quad, method = find_card_quad(image, long_mm / short_mm, config)
    horizontal, vertical = _side_lengths(quad)
    native_dpi = max(horizontal, vertical) / long_mm * MM_PER_INCH
    dpi = config.dpi if config.upscale else min(config.dpi, native_dpi)
    if orientation is Orientation.LANDSCAPE:
        width_mm, height_mm = long_mm, short_mm
    else:
        width_mm, height_mm = short_mm, long_mm
    rotated = (horizontal > vertical) != (width_mm > height_mm)
    if rotated:
        # Source left side becomes the top: a quarter turn clockwise.
        quad = np.roll(quad, -3, axis=0)
    out_w = max(1, round(width_mm / MM_PER_INCH * dpi))
    out_h = max(1, round(height_mm / MM_PER_INCH * dpi))
    target = np.array(
        [[0, 0], [out_w - 1, 0], [out_w - 1, out_h - 1], [0, out_h - 1]], dtype=np.float32
    )
    matrix = cv2.getPerspectiveTransform(quad.astype(np.float32), target)
    card = cv2.warpPerspective(
        image, matrix, (out_w, out_h), flags=cv2.INTER_AREA, borderMode=cv2.BORDER_REPLICATE
    )
    return CardCrop(
        image=card,
        corners=quad.astype(np.float32),
        method=method,
        native_dpi=native_dpi,
        dpi=dpi,
        rotated=rotated,
    )


def read_image(path: Path) -> np.ndarray | None:
    """Decode an image file (any path, EXIF orientation applied), None when unreadable."""
    try:
        data = np.fromfile(str(path), dtype=np.uint8)
    except OSError:
        return None
    if data.size == 0:
        return None
    image = cv2.imdecode(data, cv2.IMREAD_COLOR)
    return image if image is not None and image.size else None


# ------------------------------------------------------------------ enrolling a folder


class FileStatus(StrEnum):
    """What happened to one image file during enrollment."""

    ENROLLED = "enrolled"
    UNMATCHED = "unmatched"  # no name map rule and not named after a face
    UNKNOWN_FACE = "unknown-face"  # a rule gave a face id the catalog does not have
    DUPLICATE = "duplicate"  # an earlier file already gave this face
    UNREADABLE = "unreadable"


@dataclass(frozen=True, slots=True, kw_only=True)
class FileResult:
    """One image file: the face it gave and how its card was found."""

    file: str
    status: FileStatus
    face: str | None = None
    method: ExtractMethod | None = None
    native_dpi: float | None = None
    rotated: bool = False
    message: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class EnrollReport:
    """The outcome of enrolling a folder: the pack written and everything left over."""

    game: str
    pack: ArtPack
    results: tuple[FileResult, ...]
    missing: tuple[str, ...]
    faces: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))

    def of_status(self, status: FileStatus) -> tuple[FileResult, ...]:
        return tuple(r for r in self.results if r.status is status)

    @property
    def complete(self) -> bool:
        """Every face of the catalog has an image."""
        return not self.missing


def list_images(folder: Path) -> list[str]:
    """Image files under a folder, as sorted paths relative to it with `/` separators."""
    return sorted(
        p.relative_to(folder).as_posix()
        for p in folder.rglob("*")
        if p.is_file() and p.suffix.lower() in IMAGE_SUFFIXES
    )


def enroll(
    game: str,
    images: str | Path,
    out_dir: str | Path,
    name_map: NameMap | None = None,
    *,
    config: ExtractConfig = ExtractConfig(),
    name: str | None = None,
    progress: bool = True,
) -> EnrollReport:
    """Enroll every image of a folder into an art pack written to `out_dir`.

    Files are taken in sorted order; when two files give the same face, the first wins and
    the second is reported as a duplicate. The pack is written even when faces are missing
    (the report says which), so a deck can be enrolled in several sittings.
    """
    catalog = load_catalog(game)
    images = Path(images)
    out_dir = Path(out_dir)
    if not images.is_dir():
        raise EnrollError(f"{images}: not a folder of images; pass the folder with --images")
    files = list_images(images)
    if not files:
        raise EnrollError(
            f"{images}: no image files ({', '.join(sorted(IMAGE_SUFFIXES))}) in this folder"
        )
    name_map = name_map or NameMap()
    results: list[FileResult] = []
    faces: dict[str, str] = {}

    def crops() -> Iterator[tuple[str, np.ndarray]]:
        for relative in tqdm(files, desc=f"enrolling {game}", unit="image", disable=not progress):
            result, image = _enroll_file(images, relative, catalog, name_map, faces, config)
            results.append(result)
            if image is not None and result.face is not None:
                faces[result.face] = relative
                yield result.face, image

    pack = save_pack(
        out_dir,
        game=game,
        name=name or f"{catalog.name} (enrolled)",
        source=PackSource.ENROLLED,
        images=crops(),
        card_size_mm=catalog.card_size_mm,
        created_from=f"enrolled from {images} with {name_map.source}",
    )
    return EnrollReport(
        game=game,
        pack=pack,
        results=tuple(results),
        missing=pack.missing_faces(catalog),
        faces=MappingProxyType(dict(faces)),
    )


def _enroll_file(
    images: Path,
    relative: str,
    catalog: Catalog,
    name_map: NameMap,
    taken: Mapping[str, str],
    config: ExtractConfig,
) -> tuple[FileResult, np.ndarray | None]:
    """Map one file to a face and cut its card out; the image is None when it gave none."""
    face = name_map.face_for(relative, catalog.faces)
    if face is None:
        return FileResult(file=relative, status=FileStatus.UNMATCHED), None
    if face not in catalog.faces:
        message = f"the name map gives {face!r}, which {catalog.game} has no face of"
        return FileResult(
            file=relative, status=FileStatus.UNKNOWN_FACE, face=face, message=message
        ), None
    if face in taken:
        message = f"{face!r} already comes from {taken[face]}"
        return FileResult(
            file=relative, status=FileStatus.DUPLICATE, face=face, message=message
        ), None
    image = read_image(images / relative)
    if image is None:
        return FileResult(
            file=relative, status=FileStatus.UNREADABLE, face=face, message="not a readable image"
        ), None
    crop = extract_card(image, catalog.card_size_mm, catalog.face(face).orientation, config)
    result = FileResult(
        file=relative,
        status=FileStatus.ENROLLED,
        face=face,
        method=crop.method,
        native_dpi=round(crop.native_dpi, 1),
        rotated=crop.rotated,
    )
    return result, crop.image


def summarise(report: EnrollReport) -> Sequence[str]:
    """Human-readable lines: counts, then every missing face and every problem file."""
    enrolled = report.of_status(FileStatus.ENROLLED)
    lines = [
        f"{report.game}: {len(enrolled)} faces enrolled into {report.pack.root}, "
        f"{len(report.missing)} missing"
    ]
    methods: dict[str, int] = {}
    for r in enrolled:
        methods[str(r.method)] = methods.get(str(r.method), 0) + 1
    if methods:
        lines.append(
            "  outlines found by: " + ", ".join(f"{k} {v}" for k, v in sorted(methods.items()))
        )
    rotated = [r.file for r in enrolled if r.rotated]
    if rotated:
        lines.append(f"  turned 90° to match the face orientation: {', '.join(rotated)}")
    for face in report.missing:
        lines.append(f"  missing face: {face}")
    for status in (
        FileStatus.UNMATCHED,
        FileStatus.UNKNOWN_FACE,
        FileStatus.DUPLICATE,
        FileStatus.UNREADABLE,
    ):
        for r in report.of_status(status):
            detail = f" ({r.message})" if r.message else ""
            lines.append(f"  {status}: {r.file}{detail}")
    return lines
