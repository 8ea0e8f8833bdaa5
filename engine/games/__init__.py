"""The built-in games; importing this package registers each of them."""

from engine.games import minecraft_card_game

__all__ = ["minecraft_card_game"]
