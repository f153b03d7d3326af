"""A ladder: a competition that takes submissions for weeks (docs/ARCHITECTURE.md, "The ladder").

``layout`` (the folder and its registry), ``settings`` (ladder.toml), ``submit`` (the door),
``games`` (every batch's journal as one list), ``schedule`` (who plays next), ``run`` (batches until
stopped), ``snapshot`` (what the server reads), ``final`` and ``export``; ``cli`` holds the commands.
"""
