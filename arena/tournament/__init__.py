"""Tournaments: the TOML file format (``config``), the lazy round-robin schedule
with duplicate deal-sets (``schedule``), the crash-safe results journal
(``journal``), Plackett-Luce ratings with bootstrap intervals (``ratings``) and
the standings tables built from a results folder (``standings``).

Everything here is pure (no processes, no sockets); the runner that plays the
scheduled games lives elsewhere.
"""
