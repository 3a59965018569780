"""A dry run's plan: the estimated seconds of each cell (``cost.estimate``)
laid out on the workers, as ``ntkgap run --dry-run`` prints it: the per-cell
rows, the greedy makespan on N workers, and the basis of the estimates.
"""

from __future__ import annotations

from ntkgap.runs import store


def makespan(durations: list[float], workers: int) -> float:
    """Seconds until ``workers`` workers finish tasks of these durations,
    each task on one worker, the longest started first (as the local
    executor starts them; Graham's LPT list schedule, within 4/3 of the
    optimum). It is at least the longest task and the total / workers.

    Args:
        durations: each task's seconds (a task's cells run one after another).
        workers: how many run at once (>= 1).

    Returns:
        float seconds (0 with no task).
    """
    loads = [0.0] * max(1, int(workers))
    for d in sorted(durations, reverse=True):
        i = loads.index(min(loads))
        loads[i] += d
    return float(max(loads))


def plan(name: str, cells: list[dict], est: dict, workers: int) -> dict:
    """Per-cell estimates and the makespan of one experiment's cells.

    Args:
        name: the experiment's name (a key of ``est["experiments"]``).
        cells: its expanded cells, in :func:`estimate`'s order.
        est: :func:`estimate`'s result for them.
        workers: the workers running at once (``--jobs``, Dask workers).

    Returns:
        ``{"per_cell": [{"key", "method", "estimate_s", "how", "experiment",
        "target", "arch", "n_reach"}, ...] for the cells to compute,
        "makespan_s", "longest_task_s", "tasks"}``: tasks grouped as
        ``executors.tasks`` groups them (a search's steps and the searches
        sharing its evaluations run one after another in one worker).
    """
    from ntkgap.runs import executors  # here: it loads the methods; a dry run may not need them

    per, secs = [], {}
    for c, e in zip(cells, est["experiments"][name]["cells"]):
        if e["how"] == "stored":
            continue
        key = store.cell_key(c)
        secs[key] = e["seconds"]
        row = {"key": key, "method": c["method"], "estimate_s": e["seconds"], "how": e["how"],
               "experiment": name, "target": c.get("target"), "arch": c.get("arch")}  # fmt: skip
        if "n_reach" in e:
            row.update(n_reach=e["n_reach"], reach_from=e["reach_from"])
        per.append(row)
    todo = [c for c in cells if store.cell_key(c) in secs]
    chains = [sum(secs[store.cell_key(c)] for c in t) for t in executors.tasks(todo)]
    return {
        "per_cell": per,
        "makespan_s": makespan(chains, workers),
        "longest_task_s": float(max(chains, default=0.0)),
        "tasks": len(chains),
    }


def basis(est: dict) -> str:
    """What an :func:`estimate` rests on, in words (for the dry-run outputs).

    Args:
        est: an :func:`estimate` result.

    Returns:
        str: the stored cells it was calibrated on, or that it is uncalibrated.
    """
    if est["calibrated_on"]:
        return f"calibrated on {est['calibrated_on']} stored cells in {est['root']}"
    return "uncalibrated: reference rates of benchmarks/RESULTS.md"
