"""Frame sources: folders with a corrupt file, an mp4v video, and a real local MJPEG server
that is stopped and restarted to check the live source reconnects instead of failing."""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import cv2
import numpy as np
import pytest

from vision.capture import (
    CaptureConfig,
    CaptureError,
    Frame,
    SourceKind,
    SourceState,
    check_image,
    open_source,
    parse_source,
)


def level_image(level: int, size: tuple[int, int] = (160, 120)) -> np.ndarray:
    """A frame whose grey level encodes a number (and a mark so it is not flat)."""
    img = np.full((size[1], size[0], 3), level, np.uint8)
    cv2.rectangle(img, (10, 10), (40, 40), (255 - level, 80, 200), -1)
    return img


def wait_for(predicate: Callable[[], bool], what: str, limit: float = 30.0) -> None:
    """Poll until `predicate` holds; the limit only guards against a hang, it is not a speed test."""
    deadline = time.monotonic() + limit
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"gave up waiting for {what}")
        time.sleep(0.02)


# -- a real MJPEG server ---------------------------------------------------------------------


class MjpegServer:
    """`multipart/x-mixed-replace` JPEG frames on 127.0.0.1, in a thread; stoppable mid-stream."""

    def __init__(self, port: int = 0, fps: float = 40.0) -> None:
        stop = threading.Event()
        self.stop_event = stop
        self.sent = 0
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_GET(self) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "multipart/x-mixed-replace; boundary=cardframe")
                self.end_headers()
                try:
                    while not stop.is_set():
                        level = (owner.sent * 9) % 200 + 20
                        ok, buf = cv2.imencode(".jpg", level_image(level), [cv2.IMWRITE_JPEG_QUALITY, 90])
                        assert ok
                        data = buf.tobytes()
                        self.wfile.write(
                            b"--cardframe\r\nContent-Type: image/jpeg\r\n"
                            + f"Content-Length: {len(data)}\r\n\r\n".encode()
                            + data
                            + b"\r\n"
                        )
                        self.wfile.flush()
                        owner.sent += 1
                        stop.wait(1.0 / fps)
                except (BrokenPipeError, ConnectionResetError):
                    pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/stream.mjpg"

    def stop(self) -> None:
        self.stop_event.set()
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(timeout=5)


@pytest.fixture
def mjpeg() -> Iterator[MjpegServer]:
    server = MjpegServer()
    yield server
    server.stop()


FAST = CaptureConfig(initial_backoff_s=0.1, max_backoff_s=0.4, open_timeout_s=3, read_timeout_s=2)


def test_mjpeg_stream_is_read_live_and_reconnects_after_the_server_returns(mjpeg: MjpegServer) -> None:
    with open_source(mjpeg.url, config=FAST) as source:
        assert source.live and source.kind == SourceKind.HTTP
        frames = [source.read(timeout=20) for _ in range(5)]
        assert all(isinstance(f, Frame) for f in frames)
        first = [f for f in frames if f is not None]
        assert first[0].image.shape == (120, 160, 3) and first[0].image.dtype == np.uint8
        assert [f.index for f in first] == sorted({f.index for f in first})  # strictly increasing
        assert all(b.time >= a.time for a, b in itertools.pairwise(first))
        assert source.status().state == SourceState.OK

        port = mjpeg.port
        mjpeg.stop()  # the stream drops
        wait_for(lambda: source.status().state == SourceState.RECONNECTING, "reconnecting")
        down = source.status()
        # The drop is reported; a reconnect attempt that already failed may have replaced it.
        assert down.last_error
        assert "stream dropped" in down.last_error or "cannot be opened" in down.last_error
        assert "reconnecting" in down.describe()

        back = MjpegServer(port=port)  # the camera server comes back on the same address
        try:
            wait_for(lambda: source.status().reconnects >= 1, "a reconnection")
            latest = first[-1].index
            frame = None
            while frame is None or frame.index <= latest:
                frame = source.read(timeout=20)
                assert frame is not None
            up = source.status()
            assert up.state == SourceState.OK and up.attempts == 0
            assert up.frames_read > len(first)
            # Every frame grabbed was either read or dropped for a newer one.
            assert up.frames_dropped <= up.frames_read
        finally:
            back.stop()
    assert source.status().state == SourceState.ENDED


def test_a_live_source_gives_up_when_told_and_iteration_ends(mjpeg: MjpegServer) -> None:
    config = CaptureConfig(
        initial_backoff_s=0.1, max_backoff_s=0.2, give_up_after_s=1.0, open_timeout_s=2, read_timeout_s=1
    )
    source = open_source(mjpeg.url, config=config)
    assert source.read(timeout=20) is not None
    mjpeg.stop()
    for _ in source:  # drains what is left, then ends instead of blocking forever
        pass
    status = source.status()
    assert status.state == SourceState.LOST and status.last_error
    source.close()


def test_an_address_with_nothing_behind_it_is_a_clear_error() -> None:
    server = MjpegServer()
    port = server.port
    server.stop()
    with pytest.raises(CaptureError, match=r"cannot be opened.*ffprobe"):
        open_source(f"http://127.0.0.1:{port}/none.mjpg", config=FAST)


# -- files and folders -----------------------------------------------------------------------


def write_folder(folder: Path) -> None:
    folder.mkdir()
    for i in range(6):
        cv2.imwrite(str(folder / f"frame_{i:03d}.jpg"), level_image(30 * i + 20))
    (folder / "frame_002.jpg").write_bytes(b"\xff\xd8 this is not a picture")  # corrupt
    data = (folder / "frame_004.jpg").read_bytes()
    (folder / "frame_004.jpg").write_bytes(data[: len(data) // 2])  # truncated transfer
    cv2.imwrite(str(folder / "frame_005.png"), level_image(200, size=(80, 60)))  # wrong size
    (folder / "notes.txt").write_text("ignored")


def test_folder_skips_and_counts_corrupt_frames(tmp_path: Path) -> None:
    folder = tmp_path / "frames"
    write_folder(folder)
    with open_source(folder, config=CaptureConfig(fps=10)) as source:
        assert not source.live and source.kind == SourceKind.FOLDER
        frames = list(source)
        status = source.status()
    assert [f.index for f in frames] == [0, 1, 3, 5]  # frame_005.jpg; 005.png is the wrong size
    assert [f.time for f in frames] == pytest.approx([0.0, 0.1, 0.3, 0.5])
    assert frames[1].image.mean() == pytest.approx(level_image(50).mean(), abs=3)
    assert status.frames_read == 4 and status.frames_corrupt == 3 and status.frames_dropped == 0
    assert status.state == SourceState.ENDED
    assert status.last_error is not None and "80x60" in status.last_error


def test_folder_replayed_live_counts_corrupt_frames_too(tmp_path: Path) -> None:
    folder = tmp_path / "frames"
    write_folder(folder)
    source = open_source(folder, live=True, config=CaptureConfig(pace_files=False))
    seen = []
    for frame in source:
        seen.append(frame.index)
        time.sleep(0.01)
    status = source.status()
    assert seen and seen[-1] == 5 and seen == sorted(set(seen))  # the newest always arrives
    assert status.frames_corrupt == 3
    assert len(seen) + status.frames_dropped == status.frames_read == 4
    assert status.state == SourceState.ENDED


def test_video_file_written_with_mp4v_reads_every_frame(tmp_path: Path) -> None:
    path = tmp_path / "table.mp4"
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter.fourcc(*"mp4v"), 25.0, (160, 120))
    assert writer.isOpened()
    for i in range(30):
        writer.write(level_image(20 + 6 * i))
    writer.release()
    with open_source(path) as source:
        assert source.kind == SourceKind.VIDEO and not source.live
        frames = list(source)
        assert source.status().fps == pytest.approx(25.0)
    assert [f.index for f in frames] == list(range(30))
    assert [f.time for f in frames] == pytest.approx([i / 25.0 for i in range(30)])
    levels = [float(np.median(f.image)) for f in frames]
    assert levels == pytest.approx([20 + 6 * i for i in range(30)], abs=4)
    # Replayed live with a slow reader: the newest frame wins, the rest are counted as dropped.
    source = open_source(path, live=True)
    got = []
    while (frame := source.read(timeout=20)) is not None:
        got.append(frame.index)
        time.sleep(0.08)
    status = source.status()
    source.close()
    assert got[-1] == 29 and got == sorted(set(got))
    assert len(got) + status.frames_dropped == status.frames_read == 30


def test_single_image_is_a_one_frame_source(tmp_path: Path) -> None:
    path = tmp_path / "still.png"
    cv2.imwrite(str(path), level_image(90))
    frames = list(open_source(path))
    assert len(frames) == 1 and frames[0].index == 0 and frames[0].source == str(path)


# -- errors and small pieces -----------------------------------------------------------------


def test_missing_and_unreadable_sources_say_what_to_try(tmp_path: Path) -> None:
    with pytest.raises(CaptureError, match=r"nowhere\.mp4: no such file or folder; give a camera index"):
        open_source(tmp_path / "nowhere.mp4")
    bogus = tmp_path / "bogus.mp4"
    bogus.write_bytes(b"not a video at all" * 10)
    with pytest.raises(CaptureError, match=r"bogus\.mp4: cannot be opened as a video; convert it"):
        open_source(bogus)
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(CaptureError, match="holds no images"):
        open_source(empty)
    with pytest.raises(CaptureError, match="unsupported scheme 'ftp'"):
        open_source("ftp://example.invalid/video")
    with pytest.raises(CaptureError, match="camera 97: cannot be opened; check it is plugged in"):
        open_source(97)
    assert issubclass(CaptureError, ValueError)


def test_parse_source_kinds_and_redaction() -> None:
    assert parse_source(0).kind == SourceKind.CAMERA and parse_source("2").target == 2
    assert parse_source("rtsp://cam.local/live").kind == SourceKind.RTSP
    spec = parse_source("http://user:secret@cam.local:8080/video")
    assert spec.kind == SourceKind.HTTP and "secret" not in spec.name and spec.default_live
    assert spec.target == "http://user:secret@cam.local:8080/video"
    with pytest.raises(CaptureError, match="0 or more"):
        parse_source(-1)


def test_check_image_converts_or_rejects() -> None:
    grey = np.zeros((4, 6), np.uint8)
    out, _ = check_image(grey, None)
    assert out is not None and out.shape == (4, 6, 3)
    out, _ = check_image(np.zeros((4, 6, 4), np.uint8), (6, 4))
    assert out is not None and out.shape == (4, 6, 3)
    out, _ = check_image(np.full((4, 6, 3), 65535, np.uint16), None)
    assert out is not None and out.dtype == np.uint8 and out.max() == 255
    assert check_image(None, None)[0] is None
    assert check_image(np.zeros((0, 0, 3), np.uint8), None)[1] == "empty frame"
    assert "6x4" in check_image(np.zeros((4, 6, 3), np.uint8), (8, 8))[1]
    assert "float32" in check_image(np.zeros((4, 6, 3), np.float32), None)[1]


def test_config_backoff_is_exponential_and_capped() -> None:
    cfg = CaptureConfig(initial_backoff_s=0.5, backoff_factor=2, max_backoff_s=8)
    assert [cfg.backoff(k) for k in range(1, 8)] == [0.5, 1, 2, 4, 8, 8, 8]
    with pytest.raises(CaptureError, match="max_backoff_s"):
        CaptureConfig(initial_backoff_s=2, max_backoff_s=1)
    with pytest.raises(CaptureError, match="fps"):
        CaptureConfig(fps=0)
