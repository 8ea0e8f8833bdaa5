"""`cardtrack demo` as a user runs it: the bundled footage through the pipeline and the server,
the clips in order and looping, and the simulated players kept behind `--simulated`."""

from __future__ import annotations

import re
import threading
from pathlib import Path

import pytest

from cardtrack.cli import main
from cardtrack.commands.demo import (
    DemoClip,
    FootageFeed,
    bundled_clips,
    demo_clips,
    load_demo_clip,
)
from server.journal import Journal
from server.session import Session, journal_chain
from vision.synth.truth import load_truth

REPO = Path(__file__).resolve().parents[2]
TWO_PLAYER = REPO / "datasets" / "footage" / "mattel-2p-tnt-endgame"
THREE_PLAYER = REPO / "datasets" / "footage" / "mattel-3p-creeper-endgame"


@pytest.fixture(scope="module")
def clips() -> list[DemoClip]:
    return demo_clips()


def test_once_reads_a_clip_with_the_models_and_prints_the_scores_beside_the_truth(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    journal = tmp_path / "demo.sqlite"
    argv = ["demo", "--once", "--fast", "--port", "0", "--frames", "160", "--clip", str(TWO_PLAYER),
            "--journal", str(journal)]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "/overlay" in out and "/console" in out
    assert "synthetic" in out and "rendered" in out  # the user is told what they watch
    total = len(load_truth(TWO_PLAYER / "truth.json.gz").frames)
    found = re.search(rf"mattel-2p-tnt-endgame: 160 frames read \(the first 160 of {total}\), "
                      r"(\d+) moves read \(truth: 2\)", out)
    assert found, out
    assert re.search(r"final scores read:  \[\d+, \d+\]", out)
    assert "final scores truth: [24, 18] (at the end of the whole clip)" in out
    # The clip's game is on record: a new 2-player game from the clip's deal, moves read by vision.
    session = Session.start(journal_path=journal, game="minecraft-card-game", players=2)
    snap = session.snapshot
    session.close()
    assert snap.players == 2 and len(journal_chain(journal)) == 2
    assert len(snap.moves) == int(found[1]) >= 1
    assert {m.source for m in snap.moves} == {"vision"}
    with Journal.open(journal_chain(journal)[-1]) as recorded:  # the clip's deal, not a random one
        assert recorded.header.setup == {k: list(v) for k, v in load_demo_clip(TWO_PLAYER).setup.items()}


def test_default_mode_plays_the_bundled_clips_two_players_first(
    capsys: pytest.CaptureFixture[str], clips: list[DemoClip]
) -> None:
    assert bundled_clips() == [TWO_PLAYER, THREE_PLAYER]
    assert [(c.name, c.players) for c in clips] == [
        ("mattel-2p-tnt-endgame", 2), ("mattel-3p-creeper-endgame", 3)
    ]
    assert main(["demo", "--once", "--fast", "--frames", "2", "--port", "0"]) == 0
    out = capsys.readouterr().out
    played = re.findall(r"^(mattel-\S+): 2 frames read", out, flags=re.MULTILINE)
    assert played == ["mattel-2p-tnt-endgame", "mattel-3p-creeper-endgame"]


def test_the_footage_loops_a_new_game_for_each_clip(tmp_path: Path, clips: list[DemoClip]) -> None:
    journal = tmp_path / "loop.sqlite"
    session = Session.start(journal_path=journal, game="minecraft-card-game", players=2)
    feed = FootageFeed(clips, realtime=False, rounds=2, pause_s=0.01, max_frames=2)
    feed.run(session, threading.Event())
    session.close()
    assert [r.clip for r in feed.results] == [c.name for c in clips] * 2
    assert [r.frames_read for r in feed.results] == [2, 2, 2, 2]
    games = journal_chain(journal)
    assert len(games) == 5  # the session's first game, then one per clip played
    assert [r.journal for r in feed.results] == [str(p) for p in games[1:]]
    players = []
    for path in games[1:]:
        s = Session.start(journal_path=path, game="minecraft-card-game", players=2)
        players.append(s.snapshot.players)
        s.close()
    assert players == [2, 3, 2, 3]


def test_a_stopped_loop_ends_without_a_result(clips: list[DemoClip], tmp_path: Path) -> None:
    session = Session.start(journal_path=tmp_path / "j.sqlite", game="minecraft-card-game", players=2)
    stop = threading.Event()
    stop.set()
    feed = FootageFeed(clips, realtime=False, pause_s=0, max_frames=2)
    feed.run(session, stop)  # returns at once: loops only until stopped
    session.close()
    assert feed.results == []


def test_simulated_players_still_serve_one_game(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["demo", "--simulated", "--once", "--pace", "0", "--players", "2", "--seed", "3",
            "--port", "0"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "Simulated players" in out
    assert "final scores: [" in out and ("winner: " in out or "no winner" in out)


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["--pace", "0"], "--pace: options of the simulated players; add --simulated"),
        (["--players", "2"], "--players: options of the simulated players"),
        (["--simulated", "--frames", "3"], "--frames: options of the footage demo"),
        (["--narrate", "--clip", "x"], "--clip: options of the footage demo; leave out --narrate"),
        (["--simulated", "--narrate"], "pick one"),
        (["--frames", "0"], "--frames: must be at least 1"),
    ],
)
def test_options_of_another_mode_are_one_clear_error(
    argv: list[str], says: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["demo", *argv]) == 2
    err = capsys.readouterr().err
    assert says in err and "Traceback" not in err


def test_a_folder_without_a_clip_is_one_clear_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["demo", "--clip", str(tmp_path), "--port", "0"]) == 2
    err = capsys.readouterr().err
    assert str(tmp_path) in err and "truth" in err
