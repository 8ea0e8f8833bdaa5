"""Vision: capture sources, card finder and identifier, tracker, settle gate, zone assignment."""
