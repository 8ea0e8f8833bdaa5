"""`cardtrack train identifier` options that shape the training crops: refused when out of range,
and carried into the training config (the training itself needs torch and is tested beside the
identifier)."""

from __future__ import annotations

import contextlib
import io

import pytest

from cardtrack.cli import build_parser, main


def test_edge_slip_and_min_width_must_be_in_range() -> None:
    for argv, flag in ((["--edge-slip", "1.5"], "--edge-slip"), (["--min-width", "0"], "--min-width")):
        err = io.StringIO()
        with contextlib.redirect_stderr(err), pytest.raises(SystemExit) as exit_info:
            main(["train", "identifier", *argv])
        assert exit_info.value.code == 2 and flag in err.getvalue()


def test_the_shipped_mix_is_the_default_and_the_model_before_is_an_option() -> None:
    # The defaults are what reproduces the shipped model (its card gives the command).
    args = build_parser().parse_args(["train", "identifier"])
    assert args.edge_slip == 0.3 and args.min_width == 24
    args = build_parser().parse_args(["train", "identifier", "--edge-slip", "0", "--min-width", "40"])
    assert args.edge_slip == 0.0 and args.min_width == 40
