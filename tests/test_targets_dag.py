"""User-defined DAG targets (file:PATH.toml): a hand-derived spectrum,
tree detection, safe polynomials, and one-line errors for malformed files."""

import glob
import json
import os

import numpy as np
import pytest

from ntkgap.errors import SpecError
from ntkgap.spectral import walsh
from ntkgap.targets import parse_target, with_depth
from ntkgap.targets.domains import Hypercube

DATA = os.path.join(os.path.dirname(__file__), "data", "dags")
HAND = os.path.join(DATA, "hand.toml")

# f = x0 x1 + maj(x2, x3, x4) + OR(x5, x6), by hand:
# maj(a, b, c) = (a + b + c - abc) / 2;  OR(a, b) = (1 + a + b - ab) / 2
HAND_COEFFICIENTS = {
    (): 0.5,
    (0, 1): 1.0,
    (2,): 0.5,
    (3,): 0.5,
    (4,): 0.5,
    (2, 3, 4): -0.5,
    (5,): 0.5,
    (6,): 0.5,
    (5, 6): -0.5,
}


def _write(tmp_path, text, name="g.toml"):
    p = tmp_path / name
    p.write_text(text)
    return str(p)


def test_hand_derived_spectrum_round_trips():
    t = parse_target(f"file:{HAND}")
    assert t.support == tuple(range(7))
    ws = walsh.walsh_spectrum(t)
    expected = np.zeros(2**7)
    for subset, value in HAND_COEFFICIENTS.items():
        expected[sum(1 << j for j in subset)] = value
    np.testing.assert_allclose(ws.coefficients, expected, atol=1e-14)
    a = t.architecture()
    assert (a["constituents"], a["max_fan_in"], a["depth"], a["support_size"]) == (4, 3, 2, 7)
    # the unused coordinate x7 changes nothing
    x = Hypercube(8).enumerate()
    y = x.copy()
    y[:, 7] *= -1
    np.testing.assert_array_equal(t(x), t(y))


def test_hand_spectrum_through_the_cli(cli):
    r = cli("spectrum", "--target", f"file:{HAND}", "--json")
    assert r.returncode == 0, r.stderr
    rep = json.loads(r.stdout)
    assert rep["target"] == f"file:{HAND}"
    weights = {k: 0.0 for k in range(8)}
    for subset, value in HAND_COEFFICIENTS.items():
        weights[len(subset)] += value**2
    np.testing.assert_allclose(rep["weight"], [weights[k] for k in range(8)], atol=1e-14)
    assert rep["variance"] == pytest.approx(sum(weights.values()) - 0.25)
    assert rep["architecture"]["constituents"] == 4


def test_spec_forms_round_trip():
    t = parse_target(f"file:path={HAND}")
    assert str(t.spec) == f"file:{HAND}"
    assert str(parse_target(str(t.spec)).spec) == str(t.spec)
    assert t.moments()["mean"] == pytest.approx(0.5)


def test_balanced_tree_gives_its_architecture(tmp_path):
    t = parse_target(f"file:{os.path.join(DATA, 'tree.toml')}")
    assert t.is_tree() and t.tree_arch() == "tree:arity=2,L=2"
    x = Hypercube(6).enumerate().astype(float)
    left = np.where((x[:, 0] > 0) & (x[:, 1] > 0), 1.0, -1.0)
    right = np.where((x[:, 2] < 0) & (x[:, 3] < 0), -1.0, 1.0)
    np.testing.assert_array_equal(t(x), left * right)
    # the same tree as the built-in target
    ref = parse_target("tree:d=6,L=2,arity=2,node=parity")
    dag = _tree_file(tmp_path, 2, 2, "parity", d=6)
    np.testing.assert_array_equal(dag(x), ref(x))


def _tree_file(folder, arity, L, fn, order=None, d=None):
    d = d or arity**L
    lines = [f'domain = "hypercube:d={d}"']
    coords = order or list(range(arity**L))
    names = list(coords)
    k = 0
    while len(names) > 1:
        nxt = []
        for i in range(0, len(names), arity):
            k += 1
            lines += ["[[node]]", f'name = "n{k}"', f"inputs = {json.dumps(names[i : i + arity])}"]
            lines += [f'fn = "{fn}"']
            nxt.append(f"n{k}")
        names = nxt
    return parse_target(f"file:{_write(folder, chr(10).join(lines) + chr(10), 'tree.toml')}")


@pytest.mark.parametrize(
    "arity,L,order,expected",
    [
        (3, 2, None, "tree:arity=3,L=2"),
        (2, 3, [1, 0, 3, 2, 6, 7, 4, 5], "tree:arity=2,L=3"),
        (2, 2, [0, 2, 1, 3], None),  # subtrees are not aligned blocks
        (2, 2, [4, 5, 6, 7], None),  # not the first a^L coordinates
    ],
)
def test_tree_arch_detection(tmp_path, arity, L, order, expected):
    t = _tree_file(tmp_path, arity, L, "parity", order=order, d=8 if order else None)
    assert t.tree_arch() == expected


def test_shared_node_is_not_a_tree(tmp_path):
    path = _write(
        tmp_path,
        'domain = "hypercube:d=3"\n[[node]]\nname = "a"\ninputs = [0, 1]\nfn = "and"\n'
        '[[node]]\nname = "b"\ninputs = ["a", 2]\nfn = "or"\n'
        '[[node]]\nname = "c"\ninputs = ["a", "b"]\nfn = "parity"\n',
    )
    t = parse_target(f"file:{path}")
    assert not t.is_tree() and t.tree_arch() is None
    assert t.architecture()["depth"] == 3


def test_poly_is_evaluated_as_written(tmp_path):
    path = _write(
        tmp_path,
        'domain = "hypercube:d=3"\n[[node]]\nname = "p"\ninputs = [2, 0, 1]\nfn = "poly"\n'
        'expr = "(x0 - 1)**2 * 3 - -x1 + 0.5*x1*x2 + x2**0"\n',
    )
    x = Hypercube(3).enumerate().astype(float)
    a, b, c = x[:, 2], x[:, 0], x[:, 1]
    expected = (a - 1) ** 2 * 3 + b + 0.5 * b * c + 1
    np.testing.assert_allclose(parse_target(f"file:{path}")(x), expected, rtol=1e-15)


def test_table_follows_the_walsh_index_convention(tmp_path):
    # entry i: input j is -1 where bit j of i is set; here the value is i itself
    path = _write(
        tmp_path,
        'domain = "hypercube:d=2"\n[[node]]\nname = "t"\ninputs = [1, 0]\nfn = "table"\n'
        "table = [0, 1, 2, 3]\n",
    )
    x = np.array([[1, 1], [1, -1], [-1, 1], [-1, -1]])
    # inputs are (x1, x0): bit 0 <-> x1, bit 1 <-> x0
    np.testing.assert_array_equal(parse_target(f"file:{path}")(x), [0, 1, 2, 3])


def test_with_depth_expands_families():
    assert with_depth("file:dags/t_{L}.toml", 3) == "file:dags/t_3.toml"
    assert with_depth("tree:d=24,arity=2,node=and", 4) == "tree:d=24,arity=2,node=and,L=4"
    assert with_depth("tree:d=24,L={L},arity=2,node=and", 2) == "tree:d=24,L=2,arity=2,node=and"
    assert with_depth("parity:d=3,k=2", 2) == "parity:d=3,k=2"
    with pytest.raises(SpecError, match="depth family"):
        parse_target("file:dags/t_{L}.toml")


BAD = {
    "syntax": "not valid TOML",
    "no_domain": "missing domain",
    "bad_domain": "bad domain",
    "circle_domain": "bad domain 'circle'",
    "no_nodes": "no nodes",
    "top_key": "unknown top-level key 'seed'",
    "node_key": "unknown key 'weight'",
    "duplicate": "duplicate node name",
    "forward": "input 'b' is not an earlier node",
    "cycle": "reads itself (a cycle)",
    "unknown_child": "unknown input 'z'",
    "coordinate": "coordinate 4 out of range",
    "majority_even": "fn=majority needs an odd number of inputs",
    "table_size": "table has 3 entries, fan-in 2 needs 2^2 = 4",
    "bad_fn": "fn='xor' is not allowed",
    "poly_call": "bad poly expr",
    "poly_var": "x2 but the node has 2 inputs",
    "poly_power": "exponents must be integers",
    "empty_inputs": "empty inputs",
    "dead_node": "node 'a' is not used by the output",
    "real_into_and": "needs +-1 inputs",
}


def test_every_bad_file_is_listed():
    on_disk = {os.path.basename(p)[4:-5] for p in glob.glob(os.path.join(DATA, "bad_*.toml"))}
    assert on_disk == set(BAD)


@pytest.mark.parametrize("name", sorted(BAD))
def test_malformed_dag_file_gives_one_line(cli, tmp_path, name):
    path = os.path.join(DATA, f"bad_{name}.toml")
    plot = tmp_path / "s.png"
    r = cli("spectrum", "--target", f"file:{path}", "--plot", str(plot))
    assert r.returncode == 2
    assert r.stdout == ""
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("ntkgap: error: target 'file': ")
    assert BAD[name] in lines[0] and path in lines[0]
    assert "Traceback" not in r.stderr
    assert not plot.exists()


def test_missing_file_gives_one_line(cli):
    r = cli("spectrum", "--target", "file:tests/data/dags/nope.toml")
    assert r.returncode == 2 and r.stderr.strip() == (
        "ntkgap: error: target 'file': tests/data/dags/nope.toml: no such file"
    )


def test_content_hash_follows_the_file(tmp_path):
    text = 'domain = "hypercube:d=2"\n[[node]]\nname = "a"\ninputs = [0, 1]\nfn = "%s"\n'
    path = _write(tmp_path, text % "and")
    h1 = parse_target(f"file:{path}").content_hash
    _write(tmp_path, text % "or")
    assert parse_target(f"file:{path}").content_hash != h1
