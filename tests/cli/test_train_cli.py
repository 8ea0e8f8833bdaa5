"""`cardtrack train identifier` options that shape the training crops are refused when out of
range (the training itself needs torch and is tested beside the identifier)."""

from __future__ import annotations

import contextlib
import io

import pytest

from cardtrack.cli import main


def test_edge_slip_objects_neighbours_and_min_width_must_be_in_range() -> None:
    for argv, flag in ((["--edge-slip", "1.5"], "--edge-slip"), (["--objects", "-0.1"], "--objects"),
                       (["--neighbours", "2"], "--neighbours"), (["--min-width", "0"], "--min-width")):
        err = io.StringIO()
        with contextlib.redirect_stderr(err), pytest.raises(SystemExit) as exit_info:
            main(["train", "identifier", *argv])
        assert exit_info.value.code == 2 and flag in err.getvalue()
