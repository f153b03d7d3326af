"""Reference bots: the engine's built-in policies behind the protocol client library.

Run one by name in a tournament or ``arena play`` (``random``, ``greedy``), or
directly: ``ARENA_TOKEN=T python -m sample_bots.greedy --endpoint E``.
"""
