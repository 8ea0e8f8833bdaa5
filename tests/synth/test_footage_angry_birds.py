"""Footage of Angry Birds Power Cards: decks face down, the round's cards face up in their
battle slots, structures built back side up, and checkpoints that follow the engine."""

from __future__ import annotations

import pytest

from engine import get_game
from engine.simulate import simulate_game
from vision.art.pack import proxy_pack
from vision.synth.faces import FaceLibrary, faces_of_pack
from vision.synth.footage import FootageConfig, make_footage
from vision.synth.truth import Truth

GAME = "angry-birds-power-cards"
MOVES = 6  # seed 3: a stat, two cards laid, the round taken, a structure begun, the next stat


@pytest.fixture(scope="module")
def clip(tmp_path_factory: pytest.TempPathFactory) -> Truth:
    config = FootageConfig(game=GAME, players=2, seed=3, moves=MOVES, fps=4.0, size=(320, 180), effects=0.3)
    return make_footage(config, FaceLibrary(faces_of_pack(proxy_pack(GAME))), tmp_path_factory.mktemp("ab"),
                        progress=False)


def test_checkpoints_follow_the_engine_with_the_right_faces(clip: Truth) -> None:
    ruleset = get_game(GAME)
    game = simulate_game(ruleset, players=2, seed=3)
    state = ruleset.initial_state(players=2, seed=game.seed)
    cat = ruleset.catalog
    built = False
    for k, cp in enumerate(clip.checkpoints):
        if k:
            state = ruleset.apply(state, game.moves[k - 1]).state
        for zone, cards in ruleset.zones(state).items():
            assert [zc.card for zc in cp.zones[zone]] == list(cards), zone
            for zc in cp.zones[zone]:
                c = cat.card(zc.card or "")
                assert zc.face == (c.front if zone.startswith("battle-") else c.back), zone
        built |= any(cp.zones[f"structure-{p}"] for p in (1, 2))
    assert built, "the clip shows a structure"
    assert [m.move for m in clip.moves] == [ruleset.move_to_dict(m) for m in game.moves[:MOVES]]


def test_laid_cards_and_structure_parts_are_in_full_view(clip: Truth) -> None:
    for cp in clip.checkpoints:
        frame = clip.frames[cp.frame]
        for card in frame.cards:
            if card.zone and card.zone.startswith(("battle-", "structure-")):
                assert card.visible > 0.5, (cp.frame, card)
