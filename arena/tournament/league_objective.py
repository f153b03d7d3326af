"""What an adaptive league aims at, and who plays how much in a round (pure, seeded).

Owns the ``top = K`` objective and uneven allocation (README, Leagues):

- ``posterior_draws``: joint draws of the strengths from the league fit's normal posterior.
- ``top_probability``: per bot, the chance it is in the top K (the share of draws that put it there).
- ``contested``: per bot, the chance its answer is wrong: whether it is in the top K (with ``order``,
  also its place within the top K).  A bot whose answer is settled has (almost) nothing to learn.
- ``allocate``: the seats of a round (always ``n // k`` tables, so a league's game indices are
  unchanged) given to the contested bots, up to ``CAP`` tables each a round; settled bots sit out,
  but none sits out more than ``IDLE_MAX`` rounds in a row (the floor: every bot plays at least one
  round in ``IDLE_MAX + 1``), and the first ``WARMUP`` rounds seat everyone once.
- ``uneven_round``: the round's tables: each seat a bot holds gets its own posterior draw, the seats
  are sorted by it and cut into tables of k distinct bots, so contested bots meet the bots they may
  be confused with.
- ``information_round``: the round of ``uneven = true`` (the whole order): its tables chosen one by
  one among local tables, each the one whose expected Fisher information most reduces the expected
  number of misordered pairs under the posterior (the oracle's criterion, bench/league_oracle.py,
  with the truth replaced by the posterior), with the same cap and floor.

Every choice is a function of its arguments (the fit, the rounds sat out, the seeded generator), so
a resumed league chooses the same tables (docs/ARCHITECTURE.md section 5).
"""

from __future__ import annotations

import hashlib
import itertools
import math
from collections.abc import Sequence

import numpy as np

Table = tuple[int, ...]
WARMUP = 2      # rounds that seat every bot once, before the fit can tell who is settled
IDLE_MAX = 3    # rounds in a row a bot may sit out: it plays at least one round in four
CAP = 4         # tables a bot may hold in one round (its games run beside each other)
DRAWS = 256     # posterior draws per round
SETTLED = 0.02  # a bot whose answer is wrong with less than this chance is given no seat beyond the floor
WINDOW = 8      # a local table's bots are within this many places of its best one (information_round)


def generator(*parts: object) -> np.random.Generator:
    """A numpy generator seeded by a digest of ``parts`` (the same parts, the same draws, on any machine)."""
    digest = hashlib.sha256(":".join(str(p) for p in parts).encode()).digest()
    return np.random.default_rng(int.from_bytes(digest[:8], "big"))


def posterior_draws(strength: np.ndarray, cov: np.ndarray, draws: int, rng: np.random.Generator,
                    floor: float = 0.0) -> np.ndarray:
    """``draws`` x n joint draws of the log-strengths (plus independent noise of sd ``floor``)."""
    n = len(strength)
    root = np.linalg.cholesky(cov + 1e-12 * np.eye(n))
    z = rng.standard_normal((draws, n))
    return strength[None, :] + z @ root.T + floor * rng.standard_normal((draws, n))


def _ranks(values: np.ndarray) -> np.ndarray:
    """0-based ranks, best (largest) first, along the last axis; ties by bot number."""
    return np.argsort(np.argsort(-values, axis=-1, kind="stable"), axis=-1, kind="stable")


def top_probability(samples: np.ndarray, top: int) -> np.ndarray:
    """Per bot: the share of posterior draws (rows of ``samples``) that put it in the top ``top``."""
    return (_ranks(samples) < top).mean(axis=0)


def contested(strength: np.ndarray, samples: np.ndarray, top: int, order: bool = False) -> np.ndarray:
    """Per bot: how wrong its answer may be under the posterior (see the module)."""
    point = _ranks(strength[None, :])[0]
    drawn = _ranks(samples)
    wrong = (drawn < top) != (point < top)[None, :]
    if order:
        wrong |= (np.minimum(drawn, point[None, :]) < top) & (drawn != point[None, :])
    return wrong.mean(axis=0)


def allocate(weight: np.ndarray, idle: Sequence[int], played: Sequence[int], seats: int, cap: int) -> np.ndarray:
    """Seats (tables) per bot this round: ``seats`` in all, at most ``cap`` each, the floor first.

    ``idle[b]``: rounds in a row bot ``b`` has sat out; ``played[b]``: its games so far (the tie-break,
    fewest first, so that settled bots share the spare seats evenly).
    """
    n = len(weight)
    counts = np.zeros(n, dtype=int)
    due = sorted((b for b in range(n) if idle[b] >= IDLE_MAX), key=lambda b: (-idle[b], played[b], b))
    for b in due[:seats]:
        counts[b] = 1
    left = seats - int(counts.sum())
    value = np.where(weight >= SETTLED, weight, 0.0)
    for _ in range(left):
        gain = np.where(counts < cap, value / (counts + 1), -1.0)
        best = float(gain.max())
        # among equal gains (the settled, at 0): who has played least, then bot number
        tied = [b for b in range(n) if gain[b] == best]
        b = min(tied, key=lambda b: (counts[b], played[b], b))
        counts[b] += 1
    return counts


def uneven_round(strength: np.ndarray, cov: np.ndarray, k: int, counts: np.ndarray,
                 rng: np.random.Generator, floor: float) -> list[Table]:
    """Tables of k distinct bots, ``counts[b]`` of them holding bot ``b``, from neighbours in posterior draws."""
    n = len(strength)
    tables_n = int(counts.sum()) // k
    copies = [(b, c) for b in range(n) for c in range(int(counts[b]))]
    draws = posterior_draws(strength, cov, max(1, int(counts.max(initial=1))), rng, floor)
    copies.sort(key=lambda bc: (-float(draws[bc[1], bc[0]]), bc[0], bc[1]))
    tables = [[b for b, _ in copies[i * k:(i + 1) * k]] for i in range(tables_n)]
    if not _mend_duplicates(tables):
        # a construction that always works (no bot holds more tables than there are): a bot's
        # copies are consecutive in bot order, dealt out to the tables in turn
        flat = sorted(b for b, _ in copies)
        tables = [flat[t::tables_n] for t in range(tables_n)]
    return [tuple(sorted(t)) for t in tables]


def _mend_duplicates(tables: list[list[int]]) -> bool:
    """Swap seats between the nearest tables until no table holds a bot twice; False if one is left."""
    for t in range(len(tables)):
        while len(set(tables[t])) < len(tables[t]):
            i = next(i for i, b in enumerate(tables[t]) if b in tables[t][:i])
            b = tables[t][i]
            done = False
            for dist in range(1, len(tables)):
                for u in (t + dist, t - dist):
                    if not 0 <= u < len(tables) or b in tables[u]:
                        continue
                    for j, x in enumerate(tables[u]):
                        if x not in tables[t]:
                            tables[t][i], tables[u][j] = x, b
                            done = True
                            break
                    if done:
                        break
                if done:
                    break
            if not done:
                return False
    return True


def league_round(strength: np.ndarray, cov: np.ndarray, k: int, top: int, order: bool,
                 idle: Sequence[int], played: Sequence[int], rng: np.random.Generator,
                 floor: float) -> list[Table]:
    """A ``top = K`` round (after ``WARMUP``): seats by how contested each bot is, then tables of neighbours."""
    n = len(strength)
    samples = posterior_draws(strength, cov, DRAWS, rng)
    weight = contested(strength, samples, top, order)
    tables_n = n // k
    counts = allocate(weight, idle, played, tables_n * k, min(CAP, tables_n))
    return uneven_round(strength, cov, k, counts, rng, floor)


def local_tables(theta: np.ndarray, k: int, window: int = WINDOW) -> np.ndarray:
    """The local tables (rows of bot numbers, sorted): each place's bot with k - 1 of the next window - 1."""
    order = np.argsort(-theta, kind="stable")
    n = len(theta)
    out = set()
    for i in range(n - k + 1):
        near = order[i + 1:min(n, i + window)]
        for rest in itertools.combinations(near.tolist(), k - 1):
            out.add(tuple(sorted((int(order[i]),) + rest)))
    return np.array(sorted(out), dtype=np.int64).reshape(-1, k)


def table_information(theta: np.ndarray) -> np.ndarray:
    """Expected Fisher information of one Plackett-Luce game per table: rows of ``theta`` (T x k) -> T x k x k."""
    t_n, k = theta.shape
    e = np.exp(theta - theta.max(axis=1, keepdims=True))
    info = np.zeros((t_n, k, k))
    for perm in itertools.permutations(range(k)):
        p = np.array(perm)
        ep = e[:, p]
        suffix = np.cumsum(ep[:, ::-1], axis=1)[:, ::-1][:, :k - 1]   # the stages' totals
        chance = np.prod(ep[:, :k - 1] / suffix, axis=1)
        c = np.cumsum(1.0 / suffix, axis=1)
        d = np.cumsum(1.0 / suffix ** 2, axis=1)
        c_full = np.concatenate([c, c[:, -1:]], axis=1)
        d_full = np.concatenate([d, d[:, -1:]], axis=1)
        low = np.minimum.outer(np.arange(k), np.arange(k))
        block = -ep[:, :, None] * ep[:, None, :] * d_full[:, low]
        block[:, np.arange(k), np.arange(k)] += ep * c_full
        info[:, p[:, None], p[None, :]] += chance[:, None, None] * block
    return info


def misorder_gradient(strength: np.ndarray, cov: np.ndarray) -> np.ndarray:
    """d (expected misordered pairs) / d cov, as the matrix B with d value / d precision_t = -<I_t, B>.

    The oracle's pair weight ``phi(z) |d| / (2 var s)`` (z = |d| / s, the true gap d) averaged over the
    posterior of d, N(m, s^2): in closed form ``exp(-m^2 / 4s^2) E|X| / (2 sqrt(pi))`` with
    X ~ N(m/2, s^2/2), so a pair the fit cannot yet order (m near 0) still counts."""
    from scipy.special import ndtr

    dg = np.diag(cov)
    var = np.maximum(dg[:, None] + dg[None, :] - 2.0 * cov, 1e-12)
    s = np.sqrt(var)
    mu = np.abs(strength[:, None] - strength[None, :]) / 2.0
    sigma = s / math.sqrt(2.0)
    abs_mean = sigma * math.sqrt(2.0 / math.pi) * np.exp(-mu ** 2 / (2 * sigma ** 2)) \
        + mu * (1.0 - 2.0 * ndtr(-mu / sigma))
    a = np.exp(-mu ** 2 / var) * abs_mean / (2.0 * math.sqrt(math.pi)) / (2.0 * var * s)
    np.fill_diagonal(a, 0.0)
    lap = np.diag(a.sum(axis=1)) - a
    return cov @ lap @ cov


def information_round(strength: np.ndarray, cov: np.ndarray, k: int, idle: Sequence[int], cap: int,
                      games_per_table: int) -> list[Table]:
    """``n // k`` local tables chosen greedily by the expected reduction of misordered pairs (see the module).

    Each pick adds its table's expected information (``games_per_table`` games at the fit's strengths) to
    the posterior precision before the next; a bot holds at most ``cap`` tables, and a bot that has sat
    out ``IDLE_MAX`` rounds is seated first (the floor)."""
    n = len(strength)
    cand = local_tables(strength, k)
    info = games_per_table * table_information(strength[cand])
    precision = np.linalg.inv(cov)
    counts = np.zeros(n, dtype=int)
    due = sorted((b for b in range(n) if idle[b] >= IDLE_MAX), key=lambda b: (-idle[b], b))
    tables: list[Table] = []
    for _ in range(n // k):
        inv = np.linalg.inv(precision)
        b = misorder_gradient(strength, inv)
        score = np.einsum("tij,tij->t", info, b[cand[:, :, None], cand[:, None, :]])
        ok = (counts[cand] < cap).all(axis=1)
        waiting = [x for x in due if counts[x] == 0]
        if waiting:
            with_it = ok & (cand == waiting[0]).any(axis=1)
            ok = with_it if with_it.any() else ok
        if not ok.any():
            ok = np.ones(len(cand), dtype=bool)
        t = int(np.argmax(np.where(ok, score, -np.inf)))
        tables.append(tuple(int(x) for x in cand[t]))
        counts[cand[t]] += 1
        precision[np.ix_(cand[t], cand[t])] += info[t]
    return tables
