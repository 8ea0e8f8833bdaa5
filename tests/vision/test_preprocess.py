"""The identifier's crop preprocessing: one function for training and inference, exact on known input."""

from __future__ import annotations

import numpy as np
import pytest

from vision import preprocess as pp
from vision.preprocess import (
    INPUT_HEIGHT,
    INPUT_WIDTH,
    PreprocessError,
    preprocess,
    preprocess_batch,
    rectify,
    to_portrait,
)


def _halves(h: int = INPUT_HEIGHT, w: int = INPUT_WIDTH) -> np.ndarray:
    """Left half black, right half white."""
    img = np.zeros((h, w, 3), np.uint8)
    img[:, w // 2:] = 255
    return img


def test_known_input_gives_exact_values() -> None:
    # Mean 0.5 and deviation 0.5 over all pixels: black -> -1, white -> +1, exactly.
    out = preprocess(_halves())
    assert out.shape == (3, INPUT_HEIGHT, INPUT_WIDTH)
    assert out.dtype == np.float32
    assert out.flags.c_contiguous
    np.testing.assert_array_equal(out[:, :, : INPUT_WIDTH // 2], -1.0)
    np.testing.assert_array_equal(out[:, :, INPUT_WIDTH // 2:], 1.0)


def test_channels_stay_bgr_and_relative_colour_is_kept() -> None:
    img = np.zeros((INPUT_HEIGHT, INPUT_WIDTH, 3), np.uint8)
    img[..., 0] = 200  # blue channel bright, green and red dark
    out = preprocess(img)
    # One mean and one deviation for all channels: (a, 0, 0) -> (sqrt 2, -1/sqrt 2, -1/sqrt 2).
    np.testing.assert_allclose(out[0], np.sqrt(2.0), rtol=1e-5)
    np.testing.assert_allclose(out[1], -1.0 / np.sqrt(2.0), rtol=1e-5)
    np.testing.assert_array_equal(out[1], out[2])


def test_flat_crop_does_not_divide_by_zero() -> None:
    out = preprocess(np.full((50, 40, 3), 77, np.uint8))
    assert np.isfinite(out).all()
    np.testing.assert_allclose(out, 0.0, atol=1e-6)


def test_landscape_is_turned_clockwise() -> None:
    rng = np.random.default_rng(3)
    land = rng.integers(0, 256, (60, 90, 3), dtype=np.uint8)
    turned = to_portrait(land)
    assert turned.shape == (90, 60, 3)
    # Clockwise: the landscape's top-left pixel ends at the portrait's top-right.
    np.testing.assert_array_equal(turned[0, -1], land[0, 0])
    np.testing.assert_array_equal(preprocess(land), preprocess(np.rot90(land, -1).copy()))
    portrait = rng.integers(0, 256, (90, 60, 3), dtype=np.uint8)
    assert to_portrait(portrait) is portrait


def test_a_landscape_card_upside_down_is_the_180_turn_of_its_portrait() -> None:
    rng = np.random.default_rng(4)
    land = rng.integers(0, 256, (INPUT_WIDTH, INPUT_HEIGHT, 3), dtype=np.uint8)
    upright = preprocess(land)
    flipped = preprocess(np.ascontiguousarray(land[::-1, ::-1]))
    np.testing.assert_array_equal(flipped, upright[:, ::-1, ::-1])


def test_resize_shrinks_with_area_and_enlarges_bilinear() -> None:
    big = np.repeat(np.repeat(_halves(), 3, axis=0), 3, axis=1)  # 240 x 336
    np.testing.assert_array_equal(preprocess(big), preprocess(_halves()))
    small = _halves(56, 40)
    out = preprocess(small)
    assert out.shape == (3, INPUT_HEIGHT, INPUT_WIDTH)
    assert out[:, :, 0].max() < 0 < out[:, :, -1].min()


def test_grey_crop_is_repeated_to_three_channels() -> None:
    grey = _halves()[..., 0]
    np.testing.assert_array_equal(preprocess(grey), preprocess(_halves()))


def test_batch_matches_single_and_empty_batch_is_empty() -> None:
    rng = np.random.default_rng(5)
    crops = [rng.integers(0, 256, (h, w, 3), dtype=np.uint8) for h, w in ((100, 70), (70, 100), (30, 20))]
    batch = preprocess_batch(crops)
    assert batch.shape == (3, 3, INPUT_HEIGHT, INPUT_WIDTH)
    for crop, row in zip(crops, batch, strict=True):
        np.testing.assert_array_equal(row, preprocess(crop))
    stack = rng.integers(0, 256, (2, 50, 40, 3), dtype=np.uint8)
    np.testing.assert_array_equal(preprocess_batch(stack), preprocess_batch(list(stack)))
    assert preprocess_batch([]).shape == (0, 3, INPUT_HEIGHT, INPUT_WIDTH)


@pytest.mark.parametrize(
    ("crop", "words"),
    [
        (np.zeros((40, 30, 3), np.float32), "uint8"),
        (np.zeros((40, 30, 4), np.uint8), "(height, width, 3)"),
        (np.zeros((1, 30, 3), np.uint8), "too small"),
    ],
)
def test_bad_crops_get_a_clear_error(crop: np.ndarray, words: str) -> None:
    with pytest.raises(PreprocessError, match="crop 1") as info:
        preprocess_batch([np.zeros((40, 30, 3), np.uint8), crop])
    assert words in str(info.value)
    assert isinstance(info.value, ValueError)


def test_rectify_undoes_a_perspective_view() -> None:
    card = np.zeros((88, 63, 3), np.uint8)
    card[:44] = (0, 0, 255)
    card[44:] = (255, 0, 0)
    frame = np.full((300, 400, 3), 128, np.uint8)
    quad = np.array([[120, 40], [220, 60], [230, 200], [100, 190]], np.float32)
    import cv2

    src = np.array([[-0.5, -0.5], [62.5, -0.5], [62.5, 87.5], [-0.5, 87.5]], np.float32)
    m = cv2.getPerspectiveTransform(src, quad)
    warped = cv2.warpPerspective(card, m, (400, 300), dst=frame.copy(), borderMode=cv2.BORDER_TRANSPARENT)
    out = rectify(warped, quad, width=63, height=88)
    assert out.shape == (88, 63, 3)
    assert (out[5:40, 5:58, 2] > 200).all() and (out[5:40, 5:58, 0] < 50).all()
    assert (out[48:83, 5:58, 0] > 200).all() and (out[48:83, 5:58, 2] < 50).all()


def test_training_and_inference_share_one_preprocessing() -> None:
    from vision import identify

    assert identify.preprocess_batch is pp.preprocess_batch
    torch = pytest.importorskip("torch")
    del torch
    from vision.train import identifier

    assert identifier.preprocess_batch is pp.preprocess_batch
