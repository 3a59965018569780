"""The number of constituents (internal nodes of the composition), against
brute-force counts of the composition graphs built here independently."""

import pytest

from ntkgap.targets import constituents, parse_target


def _tree_nodes(arity, L):
    """Internal nodes of a balanced tree, counted by walking it level by level."""
    count, frontier = 0, 1
    for _ in range(L):
        count += frontier
        frontier *= arity
    return count


@pytest.mark.parametrize(
    "arity, L", [(1, 1), (1, 5), (2, 1), (2, 3), (2, 5), (3, 2), (3, 4), (4, 3), (7, 2)]
)
def test_closed_form_equals_a_walk_of_the_tree(arity, L):
    assert constituents.balanced_tree(arity, L) == _tree_nodes(arity, L)


@pytest.mark.parametrize("arity, L", [(0, 2), (2, 0)])
def test_closed_form_refuses_degenerate_trees(arity, L):
    with pytest.raises(ValueError):
        constituents.balanced_tree(arity, L)


@pytest.mark.parametrize(
    "spec, expected",
    [
        ("tree:d=8,L=3,arity=2,node=parity", 7),
        ("tree:d=9,L=2,arity=3,node=and", 4),
        ("tree:d=16,L=4,arity=2,node=tanh", 15),
        ("tree:d=16,L=4,arity=2,node=random,seed=3", 15),
        ("layered:d=8,L=3,fan_in=3,seed=0", 7),
        ("parity:d=10,k=4", 3),
        ("parity:d=10,k=1", 1),
        ("staircase:d=10,k=4", 6),
        ("sawtooth:L=5", 5),
        ("bandlimited:K=3", 1),
        # the RHM's productions: one per internal node of its s-ary tree
        ("rhm:v=8,n_c=2,m=2,s=2,L=3,seed=0", 1 + 2 + 4),
        ("rhm:v=8,n_c=2,m=2,s=3,L=2,seed=0", 1 + 3),
    ],
)
def test_of_target_planted(spec, expected):
    assert constituents.of_target(parse_target(spec)) == expected


@pytest.mark.parametrize("spec", ["tree:d=27,L=3,arity=3,node=random,seed=1"])
def test_random_tree_draws_one_table_per_constituent(spec):
    t = parse_target(spec)
    # the target draws one truth table per internal node: an independent count
    assert constituents.of_target(t) == len(t._tables)


def test_rhm_counts_one_rule_choice_per_production():
    t = parse_target("rhm:v=8,n_c=2,m=2,s=2,L=4,seed=0")
    # a valid string is decoded from one rule choice per production
    x, _ = t._decode([0])
    assert x.shape == (1, 2**4)
    assert constituents.of_target(t) == t.N == _tree_nodes(2, 4)


def test_circuit_counts_the_gates_the_output_reaches():
    t = parse_target("circuit:d=12,gates=20,fan_in=2,seed=4")
    d = 12
    # brute force: walk back from the output gate through its sources
    seen, stack = set(), [d + 20 - 1]
    while stack:
        v = stack.pop()
        if v in seen or v < d:
            continue
        seen.add(v)
        stack.extend(t._gates[v - d][1])
    assert constituents.of_target(t) == len(seen)


def test_dag_file_counts_its_nodes_not_its_inputs(tmp_path):
    path = tmp_path / "g.toml"
    path.write_text(
        'domain = "hypercube:d=5"\n'
        '[[node]]\nname = "a"\ninputs = [0, 1]\nfn = "and"\n'
        '[[node]]\nname = "b"\ninputs = [2, 3, 4]\nfn = "majority"\n'
        '[[node]]\nname = "out"\ninputs = ["a", "b", 0]\nfn = "poly"\nexpr = "x0*x1 + x2"\n'
    )
    assert constituents.of_target(parse_target(f"file:{path}")) == 3


@pytest.mark.parametrize(
    "spec",
    [
        "tree:d=8,L=3,arity=2,node=parity",
        "layered:d=16,L=4,fan_in=3,seed=0",
        "rhm:v=8,n_c=2,m=2,s=2,L=3,seed=0",
        "sawtooth:L=4",
    ],
)
def test_agrees_with_the_targets_architecture_report(spec):
    t = parse_target(spec)
    assert constituents.of_target(t) == t.architecture()["constituents"]


def test_unknown_objects_are_refused():
    with pytest.raises(TypeError):
        constituents.of_target(object())
