"""Frames for calibration from an image file, a folder of images or a video file.

`open_frames(path, max_frames)` picks the reader from what the path is and returns a
`FrameBatch`: an iterable of BGR frames with a length hint for progress bars. A folder is
read in name order and a long video is sampled evenly, so `max_frames` frames always cover
the whole recording. Anything that cannot be read raises `CalibrationError` naming the path.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

from calibration.errors import CalibrationError

IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".bmp", ".tif", ".tiff", ".webp")


def read_image(path: Path) -> np.ndarray:
    """One BGR image; `CalibrationError` if the file is missing or not an image."""
    if not path.is_file():
        raise CalibrationError(f"{path}: no such image file")
    image = cv2.imread(str(path), cv2.IMREAD_COLOR)
    if image is None:
        raise CalibrationError(f"{path}: cannot be read as an image (png, jpg, bmp, tif, webp)")
    return image


@dataclass(frozen=True, slots=True, kw_only=True)
class FrameBatch:
    """Frames from one source: `len()` is the number that will be yielded (at most)."""

    path: Path
    kind: str  # "image", "folder" or "video"
    count: int
    max_frames: int

    def __len__(self) -> int:
        return min(self.count, self.max_frames)

    def __iter__(self) -> Iterator[np.ndarray]:
        if self.kind == "image":
            yield read_image(self.path)
        elif self.kind == "folder":
            for file in _sample(_folder_images(self.path), self.max_frames):
                yield read_image(file)
        else:
            yield from _video_frames(self.path, self.count, self.max_frames)

    def describe(self) -> str:
        """E.g. 'video table.mp4 (30 of 412 frames)'."""
        return f"{self.kind} {self.path} ({len(self)} of {self.count} frames)"


def _folder_images(folder: Path) -> list[Path]:
    return sorted(p for p in folder.iterdir() if p.is_file() and p.suffix.lower() in IMAGE_SUFFIXES)


def _sample(items: list[Path], k: int) -> list[Path]:
    if len(items) <= k:
        return items
    picks = np.linspace(0, len(items) - 1, k).round().astype(int)
    return [items[i] for i in picks]


def _video_frames(path: Path, count: int, max_frames: int) -> Iterator[np.ndarray]:
    capture = cv2.VideoCapture(str(path))
    try:
        if not capture.isOpened():
            raise CalibrationError(f"{path}: cannot be opened as a video")
        wanted = set(np.linspace(0, max(count - 1, 0), min(count, max_frames)).round().astype(int).tolist()) \
            if count > max_frames else None
        index = yielded = 0
        while yielded < max_frames:
            ok, frame = capture.read()
            if not ok:
                break
            if wanted is None or index in wanted:
                yielded += 1
                yield frame
            index += 1
        if yielded == 0:
            raise CalibrationError(f"{path}: the video has no readable frames")
    finally:
        capture.release()


def open_frames(path: Path | str, max_frames: int = 30) -> FrameBatch:
    """A `FrameBatch` for an image file, a folder of images or a video file."""
    path = Path(path)
    if max_frames < 1:
        raise CalibrationError(f"--max-frames must be at least 1, got {max_frames}")
    if not path.exists():
        raise CalibrationError(f"{path}: no such file or folder (give an image, a folder of images or a video)")
    if path.is_dir():
        images = _folder_images(path)
        if not images:
            raise CalibrationError(
                f"{path}: the folder holds no images ({', '.join(IMAGE_SUFFIXES)})"
            )
        return FrameBatch(path=path, kind="folder", count=len(images), max_frames=max_frames)
    if path.suffix.lower() in IMAGE_SUFFIXES:
        return FrameBatch(path=path, kind="image", count=1, max_frames=max_frames)
    capture = cv2.VideoCapture(str(path))
    try:
        if not capture.isOpened():
            raise CalibrationError(
                f"{path}: not an image ({', '.join(IMAGE_SUFFIXES)}) and cannot be opened as a video"
            )
        count = int(capture.get(cv2.CAP_PROP_FRAME_COUNT))
    finally:
        capture.release()
    return FrameBatch(path=path, kind="video", count=max(count, 1), max_frames=max_frames)
