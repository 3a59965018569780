"""End to end, as `make figures` runs it, on every experiment's smallest
config: each experiments/*.toml shrunk (two grid tables of a kind, two
smallest n, two seeds, 100 training steps, width <= 16, one learning rate
per search, at most three archs and targets per theory grid), run by the CLI's runner into a
temporary results folder, then every figure script and the report read
only those results. Figures and verdicts from such tiny runs mean nothing;
what is checked is that the whole chain runs, writes every file it
promises, and that each verdict is one of the allowed words."""

import glob
import json
import os
import subprocess
import sys
import tomllib

import pytest
from conftest import ROOT

from ntkgap.runs.claim_family import expand_families
from ntkgap.verdicts import claims, rules

EXPERIMENTS = sorted(glob.glob(os.path.join(ROOT, "experiments", "*.toml")))
FIGURES = sorted(glob.glob(os.path.join(ROOT, "experiments", "figures", "fig_*.py")))
VERDICTS = set(claims.VERDICTS)
CLAIM_FIELDS = {
    "id",
    "claim",
    "predictors",
    "statistic",
    "value",
    "lo",
    "hi",
    "seeds",
    "rule",
    "verdict",
}


RUN_ALL = """
import sys
from ntkgap.cli import main
from ntkgap.runs import config
for path in sys.argv[1:]:
    # quick where the config has it, else paper (the experiments quick leaves out); a
    # config of full alone (e8_modifications) is left to its own tests
    cfg = config.load_config(path)
    if "quick" not in cfg and "paper" not in cfg:
        continue
    prof = "quick" if "quick" in cfg else "paper"
    if main(["run", path, "--profile", prof, "--jobs", "1"]):
        sys.exit(f"ntkgap run {path} failed")
"""


def _shrink(grid):
    g = dict(grid)
    m = g["method"]
    if m in ("ntk", "net", "after_kernel") and isinstance(g.get("n"), list):
        g["n"] = sorted(g["n"])[:2]
    elif m in ("ntk", "net", "after_kernel"):
        g["n"] = min(g["n"], 128)
    for key in ("seed", "seeds"):
        if isinstance(g.get(key), list):
            g[key] = g[key][:2]
    if m in ("ntk_search", "net_search", "after_kernel_search"):
        g.update(n_min=4, n_max=min(g["n_max"], 12), n_test=min(g.get("n_test", 200), 4))
    if m in ("net", "net_search", "after_kernel", "after_kernel_search"):
        g.update(steps=min(g.get("steps", 100), 100), eval_every=50)
        g["width"] = min(min(g["width"]) if isinstance(g["width"], list) else g["width"], 16)
        if isinstance(g.get("lr"), list):
            # fixed-n nets: two rates, one chosen on validation; searches: one rate, so
            # the sweep runs without growing its grid (growth: test_lr_sweep.py; the
            # report's lr-edge counts: test_claims.py)
            g["lr"] = g["lr"][:2] if m in ("net", "after_kernel") else g["lr"][:1]
    if m in ("ntk", "net", "after_kernel"):
        g["n_test"] = 200
    if m in ("theory", "eigen"):  # every path runs with a few archs and targets
        for key in ("arch", "target"):
            if isinstance(g.get(key), list):
                g[key] = g[key][:3]
    return g


def _toml_value(v):
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, list):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{ " + ", ".join(f"{k} = {_toml_value(x)}" for k, x in v.items()) + " }"
    return json.dumps(v)  # strings, ints and floats read back the same in TOML


#: grid tables kept per (method, target family, error, arch families) in a profile: the
#: chain's every path at two settings, without every depth's compilations (the figures
#: and claims then read fewer depths, which they must handle anyway)
TABLES_PER_KIND = 2


def _kind(grid):
    def family(v):
        return tuple(sorted({str(x).split(":")[0] for x in (v if isinstance(v, list) else [v])}))

    return (grid["method"], family(grid.get("target", grid.get("domain", ""))),
            grid.get("target_error"), family(grid.get("arch", "")))  # fmt: skip


def _fewer(grids):
    """The first TABLES_PER_KIND grid tables of each kind, in config order."""
    seen, out = {}, []
    for g in grids:
        k = _kind(g)
        seen[k] = seen.get(k, 0) + 1
        if seen[k] <= TABLES_PER_KIND:
            out.append(g)
    return out


def _write_small(path, out_dir):
    with open(path, "rb") as fh:
        cfg = expand_families(tomllib.load(fh), path)
    lines = [f"name = {_toml_value(cfg['name'])}", f"title = {_toml_value(cfg.get('title', ''))}"]
    for c in cfg.get("claim", []):
        lines += ["[[claim]]"] + [f"{k} = {_toml_value(v)}" for k, v in c.items()]
    for prof in (p for p in ("quick", "paper", "full") if p in cfg):
        lines.append(f"[{prof}]")
        if not cfg[prof]["grid"]:
            lines.append("grid = []")
        for grid in _fewer(cfg[prof]["grid"]):
            lines.append(f"[[{prof}.grid]]")
            lines += [f"{k} = {_toml_value(v)}" for k, v in _shrink(grid).items()]
    dest = os.path.join(out_dir, os.path.basename(path))
    with open(dest, "w") as fh:
        fh.write("\n".join(lines) + "\n")
    return dest


@pytest.fixture(scope="module")
def pipeline(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("pipeline")
    env = dict(
        os.environ,
        NTKGAP_RESULTS=str(tmp / "results"),
        NTKGAP_FIGURES=str(tmp / "figures"),
        NTKGAP_REPORT=str(tmp / "REPORT.md"),
        NTKGAP_PROFILE="quick",
        NTKGAP_PROGRESS="0",
    )

    def run(*argv):
        p = subprocess.run(
            [sys.executable, *argv], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600
        )
        assert p.returncode == 0, f"{argv}: {p.stderr[-2000:]}"
        return p

    (tmp / "configs").mkdir()
    small = [_write_small(path, str(tmp / "configs")) for path in EXPERIMENTS]
    # `ntkgap run` for every experiment, one after another, in ONE process:
    # JAX and neural-tangents are imported once, not once per experiment and
    # worker (the process pool of --jobs 2 is tested in test_runner.py)
    run("-c", RUN_ALL, *small)
    for script in FIGURES:
        run(script)
    report = run(os.path.join(ROOT, "experiments", "report.py"), "quick")
    return tmp, report.stdout


def test_every_figure_is_drawn(pipeline):
    tmp, _ = pipeline
    for script in FIGURES:
        name = os.path.basename(script)[4:-3]
        for ext in ("png", "pdf"):
            path = tmp / "figures" / f"{name}.{ext}"
            assert path.is_file() and path.stat().st_size > 1000, path


def test_report_and_summary_carry_every_claim(pipeline):
    tmp, stdout = pipeline
    summary = json.loads((tmp / "results" / "summary.json").read_text())
    ids = {c["id"] for c in summary["claims"]}
    # every claim declared in a config reaches the summary, with the contract's fields
    declared = set()
    for path in EXPERIMENTS:
        with open(path, "rb") as fh:
            declared |= {c["id"] for c in expand_families(tomllib.load(fh), path).get("claim", [])}
    assert declared == ids, ids ^ declared
    assert {"E1", "E2", "E3a-ntk", "E3a-rkhs", "E3b-k3-relu-b0.1", "E4-Q1-tree-parity"} <= ids
    text = (tmp / "REPORT.md").read_text()
    for c in summary["claims"]:
        assert CLAIM_FIELDS <= set(c), c["id"]
        assert c["verdict"] in VERDICTS
        if c["lo"] is not None:
            assert c["seeds"] >= 8, c["id"]  # a CI needs >= 8 seeds
        if c["verdict"] == rules.NOT_RUN:  # folded: one line per larger profile
            line = next(x for x in text.splitlines() if x.startswith(f"- {c['profile']} profile"))
            assert c["id"] in line.split(": ", 1)[1].split(", ")
            continue
        assert f"| {c['id']} | {c['profile']} | **{c['verdict']}** |" in text
        assert c["rule"]["text"] in text  # the pre-registered rule is echoed
    for script in FIGURES:
        # every figure has its caption
        assert f"figures/{os.path.basename(script)[4:-3]}.png" in text
    assert "at most 100 steps" in text  # budgets come from the configs as run, not the repo's
    assert "# ntkgap report (quick profile)" in text and "claims:" in stdout
    # the answer first: the headline's row above the summary table
    head = next(c for c in summary["claims"] if c["id"] == "E4-Q1-tree-tanh")
    answer = text.index("## The answer")
    assert answer < text.index("| claim | profile | verdict |")
    assert "| E4-Q1-tree-tanh: " in text[answer:] and f"**{head['verdict']}**" in text[answer:]
