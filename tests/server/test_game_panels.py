"""The overlay's game panels in Debian's headless Chromium: Explorers, Angry Birds, mk. I.

Each test serves one seeded game with the page tests' server and browser helpers, plays moves
over HTTP (computed with the engine from the same seeded deal the server dealt), and reads the
panel the overlay draws from `details` and `zones`: the Explorers mob deck and the chance of
the game-over card, the Angry Birds round winner announced before anyone takes the cards (and,
while the stat is not named, the winner or the tie under every stat), the mk. I health counts.
Screenshots go to `tests/server/screenshots/panel-*.png`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from browser_helpers import shot

from engine import get_game
from server.settings import ServerSettings
from tests.server.test_pages import browser_test, call, serving, wait_seq

NAMES = ("Alex", "Bea")
SEED = 11


def settings(tmp_path: Path, game: str) -> ServerSettings:
    return ServerSettings(
        game=game, players=2, names=NAMES, seed=SEED,
        journal_path=tmp_path / "journal.sqlite", feed=None,
    )


def percent(chance: float) -> str:
    p = 100 * chance
    if p == 0:
        return "0%"
    return f"{round(p)}%" if p >= 10 else f"{p:.1f}%"


@browser_test
def test_explorers_panel_shows_mob_deck_and_game_over_chance(
    new_page: Any, tmp_path: Path
) -> None:
    with serving(settings(tmp_path, "minecraft-explorers")) as base:
        view = call(base, "GET", "/api/state")
        page = new_page()
        page.goto(f"{base}/overlay")
        wait_seq(page, view["seq"])
        panel = page.wait_for_selector('#game-panel[data-game="minecraft-explorers"]')
        assert panel.is_visible()
        deck = panel.query_selector('[data-stat="mob-deck"] .gp-value').inner_text()
        assert int(deck) == view["counts"]["mob-deck"] > 0
        chance = view["details"]["game_over_chance"]
        assert 0.0 <= chance <= 1.0
        shown = panel.query_selector('[data-stat="game-over"] .gp-value').inner_text()
        assert shown == percent(chance)
        mobs = [c for c in view["zones"]["mobs"] if c]
        assert len(panel.query_selector_all('[data-stat="mobs"] .chip')) == len(mobs)
        assert len(panel.query_selector_all(".gp-chest")) == len(view["details"]["chests"])
        # Toasts go below the panel, not over it.
        box = panel.bounding_box()
        assert box["x"] > 960 and box["y"] < 100
        shot(page, "panel-explorers.png", omit_background=True)


def test_game_over_chance_counts_the_bottom_cards() -> None:
    import dataclasses

    from engine.games.minecraft_explorers import GAME_OVER, GAME_OVER_DEPTH

    ruleset: Any = get_game("minecraft-explorers")
    state = ruleset.initial_state(players=2, options=None, seed=SEED)
    assert GAME_OVER in state.mob_deck[-(GAME_OVER_DEPTH + 1):]
    assert ruleset.game_over_chance(state) == 0.0
    for left in range(GAME_OVER_DEPTH + 1, 0, -1):
        short = dataclasses.replace(state, mob_deck=(None,) * left)
        assert ruleset.game_over_chance(short) == 1.0 / left
    seen = dataclasses.replace(state, mob_deck=(None, None), discard=(GAME_OVER,))
    assert ruleset.game_over_chance(seen) == 0.0


BIRDS = "angry-birds-power-cards"


def _birds_overlay(new_page: Any, base: str) -> Any:
    page = new_page()
    page.goto(f"{base}/overlay")
    page.wait_for_selector(f'#game-panel[data-game="{BIRDS}"]')
    return page


def _lay_round(ruleset: Any, base: str, kinds: tuple[str, ...]) -> tuple[Any, Any]:
    """Post the first legal move of `kinds` until the round's cards all lie in their slots (and,
    when `name-stat` is among them, the stat is named); the state and the last answer."""
    state = ruleset.initial_state(players=2, options=None, seed=SEED)
    posted = None
    while True:
        result = ruleset.round_result(state)
        if result.complete or ("name-stat" not in kinds and result.cards and not result.waiting):
            return state, posted
        moves = [ruleset.move_to_dict(m) for m in ruleset.legal_moves(state)]
        move = next(m for m in moves if m["move"] in kinds)
        posted = call(base, "POST", "/api/moves", {"move": move})
        state = ruleset.apply(state, ruleset.parse_move(move)).state


@browser_test
def test_angry_birds_panel_announces_the_round_before_take(
    new_page: Any, tmp_path: Path
) -> None:
    ruleset: Any = get_game(BIRDS)
    with serving(settings(tmp_path, BIRDS)) as base:
        page = _birds_overlay(new_page, base)
        state, posted = _lay_round(ruleset, base, ("name-stat", "play"))
        assert posted is not None
        result = ruleset.round_result(state)
        assert result.complete, "both cards lie in their battle slots"
        wait_seq(page, posted["seq"])
        announce = page.wait_for_selector("#game-panel .gp-announce")
        if result.winner is not None:
            assert announce.inner_text() == f"{NAMES[result.winner - 1]} wins the round"
            won = page.query_selector("#game-panel .gp-seat.won")
            assert won.get_attribute("data-player") == str(result.winner)
        else:
            assert announce.inner_text().startswith("Tie:")
        for n, value in result.values.items():
            seat = page.query_selector(f'#game-panel .gp-seat[data-player="{n}"] .gp-value')
            assert seat.inner_text() == str(value)
        stat = page.query_selector('#game-panel [data-stat="stat"] .gp-value').inner_text()
        assert stat.lower() == result.stat.value
        shot(page, "panel-angry-birds.png", omit_background=True)

        page.goto(f"{base}/overlay?lang=fa")
        announce = page.wait_for_selector("#game-panel .gp-announce")
        assert page.evaluate("document.documentElement.dir") == "rtl"
        if result.winner is not None:
            assert announce.inner_text() == f"\u2068{NAMES[result.winner - 1]}\u2069 برندهٔ این دور است"
        assert page.query_selector("#game-panel").bounding_box()["x"] < 960
        shot(page, "panel-angry-birds-fa.png", omit_background=True)


def stat_rows(page: Any) -> dict[str, dict[str, Any]]:
    """The panel's rows per stat: winner attribute, result text and the values per seat."""
    return page.evaluate(
        """() => Object.fromEntries([...document.querySelectorAll(
            '#game-panel .gp-announce-stat')].map((row) => [row.dataset.stat, {
              winner: row.dataset.winner,
              text: row.querySelector('.gp-result').innerText,
              values: Object.fromEntries([...row.querySelectorAll('.gp-value')].map(
                (v) => [v.dataset.player, v.innerText])),
              label: row.querySelector('.gp-label').getBoundingClientRect().x,
              result: row.querySelector('.gp-result').getBoundingClientRect().x,
            }]))"""
    )


@browser_test
def test_angry_birds_panel_announces_every_stat_while_the_stat_is_not_named(
    new_page: Any, tmp_path: Path
) -> None:
    ruleset: Any = get_game(BIRDS)
    with serving(settings(tmp_path, BIRDS)) as base:
        page = _birds_overlay(new_page, base)
        # The camera lays the cards; the stat is said aloud and never posted.
        state, posted = _lay_round(ruleset, base, ("play",))
        assert posted is not None
        result = ruleset.round_result(state)
        assert result.stat is None and not result.complete and not result.waiting
        by_stat = {k: dict(v) for k, v in result.by_stat.items()}
        assert list(by_stat) == ["power", "distance", "aim", "rarity"]
        # The seed deals a round with a winner for some stats and a tie for another.
        assert any(o["winner"] is not None for o in by_stat.values())
        assert any(o["winner"] is None for o in by_stat.values())
        assert call(base, "GET", "/api/state")["details"]["pending_round"]["by_stat"] == by_stat
        wait_seq(page, posted["seq"])
        page.wait_for_selector("#game-panel .gp-announce-stat")
        assert page.query_selector("#game-panel .gp-announce") is None
        assert "Waiting for every card" not in page.inner_text("#game-panel")
        rows = stat_rows(page)
        assert list(rows) == list(by_stat)
        for key, outcome in by_stat.items():
            row = rows[key]
            if outcome["winner"] is not None:
                assert row["winner"] == str(outcome["winner"])
                assert row["text"] == f"{NAMES[outcome['winner'] - 1]} wins"
            else:
                assert row["winner"] == ""
                assert row["text"] == "Tie: " + ", ".join(NAMES[n - 1] for n in outcome["tied"])
            assert row["values"] == {
                str(n): str(v) for n, v in result.values_by_stat[key].items()
            }
            assert row["label"] < row["result"], "left to right: stat first"
        power = page.query_selector('#game-panel .gp-announce-stat[data-stat="power"]')
        assert power.query_selector(".gp-label").inner_text() == "Power"
        for n, card in result.cards.items():
            shown = page.query_selector(f'#game-panel .gp-seat[data-player="{n}"] .gp-card')
            assert shown.get_attribute("data-card") == card
        box = page.query_selector("#game-panel").bounding_box()
        assert box["x"] + box["width"] <= 1920 and box["y"] + box["height"] <= 1080
        shot(page, "panel-angry-birds-unnamed.png", omit_background=True)

        page.goto(f"{base}/overlay?lang=fa")
        page.wait_for_selector("#game-panel .gp-announce-stat")
        assert page.evaluate("document.documentElement.dir") == "rtl"
        rows = stat_rows(page)
        assert list(rows) == list(by_stat)
        for key, outcome in by_stat.items():
            row = rows[key]
            names = [NAMES[n - 1] for n in outcome["tied"]]
            if outcome["winner"] is not None:
                assert row["winner"] == str(outcome["winner"])
                assert row["text"] == f"\u2068{NAMES[outcome['winner'] - 1]}\u2069 می‌برد"
            else:
                assert row["winner"] == ""
                assert row["text"] == f"مساوی: \u2068{', '.join(names)}\u2069"
            assert row["label"] > row["result"], "right to left: stat first, on the right"
        label = page.query_selector('#game-panel .gp-announce-stat[data-stat="power"] .gp-label')
        assert label.inner_text() == "قدرت"
        shot(page, "panel-angry-birds-unnamed-fa.png", omit_background=True)

        # The spectator page draws the same panel.
        spectator = new_page()
        spectator.goto(f"{base}/spectator")
        spectator.wait_for_selector("#game-panel .gp-announce-stat")
        assert list(stat_rows(spectator)) == list(by_stat)


@browser_test
def test_mk1_panel_shows_health_and_hunger(
    new_page: Any, tmp_path: Path
) -> None:
    with serving(settings(tmp_path, "minecraft-mk1")) as base:
        view = call(base, "GET", "/api/state")
        page = new_page()
        page.goto(f"{base}/overlay?lang=fr")
        wait_seq(page, view["seq"])
        panel = page.wait_for_selector('#game-panel[data-game="minecraft-mk1"]')
        for n in (1, 2):
            seat = panel.query_selector(f'.gp-seat[data-player="{n}"]')
            assert seat.query_selector(".gp-health .gp-value").inner_text() == str(
                view["details"]["health"][n - 1]
            )
            assert seat.query_selector(".gp-hunger .gp-value").inner_text() == str(
                view["details"]["hunger"][n - 1]
            )
        daylight = panel.query_selector('[data-stat="daylight"] .gp-value').inner_text()
        assert daylight == str(view["details"]["daylight"])
        assert "Santé" in panel.inner_text()
        shot(page, "panel-mk1.png", omit_background=True)
