"""Compositional targets that users define: a DAG of constituents in a TOML file.

The target spec is ``file:PATH.toml`` (or ``file:path=PATH.toml``). The file::

    domain = "hypercube:d=8"

    [[node]]
    name = "a"
    inputs = [0, 1]          # coordinates, integers from 0
    fn = "parity"

    [[node]]
    name = "b"
    inputs = [2, 3, 4]
    fn = "majority"

    [[node]]
    name = "out"
    inputs = ["a", "b"]      # names of EARLIER nodes (or coordinates)
    fn = "poly"
    expr = "x0 + x1 + x0*x1"   # x0, x1, ...: this node's inputs in order

Conventions: +1 is "true". ``fn`` is one of

* ``parity`` (the product), ``and`` (+1 iff all inputs are +1), ``or`` (-1 iff
  all are -1), ``majority`` (the sign of the sum; odd fan-in),
  ``linear-plus`` ((sum u + prod u) / sqrt(fan_in + 1)), all as in
  :mod:`ntkgap.targets.boolean`;
* ``table`` with ``table = [t_0, ..., t_{2^k - 1}]`` for fan-in k, in the
  index convention of :mod:`ntkgap.spectral.walsh`: entry i is the value at the
  input where input j is -1 exactly when bit j of i is set (so ``t_0`` is
  the value at all inputs +1); entries are real numbers (+-1 for a Boolean
  node);
* ``poly`` with ``expr``: a polynomial in x0, x1, ... (the node's inputs in
  order) built from numbers, ``+ - *``, ``**`` with a literal non-negative
  integer exponent and parentheses; parsed with :mod:`ast`, nothing else is
  evaluated.

``and``, ``or``, ``majority`` and ``table`` read +-1 values: their inputs
must be coordinates or nodes whose values are +-1 (parity of +-1 values,
and, or, majority, +-1 tables). The last node is the output; every other
node must be used by a later one. A family of files indexed by depth is
written with ``{L}`` in the path (``file:dags/tree_L{L}.toml``) and
expanded by :func:`ntkgap.targets.with_depth` before parsing.
"""

from __future__ import annotations

import ast
import hashlib
import math
import os
import re
import tomllib
from dataclasses import dataclass

import numpy as np

from ntkgap.errors import SpecError
from ntkgap.specs import Spec
from ntkgap.targets.boolean import HypercubeTarget, _apply_node
from ntkgap.targets.domains import Hypercube, parse_domain

FNS = ("parity", "and", "or", "majority", "linear-plus", "table", "poly")
BOOLEAN_FNS = ("and", "or", "majority", "table")
_TOP_KEYS = ("domain", "node")
_NODE_KEYS = ("name", "inputs", "fn", "table", "expr")
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_.-]*$")
MAX_POWER = 64


class FileSpec(Spec):
    """The spec of a DAG file target; prints as ``file:PATH``."""

    def __str__(self) -> str:
        return f"file:{self.params['path']}"

    def __hash__(self):
        return hash((self.kind, str(self)))


@dataclass(frozen=True)
class Node:
    name: str
    inputs: tuple  # ("x", coordinate) or ("n", node index)
    fn: str
    table: np.ndarray | None = None
    expr: object = None  # the checked ast of a poly
    boolean: bool = True


def _err(path, msg):
    return SpecError(f"target 'file': {path}: {msg}")


#: DAG files' contents shipped with cells (a cell computed where the file is
#: not on disk reads them here): path as the spec writes it -> text
_SHIPPED: dict[str, str] = {}


def spec_path(text: str) -> str | None:
    """The path a ``file:`` target spec names (``file:P`` or ``file:path=P``).

    Args:
        text: a target spec string.

    Returns:
        str path (maybe empty), or None when ``text`` is not a ``file:`` spec.
    """
    if not isinstance(text, str) or not text.strip().startswith("file:"):
        return None
    body = text.strip()[len("file:") :].strip()
    return body[len("path=") :].strip() if body.startswith("path=") else body


def provide(path: str, text: str) -> None:
    """Makes ``text`` the contents of DAG file ``path`` in this process
    (a worker computing a cell shipped with its file's contents).

    Args:
        path: the path as the target spec writes it.
        text: the file's contents.

    Returns:
        None.
    """
    _SHIPPED[path] = text


def _read(path: str) -> bytes:
    """A DAG file's bytes: the shipped contents (:func:`provide`), else the file's."""
    if path in _SHIPPED:
        return _SHIPPED[path].encode()
    with open(path, "rb") as fh:
        return fh.read()


def load(path: str):
    """Reads and validates a DAG target file; SpecError on any problem.

    Args:
        path: the TOML file (without a ``{L}`` placeholder).

    Returns:
        (d, nodes): the input dimension and the validated list of nodes.
    """
    if "{L}" in path:
        raise _err(path, "'{L}' in the path marks a depth family: give a depth (e.g. --L)")
    if path not in _SHIPPED and not os.path.isfile(path):
        raise _err(path, "no such file")
    try:
        doc = tomllib.loads(_read(path).decode())
    except tomllib.TOMLDecodeError as exc:
        raise _err(path, f"not valid TOML: {' '.join(str(exc).split())}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise _err(path, f"cannot read: {exc}") from None
    for key in doc:
        if key not in _TOP_KEYS:
            raise _err(path, f"unknown top-level key '{key}' (allowed: {', '.join(_TOP_KEYS)})")
    if "domain" not in doc:
        raise _err(path, 'missing domain (write domain = "hypercube:d=D" at the top)')
    d = _domain(path, doc["domain"])
    raw = doc.get("node")
    if not raw:
        raise _err(path, "no nodes (add [[node]] tables)")
    if not isinstance(raw, list) or not all(isinstance(n, dict) for n in raw):
        raise _err(path, "'node' must be an array of tables ([[node]])")
    nodes: list[Node] = []
    index: dict[str, int] = {}
    later = {n.get("name") for n in raw if isinstance(n.get("name"), str)}
    for i, spec in enumerate(raw):
        node = _node(path, d, i, spec, nodes, index, later)
        index[node.name] = i
        nodes.append(node)
    used = {j for n in nodes for kind, j in n.inputs if kind == "n"}
    for i, n in enumerate(nodes[:-1]):
        if i not in used:
            raise _err(path, f"node '{n.name}' is not used by the output (the last node)")
    return d, nodes


def _domain(path, value):
    if not isinstance(value, str):
        raise _err(path, f'domain must be a string such as "hypercube:d=8", got {value!r}')
    try:
        dom = parse_domain(value)
    except SpecError as exc:
        raise _err(path, f"bad domain: {exc}") from None
    if not isinstance(dom, Hypercube):
        raise _err(path, f"bad domain '{value}' (allowed: hypercube:d=D)")
    return dom.d


def _node(path, d, i, spec, nodes, index, later):
    """One validated node of a DAG file.

    Args:
        path: the file (for error messages).
        d: the input dimension.
        i: the node's position in the file.
        spec: its [[node]] table.
        nodes: the nodes validated so far.
        index: name -> position of the nodes validated so far.
        later: the names of all nodes in the file.

    Returns:
        Node.
    """
    where, name, fn = _node_header(path, i, spec, index)
    inputs = _node_inputs(path, where, name, spec["inputs"], d, index, later)
    table, expr, boolean = _node_function(path, where, spec, fn, inputs, nodes)
    return Node(name, tuple(inputs), fn, table, expr, boolean)


def _node_header(path, i, spec, index):
    """The node's keys, name and fn checked; returns (where, name, fn)."""
    where = f"node {i + 1}"
    if isinstance(spec.get("name"), str):
        where = f"node '{spec['name']}'"
    for key in spec:
        if key not in _NODE_KEYS:
            raise _err(path, f"{where}: unknown key '{key}' (allowed: {', '.join(_NODE_KEYS)})")
    for key in ("name", "inputs", "fn"):
        if key not in spec:
            raise _err(path, f"{where}: missing key '{key}'")
    name = spec["name"]
    if not isinstance(name, str) or not _NAME.match(name):
        raise _err(path, f"{where}: name {name!r} is not a name (letters, digits, _ . -)")
    where = f"node '{name}'"
    if name in index:
        raise _err(path, f"{where}: duplicate node name")
    fn = spec["fn"]
    if fn not in FNS:
        raise _err(path, f"{where}: fn={fn!r} is not allowed (allowed: {', '.join(FNS)})")
    return where, name, fn


def _node_inputs(path, where, name, raw_inputs, d, index, later):
    """The node's inputs as ("x", coordinate) and ("n", earlier node) refs."""
    if not isinstance(raw_inputs, list):
        raise _err(path, f"{where}: inputs must be a list of coordinates and node names")
    if not raw_inputs:
        raise _err(path, f"{where}: empty inputs")
    inputs = []
    for item in raw_inputs:
        if isinstance(item, bool) or not isinstance(item, int | str):
            raise _err(path, f"{where}: input {item!r} is neither a coordinate nor a node name")
        if isinstance(item, int):
            if not 0 <= item < d:
                raise _err(path, f"{where}: coordinate {item} out of range (allowed: 0..{d - 1})")
            ref = ("x", item)
        elif item == name:
            raise _err(path, f"{where}: reads itself (a cycle)")
        elif item in index:
            ref = ("n", index[item])
        elif item in later:
            raise _err(
                path,
                f"{where}: input '{item}' is not an earlier node (a forward reference "
                "or a cycle; list nodes children first)",
            )
        else:
            raise _err(path, f"{where}: unknown input '{item}' (no node has that name)")
        if ref in inputs:
            raise _err(path, f"{where}: input {item!r} listed twice")
        inputs.append(ref)
    return inputs


def _node_function(path, where, spec, fn, inputs, nodes):
    """The node's fn checked against its inputs; returns (table, expr,
    boolean), boolean saying whether the node's values are +-1."""
    k = len(inputs)
    for key in ("table", "expr"):
        if key in spec and fn != {"table": "table", "expr": "poly"}[key]:
            want = "table" if key == "table" else "poly"
            raise _err(path, f"{where}: key '{key}' only goes with fn = \"{want}\"")
    if fn in BOOLEAN_FNS:
        for kind, j in inputs:
            if kind == "n" and not nodes[j].boolean:
                raise _err(
                    path,
                    f"{where}: fn={fn} needs +-1 inputs, but node '{nodes[j].name}' "
                    "is real-valued (and, or, majority, table read +-1 values)",
                )
    table = expr = None
    boolean = True
    if fn == "majority" and k % 2 == 0:
        raise _err(path, f"{where}: fn=majority needs an odd number of inputs, got {k}")
    if fn == "table":
        table = _table(path, where, spec, k)
        boolean = bool(np.all(np.abs(table) == 1.0))
    elif fn == "poly":
        if "expr" not in spec:
            raise _err(path, f'{where}: fn=poly needs expr = "..." (a polynomial in x0..)')
        expr = _poly(path, where, spec["expr"], k)
        boolean = False
    elif fn == "linear-plus":
        boolean = False
    elif fn == "parity":
        boolean = all(kind == "x" or nodes[j].boolean for kind, j in inputs)
    return table, expr, boolean


def _table(path, where, spec, k):
    if "table" not in spec:
        raise _err(path, f"{where}: fn=table needs table = [...] of 2^{k} = {2**k} values")
    t = spec["table"]
    if not isinstance(t, list) or any(
        isinstance(v, bool) or not isinstance(v, int | float) for v in t
    ):
        raise _err(path, f"{where}: table must be a list of numbers")
    if len(t) != 2**k:
        raise _err(path, f"{where}: table has {len(t)} entries, fan-in {k} needs 2^{k} = {2**k}")
    arr = np.asarray(t, dtype=np.float64)
    if not np.all(np.isfinite(arr)):
        raise _err(path, f"{where}: table entries must be finite numbers")
    return arr


_ALLOWED = "numbers, x0..x{k}, + - *, ** with an integer exponent, parentheses"


def _poly(path, where, text, k):
    allowed = _ALLOWED.format(k=k - 1)
    if not isinstance(text, str) or not text.strip():
        raise _err(path, f"{where}: expr must be a non-empty string")
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError:
        raise _err(path, f"{where}: bad poly expr {text!r}: not an expression") from None

    def check(n):
        if isinstance(n, ast.Expression):
            return check(n.body)
        if isinstance(n, ast.Constant):
            if isinstance(n.value, bool) or not isinstance(n.value, int | float):
                raise _bad(n)
            if not math.isfinite(n.value):
                raise _bad(n)
            return
        if isinstance(n, ast.Name):
            m = re.fullmatch(r"x(\d+)", n.id)
            if not m:
                raise _bad(n)
            if int(m.group(1)) >= k:
                raise _err(
                    path, f"{where}: bad poly expr {text!r}: {n.id} but the node has {k} inputs"
                )
            return
        if isinstance(n, ast.UnaryOp) and isinstance(n.op, ast.UAdd | ast.USub):
            return check(n.operand)
        if isinstance(n, ast.BinOp):
            if isinstance(n.op, ast.Add | ast.Sub | ast.Mult):
                check(n.left)
                return check(n.right)
            if isinstance(n.op, ast.Pow):
                e = n.right
                if not (
                    isinstance(e, ast.Constant)
                    and isinstance(e.value, int)
                    and not isinstance(e.value, bool)
                    and 0 <= e.value <= MAX_POWER
                ):
                    raise _err(
                        path,
                        f"{where}: bad poly expr {text!r}: exponents must be integers "
                        f"0..{MAX_POWER}",
                    )
                return check(n.left)
        raise _bad(n)

    def _bad(n):
        piece = ast.get_source_segment(text.strip(), n) or type(n).__name__
        return _err(path, f"{where}: bad poly expr {text!r}: '{piece}' (allowed: {allowed})")

    check(tree)
    return tree.body


def _eval_poly(n, args):
    if isinstance(n, ast.Constant):
        return float(n.value)
    if isinstance(n, ast.Name):
        return args[int(n.id[1:])]
    if isinstance(n, ast.UnaryOp):
        v = _eval_poly(n.operand, args)
        return -v if isinstance(n.op, ast.USub) else v
    a = _eval_poly(n.left, args)
    if isinstance(n.op, ast.Pow):
        return a**n.right.value
    b = _eval_poly(n.right, args)
    if isinstance(n.op, ast.Add):
        return a + b
    if isinstance(n.op, ast.Sub):
        return a - b
    return a * b


def _apply(node, args):
    if node.fn == "table":
        return _apply_node("random", args, node.table)
    if node.fn == "poly":
        out = _eval_poly(node.expr, args)
        return np.broadcast_to(np.asarray(out, dtype=np.float64), np.shape(args[0])).copy()
    return _apply_node(node.fn, args)


class DagTarget(HypercubeTarget):
    """A compositional DAG read from a TOML file (see the module docstring)."""

    def __init__(self, spec):
        self.spec = spec
        path = spec["path"]
        d, self.nodes = load(path)
        self._d = d
        # the spec names the file, not its content: caches keyed on results
        # of this target should include this hash
        self.content_hash = hashlib.sha256(_read(path)).hexdigest()
        coords = sorted({j for n in self.nodes for kind, j in n.inputs if kind == "x"})
        self.support = tuple(coords)
        self._pos = {c: i for i, c in enumerate(coords)}
        # last node reading each node's value, so values can be freed early
        self._last_use = {}
        for i, n in enumerate(self.nodes):
            for kind, j in n.inputs:
                if kind == "n":
                    self._last_use[j] = i
        depth = []
        for n in self.nodes:
            depth.append(1 + max((depth[j] if kind == "n" else 0) for kind, j in n.inputs))
        self._depth = depth

    @property
    def domain(self):
        return Hypercube(self._d)

    def __call__(self, x):
        x = np.asarray(x)
        if x.ndim != 2 or x.shape[1] != self._d:
            raise ValueError(f"expected points of shape (n, {self._d}), got {x.shape}")
        return np.asarray(
            self.eval_columns(lambda j: x[:, self.support[j]].astype(np.float64)),
            dtype=np.float64,
        )

    def eval_columns(self, col):
        values = {}
        for i, node in enumerate(self.nodes):
            args = [values[j] if kind == "n" else col(self._pos[j]) for kind, j in node.inputs]
            values[i] = _apply(node, args)
            for kind, j in node.inputs:
                if kind == "n" and self._last_use[j] == i:
                    del values[j]
        return values[len(self.nodes) - 1]

    def architecture(self):
        """constituents = number of nodes, max fan-in, depth = the longest
        path from an input to the output (in nodes), support size."""
        return self._arch(len(self.nodes), max(len(n.inputs) for n in self.nodes), self._depth[-1])

    def is_tree(self) -> bool:
        """Every node is read once and no coordinate is read twice."""
        reads = [r for n in self.nodes for r in n.inputs]
        return len(reads) == len(set(reads))

    def tree_arch(self) -> str | None:
        """The depth-aware architecture spec when the DAG is a balanced tree.

        Returns:
            ``"tree:arity=A,L=L"`` when every node has A >= 2 inputs, every
            node is read once, all leaves are coordinates at depth L, and each
            subtree covers an aligned block of the first A^L coordinates
            (the tree architecture's locally connected layers read blocks
            i A^k .. (i+1) A^k - 1, in any order within a block); else None.
        """
        if not self.is_tree():
            return None
        arity = len(self.nodes[-1].inputs)
        L = self._depth[-1]
        if arity < 2 or any(len(n.inputs) != arity for n in self.nodes):
            return None

        def block(i, level):
            # the coordinates under node i at tree level `level`, or None
            node = self.nodes[i]
            leaves = []
            for kind, j in node.inputs:
                if level == L - 1:
                    if kind != "x":
                        return None
                    leaves.append([j])
                else:
                    if kind != "n":
                        return None
                    sub = block(j, level + 1)
                    if sub is None:
                        return None
                    leaves.append(sub)
            size = arity ** (L - level - 1)
            starts = sorted(min(b) for b in leaves)
            if starts[0] % (size * arity) or starts != [starts[0] + k * size for k in range(arity)]:
                return None
            if any(sorted(b) != list(range(min(b), min(b) + size)) for b in leaves):
                return None
            return [c for b in leaves for c in b]

        top = block(len(self.nodes) - 1, 0)
        if top is None or sorted(top) != list(range(arity**L)):
            return None
        return f"tree:arity={arity},L={L}"


def file_spec(path: str) -> FileSpec:
    """The Spec of a ``file:`` target for a DAG file path.

    Args:
        path: the DAG file's path.

    Returns:
        FileSpec of kind ``target``, name ``file`` and ``{"path": path}``.
    """
    return FileSpec("target", "file", {"path": path})
