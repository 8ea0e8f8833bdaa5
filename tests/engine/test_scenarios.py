"""The shipped scenario files pass, cover the Mattel game's rules, and broken ones fail loudly.

Every scenario under `datasets/scenarios/` (all games) is replayed and must match its
expectations. For `minecraft-card-game` the suite must name every warning code and every
option value somewhere. Broken scenario files, written into a temporary folder, must make
`cardtrack rules check` fail with exit code 1 (a rule expectation or a move that does not hold)
or 2 (a file that cannot be read as a scenario), with a diff that names the move and the
expectation.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from cardtrack.cli import main
from engine import Audience, MoveFormatError, get_game
from engine.games.minecraft_card_game import OPTIONS, Code
from engine.scenario import parse_scenario, run_scenario

REPO = Path(__file__).resolve().parents[2]
SCENARIOS = REPO / "datasets" / "scenarios"
MCG = "minecraft-card-game"
SUFFIXES = (".yaml", ".yml", ".json")
FILES = sorted(p for p in SCENARIOS.rglob("*") if p.suffix in SUFFIXES)


def _load(path: Path) -> Any:
    return yaml.safe_load(path.read_text(encoding="utf-8"))


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(SCENARIOS)))
def test_shipped_scenario_passes(path: Path) -> None:
    data = _load(path)
    assert data.get("name"), f"{path.name}: give the scenario a name"
    assert data.get("description"), f"{path.name}: give the scenario a one-line description"
    result = run_scenario(parse_scenario(data, str(path)))
    assert result.ok, "\n".join(result.mismatches)


def _mcg_documents() -> list[dict[str, Any]]:
    return [d for d in (_load(p) for p in FILES) if d.get("game") == MCG]


def test_mattel_suite_is_numbered_and_large_enough() -> None:
    files = sorted((SCENARIOS / MCG).glob("*.yaml"))
    assert len(files) >= 45
    numbers = [f.name.split("-", 1)[0] for f in files]
    assert all(n.isdigit() and len(n) == 3 for n in numbers), numbers
    assert len(set(numbers)) == len(numbers), "two scenarios share a number"


def test_mattel_suite_expects_every_warning_code() -> None:
    expected: set[str] = set()
    for doc in _mcg_documents():
        for move in doc.get("moves") or []:
            expected.update((move.get("expect") or {}).get("warnings", []))
        for codes in ((doc.get("expect") or {}).get("warnings") or {}).values():
            expected.update([codes] if isinstance(codes, str) else codes)
    missing = {c.value for c in Code} - expected
    assert not missing, f"no scenario expects {sorted(missing)}"


def test_mattel_suite_plays_every_option_value() -> None:
    played: set[tuple[str, str]] = set()
    for doc in _mcg_documents():
        given = {str(k).replace("-", "_"): str(v) for k, v in (doc.get("options") or {}).items()}
        for spec in OPTIONS:
            played.add((spec.name, given.get(spec.name, str(spec.default))))
    missing = {(s.name, str(c)) for s in OPTIONS for c in s.choices} - played
    assert not missing, f"no scenario plays {sorted(missing)}"


SETUP = {
    "resource-pile-1": ["wood-1", "diamond-3", "tnt"],
    "resource-pile-2": ["iron-1", "wood-2"],
    "craft-pile-1": ["wood-hoe", "iron-axe"],
    "set-aside": "diamond-hoe",
    "player-1": ["gold-2"],
}


def test_all_face_up_shows_whole_piles_top_card_only_the_tops() -> None:
    game = get_game(MCG)
    top = game.initial_state(players=2, setup=SETUP)
    up = game.initial_state(players=2, setup=SETUP, options={"setup": "all-face-up"})
    for audience in (Audience.PUBLIC, Audience.PLAYER):
        assert game.view(top, audience, 1)["zones"]["resource-pile-1"] == ["wood-1", None, None]
        assert game.view(up, audience, 1)["zones"]["resource-pile-1"] == [
            "wood-1",
            "diamond-3",
            "tnt",
        ]
        # Craft piles show only their top in both setups; open areas are always visible.
        for state in (top, up):
            view = game.view(state, audience, 1)
            assert view["zones"]["craft-pile-1"] == ["wood-hoe", None]
            assert view["zones"]["player-1"] == ["gold-2"]
    # The operator sees the engine's whole belief either way.
    assert game.view(top, Audience.OPERATOR)["zones"]["resource-pile-1"] == [
        "wood-1",
        "diamond-3",
        "tnt",
    ]


def test_reveal_is_a_mapping_and_round_trips() -> None:
    game = get_game(MCG)
    data = {"player": 1, "move": "mine", "pile": 2, "reveal": {"resource-pile-2": "gold-3"}}
    move = game.parse_move(data)
    assert move.reveal == (("resource-pile-2", "gold-3"),)
    assert game.move_to_dict(move) == data
    with pytest.raises(MoveFormatError, match="reveal"):
        game.parse_move({**data, "reveal": {"resource-pile-2": 3}})


# -- broken scenarios fail `cardtrack rules check` ------------------------------------------

GOOD: dict[str, Any] = {
    "name": "two mines and a third",
    "game": MCG,
    "players": 2,
    "setup": {
        "resource-pile-1": ["wood-2", "stone-1", "iron-1"],
        "resource-pile-2": ["wood-1", "gold-1"],
        "craft-pile-1": ["wood-hoe"],
        "set-aside": "diamond-hoe",
    },
    "moves": [
        {"player": 1, "move": "mine", "pile": 1},
        {"player": 1, "move": "mine", "pile": 1},
        {"player": 1, "move": "mine", "pile": 2, "expect": {"warnings": ["too-many-actions"]}},
    ],
    "expect": {"scores": [0, 0], "zones": {"player-1": ["wood-2", "stone-1", "wood-1"]}},
}


def _check(tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str) -> tuple[int, str]:
    path = tmp_path / "case.yaml"
    path.write_text(text, encoding="utf-8")
    code = main(["rules", "check", str(path)])
    captured = capsys.readouterr()
    return code, captured.out + captured.err


def _broken(**changes: Any) -> str:
    doc = yaml.safe_load(yaml.safe_dump(GOOD))
    for key, value in changes.items():
        doc[key] = value
    return yaml.safe_dump(doc, sort_keys=False)


def test_the_unbroken_scenario_passes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out = _check(tmp_path, capsys, _broken())
    assert code == 0, out
    assert "1 passed, 0 failed" in out


def test_a_wrong_expected_score_fails(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out = _check(tmp_path, capsys, _broken(expect={"scores": [6, 0]}))
    assert code == 1
    assert "FAIL" in out and "two mines and a third" in out
    assert "at the end: scores expected [6, 0], got [0, 0]" in out


def test_a_wrong_warning_fails(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    moves = [dict(m) for m in GOOD["moves"]]
    moves[2] = {"player": 1, "move": "mine", "pile": 2, "expect": {"warnings": ["out-of-turn"]}}
    code, out = _check(tmp_path, capsys, _broken(moves=moves))
    assert code == 1
    assert (
        "move 2 (player 1 mine pile=2): expected warnings ['out-of-turn'], "
        "got ['too-many-actions']" in out
    )
    # The engine's own explanation follows, so the reader sees why.
    assert "took action 3 of a turn that allows 2" in out


def test_a_missing_warning_fails(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    moves = [dict(m) for m in GOOD["moves"]]
    moves[2] = {"player": 1, "move": "mine", "pile": 2}
    code, out = _check(tmp_path, capsys, _broken(moves=moves))
    assert code == 1
    assert "move 2 (player 1 mine pile=2): expected warnings none, got ['too-many-actions']" in out


def test_a_malformed_move_fails_at_its_index(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    moves = [dict(m) for m in GOOD["moves"]]
    moves[1] = {"player": 1, "move": "mine"}
    code, out = _check(tmp_path, capsys, _broken(moves=moves))
    assert code == 1
    assert "move 1 (player 1 mine): move 'mine': missing field 'pile'" in out


def test_an_unknown_move_name_fails(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    moves = [{"player": 1, "move": "dig", "pile": 1}]
    code, out = _check(tmp_path, capsys, _broken(moves=moves, expect={}))
    assert code == 1
    assert "move 0 (player 1 dig pile=1): unknown move 'dig'" in out


def test_an_unknown_zone_in_the_expectation_fails(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out = _check(tmp_path, capsys, _broken(expect={"zones": {"resource-pile-9": []}}))
    assert code == 1
    assert "at the end: no zone 'resource-pile-9' in this game" in out


def test_a_wrong_zone_content_fails(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    expect = {"zones": {"resource-pile-1": ["stone-1"], "discard": {"count": 2}}}
    code, out = _check(tmp_path, capsys, _broken(expect=expect))
    assert code == 1
    assert "at the end: resource-pile-1 expected [stone-1], got [iron-1]" in out
    assert "at the end: discard expected 2 cards, got 0 []" in out


def test_an_unknown_zone_in_the_setup_is_malformed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    setup = {**GOOD["setup"], "resource-pile-6": ["wood-3"]}
    code, out = _check(tmp_path, capsys, _broken(setup=setup))
    assert code == 2
    assert "ERROR" in out and "unknown zone 'resource-pile-6'" in out


def test_an_unknown_expectation_field_is_malformed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out = _check(tmp_path, capsys, _broken(expect={"score": [0, 0]}))
    assert code == 2
    assert "expect: unknown field(s) score" in out


def test_a_bad_yaml_file_is_malformed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out = _check(tmp_path, capsys, "game: minecraft-card-game\nmoves: [\n  {player: 1\n")
    assert code == 2
    assert "case.yaml: not valid YAML/JSON at line" in out
    assert "0 passed, 0 failed, 1 malformed" in out


def test_one_broken_file_fails_a_folder_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "a-good.yaml").write_text(_broken(), encoding="utf-8")
    (tmp_path / "b-bad.yaml").write_text(_broken(expect={"current": 2}), encoding="utf-8")
    code = main(["rules", "check", str(tmp_path)])
    out = capsys.readouterr().out
    assert code == 1
    assert "at the end: current expected 2, got 1" in out
    assert "1 passed, 1 failed" in out
