"""Card face images for the renderer: art packs, random designs, and per-face mip levels.

A `FaceLibrary` maps a face id to its image and printed size. It is filled from art packs
(`vision.art.pack`: a folder with `pack.json` listing one image per face) and from
procedurally generated designs (`vision.synth.designs`). A card seen from 1 m covers a
few hundred pixels while a scan has a thousand, so warping the full scan would alias: the
library keeps a pyramid per face (area-averaged halvings) and hands the renderer the smallest
level that is still at least as sharp as the card will appear, plus a rounded-corner alpha
mask at that level. A landscape image in a portrait pack is a landscape card: its printed size
is the pack's card size turned a quarter.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass

import cv2
import numpy as np

from vision.art.pack import ArtPack
from vision.synth.designs import random_design
from vision.synth.errors import SynthError
from vision.synth.noise import Array


@dataclass(frozen=True, slots=True, kw_only=True)
class FaceArt:
    """One face: its id, BGR uint8 image, printed size (width, height) mm, and where it came from."""

    face_id: str
    image: Array
    size_mm: tuple[float, float]
    source: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class FaceLevel:
    """A face image resampled for rendering: BGR image, alpha mask (0..255) and its px/mm."""

    image: Array
    mask: Array
    px_per_mm: float


def _oriented(card_size: tuple[float, float], shape: tuple[int, ...]) -> tuple[float, float]:
    w, h = card_size
    portrait_img = shape[0] >= shape[1]
    portrait_card = h >= w
    return (w, h) if portrait_img == portrait_card else (h, w)


def faces_of_pack(pack: ArtPack, *, prefix: str = "", max_px: int = 1100) -> list[FaceArt]:
    """Every face of an art pack (images larger than `max_px` are reduced once, on load).

    `prefix` namespaces the ids (`"minecraft-mk1:"`) when faces of several games are mixed.
    """
    out = []
    for fid in pack.faces:
        img = pack.image(fid)
        big = max(img.shape[:2])
        if big > max_px:
            k = max_px / big
            img = cv2.resize(img, (round(img.shape[1] * k), round(img.shape[0] * k)),
                             interpolation=cv2.INTER_AREA)
        out.append(FaceArt(face_id=prefix + fid, image=img,
                           size_mm=_oriented(pack.card_size_mm, img.shape), source=pack.name))
    return out


def _rounded_mask(h: int, w: int, radius_px: float) -> Array:
    mask = np.full((h, w), 255, np.uint8)
    r = round(radius_px)
    if r < 1:
        return mask
    mask[:r, :r] = 0
    mask[:r, w - r :] = 0
    mask[h - r :, :r] = 0
    mask[h - r :, w - r :] = 0
    for cx, cy in ((r, r), (w - 1 - r, r), (w - 1 - r, h - 1 - r), (r, h - 1 - r)):
        cv2.circle(mask, (cx, cy), r, 255, -1, cv2.LINE_AA)
    return mask


class FaceLibrary:
    """Face id → face art, with cached mip levels, masks and edge colours for rendering."""

    def __init__(self, faces: Iterable[FaceArt] = ()) -> None:
        self._faces: dict[str, FaceArt] = {}
        self._levels: dict[tuple[str, int, int], FaceLevel] = {}
        self._edge: dict[str, tuple[float, float, float]] = {}
        self.sources: list[str] = []
        for f in faces:
            self.add(f)

    def add(self, face: FaceArt) -> None:
        """Add a face (a later face with the same id replaces the earlier one)."""
        if face.image.ndim != 3 or face.image.shape[2] != 3 or face.image.dtype != np.uint8:
            raise SynthError(f"face {face.face_id!r}: image must be BGR uint8 (h, w, 3)")
        self._faces[face.face_id] = face
        if face.source and face.source not in self.sources:
            self.sources.append(face.source)
        for key in [k for k in self._levels if k[0] == face.face_id]:
            del self._levels[key]
        self._edge.pop(face.face_id, None)

    def extend(self, faces: Iterable[FaceArt]) -> None:
        for f in faces:
            self.add(f)

    @classmethod
    def from_pack(cls, pack: ArtPack) -> FaceLibrary:
        return cls(faces_of_pack(pack))

    def add_designs(self, seed: int, count: int, *, full_bleed: bool = False) -> list[str]:
        """Add `count` random designs of family `seed` (in the full-bleed style with
        `full_bleed`); returns their face ids."""
        ids = []
        for i in range(count):
            d = random_design(seed, i, full_bleed=full_bleed)
            self.add(FaceArt(face_id=d.face_id, image=d.image, size_mm=d.size_mm,
                             source="random-designs"))
            ids.append(d.face_id)
        return ids

    def __contains__(self, face_id: object) -> bool:
        return face_id in self._faces

    def __len__(self) -> int:
        return len(self._faces)

    def __iter__(self) -> Iterator[str]:
        return iter(self._faces)

    def ids(self) -> tuple[str, ...]:
        return tuple(self._faces)

    def get(self, face_id: str) -> FaceArt:
        try:
            return self._faces[face_id]
        except KeyError:
            sample = ", ".join(list(self._faces)[:5])
            raise SynthError(
                f"no image for face {face_id!r} in the loaded art ({len(self._faces)} faces, "
                f"e.g. {sample}); add it to the art pack or choose another face"
            ) from None

    def size_mm(self, face_id: str) -> tuple[float, float]:
        return self.get(face_id).size_mm

    def edge_color(self, face_id: str) -> tuple[float, float, float]:
        """The mean colour of the face's outer rim (what a card edge in a stack looks like)."""
        if face_id not in self._edge:
            img = self.get(face_id).image
            h, w = img.shape[:2]
            b = max(2, min(h, w) // 40)
            rim = np.concatenate(
                [img[:b].reshape(-1, 3), img[-b:].reshape(-1, 3),
                 img[:, :b].reshape(-1, 3), img[:, -b:].reshape(-1, 3)]
            )
            m = rim.mean(axis=0)
            self._edge[face_id] = (float(m[0]), float(m[1]), float(m[2]))
        return self._edge[face_id]

    def level(self, face_id: str, px_per_mm: float, corner_radius_mm: float) -> FaceLevel:
        """The smallest pyramid level whose resolution is still ≥ `px_per_mm` (capped at full)."""
        art = self.get(face_id)
        full_ppm = art.image.shape[1] / art.size_mm[0]
        k = 0
        while full_ppm / (2 ** (k + 1)) >= px_per_mm and min(art.image.shape[:2]) >> (k + 1) >= 16:
            k += 1
        key = (face_id, k, round(corner_radius_mm * 10))
        lev = self._levels.get(key)
        if lev is None:
            img = art.image
            for _ in range(k):
                img = cv2.resize(img, ((img.shape[1] + 1) // 2, (img.shape[0] + 1) // 2),
                                 interpolation=cv2.INTER_AREA)
            ppm = img.shape[1] / art.size_mm[0]
            mask = _rounded_mask(img.shape[0], img.shape[1], corner_radius_mm * ppm)
            lev = FaceLevel(image=img, mask=mask, px_per_mm=ppm)
            if len(self._levels) > 4096:
                self._levels.clear()
            self._levels[key] = lev
        return lev

    def sizes(self) -> Mapping[str, tuple[float, float]]:
        return {k: v.size_mm for k, v in self._faces.items()}
