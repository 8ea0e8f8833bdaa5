"""A small art pack built from the real Explorers scans, for the synthetic scene tests.

The scans stay in `../shared/decks/explorers-scans/`; `make_scan_pack` copies some of them,
reduced, into a temporary folder with a `pack.json` (never into the repository).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import cv2
import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
SCANS = REPO_ROOT.parent / "shared" / "decks" / "explorers-scans"

# File name → face id, as in GAMES.md section 2.
_RULES = (
    (re.compile(r"landscape_(?P<x>\w+)"), "landscape.{x}"),
    (re.compile(r"item_(?P<x>\w+)"), "item.{x}"),
    (re.compile(r"(?P<x>mob_back|mob_game_over)"), "{x}"),
    (re.compile(r"mob_(?P<x>\w+)"), "mob.{x}"),
    (re.compile(r"(?P<x>chest_\d\d|chest_filled|card_hunger|card_night)"), "{x}"),
)


def scan_face_id(stem: str) -> str:
    for rx, template in _RULES:
        m = rx.fullmatch(stem)
        if m:
            return template.format(**m.groupdict())
    raise AssertionError(f"no face id for scan {stem}")


def make_scan_pack(dst: Path, stems: list[str] | None = None, max_px: int = 360) -> Path:
    """An art pack of (some of) the Explorers scans, reduced to `max_px`, in `dst`."""
    if not SCANS.is_dir():
        pytest.skip(f"Explorers scans not found at {SCANS}")
    dst.mkdir(parents=True, exist_ok=True)
    (dst / "faces").mkdir(exist_ok=True)
    faces = {}
    for path in sorted(SCANS.rglob("*.jpg")):
        if stems is not None and path.stem not in stems:
            continue
        img = cv2.imread(str(path))
        k = max_px / max(img.shape[:2])
        img = cv2.resize(img, (round(img.shape[1] * k), round(img.shape[0] * k)), interpolation=cv2.INTER_AREA)
        rel = f"faces/{path.stem}.png"
        cv2.imwrite(str(dst / rel), img)
        faces[scan_face_id(path.stem)] = rel
    manifest = {"schema": 1, "game": "minecraft-explorers", "name": "explorers scans (test)",
                "source": "imported", "card_size_mm": [59, 91], "faces": faces}
    (dst / "pack.json").write_text(json.dumps(manifest), encoding="utf-8")
    return dst


TEST_STEMS = [
    "mob_back", "mob_zombie", "mob_creeper", "chest_filled", "chest_01", "item_torch",
    "item_bread", "landscape_woods", "landscape_mineshaft", "card_night",
]
