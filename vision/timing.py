"""Per-stage timing for the vision pipeline: how many milliseconds each named stage takes.

A `StageTimer` is shared by the stages of one pipeline (`with timer.stage("finder"): ...`)
and keeps a rolling window of the latest durations per stage, from which it reports the
median, 95th percentile, mean and worst case (`StageStats`). It is thread-safe so that a
server thread can read the figures while the vision thread records them; `cardtrack bench
pipeline` prints them. Durations come from `time.perf_counter`; nothing here is asserted by
tests, it is only reported.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np


class TimingError(ValueError):
    """A timer created or fed with values it cannot use."""


@dataclass(frozen=True, slots=True, kw_only=True)
class StageStats:
    """Figures for one stage over the rolling window, in milliseconds."""

    name: str
    count: int  # durations recorded since the timer was created or reset (not only the window)
    last_ms: float
    mean_ms: float
    p50_ms: float
    p95_ms: float
    max_ms: float

    def describe(self) -> str:
        """One aligned line: 'finder  p50 4.10 ms  p95 5.92 ms  max 8.00 ms  (n=300)'."""
        return (
            f"{self.name:<16} p50 {self.p50_ms:7.2f} ms  p95 {self.p95_ms:7.2f} ms  "
            f"max {self.max_ms:7.2f} ms  (n={self.count})"
        )


class StageTimer:
    """Rolling per-stage durations; `window` is how many recent calls each figure covers."""

    def __init__(self, *, window: int = 300) -> None:
        if window < 1:
            raise TimingError(f"StageTimer: 'window' must be at least 1, got {window}")
        self._window = window
        self._samples: dict[str, deque[float]] = {}
        self._counts: dict[str, int] = {}
        self._lock = threading.Lock()

    @property
    def window(self) -> int:
        return self._window

    @contextmanager
    def stage(self, name: str) -> Iterator[None]:
        """Time the body of a `with` block as one call of stage `name` (even if it raises)."""
        start = time.perf_counter()
        try:
            yield
        finally:
            self.record(name, (time.perf_counter() - start) * 1000.0)

    def record(self, name: str, milliseconds: float) -> None:
        """Add one duration measured elsewhere."""
        if not name:
            raise TimingError("StageTimer.record: the stage needs a name")
        if not (milliseconds >= 0.0 and np.isfinite(milliseconds)):
            raise TimingError(
                f"StageTimer.record: stage {name!r} got {milliseconds!r} ms; "
                "a duration must be a finite number of milliseconds, 0 or more"
            )
        with self._lock:
            samples = self._samples.get(name)
            if samples is None:
                samples = self._samples[name] = deque(maxlen=self._window)
                self._counts[name] = 0
            samples.append(float(milliseconds))
            self._counts[name] += 1

    def stats(self) -> dict[str, StageStats]:
        """Figures for every stage seen so far, in the order stages were first recorded."""
        with self._lock:
            snapshot = {name: (list(s), self._counts[name]) for name, s in self._samples.items()}
        out: dict[str, StageStats] = {}
        for name, (values, count) in snapshot.items():
            arr = np.asarray(values, np.float64)
            p50, p95 = np.percentile(arr, [50.0, 95.0])
            out[name] = StageStats(
                name=name,
                count=count,
                last_ms=float(arr[-1]),
                mean_ms=float(arr.mean()),
                p50_ms=float(p50),
                p95_ms=float(p95),
                max_ms=float(arr.max()),
            )
        return out

    def total_p50_ms(self) -> float:
        """Sum of the stage medians: a rough figure for one frame through every stage."""
        return sum(s.p50_ms for s in self.stats().values())

    def describe(self) -> str:
        """One line per stage, for logs and the bench command."""
        return "\n".join(s.describe() for s in self.stats().values())

    def reset(self) -> None:
        """Forget every recorded duration (e.g. after a warm-up)."""
        with self._lock:
            self._samples.clear()
            self._counts.clear()
