"""COCO-style annotations for synthetic stills: one category "card", quads and corner keypoints.

Each card that shows enough of itself becomes an annotation with its bounding box (clipped
to the image), its quad as the segmentation polygon, and its four corners as keypoints in the
card's own order (top-left, top-right, bottom-right, bottom-left) with COCO visibility: 2 seen,
1 inside the image but hidden, 0 outside the image (coordinates are still the true ones).
The face id, visible fraction and track ride along in `attributes`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from vision.synth.truth import CardTruth

KEYPOINTS = ("top_left", "top_right", "bottom_right", "bottom_left")
CATEGORY = {
    "id": 1,
    "name": "card",
    "supercategory": "card",
    "keypoints": list(KEYPOINTS),
    "skeleton": [[1, 2], [2, 3], [3, 4], [4, 1]],
}


def _clip_poly_area(q: np.ndarray, w: int, h: int) -> float:
    """Area of a convex quad clipped to the image rectangle (Sutherland–Hodgman)."""
    poly = [tuple(p) for p in q]
    for axis, bound, keep_less in ((0, 0.0, False), (0, w - 1.0, True), (1, 0.0, False), (1, h - 1.0, True)):
        out: list[tuple[float, float]] = []
        for i in range(len(poly)):
            a, b = poly[i], poly[(i + 1) % len(poly)]
            ina = a[axis] <= bound if keep_less else a[axis] >= bound
            inb = b[axis] <= bound if keep_less else b[axis] >= bound
            if ina:
                out.append(a)
            if ina != inb:
                t = (bound - a[axis]) / (b[axis] - a[axis])
                out.append((a[0] + t * (b[0] - a[0]), a[1] + t * (b[1] - a[1])))
        poly = out
        if not poly:
            return 0.0
    p = np.array(poly)
    x, y = p[:, 0], p[:, 1]
    return float(abs(np.dot(x, np.roll(y, -1)) - np.dot(y, np.roll(x, -1))) / 2.0)


def card_annotation(card: CardTruth, ann_id: int, image_id: int, w: int, h: int) -> dict[str, Any] | None:
    """One COCO annotation, or None when the card is entirely outside the image."""
    q = np.array(card.corners, np.float64)
    x0, y0 = np.clip(q.min(axis=0), 0, [w - 1, h - 1])
    x1, y1 = np.clip(q.max(axis=0), 0, [w - 1, h - 1])
    if x1 - x0 < 1 or y1 - y0 < 1:
        return None
    kps: list[float] = []
    cvis = card.corner_visible or (True, True, True, True)
    n_vis = 0
    for (x, y), seen in zip(q, cvis, strict=True):
        inside = 0 <= x <= w - 1 and 0 <= y <= h - 1
        v = 0 if not inside else (2 if seen else 1)
        n_vis += v > 0
        kps += [round(float(x), 2), round(float(y), 2), v]
    return {
        "id": ann_id,
        "image_id": image_id,
        "category_id": 1,
        "bbox": [round(float(x0), 2), round(float(y0), 2), round(float(x1 - x0), 2), round(float(y1 - y0), 2)],
        "area": round(_clip_poly_area(q, w, h), 1),
        "segmentation": [[round(float(v), 2) for v in q.ravel()]],
        "keypoints": kps,
        "num_keypoints": int(n_vis),
        "iscrowd": 0,
        "attributes": {"face": card.face, "visible": round(card.visible, 4), "track": card.track,
                       "card": card.card},
    }


def coco_document(
    images: Sequence[tuple[str, int, int, Sequence[CardTruth]]],
    *,
    min_visible: float = 0.05,
    description: str = "cardtrack synthetic scenes",
) -> dict[str, Any]:
    """A COCO dataset from (file name, width, height, cards) per image."""
    out_images, anns = [], []
    ann_id = 1
    for image_id, (name, w, h, cards) in enumerate(images, start=1):
        out_images.append({"id": image_id, "file_name": name, "width": w, "height": h})
        for card in cards:
            if card.visible < min_visible:
                continue
            ann = card_annotation(card, ann_id, image_id, w, h)
            if ann is not None:
                anns.append(ann)
                ann_id += 1
    return {
        "info": {"description": description, "version": "1"},
        "images": out_images,
        "annotations": anns,
        "categories": [CATEGORY],
    }
