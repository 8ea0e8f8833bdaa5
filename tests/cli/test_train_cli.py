"""`cardtrack train identifier` options that shape the training crops, `cardtrack train
finder`'s learning rate and starting model, and `cardtrack train corners`' visibility floor are
refused when out of range or missing (the training itself needs torch and is tested beside
each model)."""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

import pytest

from cardtrack.cli import main


def test_edge_slip_objects_neighbours_and_min_width_must_be_in_range() -> None:
    for argv, flag in ((["--edge-slip", "1.5"], "--edge-slip"), (["--objects", "-0.1"], "--objects"),
                       (["--neighbours", "2"], "--neighbours"), (["--min-width", "0"], "--min-width")):
        err = io.StringIO()
        with contextlib.redirect_stderr(err), pytest.raises(SystemExit) as exit_info:
            main(["train", "identifier", *argv])
        assert exit_info.value.code == 2 and flag in err.getvalue()


def test_the_finder_s_learning_rate_must_be_above_zero() -> None:
    for rate in ("0", "-1e-3", "fast"):
        err = io.StringIO()
        with contextlib.redirect_stderr(err), pytest.raises(SystemExit) as exit_info:
            main(["train", "finder", "--lr", rate])
        assert exit_info.value.code == 2 and "--lr" in err.getvalue()


def test_the_finder_s_starting_model_must_exist(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    from vision.train.finder import render_shard

    render_shard(tmp_path / "data-seed5", seed=5, shard=0, count=1, designs=4)
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        code = main(["train", "finder", "--work", str(tmp_path), "--data-seed", "5", "--shards", "0",
                     "--tables", "0", "--steps", "1", "--quiet", "--init", str(tmp_path / "gone.onnx"),
                     "--out", str(tmp_path / "out.onnx")])
    assert code != 0 and "gone.onnx: no such file" in err.getvalue()
    assert not (tmp_path / "out.onnx").exists()


def test_the_corner_refiner_s_visibility_floor_must_be_one_its_shards_keep(tmp_path: Path) -> None:
    err = io.StringIO()
    with contextlib.redirect_stderr(err), pytest.raises(SystemExit) as exit_info:
        main(["train", "corners", "--min-visible", "1.5"])
    assert exit_info.value.code == 2 and "--min-visible" in err.getvalue()
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        code = main(["train", "corners", "--work", str(tmp_path), "--shards", "3", "--min-visible", "0.1",
                     "--quiet", "--out", str(tmp_path / "out.onnx")])
    assert code == 2 and "--min-visible" in err.getvalue() and "no card less than 0.2 visible" in err.getvalue()
    assert not list(tmp_path.iterdir()), "refused before any shard is rendered"
