"""Tournaments: the TOML file format (``config``), the lazy round-robin schedule
with duplicate deal-sets (``schedule``), the crash-safe results journal
(``journal``), Plackett-Luce ratings with bootstrap intervals (``ratings``),
the standings tables built from a results folder (``standings``), and the
``runner`` that plays the scheduled games in worker processes.

Everything but ``runner`` is pure (no processes, no sockets).
"""
