"""The pure rules engine (RULES.md): options, presets, melds, game state. No I/O."""
