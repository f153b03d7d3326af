"""Pickling of the engine's frozen dataclasses: they are rebuilt through ``__init__``.

Compiled with mypyc (``arena/compiled.py``) such a class would restore a pickled
value by setting its fields one by one, which a frozen class refuses; a Dask
worker, or anything else that pickles a ``RuleSet`` or a ``Play``, needs them.
"""

from __future__ import annotations

from dataclasses import fields
from typing import Any


def by_fields(obj: Any) -> tuple[type, tuple[object, ...]]:
    """``obj.__reduce__()`` for a dataclass whose fields are all ``__init__`` arguments, in order."""
    return type(obj), tuple(getattr(obj, f.name) for f in fields(obj))
