"""`cardtrack deck import`: a CSV of a real Angry Birds deck becomes a catalog the engine plays.

The written file is a valid catalog; every bad row is refused with the line and column named;
and a folder named by `CARDTRACK_CATALOG_DIR` makes the engine (rules, deck list) use the
owner's deck instead of the built-in placeholder.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from cardtrack.cli import main
from engine.catalog import CATALOG_DIR_ENV, catalog_dirs, load_catalog_file, parse_catalog
from engine.games.angry_birds_power_cards import DeckImportError, catalog_from_csv

REPO = Path(__file__).resolve().parents[2]
GAME = "angry-birds-power-cards"
HEADER = "id,name,power,distance,aim,rarity,slingshot,part,material"
ROWS = [
    "red-a,Red,9,4,7,1,6,vertical,wood",
    "chuck-a,Chuck,3,8,2,2,5,vertical,wood",
    "bomb-a,Bomb,7,6,6,2,6,horizontal,wood",
    "king-a,King Pig,5,8,8,3,9,pig,",
]


def _csv(*rows: str, header: str = HEADER) -> str:
    return "\n".join([header, *rows]) + "\n"


def test_a_deck_csv_becomes_a_valid_catalog() -> None:
    doc = catalog_from_csv(_csv(*ROWS), "deck.csv")
    catalog = parse_catalog(doc, "deck.csv")
    assert catalog.game == GAME and catalog.total == 4 and not catalog.placeholder
    red = catalog.card("red-a")
    assert red.back == "back.wood-vertical" and red.front == "red-a"
    assert red.attrs["power"] == 9 and red.attrs["beam"] == "vertical"
    assert red.attrs["material"] == "wood"
    pig = catalog.card("king-a")
    assert pig.kind == "pig" and pig.back == "back.pig" and pig.attrs["slingshot"] == 9
    assert set(catalog.faces) == {
        "back.wood-vertical", "back.wood-horizontal", "back.pig",
        "red-a", "chuck-a", "bomb-a", "king-a",
    }


def test_columns_may_come_in_any_order_with_counts_and_aliases() -> None:
    text = "Part,ID,Name,Power,Distance,Aim,Rarity,Slingshot,Material,Count\n"
    text += "vertical,blue-a,Blues,1,2,3,1,4,ice,3\n"
    catalog = parse_catalog(catalog_from_csv(text, "x.csv"))
    assert catalog.total == 3 and catalog.card("blue-a").back == "back.ice-vertical"


@pytest.mark.parametrize(
    ("rows", "header", "message"),
    [
        (["red-a,Red,nine,4,7,1,6,vertical,wood"], HEADER,
         "deck.csv: line 2 column 'power': 'nine' is not a whole number"),
        ([ROWS[0], "chuck-a,Chuck,3,8,2,2,5,diagonal,wood"], HEADER,
         "deck.csv: line 3 column 'part': 'diagonal'"),
        (["king-a,King,5,8,8,3,9,pig,wood"], HEADER,
         "deck.csv: line 2 column 'material': a pig has no material"),
        (["red-a,Red,9,4,7,1,6,vertical,glass"], HEADER,
         "deck.csv: line 2 column 'material': 'glass'; use wood, stone, ice"),
        ([ROWS[0], ROWS[0]], HEADER,
         "deck.csv: line 3 column 'id': 'red-a' is already used on line 2"),
        (["Red A!,Red,9,4,7,1,6,vertical,wood"], HEADER,
         "deck.csv: line 2 column 'id': 'Red A!' is not a valid id"),
        (["red-a,Red,9,4,7,1,6,vertical"], HEADER, "deck.csv: line 2: 8 values for 9 columns"),
        (["red-a,Red,9,4,7,1,vertical,wood"], "id,name,power,distance,aim,rarity,part,material",
         "deck.csv: line 1: missing column(s) slingshot"),
        ([ROWS[0]], HEADER + ",colour", "deck.csv: line 1: unknown column(s) colour"),
        (["red-a,Red,9,4,7,1,600,vertical,wood"], HEADER,
         "deck.csv: line 2 column 'slingshot': 600 is outside 0-99"),
        ([], HEADER, "deck.csv: no card rows after the header line"),
    ],
)
def test_every_bad_row_names_its_line_and_column(
    rows: list[str], header: str, message: str
) -> None:
    with pytest.raises(DeckImportError) as info:
        catalog_from_csv(_csv(*rows, header=header), "deck.csv")
    assert message in str(info.value)


def test_the_cli_writes_the_file_and_reports_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src = tmp_path / "deck.csv"
    src.write_text(_csv(*ROWS), encoding="utf-8")
    out = tmp_path / "decks"
    out.mkdir()
    assert main(["deck", "import", str(src), "--game", GAME, "--out", str(out)]) == 0
    written = out / f"{GAME}.json"
    assert load_catalog_file(written).total == 4
    assert f"{CATALOG_DIR_ENV}={out}" in capsys.readouterr().out
    src.write_text(_csv("red-a,Red,9,4,x,1,6,vertical,wood"), encoding="utf-8")
    assert main(["deck", "import", str(src), "--game", GAME, "--out", str(out)]) == 2
    assert "line 2 column 'aim'" in capsys.readouterr().err
    assert main(["deck", "import", str(src), "--game", "minecraft-card-game",
                 "--out", str(out)]) == 2
    assert "no CSV deck import" in capsys.readouterr().err
    assert json.loads(written.read_text())["total"] == 4  # the failed runs wrote nothing


def test_catalog_dirs_put_the_owner_folders_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(CATALOG_DIR_ENV, os.pathsep.join([str(tmp_path / "a"), str(tmp_path / "b")]))
    dirs = catalog_dirs()
    assert dirs[:2] == (tmp_path / "a", tmp_path / "b") and len(dirs) == 3


def test_the_engine_plays_an_imported_deck(tmp_path: Path) -> None:
    (tmp_path / f"{GAME}.json").write_text(
        json.dumps(catalog_from_csv(_csv(*ROWS), "deck.csv")), encoding="utf-8"
    )
    scenario = tmp_path / "round.yaml"
    scenario.write_text(
        "name: owner deck\ndescription: a round with the imported cards\n"
        f"game: {GAME}\nplayers: 2\n"
        "setup: {deck-1: [red-a, bomb-a], deck-2: [chuck-a, king-a]}\n"
        "moves:\n  - {player: 1, move: name-stat, stat: power}\n"
        "  - {player: 1, move: play, card: red-a}\n  - {player: 2, move: play, card: chuck-a}\n"
        "  - {player: 1, move: take}\n"
        "  - {player: 1, move: build, cards: [red-a, chuck-a]}\n"
        "expect: {zones: {structure-1: [red-a, chuck-a], deck-1: [bomb-a]}}\n",
        encoding="utf-8",
    )
    env = {**os.environ, CATALOG_DIR_ENV: str(tmp_path)}
    code = (
        "import sys; from cardtrack.cli import main; "
        f"sys.exit(main(['rules', 'check', {str(scenario)!r}]))"
    )
    run = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, env=env, capture_output=True, text=True,
        timeout=120, check=False,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert "1 passed, 0 failed" in run.stdout
