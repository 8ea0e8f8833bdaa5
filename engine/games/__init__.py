"""The built-in games; importing this package registers each of them."""

from engine.games import (
    angry_birds_power_cards,
    minecraft_card_game,
    minecraft_explorers,
    minecraft_mk1,
)

__all__ = ["angry_birds_power_cards", "minecraft_card_game", "minecraft_explorers", "minecraft_mk1"]
