"""Frame sources: a webcam, a video file, an image folder, an HTTP MJPEG or RTSP stream.

`open_source(spec, live=...)` turns what the user typed (`0`, `table.mp4`, `frames/`,
`http://host:8080/video`, `rtsp://host/stream`) into a `FrameSource` that yields `Frame`s:
index, time in seconds, a BGR uint8 image and the source's name. A file or folder is read in
order, nothing dropped, and a frame's time is its index divided by the frame rate, so offline
runs are deterministic. A live source (camera or URL) runs a grab thread that keeps only the
newest frame: a consumer that falls behind gets the latest picture and the frames it missed
are counted as dropped, so latency never grows. When a camera is unplugged or a stream drops,
the thread reopens it with exponential backoff (capped) and reports it through
`SourceStatus` (ok / reconnecting / lost / ended) instead of raising. A corrupt frame (not
decodable, empty, wrong size) is skipped and counted. Paths that do not exist or cannot be
opened raise `CaptureError` naming the path and what to try.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from types import TracebackType
from typing import Protocol

import cv2
import numpy as np

IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".bmp", ".tif", ".tiff", ".webp")
DEFAULT_FPS = 30.0
_URL = re.compile(r"^(?P<scheme>[a-zA-Z][a-zA-Z0-9+.-]*)://")
_SPEC_HELP = (
    "give a camera index (0), a video file, a folder of images, "
    "an http(s):// MJPEG URL or an rtsp:// URL"
)


class CaptureError(ValueError):
    """A source that does not exist or cannot be opened; the message says what to try."""


class SourceKind(StrEnum):
    """Where frames come from."""

    CAMERA = "camera"
    VIDEO = "video"
    FOLDER = "folder"
    IMAGE = "image"
    HTTP = "http"
    RTSP = "rtsp"


class SourceState(StrEnum):
    """Health of a source, as the status object reports it.

    `ok`: frames are arriving. `reconnecting`: the camera or stream dropped and is being
    reopened with backoff. `lost`: no frame for `CaptureConfig.lost_after_s` (retries go on at
    the capped interval unless `give_up_after_s` ran out). `ended`: a file or folder was read
    to its end, or the source was closed.
    """

    OK = "ok"
    RECONNECTING = "reconnecting"
    LOST = "lost"
    ENDED = "ended"


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class Frame:
    """One picture: `index` counts frames from the source's start (gaps are dropped or corrupt
    frames), `time` is in seconds (monotonic clock when grabbed live; index / fps for files)."""

    index: int
    time: float
    image: np.ndarray  # (h, w, 3) uint8 BGR
    source: str


@dataclass(frozen=True, slots=True, kw_only=True)
class SourceStatus:
    """What a source has done so far; cheap to ask for at any time, from any thread."""

    name: str
    kind: SourceKind
    live: bool
    state: SourceState
    frames_read: int  # good frames delivered to the source (live: grabbed, before dropping)
    frames_dropped: int  # live only: replaced by a newer frame before anyone read them
    frames_corrupt: int  # skipped: not decodable, empty, wrong shape or size
    reconnects: int  # successful reopenings after a drop
    attempts: int  # failed opening attempts in the current outage (0 when ok)
    last_error: str | None
    since: float  # monotonic time of the latest state change
    fps: float | None  # frame rate the source announces (files: used for `Frame.time`)

    def describe(self) -> str:
        """One line for logs and the console."""
        text = (
            f"{self.kind} {self.name}: {self.state}, {self.frames_read} read, "
            f"{self.frames_dropped} dropped, {self.frames_corrupt} corrupt"
        )
        if self.reconnects:
            text += f", {self.reconnects} reconnects"
        if self.state in (SourceState.RECONNECTING, SourceState.LOST) and self.last_error:
            text += f" (attempt {self.attempts}: {self.last_error})"
        return text


@dataclass(frozen=True, slots=True, kw_only=True)
class CaptureConfig:
    """How sources are read and how hard a live source tries to come back.

    Backoff: after a drop the first reopening waits `initial_backoff_s`, each failure multiplies
    the wait by `backoff_factor` up to `max_backoff_s` (short waits recover a glitch fast; the
    cap bounds how long a replugged camera stays dark). `lost_after_s` without a frame turns
    the state to `lost`; `give_up_after_s` (None: never) stops retrying for good. The FFmpeg
    timeouts bound how long one open or read of a URL may block. `max_corrupt_in_a_row`
    corrupt frames from a live source count as a drop and reopen it.
    """

    fps: float | None = None  # folders, single images, and videos that do not announce one
    initial_backoff_s: float = 0.5
    backoff_factor: float = 2.0
    max_backoff_s: float = 8.0
    lost_after_s: float = 30.0
    give_up_after_s: float | None = None
    open_timeout_s: float = 5.0
    read_timeout_s: float = 5.0
    max_corrupt_in_a_row: int = 30
    camera_size: tuple[int, int] | None = None  # (width, height) to request from a camera
    pace_files: bool = True  # live=True on a file: deliver frames at the file's frame rate

    def __post_init__(self) -> None:
        positive = {
            "initial_backoff_s": self.initial_backoff_s,
            "max_backoff_s": self.max_backoff_s,
            "lost_after_s": self.lost_after_s,
            "open_timeout_s": self.open_timeout_s,
            "read_timeout_s": self.read_timeout_s,
        }
        for name, value in positive.items():
            if not value > 0:
                raise CaptureError(f"CaptureConfig.{name}: must be more than 0 seconds, got {value}")
        if self.backoff_factor < 1.0:
            raise CaptureError(
                f"CaptureConfig.backoff_factor: must be 1 or more, got {self.backoff_factor}"
            )
        if self.max_backoff_s < self.initial_backoff_s:
            raise CaptureError("CaptureConfig.max_backoff_s: must not be below initial_backoff_s")
        if self.fps is not None and not 0 < self.fps <= 1000:
            raise CaptureError(f"CaptureConfig.fps: must lie in (0, 1000], got {self.fps}")
        if self.give_up_after_s is not None and not self.give_up_after_s > 0:
            raise CaptureError("CaptureConfig.give_up_after_s: must be more than 0 seconds or None")
        if self.max_corrupt_in_a_row < 1:
            raise CaptureError("CaptureConfig.max_corrupt_in_a_row: must be at least 1")

    def backoff(self, attempt: int) -> float:
        """Seconds to wait before opening attempt number `attempt` (1 = first retry)."""
        wait = self.initial_backoff_s * self.backoff_factor ** max(attempt - 1, 0)
        return min(wait, self.max_backoff_s)


@dataclass(frozen=True, slots=True, kw_only=True)
class SourceSpec:
    """A parsed source: its kind, what OpenCV or the folder reader opens, and a display name."""

    kind: SourceKind
    target: str | int
    name: str

    @property
    def default_live(self) -> bool:
        return self.kind in (SourceKind.CAMERA, SourceKind.HTTP, SourceKind.RTSP)


def _redact(url: str) -> str:
    """The URL without a password (names end up in logs and on the console)."""
    return re.sub(r"^([a-zA-Z][a-zA-Z0-9+.-]*://[^/@:]*):[^/@]*@", r"\1:***@", url)


def parse_source(spec: str | int | Path) -> SourceSpec:
    """What kind of source `spec` names; `CaptureError` if it names nothing that exists."""
    if isinstance(spec, bool):
        raise CaptureError(f"source {spec!r}: {_SPEC_HELP}")
    if isinstance(spec, int):
        if spec < 0:
            raise CaptureError(f"camera index {spec}: must be 0 or more")
        return SourceSpec(kind=SourceKind.CAMERA, target=spec, name=f"camera {spec}")
    text = str(spec).strip()
    if not text:
        raise CaptureError(f"empty source: {_SPEC_HELP}")
    if text.isdigit():
        return SourceSpec(kind=SourceKind.CAMERA, target=int(text), name=f"camera {int(text)}")
    match = _URL.match(text)
    if match:
        scheme = match["scheme"].lower()
        if scheme in ("http", "https"):
            return SourceSpec(kind=SourceKind.HTTP, target=text, name=_redact(text))
        if scheme in ("rtsp", "rtsps"):
            return SourceSpec(kind=SourceKind.RTSP, target=text, name=_redact(text))
        raise CaptureError(f"source {_redact(text)}: unsupported scheme {scheme!r}; {_SPEC_HELP}")
    path = Path(text).expanduser()
    if re.fullmatch(r"/dev/video\d+", text):
        if not path.exists():
            raise CaptureError(f"camera {text}: no such device; is the camera plugged in?")
        return SourceSpec(kind=SourceKind.CAMERA, target=text, name=f"camera {text}")
    if not path.exists():
        raise CaptureError(f"source {path}: no such file or folder; {_SPEC_HELP}")
    if path.is_dir():
        return SourceSpec(kind=SourceKind.FOLDER, target=str(path), name=str(path))
    if path.suffix.lower() in IMAGE_SUFFIXES:
        return SourceSpec(kind=SourceKind.IMAGE, target=str(path), name=str(path))
    return SourceSpec(kind=SourceKind.VIDEO, target=str(path), name=str(path))


# -- frame checks ---------------------------------------------------------------------------


def check_image(image: np.ndarray | None, size: tuple[int, int] | None) -> tuple[np.ndarray | None, str]:
    """A usable BGR uint8 image, or None and why not. Grey and BGRA are converted; `size`
    (width, height) is the size the source has delivered so far (None: any)."""
    if image is None or not isinstance(image, np.ndarray) or image.size == 0:
        return None, "empty frame"
    if image.dtype == np.uint16:
        image = (image // 257).astype(np.uint8)
    if image.dtype != np.uint8:
        return None, f"frame of dtype {image.dtype}, expected uint8"
    if image.ndim == 2:
        image = cv2.cvtColor(image, cv2.COLOR_GRAY2BGR)
    elif image.ndim == 3 and image.shape[2] == 4:
        image = cv2.cvtColor(image, cv2.COLOR_BGRA2BGR)
    elif image.ndim == 3 and image.shape[2] == 1:
        image = cv2.cvtColor(image, cv2.COLOR_GRAY2BGR)
    if image.ndim != 3 or image.shape[2] != 3:
        return None, f"frame of shape {image.shape}, expected (height, width, 3)"
    h, w = image.shape[:2]
    if size is not None and (w, h) != size:
        return None, f"frame of {w}x{h} in a {size[0]}x{size[1]} source"
    return image, ""


def decode_image_file(path: Path) -> tuple[np.ndarray | None, str]:
    """Read one image file; a JPEG without its end marker (truncated) counts as corrupt."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        return None, f"{path.name}: {exc.strerror or exc}"
    if path.suffix.lower() in (".jpg", ".jpeg") and b"\xff\xd9" not in data[-32:]:
        return None, f"{path.name}: truncated JPEG (no end marker)"
    image = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_UNCHANGED) if data else None
    if image is None:
        return None, f"{path.name}: not a decodable image"
    return image, ""


# -- readers: one open device, file or folder ------------------------------------------------


class _Reader(Protocol):
    fps: float | None

    def read(self) -> tuple[np.ndarray | None, str, bool]:
        """(image, why-not, ended): an image, or None with the reason; `ended` when no more
        frames can come from this opening (end of file, stream or device failure)."""
        ...

    def close(self) -> None: ...


class _FolderReader:
    """Image files in name order; a file that does not decode is reported, not raised."""

    def __init__(self, files: list[Path], fps: float | None) -> None:
        self._files = files
        self._next = 0
        self.fps = fps

    def read(self) -> tuple[np.ndarray | None, str, bool]:
        if self._next >= len(self._files):
            return None, "end of folder", True
        path = self._files[self._next]
        self._next += 1
        image, why = decode_image_file(path)
        return image, why, False

    def close(self) -> None:
        self._next = len(self._files)


class _CaptureReader:
    """An OpenCV `VideoCapture` on a camera, a video file or a URL."""

    def __init__(self, spec: SourceSpec, config: CaptureConfig) -> None:
        self._spec = spec
        if spec.kind in (SourceKind.HTTP, SourceKind.RTSP):
            params = [
                cv2.CAP_PROP_OPEN_TIMEOUT_MSEC, int(config.open_timeout_s * 1000),
                cv2.CAP_PROP_READ_TIMEOUT_MSEC, int(config.read_timeout_s * 1000),
            ]  # fmt: skip
            capture = cv2.VideoCapture(str(spec.target), cv2.CAP_FFMPEG, params)
        elif spec.kind == SourceKind.CAMERA:
            capture = cv2.VideoCapture(spec.target)
        else:
            capture = cv2.VideoCapture(str(spec.target), cv2.CAP_FFMPEG)
        if not capture.isOpened():
            capture.release()
            raise CaptureError(_open_failure(spec))
        if spec.kind == SourceKind.CAMERA:
            # Only the newest frame matters; a driver queue would add latency.
            capture.set(cv2.CAP_PROP_BUFFERSIZE, 1)
            if config.camera_size is not None:
                capture.set(cv2.CAP_PROP_FRAME_WIDTH, config.camera_size[0])
                capture.set(cv2.CAP_PROP_FRAME_HEIGHT, config.camera_size[1])
        fps = float(capture.get(cv2.CAP_PROP_FPS) or 0.0)
        self.fps = fps if np.isfinite(fps) and 0 < fps <= 1000 else None
        self._capture: cv2.VideoCapture | None = capture

    def read(self) -> tuple[np.ndarray | None, str, bool]:
        if self._capture is None:
            return None, "closed", True
        ok, image = self._capture.read()
        if not ok:
            what = "end of video" if self._spec.kind == SourceKind.VIDEO else "read failed"
            return None, what, True
        return image, "", False

    def close(self) -> None:
        if self._capture is not None:
            self._capture.release()
            self._capture = None


def _open_failure(spec: SourceSpec) -> str:
    if spec.kind == SourceKind.CAMERA:
        return (
            f"{spec.name}: cannot be opened; check it is plugged in and not used by another "
            "program, or try another index (0, 1, 2...)"
        )
    if spec.kind in (SourceKind.HTTP, SourceKind.RTSP):
        return (
            f"{spec.name}: cannot be opened; check the address in a browser or with "
            "`ffprobe URL`, and that the stream is MJPEG over HTTP or RTSP"
        )
    return (
        f"{spec.name}: cannot be opened as a video; convert it with "
        "`ffmpeg -i INPUT -c:v libx264 OUTPUT.mp4` or extract its frames into a folder"
    )


def _open_reader(spec: SourceSpec, config: CaptureConfig) -> _Reader:
    if spec.kind == SourceKind.FOLDER:
        folder = Path(str(spec.target))
        try:
            files = sorted(
                p for p in folder.iterdir() if p.is_file() and p.suffix.lower() in IMAGE_SUFFIXES
            )
        except OSError as exc:
            raise CaptureError(f"{folder}: cannot list the folder ({exc.strerror or exc})") from exc
        if not files:
            raise CaptureError(
                f"{folder}: holds no images ({', '.join(IMAGE_SUFFIXES)}); "
                "point at the folder with the frames, or at a video file"
            )
        return _FolderReader(files, config.fps)
    if spec.kind == SourceKind.IMAGE:
        return _FolderReader([Path(str(spec.target))], config.fps)
    return _CaptureReader(spec, config)


# -- sources ---------------------------------------------------------------------------------


class FrameSource:
    """Common interface: iterate for frames, `read(timeout)` for one, `status()`, `close()`."""

    def __init__(self, spec: SourceSpec, config: CaptureConfig, live: bool) -> None:
        self.spec = spec
        self.config = config
        self.live = live
        self._lock = threading.Lock()
        self._state = SourceState.OK
        self._since = time.monotonic()
        self._frames_read = 0
        self._frames_dropped = 0
        self._frames_corrupt = 0
        self._reconnects = 0
        self._attempts = 0
        self._last_error: str | None = None
        self._fps: float | None = None

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def kind(self) -> SourceKind:
        return self.spec.kind

    def status(self) -> SourceStatus:
        with self._lock:
            return SourceStatus(
                name=self.spec.name,
                kind=self.spec.kind,
                live=self.live,
                state=self._state,
                frames_read=self._frames_read,
                frames_dropped=self._frames_dropped,
                frames_corrupt=self._frames_corrupt,
                reconnects=self._reconnects,
                attempts=self._attempts,
                last_error=self._last_error,
                since=self._since,
                fps=self._fps,
            )

    def _set_state(self, state: SourceState) -> None:
        """Caller holds `_lock`."""
        if state != self._state:
            self._state = state
            self._since = time.monotonic()

    def read(self, timeout: float | None = None) -> Frame | None:
        """The next frame, or None at the end (or, for a live source, after `timeout` s)."""
        raise NotImplementedError

    def close(self) -> None:
        raise NotImplementedError

    def __iter__(self) -> Iterator[Frame]:
        """Frames until the source ends, gives up or is closed (blocks while reconnecting)."""
        while True:
            frame = self.read(timeout=None)
            if frame is None:
                return
            yield frame

    def __enter__(self) -> FrameSource:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.status().describe()}>"


class SequentialSource(FrameSource):
    """A file or folder read in order on the caller's thread: nothing is dropped, a frame's
    time is its index / fps. A camera or URL opened with `live=False` is read the same way
    (blocking, no reconnection, monotonic time)."""

    def __init__(self, spec: SourceSpec, config: CaptureConfig) -> None:
        FrameSource.__init__(self, spec, config, live=False)
        self._reader: _Reader | None = _open_reader(spec, config)
        self._fps = self._reader.fps or config.fps or (
            DEFAULT_FPS if spec.kind in (SourceKind.VIDEO, SourceKind.FOLDER, SourceKind.IMAGE) else None
        )
        self._index = 0
        self._size: tuple[int, int] | None = None
        self._timed_by_index = spec.kind in (SourceKind.VIDEO, SourceKind.FOLDER, SourceKind.IMAGE)

    def read(self, timeout: float | None = None) -> Frame | None:
        del timeout  # a sequential read never waits for anything but the disk
        while self._reader is not None:
            image, why, ended = self._reader.read()
            if ended:
                self.close()
                return None
            index = self._index
            self._index += 1
            image, bad = check_image(image, self._size) if image is not None else (None, why)
            if image is None:
                with self._lock:
                    self._frames_corrupt += 1
                    self._last_error = f"frame {index}: {bad}"
                continue
            self._size = (image.shape[1], image.shape[0])
            with self._lock:
                self._frames_read += 1
            stamp = index / self._fps if self._timed_by_index and self._fps else time.monotonic()
            return Frame(index=index, time=stamp, image=image, source=self.spec.name)
        return None

    def close(self) -> None:
        if self._reader is not None:
            self._reader.close()
            self._reader = None
        with self._lock:
            self._set_state(SourceState.ENDED)


class LiveSource(FrameSource):
    """A grab thread keeps only the newest frame; drops and outages are counted, reopened
    with backoff, and reported by `status()`; nothing here raises after opening."""

    def __init__(self, spec: SourceSpec, config: CaptureConfig) -> None:
        FrameSource.__init__(self, spec, config, live=True)
        reader = _open_reader(spec, config)  # the first opening raises: a typo must be seen
        self._fps = reader.fps or config.fps or None
        self._is_file = spec.kind in (SourceKind.VIDEO, SourceKind.FOLDER, SourceKind.IMAGE)
        if self._is_file and self._fps is None:
            self._fps = DEFAULT_FPS
        self._cond = threading.Condition(self._lock)
        self._latest: Frame | None = None
        self._finished = False
        self._stop = threading.Event()
        self._last_frame_at = time.monotonic()
        self._thread = threading.Thread(
            target=self._run, args=(reader,), name=f"capture {spec.name}", daemon=True
        )
        self._thread.start()

    # consumer side

    def read(self, timeout: float | None = None) -> Frame | None:
        """The newest frame not yet read; None if the source ended, or after `timeout` s."""
        with self._cond:
            self._cond.wait_for(lambda: self._latest is not None or self._finished, timeout)
            frame, self._latest = self._latest, None
            return frame

    def close(self) -> None:
        self._stop.set()
        with self._cond:
            self._finished = True
            self._set_state(SourceState.ENDED)
            self._cond.notify_all()
        if self._thread is not threading.current_thread():
            self._thread.join(timeout=self.config.read_timeout_s + self.config.open_timeout_s + 1.0)

    # grab thread

    def _publish(self, frame: Frame) -> None:
        with self._cond:
            if self._latest is not None:
                self._frames_dropped += 1
            self._latest = frame
            self._frames_read += 1
            self._attempts = 0
            self._set_state(SourceState.OK)
            self._last_frame_at = time.monotonic()
            self._cond.notify_all()

    def _fail(self, error: str) -> bool:
        """Note one failure; False when retries are over (give_up_after_s)."""
        now = time.monotonic()
        with self._cond:
            self._last_error = error
            silent = now - self._last_frame_at
            if self.config.give_up_after_s is not None and silent > self.config.give_up_after_s:
                self._set_state(SourceState.LOST)
                return False
            self._set_state(
                SourceState.LOST if silent > self.config.lost_after_s else SourceState.RECONNECTING
            )
            return True

    def _finish(self, state: SourceState) -> None:
        with self._cond:
            self._finished = True
            self._set_state(state)
            self._cond.notify_all()

    def _run(self, reader: _Reader | None) -> None:
        index = 0
        size: tuple[int, int] | None = None
        corrupt_run = 0
        started = time.monotonic()
        try:
            while not self._stop.is_set():
                if reader is None:
                    with self._cond:
                        self._attempts += 1
                        attempt = self._attempts
                    if self._stop.wait(self.config.backoff(attempt)):
                        break
                    try:
                        reader = _open_reader(self.spec, self.config)
                    except CaptureError as exc:
                        if not self._fail(str(exc)):
                            self._finish(SourceState.LOST)
                            return
                        continue
                    size, corrupt_run = None, 0  # a reopened camera may change resolution
                    with self._cond:
                        self._reconnects += 1
                image, why, ended = reader.read()
                if ended:
                    reader.close()
                    reader = None
                    if self._is_file:
                        self._finish(SourceState.ENDED)
                        return
                    if not self._fail(f"stream dropped ({why})"):
                        self._finish(SourceState.LOST)
                        return
                    continue
                frame_index = index
                index += 1
                image, bad = check_image(image, size) if image is not None else (None, why)
                if image is None:
                    corrupt_run += 1
                    with self._cond:
                        self._frames_corrupt += 1
                        self._last_error = f"frame {frame_index}: {bad}"
                    if corrupt_run >= self.config.max_corrupt_in_a_row:
                        reader.close()
                        reader = None
                        self._fail(f"{corrupt_run} corrupt frames in a row")
                    continue
                corrupt_run = 0
                size = (image.shape[1], image.shape[0])
                if self._is_file:
                    assert self._fps is not None
                    stamp = frame_index / self._fps
                    if self.config.pace_files and self._stop.wait(
                        max(0.0, started + stamp - time.monotonic())
                    ):
                        break
                else:
                    stamp = time.monotonic()
                self._publish(
                    Frame(index=frame_index, time=stamp, image=image, source=self.spec.name)
                )
        finally:
            if reader is not None:
                reader.close()
            self._finish(SourceState.ENDED if self._stop.is_set() else self.status().state)


def open_source(
    spec: str | int | Path, *, live: bool | None = None, config: CaptureConfig | None = None
) -> FrameSource:
    """Open a camera index, video file, image folder or URL.

    `live=None` picks by kind: cameras and URLs are live (grab thread, newest frame only,
    reconnection), files and folders are sequential. `live=True` on a file replays it in real
    time at its frame rate as a live source would deliver it; `live=False` on a camera or URL
    reads every frame in order on the caller's thread. Raises `CaptureError` if the source does
    not exist or its first opening fails.
    """
    parsed = parse_source(spec)
    cfg = config or CaptureConfig()
    is_live = parsed.default_live if live is None else live
    return LiveSource(parsed, cfg) if is_live else SequentialSource(parsed, cfg)
