"""The Rummy bot arena: rules engine, referee, tournaments."""

from arena import compiled

__version__ = "0.1.0"

compiled.choose()  # before any module of the engine is imported: its mypyc build, or its source
