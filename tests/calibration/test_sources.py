"""Frame sources: an image, a folder (sampled evenly) or a video; clear errors otherwise."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest

from calibration.errors import CalibrationError
from calibration.sources import open_frames


def _frame(value: int) -> np.ndarray:
    return np.full((48, 64, 3), value, np.uint8)


def test_image_folder_and_video(tmp_path: Path) -> None:
    image = tmp_path / "one.png"
    cv2.imwrite(str(image), _frame(10))
    batch = open_frames(image)
    assert batch.kind == "image" and len(list(batch)) == 1

    folder = tmp_path / "frames"
    folder.mkdir()
    for k in range(10):
        cv2.imwrite(str(folder / f"f{k:02d}.png"), _frame(20 * k))
    (folder / "notes.txt").write_text("not an image")
    sampled = [int(f[0, 0, 0]) for f in open_frames(folder, max_frames=4)]
    assert sampled == [0, 60, 120, 180]

    video = tmp_path / "clip.avi"
    writer = cv2.VideoWriter(str(video), cv2.VideoWriter_fourcc(*"MJPG"), 10, (64, 48))
    for k in range(12):
        writer.write(_frame(20 * k))
    writer.release()
    batch = open_frames(video, max_frames=3)
    assert batch.kind == "video" and len(batch) == 3
    levels = [int(np.median(f)) for f in batch]
    assert len(levels) == 3 and levels[0] < 10 and levels[-1] > 200


def test_bad_sources_are_named(tmp_path: Path) -> None:
    with pytest.raises(CalibrationError, match="no such file or folder"):
        open_frames(tmp_path / "missing.mp4")
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(CalibrationError, match="holds no images"):
        open_frames(empty)
    junk = tmp_path / "junk.mp4"
    junk.write_bytes(b"not a video at all")
    with pytest.raises(CalibrationError, match=r"junk\.mp4"):
        list(open_frames(junk))
    broken = tmp_path / "broken.png"
    broken.write_bytes(b"nope")
    with pytest.raises(CalibrationError, match="cannot be read as an image"):
        list(open_frames(broken))
