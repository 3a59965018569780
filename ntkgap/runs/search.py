"""Adaptive sample-complexity search: n*(eps) per seed by geometric
bracketing, then bisection on log n, to a resolution factor in n.

The search is a pure step machine so that a runner can store every
evaluation like any other cell and resume after a crash:

- ``SearchState`` holds the settings and every evaluation made so far
  (``to_dict``/``from_dict`` give plain JSON);
- ``propose(state)`` lists ALL (seed, n) evaluations of the next step: one
  independent batch that may run in parallel (seeds of a step share an n
  whenever their brackets do: all seeds bracket on the same geometric grid,
  so ``group_by_n`` of a bracketing step has one n);
- ``update(state, {(seed, n): error})`` returns the new state;
- ``finished(state)`` and ``result(state)`` read it.

Everything a seed's search does next is derived from its evaluations alone,
so a state rebuilt from stored cells continues exactly where it stopped.

What the search assumes. The test error of one seed is treated as a
function of n that crosses eps once. Real curves are noisy and may cross
more than once; the search then reports the crossing its own evaluations
found: ``hi`` is the SMALLEST evaluated n with error <= eps and ``lo`` the
largest evaluated n below ``hi`` (its error is > eps, since ``hi`` is the
smallest passing n). No evaluated n lies strictly between them, and points
evaluated above ``hi`` are never used, whatever their error (a later
failure above ``hi`` is noise for this search, not a second crossing). An
error that is NaN (a diverged run) counts as a failure (> eps).

Censoring is explicit: ``right`` when the error at n_max is still > eps
(n* > n_max), ``left`` when the error at n_min is already <= eps
(n* <= n_min). The point estimate of a resolved seed interpolates log error
linearly in log n between ``lo`` and ``hi`` (exact on a power law), and is
clipped to the bracket; the bracket's geometric mean is reported beside it.
"""

from __future__ import annotations

import bisect
import functools
import math
from dataclasses import dataclass, field, replace

from ntkgap.errors import UsageError

RESOLVED, LEFT, RIGHT = "resolved", "left", "right"
#: replays of one seed's nested search before giving up (each needs a larger jitter)
MAX_REPLAYS = 16
#: bracketing step of a nested search: its cost is the factor at the largest n
#: it asks for (block Cholesky growth makes the smaller steps part of it), so a
#: smaller overshoot past n* pays: growth 2 asks for at most 2 n* instead of
#: 4 n* (up to 8x less Cholesky work); on a monotone curve the bracket found is
#: the fixed grid's either way (``SearchState.on_grid``)
NESTED_GROWTH = 2.0


class Restart(Exception):
    """Raised by a nested evaluation whose earlier answers are void (its
    factor was remade with a larger jitter): ``run_nested`` replays the seed."""


@dataclass(frozen=True)
class SearchState:
    """Settings and evaluations of a per-seed n*(eps) search.

    Attributes:
        eps: the error level; n* is where a seed's error first reaches it (<= eps).
        n_min, n_max: the smallest and largest n ever evaluated (integers).
        seeds: the seeds searched, in order.
        factor: stop when the bracket's hi / lo <= factor (or hi - lo <= 1).
        growth: bracketing multiplies (or divides) n by this per step.
        n_start: the first n of every seed (default n_min); bracketing goes up
            from a failure and down from a success.
        width: evaluations per seed per step (>1 shortens the number of steps
            at the cost of more evaluations: points on a geometric ladder while
            bracketing, equally spaced in log n while bisecting).
        on_grid: every n proposed lies on ``geometric_grid(n_min, n_max,
            factor)``, the fixed grid of equal resolution: bisection runs on
            grid indices and ends between neighbours, so on a monotone curve
            the search returns exactly the fixed grid's bracket, and seeds in
            the same bracket propose the same n (one batch). Off: n is any
            integer (rounded geometric midpoints).
        evals: seed -> {n: error}, every evaluation made so far.
    """

    eps: float
    n_min: int
    n_max: int
    seeds: tuple = ()
    factor: float = 1.25
    growth: float = 4.0
    n_start: int | None = None
    width: int = 1
    on_grid: bool = True
    evals: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        """A JSON-serialisable dict (keys as strings); ``from_dict`` inverts it."""
        return {
            "eps": self.eps,
            "n_min": self.n_min,
            "n_max": self.n_max,
            "seeds": list(self.seeds),
            "factor": self.factor,
            "growth": self.growth,
            "n_start": self.n_start,
            "width": self.width,
            "on_grid": self.on_grid,
            "evals": {
                str(s): {str(n): e for n, e in sorted(v.items())} for s, v in self.evals.items()
            },
        }

    @classmethod
    def from_dict(cls, d: dict) -> SearchState:
        """Inverse of ``to_dict``."""
        evals = {int(s): {int(n): float(e) for n, e in v.items()} for s, v in d["evals"].items()}
        return cls(
            eps=float(d["eps"]),
            n_min=int(d["n_min"]),
            n_max=int(d["n_max"]),
            seeds=tuple(int(s) for s in d["seeds"]),
            factor=float(d["factor"]),
            growth=float(d["growth"]),
            n_start=None if d.get("n_start") is None else int(d["n_start"]),
            width=int(d.get("width", 1)),
            on_grid=bool(d.get("on_grid", True)),
            evals=evals,
        )


def new_search(
    seeds,
    eps: float,
    n_min: int,
    n_max: int,
    *,
    factor: float = 1.25,
    growth: float = 4.0,
    n_start: int | None = None,
    width: int = 1,
    on_grid: bool = True,
) -> SearchState:
    """A fresh search, its settings checked.

    Args:
        seeds: the seeds (integers) to search, each with its own n*.
        eps: error level (> 0).
        n_min, n_max: integer range of n, 1 <= n_min < n_max.
        factor: resolution: stop when hi / lo <= factor (> 1).
        growth: bracketing step factor (> 1); 4 brackets fast and then needs
            about log2(log 4 / log factor) bisections.
        n_start: first n evaluated (default n_min), e.g. a theory-based guess
            (with ``on_grid``, the grid point nearest to it in log n).
        width: evaluations per seed per step (>= 1).
        on_grid: propose only points of the fixed grid (see ``SearchState``).

    Returns:
        a ``SearchState`` with no evaluations.
    """
    seeds = tuple(int(s) for s in seeds)
    checks = [
        (len(seeds) > 0, "seeds: give at least one seed"),
        (len(set(seeds)) == len(seeds), f"seeds={list(seeds)} must be distinct"),
        (eps > 0 and math.isfinite(eps), f"eps={eps} must be > 0"),
        (int(n_min) == n_min and n_min >= 1, f"n_min={n_min} must be an integer >= 1"),
        (int(n_max) == n_max and n_max > n_min, f"n_max={n_max} must be an integer > n_min"),
        (factor > 1, f"factor={factor} must be > 1"),
        (growth > 1, f"growth={growth} must be > 1"),
        (
            n_start is None or n_min <= n_start <= n_max,
            f"n_start={n_start} must lie in [n_min, n_max] = [{n_min}, {n_max}]",
        ),
        (int(width) == width and width >= 1, f"width={width} must be an integer >= 1"),
    ]
    for ok, msg in checks:
        if not ok:
            raise UsageError(f"search: {msg}")
    return SearchState(
        eps=float(eps),
        n_min=int(n_min),
        n_max=int(n_max),
        seeds=seeds,
        factor=float(factor),
        growth=float(growth),
        n_start=None if n_start is None else int(n_start),
        width=int(width),
        on_grid=bool(on_grid),
        evals={s: {} for s in seeds},
    )


def _bracket(state: SearchState, ev: dict):
    """(lo, hi) of one seed's evaluations: hi the smallest passing n, lo the
    largest evaluated n below it (or the largest evaluated n when none passes)."""
    passing = [n for n, e in ev.items() if e <= state.eps]  # NaN compares False: a failure
    hi = min(passing) if passing else None
    below = [n for n in ev if hi is None or n < hi]
    lo = max(below) if below else None
    return lo, hi


def _status(state: SearchState, ev: dict) -> str | None:
    """'resolved', 'left', 'right', or None while the search goes on."""
    if not ev:
        return None
    lo, hi = _bracket(state, ev)
    if hi is None:
        return RIGHT if lo >= state.n_max else None
    if lo is None:
        return LEFT if hi <= state.n_min else None
    if hi / lo <= state.factor or hi - lo <= 1:
        return RESOLVED
    return None


def _next_points(state: SearchState, ev: dict) -> list[int]:
    if state.on_grid:
        return _next_grid_points(state, ev)
    if not ev:
        return [state.n_start if state.n_start is not None else state.n_min]
    lo, hi = _bracket(state, ev)
    g, w = state.growth, state.width
    if hi is None:  # every evaluation failed: go up from the largest
        pts = [min(state.n_max, max(lo + 1, round(lo * g**k))) for k in range(1, w + 1)]
    elif lo is None:  # every evaluation passed: go down from the smallest
        pts = [max(state.n_min, min(hi - 1, round(hi / g**k))) for k in range(1, w + 1)]
    else:  # bisect log n: w points splitting (lo, hi) into w + 1 equal log parts
        a, b = math.log(lo), math.log(hi)
        pts = [round(math.exp(a + (b - a) * k / (w + 1))) for k in range(1, w + 1)]
        pts = [min(hi - 1, max(lo + 1, p)) for p in pts]
    return sorted({p for p in pts if p not in ev})


def _next_grid_points(state: SearchState, ev: dict) -> list[int]:
    grid = _grid(state.n_min, state.n_max, state.factor)
    last = len(grid) - 1
    w = state.width
    # grid indices per bracketing step: growth expressed in grid steps
    step = max(1, round(math.log(state.growth) / math.log(state.factor)))
    if not ev:
        n0 = state.n_start if state.n_start is not None else state.n_min
        return [min(grid, key=lambda g: abs(math.log(g / n0)))]
    lo, hi = _bracket(state, ev)
    if hi is None:
        i = bisect.bisect_right(grid, lo) - 1  # largest grid point <= lo
        idx = [min(last, i + k * step) for k in range(1, w + 1)]
    elif lo is None:
        i = bisect.bisect_left(grid, hi)  # smallest grid point >= hi
        idx = [max(0, i - k * step) for k in range(1, w + 1)]
    else:
        a, b = bisect.bisect_right(grid, lo) - 1, bisect.bisect_left(grid, hi)
        if b - a < 2:  # no grid point strictly inside: bisect off the grid
            return _next_points(replace(state, on_grid=False), ev)
        idx = [min(b - 1, max(a + 1, a + round(k * (b - a) / (w + 1)))) for k in range(1, w + 1)]
    return sorted({grid[i] for i in idx if grid[i] not in ev})


def propose(state: SearchState) -> list[tuple[int, int]]:
    """Every (seed, n) to evaluate in the next step: one batch of
    independent evaluations; empty when the search is finished.

    Args:
        state: the current state.

    Returns:
        a list of (seed, n) pairs, none evaluated before, sorted by (n, seed).
    """
    out = []
    for s in state.seeds:
        ev = state.evals.get(s, {})
        if _status(state, ev) is None:
            out += [(s, n) for n in _next_points(state, ev)]
    return sorted(out, key=lambda p: (p[1], p[0]))


def group_by_n(proposals) -> dict[int, list[int]]:
    """The seeds of a step grouped by n (each n one batched program).

    Args:
        proposals: (seed, n) pairs, as ``propose`` gives them.

    Returns:
        dict {n: [seeds]}, sorted by n.
    """
    out: dict[int, list[int]] = {}
    for s, n in proposals:
        out.setdefault(int(n), []).append(int(s))
    return dict(sorted(out.items()))


def update(state: SearchState, errors: dict) -> SearchState:
    """The state with ``errors`` ({(seed, n): error}) recorded.

    Args:
        state: the current state.
        errors: the errors of (seed, n) pairs, usually those ``propose`` gave.

    Returns:
        a new ``SearchState`` (the input is not modified).

    Raises:
        UsageError: an unknown seed, an n outside [n_min, n_max] or one
            already evaluated for that seed (an evaluation is never repeated).
    """
    evals = {s: dict(v) for s, v in state.evals.items()}
    for (s, n), e in errors.items():
        s, n = int(s), int(n)
        if s not in state.seeds:
            raise UsageError(f"search: seed={s} is not searched (seeds: {list(state.seeds)})")
        if not state.n_min <= n <= state.n_max:
            raise UsageError(
                f"search: n={n} outside [n_min, n_max] = [{state.n_min}, {state.n_max}]"
            )
        if n in evals.setdefault(s, {}):
            raise UsageError(f"search: (seed={s}, n={n}) was already evaluated")
        evals[s][n] = float(e)
    return replace(state, evals=evals)


def finished(state: SearchState) -> bool:
    """True when every seed's search has stopped (resolved or censored).

    Args:
        state: the current search state.

    Returns:
        bool.
    """
    return all(_status(state, state.evals.get(s, {})) is not None for s in state.seeds)


def seed_result(state: SearchState, seed: int) -> dict:
    """One seed's outcome.

    Args:
        state: the current search state.
        seed: one of its seeds.

    Returns:
        dict with ``seed``; ``status`` ('resolved', 'left', 'right', or
        'running'); ``lo``/``hi``: the bracket (largest failing n below the
        smallest passing n, and that passing n; None where absent);
        ``n_star``: the log-interpolated crossing for a resolved seed (None
        otherwise); ``n_star_geo``: the bracket's geometric mean;
        ``bound``: n_min for 'left' (n* <= bound), n_max for 'right'
        (n* > bound); ``evaluations``: how many n were evaluated.
    """
    ev = state.evals.get(seed, {})
    status = _status(state, ev) or "running"
    lo, hi = _bracket(state, ev) if ev else (None, None)
    out = {
        "seed": seed,
        "status": status,
        "lo": lo,
        "hi": hi,
        "n_star": None,
        "n_star_geo": None,
        "bound": None,
        "evaluations": len(ev),
    }
    if status == RESOLVED:
        el, eh = ev[lo], ev[hi]
        x0, x1 = math.log(lo), math.log(hi)
        y0, y1 = math.log(max(el, 1e-300)), math.log(max(eh, 1e-300))
        t = (math.log(state.eps) - y0) / (y1 - y0) if y1 != y0 and math.isfinite(y0) else 1.0
        t = min(1.0, max(0.0, t))
        out["n_star"] = min(hi, max(lo, math.exp(x0 + t * (x1 - x0))))
        out["n_star_geo"] = math.sqrt(lo * hi)
    elif status == LEFT:
        out["bound"] = state.n_min
    elif status == RIGHT:
        out["bound"] = state.n_max
    return out


def result(state: SearchState) -> list[dict]:
    """``seed_result`` of every seed, in the state's seed order.

    Args:
        state: the current search state.

    Returns:
        list of ``seed_result`` dicts, one per seed.
    """
    return [seed_result(state, s) for s in state.seeds]


def evaluations(state: SearchState) -> int:
    """Total number of (seed, n) evaluations made.

    Args:
        state: the current search state.

    Returns:
        int.
    """
    return sum(len(v) for v in state.evals.values())


def run_search(evaluate, seeds, eps, n_min, n_max, **settings) -> dict:
    """Run a search to the end, one batch of evaluations per step.

    Args:
        evaluate: ``evaluate([(seed, n), ...]) -> [error, ...]``, the batch
            callback (errors in the order given; the pairs are independent).
        seeds, eps, n_min, n_max, settings: as ``new_search``; ``state=`` may
            instead pass a (possibly partial) ``SearchState`` to resume.

    Returns:
        dict with ``seeds`` (``result``), ``evaluations``, ``steps`` (number
        of batches run here) and ``state`` (the final ``SearchState``).
    """
    state = settings.pop("state", None)
    if state is None:
        state = new_search(seeds, eps, n_min, n_max, **settings)
    steps = 0
    while not finished(state):
        batch = propose(state)
        errs = list(evaluate(batch))
        if len(errs) != len(batch):
            raise UsageError(
                f"search: evaluate returned {len(errs)} errors for {len(batch)} evaluations"
            )
        state = update(state, dict(zip(batch, errs)))
        steps += 1
    return {
        "seeds": result(state),
        "evaluations": evaluations(state),
        "steps": steps,
        "state": state,
    }


def run_nested(evaluate, seeds, eps, n_min, n_max, **settings) -> dict:
    """Run each seed's search to the end on its nested learning curve.

    A seed's pools are nested, so its curve at every n is read from one
    factorization at the largest n its search asks for: bracketing grows the
    curve (``propose`` goes up geometrically), bisection then refines inside
    the bracket from the factor already made. The seeds' searches are those
    of ``run_search`` (each seed's steps depend on its evaluations alone),
    run one seed after another so that one seed's factor is alive at a time.

    Args:
        evaluate: ``evaluate(seed, n) -> error``; it raises ``Restart`` when
            the seed's earlier answers are void (the seed is then replayed
            from scratch, its curve kept).
        seeds, eps, n_min, n_max, settings: as ``new_search`` (``growth``
            defaults to ``NESTED_GROWTH``).

    Returns:
        dict with ``seeds`` (``result``), ``evaluations`` (count), ``replays``
        and ``state`` (the final ``SearchState``, every seed's evaluations).
    """
    state = new_search(seeds, eps, n_min, n_max, **{"growth": NESTED_GROWTH, **settings})
    replays = 0
    for s in state.seeds:
        for _ in range(MAX_REPLAYS):
            one = replace(state, seeds=(s,), evals={s: {}})
            try:
                while not finished(one):
                    batch = propose(one)
                    one = update(one, {(t, n): evaluate(t, n) for t, n in batch})
                break
            except Restart:
                replays += 1
        else:
            raise UsageError(f"search: seed={s} needed more than {MAX_REPLAYS} replays")
        state = replace(state, evals={**state.evals, s: one.evals[s]})
    return {
        "seeds": result(state),
        "evaluations": evaluations(state),
        "replays": replays,
        "state": state,
    }


@functools.lru_cache(maxsize=64)
def _grid(n_min: int, n_max: int, factor: float) -> tuple:
    return tuple(geometric_grid(n_min, n_max, factor))


def geometric_grid(n_min: int, n_max: int, factor: float = 1.25) -> list[int]:
    """The fixed grid of equal resolution: distinct integers from n_min to
    n_max with consecutive ratios at most ``factor`` (the baseline the
    adaptive search is benchmarked against).

    Args:
        n_min, n_max: the ends (both included).
        factor: the largest ratio between consecutive grid points.

    Returns:
        sorted list of integers.
    """
    k = max(1, math.ceil(math.log(n_max / n_min) / math.log(factor) - 1e-12))
    while True:  # integer rounding can stretch a gap past factor: refine until none does
        pts = sorted({round(n_min * (n_max / n_min) ** (i / k)) for i in range(k + 1)})
        if all(b / a <= factor or b - a <= 1 for a, b in zip(pts, pts[1:])):
            return pts
        k += 1
