"""``python -m arena`` runs the command line."""

from arena.cli import app

app(prog_name="arena")
