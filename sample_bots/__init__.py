"""Reference bots: the engine's built-in policies behind the protocol client library.

Run one by name in a tournament or ``arena play`` (``random``, ``greedy``, the house bot's
``house-easy``, ``house-medium``, ``house-hard``), or directly:
``ARENA_TOKEN=T python -m sample_bots.greedy --endpoint E``.  ``env_bot`` runs a policy
written against ``arena.env`` as a bot; ``linear_env`` is such a policy, trained and played.
"""
