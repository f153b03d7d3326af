"""Pickling of the engine's dataclasses that are rebuilt through ``__init__``.

Compiled with mypyc (``arena/compiled.py``) a frozen class would restore a pickled
value by setting its fields one by one, which it refuses; and a class whose
``__init__`` is written out (compiled, which the one ``dataclass`` generates is not)
gets a ``__new__`` that runs that ``__init__``, which pickling calls with no
arguments.  A Dask worker, or anything else that pickles a ``RuleSet``, a ``Play``
or an ``Observation``, needs them.
"""

from __future__ import annotations

from dataclasses import fields
from typing import Any


def by_fields(obj: Any) -> tuple[type, tuple[object, ...]]:
    """``obj.__reduce__()`` for a dataclass whose fields are all ``__init__`` arguments, in order."""
    return type(obj), tuple(getattr(obj, f.name) for f in fields(obj))
