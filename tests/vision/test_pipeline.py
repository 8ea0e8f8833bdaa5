"""The live pipeline composed end to end, and its small stages one by one.

The whole-clip test runs the bundled footage through every stage with the truth stand-ins
(`TruthOracleFinder` / `TruthOracleIdentifier`, test doubles that answer from the truth file),
so it checks everything downstream of the models: tracking, zones, settling, snapshots and the
rules' reading of them. It records the move precision and recall it reaches (bars set just
under the measured figures) and requires the final scores of the truth.
"""

from __future__ import annotations

import json
import threading
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest

from calibration.layout import build_layout
from cardtrack.cli import main
from cardtrack.commands.run import step_lines
from engine import get_game
from engine.core import Audience
from engine.snapshot import Candidate
from server.session import Session
from server.vision_feed import VisionFeed, feed_message
from vision.capture import Frame, open_source
from vision.detections import Detections
from vision.finder import FinderConfig, Peaks, ZoomRegion
from vision.identify import FaceCandidate
from vision.pipeline import (
    FAN_ZOOM,
    ZOOM_MARGIN,
    GalleryIdentifier,
    Pipeline,
    PipelineConfig,
    PipelineError,
    PipelineStep,
    TruthOracleFinder,
    TruthOracleIdentifier,
    build_snapshot,
    card_shape_errors,
    covering_quads,
    crop_card,
    crop_shapes,
    crop_turned,
    hand_dwell,
    identify_requests,
    identify_tracks,
    keep_plausible,
    merge_candidates,
    move_key,
    overlaps,
    profile_from_truth,
    readable_zones,
    renewed_zones,
    reread_zones,
    score_moves,
    setup_from_truth,
    square_cuts,
    visibility_masks,
)
from vision.settle import SettleState
from vision.synth.truth import Truth, load_truth
from vision.timing import StageTimer
from vision.tracker import CardTracker, IdentifyReason, IdentifyRequest, Track, TrackerConfig
from vision.zoning import (
    ZoneContents,
    ZonedCard,
    ZoningConfig,
    ZoningError,
    assign_cards,
    turned_round,
    zone_ids,
)

REPO = Path(__file__).resolve().parents[2]
CLIP = REPO / "datasets" / "footage" / "mattel-2p-tnt-endgame"


def track(track_id: int, center: tuple[float, float], first: int, face: str | None = "wood-1",
          peak: float = 0.9) -> Track:
    return Track(
        track_id=track_id, confirmed=True, hits=5, misses=0, first_frame=first, last_frame=first + 4,
        detection_index=0, corners=np.zeros((4, 2), np.float32), center_mm=np.array(center),
        angle_deg=0.0, velocity_mm=np.zeros(2),
        candidates=(Candidate(face=face, score=0.9),) if face else (), rotated_180=False, peak_score=peak,
    )


# -- zoning -------------------------------------------------------------------------------------


def test_cards_go_to_their_zone_newest_on_top_and_loose_cards_to_the_loose_zone() -> None:
    layout = build_layout("minecraft-card-game", 2)
    pile = layout.zone("resource-pile-1").center
    area = layout.zone("player-1").center
    config = ZoningConfig.for_game("minecraft-card-game")
    tracks = [
        track(1, pile, first=10, face="resource-back"),
        track(2, pile, first=40, face="wood-2"),  # put on the pile later: on top
        track(3, area, first=5),
        track(4, (450.0, 480.0), first=7, face="tnt"),  # on the table, in no zone
        track(5, (-300.0, 100.0), first=7),  # beside the table
        track(6, area, first=50, face=None),  # not identified yet
    ]
    tracks[1] = replace(tracks[1], turn_known=False)  # its look changed, not named again
    contents = assign_cards(layout, tracks, config)
    assert [c.track_id for c in contents.cards("resource-pile-1")] == [2, 1]
    assert contents.seen("resource-pile-1")[0].best.face == "wood-2"
    assert [c.turn_known for c in contents.seen("resource-pile-1")] == [False, True]
    assert [c.track_id for c in contents.cards("tnt")] == [4]
    assert contents.outside == (5,)
    assert contents.ready("resource-pile-1") and not contents.ready("player-1")
    assert [c.track_id for c in contents.cards("player-1")] == [6, 3]
    assert zone_ids(layout, config)[-1] == "tnt"
    # Without a loose zone the card off every zone is left out.
    plain = assign_cards(layout, tracks, ZoningConfig())
    assert plain.outside == (4, 5) and "tnt" not in plain.zones


def test_a_faint_card_counts_once_named_and_holds_no_zone_back_before() -> None:
    layout = build_layout("minecraft-card-game", 2)
    area = layout.zone("player-1").center
    config = ZoningConfig.for_game("minecraft-card-game")
    assert config.sure_score == 0.5
    faint_unknown = [track(1, area, first=5), track(2, area, first=9, face=None, peak=0.42)]
    contents = assign_cards(layout, faint_unknown, config)
    assert contents.ready("player-1")  # a faint detection nobody named: maybe the cloth
    assert [c.best.face for c in contents.seen("player-1")] == ["wood-1"]
    faint_named = [track(1, area, first=5), track(2, area, first=9, face="tnt", peak=0.42)]
    assert [c.best.face for c in assign_cards(layout, faint_named, config).seen("player-1")] == ["tnt", "wood-1"]
    sure_unknown = [track(1, area, first=5), track(2, area, first=9, face=None, peak=0.8)]
    assert not assign_cards(layout, sure_unknown, config).ready("player-1")  # a card: wait for its name


def test_a_card_never_named_beside_named_ones_stops_holding_its_spread_back() -> None:
    # An Angry Birds structure: a vertical half under the beam is found but never named. Once
    # it has lain unnamed for `unnamed_frames`, the structure is read without it; a card that
    # lies alone unnamed (under a mug) still holds its zone back.
    layout = build_layout("angry-birds-power-cards", 2)
    spot = layout.zone("structure-1").center
    other = layout.zone("structure-2").center
    config = ZoningConfig.for_game("angry-birds-power-cards")
    frames = config.unnamed_frames
    assert frames is not None

    def unnamed(track_id: int, center: tuple[float, float], age: int) -> Track:
        t = track(track_id, center, first=100, face=None)
        return replace(t, last_frame=100 + age)

    pig = track(1, spot, first=90, face="back.pig")
    young = assign_cards(layout, [pig, unnamed(2, spot, frames - 1)], config)
    assert not young.ready("structure-1")
    old = assign_cards(layout, [pig, unnamed(2, spot, frames)], config)
    assert old.ready("structure-1")
    assert [c.best.face for c in old.seen("structure-1")] == ["back.pig"]
    alone = assign_cards(layout, [pig, unnamed(3, other, 10 * frames)], config)
    assert not alone.ready("structure-2")
    never = assign_cards(layout, [pig, unnamed(2, spot, 10 * frames)], replace(config, unnamed_frames=None))
    assert not never.ready("structure-1")


def test_an_explorers_card_never_named_in_a_row_is_read_as_a_card_not_named() -> None:
    # An Explorers player's row: an iron armor whose dark band the finder cut off is never
    # named. Past `unnamed_frames` the row is read, and the snapshot says a card lies there
    # unnamed (`TableSnapshot.unnamed`), so the rules take it for one of the row's cards
    # instead of one taken away.
    layout = build_layout("minecraft-explorers", 2)
    row = layout.zone("player-1").center
    config = ZoningConfig.for_game("minecraft-explorers")
    frames = config.unnamed_frames
    assert frames is not None
    named = track(1, row, first=90, face="item.iron")
    dark = replace(track(2, (row[0] + 70.0, row[1]), first=100, face=None), last_frame=100 + frames)
    contents = assign_cards(layout, [named, dark], config)
    assert contents.ready("player-1") and contents.unnamed("player-1") == 1
    snap = build_snapshot(contents, frozenset({"player-1"}), 200, 200 / 15)
    assert [c.best.face for c in snap.cards("player-1")] == ["item.iron"] and snap.unnamed == {"player-1": 1}
    young = assign_cards(layout, [named, replace(dark, last_frame=100 + frames - 1)], config)
    assert not young.ready("player-1") and young.unnamed("player-1") == 0
    # A faint detection never named is not counted: it may be the cloth.
    faint = replace(dark, peak_score=0.4)
    assert assign_cards(layout, [named, faint], config).unnamed("player-1") == 0
    # A card just put down half on a named one (a mob turned up onto the row) is waited for,
    # not read at once as a card not named: it is named a few frames later.
    assert config.overlap_share is None
    quad = np.array([[600, 500], [640, 500], [640, 560], [600, 560]], np.float32)
    under = replace(named, corners=quad)
    on = replace(dark, last_frame=101, corners=quad + np.float32([10.0, 0.0]))
    fresh = assign_cards(layout, [under, on], config)
    assert not fresh.ready("player-1") and fresh.unnamed("player-1") == 0
    assert assign_cards(layout, [under, on], replace(config, overlap_share=0.5)).unnamed("player-1") == 1


def test_an_unnamed_quad_lying_on_a_named_card_holds_no_zone_back() -> None:
    # Beside a sheet of paper the finder laid a second quad, 18 pixels off, on a battle card.
    # Never named, it kept the slot from being read until a hand came back over it, so the
    # card's play was never read. Lying on the named card of a slot, it is covered at once.
    layout = build_layout("angry-birds-power-cards", 2)
    spot = layout.zone("battle-1").center
    config = ZoningConfig.for_game("angry-birds-power-cards")
    assert config.unnamed_frames is not None and config.overlap_share == 0.5

    def quad(x0: float) -> np.ndarray:
        return np.array([[x0, 116], [x0 + 46, 119], [x0 + 46, 180], [x0, 177]], np.float32)

    card = replace(track(1, spot, first=90, face="red-1"), corners=quad(631))
    double = replace(track(2, spot, first=100, face=None), corners=quad(649))
    contents = assign_cards(layout, [card, double], config)
    assert contents.ready("battle-1")
    assert [c.best.face for c in contents.seen("battle-1")] == ["red-1"]
    # A one-card slot holds no second card: a quad lying mostly off the named card (half on
    # a green card, half on green gingham) is no card either.
    off = replace(double, corners=quad(661))
    assert assign_cards(layout, [card, off], config).ready("battle-1")
    # In a spread, lying mostly off the named card, it is another card, waited for as before.
    fan = layout.zone("structure-1").center
    part = replace(card, center_mm=np.array(fan), candidates=(Candidate(face="back.pig", score=0.9),))
    assert assign_cards(layout, [part, replace(double, center_mm=np.array(fan))], config).ready("structure-1")
    assert not assign_cards(layout, [part, replace(off, center_mm=np.array(fan))], config).ready("structure-1")
    # So is a card alone, and any card where unnamed cards are always waited for.
    assert not assign_cards(layout, [double], config).ready("battle-1")
    assert not assign_cards(layout, [card, double], replace(config, unnamed_frames=None)).ready("battle-1")
    with pytest.raises(ZoningError, match="overlap_share"):
        ZoningConfig(overlap_share=0.0)


def test_a_card_the_deck_holds_once_seen_twice_in_a_zone_is_one_card() -> None:
    # The finder laid a second quad, a few pixels off, on player 1's diamond sword: both
    # tracks are named as it, and the deck holds one. Two wood-1 cards (the deck holds many)
    # are two cards.
    layout = build_layout("minecraft-card-game", 2)
    x, y = layout.zone("player-1").center
    config = ZoningConfig.for_game("minecraft-card-game")
    assert "diamond-sword/tool" in config.faces_once and "wood-1" not in config.faces_once
    tracks = [
        track(1, (x, y), first=5, face="diamond-sword/tool"),
        track(2, (x + 4.0, y), first=9, face="diamond-sword/tool"),
        track(3, (x - 20.0, y), first=3),
        track(4, (x - 30.0, y), first=2),
    ]
    contents = assign_cards(layout, tracks, config)
    assert [c.track_id for c in contents.cards("player-1")] == [2, 3, 4]
    assert [c.best.face for c in contents.seen("player-1")] == ["diamond-sword/tool", "wood-1", "wood-1"]
    # A config without the catalog's faces keeps both.
    assert len(assign_cards(layout, tracks, ZoningConfig()).cards("player-1")) == 4
    # Half a card apart they are two cards of a spread, one misnamed for now: both are kept.
    apart = [track(1, (x, y), first=5, face="diamond-sword/tool"),
             track(2, (x + 30.0, y), first=9, face="diamond-sword/tool")]
    assert [c.track_id for c in assign_cards(layout, apart, config).cards("player-1")] == [2, 1]
    # A one-card zone holds one card however far apart the two quads lie: an old track of the
    # card lingers beside the new one.
    birds = build_layout("angry-birds-power-cards", 2)
    bx, by = birds.zone("battle-1").center
    assert birds.zone("battle-1").stacking == "single"
    ab = ZoningConfig.for_game("angry-birds-power-cards")
    slot = [track(1, (bx - 15.0, by), first=5, face="hal-2"), track(2, (bx + 15.0, by), first=9, face="hal-2")]
    assert [c.track_id for c in assign_cards(birds, slot, ab).cards("battle-1")] == [2]


def test_a_quad_over_the_gap_between_two_side_by_side_cards_is_no_card() -> None:
    # An Explorers mob row, four mobs side by side: the finder laid a fifth quad (0.61) over
    # the gap between an enderman and a spider (0.89, 0.86), half on each, and the identifier
    # named it a spider; the row read five mobs and the rules explained the fifth by a whole
    # turn nobody played. Left out, the row reads its four.
    layout = build_layout("minecraft-explorers", 2)
    assert layout.zone("mobs").stacking == "all-visible"
    x, y = layout.zone("mobs").center
    config = ZoningConfig.for_game("minecraft-explorers")
    assert config.straddle_share is not None

    def quad(x0: float, x1: float) -> np.ndarray:
        return np.array([[x0, 240], [x1, 241], [x1, 309], [x0, 308]], np.float32)

    def card(track_id: int, x0: float, x1: float, face: str, peak: float, first: int = 10) -> Track:
        return replace(track(track_id, (x + x0 / 4, y), first=first, face=face, peak=peak), corners=quad(x0, x1))

    row = [card(1, 406, 472, "mob.enderman", 0.89), card(2, 466, 532, "mob.spider", 0.86),
           card(3, 525, 588, "mob.enderman", 0.70), card(4, 587, 643, "mob.zombie", 0.77)]
    ghost = card(5, 435, 518, "mob.spider", 0.64, first=30)
    faces = [c.best.face for c in assign_cards(layout, [*row, ghost], config).seen("mobs")]
    assert sorted(faces) == ["mob.enderman", "mob.enderman", "mob.spider", "mob.zombie"]
    # Not where the layout does not say the cards lie side by side, nor without the setting,
    # nor when the quad is the surer one (a card really laid across two, whole and on top).
    assert len(assign_cards(layout, [*row, ghost], replace(config, straddle_share=None)).seen("mobs")) == 5
    assert len(assign_cards(layout, [*row, replace(ghost, peak_score=0.95)], config).seen("mobs")) == 5
    hunger = layout.zone("hunger")
    assert hunger.stacking == "fanned"
    fan = [replace(t, center_mm=np.array(hunger.center)) for t in (*row, ghost)]
    assert len(assign_cards(layout, fan, config).cards("hunger")) == 5
    # A card lying on one card only (a second row started over the first) is a card.
    over = card(6, 410, 470, "mob.witch", 0.6, first=40)
    over = replace(over, corners=over.corners + np.array([0, 20], np.float32))
    assert len(assign_cards(layout, [*row, over], config).seen("mobs")) == 5
    with pytest.raises(ZoningError, match="straddle_share"):
        ZoningConfig(straddle_share=0.0)


def test_zoning_config_errors_name_the_field() -> None:
    with pytest.raises(ZoningError, match="loose_zone"):
        ZoningConfig(loose_zone="")
    with pytest.raises(ZoningError, match="seen_twice"):
        ZoningConfig(seen_twice=1.5)
    with pytest.raises(ZoningError, match="table_margin_mm"):
        ZoningConfig(table_margin_mm=-1.0)
    with pytest.raises(ZoningError, match="sure_score"):
        ZoningConfig(sure_score=1.5)


# -- small stages -------------------------------------------------------------------------------


def test_a_card_crop_is_portrait_or_landscape_by_its_first_edge() -> None:
    rng = np.random.default_rng(3)
    image = rng.integers(0, 255, (200, 300, 3), dtype=np.uint8)
    portrait = np.array([[10, 10], [73, 10], [73, 98], [10, 98]], np.float32)
    assert crop_card(image, portrait).shape == (112, 80, 3)
    assert crop_card(image, portrait[[1, 2, 3, 0]]).shape == (80, 112, 3)


def _squeezed(factor: float) -> Callable[[np.ndarray], np.ndarray]:
    """Image pixels to table millimetres for a camera that shows table y `factor` as long."""

    def to_table(points: np.ndarray) -> np.ndarray:
        return np.asarray(points, np.float64) * np.array([1.0, 1.0 / factor])

    return to_table


def test_a_far_card_as_tall_as_wide_in_the_image_is_cut_upright_by_its_shape_on_the_table() -> None:
    # Seen from a low angle a portrait card 63 x 88 mm lying flat shows 63 x 63 px: the image
    # cannot tell which side is long, the table can, whichever corner the finder starts at.
    image = np.zeros((200, 300, 3), np.uint8)
    image[40:72, 50:113] = (0, 0, 255)  # the card's far half red
    image[72:103, 50:113] = (255, 0, 0)  # its near half blue
    to_table = _squeezed(63 / 88)
    card = np.array([[50, 40], [113, 40], [113, 103], [50, 103]], np.float32)
    assert crop_shapes(card, to_table) == (True,)
    assert crop_shapes(card[[1, 2, 3, 0]], to_table) == (False,)
    upright = crop_card(image, card, to_table)
    assert upright.shape == (112, 80, 3)
    assert upright[10, 40, 2] > 200 and upright[100, 40, 0] > 200  # red on top, blue below
    assert crop_card(image, card[[1, 2, 3, 0]], to_table).shape == (80, 112, 3)


def test_a_card_whose_image_and_table_shapes_disagree_is_cut_both_ways() -> None:
    # Squeezed to half, a flat portrait card looks clearly landscape in the image (63 x 44 px);
    # a card standing in a holder looks portrait in the image and square on the table.
    flat = np.array([[50, 40], [113, 40], [113, 84], [50, 84]], np.float32)
    assert set(crop_shapes(flat, _squeezed(0.5))) == {True, False}
    standing = np.array([[50, 40], [113, 40], [113, 128], [50, 128]], np.float32)
    assert crop_shapes(standing, _squeezed(1.4)) == (True, False)  # the image's way first
    assert crop_shapes(standing) == (True,)  # without the table: the image alone


def test_a_card_the_identifier_reads_only_turned_a_quarter_is_identified() -> None:
    class PortraitOnly:
        """Knows the card only when it is cut portrait."""

        def __init__(self) -> None:
            self.shapes: list[tuple[int, ...]] = []

        def identify(self, crops: Sequence[np.ndarray], *, corners: np.ndarray,
                     frame_index: int) -> list[tuple[FaceCandidate, ...]]:
            self.shapes += [c.shape for c in crops]
            return [(FaceCandidate(face="wood-1", rotated_180=False, score=0.9),)
                    if c.shape[0] > c.shape[1] else () for c in crops]

    image = np.zeros((200, 300, 3), np.uint8)
    flat = np.array([[113, 40], [113, 84], [50, 84], [50, 40]], np.float32)  # long edge first
    tracker = CardTracker(TrackerConfig(frames_to_confirm=1))
    detections = Detections(corners=flat[None], scores=np.array([0.9], np.float32))
    tracker.update(detections, image=image, frame_index=0)
    identifier = PortraitOnly()
    done = identify_tracks(tracker, identifier, image, 0, PipelineConfig(), to_table=_squeezed(0.5))
    assert done == 1
    assert sorted(identifier.shapes) == [(80, 112, 3), (112, 80, 3)]
    assert tracker.tracks[0].face == "wood-1"


def test_without_refine_covered_the_refiner_puts_only_cards_no_other_overlaps_on_the_pixel() -> None:
    class Counting:
        def __init__(self) -> None:
            self.given: list[np.ndarray] = []

        def refine(self, image: np.ndarray, quads: np.ndarray) -> np.ndarray:
            self.given.append(np.asarray(quads))
            return np.asarray(quads, np.float64) + 0.5

    image = np.full((200, 400, 3), 90, np.uint8)
    under = np.array([[50, 40], [113, 40], [113, 128], [50, 128]], np.float32)
    over = under + np.array([25.0, 0.0], np.float32)  # a fan: the next card a third across
    alone = under + np.array([250.0, 0.0], np.float32)
    tracker = CardTracker(TrackerConfig(frames_to_confirm=1))
    tracker.update(Detections(corners=np.stack([under, over, alone]), scores=np.full(3, 0.9, np.float32)),
                   image=image, frame_index=0)
    refiner = Counting()
    identify_tracks(tracker, _NamesAll(), image, 0, PipelineConfig(refine_covered=False), refiner=refiner)
    assert len(refiner.given) == 1 and len(refiner.given[0]) == 1
    np.testing.assert_allclose(refiner.given[0][0], alone)
    refiner.given.clear()  # by default, every card read again: the fan's two as well
    identify_tracks(tracker, _NamesAll(), image, 0, PipelineConfig(), refresh=_all_requests(tracker),
                    refiner=refiner)
    assert sum(len(g) for g in refiner.given) == 3


def test_a_refined_outline_less_like_the_card_than_the_finders_is_not_cut() -> None:
    # A camera that shows 2 px per table millimetre; a 59 x 91 mm card lying flat.
    to_table = _two_px_per_mm
    card = np.array([[100, 100], [218, 100], [218, 282], [100, 282]], np.float32)
    square = np.array([[100, 100], [218, 100], [218, 218], [100, 218]], np.float32)  # 59 x 59 mm
    np.testing.assert_allclose(card_shape_errors(np.stack([card, np.roll(card, 1, axis=0), square]), to_table,
                                                 (91.0, 59.0)), [0.0, 0.0, 32 / 91], atol=1e-6)
    coarse = card + np.array([[4, -3], [-2, 5], [3, 3], [-4, 2]], np.float32)  # the finder: a few px off
    better = card + 0.5  # the refiner on the pixel
    pulled = card.copy()
    pulled[3] = [112, 240]  # a corner pulled onto a dark icon inside the card
    out = keep_plausible(np.stack([coarse, coarse]), np.stack([better, pulled]), to_table, (59.0, 91.0), 0.1)
    np.testing.assert_allclose(out[0], better)
    np.testing.assert_allclose(out[1], coarse)
    # Without the table geometry or the card's size nothing can be judged: the refiner is trusted.
    np.testing.assert_allclose(keep_plausible(coarse[None], pulled[None], None, (59.0, 91.0), 0.1)[0], pulled)
    np.testing.assert_allclose(keep_plausible(coarse[None], pulled[None], to_table, None, 0.1)[0], pulled)
    np.testing.assert_allclose(keep_plausible(coarse[None], pulled[None], to_table, (59.0, 91.0), None)[0], pulled)


class _PullsACorner:
    """A corner refiner that pulls every card's fourth corner 40 px up, onto the card."""

    def refine(self, image: np.ndarray, quads: np.ndarray) -> np.ndarray:
        out = np.asarray(quads, np.float64).copy()
        out[:, 3] += (12.0, -40.0)
        return out


def _two_px_per_mm(points: np.ndarray) -> np.ndarray:
    """Image pixels to table millimetres for a camera that shows 2 px per millimetre."""
    return np.asarray(points, np.float64) / 2.0


def test_identify_tracks_cuts_at_the_finders_corners_when_the_refiner_bends_the_outline() -> None:
    class Records(_NamesAll):
        def __init__(self) -> None:
            self.corners: list[np.ndarray] = []

        def identify(self, crops: Sequence[np.ndarray], *, corners: np.ndarray,
                     frame_index: int) -> list[tuple[FaceCandidate, ...]]:
            self.corners.append(np.asarray(corners))
            return super().identify(crops, corners=corners, frame_index=frame_index)

    Pulls, to_table = _PullsACorner, _two_px_per_mm
    image = np.full((400, 400, 3), 90, np.uint8)
    card = np.array([[100, 100], [218, 100], [218, 282], [100, 282]], np.float32)
    tracker = CardTracker(TrackerConfig(frames_to_confirm=1))
    tracker.update(Detections(corners=card[None], scores=np.full(1, 0.9, np.float32)), image=image, frame_index=0)
    identifier = Records()
    assert PipelineConfig.for_game("minecraft-explorers").refine_tolerance == 0.1
    assert PipelineConfig.for_game("minecraft-card-game").refine_tolerance is None
    assert PipelineConfig.for_game("minecraft-explorers", fps=30).tracker.recheck_frames == 30
    assert PipelineConfig.for_game("minecraft-explorers").tracker.recheck_below == 0.5
    assert PipelineConfig.for_game("minecraft-card-game", fps=30).tracker.recheck_below is None
    assert PipelineConfig.for_game("minecraft-explorers").interpret.zone_pending
    assert PipelineConfig.for_game("minecraft-card-game").interpret.zone_pending
    identify_tracks(tracker, identifier, image, 0, PipelineConfig(refine_tolerance=0.1), refiner=Pulls(),
                    to_table=to_table, card_mm=(59.0, 91.0))
    np.testing.assert_allclose(identifier.corners[0][0], card)
    tracker.update(Detections(corners=card[None], scores=np.full(1, 0.9, np.float32)), image=image, frame_index=1)
    for config, size in ((PipelineConfig(refine_tolerance=0.1), None), (PipelineConfig(), (59.0, 91.0))):
        identifier.corners.clear()  # without the card's size, or the check off, the refined corners are cut
        identify_tracks(tracker, identifier, image, 1, config, refresh=_all_requests(tracker),
                        refiner=Pulls(), to_table=to_table, card_mm=size)
        assert not np.allclose(identifier.corners[0][0], card)


def test_a_card_the_finders_outline_cannot_name_is_tried_at_the_refined_outline_set_aside() -> None:
    # A dim Explorers zombie: the shape check set the refined outline aside (a corner looked
    # pulled off), the finder's outline cut the picture short and could not be named, and the
    # card held its row back for ten seconds. The refined outline names it.
    Pulls, to_table = _PullsACorner, _two_px_per_mm
    card = np.array([[100, 100], [218, 100], [218, 282], [100, 282]], np.float32)

    class NamesOnlyTheRefined:
        def __init__(self) -> None:
            self.calls = 0

        def identify(self, crops: Sequence[np.ndarray], *, corners: np.ndarray,
                     frame_index: int) -> list[tuple[FaceCandidate, ...]]:
            self.calls += 1
            return [() if np.allclose(c, card) else (FaceCandidate(face="mob.zombie", rotated_180=False, score=0.8),)
                    for c in corners]

    image = np.full((400, 400, 3), 90, np.uint8)
    tracker = CardTracker(TrackerConfig(frames_to_confirm=1))
    tracker.update(Detections(corners=card[None], scores=np.full(1, 0.9, np.float32)), image=image, frame_index=0)
    identifier = NamesOnlyTheRefined()
    assert identify_tracks(tracker, identifier, image, 0, PipelineConfig(refine_tolerance=0.1), refiner=Pulls(),
                           to_table=to_table, card_mm=(59.0, 91.0)) == 1
    assert identifier.calls == 2 and tracker.tracks[0].face == "mob.zombie"
    # Named at the finder's outline, the refined one is not tried.
    class CountsAndNames(_NamesAll):
        calls = 0

        def identify(self, crops: Sequence[np.ndarray], *, corners: np.ndarray,
                     frame_index: int) -> list[tuple[FaceCandidate, ...]]:
            self.calls += 1
            return super().identify(crops, corners=corners, frame_index=frame_index)

    named = CardTracker(TrackerConfig(frames_to_confirm=1))
    named.update(Detections(corners=card[None], scores=np.full(1, 0.9, np.float32)), image=image, frame_index=0)
    every = CountsAndNames()
    identify_tracks(named, every, image, 0, PipelineConfig(refine_tolerance=0.1), refiner=Pulls(),
                    to_table=to_table, card_mm=(59.0, 91.0))
    assert every.calls == 1 and named.tracks[0].face == "wood-1"


def test_a_zone_whose_cards_are_all_new_tracks_is_renewed() -> None:
    def card(track: int, zone: str) -> ZonedCard:
        return ZonedCard(track_id=track, zone=zone, first_frame=0, rotated_180=False,
                         candidates=(Candidate(face="landscape.taiga", score=0.9),))

    contents = ZoneContents(zones={"display-1": (card(7, "display-1"),), "display-2": (card(3, "display-2"),),
                                   "mobs": (card(9, "mobs"), card(4, "mobs")), "display-3": ()}, outside=())
    last = {"display-1": ((2, "landscape.taiga"),), "display-2": ((3, "landscape.taiga"),),
            "mobs": ((4, "mob.zombie"), (5, "mob.witch")), "display-3": ((6, "landscape.woods"),)}
    readable = frozenset({"display-1", "display-2", "display-3", "mobs", "discard"})
    # display-1: another card, looking the same; display-2: the same track; mobs: one card
    # stayed; display-3: emptied; discard: never read before.
    assert renewed_zones(contents, readable, last) == {"display-1"}
    assert renewed_zones(contents, frozenset({"display-2"}), last) == frozenset()
    snapshot = build_snapshot(contents, readable, 5, 0.2, last_read=last)
    assert snapshot.renewed == {"display-1"}
    assert build_snapshot(contents, readable, 5, 0.2).renewed is None


def test_a_far_card_foreshortened_to_look_wide_is_turned_round_by_how_its_crop_was_cut() -> None:
    # A portrait card of the player across the table (facing 180 degrees), seen so steeply
    # that it looks wider than tall; its crop was cut portrait along its first edge (from the
    # image's left to right, -10 degrees on the table). Read upside down in that crop it lies
    # as its owner laid it; read upright, it was turned round (a damaged tool).
    quad = np.array([[60, 80], [100, 80], [100, 100], [60, 100]], np.float64)  # 40 x 20 px

    def far(rotated: bool, cut_wide: bool | None) -> Track:
        return replace(track(1, (0.0, 0.0), 0), corners=quad, angle_deg=-10.0, rotated_180=rotated,
                       cut_wide=cut_wide)

    assert not turned_round(far(True, False), 180.0)
    assert turned_round(far(False, False), 180.0)
    assert turned_round(far(True, True), 180.0) != turned_round(far(True, False), 180.0)  # a quarter off
    # A card no crop has named yet has no turn read.
    assert not turned_round(far(False, None), 180.0)


def test_identify_tracks_records_how_the_kept_crop_was_cut() -> None:
    class ReadsPortraitOnly:
        def identify(self, crops: Sequence[np.ndarray], *, corners: np.ndarray,
                     frame_index: int) -> list[tuple[FaceCandidate, ...]]:
            return [(FaceCandidate(face="wood-1", rotated_180=True, score=0.9),) if c.shape[0] > c.shape[1] else ()
                    for c in crops]

    image = np.full((300, 300, 3), 90, np.uint8)
    square = np.array([[100, 100], [160, 100], [160, 160], [100, 160]], np.float32)  # cut both ways
    tracker = CardTracker(TrackerConfig(frames_to_confirm=1))
    tracker.update(Detections(corners=square[None], scores=np.full(1, 0.9, np.float32)), image=image, frame_index=0)
    identify_tracks(tracker, ReadsPortraitOnly(), image, 0, PipelineConfig())
    (t,) = tracker.tracks
    assert t.cut_wide is False and t.rotated_180


def test_visibility_masks_take_out_each_set_of_the_cards_that_may_lie_on_top() -> None:
    card = np.array([[100, 100], [160, 100], [160, 184], [100, 184]], np.float32)  # 60 x 84, portrait
    right = card + np.array([30.0, 0.0], np.float32)  # lies on its right half
    below = card + np.array([0.0, 60.0], np.float32)  # on its lowest 24 px
    (one,) = visibility_masks(card, True, [right])
    assert one.shape == (112, 80)
    assert one[:, :38].all() and not one[:, 42:].any()
    masks = visibility_masks(card, True, [right, below])
    assert len(masks) == 3  # the right card, the lower one, both
    assert masks[1][:76].all() and not masks[1][-28:].any()  # 24 of 84 px: 32 of the crop's 112 rows
    assert not masks[2][:, 42:].any() and not masks[2][-28:].any() and masks[2][:76, :38].all()
    # Cut landscape (the card's long edge first), the mask has the crop's shape.
    (wide,) = visibility_masks(card[[1, 2, 3, 0]], False, [right])
    assert wide.shape == (80, 112)
    assert 0.4 < wide.mean() < 0.6
    assert visibility_masks(card, True, []) == []


def _lay(image: np.ndarray, face: np.ndarray, quad: np.ndarray) -> None:
    """Draws a face image into `image` at `quad` (TL, TR, BR, BL)."""
    h, w = face.shape[:2]
    src = np.array([[0, 0], [w, 0], [w, h], [0, h]], np.float32)
    cv2.warpPerspective(face, cv2.getPerspectiveTransform(src, quad), image.shape[1::-1], dst=image,
                        borderMode=cv2.BORDER_TRANSPARENT)


def test_a_card_of_a_fan_is_named_from_what_shows_of_it(tmp_path: Path) -> None:
    from engine.catalog import load_catalog
    from vision.art.pack import save_pack
    from vision.art.proxy import render_face
    from vision.identify import Gallery, Identifier

    faces = ("wood-3", "diamond-1", "creeper", "tnt", "iron-2", "gold-sword/craft")
    catalog = load_catalog("minecraft-card-game")
    images = {f: render_face(catalog, f, 120) for f in faces}
    pack = save_pack(tmp_path / "pack", game="minecraft-card-game", name="fan", source="proxy", images=images)
    embedder = Identifier()
    identifier = GalleryIdentifier(embedder, Gallery.build(pack, embedder, cache_dir=tmp_path / "cache"))
    assert identifier.reads_covered
    # Three cards fanned left to right, each laid on the last, 42 % of a card apart.
    image = np.full((300, 420, 3), (70, 90, 60), np.uint8)
    first = np.array([[80, 100], [140, 100], [140, 184], [80, 184]], np.float32)
    laid = ("wood-3", "diamond-1", "creeper")
    quads = [first + np.array([25.0 * k, 0.0], np.float32) for k in range(3)]
    for face, quad in zip(laid, quads, strict=True):
        _lay(image, images[face], quad)

    def read(config: PipelineConfig, card_mm: tuple[float, float] | None = None) -> dict[int, str | None]:
        tracker = CardTracker(TrackerConfig(frames_to_confirm=1))
        tracker.update(Detections(corners=np.stack(quads), scores=np.full(3, 0.9, np.float32)),
                       image=image, frame_index=0)
        identify_tracks(tracker, identifier, image, 0, config, to_table=_squeezed(1.0), card_mm=card_mm)
        order = {t.track_id: k for k, t in enumerate(sorted(tracker.tracks, key=lambda t: float(t.corners[0][0])))}
        ids = [t.track_id for t in tracker.tracks]
        iou, seen = overlaps(tracker, ids, np.stack([t.corners for t in tracker.tracks]))
        assert np.all(np.diag(iou) == 0)  # a card does not cover itself
        # The middle card has a neighbour on each side; limited to one, the more overlapping.
        middle = next(k for k, t in enumerate(tracker.tracks) if abs(float(t.corners[0][0]) - 105.0) < 1)
        assert len(covering_quads(iou[middle], seen, 3)) == 2 and len(covering_quads(iou[middle], seen, 1)) == 1
        return {order[t.track_id]: t.face for t in tracker.tracks}

    on = PipelineConfig(read_covered=True)
    assert read(on) == {0: "wood-3", 1: "diamond-1", 2: "creeper"}
    whole = read(PipelineConfig())  # off by default
    assert whole[2] == "creeper"  # the card on top reads whole
    assert whole[0] != "wood-3" or whole[1] != "diamond-1"  # the covered ones mostly do not
    # Measured on the table, the outlines are a card's (60 x 84 px at 1 px per mm): read so.
    assert read(on, card_mm=(60.0, 84.0)) == {0: "wood-3", 1: "diamond-1", 2: "creeper"}
    # Outlines half again as wide as the layout's cards: which part shows is not known.
    assert read(on, card_mm=(40.0, 84.0)) == whole
    assert read(replace(on, covered_shape=None), card_mm=(40.0, 84.0))[0] == "wood-3"
    # An answer from the visible part counts only when sure enough.
    assert read(replace(on, covered_sure=1.0)) == whole
    with pytest.raises(PipelineError, match="covered_by_at_most"):
        PipelineConfig(covered_by_at_most=0)
    with pytest.raises(PipelineError, match="covered_sure"):
        PipelineConfig(covered_sure=1.5)
    with pytest.raises(PipelineError, match="covered_shape"):
        PipelineConfig(covered_shape=0.0)


def test_the_truth_stand_in_reads_the_turn_against_the_crop_it_is_given() -> None:
    card = np.array([[0, 0], [30, 0], [30, 40], [0, 40]], np.float64)  # portrait: TL, TR, BR, BL
    assert not crop_turned(card, card, crop_wide=False)
    assert crop_turned(np.roll(card, 2, axis=0), card, crop_wide=False)
    # Cut landscape from the bottom-left corner: turned a quarter clockwise, its top is the
    # card's bottom; from the top-right corner, its top is the card's top.
    assert crop_turned(np.roll(card, 1, axis=0), card, crop_wide=True)
    assert not crop_turned(np.roll(card, -1, axis=0), card, crop_wide=True)


def test_the_truth_stand_in_names_the_card_on_top_where_a_crop_a_little_off_lies() -> None:
    from vision.synth.truth import CardTruth, ClipInfo, FrameTruth

    def card(face: str, x: float, y: float, visible: float) -> CardTruth:
        return CardTruth(face=face, corners=((x, y), (x + 40, y), (x + 40, y + 56), (x, y + 56)), visible=visible)

    # A pile, its top laid 2 px off the card under it, and beside it a fan's card 18 px along.
    pile = (card("wood-1", 100, 100, 0.1), card("iron-2", 102, 101, 1.0), card("gold-1", 120, 100, 0.9))
    truth = Truth(clip=ClipInfo(game="minecraft-card-game", frame_size=(400, 300)),
                  frames=(FrameTruth(index=7, cards=pile),))
    stand_in = TruthOracleIdentifier(truth)
    image = np.zeros((300, 400, 3), np.uint8)

    def named(quad: np.ndarray, frame: int = 7) -> str | None:
        (answer,) = stand_in.identify([crop_card(image, quad)], corners=quad[None], frame_index=frame)
        return answer[0].face if answer else None

    top = np.array(pile[1].corners, np.float32)
    # A finder's corners a pixel or three off, nearer the buried card's centre than the top's.
    assert named(top + np.array([-2.5, -1.5], np.float32)) == "iron-2"
    assert named(top + np.array([1.0, 0.5], np.float32)) == "iron-2"
    assert named(np.array(pile[2].corners, np.float32) + 1.5) == "gold-1"  # the fan's card, not the pile's top
    assert named(top + 200) is None  # no card there: a false detection
    assert named(top, frame=8) is None  # a frame the truth does not list


def _all_requests(tracker: CardTracker) -> tuple[IdentifyRequest, ...]:
    return tuple(IdentifyRequest(track_id=t.track_id, detection_index=int(t.detection_index), corners=t.corners,
                                 reason=IdentifyReason.APPEARANCE)
                 for t in tracker.tracks if t.detection_index is not None)


class _NamesAll:
    def identify(self, crops: Sequence[np.ndarray], *, corners: np.ndarray,
                 frame_index: int) -> list[tuple[FaceCandidate, ...]]:
        return [(FaceCandidate(face="wood-1", rotated_180=False, score=0.9),) for _ in crops]


def test_a_card_left_unknown_is_not_cropped_again_until_its_time_or_its_look_changes() -> None:
    class NamesNothing:
        def __init__(self) -> None:
            self.calls = 0

        def identify(self, crops: Sequence[np.ndarray], *, corners: np.ndarray,
                     frame_index: int) -> list[tuple[FaceCandidate, ...]]:
            self.calls += len(crops)
            return [() for _ in crops]

    image = np.full((200, 300, 3), 90, np.uint8)
    quad = np.array([[50, 40], [113, 40], [113, 128], [50, 128]], np.float32)
    config = PipelineConfig.for_game("minecraft-card-game", fps=10)
    assert config.tracker.retry_unnamed_frames == 5
    tracker = CardTracker(replace(config.tracker, frames_to_confirm=1))
    identifier = NamesNothing()
    asked = []
    for frame in range(7):
        tracker.update(Detections(corners=quad[None], scores=np.array([0.9], np.float32)),
                       image=image, frame_index=frame)
        before = identifier.calls
        identify_tracks(tracker, identifier, image, frame, config)
        asked.append(identifier.calls > before)
    assert asked == [True, False, False, False, False, True, False]


def _flat(points: np.ndarray) -> np.ndarray:
    """A camera straight over the table, one millimetre a pixel."""
    return np.asarray(points, np.float64)


def _turned(centre: tuple[float, float], size: tuple[float, float], degrees: float) -> np.ndarray:
    """A rectangle's corners, its first edge `size[0]` long, turned `degrees`."""
    a = np.radians(degrees)
    u = np.array([np.cos(a), np.sin(a)]) * size[0] / 2
    v = np.array([-np.sin(a), np.cos(a)]) * size[1] / 2
    c = np.asarray(centre, np.float64)
    return np.stack([c - u - v, c + u - v, c + u + v, c - u + v]).astype(np.float32)


def test_square_cuts_lie_square_on_the_table_at_the_corners_centre_and_angle() -> None:
    # Found turned 9 degrees and a tenth short: cut square (nine shifts) and at its own angle (nine).
    found = _turned((200.0, 150.0), (36.0, 54.0), 9.0)
    cuts = square_cuts(found, _flat, _flat, (40.0, 60.0), 0.1)
    assert cuts.shape == (18, 4, 2)
    np.testing.assert_allclose(cuts[0], _turned((200.0, 150.0), (40.0, 60.0), 0.0), atol=1e-3)
    np.testing.assert_allclose(cuts[9], _turned((200.0, 150.0), (40.0, 60.0), 9.0), atol=1e-3)
    centres = cuts[:9].mean(axis=1) - np.array([200.0, 150.0])
    assert sorted(map(tuple, np.round(centres).astype(int).tolist())) == sorted(
        (dx, dy) for dx in (-4, 0, 4) for dy in (-6, 0, 6))  # a tenth of each side, every way
    # Square already: only the nine. Long edge first, corners running the other way: kept so.
    assert square_cuts(_turned((200.0, 150.0), (40.0, 60.0), 1.0), _flat, _flat, (40.0, 60.0), 0.1).shape == (9, 4, 2)
    backwards = _turned((200.0, 150.0), (60.0, 40.0), 90.0)[::-1]
    first = square_cuts(backwards, _flat, _flat, (40.0, 60.0), 0.1)[0]
    edges = np.roll(first, -1, axis=0) - first
    np.testing.assert_allclose(np.linalg.norm(edges, axis=1), [60.0, 40.0, 60.0, 40.0], atol=1e-3)
    b = backwards - backwards.mean(axis=0)
    f = first - first.mean(axis=0)
    assert np.sign(b[0, 0] * b[1, 1] - b[0, 1] * b[1, 0]) == np.sign(f[0, 0] * f[1, 1] - f[0, 1] * f[1, 0])


def test_a_still_card_not_named_when_asked_again_is_cut_square_on_the_table() -> None:
    true = _turned((150.0, 100.0), (40.0, 60.0), 0.0)

    class NamesTrueCutsOnly:
        """Names a crop only where it was cut at the card's true corners."""

        def __init__(self, score: float) -> None:
            self.score = score
            self.crops = 0

        def identify(self, crops: Sequence[np.ndarray], *, corners: np.ndarray,
                     frame_index: int) -> list[tuple[FaceCandidate, ...]]:
            self.crops += len(crops)
            return [(FaceCandidate(face="mob.spider", rotated_180=False, score=self.score),)
                    if np.abs(np.asarray(c) - true).max() < 1.0 else () for c in corners]

    image = np.full((300, 300, 3), 90, np.uint8)
    found = _turned((150.0, 94.0), (36.0, 54.0), 9.0)  # turned, short and off centre: the same every frame

    def run(config: PipelineConfig, score: float = 0.95, neighbour: bool = False) -> tuple[list[int], str | None]:
        tracker = CardTracker(replace(config.tracker, frames_to_confirm=1))
        identifier = NamesTrueCutsOnly(score)
        # The neighbour lies below, clear of the corners found (quad IoU 0.015) but not of the
        # whole card's outline around them (0.043).
        quads = np.stack([found, _turned((150.0, 149.0), (40.0, 60.0), 0.0)]) if neighbour else found[None]
        asked = []
        for frame in range(6):
            tracker.update(Detections(corners=quads, scores=np.full(len(quads), 0.9, np.float32)),
                           image=image, frame_index=frame)
            before = identifier.crops
            identify_tracks(tracker, identifier, image, frame, config, to_table=_flat, card_mm=(40.0, 60.0),
                            from_table=_flat)
            asked.append(identifier.crops - before)
        return asked, tracker.tracks[0].face

    config = PipelineConfig.for_game("minecraft-explorers", fps=10)  # asked again after 5 frames
    # First asked as found, not named; asked again unchanged: cut square as well, and named.
    assert run(config) == ([1, 0, 0, 0, 0, 19], "mob.spider")
    assert run(replace(config, retry_cuts=None)) == ([1, 0, 0, 0, 0, 1], None)
    assert run(config, score=0.7)[1] is None  # not sure enough for a name found by trying cuts
    # A card of a row whose whole outline takes in the next card's edge: not cut square (the
    # neighbour, whose own outline is clear, is: 2 crops as found and its 9 square cuts).
    assert run(config, neighbour=True) == ([2, 0, 0, 0, 0, 11], None)
    with pytest.raises(PipelineError, match="retry_cuts"):
        PipelineConfig(retry_cuts=0.6)


def test_candidates_merge_both_turns_and_requests_put_new_cards_first() -> None:
    scores, rotated = merge_candidates([
        FaceCandidate(face="a", rotated_180=True, score=0.6),
        FaceCandidate(face="b", rotated_180=False, score=0.3),
        FaceCandidate(face="a", rotated_180=False, score=0.1),
    ])
    assert scores == {"a": 0.6, "b": 0.3} and rotated
    quad = np.zeros((4, 2), np.float32)
    requests = [
        IdentifyRequest(track_id=1, detection_index=0, corners=quad, reason=IdentifyReason.MOVED),
        IdentifyRequest(track_id=2, detection_index=1, corners=quad, reason=IdentifyReason.NEW),
        IdentifyRequest(track_id=3, detection_index=2, corners=quad, reason=IdentifyReason.APPEARANCE),
    ]
    assert [r.track_id for r in identify_requests(requests, 2)] == [2, 3]
    # A card asked about again unchanged waits behind every other reason: it can wait a frame.
    retry = IdentifyRequest(track_id=0, detection_index=3, corners=quad, reason=IdentifyReason.RETRY)
    unsure = IdentifyRequest(track_id=4, detection_index=4, corners=quad, reason=IdentifyReason.UNSURE)
    assert [r.track_id for r in identify_requests([retry, unsure, *requests], 5)] == [2, 3, 1, 4, 0]


def test_moves_compare_without_reveals_and_with_payments_as_sets() -> None:
    a = {"player": 1, "move": "craft", "pay": ["wood-1", "iron-2"], "reveal": {"craft-pile-1": "x"}}
    b = {"player": 1, "move": "craft", "pay": ["iron-2", "wood-1"]}
    assert move_key(a) == move_key(b)
    score = score_moves([(10, a), (12, {"move": "end-turn"})], [(8, b), (20, {"move": "mine"})])
    assert (score.matched, score.precision, score.recall, score.delays_frames) == (1, 0.5, 0.5, (2,))


def test_config_errors_name_the_field() -> None:
    with pytest.raises(PipelineError, match="max_identify_per_frame"):
        PipelineConfig(max_identify_per_frame=0)
    with pytest.raises(PipelineError, match="fps"):
        PipelineConfig.for_game("minecraft-card-game", fps=0)
    assert PipelineConfig.for_game("minecraft-card-game", fps=15).settle.still_frames == 4
    assert PipelineConfig.for_game("minecraft-card-game", fps=30).settle.still_frames == 8


def test_games_with_fans_read_the_finder_s_adjacent_peaks() -> None:
    assert PipelineConfig.for_game("minecraft-card-game").finder.peaks is Peaks.ADJACENT
    assert not PipelineConfig.for_game("minecraft-card-game").refine_covered
    for game in ("minecraft-explorers", "minecraft-mk1", "angry-birds-power-cards"):
        assert PipelineConfig.for_game(game).finder.peaks is Peaks.LOCAL
        assert PipelineConfig.for_game(game).refine_covered
    custom = FinderConfig(threshold=0.4)
    assert PipelineConfig.for_game("minecraft-card-game", finder=custom).finder is custom


def test_a_quiet_table_is_read_while_only_its_excepted_zones_move() -> None:
    """The whole table is read once every zone is settled, but for the zones of
    `quiet_except` (the Explorers hunger cards, turned back as the next player reaches out):
    the other zones are read while these move, and these only once settled themselves."""
    zones = ("mobs", "mob-deck", "hunger", "player-2")
    contents = ZoneContents(zones={z: () for z in zones}, outside=())

    def settle(settled: set[str]) -> SettleState:
        return SettleState(frame_index=0, settled=frozenset(settled), changed_since_last_settle=frozenset(),
                           hands_over=frozenset(), reached=frozenset(), motion={z: 0.0 for z in zones},
                           hand_mask=np.zeros((1, 1), bool), scale=1)

    plain = PipelineConfig()
    explorers = PipelineConfig.for_game("minecraft-explorers")
    assert explorers.quiet_except == {"hunger"} and not plain.quiet_except
    still = {"mobs", "mob-deck", "player-2"}
    assert readable_zones(contents, settle(still), plain) == frozenset()
    assert readable_zones(contents, settle(still), explorers) == still
    assert readable_zones(contents, settle(still | {"hunger"}), explorers) == set(zones)
    # Any other zone moving still holds the whole table back.
    assert readable_zones(contents, settle({"mobs", "hunger"}), explorers) == frozenset()
    assert readable_zones(contents, settle({"mobs"}), replace(plain, quiet_table=False)) == {"mobs"}
    for game in ("minecraft-card-game", "minecraft-mk1", "angry-birds-power-cards"):
        assert not PipelineConfig.for_game(game).quiet_except


class _BrokenIdentifier:
    def identify(self, crops: Any, *, corners: np.ndarray, frame_index: int) -> list[Any]:
        return []


class _OneCardFinder:
    def find(self, image: np.ndarray, *, frame_index: int) -> Detections:
        quad = np.array([[[600, 300], [663, 300], [663, 388], [600, 388]]], np.float32)
        return Detections(corners=quad, scores=np.ones(1, np.float32))


def test_an_identifier_that_answers_too_few_crops_is_a_clear_error() -> None:
    truth = _truth()
    pipeline = Pipeline(
        PipelineConfig.for_game("minecraft-card-game", camera_check=False,
                                tracker=TrackerConfig(frames_to_confirm=1)),
        game="minecraft-card-game", players=2, profile=profile_from_truth(truth),
        finder=_OneCardFinder(), identifier=_BrokenIdentifier(),
    )
    image = np.zeros((720, 1280, 3), np.uint8)
    with pytest.raises(PipelineError, match="one candidate list per crop"):
        pipeline.process(Frame(index=0, time=0.0, image=image, source="test"))


def test_only_cards_of_spreads_and_loose_cards_are_read_from_their_visible_part() -> None:
    truth = _truth()
    common: dict[str, Any] = {"game": "minecraft-card-game", "players": 2, "profile": profile_from_truth(truth),
                              "finder": _OneCardFinder(), "identifier": _BrokenIdentifier()}
    with pytest.raises(PipelineError, match="cannot read a covered card"):  # it has no identify_visible
        Pipeline(PipelineConfig.for_game("minecraft-card-game", camera_check=False, read_covered=True), **common)
    pipeline = Pipeline(PipelineConfig.for_game("minecraft-card-game", camera_check=False), **common)
    layout = pipeline.layout
    points = np.array([layout.zone("resource-pile-2").center, layout.zone("player-1").center,
                       layout.zone("reserve-1").center, layout.zone("discard").center, (-5000.0, -5000.0)])
    # A pile shows its top only, a holder one card; a player's area is a spread, and a card
    # outside every zone (a TNT blast laid out) may lie under another too.
    assert pipeline._may_be_covered(points).tolist() == [False, True, False, False, True]


class _ZoomingFinder(_OneCardFinder):
    def __init__(self) -> None:
        self.zoomed: list[tuple[tuple[ZoomRegion, ...], float]] = []

    def zoom_into(self, regions: Sequence[ZoomRegion], zoom: float) -> None:
        self.zoomed.append((tuple(regions), zoom))


def test_with_zoom_the_finder_reads_each_players_area_closer() -> None:
    truth = _truth()
    profile = profile_from_truth(truth)
    finder = _ZoomingFinder()
    pipeline = Pipeline(PipelineConfig.for_game("minecraft-card-game", camera_check=False, zoom=FAN_ZOOM),
                        game="minecraft-card-game", players=2, profile=profile, finder=finder,
                        identifier=_BrokenIdentifier())
    ((regions, zoom),) = finder.zoomed
    assert zoom == FAN_ZOOM and len(regions) == 2  # the two players' areas, not their holders
    for region, zone in zip(regions, ("player-1", "player-2"), strict=True):
        poly = pipeline.zone_polygons[zone]
        assert region.inner == pytest.approx((*poly.min(axis=0), *poly.max(axis=0)))
        (w, h), (cx, cy) = pipeline.layout.card_mm, pipeline.layout.zone(zone).center
        corners = profile.table_to_image(np.array([[cx, cy], [cx + w, cy], [cx + w, cy + h], [cx, cy + h]]))
        diagonal = np.linalg.norm(corners[2] - corners[0])
        assert region.margin == pytest.approx(ZOOM_MARGIN * diagonal, rel=0.05)  # a card's size there
    # By default the finder is never asked to zoom.
    finder = _ZoomingFinder()
    Pipeline(PipelineConfig.for_game("minecraft-card-game", camera_check=False), game="minecraft-card-game",
             players=2, profile=profile, finder=finder, identifier=_BrokenIdentifier())
    assert finder.zoomed == [] and PipelineConfig.for_game("minecraft-card-game").zoom is None
    for bad in (0.0, -1.0, float("nan")):
        with pytest.raises(PipelineError, match="zoom: must be more than 0"):
            PipelineConfig(zoom=bad)


# -- the whole clip -------------------------------------------------------------------------------

_CACHE: dict[str, Any] = {}


def _truth() -> Truth:
    if not (CLIP / "truth.json.gz").is_file():
        pytest.skip(f"bundled footage {CLIP.name} is not rendered (cardtrack synth footage)")
    if "truth" not in _CACHE:
        _CACHE["truth"] = load_truth(CLIP / "truth.json.gz")
    truth: Truth = _CACHE["truth"]
    return truth


@pytest.fixture(scope="module")
def clip_run() -> tuple[Truth, Pipeline, list[PipelineStep]]:
    truth = _truth()
    game, players = truth.clip.game, truth.clip.players
    assert game is not None and players is not None
    ruleset = get_game(game)
    pipeline = Pipeline(
        PipelineConfig.for_game(game, fps=truth.clip.fps, camera_check=False),
        game=game, players=players, profile=profile_from_truth(truth),
        finder=TruthOracleFinder(truth, corner_noise_px=0.5, seed=7),
        identifier=TruthOracleIdentifier(truth),
        setup=setup_from_truth(truth, ruleset),
    )
    steps = []
    with open_source(CLIP / "clip.mp4") as source:
        for frame in source:
            step = pipeline.process(frame)
            if step.snapshot is not None:
                steps.append(step)
    return truth, pipeline, steps


def test_the_clip_read_through_the_truth_stand_ins_gives_the_truth_moves_and_scores(
    clip_run: tuple[Truth, Pipeline, list[PipelineStep]],
) -> None:
    truth, pipeline, steps = clip_run
    emitted = [(s.frame_index, m) for s in steps for m in s.move_dicts]
    expected = [(m.frame, dict(m.move)) for m in truth.moves]
    score = score_moves(emitted, expected)
    # Measured: see MIN_RECALL and MIN_PRECISION.
    assert score.recall >= MIN_RECALL, (score, emitted)
    assert score.precision >= MIN_PRECISION, (score, emitted)
    assert all(d >= 0 for d in score.delays_frames), "a move was read before it was complete"
    assert truth.final_state is not None
    view = pipeline.ruleset.view(pipeline.belief, Audience.OPERATOR)
    assert view["scores"] == truth.final_state["scores"]


def test_a_zone_that_never_settles_holds_back_only_the_moves_it_is_part_of() -> None:
    """A hand that stays over one zone (here a craft pile no move of the clip touches)
    keeps the quiet table from ever coming. With `busy_reads` (Mattel) the zones that settled
    are read on their own and sure reads are taken: the clip's moves are read as they are
    without the resting hand. Without it nothing is read after the opening table."""
    truth = _truth()
    game, players = truth.clip.game, truth.clip.players
    assert game is not None and players is not None
    expected = [(m.frame, dict(m.move)) for m in truth.moves]
    resting = "craft-pile-4"
    assert all(m.move.get("from") != resting and m.move.get("pile") != 4 for m in truth.moves)

    def read(config: PipelineConfig) -> tuple[list[tuple[int, dict[str, Any]]], Pipeline]:
        pipeline = Pipeline(config, game=game, players=players, profile=profile_from_truth(truth),
                            finder=TruthOracleFinder(truth, corner_noise_px=0.5, seed=7),
                            identifier=TruthOracleIdentifier(truth), setup=setup_from_truth(truth, get_game(game)))
        gate = pipeline.gate.update

        def held(image: np.ndarray, *, frame_index: int | None = None) -> SettleState:
            state = gate(image, frame_index=frame_index)
            if frame_index is not None and frame_index > 20:  # after the opening table is read
                return replace(state, settled=state.settled - {resting})
            return state

        pipeline.gate.update = held  # type: ignore[method-assign]
        emitted = []
        with open_source(CLIP / "clip.mp4") as source:
            for frame in source:
                step = pipeline.process(frame)
                assert step.snapshot is None or frame.index <= 20 or resting not in step.snapshot.settled
                emitted += [(step.frame_index, m) for m in step.move_dicts]
        return emitted, pipeline

    config = PipelineConfig.for_game(game, fps=truth.clip.fps, camera_check=False)
    assert config.busy_reads
    emitted, pipeline = read(config)
    score = score_moves(emitted, expected)
    assert score.recall >= MIN_RECALL and score.precision >= MIN_PRECISION, (score, emitted)
    assert truth.final_state is not None
    assert pipeline.ruleset.view(pipeline.belief, Audience.OPERATOR)["scores"] == truth.final_state["scores"]
    emitted, _ = read(replace(config, busy_reads=False))
    assert emitted == []


def test_snapshots_carry_candidates_and_moves_carry_evidence(
    clip_run: tuple[Truth, Pipeline, list[PipelineStep]],
) -> None:
    _, pipeline, steps = clip_run
    first = steps[0]
    assert first.snapshot is not None and first.snapshot.settled == frozenset(pipeline.zone_ids)
    assert not first.moves, "the opening table is the setup: nothing happened"
    with_moves = [s for s in steps if s.moves]
    assert with_moves
    for step in with_moves:
        assert step.evidence is not None
        assert step.evidence["frame"] == step.frame_index
        assert step.evidence["zones"], "evidence lists the candidates of the zones read"
        assert set(step.timings) >= {"find", "track", "identify", "zones", "settle", "snapshot", "interpret"}
    assert any(step.evidence and step.evidence["reached"] for step in with_moves), "hands reach into zones"


def test_every_snapshot_shows_what_the_truth_frame_shows(
    clip_run: tuple[Truth, Pipeline, list[PipelineStep]],
) -> None:
    truth, pipeline, steps = clip_run
    layout = pipeline.layout
    piles = {z.id for z in layout.zones if str(z.stacking) in ("top-visible", "single")}
    frames = {f.index: f for f in truth.frames}
    # The tracker keeps a card it stops seeing for `frames_to_forget` frames (a hand passing
    # over it): such a card may still be read in a spread, none it did not see lately.
    memory = pipeline.config.tracker.frames_to_forget
    compared = wrong = 0
    for step in steps:
        assert step.snapshot is not None
        cards = [c for c in frames[step.frame_index].cards if c.visible >= 0.3 and c.zone]
        lately = [c for i in range(max(0, step.frame_index - memory), step.frame_index)
                  for c in frames[i].cards if c.visible >= 0.3 and c.zone]
        for zone in step.snapshot.settled:
            seen = [c.best.face for c in step.snapshot.cards(zone)]
            there = [c for c in cards if c.zone == zone]
            if zone in piles:
                compared += 1
                wrong += seen[:1] != ([max(there, key=lambda c: c.visible).face] if there else [])
                continue
            expected = Counter(c.face for c in there)
            may = expected | Counter(c.face for c in lately if c.zone == zone)
            compared += 1
            wrong += bool(expected - Counter(seen)) or bool(Counter(seen) - may)
    assert compared > 100
    assert wrong == 0, f"{wrong} of {compared} zone readings differ from the truth"


MIN_RECALL = 0.95  # measured 1.00 (8 of 8)
# Measured 1.00, 8 read (also with a zone held busy, a675c33); 0.85 lets at most one move made
# up on the 8-move clip pass (the clip before f61a918 read 0.80: two end-turns added).
MIN_PRECISION = 0.85


def test_run_headless_prints_moves_as_json_lines_and_records_them(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """`cardtrack run --headless` on the bundled clip, its models replaced by the stand-ins."""
    truth = _truth()

    def stand_ins(config: PipelineConfig | None = None, **kwargs: Any) -> Pipeline:
        for name in ("finder_path", "identifier_path", "threads", "pack", "identifier_inset"):
            kwargs.pop(name, None)
        return Pipeline(config, finder=TruthOracleFinder(truth), identifier=TruthOracleIdentifier(truth), **kwargs)

    monkeypatch.setattr(Pipeline, "from_models", staticmethod(stand_ins))
    journal = tmp_path / "game.sqlite"
    code = main(["run", "--source", str(CLIP / "clip.mp4"), "--headless", "--journal", str(journal)])
    assert code == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    moves = [line for line in lines if line["type"] == "move"]
    assert len(moves) >= len(truth.moves)
    assert all(m["evidence"]["frame"] == m["frame"] for m in moves)
    end = lines[-1]
    assert end["type"] == "end" and end["frames"] == len(truth.frames)
    assert truth.final_state is not None and end["scores"] == truth.final_state["scores"]
    # The journal holds the same moves, with their evidence, for replay.
    session = Session.start(journal_path=journal, game="minecraft-card-game", players=2)
    try:
        assert len(session.snapshot.moves) == len(moves)
    finally:
        session.close()


def test_run_without_a_model_names_the_file_and_how_to_train_it(capsys: pytest.CaptureFixture[str]) -> None:
    _truth()
    code = main(["run", "--source", str(CLIP / "clip.mp4"), "--headless", "--finder", "/nowhere/finder.onnx"])
    assert code == 2
    err = capsys.readouterr().err
    assert "/nowhere/finder.onnx" in err and "cardtrack train finder" in err


def test_the_reading_options_chosen_for_a_run_reach_its_pipeline(capsys: pytest.CaptureFixture[str]) -> None:
    """`cardtrack run --identifier-inset 0` reads each crop once (a slower machine may want the
    time back); by default the pipeline reads the shipped two views; a share out of range is
    refused before anything starts. `--read-covered` and `--zoom` (`add_reading_options`, shared
    with `cardtrack eval`) reach the pipeline's config and its finder the same way."""
    from cardtrack.cli import build_parser
    from cardtrack.commands.run import prepare
    from vision.identify import CARD_INSET

    _truth()
    source = str(CLIP / "clip.mp4")
    once, _, _ = prepare(build_parser().parse_args(["run", "--source", source, "--identifier-inset", "0"]))
    assert once.identifier.embedder.inset == 0.0
    shipped, _, _ = prepare(build_parser().parse_args(["run", "--source", source]))
    assert shipped.identifier.embedder.inset == CARD_INSET
    # A covered card is read from its visible part only when asked for.
    assert not shipped.config.read_covered and shipped.identifier.reads_covered
    covered, _, _ = prepare(build_parser().parse_args(["run", "--source", source, "--read-covered"]))
    assert covered.config.read_covered
    # The players' areas are read closer only when asked for; 0 turns it off.
    assert shipped.config.zoom is None and shipped.finder.regions == ()
    closer, _, _ = prepare(build_parser().parse_args(["run", "--source", source, "--zoom", "1.5"]))
    assert closer.config.zoom == 1.5 and len(closer.finder.regions) == 2
    never, _, _ = prepare(build_parser().parse_args(["run", "--source", source, "--zoom", "0"]))
    assert never.config.zoom is None
    with pytest.raises(SystemExit):
        main(["run", "--source", source, "--zoom", "-1"])
    assert "--zoom: expected a scale more than 0, or 0 for none" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["run", "--source", source, "--identifier-inset", "0.5"])
    assert "--identifier-inset: expected a share of the crop from 0 to under 0.5" in capsys.readouterr().err


def test_run_with_an_art_pack_of_another_game_says_so(capsys: pytest.CaptureFixture[str]) -> None:
    from vision.art.pack import proxy_pack

    _truth()
    other = proxy_pack("angry-birds-power-cards").root
    code = main(["run", "--source", str(CLIP / "clip.mp4"), "--headless", "--art", str(other)])
    assert code == 2
    err = capsys.readouterr().err
    assert str(other) in err and "not 'minecraft-card-game'" in err


def test_run_without_geometry_asks_for_a_calibration(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    clip = tmp_path / "clip.mp4"
    clip.write_bytes(b"")
    assert main(["run", "--source", str(clip), "--headless"]) == 2
    assert "--calibration" in capsys.readouterr().err


class _StubPipeline:
    """Stands in for the pipeline in feed tests: on frame 1 the operator corrects the game
    while the frame is being read, and the frame then yields a move decided before that."""

    game = "minecraft-card-game"
    players = 2
    def __init__(self, session: Session) -> None:
        self.zone_polygons: dict[str, np.ndarray] = {}
        self.session = session
        self.timer = StageTimer()
        self.beliefs: list[Any] = []

    def set_belief(self, belief: Any) -> None:
        self.beliefs.append(belief)

    def process(self, frame: Frame) -> PipelineStep:
        moves: tuple[dict[str, Any], ...] = ()
        if frame.index == 1:
            self.session.submit({"player": 1, "move": "mine", "pile": 2}, source="operator")
            moves = ({"player": 1, "move": "mine", "pile": 1},)
        return _step(frame, moves)


def _step(frame: Frame, moves: tuple[dict[str, Any], ...], amends: int = 0) -> PipelineStep:
    """A step of nothing seen that gives `moves` (amending `amends`), for feed tests."""
    settle = SettleState(
        frame_index=frame.index, settled=frozenset(), changed_since_last_settle=frozenset(),
        hands_over=frozenset(), reached=frozenset(), motion={}, hand_mask=np.zeros((1, 1), bool),
        scale=8,
    )
    return PipelineStep(
        frame_index=frame.index, time=frame.time, detections=Detections.empty(), tracks=(),
        zones=ZoneContents(zones={}, outside=()), settle=settle, snapshot=None,
        interpretation=None, moves=moves, move_dicts=moves, evidence={"frame": frame.index},
        camera=None, timings={}, amends=amends,
    )


def test_the_feed_drops_a_move_decided_before_an_operator_correction(tmp_path: Path) -> None:
    frames = tmp_path / "frames"
    frames.mkdir()
    for i in range(3):
        cv2.imwrite(str(frames / f"{i:03d}.png"), np.full((72, 128, 3), 40 * i, np.uint8))
    session = Session.start(journal_path=tmp_path / "j.sqlite", game="minecraft-card-game", players=2, seed=4)
    try:
        stub = _StubPipeline(session)
        feed = VisionFeed(stub, str(frames))  # type: ignore[arg-type]
        feed.run(session, threading.Event())
        assert feed.frames == 3 and feed.submitted == 0
        assert [m.source for m in session.snapshot.moves] == ["operator"]
        # The pipeline took the session's belief at the start and again after the correction.
        assert len(stub.beliefs) == 2 and stub.beliefs[-1] == session.snapshot.state
    finally:
        session.close()


class _ScriptedPipeline(_StubPipeline):
    """Stands in for the pipeline in feed tests: gives the moves (and amends) scripted per frame."""

    def __init__(self, session: Session, script: dict[int, tuple[tuple[dict[str, Any], ...], int]]) -> None:
        super().__init__(session)
        self.script = script

    def process(self, frame: Frame) -> PipelineStep:
        return _step(frame, *self.script.get(frame.index, ((), 0)))


def test_the_feed_sets_right_the_moves_the_pipeline_amends(tmp_path: Path) -> None:
    """A step that amends the newest moves (`PipelineStep.amends`: a move read in two parts)
    replaces them in the journal, with its evidence, or undoes those no move takes the place
    of; the game and the lines `--headless` prints follow."""
    frames = tmp_path / "frames"
    frames.mkdir()
    for i in range(4):
        cv2.imwrite(str(frames / f"{i:03d}.png"), np.full((72, 128, 3), 40 * i, np.uint8))
    mine = [{"player": 1, "move": "mine", "pile": n} for n in range(1, 6)]
    script = {1: ((mine[0], mine[1]), 0), 2: ((mine[2],), 1), 3: ((mine[3],), 2)}
    session = Session.start(journal_path=tmp_path / "j.sqlite", game="minecraft-card-game", players=2, seed=4)
    lines: list[dict[str, Any]] = []
    try:
        stub = _ScriptedPipeline(session, script)
        feed = VisionFeed(stub, str(frames), step_listener=lambda step, results: lines.extend(
            step_lines(step, results)))  # type: ignore[arg-type]
        feed.run(session, threading.Event())
        standing = session.snapshot.moves
        assert [(m.move["pile"], m.source) for m in standing] == [(4, "vision")]
        _, entries = session.entries_since(0)
        first, second = (e.seq for e in entries if e.kind.value == "move")
        amended = [(e.kind.value, e.target, e.frame, e.evidence or None) for e in entries
                   if e.kind.value in ("replace", "undo")]
        assert amended == [("replace", second, 2, {"frame": 2}), ("replace", first, 3, {"frame": 3}),
                           ("undo", second, None, None)]
        assert [(ln["type"], ln.get("target"), ln["move"]["pile"] if "move" in ln else None) for ln in lines
                if ln["type"] != "warning"] == [
            ("move", None, 1), ("move", None, 2), ("replace", second, 3), ("replace", first, 4), ("undo", second, None)]
    finally:
        session.close()

    # A correction the session refuses changes nothing written; the pipeline is given the
    # session's game back.
    session = Session.start(journal_path=tmp_path / "k.sqlite", game="minecraft-card-game", players=2, seed=4)
    lines.clear()
    try:
        stub = _ScriptedPipeline(session, {1: ((mine[0],), 0), 2: (({"player": 1, "move": "fly"},), 1)})
        feed = VisionFeed(stub, str(frames), step_listener=lambda step, results: lines.extend(
            step_lines(step, results)))  # type: ignore[arg-type]
        feed.run(session, threading.Event())
        assert [m.move["pile"] for m in session.snapshot.moves] == [1]
        assert [ln["type"] for ln in lines if ln["type"] != "warning"] == ["move", "refused"]
        assert stub.beliefs[-1] == session.snapshot.state
    finally:
        session.close()


class _BlindTo:
    """The truth stand-in, except that it never names `face`: a card half hidden by a mug."""

    def __init__(self, truth: Truth, face: str) -> None:
        self.inner = TruthOracleIdentifier(truth)
        self.face = face

    def identify(
        self, crops: Sequence[np.ndarray], *, corners: np.ndarray, frame_index: int
    ) -> list[tuple[FaceCandidate, ...]]:
        found = self.inner.identify(crops, corners=corners, frame_index=frame_index)
        return [() if any(c.face == self.face for c in cands) else cands for cands in found]


def _first_frames(identifier: Any, frames: int) -> list[PipelineStep]:
    truth = _truth()
    game, players = truth.clip.game, truth.clip.players
    assert game is not None and players is not None
    pipeline = Pipeline(
        PipelineConfig.for_game(game, fps=truth.clip.fps, camera_check=False),
        game=game, players=players, profile=profile_from_truth(truth),
        finder=TruthOracleFinder(truth, corner_noise_px=0.5, seed=7), identifier=identifier,
        setup=setup_from_truth(truth, get_game(game)),
    )
    steps = []
    with open_source(CLIP / "clip.mp4") as source:
        for frame in source:
            if frame.index >= frames:
                break
            steps.append(pipeline.process(frame))
    return steps


def test_a_zone_whose_card_is_never_named_is_reported_to_the_operator_after_a_while() -> None:
    # gold-axe lies on craft pile 3 from the first frame; an identifier that never names it
    # holds the zone unread, and after `unnamed_notice_seconds` of that the step and the
    # console's status line say which zone to look at.
    truth = _truth()
    notice = PipelineConfig().unnamed_notice_seconds
    blind = _first_frames(_BlindTo(truth, "gold-axe/craft"), 120)
    flagged = [s for s in blind if "craft-pile-3" in s.unnamed]
    assert flagged, "the zone was never reported"
    assert flagged[0].time >= notice
    assert not any("craft-pile-3" in s.unnamed for s in blind if s.time < notice)
    message = feed_message(flagged[-1])
    assert "craft-pile-3" in message and "cannot be named" in message
    seeing = _first_frames(TruthOracleIdentifier(truth), 120)
    assert not any(s.unnamed for s in seeing)
    assert feed_message(seeing[-1]) == ""


def test_the_operator_camera_view_draws_zones_and_cards(
    clip_run: tuple[Truth, Pipeline, list[PipelineStep]],
) -> None:
    from vision.annotate import annotate, encode_jpeg

    _, pipeline, steps = clip_run
    step = next(s for s in steps if s.tracks)
    blank = np.zeros((720, 1280, 3), np.uint8)
    view = annotate(blank, step, pipeline.zone_polygons)
    assert view.shape == (540, 960, 3)
    assert view.any(), "zones and cards are drawn"
    assert encode_jpeg(view)[:2] == b"\xff\xd8"
    assert not blank.any(), "the frame itself is left untouched"


def test_the_token_stand_in_counts_as_the_table_stands_once_each_move_is_done() -> None:
    from types import SimpleNamespace

    from vision.pipeline import TruthOracleTokenCounter
    from vision.synth.truth import Checkpoint, MoveTruth

    truth: Any = SimpleNamespace(
        moves=[MoveTruth(frame=40, move={"move": "eat"}), MoveTruth(frame=90, move={"move": "sleep"})],
        checkpoints=[Checkpoint(frame=10, zones={}, counts={"hunger-1": 3, "die": 0}),
                     Checkpoint(frame=60, zones={}, counts={"hunger-1": 5, "die": 0}),
                     Checkpoint(frame=110, zones={}, counts={"hunger-1": 5, "die": 4})],
    )
    counter = TruthOracleTokenCounter(truth)
    assert counter.zones == ("die", "hunger-1")
    image = np.zeros((4, 4, 3), np.uint8)
    assert dict(counter.counts(image, frame_index=39)) == {"hunger-1": 3, "die": 0}
    assert dict(counter.counts(image, ["hunger-1"], frame_index=45)) == {"hunger-1": 5}  # eaten, before the rest
    assert dict(counter.counts(image, frame_index=95)) == {"hunger-1": 5, "die": 4}
    with pytest.raises(PipelineError, match="frame index"):
        counter.counts(image)


def test_a_hand_reaches_a_zone_when_it_stays_there_not_when_it_passes_often() -> None:
    dwell: dict[str, tuple[float, float]] = {}
    frame = 1 / 15
    for reached in ({"armor"}, {"hunting"}, {"hunting"}, {"hunting"}, {"hunting"}, {"armor"}, {"armor"},
                    set(), {"armor"}):
        hand_dwell(dwell, frozenset(reached), frame)
    longest = {zone: stays[0] for zone, stays in dwell.items()}
    assert longest["hunting"] == pytest.approx(4 * frame)
    assert longest["armor"] == pytest.approx(2 * frame)  # passed over three times, twice in a row
    assert dwell["armor"][1] == pytest.approx(frame)  # the hand is there now
    assert dwell["hunting"][1] == 0.0


def test_roll_values_are_what_the_camera_saw_not_the_move() -> None:
    assert move_key({"player": 1, "move": "sleep", "roll": [2]}) == move_key({"player": 1, "move": "sleep"})


def scripted_gate(zones: frozenset[str], settled: frozenset[str], hands: frozenset[str]) -> Any:
    """A settle gate's `update` that says `settled` are settled and `hands` under a hand, in
    every frame, and that nothing changed to the gate's eye."""
    def update(image: np.ndarray, *, frame_index: int) -> SettleState:
        return SettleState(frame_index=frame_index, settled=settled, changed_since_last_settle=frozenset(),
                           hands_over=hands, reached=frozenset(), motion=dict.fromkeys(zones, 0.0),
                           hand_mask=np.zeros((1, 1), bool), scale=8)
    return update


def test_a_hand_that_stays_over_a_counter_zone_has_it_counted_again(tmp_path: Path) -> None:
    """A token taken or a die's new face changes too few pixels for the settle gate to flag the
    zone: a hand that stays over a counter zone (at least `reach_seconds`) is enough for the
    pipeline to count it again once it settles; a hand only passing over another is not."""
    from vision.art.pack import proxy_pack
    from vision.pipeline import TruthOracleFinder, TruthOracleIdentifier, TruthOracleTokenCounter
    from vision.synth.faces import FaceLibrary, faces_of_pack
    from vision.synth.footage import FootageConfig, make_footage

    game = "minecraft-mk1"
    config = FootageConfig(game=game, players=2, seed=0, moves=1, fps=10.0, size=(320, 180), effects=0.0)
    truth = make_footage(config, FaceLibrary(faces_of_pack(proxy_pack(game))), tmp_path, progress=False)
    asked: list[tuple[int, tuple[str, ...]]] = []

    class Recording(TruthOracleTokenCounter):
        def counts(self, image: np.ndarray, zones: Any = None, *, frame_index: int | None = None) -> Any:
            asked.append((int(frame_index or 0), tuple(zones or ())))
            return super().counts(image, zones, frame_index=frame_index)

    pipeline = Pipeline(PipelineConfig.for_game(game, fps=10.0, camera_check=False), game=game, players=2,
                        profile=profile_from_truth(truth), finder=TruthOracleFinder(truth),
                        identifier=TruthOracleIdentifier(truth), token_counter=Recording(truth))
    zones = frozenset(z.id for z in pipeline.layout.zones)

    image = np.zeros((180, 320, 3), np.uint8)
    assert pipeline.config.reach_seconds == 0.2
    script = [(zones, frozenset()),  # the table settles: everything is counted once
              (zones - {"hunger-1"}, frozenset({"hunger-1"})),  # an arm passes over hunger-1 (0.1 s)
              *[(zones - {"die"}, frozenset({"die"}))] * 3,  # a hand stays at the die (0.3 s)
              (zones, frozenset())]  # the hand has gone
    for i, (settled, hands) in enumerate(script):
        pipeline.gate.update = scripted_gate(zones, settled, hands)  # type: ignore[method-assign]
        pipeline.process(Frame(index=i, time=i / 10.0, image=image, source="stub"))
    assert asked[0][0] == 0 and {"die", "hunger-1"} <= set(asked[0][1])
    assert asked[1:] == [(5, ("die",))]


def test_a_zone_of_the_same_cards_read_otherwise_is_reread() -> None:
    def card(track: int, zone: str, face: str | None) -> ZonedCard:
        cands = () if face is None else (Candidate(face=face, score=0.9),)
        return ZonedCard(track_id=track, zone=zone, first_frame=0, rotated_180=False, candidates=cands)

    contents = ZoneContents(zones={
        "mobs": (card(4, "mobs", "mob.zombie"), card(5, "mobs", "mob.skeleton")),
        "player-1": (card(8, "player-1", "item.wood"), card(9, "player-1", "mob.zombie")),
        "player-2": (card(11, "player-2", "item.apple"),),
        "chests": (card(12, "chests", None),),
    }, outside=())
    taken = {"mobs": ((4, "mob.zombie"), (5, "mob.creeper")),  # the same two cards, one read otherwise
             "player-1": ((8, "item.wood"), (10, "mob.creeper")),  # a card went, another came
             "player-2": ((11, "item.apple"),),  # as it was
             "chests": ((12, "chest_01"),)}  # not named now: nothing read otherwise
    readable = frozenset({"mobs", "player-1", "player-2", "chests", "discard"})
    assert reread_zones(contents, readable, taken) == {"mobs"}
    assert reread_zones(contents, readable - {"mobs"}, taken) == frozenset()
    assert build_snapshot(contents, readable, 5, 0.2, taken=taken).reread == {"mobs"}
    assert build_snapshot(contents, readable, 5, 0.2).reread is None


@pytest.mark.parametrize("reread", [True, False])
def test_a_pile_top_a_hand_was_over_is_read_afresh_when_it_settles(tmp_path: Path, reread: bool) -> None:
    """The crafting sides of two Mattel craft cards look the same to the settle gate: the card
    under a crafted one kept the crafted card's track and name. With `reread_handled` (the
    Mattel default) a pile's top that a hand was over is read again once it settles, though
    the gate saw no change; a player's area a hand was over is not (it holds many cards, and
    each is read when its look changes)."""
    from vision.art.pack import proxy_pack
    from vision.synth.faces import FaceLibrary, faces_of_pack
    from vision.synth.footage import FootageConfig, make_footage

    game = "minecraft-card-game"
    config = FootageConfig(game=game, players=2, seed=0, moves=1, fps=10.0, size=(320, 180), effects=0.0)
    truth = make_footage(config, FaceLibrary(faces_of_pack(proxy_pack(game))), tmp_path, progress=False)
    asked: list[tuple[int, int]] = []

    class Recording(TruthOracleIdentifier):
        def identify(self, crops: Sequence[np.ndarray], *, corners: np.ndarray, frame_index: int) -> Any:
            asked.append((frame_index, len(crops)))
            return super().identify(crops, corners=corners, frame_index=frame_index)

    pipeline = Pipeline(PipelineConfig.for_game(game, fps=10.0, camera_check=False, reread_handled=reread),
                        game=game, players=2, profile=profile_from_truth(truth), finder=TruthOracleFinder(truth),
                        identifier=Recording(truth), setup=setup_from_truth(truth, get_game(game)))
    assert PipelineConfig.for_game(game).reread_handled and not PipelineConfig.for_game("minecraft-mk1").reread_handled
    zones = frozenset(z.id for z in pipeline.layout.zones)

    with open_source(tmp_path / "clip.mp4") as source:
        image = next(iter(source)).image
    hand = frozenset({"craft-pile-1", "player-1"})
    script = [(zones, frozenset())] * 3 + [(zones - hand, hand)] * 2 + [(zones, frozenset())] * 2
    for i, (settled, hands) in enumerate(script):
        pipeline.gate.update = scripted_gate(zones, settled, hands)  # type: ignore[method-assign]
        pipeline.process(Frame(index=i, time=i / 10.0, image=image, source="stub"))
    assert asked and asked[0][0] < 3 and asked[0][1] >= 10  # every card read once it is confirmed
    again = [n for i, n in asked if i == 5]
    # Frame 5: the hand has gone, the pile's one card is read again, the area's cards are not.
    assert again == ([1] if reread else [])
    assert not [n for i, n in asked if i in (3, 4, 6)]
