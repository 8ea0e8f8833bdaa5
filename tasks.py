#!/usr/bin/env python3
"""Set up and run cardtrack with nothing but Python 3.11: `python3 tasks.py demo|test`.

Each task creates `.venv` on first use and (re)installs the project whenever `pyproject.toml`
changed, so both commands are idempotent and work on a fresh clone.

  demo   the main job: a live game served on http://127.0.0.1:8765/ (Ctrl-C stops it)
  test   ruff, mypy (strict on engine/), import-linter contracts, then pytest
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
BIN = VENV / ("Scripts" if os.name == "nt" else "bin")
PY = BIN / "python"


def _run(*cmd: str | Path) -> None:
    print("+", " ".join(str(c) for c in cmd), flush=True)  # noqa: T201
    result = subprocess.run([str(c) for c in cmd], cwd=ROOT)
    if result.returncode:
        sys.exit(result.returncode)


def setup(extras: str) -> None:
    if sys.version_info[:2] != (3, 11):
        sys.exit(f"cardtrack needs Python 3.11 (this is {sys.version.split()[0]})")
    if not PY.exists():
        print(f"creating virtual environment in {VENV}", flush=True)  # noqa: T201
        venv.EnvBuilder(with_pip=True).create(VENV)
    digest = hashlib.sha256((ROOT / "pyproject.toml").read_bytes() + extras.encode()).hexdigest()
    stamp = VENV / ".cardtrack-installed"
    if stamp.exists() and stamp.read_text().strip() == digest:
        return
    _run(PY, "-m", "pip", "install", "--quiet", "--upgrade", "pip")
    _run(PY, "-m", "pip", "install", "--quiet", "-e", f".[{extras}]" if extras else ".")
    stamp.write_text(digest + "\n")


def demo(args: list[str]) -> None:
    setup("dev")
    _run(BIN / "cardtrack", "demo", *args)


def test(args: list[str]) -> None:
    setup("dev")
    _run(BIN / "ruff", "check", ".")
    _run(BIN / "mypy", "engine")
    _run(BIN / "lint-imports")
    _run(PY, "-m", "pytest", *args)


TASKS = {"demo": demo, "test": test}

if __name__ == "__main__":
    if len(sys.argv) < 2 or sys.argv[1] not in TASKS:
        sys.exit(__doc__)
    TASKS[sys.argv[1]](sys.argv[2:])
