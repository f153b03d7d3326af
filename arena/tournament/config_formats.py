"""The keys that shape a tournament's schedule: ``format`` and a gauntlet's or match's
``challengers``, a league's ``games`` budget and ``top``/``top_order``, a gauntlet's ``max_tables``,
``twin_suits``, the ``[[history]]`` of a grown tournament, and the ``max_games`` guard on the
schedule's size (``arena.tournament.schedule`` counts it)."""

from __future__ import annotations

import difflib
import math
from typing import Any

from arena.rules.options import RuleSet
from arena.rules.suits import suit_asymmetry
from arena.settings import BotSpec
from arena.tournament.config_checker import MISSING, Checker, describe
from arena.tournament.growth import Generation
from arena.tournament.model import FORMATS, LEAGUES, TWIN_SUITS, Tournament


def format_keys(c: Checker, data: dict[str, Any], bots: tuple[BotSpec, ...] | None,
                seats: int | None) -> tuple[Any, tuple[str, ...]]:
    """``format`` and, for a gauntlet, ``challengers``: bots of the file, leaving enough others to fill a table."""
    fmt = c.string(data, "format", (), default=Tournament.format, choices=FORMATS)
    raw = data.get("challengers", MISSING)
    if fmt == "match" and (not isinstance(raw, list) or len(raw) != 2 or bots is None or seats is None
                           or len(bots) != seats + 1):
        # arena.tournament.schedule: A and B take turns in the same seat against the same seats - 1 others
        c.err(("format",), "a match needs challengers = [A, B] and exactly seats - 1 other bots")
        return None, ()
    if fmt not in ("gauntlet", "match"):
        if raw is not MISSING and fmt is not None:
            c.err(("challengers",), 'only a gauntlet has challengers; add format = "gauntlet" or remove it')
        return fmt, ()
    if raw is MISSING:
        c.err(("format",), 'a gauntlet needs challengers = ["name", ...]: the bots every table holds one of')
        return None, ()
    if not isinstance(raw, list) or not raw or not all(isinstance(x, str) for x in raw):
        c.err(("challengers",), f"expected a non-empty array of bot names, got {describe(raw)}")
        return None, ()
    if bots is None:
        return fmt, tuple(raw)
    names = [b.name for b in bots]
    ok = True
    for i, x in enumerate(raw):
        if x not in names:
            close = difflib.get_close_matches(x, names, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else f"; the bots are: {', '.join(names)}"
            c.err(("challengers", i), f"expected the name of a [[bots]] entry, got {x!r}{hint}")
            ok = False
        elif x in raw[:i]:
            c.err(("challengers", i), f"{x!r} is named twice")
            ok = False
    if not ok:
        return None, ()
    pool = len(names) - len(set(raw))
    if seats is not None and pool < seats - 1:
        c.err(("challengers",), f"a {seats}-seat table needs {seats - 1} bot(s) that are not challengers "
                                f"beside its challenger; only {pool} of the {len(names)} bots are not")
        return None, ()
    # file order, whatever the order of the list: a table's bots are always in file order
    return fmt, tuple(n for n in names if n in raw)


def games(c: Checker, data: dict[str, Any], fmt: str | None, max_tables: int | None) -> Any:
    """``games``: the budget of a league (swiss, adaptive), which has no ``max_tables``."""
    if fmt not in LEAGUES:
        if "games" in data and fmt is not None:
            c.err(("games",), 'only a league has a game budget; add format = "swiss" or "adaptive", '
                              "or remove it (max_tables caps a round robin)")
        return None
    if max_tables is not None:
        c.err(("max_tables",), f"a {fmt} league is sized by games, not max_tables; remove max_tables")
    if "games" not in data:
        c.err(("format",), f"a {fmt} league needs games = N: the budget of games it plays, in rounds")
        return None
    return c.integer(data, "games", (), minimum=1)


def top(c: Checker, data: dict[str, Any], fmt: str | None, bots: tuple[BotSpec, ...] | None) -> tuple[Any, Any]:
    """``top = K`` (and ``top_order``): an adaptive league aiming at its top K (README, Leagues)."""
    if "top" not in data:
        if "top_order" in data:
            c.err(("top_order",), "top_order needs top = K (the places it orders); add top or remove it")
        return Tournament.top, Tournament.top_order
    if fmt != "adaptive":
        c.err(("top",), 'only an adaptive league has a top = K objective; add format = "adaptive" or remove top')
        return None, False
    k = c.integer(data, "top", (), minimum=1)
    if k is not None and bots is not None and k >= len(bots):
        c.err(("top",), f"expected fewer than the {len(bots)} bots (the top K is a part of the field), got {k}")
        k = None
    return k, c.boolean(data, "top_order", (), default=Tournament.top_order)


def uneven(c: Checker, data: dict[str, Any], fmt: str | None) -> Any:
    """``uneven``: an adaptive league's tables chosen by expected information, its seats unequal."""
    value = c.boolean(data, "uneven", (), default=Tournament.uneven)
    if value and fmt != "adaptive":
        c.err(("uneven",), 'only an adaptive league gives its seats unevenly; add format = "adaptive" '
                           "or remove uneven")
    return value


def gauntlet_cap(c: Checker, max_tables: int, challengers: int, pool: int, seats: int) -> None:
    """A gauntlet's ``max_tables`` below its table count gives every challenger as many tables."""
    full = challengers * math.comb(pool, seats - 1)
    if max_tables < full and max_tables % challengers:
        lower = max_tables - max_tables % challengers
        c.err(("max_tables",), f"expected a multiple of the {challengers} challengers, so that each faces "
                               f"the same opponents, got {max_tables}; use {lower or challengers}")


def twin_suits(c: Checker, data: dict[str, Any], rules: RuleSet | None) -> Any:
    """``twin_suits``; "permute" only under rules that treat the four suits alike (``suit_asymmetry``)."""
    value = c.string(data, "twin_suits", (), default=Tournament.twin_suits, choices=TWIN_SUITS)
    if value == "permute" and rules is not None and (why := suit_asymmetry(rules)) is not None:
        c.err(("twin_suits",), f"\"permute\" is refused for variant {data.get('variant')!r} with these rules: "
                               f"{why}, so a relabelled twin is not proven to be the same game")
        return None
    return value


def _generation_problem(gen: list[str], gen_sets: int, names: list[str], seats: int | None,
                        deal_sets: int | None) -> tuple[str, str] | None:
    """Why ``[[history]]``'s generation (bots ``gen``, ``gen_sets`` deal-sets) cannot precede the file:
    (its key, the sentence), or None."""
    dup = next((b for i, b in enumerate(gen) if b in gen[:i]), None)
    if dup is not None:
        return "bots", f"{dup!r} is named twice"
    unknown = [b for b in gen if b not in names]
    if unknown:
        return "bots", f"{unknown[0]!r} is not one of the [[bots]]"
    if sorted(gen, key=names.index) != gen:
        return "bots", f"expected the bots in the order of the [[bots]] entries ({', '.join(n for n in names if n in gen)})"
    if seats is not None and len(gen) < seats:
        return "bots", f"a {seats}-seat table needs at least {seats} bots, the generation has {len(gen)}"
    if deal_sets is not None and gen_sets > deal_sets:
        return "deal_sets", f"deal_sets = {gen_sets} is more than the file's deal_sets = {deal_sets}: a tournament only grows"
    return None


def history(c: Checker, data: dict[str, Any], bots: tuple[BotSpec, ...] | None, seats: int | None,
            deal_sets: int | None) -> tuple[Generation, ...]:
    """``[[history]]``, written by ``arena run --resume`` when a tournament grew: earlier bots and deal-sets.

    Each generation must be a schedule the file could have grown from: distinct bots of the file in
    its order, enough of them to fill a table, and no more deal-sets than the file has."""
    raw = data.get("history", [])
    by = "[[history]] is written by `arena run --resume`: leave it out of a tournament file"
    if not isinstance(raw, list) or not all(isinstance(g, dict) for g in raw):
        c.err(("history",), f"expected [[history]] tables, got {describe(raw)} ({by})")
        return ()
    names = [b.name for b in bots or ()]
    out: list[Generation] = []
    for i, g in enumerate(raw):
        extra = sorted(set(g) - {"bots", "deal_sets"})
        if extra:
            c.err(("history", i, extra[0]), f"unknown key; a generation has bots and deal_sets ({by})")
        gen_bots, gen_sets = g.get("bots"), g.get("deal_sets")
        if not isinstance(gen_bots, list) or not gen_bots or not all(isinstance(b, str) for b in gen_bots):
            c.err(("history", i, "bots"), f"expected the names of that generation's bots, got {describe(gen_bots)} ({by})")
            continue
        if not isinstance(gen_sets, int) or isinstance(gen_sets, bool) or gen_sets < 1:
            c.err(("history", i, "deal_sets"), f"expected a whole number of 1 or more, got {describe(gen_sets)} ({by})")
            continue
        if bots is not None and (why := _generation_problem(gen_bots, gen_sets, names, seats, deal_sets)):
            c.err(("history", i, why[0]), f"{why[1]} ({by})")
            continue
        out.append(Generation(tuple(gen_bots), gen_sets))
    return tuple(out)


def size(c: Checker, t: Tournament, deal_sets_given: bool) -> None:
    """Refuse a schedule of more than ``max_games`` games (a typo such as an extra digit)."""
    from arena.tournament import designs, schedule

    total = schedule.total_games(t)
    if total <= t.max_games:
        return
    if t.format in LEAGUES:
        c.err(("games",), f"{total:,} games (whole rounds) is more than max_games = {t.max_games:,}; "
                          f"lower games, or raise max_games")
        return
    tables, seatings = schedule.table_count(t), len(designs.seatings(t.seats, t.seating))
    c.err(("deal_sets",) if deal_sets_given else ("bots",),
          f"{total:,} games ({tables:,} tables x {t.deal_sets:,} deal-sets x {seatings} seatings) is more "
          f"than max_games = {t.max_games:,}; lower deal_sets or max_tables, or raise max_games")
