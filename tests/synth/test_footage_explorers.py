"""Footage of Minecraft: Explorers: the faces each zone shows, damaged tools and spent hunger
cards turned 180 degrees, and a clip rendered with the real scans."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from scan_pack import SCANS, make_scan_pack

from engine import get_game
from engine.simulate import simulate_game
from vision.art.pack import load_pack, proxy_pack
from vision.synth.faces import FaceLibrary, faces_of_pack
from vision.synth.footage import FootageConfig, make_footage
from vision.synth.truth import Truth

GAME = "minecraft-explorers"


def _render(out: Path, lib: FaceLibrary, moves: int) -> Truth:
    config = FootageConfig(game=GAME, players=2, seed=3, moves=moves, fps=4.0, size=(320, 180), effects=0.3)
    return make_footage(config, lib, out, progress=False)


@pytest.fixture(scope="module")
def clip(tmp_path_factory: pytest.TempPathFactory) -> Truth:
    # Seed 3: three explores, the third with a pickaxe (damaged), a refresh.
    return _render(tmp_path_factory.mktemp("explorers"), FaceLibrary(faces_of_pack(proxy_pack(GAME))), 4)


def test_checkpoints_follow_the_engine_and_faces_follow_the_rules(clip: Truth) -> None:
    ruleset = get_game(GAME)
    game = simulate_game(ruleset, players=2, seed=3)
    state = ruleset.initial_state(players=2, seed=game.seed)
    cat = ruleset.catalog
    for k, cp in enumerate(clip.checkpoints):
        if k:
            state = ruleset.apply(state, game.moves[k - 1]).state
        for zone, cards in ruleset.zones(state).items():
            assert [zc.card for zc in cp.zones[zone]] == list(cards), zone
        faces = {z: [zc.face for zc in cards] for z, cards in cp.zones.items()}
        assert faces["mob-deck"] == ["mob_back"] * len(faces["mob-deck"])
        assert all(f.startswith("landscape.") for f in faces["landscape-deck"])
        for p in (1, 2):
            for zc in cp.zones[f"player-{p}"]:
                c = cat.card(zc.card or "")
                assert zc.face == (c.back if c.kind == "landscape" else c.front)
        for zc in cp.zones["chests"]:
            c = cat.card(zc.card or "")
            if c.kind == "chest":
                assert zc.face == (c.back if zc.card in state.filled else c.front)
    assert "cherry-blossom.iron-pickaxe" in state.used


def _turned(corners: tuple[tuple[float, float], ...]) -> bool:
    """For a card of the bottom player (or a shared zone): its own top lies below its bottom."""
    q = np.asarray(corners)
    return bool((q[0, 1] + q[1, 1]) > (q[2, 1] + q[3, 1]))


def test_a_damaged_tool_and_spent_hunger_lie_turned_round(clip: Truth) -> None:
    last = clip.frames[clip.checkpoints[-1].frame]
    by_card = {(c.zone, c.card): c for c in last.cards}
    assert _turned(by_card[("player-1", "cherry-blossom.iron-pickaxe")].corners)
    others = [c for (z, card), c in by_card.items() if z == "player-1" and card != "cherry-blossom.iron-pickaxe"]
    assert others and not any(_turned(c.corners) for c in others)
    hunger = [c for c in last.cards if c.zone == "hunger" and c.card == "hunger"]
    assert clip.final_state is not None
    spent = clip.final_state["hunger_cards_spent"]
    assert len(hunger) == 6 and spent > 0 and sum(_turned(c.corners) for c in hunger) == spent
    # Every hunger and night card shows enough to be read.
    assert min(c.visible for c in last.cards if c.zone == "hunger") > 0.3


def test_a_clip_renders_with_the_real_scans(tmp_path: Path) -> None:
    if not SCANS.is_dir():
        pytest.skip(f"Explorers scans not found at {SCANS}")
    pack = load_pack(make_scan_pack(tmp_path / "pack", max_px=140))
    truth = _render(tmp_path / "clip", FaceLibrary(faces_of_pack(pack)), 1)
    assert len(truth.moves) == 1 and (tmp_path / "clip" / "clip.mp4").is_file()
    faces = {c.face for f in truth.frames for c in f.cards}
    assert "mob_back" in faces and any(f.startswith("landscape.") for f in faces)
