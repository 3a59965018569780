"""Nested kernel search vs today's per-n fits, and the Cholesky floor, in
one run. Prints ratios; not a test.

`python benchmarks/nested_bench.py [--L 5] [--seeds 8] [--n-max 16384] [--n-test 2048]`

Rows:
- "nested search": one tree-NTK ``ntk_search`` (tanh tree, eps 0.1), the
  way it ran before the nested search (``search.run_search``, every (seed,
  n) an independent fit: its own Gram and test Gram by neural-tangents'
  ``kernel_fn``, ``hypercube_lookup=False``, and its own factorization)
  against the nested way (``sample_complexity._ntk_nested``: per seed one
  factorization grown to the largest n its search asks for, every n read
  from its leading block). All find the same brackets (checked).
- "per-n fits, fast Gram": the same per-n fits with the node-recursion tree
  Gram (``ntk_predictor.evaluate``), against the nested way: what the
  nested factorization alone saves.
- "cholesky floor": per seed, the Gram at that seed's largest factored n
  plus one Cholesky of it, summed over seeds. Targets: nested >= 5x faster
  than today's, <= 2 factorizations per seed, <= 2x the floor.
"""

import argparse
import os
import sys
import time

import numpy as np
import scipy.linalg as sla

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from ntkgap.kernels import gram, krr, ntk_predictor  # noqa: E402
from ntkgap.nets.arch import parse_arch  # noqa: E402
from ntkgap.runs import sample_complexity, search  # noqa: E402
from ntkgap.targets import parse_target  # noqa: E402
from ntkgap.targets.split import split  # noqa: E402
from ntkgap.targets.variance import target_variance  # noqa: E402


def _filing_fits(a, t, n_test):
    """Per-n fits as before the nested search: kernel_fn Grams, one fit each."""
    var = target_variance(t)

    def run(batch):
        out = []
        for s, n in batch:
            sp = split(t, n, seed=s, n_test=n_test)
            x = a.inputs(t.domain, np.concatenate([sp.x_train, sp.x_val]))
            sol = krr.fit(gram.gram(a, x, hypercube_lookup=False),
                          np.concatenate([sp.y_train, sp.y_val]))  # fmt: skip
            xt = a.inputs(t.domain, sp.x_test)
            pred = sol.predict(gram.gram(a, xt, x, hypercube_lookup=False))
            out.append(float(np.mean((pred - sp.y_test) ** 2)) / var)
        return out

    return run


def _same_brackets(nested, other) -> bool:
    """Whether a per-n search found every seed's bracket the nested one found."""
    return all((p["lo"], p["hi"]) == (q["lo"], q["hi"])
               for p, q in zip(nested["per_seed"], other["seeds"]))  # fmt: skip


def _floor(a, t, seeds, factor_n, n_test):
    """CPU seconds of the floor: per seed, the Gram at its largest factored n
    plus one Cholesky of it (the points drawn outside the clock; the
    Cholesky in place on the symmetric Gram's Fortran-ordered view)."""
    total = 0.0
    for s in seeds:
        sp = split(t, factor_n[str(s)], seed=s, n_test=n_test)
        x = a.inputs(t.domain, np.concatenate([sp.x_train, sp.x_val]))
        t0 = time.process_time()
        k = gram.gram(a, x)
        sla.cho_factor(k.T, lower=True, overwrite_a=True, check_finite=False)
        total += time.process_time() - t0
    return total


def rows(L=4, seeds=8, n_max=4096, n_test=2048, eps=0.1, filing=True):
    """The rows, measured back to back in this process (CPU seconds of
    the process, all threads: the shared machine's wall time is noisy).

    Args:
        L: tree depth (binary tanh tree on d = 64 inputs).
        seeds, n_max, n_test, eps: the search's settings (n_min = 4).
        filing: also time the filing-time per-n fits (slow: kernel_fn Grams).

    Returns:
        list of dicts (row, seconds, ratio, target, note).
    """
    target = f"tree:d=64,L={L},arity=2,node=tanh"
    cell = dict(method="ntk_search", arch=f"tree:arity=2,L={L}", eps=eps, n_min=4, n_max=n_max,
                seeds=list(range(seeds)), target=target, n_test=n_test)  # fmt: skip
    a, t = parse_arch(cell["arch"]), parse_target(cell["target"])
    # warm-up (JAX compilation of the kernel's blocks), paid by neither side
    ntk_predictor.NestedCurve(a, t, seed=10**6, n_test=n_test).at(300)
    t0 = time.process_time()
    nested = sample_complexity._ntk_nested(cell)
    t_nested = time.process_time() - t0

    def today(batch):
        return [ntk_predictor.evaluate(a, t, n, seed=s, n_test=n_test)["test_mse"]
                for s, n in batch]  # fmt: skip

    t0 = time.process_time()
    old = search.run_search(today, cell["seeds"], eps, 4, n_max)
    t_today = time.process_time() - t0
    same = _same_brackets(nested, old)
    t_filing = same_filing = None
    if filing:
        t0 = time.process_time()
        fil = search.run_search(_filing_fits(a, t, n_test), cell["seeds"], eps, 4, n_max)
        t_filing = time.process_time() - t0
        same_filing = _same_brackets(nested, fil)
    t_floor = _floor(a, t, cell["seeds"], nested["factor_n"], n_test)
    per_seed = nested["factorizations"] / seeds
    note = (f"L={L}, {seeds} seeds, n_max {n_max}, n_test {n_test}; factor n "
            f"{sorted(nested['factor_n'].values())}; evaluations {old['evaluations']} "
            f"(today) vs {len(nested['evaluations'])}; same brackets: {same}")  # fmt: skip
    out = []
    if filing:
        out.append(dict(row="nested search", seconds=t_nested, ratio=t_filing / t_nested,
                        target=">= 5x",
                        note=f"filing-time per-n fits (kernel_fn Grams) {t_filing:.1f} s vs "
                             f"nested {t_nested:.1f} s; same brackets: {same_filing}; "
                             f"{per_seed:.2f} factorizations per seed (<= 2)"))  # fmt: skip
    out += [
        dict(row="per-n fits, fast Gram", seconds=t_nested, ratio=t_today / t_nested, target="-",
             note=f"today {t_today:.1f} s vs nested {t_nested:.1f} s; {per_seed:.2f} "
                  f"factorizations per seed (<= 2); {note}"),
        dict(row="cholesky floor", seconds=t_floor, ratio=t_nested / t_floor, target="<= 2x",
             note=f"nested {t_nested:.1f} s / floor {t_floor:.1f} s (Gram + one Cholesky "
                  "at each seed's largest factored n)"),
    ]  # fmt: skip
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--L", type=int, default=4)
    p.add_argument("--seeds", type=int, default=8)
    p.add_argument("--n-max", type=int, default=4096)
    p.add_argument("--n-test", type=int, default=2048)
    p.add_argument("--no-filing", action="store_true", help="skip the kernel_fn per-n fits")
    args = p.parse_args()
    for r in rows(args.L, args.seeds, args.n_max, args.n_test, filing=not args.no_filing):
        print(f"{r['row']:<16} {r['seconds']:8.1f} s  ratio {r['ratio']:.2f} "
              f"(target {r['target']})  {r['note']}")  # fmt: skip


if __name__ == "__main__":
    main()
