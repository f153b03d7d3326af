"""Generate the JSON Schemas in ``protocol/schemas/`` from the message types.

Run ``python -m protocol.gen_schemas`` after changing ``messages.py`` and commit
the result; ``tests/protocol/test_protocol_schemas.py`` fails when the files drift.

Files: one per message (``hello.json`` ... ``shutdown.json``, named by
``type``), ``bot_message.json`` and ``referee_message.json`` (any message of
one direction), and ``event_kind.json`` (the documented ``event`` objects).
Each file is standalone (JSON Schema draft 2020-12, ``$defs`` inside).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import msgspec

from protocol import messages as m

SCHEMA_DIR = Path(__file__).with_name("schemas")
DIALECT = "https://json-schema.org/draft/2020-12/schema"
REF = "#/$defs/{name}"

MESSAGE_TYPES: dict[str, type[msgspec.Struct]] = {
    "hello": m.Hello,
    "draw": m.Draw,
    "play": m.Play,
    "welcome": m.Welcome,
    "error": m.Error,
    "new_game": m.NewGame,
    "request": m.Request,
    "event": m.Event,
    "game_over": m.GameOver,
    "shutdown": m.Shutdown,
}
UNIONS: dict[str, tuple[Any, str]] = {
    "bot_message": (m.BotMessage, "Any message a bot sends (protocol v1)."),
    "referee_message": (m.RefereeMessage, "Any message the referee sends (protocol v1)."),
    "event_kind": (m.KnownEvent, "The `event` object of an `event` message, for the kinds documented in v1."),
}


def _refs(node: Any, out: set[str]) -> None:
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/"):
            out.add(ref[len("#/$defs/") :])
        for v in node.values():
            _refs(v, out)
    elif isinstance(node, list):
        for v in node:
            _refs(v, out)


def _standalone(root: dict[str, Any], defs: dict[str, Any], title: str, description: str | None) -> dict[str, Any]:
    """``root`` plus exactly the ``$defs`` it reaches."""
    needed: set[str] = set()
    todo: set[str] = set()
    _refs(root, todo)
    while todo:
        name = todo.pop()
        if name not in needed:
            needed.add(name)
            _refs(defs[name], todo)
    out: dict[str, Any] = {"$schema": DIALECT, "title": title}
    if description:
        out["description"] = description
    out.update(root)
    if needed:
        out["$defs"] = {k: defs[k] for k in sorted(needed)}
    return out


def _tidy(defs: dict[str, Any]) -> None:
    """Facts the types cannot say: ``v`` is always sent; what an ``event`` object is."""
    message_names = {t.__name__ for t in MESSAGE_TYPES.values()}
    for name, d in defs.items():
        if name in message_names and "v" in d.get("properties", {}):
            d["properties"]["v"].pop("default", None)
            d["required"] = ["type", "v"] + [r for r in d.get("required", []) if r not in ("type", "v")]
    ev = defs["Event"]["properties"]["event"]
    ev["description"] = ("A public event: `kind` plus kind-specific fields, one of the kinds of event_kind.json "
                         "(SPEC 6); a later version may add kinds: ignore those you do not know.")


def generate() -> dict[str, dict[str, Any]]:
    """File name -> schema, for every file ``SCHEMA_DIR`` should hold."""
    names = list(MESSAGE_TYPES) + list(UNIONS)
    types = [MESSAGE_TYPES[n] for n in MESSAGE_TYPES] + [u for u, _ in UNIONS.values()]
    roots, defs = msgspec.json.schema_components(types, ref_template=REF)
    _tidy(defs)
    out: dict[str, dict[str, Any]] = {}
    for name, root in zip(names, roots):
        if name in MESSAGE_TYPES:
            title, desc = f"{name} message (protocol v{m.PROTOCOL_VERSION})", None
        else:
            title, desc = name, UNIONS[name][1]
        out[f"{name}.json"] = _standalone(root, defs, title, desc)
    return out


def dumps(schema: dict[str, Any]) -> str:
    return json.dumps(schema, indent=2, sort_keys=False, ensure_ascii=False) + "\n"


def main() -> int:
    SCHEMA_DIR.mkdir(exist_ok=True)
    wanted = generate()
    for stale in SCHEMA_DIR.glob("*.json"):
        if stale.name not in wanted:
            stale.unlink()
    for name, schema in wanted.items():
        (SCHEMA_DIR / name).write_text(dumps(schema), encoding="utf-8")
    print(f"wrote {len(wanted)} schemas to {SCHEMA_DIR}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
