"""The overlay's game panels in Debian's headless Chromium: Explorers, Angry Birds, mk. I.

Each test serves one seeded game with the page tests' server and browser helpers, plays moves
over HTTP (computed with the engine from the same seeded deal the server dealt), and reads the
panel the overlay draws from `details` and `zones`: the Explorers mob deck and the chance of
the game-over card, the Angry Birds round winner announced before anyone takes the cards, the
mk. I health counts. Screenshots go to `tests/server/screenshots/panel-*.png`.
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


@browser_test
def test_angry_birds_panel_announces_the_round_before_take(
    new_page: Any, tmp_path: Path
) -> None:
    game = "angry-birds-power-cards"
    ruleset: Any = get_game(game)
    state = ruleset.initial_state(players=2, options=None, seed=SEED)
    with serving(settings(tmp_path, game)) as base:
        page = new_page()
        page.goto(f"{base}/overlay")
        page.wait_for_selector('#game-panel[data-game="angry-birds-power-cards"]')
        posted = None
        for _ in range(10):
            moves = [ruleset.move_to_dict(m) for m in ruleset.legal_moves(state)]
            if any(m["move"] in ("take", "to-pot") for m in moves):
                break
            move = next(m for m in moves if m["move"] in ("name-stat", "play"))
            posted = call(base, "POST", "/api/moves", {"move": move})
            state = ruleset.apply(state, ruleset.parse_move(move)).state
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
