"""Drawing what the pipeline saw onto a camera frame, for the operator console.

Drawing is apart from data: `annotate(image, step, zones)` returns a new image and changes
nothing else. Zones are outlined green when settled and amber while something moves over
them; each card found is outlined with its track id and the best face candidate, red when the
identifier is unsure.
"""

from __future__ import annotations

from collections.abc import Mapping

import cv2
import numpy as np

from vision.pipeline import PipelineStep

SETTLED = (80, 200, 80)
MOVING = (0, 170, 255)
CARD = (255, 200, 40)
UNSURE = (60, 60, 230)
UNSURE_BELOW = 0.5


def annotate(
    image: np.ndarray, step: PipelineStep, zones: Mapping[str, np.ndarray], *, width: int = 960
) -> np.ndarray:
    """A copy of `image`, scaled to `width` pixels, with zones and cards drawn on it."""
    h, w = image.shape[:2]
    scale = width / w if w > width else 1.0
    out = cv2.resize(image, (round(w * scale), round(h * scale))) if scale != 1.0 else image.copy()
    settled = step.settle.settled
    for zone, polygon in zones.items():
        pts = np.round(np.asarray(polygon, np.float64) * scale).astype(np.int32)
        colour = SETTLED if zone in settled else MOVING
        cv2.polylines(out, [pts], True, colour, 1, cv2.LINE_AA)
        x, y = pts.min(axis=0)
        cv2.putText(out, zone, (int(x) + 2, int(y) + 11), cv2.FONT_HERSHEY_SIMPLEX, 0.33, colour,
                    1, cv2.LINE_AA)
    for track in step.tracks:
        quad = np.round(np.asarray(track.corners, np.float64) * scale).astype(np.int32)
        best = track.candidates[0] if track.candidates else None
        colour = CARD if best is not None and best.score >= UNSURE_BELOW else UNSURE
        cv2.polylines(out, [quad], True, colour, 2, cv2.LINE_AA)
        label = f"#{track.track_id} {best.face} {best.score:.2f}" if best else f"#{track.track_id} ?"
        x, y = quad.min(axis=0)
        cv2.putText(out, label, (int(x), max(10, int(y) - 3)), cv2.FONT_HERSHEY_SIMPLEX, 0.38,
                    colour, 1, cv2.LINE_AA)
    return out


def encode_jpeg(image: np.ndarray, quality: int = 75) -> bytes:
    ok, buf = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, quality])
    if not ok:
        raise ValueError("the camera view could not be encoded as JPEG")
    return bytes(buf)
