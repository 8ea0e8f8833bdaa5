"""Footage of mk. I: hands and the box are off the table, and a hotbar's cards lie in its slots
only. A hunted card is carried off the
hunting pile by the player's hand and never drawn again; the camera-side opening deal takes
the starting hands from the rules."""

from __future__ import annotations

import pytest

from engine import get_game
from engine.games.minecraft_mk1 import START_DEAL
from vision.art.pack import proxy_pack
from vision.pipeline import setup_from_truth
from vision.synth.faces import FaceLibrary, faces_of_pack
from vision.synth.footage import FootageConfig, make_footage
from vision.synth.truth import Truth

GAME = "minecraft-mk1"
MOVES = 4  # seed 9301: two trees to the hotbar, then two hunts


@pytest.fixture(scope="module")
def clip(tmp_path_factory: pytest.TempPathFactory) -> Truth:
    config = FootageConfig(game=GAME, players=3, seed=9301, moves=MOVES, fps=4.0, size=(320, 180), effects=0.3)
    return make_footage(config, FaceLibrary(faces_of_pack(proxy_pack(GAME))), tmp_path_factory.mktemp("mk1"),
                        progress=False)


def _offstage(zone: str | None) -> bool:
    return zone is not None and (zone == "box" or zone.startswith("inventory-"))


def test_hands_and_the_box_are_never_on_the_table(clip: Truth) -> None:
    assert [m.move["move"] for m in clip.moves] == ["move", "move", "hunt", "hunt"]
    assert not any(_offstage(c.zone) for f in clip.frames for c in f.cards)
    # A hotbar lists its slots' cards again; each card lies once, in its slot.
    laid = [c.zone for c in clip.frames[-1].cards if c.zone and c.zone.startswith("hotbar-")]
    assert laid and all(z.count("-") == 2 for z in laid)
    for cp in clip.checkpoints:
        assert all(not cards for zone, cards in cp.zones.items() if _offstage(zone))


def test_a_hunted_card_is_carried_off_the_pile_by_a_hand(clip: Truth) -> None:
    before, after = clip.checkpoints[2], clip.checkpoints[3]
    assert len(after.zones["hunting"]) == len(before.zones["hunting"]) - 1
    taken = before.zones["hunting"][0]  # the top card
    assert taken.track not in {c.track for cards in after.zones.values() for c in cards}
    carried = [
        f for f in clip.frames
        if before.frame < f.index <= after.frame
        and any(c.track == taken.track and c.zone is None for c in f.cards)
    ]
    assert carried, "the card is seen in the hand"
    assert all((f.hands or 0) > 0 for f in carried)
    gone = [f for f in clip.frames if f.index > carried[-1].index]
    assert gone and not any(c.track == taken.track for f in gone for c in f.cards)


def test_the_opening_hands_come_from_the_rules(clip: Truth) -> None:
    setup = setup_from_truth(clip, get_game(GAME))
    for p in (1, 2, 3):
        assert sorted(setup[f"inventory-{p}"]) == sorted(START_DEAL)
    # The cards a 3-player game leaves in the box are the rules' too.
    assert sorted(setup["box"]) == sorted(get_game(GAME).zones(get_game(GAME).initial_state(players=3))["box"])
