"""The finder's letterbox: exact point mapping both ways, content where the mapping says, and
clear errors for frames it cannot take."""

from __future__ import annotations

import numpy as np
import pytest

from vision.letterbox import (
    INPUT_HEIGHT,
    INPUT_WIDTH,
    PAD_VALUE,
    LetterboxError,
    from_letterbox,
    letterbox_image,
    letterbox_params,
    to_input,
    to_letterbox,
)


@pytest.mark.parametrize("size", [(1280, 720), (1920, 1080), (640, 480), (320, 200), (1000, 1000)])
def test_points_round_trip(size: tuple[int, int]) -> None:
    rng = np.random.default_rng(7)
    box = letterbox_params(size)
    pts = rng.uniform(-50, max(size) + 50, size=(200, 4, 2))
    back = from_letterbox(to_letterbox(pts, box), box)
    assert np.abs(back - pts).max() < 1e-3
    inside = to_letterbox(np.array([[0.0, 0.0], [size[0] - 1.0, size[1] - 1.0]]), box)
    assert (inside >= -0.5).all() and inside[1, 0] <= INPUT_WIDTH and inside[1, 1] <= INPUT_HEIGHT


def test_720p_sits_centred_at_half_size() -> None:
    box = letterbox_params((1280, 720))
    assert box.resized == (640, 360) and box.paste == (0, 12)
    assert box.scale == (0.5, 0.5)
    frame = np.zeros((720, 1280, 3), np.uint8)
    img, _ = letterbox_image(frame)
    assert img.shape == (INPUT_HEIGHT, INPUT_WIDTH, 3)
    assert (img[:12] == PAD_VALUE).all() and (img[-12:] == PAD_VALUE).all()
    assert (img[12:-12] == 0).all()


@pytest.mark.parametrize("size", [(1280, 720), (800, 600), (300, 180)])
def test_content_lands_where_points_map(size: tuple[int, int]) -> None:
    w, h = size
    frame = np.zeros((h, w, 3), np.uint8)
    p = np.array([w * 0.37, h * 0.61])
    ys, xs = np.mgrid[0:h, 0:w]
    blob = np.exp(-((xs - p[0]) ** 2 + (ys - p[1]) ** 2) / (2 * (w / 60) ** 2))
    frame[..., 1] = np.round(blob * 255).astype(np.uint8)
    img, box = letterbox_image(frame)
    g = img[..., 1].astype(np.float64)
    g[g == PAD_VALUE] = 0
    yy, xx = np.mgrid[0:INPUT_HEIGHT, 0:INPUT_WIDTH]
    centroid = np.array([(g * xx).sum(), (g * yy).sum()]) / g.sum()
    assert np.abs(centroid - to_letterbox(p, box)).max() < 0.25


def test_bad_frames_are_refused() -> None:
    with pytest.raises(LetterboxError, match="BGR"):
        letterbox_image(np.zeros((10, 10), np.uint8))
    with pytest.raises(LetterboxError, match="uint8"):
        letterbox_image(np.zeros((10, 10, 3), np.float32))
    with pytest.raises(LetterboxError, match="positive"):
        letterbox_params((0, 10))
    box = letterbox_params((100, 50))
    with pytest.raises(LetterboxError, match="made for"):
        letterbox_image(np.zeros((60, 100, 3), np.uint8), box)


def test_network_input_is_rgb_chw_unit_range() -> None:
    img = np.zeros((1, INPUT_HEIGHT, INPUT_WIDTH, 3), np.uint8)
    img[..., 0] = 255  # blue in BGR
    x = to_input(img)
    assert x.shape == (1, 3, INPUT_HEIGHT, INPUT_WIDTH) and x.dtype == np.float32
    assert x[0, 2].min() == 1.0 and x[0, 0].max() == 0.0


def test_a_part_of_a_frame_is_read_at_the_scale_asked_when_that_is_smaller() -> None:
    box = letterbox_params((300, 100), (480, 160), most=1.5)
    assert box.scale == (1.5, 1.5) and box.resized == (450, 150) and box.paste == (15, 5)
    assert letterbox_params((300, 100), (480, 160), most=4.0).resized == (480, 160)  # the fit is smaller
    pts = np.array([[0.0, 0.0], [299.0, 99.0], [123.4, 56.7]])
    assert np.allclose(from_letterbox(to_letterbox(pts, box), box), pts)
    with pytest.raises(LetterboxError, match="more than 0"):
        letterbox_params((300, 100), most=0.0)
