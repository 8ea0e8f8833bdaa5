"""The faces and decks a synthetic scene draws from: art packs, proxy art and random designs.

`build_library` loads the art for a game (an art pack folder, or the built-in proxy art) and,
for `mixed` data, the proxy art of every other game and a family of random designs. A `Deck`
lists the physical cards a scene may lay out, each with its front and back face, from the
game's catalog (only cards whose two faces have images), so that a face-down pile shows the
right back and the truth can name the card. Faces of other games are namespaced
`<game>:<face id>` so that they never collide with the game's own ids.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from engine.catalog import load_catalog
from engine.errors import CatalogError
from vision.art.errors import PackError
from vision.art.pack import ArtPack, proxy_pack
from vision.art.pack import open_pack as pack_for
from vision.synth.errors import SynthError
from vision.synth.faces import FaceLibrary, faces_of_pack

GAMES = ("minecraft-card-game", "minecraft-explorers", "minecraft-mk1", "angry-birds-power-cards")


@dataclass(frozen=True, slots=True, kw_only=True)
class DeckCard:
    """A physical card: its catalog id (None for a random design) and its two faces."""

    card: str | None
    front: str
    back: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Deck:
    """The cards a scene may use, the game's own first."""

    game: str | None
    cards: tuple[DeckCard, ...]

    def sample(self, rng: np.random.Generator) -> DeckCard:
        return self.cards[int(rng.integers(len(self.cards)))]


def _deck_from_catalog(game: str, lib: FaceLibrary, prefix: str, own: bool) -> list[DeckCard]:
    try:
        catalog = load_catalog(game)
    except CatalogError:
        return []
    out: list[DeckCard] = []
    for card in catalog.cards.values():
        front, back = prefix + card.front, prefix + card.back
        if front in lib and back in lib:
            out.extend(DeckCard(card=card.id if own else None, front=front, back=back)
                       for _ in range(card.count))
    return out


def _design_deck(ids: list[str], rng: np.random.Generator) -> list[DeckCard]:
    """Random designs paired as cards: fronts share a few backs, as real decks do."""
    fronts = [i for i in ids if i.endswith("-front")]
    backs = [i for i in ids if i.endswith("-back")] or fronts[:1]
    return [DeckCard(card=None, front=f, back=backs[int(rng.integers(len(backs)))]) for f in fronts]


def open_pack(art: str, game: str, *, progress: bool = False) -> ArtPack:
    """`art` = "proxy" (the built-in proxy art of `game`) or an art pack folder for `game`."""
    try:
        return pack_for(art, game, progress=progress)
    except (PackError, CatalogError) as exc:
        raise SynthError(str(exc)) from None


def build_library(
    game: str,
    art: str,
    *,
    mixed: bool = False,
    seed: int = 0,
    designs: int = 120,
    full_bleed: bool = False,
    progress: bool = False,
) -> tuple[FaceLibrary, Deck]:
    """Faces and deck for `game` from `art`; `mixed` adds every other game's proxy art and
    `designs` random designs (in the full-bleed style with `full_bleed`; random designs alone
    also back a game with no pack faces)."""
    pack = open_pack(art, game, progress=progress)
    lib = FaceLibrary(faces_of_pack(pack))
    cards = _deck_from_catalog(game, lib, "", own=True)
    if not cards:
        raise SynthError(
            f"{pack.root / 'pack.json'}: no card of {game!r} has images for both its faces; "
            "complete the pack or use --art proxy"
        )
    if mixed:
        for other in GAMES:
            if other == game:
                continue
            try:
                other_pack = proxy_pack(other, progress=progress)
            except (PackError, CatalogError):
                continue  # a game without a catalog yet has no proxy art to mix in
            lib.extend(faces_of_pack(other_pack, prefix=f"{other}:"))
            cards += _deck_from_catalog(other, lib, f"{other}:", own=False)
        ids = lib.add_designs(seed, designs, full_bleed=full_bleed)
        cards += _design_deck(ids, np.random.default_rng([seed, 0xDEC]))
    return lib, Deck(game=game, cards=tuple(cards))


def design_library(seed: int, count: int) -> tuple[FaceLibrary, Deck]:
    """Random designs only (tests, and finders that must not see any real deck)."""
    lib = FaceLibrary()
    ids = lib.add_designs(seed, count)
    cards = _design_deck(ids, np.random.default_rng([seed, 0xDEC]))
    if not cards:
        raise SynthError(f"design family {seed} has no card fronts among {count} designs; use more")
    return lib, Deck(game=None, cards=tuple(cards))
