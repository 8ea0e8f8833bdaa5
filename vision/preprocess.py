"""The identifier's input: one rectified card crop turned into the model's tensor, the same way
for training and for live inference.

A crop is a BGR image of one card, already perspective-corrected by the caller (any size, uint8,
three channels; a grey image is repeated to three). The rule, in order: (1) a landscape crop
(wider than tall) is turned a quarter *clockwise* to portrait, so a landscape card's top edge
ends up on the right; a card seen the other way up becomes the 180° turn of the same portrait,
which the gallery holds as well. A crop of a portrait card that the caller cut sideways (a
landscape crop of a portrait card) is turned the same way and reads as 0° when the card's top
was on the crop's left, 180° when it was on the right. (2) The crop is resized to `INPUT_WIDTH` × `INPUT_HEIGHT`
(80 × 112, the 63 × 88 mm aspect) with area averaging when it shrinks on both axes and bilinear
interpolation otherwise. (3) Pixels become float32 in [0, 1] and are standardised per crop with
one mean and one standard deviation over all pixels and channels (the deviation floored at
`MIN_STD`), which removes exposure and contrast but keeps the card's colours relative to each
other. Channels stay in BGR order; the tensor is channels-first `(3, 112, 80)`.
`rectify` cuts a card out of a frame from its four corners for callers that hold a frame.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

import cv2
import numpy as np

PREPROCESS_VERSION: Final = "bgr-portrait-cw-80x112-std-v1"  # stored in the model; must match
INPUT_WIDTH: Final = 80
INPUT_HEIGHT: Final = 112
MIN_STD: Final = 0.02


class PreprocessError(ValueError):
    """A crop the identifier cannot read (wrong shape, type or an empty image)."""


def to_portrait(crop: np.ndarray) -> np.ndarray:
    """The crop turned a quarter clockwise when it is landscape, unchanged otherwise."""
    if crop.shape[1] > crop.shape[0]:
        return np.ascontiguousarray(np.rot90(crop, k=-1))
    return crop


def _checked(crop: np.ndarray, where: str) -> np.ndarray:
    if not isinstance(crop, np.ndarray):
        raise PreprocessError(f"{where}: expected a numpy image, got {type(crop).__name__}")
    if crop.ndim == 2:
        crop = np.repeat(crop[:, :, None], 3, axis=2)
    if crop.ndim != 3 or crop.shape[2] != 3:
        raise PreprocessError(
            f"{where}: expected a BGR image of shape (height, width, 3), got shape {crop.shape}"
        )
    if crop.dtype != np.uint8:
        raise PreprocessError(f"{where}: expected uint8 pixels (0..255), got {crop.dtype}")
    if crop.shape[0] < 2 or crop.shape[1] < 2:
        raise PreprocessError(f"{where}: the crop is empty or too small ({crop.shape[1]}x{crop.shape[0]} px)")
    return crop


def resize_to_input(crop: np.ndarray) -> np.ndarray:
    """Portrait BGR uint8 crop resized to the model input (rule (2) of the module docstring)."""
    h, w = crop.shape[:2]
    shrink = w >= INPUT_WIDTH and h >= INPUT_HEIGHT
    interp = cv2.INTER_AREA if shrink else cv2.INTER_LINEAR
    return cv2.resize(crop, (INPUT_WIDTH, INPUT_HEIGHT), interpolation=interp)


def normalise(image: np.ndarray) -> np.ndarray:
    """uint8 (H, W, 3) -> float32 (3, H, W), standardised with one mean and one deviation."""
    x = image.astype(np.float32) * np.float32(1.0 / 255.0)
    mean = x.mean(dtype=np.float64)
    std = max(float(x.std(dtype=np.float64)), MIN_STD)
    x = (x - np.float32(mean)) * np.float32(1.0 / std)
    return np.ascontiguousarray(x.transpose(2, 0, 1))


def preprocess(crop: np.ndarray, *, where: str = "crop") -> np.ndarray:
    """One crop -> the model's (3, INPUT_HEIGHT, INPUT_WIDTH) float32 tensor."""
    return normalise(resize_to_input(to_portrait(_checked(crop, where))))


def preprocess_batch(crops: Sequence[np.ndarray] | np.ndarray) -> np.ndarray:
    """Several crops -> (n, 3, INPUT_HEIGHT, INPUT_WIDTH); an empty input gives n = 0.

    A 4-D uint8 array is read as a stack of equally sized crops (n, h, w, 3).
    """
    if isinstance(crops, np.ndarray) and crops.ndim == 4:
        items: Sequence[np.ndarray] = list(crops)
    elif isinstance(crops, np.ndarray):
        raise PreprocessError(
            f"crops: expected a list of images or an array (n, height, width, 3), got shape {crops.shape}"
        )
    else:
        items = crops
    out = np.empty((len(items), 3, INPUT_HEIGHT, INPUT_WIDTH), np.float32)
    for i, crop in enumerate(items):
        out[i] = preprocess(crop, where=f"crop {i}")
    return out


def rectify(image: np.ndarray, corners: np.ndarray, *, width: int, height: int) -> np.ndarray:
    """Cut a card out of a frame: corners (4, 2) in the card's own order TL, TR, BR, BL.

    The result is `width` × `height` pixels; pass the card's printed aspect (a landscape card
    gives a landscape crop, which `preprocess` turns to portrait).
    """
    m = crop_transform(corners, width=width, height=height)
    return cv2.warpPerspective(image, m, (width, height), flags=cv2.INTER_LINEAR,
                               borderMode=cv2.BORDER_REPLICATE)


def crop_transform(corners: np.ndarray, *, width: int, height: int) -> np.ndarray:
    """The 3×3 perspective map from frame pixels to the `width` × `height` crop `rectify` cuts
    at `corners` (4, 2): what maps anything else in the frame into that crop."""
    quad = np.asarray(corners, np.float32).reshape(4, 2)
    # Corners are the card's outline; pixel centres sit half a pixel inside it.
    dst = np.array([[-0.5, -0.5], [width - 0.5, -0.5], [width - 0.5, height - 0.5],
                    [-0.5, height - 0.5]], np.float32)
    return np.asarray(cv2.getPerspectiveTransform(quad, dst))
