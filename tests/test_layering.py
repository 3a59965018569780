"""The package's folders are the pipeline: a subpackage imports only from
its own level or below, and no module imports itself back through others.

Levels (the data flow of the layout issue): the base (errors, specs,
_infra) < spectral < targets < nets and kernels < runs < verdicts < the
root façade (``__init__``, ``cli``, ``__main__``). Imports inside functions
count as much as those at the top.
"""

import ast
import pathlib

import pytest

PKG = pathlib.Path(__file__).resolve().parents[1] / "ntkgap"

LEVEL = {
    "errors": 0, "specs": 0, "_infra": 0,
    "spectral": 1,
    "targets": 2,
    "nets": 3, "kernels": 3,
    "runs": 4,
    "verdicts": 5,
    "__init__": 6, "api": 6, "results": 6, "_version": 0,
    "cli": 6, "cli_common": 6, "compare_report": 6, "cli_experiments": 6, "__main__": 6,
}  # fmt: skip


def _module_name(path: pathlib.Path) -> str:
    parts = list(path.relative_to(PKG.parent).with_suffix("").parts)
    if parts[-1] == "__init__" and len(parts) > 1:
        parts = parts[:-1]
    return ".".join(parts)


def _imports(path: pathlib.Path) -> set[str]:
    """Every ntkgap module named by an import in this file (a ``from
    ntkgap.x import y`` counts as ntkgap.x.y when y is a module)."""
    modules = {_module_name(p) for p in PKG.rglob("*.py")}
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names if a.name.startswith("ntkgap")}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if not node.module.startswith("ntkgap"):
                continue
            for a in node.names:
                sub = f"{node.module}.{a.name}"
                out.add(sub if sub in modules else node.module)
    return out


def _graph() -> dict[str, set[str]]:
    return {_module_name(p): _imports(p) - {_module_name(p)} for p in PKG.rglob("*.py")}


def _top(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def _upward(graph) -> list[str]:
    bad = []
    for mod, deps in graph.items():
        for dep in deps:
            if dep == "ntkgap" and _top(mod) == "__init__":
                continue
            if LEVEL[_top(dep)] > LEVEL[_top(mod)]:
                bad.append(f"{mod} -> {dep}")
    return sorted(bad)


def _cycles(graph) -> list[list[str]]:
    """Strongly connected components of size > 1 (Tarjan's algorithm)."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in graph:
                continue
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in graph:
        if v not in index:
            visit(v)
    return out


def test_every_folder_has_a_level():
    tops = {_top(m) for m in _graph()}
    assert tops <= set(LEVEL), sorted(tops - set(LEVEL))


def test_no_import_runs_upward():
    assert _upward(_graph()) == []


def test_no_import_cycle():
    assert _cycles(_graph()) == []


def test_subpackages_of_one_level_form_no_cycle():
    """nets and kernels share a level: between the two, imports go one way."""
    graph = _graph()
    edges = {(_top(m), _top(d)) for m, ds in graph.items() for d in ds}
    assert not {("nets", "kernels"), ("kernels", "nets")} <= edges


@pytest.mark.parametrize(
    "graph, upward, cycles",
    [
        ({"ntkgap.spectral.walsh": {"ntkgap.runs.runner"}, "ntkgap.runs.runner": set()},
         ["ntkgap.spectral.walsh -> ntkgap.runs.runner"], []),
        ({"ntkgap.runs.a": {"ntkgap.runs.b"}, "ntkgap.runs.b": {"ntkgap.runs.a"}},
         [], [["ntkgap.runs.a", "ntkgap.runs.b"]]),
        ({"ntkgap.verdicts.claims": {"ntkgap.runs.runner"}, "ntkgap.runs.runner": set()},
         [], []),
    ],
)  # fmt: skip
def test_the_checks_catch_planted_faults(graph, upward, cycles):
    assert _upward(graph) == upward
    assert _cycles(graph) == cycles


def test_no_module_over_700_lines():
    """One kind of thing per module: none of the package's, the experiments'
    or the benchmarks' modules runs past 700 lines."""
    root = pathlib.Path(__file__).resolve().parent.parent
    long = {}
    for folder in ("ntkgap", "experiments", "benchmarks"):
        for path in (root / folder).rglob("*.py"):
            n = len(path.read_text().splitlines())
            if n > 700:
                long[str(path.relative_to(root))] = n
    assert not long, long
