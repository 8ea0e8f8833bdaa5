"""`cardtrack eval` as a user runs it: the bundled footage against the committed baseline,
the report files, shards and their merge, the baseline diff, bad input, and the models mode.

The bundled clips go through the shipped models once (module fixture, two processes); every
other check reuses that run's summary or runs a few frames through the truth stand-ins.
"""

from __future__ import annotations

import contextlib
import copy
import io
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from cardtrack.cli import main
from vision.synth.truth import load_truth

REPO = Path(__file__).resolve().parents[2]
FOOTAGE = REPO / "datasets" / "footage"
BASELINE = REPO / "datasets" / "baselines" / "bundled-footage.json"
CLIPS = ("mattel-2p-tnt-endgame", "mattel-3p-creeper-endgame")


def run_cli(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture(scope="module")
def bundled(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    report = tmp_path_factory.mktemp("eval") / "report"
    paths = sorted(str(p) for p in FOOTAGE.iterdir())
    code, out, err = run_cli(["eval", *paths, "--report", str(report), "--jobs", "2", "--quiet",
                              "--baseline", str(BASELINE)])
    return {"code": code, "out": out, "err": err, "report": report,
            "summary": json.loads((report / "summary.json").read_text(encoding="utf-8"))}


def test_the_bundled_footage_stays_within_the_committed_baseline(bundled: dict[str, Any]) -> None:
    assert bundled["code"] == 0, bundled["out"]
    assert "within the tolerance" in bundled["out"]
    notices = bundled["err"].splitlines()
    assert any(line.endswith("README.md: skipped, not a video, a clip folder or a frame folder") for line in notices)
    assert any("scripts: skipped" in line for line in notices)


def test_the_report_files_exist_and_parse(bundled: dict[str, Any]) -> None:
    report: Path = bundled["report"]
    summary = bundled["summary"]
    assert summary["version"] == 1 and summary["kind"] == "cardtrack-eval-summary"
    assert list(summary["clips"]) == list(CLIPS)
    for section in ("finder", "identifier", "tracked", "moves", "latency_frames", "final_state", "speed"):
        assert section in summary["overall"]
    assert summary["overall"]["moves"]["truth"] == 19
    assert summary["overall"]["finder"]["frames"] == sum(
        len(load_truth(FOOTAGE / c / "truth.json.gz").frames) for c in CLIPS)
    for plot in ("confusion.png", "latency.png", "recall-visible.png"):
        assert (report / "plots" / plot).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    text = (report / "report.md").read_text(encoding="utf-8")
    assert "| clip | frames | AP@0.5 |" in text and "](plots/latency.png)" in text
    for clip in summary["clips"].values():
        wrong = clip["move_list"]["missed"] + clip["move_list"]["spurious"]
        assert len(wrong) == clip["moves"]["missed"] + clip["moves"]["spurious"]
        for item in wrong:
            sheet = report / item["sheet"]
            assert sheet.read_bytes()[:2] == b"\xff\xd8"  # JPEG
            assert f"]({item['sheet']})" in text


def test_a_figure_outside_the_tolerance_fails_with_a_readable_diff(bundled: dict[str, Any], tmp_path: Path) -> None:
    baseline = copy.deepcopy(bundled["summary"])
    clip = baseline["clips"][CLIPS[0]]
    clip["moves"]["emitted"] += 3
    clip["finder"]["ap50"] = round(clip["finder"]["ap50"] + 0.05, 4)
    clip["speed"]["fps"] = 9999.0
    path = tmp_path / "baseline.json"
    path.write_text(json.dumps(baseline), encoding="utf-8")
    code, out, _ = run_cli(["eval", "merge", str(bundled["report"]), "--baseline", str(path)])
    assert code == 1
    assert f"{CLIPS[0]}: moves.emitted: baseline" in out and "(allowed ±1)" in out
    assert f"{CLIPS[0]}: finder.ap50: baseline" in out and "(allowed ±0.02)" in out
    assert "speed" not in out.split("outside the tolerance")[1]
    assert "--write-baseline datasets/baselines/bundled-footage.json" in out


def test_merged_shard_summaries_equal_the_whole_run(bundled: dict[str, Any], tmp_path: Path) -> None:
    summary = bundled["summary"]
    shards = []
    for k, name in enumerate(CLIPS):
        shard = {**summary, "clips": {name: summary["clips"][name]}, "shard": {"index": k, "count": 2}}
        path = tmp_path / f"shard{k}.json"
        path.write_text(json.dumps(shard), encoding="utf-8")
        shards.append(str(path))
    out_dir = tmp_path / "merged"
    code, out, _ = run_cli(["eval", "merge", *shards, "--report", str(out_dir), "--baseline", str(BASELINE)])
    assert code == 0, out
    merged = json.loads((out_dir / "summary.json").read_text(encoding="utf-8"))
    assert merged["overall"] == summary["overall"]
    assert merged["merged_from"] == shards
    code, _, err = run_cli(["eval", "merge", shards[0], shards[0]])
    assert code == 2 and "in both" in err


def test_a_shard_takes_every_nth_clip_and_says_so(tmp_path: Path) -> None:
    out_dir = tmp_path / "shard"
    code, _, err = run_cli(["eval", *sorted(str(p) for p in FOOTAGE.iterdir()), "--shard", "1/2", "--oracle",
                            "--frames", "20", "--jobs", "1", "--quiet", "--report", str(out_dir)])
    assert code == 0, err
    summary = json.loads((out_dir / "summary.json").read_text(encoding="utf-8"))
    assert summary["shard"] == {"index": 1, "count": 2}
    assert list(summary["clips"]) == [CLIPS[1]]
    clip = summary["clips"][CLIPS[1]]
    assert clip["frames"] == 20 and clip["cut_at_frame"] == 20 and clip["final_state"]["compared"] == 0
    assert summary["models"]["oracle"] is True


def test_no_footage_and_bad_truth_are_clear_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_cli(["eval", str(FOOTAGE / "README.md")])
    assert code == 2 and "no footage to evaluate" in err and "README.md: skipped" in err
    folder = tmp_path / "clip"
    folder.mkdir()
    (folder / "clip.mp4").write_bytes(b"")
    (folder / "truth.json").write_text(json.dumps({"truth_version": 1, "clip": {"game": "minecraft-card-game"},
                                                   "frames": []}))
    code, _, err = run_cli(["eval", str(folder), "--quiet"])
    assert code == 2
    assert str(folder / "truth.json") in err and "at $.clip" in err and "frame_size" in err
    with pytest.raises(SystemExit) as exit_:  # argparse refuses it before anything runs
        main(["eval", str(FOOTAGE / CLIPS[0]), "--identifier-inset", "0.6"])
    assert exit_.value.code == 2
    assert "--identifier-inset: expected a share of the crop from 0 to under 0.5" in capsys.readouterr().err


def test_modes_are_chosen_by_the_first_word_and_flags_must_fit_the_mode() -> None:
    code, _, err = run_cli(["eval", "models", str(FOOTAGE)])
    assert code == 2 and "./models" in err
    code, _, err = run_cli(["eval", str(FOOTAGE / CLIPS[0]), "--card", "models/finder.md"])
    assert code == 2 and "--card" in err
    code, _, err = run_cli(["eval", "models", "--only", "finder", "--per-turn", "3"])
    assert code == 2 and "--per-turn" in err
    code, _, err = run_cli(["eval", "merge"])
    assert code == 2 and "shard summaries" in err
    code, _, err = run_cli(["eval", "models", "--read-covered"])
    assert code == 2 and "--read-covered" in err
    code, _, err = run_cli(["eval", str(FOOTAGE / CLIPS[0]), "--oracle", "--read-covered"])
    assert code == 2 and "read_covered" in err


def test_eval_reads_covered_cards_when_asked_and_says_so_in_the_summary(tmp_path: Path) -> None:
    summaries = {}
    for on in (False, True):
        out_dir = tmp_path / str(on)
        code, _, err = run_cli(["eval", str(FOOTAGE / CLIPS[0]), "--frames", "40", "--quiet", "--no-sheets",
                                "--report", str(out_dir), *(["--read-covered"] if on else [])])
        assert code == 0, err
        summaries[on] = json.loads((out_dir / "summary.json").read_text(encoding="utf-8"))
    assert summaries[True]["models"]["read_covered"] is True and "read_covered" not in summaries[False]["models"]
    # The fanned players' cards are read again from their visible part: more crops answered.
    before, after = (summaries[k]["overall"]["identifier"] for k in (False, True))
    assert after["crops"] > before["crops"]
    assert after["crops"] - after["unknown"] > before["crops"] - before["unknown"]


def test_the_models_mode_runs_the_model_reports_without_torch(tmp_path: Path) -> None:
    script = (
        "import sys\n"
        "sys.modules['torch'] = None  # any import of torch now fails\n"
        "from cardtrack.cli import main\n"
        "import vision.train.evaluate, vision.art.enroll, cardtrack.commands.train  # the identifier's report\n"
        f"code = main(['eval', 'models', '--only', 'finder', '--scenes', '1', '--quiet', '--report', {str(tmp_path)!r}])\n"
        "sys.exit(code)\n"
    )
    done = subprocess.run([sys.executable, "-c", script], cwd=REPO, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "AP@0.5" in done.stdout
    assert "| metric | value | target |" in (tmp_path / "finder.md").read_text(encoding="utf-8")


def test_bench_identifier_times_whole_cards_and_covered_ones() -> None:
    code, out, _ = run_cli(["bench", "identifier", "--batch", "2", "--calls", "3"])
    assert code == 0
    report = json.loads(out)
    assert report["benchmark"] == "identifier" and report["gallery_entries"] == 142
    assert report["ms_per_card"]["total_p50"] > 0
    # The shipped model reads a fanned card from its visible part: timed with three masks.
    assert report["covered_card_ms"]["masks"] == 3 and report["covered_card_ms"]["p50"] > 0


def test_bench_pipeline_replays_a_clip_with_the_shared_code() -> None:
    code, out, _ = run_cli(["bench", "pipeline", "--clip", str(FOOTAGE / CLIPS[0]), "--oracle", "--frames", "30"])
    assert code == 0
    report = json.loads(out)
    assert report["frames"] == 30 and report["models"] == "truth stand-ins (--oracle)"
    assert report["ms_per_stage"]["find"]["calls"] == 30
    code, _, err = run_cli(["bench", "pipeline", "--clip", str(FOOTAGE / "scripts")])
    assert code == 2 and "no truth file" in err
    # The pipeline's reading options are those of `run` and `eval`, checked the same way.
    code, _, err = run_cli(["bench", "pipeline", "--clip", str(FOOTAGE / CLIPS[0]), "--oracle", "--read-covered"])
    assert code == 2 and "read_covered" in err and "stand-in" in err


def test_an_art_pack_is_the_gallery_and_one_for_another_game_is_refused(tmp_path: Path) -> None:
    from vision.art.pack import proxy_pack

    clip = str(FOOTAGE / CLIPS[0])
    own = proxy_pack("minecraft-card-game").root
    code, _, err = run_cli(["eval", clip, "--art", str(own), "--frames", "15", "--jobs", "1", "--quiet",
                            "--no-sheets", "--report", str(tmp_path / "r")])
    assert code == 0, err
    summary = json.loads((tmp_path / "r" / "summary.json").read_text(encoding="utf-8"))
    assert summary["models"]["art"].endswith(own.name)
    other = proxy_pack("angry-birds-power-cards").root
    code, _, err = run_cli(["eval", clip, "--art", str(other), "--frames", "5", "--jobs", "1", "--quiet"])
    assert code == 2
    assert "--art" in err and "'angry-birds-power-cards', not 'minecraft-card-game'" in err
