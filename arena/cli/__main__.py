"""``python -m arena.cli``: the arena's commands (``arena.cli.app``)."""

from arena.cli import main

main()
