"""Fixtures for the synthetic scene tests: a small art pack built from the real Explorers scans
(`scan_pack.py`; the scans are never copied into the repository)."""

from __future__ import annotations

from pathlib import Path

import pytest
from scan_pack import TEST_STEMS, make_scan_pack


@pytest.fixture(scope="session")
def scan_pack(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_scan_pack(tmp_path_factory.mktemp("scanpack"), TEST_STEMS)
