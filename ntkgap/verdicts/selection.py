"""Which stored results a verdict reads: the collectors of claims, report
tables and figures. Target specs are read through the one spec parser;
the search cells of one predictor through one collector (:func:`searches`)
with one form of predictor side (:class:`Side`) and one eps/ridge filter
(:func:`at`). Never computes cells."""

from __future__ import annotations

from dataclasses import dataclass

from ntkgap.errors import UsageError
from ntkgap.runs import registry, store
from ntkgap.targets import parse_spec, rhm_pstar

#: a search cell without a ``ridge`` is ridgeless: the kernel search's declared default
RIDGELESS = registry.METHODS["ntk_search"].params["ridge"].default
#: two error levels are the same eps when they differ by less than this
EPS_TOL = 1e-12


def depth_of(target: str) -> int | None:
    """The depth key ``L`` of a target spec (through the one spec parser).

    Args:
        target: a target spec string.

    Returns:
        int L, or None when the target has no depth.
    """
    return parse_spec(target).params.get("L")


def param_of(target: str, key: str):
    """One parameter of a target spec (through the one spec parser).

    Args:
        target: a target spec string.
        key: the parameter's key.

    Returns:
        its parsed value, or None when the target has no such key.
    """
    return parse_spec(target).params.get(key)


def matches(spec: str, family: dict) -> bool:
    """Whether a target spec has every key=value of ``family`` (and its name).

    Args:
        spec: a target spec string.
        family: required key/value pairs; ``name`` (if given) the spec name.

    Returns:
        bool.
    """
    s = parse_spec(spec)
    name = family.get("name")
    if name and s.name != name:
        return False
    return all(s.params.get(k) == v for k, v in family.items() if k != "name")


def at(cell: dict, eps, ridge=RIDGELESS, error: str | None = None) -> bool:
    """The eps/ridge/error filter of search cells: whether ``cell`` searched
    for error level ``eps`` with this ridge, on this error.

    Args:
        cell: a stored search cell.
        eps: the error level (equal to ``EPS_TOL``), or ``rhm_pstar.PSTAR_EPS``
            (each cell's own P* threshold, from its target's n_c).
        ridge: the ridge (a number, or ``"tuned"``: the validation-tuned
            kernel); a cell without one is ``RIDGELESS``.
        error: the cell's ``target_error`` (None: the regression error, a
            cell without one).

    Returns:
        bool.
    """
    if cell.get("target_error") != error:
        return False
    if eps == rhm_pstar.PSTAR_EPS:
        eps = rhm_pstar.threshold_of(eps, param_of(cell["target"], "n_c"))
    return abs(cell["eps"] - eps) <= EPS_TOL and cell.get("ridge", RIDGELESS) == ridge


@dataclass(frozen=True)
class Side:
    """One predictor whose sample complexity was searched: a search method,
    an architecture (the exact spec, or with ``prefix`` a prefix the cells'
    arch specs start with) and a ridge (``RIDGELESS``, a number or
    ``"tuned"``; cells of methods without one are ridgeless)."""

    method: str
    arch: str
    ridge: float | str = RIDGELESS
    prefix: bool = False
    #: (key, value) pairs a cell must also hold (e.g. its ``width`` or ``steps``: the
    #: variants of one arch spec that differ in training only)
    fields: tuple = ()

    @classmethod
    def parse(cls, side) -> Side:
        """A side as claim params give it: a table ``{method, arch[, ridge]}``
        (the exact arch spec) or a list ``[method, arch prefix[, ridge[, fields]]]``,
        ``fields`` a table of cell fields the cells must hold (``{width = 16}``).

        Args:
            side: the table or list.

        Returns:
            Side.
        """
        if isinstance(side, dict) and {"method", "arch"} <= set(side):
            return cls(side["method"], side["arch"], side.get("ridge", RIDGELESS))
        if isinstance(side, list) and len(side) in (2, 3):
            return cls(*side[:2], *side[2:], prefix=True)
        if isinstance(side, list) and len(side) == 4 and isinstance(side[3], dict):
            return cls(*side[:3], prefix=True, fields=tuple(sorted(side[3].items())))
        raise UsageError(
            f"claim params: side {side!r} must be a table with method and arch, or "
            "[method, arch prefix] or [method, arch prefix, ridge] or "
            "[method, arch prefix, ridge, {cell fields}]"
        )

    def has_cell(self, cell: dict) -> bool:
        """Whether a stored cell is this side's: its arch (``has_arch``) and ``fields``.

        Args:
            cell: a stored cell.

        Returns:
            bool.
        """
        return self.has_arch(cell["arch"]) and all(cell.get(k) == v for k, v in self.fields)

    def has_arch(self, arch: str) -> bool:
        """Whether a cell's arch spec is this side's.

        Args:
            arch: a cell's arch spec.

        Returns:
            bool.
        """
        return arch.startswith(self.arch) if self.prefix else arch == self.arch


def searches(experiment: str, side: Side, eps, want=None, budget: str = "base",
             error: str | None = None) -> dict:  # fmt: skip
    """The one collector of search records: those of one predictor at one
    error level, for claims, the report and figures.

    Args:
        experiment: the experiment's name.
        side: the predictor.
        eps: the error level.
        want: which target specs to keep (default: all).
        budget: where a target was searched with several step budgets (a
            robustness rerun), ``"base"`` keeps the smallest, ``"max"`` the
            largest; searches without ``steps`` (kernels) have one.
        error: the cells' ``target_error`` (see ``at``).

    Returns:
        dict {target: search record}, in stored order.
    """
    out, steps = {}, {}
    for cell, res in store.results(experiment, side.method):
        if not side.has_cell(cell) or (want is not None and not want(cell["target"])):
            continue
        if not at(cell, eps, side.ridge, error):
            continue
        t, k = cell["target"], cell.get("steps", 0)
        if t not in steps or (k < steps[t] if budget == "base" else k > steps[t]):
            out[t], steps[t] = res, k
    return out


def budgets(experiment: str, side: Side, eps: float, want=None) -> dict:
    """The step budgets each target was searched with (robustness reruns).

    Args:
        experiment: the experiment's name.
        side: the predictor.
        eps: the error level.
        want: which target specs to keep (default: all).

    Returns:
        dict {target: sorted list of the budgets (``steps``) stored}.
    """
    out: dict = {}
    for cell, _ in store.results(experiment, side.method):
        if side.has_cell(cell) and (want is None or want(cell["target"])):
            if at(cell, eps, side.ridge) and "steps" in cell:
                out.setdefault(cell["target"], set()).add(cell["steps"])
    return {t: sorted(v) for t, v in out.items()}


def nstar_by_depth(experiment: str, side: Side, family: dict, eps: float) -> dict:
    """The search records of one predictor on a depth-indexed target family.

    Args:
        experiment: the experiment's name.
        side: the predictor.
        family: the target family (see ``matches``).
        eps: the error level.

    Returns:
        dict {L: search record}, sorted by depth L.
    """
    recs = searches(experiment, side, eps, lambda t: matches(t, family))
    out = {depth_of(t): r for t, r in recs.items()}
    return dict(sorted(out.items()))


def theory_nstar_by_depth(experiment: str, family: dict, arch_name: str, eps: float) -> dict:
    """Eigenlearning's n* per depth, from the stored theory cells.

    Args:
        experiment: the experiment's name.
        family: the target family (see ``matches``).
        arch_name: the prefix the cells' arch specs must start with.
        eps: the error level.

    Returns:
        dict {L: {"n_star", "censored", "theory_valid"}}, sorted by depth L.

    References:
        Simon, Dickens, Karkada & DeWeese, "The Eigenlearning Framework",
        2021 (arXiv 2110.03922).
    """
    out = {}
    for cell, res in store.results(experiment, "theory"):
        if not cell["arch"].startswith(arch_name) or not matches(cell["target"], family):
            continue
        v = res.get("n_star", {}).get(str(eps))
        if v is not None:
            out[depth_of(cell["target"])] = v
    return dict(sorted(out.items()))


# a family of targets indexed by depth: a spec's name and parameters but these
FAMILY_FREE = ("L", "d")


def family_of(target: str) -> dict | None:
    """The depth-indexed family a target spec belongs to.

    Args:
        target: a target spec string.

    Returns:
        dict with ``name`` and every parameter except ``FAMILY_FREE`` (the
        depth L and the dimension d), usable with ``matches``; None when the
        target has no depth L.
    """
    s = parse_spec(target)
    if "L" not in s.params:
        return None
    return {"name": s.name, **{k: v for k, v in s.params.items() if k not in FAMILY_FREE}}


def family_label(family: dict) -> str:
    """A family in words, e.g. ``tree: arity=2, node=parity, seed=0``.

    Args:
        family: a dict from ``family_of``.

    Returns:
        str.
    """
    rest = ", ".join(f"{k}={v}" for k, v in family.items() if k != "name")
    return f"{family['name']}: {rest}" if rest else family["name"]


def depth_families(experiment: str) -> dict:
    """Every depth-indexed target family of an experiment's stored cells,
    with one target spec per depth (the first stored).

    Args:
        experiment: the experiment's name.

    Returns:
        dict {family label: (family dict, {L: target spec})}, labels sorted.
    """
    out = {}
    for cell, _ in store.results(experiment):
        fam = family_of(cell["target"]) if "target" in cell else None
        if fam is None:
            continue
        entry = out.setdefault(family_label(fam), (fam, {}))
        entry[1].setdefault(depth_of(cell["target"]), cell["target"])
    return {k: (f, dict(sorted(t.items()))) for k, (f, t) in sorted(out.items())}


def lr_choices(experiment: str, key=("target", "arch")) -> dict:
    """The learning rate of each fixed-n ``net`` curve point, chosen on validation.

    A ``net`` grid that lists several ``lr`` has a cell per rate; at each
    (curve, n) the rate was picked when the grid ran (``runs.lr_choice``,
    the rule ``net_search`` uses: lowest median over seeds of the best
    validation MSE, never test error) and stored beside the cells; this
    reads the stored choice and decides nothing.

    Args:
        experiment: the experiment's name.
        key: the cell fields that identify a curve (with ``lr`` among them
            every rate is its own curve and nothing is chosen).

    Returns:
        dict {(key..., n): {"lr": the rate used, "median_best_val_mse":
        {repr(lr): value} (empty when one rate was run)}}.
    """
    return store.lr_choices(experiment, key)


def lr_edges(experiment: str) -> list[dict]:
    """How often the learning rate chosen on validation sits at an end of its grid.

    A rate picked at the top (or bottom) of the grid may mean the best rate
    lies outside it; the report lists these counts beside the budgets so a
    reader can judge. Counted over the ``net_search`` cells (their
    ``lr_chosen``) and the fixed-n ``net`` curve points (``lr_choices``)
    whose grid has at least two rates.

    Args:
        experiment: the experiment's name.

    Returns:
        list of dicts, one per (method, arch, grid): ``method``, ``arch``,
        ``grid`` (the rates, sorted), ``choices`` (how many were made),
        ``at_low`` and ``at_high`` (how many picked the smallest / largest).
    """
    rows: dict = {}

    def count(method, arch, grid, chosen):
        grid = tuple(sorted(float(g) for g in grid))
        r = rows.setdefault(
            (method, arch, grid),
            dict(method=method, arch=arch, grid=list(grid), choices=0, at_low=0, at_high=0),
        )
        r["choices"] += 1
        r["at_low"] += float(chosen) == grid[0]
        r["at_high"] += float(chosen) == grid[-1]

    for cell, res in store.results(experiment, "net_search"):
        swept = (res.get("lr_sweep") or {}).get("median_best_val_mse") or {}
        grid = [float(r) for r in swept] or cell.get("lr")  # the grid as extended at run time
        if isinstance(grid, list) and len(grid) > 1 and res.get("lr_chosen") is not None:
            count("net_search", cell["arch"], grid, res["lr_chosen"])
    for (_, arch, _), choice in lr_choices(experiment).items():
        grid = [float(r) for r in choice["median_best_val_mse"]]  # empty for a single rate
        if len(grid) > 1:
            count("net", arch, grid, choice["lr"])
    return list(rows.values())


def curves(experiment: str, method: str, key=("target", "arch")) -> dict:
    """Relative test MSE per sample size and seed, of the fixed-n cells of ``method``.

    Networks trained with several learning rates enter with the rate
    ``lr_choices`` picked on validation at that (curve, n).

    Args:
        experiment: the experiment's name.
        method: ``ntk`` (one seed a cell) or ``net`` (a seed list a cell).
        key: the cell fields that identify a curve.

    Returns:
        dict {(target, arch, ...): {n: {seed: relative test MSE}}}, n sorted.
    """
    out: dict = {}
    chosen = lr_choices(experiment, key) if method == "net" else None
    for cell, res in store.results(experiment, method):
        k = tuple(cell.get(x) for x in key)
        if chosen is not None:
            lr = cell["lr"]
            if lr != chosen[(*k, cell["n"])]["lr"]:
                continue
        seeds = cell["seeds"] if "seeds" in cell else [cell.get("seed", 0)]
        vals = res.get("test_mse_per_seed", [res.get("test_mse")])
        out.setdefault(k, {}).setdefault(cell["n"], {}).update(zip(seeds, vals))
    return {k: dict(sorted(v.items())) for k, v in out.items()}
