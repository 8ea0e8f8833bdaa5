"""What the page tests share: Debian's chromium, its flags, the wait limit and screenshots."""

from __future__ import annotations

from pathlib import Path
from typing import Any

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]
SHOTS = Path(__file__).parent / "screenshots"
WAIT_MS = 15_000


def shot(page: Any, name: str, **kwargs: Any) -> bytes:
    """Save a screenshot of `page` under tests/server/screenshots/ and return its bytes."""
    SHOTS.mkdir(exist_ok=True)
    return page.screenshot(path=str(SHOTS / name), **kwargs)  # type: ignore[no-any-return]
