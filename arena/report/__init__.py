"""HTML pages of results: the tournament report and the card-table replay viewer.

Owns ``arena report`` and ``arena view`` (docs/ARCHITECTURE.md section 8).  Pages
are built from the file formats only (the journal, the resolved
``tournament.toml``, record files), never from engine objects:

- ``gamedata``: one record file as page data, and its decision latencies;
- ``folderdata``: a results folder as the report's model (standings through
  ``arena.tournament.standings``, progress, rating history, pairs, latencies);
- ``charts``: the inline SVG charts (interval plot, rating history, latency);
- ``render``: Jinja2 templates to files (``write_report``, ``write_viewer``).

The table state of every step of a replay is computed in the page
(``static/table_state.js``) from the record's entries.
"""

from arena.report.render import write_report, write_viewer

__all__ = ["write_report", "write_viewer"]
