"""Estimate what a profile will cost before running it, from the cells
already stored (usually the quick profile's): each method's seconds per unit
of work are fitted on the stored cells, then applied to the target
profile's cells. Work per cell: seeds x steps x (batch x weights per example
+ a fixed per-step cost, fitted on the stored cells with the steps they
really ran) for networks, n^3 / 3 (Cholesky) plus the test Gram for KRR;
other methods take their stored median time. A rough guide (within a factor ~2-3), not a
promise: it assumes this machine and cell sizes it can extrapolate to.

Search cells (``ntk_search``, ``net_search``) are estimated from a stored
search cell of the same experiment and method (the one matching best: same
arch and target, else same arch, else same arch family, else any), whose
``cell_seconds`` is scaled by the ratio of modelled work, full over stored:

- the full search makes the stored search's evaluations (the learning-rate
  sweep's seeds x rates at its n, then every (seed, n) of the search), with
  each n multiplied by n_max(full) / n_max(stored) (the geometric bracket
  stretched to the longer range; an upper bound for seeds whose n* was
  resolved below the stored n_max) and the seeds repeated seeds(full) /
  seeds(stored) times;
- each evaluation costs what the fitted one-seed ``net``/``ntk`` law above
  gives for the full cell's steps, width, batch and n_test (``net`` with a
  minibatch: seeds x steps x batch x weights, so independent of n; ``ntk``:
  n^3 / 3 plus the test Gram), floored at the median stored cell;
- the stored seconds divided by the same model applied to the stored search
  calibrates the model (search bookkeeping, early stopping at a plateau,
  this machine's load).

A cell stored already counts its stored seconds. Prints core-hours per
experiment and in total.

    python benchmarks/estimate_profile.py [full|quick] [--detail]
    (NTKGAP_RESULTS: where the stored cells are, default results/;
    --detail: core-hours per method and arch too)
"""

import glob
import os
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
from ntkgap._infra import config  # noqa: E402
from ntkgap.nets.arch import parse_arch  # noqa: E402
from ntkgap.runs import config as runs_config  # noqa: E402
from ntkgap.runs import store  # noqa: E402
from ntkgap.runs.sample_complexity import evaluation_cell  # noqa: E402
from ntkgap.targets import parse_target  # noqa: E402


def work(cell, step_overhead=0.0):
    """Modelled work of a cell: for a net, seeds x steps x (rows per step x
    weights + ``step_overhead``), the last term the fixed cost of a step of a
    small net (dispatch, optimiser update) in the same units; for KRR, the
    Cholesky plus the test Gram; None for other methods."""
    m = cell["method"]
    if m == "net":
        a, t = parse_arch(cell["arch"]), parse_target(cell["target"])
        dom = t.domain
        d = 2 if dom.name == "circle" else getattr(dom, "input_dim", None) or dom.d
        w = cell["width"]
        rows = int(0.8 * cell["n"])  # the training rows: a batch larger is the full set
        batch = min(cell.get("batch") or rows, rows)
        if a.name == "fc":
            weights = d * w + (a.spec["depth"] - 1) * w * w + w
        else:
            weights = 2 * a.leaves * w
        return len(cell["seeds"]) * cell["steps"] * (batch * weights + step_overhead)
    if m == "ntk":
        return cell["n"] ** 3 / 3 + 50 * cell["n"] * cell.get("n_test", 2000)
    return None


def stored_records(root):
    """experiment name -> list of stored records (cell, result), failed ones
    included (their time was spent)."""
    out = {}
    for path in glob.glob(os.path.join(root, "*", "*.json")):
        if os.path.basename(path).startswith("."):
            continue
        rec = store.load_result(path)
        if rec and "cell_seconds" in rec.get("result", {}):
            out.setdefault(os.path.basename(os.path.dirname(path)), []).append(rec)
    return out


class Model:
    """Seconds of a cell from the stored cells: per method, an affine law
    overhead + rate x :func:`work` fitted (least squares, both >= 0) on the
    stored cells of the same experiment when they have at least 3 different
    amounts of work, else a rate alone fitted on the largest
    quarter of all experiments' cells of that method (the most
    compute-bound); a method without work takes its median stored time."""

    def __init__(self, stored):
        self.local, self.rate, self.floor = {}, {}, {}
        self.step_overhead = self._step_overhead(stored)
        pts = {}
        for exp, recs in stored.items():
            by_m = {}
            for rec in recs:
                c = rec["cell"]
                # a search step's runs share one call: its seconds per run
                share = rec["result"].get("batched_runs", 1)
                p = (work(c, self.step_overhead), rec["result"]["cell_seconds"] / share)
                by_m.setdefault(c["method"], []).append(p)
                pts.setdefault(c["method"], []).append(p)
            for m, p in by_m.items():
                if p[0][0] is None or len({w for w, _ in p}) < 3:
                    continue
                w = np.array([x for x, _ in p], float)
                t = np.array([y for _, y in p], float)
                rate, overhead = np.polyfit(w, t, 1)
                if rate <= 0:  # no visible growth: the median time
                    rate, overhead = 0.0, float(np.median(t))
                elif overhead < 0:
                    rate, overhead = float(np.sum(w * t) / np.sum(w * w)), 0.0
                self.local[(exp, m)] = (float(overhead), float(rate))
        # one-seed ntk cells (a search's evaluations): time ~ a n^p, fitted
        # log-log on the larger half of n (the Gram, not the Cholesky, leads
        # at these n, so p is measured rather than assumed to be 3)
        self.ntk_power = {}
        for exp, recs in stored.items():
            nt = [
                (r["cell"]["n"], r["result"]["cell_seconds"])
                for r in recs
                if r["cell"]["method"] == "ntk"
            ]
            n = np.array([x for x, _ in nt], float)
            if len(set(n)) >= 3:
                big = n >= np.median(n)
                t = np.array([y for _, y in nt], float)[big]
                if len(set(n[big])) >= 2:
                    self.ntk_power[exp] = float(
                        np.clip(np.polyfit(np.log(n[big]), np.log(t), 1)[0], 1, 3)
                    )
        for m, p in pts.items():
            secs = np.array([y for _, y in p])
            self.floor[m] = float(np.median(secs))
            if p[0][0] is not None:
                w = np.array([x for x, _ in p], float)
                big = w >= np.quantile(w, 0.75)
                self.rate[m] = float(np.median(secs[big] / w[big]))

    @staticmethod
    def _step_overhead(stored):
        """The fixed cost of one training step in units of rows x weights:
        seconds per run = a + steps x seeds x (p + q x rows x weights) fitted
        by least squares on the stored net cells with the steps they really
        ran (a plateau stops them before the cap); returns p / q. Small nets
        are dominated by p (measured here: ~50 us a step, the cost of ~4e5
        row-weights), so a purely compute-bound law would overrate them."""
        x, t = [], []
        for recs in stored.values():
            for rec in recs:
                c, res = rec["cell"], rec["result"]
                if c["method"] != "net" or "steps_per_seed" not in res:
                    continue
                ran = dict(c, steps=max(res["steps_per_seed"]))
                x.append((work(dict(ran, seeds=[0], steps=1)), len(c["seeds"]) * ran["steps"]))
                t.append(res["cell_seconds"] / res.get("batched_runs", 1))
        if len(t) < 10:
            return 0.0
        A = np.array([[1.0, s, s * w] for w, s in x])
        (_, p, q), *_ = np.linalg.lstsq(A, np.array(t), rcond=None)
        return float(p / q) if p > 0 and q > 0 else 0.0

    def search_unit(self, cell, experiment):
        """Relative cost of one evaluation of a search (only ratios are
        used): a net's :func:`work` (seeds x steps x batch x weights: the
        compute-bound law, an upper bound where small nets are overhead-bound
        and steps a cap that a plateau stops earlier); an ntk cell's n^p with
        p fitted on the experiment's stored ntk cells (3 if none)."""
        if cell["method"] == "net":
            return work(cell, self.step_overhead)
        return float(cell["n"]) ** self.ntk_power.get(experiment, 3.0)

    def seconds(self, cell, experiment=None):
        m = cell["method"]
        w = work(cell, self.step_overhead)
        if w is not None and (experiment, m) in self.local:
            overhead, rate = self.local[(experiment, m)]
            return overhead + rate * w
        if w is not None and m in self.rate:
            return self.rate[m] * w
        return self.floor.get(m, 1.0)


def _search_work(model, exp, cell, stored, scale_n=1.0, repeat=1.0):
    """Modelled seconds of ``cell``'s search making ``stored`` result's
    evaluations with every n times ``scale_n``, ``repeat`` times over."""
    res = stored["result"]
    n_max = cell["n_max"]

    def one(n, lr=None):
        n = int(min(n_max, max(cell["n_min"], round(n * scale_n))))
        return model.search_unit(evaluation_cell(cell, n, 0, lr=lr), exp)

    total = sum(one(e["n"]) for e in res.get("evaluations", []))
    sweep = res.get("lr_sweep")
    if sweep:  # each rate's seeds at the sweep's n (the chosen rate's then reused)
        lrs = cell["lr"] if isinstance(cell.get("lr"), list) else [cell.get("lr")]
        n_seeds = len(stored["cell"]["seeds"])
        total += sum(n_seeds * one(sweep["n"], lr) for lr in lrs)
    return repeat * total


def _match(cell, candidates):
    """The stored search cell most like ``cell`` (same method)."""
    same = [r for r in candidates if r["cell"]["method"] == cell["method"]]

    def score(r):
        c = r["cell"]
        return (
            c["arch"] == cell["arch"],
            c["target"] == cell["target"],
            c["arch"].split(":")[0] == cell["arch"].split(":")[0],
            -abs(np.log(c["n_max"] / cell["n_max"])),
        )

    return max(same, key=score) if same else None


def search_seconds(model, exp, cell, candidates):
    """Estimated seconds of a search cell (see the module doc), or None
    when no stored search of that method exists."""
    q = _match(cell, candidates)
    if q is None:
        return None
    if q["cell"] == cell:
        return q["result"]["cell_seconds"]
    qc = q["cell"]
    modelled_quick = _search_work(model, exp, qc, q)
    modelled_full = _search_work(
        model,
        exp,
        cell,
        q,
        scale_n=cell["n_max"] / qc["n_max"],
        repeat=len(cell["seeds"]) / len(qc["seeds"]),
    )
    return q["result"]["cell_seconds"] * modelled_full / max(modelled_quick, 1e-9)


def main(profile, detail=False):
    root = config.results_dir()
    stored = stored_records(root)
    if not stored:
        sys.exit(f"estimate_profile: no stored results in {root} to calibrate on")
    model = Model(stored)
    total = 0.0
    print(f"calibrated on {sum(map(len, stored.values()))} stored cells in {root}")
    print(f"{'experiment':16s} {'cells':>6s} {'searches':>9s} {'estimated core-hours':>22s}")
    for path in sorted(glob.glob(os.path.join(ROOT, "experiments", "*.toml"))):
        cfg = runs_config.load_config(path)
        if profile not in cfg:
            continue
        name = cfg["name"]
        recs = stored.get(name, [])
        by_key = {store.cell_key(r["cell"]): r for r in recs}
        searches = [r for r in recs if r["cell"]["method"].endswith("_search")]
        cells = runs_config.expand(cfg, profile, validate=False)
        secs, n_search, guessed, parts = 0.0, 0, 0, {}
        for c in cells:
            if store.cell_key(c) in by_key:
                est = by_key[store.cell_key(c)]["result"]["cell_seconds"]
            elif c["method"].endswith("_search"):
                est = search_seconds(model, name, c, searches)
                if est is None:  # nothing to scale: one evaluation at n_max per seed (a floor)
                    guessed += 1
                    est = model.seconds(evaluation_cell(c, c["n_max"], 0), name) * len(c["seeds"])
            else:
                est = model.seconds(c, name)
            secs += est
            part = f"{c['method']} {c.get('arch', '')}".strip()
            parts[part] = parts.get(part, 0.0) + est
            n_search += c["method"].endswith("_search")
        total += secs
        note = []
        if guessed:
            note.append(f"{guessed} searches without a stored one to scale")
        if not recs:
            note.append("no stored cells of its own: rates of other experiments")
        note = f"   ({'; '.join(note)})" if note else ""
        print(f"{name:16s} {len(cells):6d} {n_search:9d} {secs / 3600:22.2f}{note}")
        if detail:
            for part, v in sorted(parts.items(), key=lambda kv: -kv[1]):
                print(f"    {part:40s} {v / 3600:10.2f}")
    print(
        f"{'total':16s} {'':6s} {'':9s} {total / 3600:22.2f}   (cells run 2 at a time on a "
        f"2-core machine: ~{total / 3600 / 2:.1f} h wall)"
    )
    return total


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    main(args[0] if args else "full", detail="--detail" in sys.argv)
