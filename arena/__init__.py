"""The Rummy bot arena: rules engine, referee, tournaments."""

__version__ = "0.1.0"
