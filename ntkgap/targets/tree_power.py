"""The Walsh power of ``tree`` targets per shape, by composition over the
tree (no 2^s FWHT): the target half of ``ntkgap.kernels.tree_eigen``, whose
shapes (multisets of the children's shapes, see its docstring) it reads.

Tree targets (``ntkgap.targets.boolean.Tree``): a node g(u_1..u_a) =
sum_T g_hat(T) prod_{c in T} u_c over children reading disjoint leaves has
f_hat(S_1 u .. u S_a) = prod_{c in N} f_c_hat(S_c) * C_N with
N = {c : S_c nonempty}, C_N = sum_{T >= N} g_hat(T) prod_{c in T \\ N} E f_c,
so the power of a shape is C_N^2 times the children's powers, summed over
the distinct assignments of the shape's parts to children (O'Donnell,
"Analysis of Boolean Functions", 2014, ch. 1). A ``tanh`` node is not
multilinear: each shape then carries its signed measure over the node's
values (the finite law of ``ntkgap.targets.boolean.tanh_scales``), pushed
forward through the node, and f_hat is that measure's mean (``_TanhTarget``).

The shape bookkeeping both halves share (a shape's multiplicity, the
push-forward of signed measures) lives here, below ``tree_eigen``.
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from ntkgap.errors import UsageError
from ntkgap.spectral import walsh
from ntkgap.targets.boolean import _apply_node, tanh_scales

#: largest (shapes x atoms) array of signed measures a tanh tree carries at one height
MAX_CELLS = 2**25
#: most root shapes (multisets of the root children's shapes) a tanh profile lists
MAX_ROOT_SHAPES = 2**22


def _distinct_orders(parts) -> int:
    """Number of distinct orderings of a multiset."""
    out = math.factorial(len(parts))
    run = 1
    for x, y in zip(parts[:-1], parts[1:]):  # parts are sorted
        run = run + 1 if x == y else 1
        out //= run
    return out


def _mults(cand, child_mult):
    """Number of subsets of each candidate shape (sorted child shape ids):
    its distinct orderings times the children's multiplicities ``child_mult``."""
    return [_distinct_orders(c) * math.prod(child_mult[i] for i in c) for c in cand.tolist()]


def _push_forward(nu_prev, cand, to_ms, n_out):
    """Per shape (sorted child shape ids), the signed measure over the node's
    values: the outer product of the children's measures summed onto
    ``to_ms`` (ordered child tuple -> node value id)."""
    out = np.empty((len(cand), n_out))
    for i, c in enumerate(cand):
        outer = nu_prev[c[0]]
        for j in c[1:]:
            outer = np.multiply.outer(outer, nu_prev[j])
        out[i] = np.bincount(to_ms, weights=outer.ravel(), minlength=n_out)
    return out


def _contract(T, N, cand) -> np.ndarray:
    """The order-a tensor T contracted with one child measure per axis, for
    every candidate shape: T(N[c_1], ..., N[c_a]), the last axis first.

    Args:
        T: array of shape (A,) * a over the children's values.
        N: array (child shapes, A): each child shape's measure.
        cand: int array (candidates, a) of sorted child shape ids.

    Returns:
        float64 array, one value per candidate.
    """
    out = np.empty(len(cand))
    for i, c in enumerate(cand):
        acc = T
        for j in reversed(c.tolist()):
            acc = acc @ N[j]
        out[i] = acc
    return out


def _make_target(target, a, L):
    spec = target.spec
    if (spec["arity"], spec["L"]) != (a, L):
        raise UsageError(
            f"target '{spec}': recursive tree spectra need the arch's arity and L "
            f"(arity={a}, L={L})"
        )
    return _TanhTarget(a, L) if spec["node"] == "tanh" else _Target(target, a, L)


class _Target:
    """Per node: E f and the Walsh power per shape, for a Tree target."""

    def __init__(self, target, a, L):
        spec = target.spec
        self.a, self.L = a, L
        self.node = spec["node"]
        cols = [np.where((np.arange(2**a) >> c) & 1, -1.0, 1.0) for c in range(a)]

        def ghat(table):
            vals = _apply_node(self.node, cols, table)
            return walsh.fwht(np.broadcast_to(np.asarray(vals, float), (2**a,))) / 2**a

        # tables are drawn in the target's post-order (children before parent)
        tables = target._tables
        self.ghat = {}  # (height, index) -> g_hat over subsets of children
        counter = iter(range(10**9))

        def visit(level, index):
            if level == L:
                return
            for c in range(a):
                visit(level + 1, index * a + c)
            t = tables[next(counter)] if tables is not None else None
            self.ghat[(L - level, index)] = ghat(t)

        visit(0, 0)
        self.per_node = tables is not None

    def leaf(self, lvl, n_leaves):
        lvl["P"] = [np.array([0.0, 1.0])] * n_leaves  # per leaf: power per shape
        lvl["mean"] = [0.0] * n_leaves

    def level_power(self, h, cand, prev):
        return _level_power(self, h, self.L, self.a, cand, prev)

    def attach(self, h, lvl, cand, prev):
        """Nothing to carry: the composition rule reads powers and means."""

    def second_moment(self, prev):
        # E f^2 by the same recursion with every shape summed: the node
        # second moment from the children's (independent) moments
        return _second_moment(self, self.L, self.a)

    def wide_power(self, levels, f1, f2, mult):
        """(power per root shape (f1, f2), E f, E f^2) for ``_wide_root``."""
        L = len(levels)  # heights 0..L-1: the root is not listed yet
        child = levels[L - 1]
        full = child["full"]
        ghat = self.ghat[(L, 0)]
        km = child["mean"][:2]
        cn = {
            nm: sum(
                ghat[T] * math.prod(km[c] for c in range(2) if (T >> c) & 1 and not (nm >> c) & 1)
                for T in range(4)
                if T & nm == nm
            )
            for nm in range(4)
        }
        P0, P1 = full["P"][0], full["P"][1]

        def assign(x, y):  # x to child 0, y to child 1
            nm = (x != 0).astype(int) + 2 * (y != 0).astype(int)
            c2 = np.array([cn[i] ** 2 for i in range(4)])[nm]
            return c2 * np.where(x != 0, P0[x], 1.0) * np.where(y != 0, P1[y], 1.0)

        power = assign(f1, f2) + np.where(f1 != f2, assign(f2, f1), 0.0)
        return power, float(cn[0]), _second_moment(self, L, 2)


def _combine_power(children_shapes, kid_P, kid_mean, ghat, a):
    """Power of one node shape: sum over distinct assignments of the sorted
    child shapes to children of C_N^2 prod_{c in N} P_c(shape_c)."""
    total = 0.0
    for perm in set(itertools.permutations(children_shapes)):
        nz = [c for c in range(a) if perm[c] != 0]
        nmask = sum(1 << c for c in nz)
        cn = 0.0
        for T in range(2**a):
            if T & nmask != nmask or ghat[T] == 0:
                continue
            term = ghat[T]
            for c in range(a):
                if (T >> c) & 1 and not (nmask >> c) & 1:
                    term *= kid_mean[c]
            cn += term
        prod = cn * cn
        for c in nz:
            prod *= kid_P[c][perm[c]]
        total += prod
    return total


def _level_power(tg, h, L, a, cand, prev):
    """Power per candidate shape at every node of height h (one entry for all
    nodes when the nodes are identical), and each node's mean."""
    n_nodes = a ** (L - h)
    nodes = range(n_nodes) if tg.per_node else [0]
    P_rows, means = [], []
    for p in nodes:
        ghat = tg.ghat[(h, p)]
        kids = [p * a + c if tg.per_node else 0 for c in range(a)]
        kid_P = [prev["P"][k] for k in kids]
        kid_mean = [prev["mean"][k] for k in kids]
        row = np.array([_combine_power(tuple(c), kid_P, kid_mean, ghat, a) for c in cand.tolist()])
        m = 0.0
        for T in range(2**a):
            term = ghat[T]
            for c in range(a):
                if (T >> c) & 1:
                    term *= kid_mean[c]
            m += term
        P_rows.append(row)
        means.append(m)
    if not tg.per_node:
        P_rows, means = P_rows * n_nodes, means * n_nodes
    return P_rows, means


def _second_moment(tg, L, a) -> float:
    """E f^2 of the target, node by node: the children are independent, so
    E g(u)^2 = sum_{T, T'} g_hat(T) g_hat(T') prod_c E[u_c^(#{T, T' containing c})]."""
    m1 = {}
    m2 = {}
    n_leaves = a**L
    for i in range(n_leaves):
        m1[(0, i)], m2[(0, i)] = 0.0, 1.0
    for h in range(1, L + 1):
        for p in range(a ** (L - h)):
            g = tg.ghat[(h, p)] if tg.per_node else tg.ghat[(h, 0)]
            k1 = [m1[(h - 1, p * a + c)] for c in range(a)]
            k2 = [m2[(h - 1, p * a + c)] for c in range(a)]
            e1 = 0.0
            e2 = 0.0
            nz = np.nonzero(g)[0]
            for T in nz:
                t1 = g[T]
                for c in range(a):
                    if (T >> c) & 1:
                        t1 *= k1[c]
                e1 += t1
                for T2 in nz:
                    t2 = g[T] * g[T2]
                    for c in range(a):
                        e = ((T >> c) & 1) + ((T2 >> c) & 1)
                        t2 *= (1.0, k1[c], k2[c])[e]
                    e2 += t2
            m1[(h, p)], m2[(h, p)] = e1, e2
    return m2[(L, 0)]


class _TanhTarget:
    """Per node: the Walsh power per shape of a ``tanh`` tree target, from
    each shape's signed measure over the node's values.

    A node f = g(sum_c u_c) is not multilinear in its children, so the
    children's powers do not determine its own. But the children read
    disjoint leaves, so for S = S_1 u .. u S_a,
    nu_S(v) = E[1{f = v} chi_S] is the push-forward through
    v = g(v_1 + .. + v_a) of the product of the children's nu_{S_c}, and
    f_hat(S) = sum_v v nu_S(v). Every tree automorphism preserves the target
    (the same g at every node of a height), so f_hat is constant on a shape
    and its power is the shape's multiplicity times f_hat^2. The values are
    the finite law's atoms (distinct sums merged only when equal in floating
    point), carried for every shape a height keeps (``tnu``, ``tval``)."""

    def __init__(self, a, L):
        self.a, self.L = a, L
        self.scales = tanh_scales(a, L)
        if self.scales is None:
            raise UsageError(f"node=tanh: no exact normalisation at arity={a}, L={L}")
        self._atoms = {}

    def leaf(self, lvl, n_leaves):
        lvl["tval"] = np.array([1.0, -1.0])
        lvl["tnu"] = np.array([[0.5, 0.5], [0.5, -0.5]])
        lvl["P"] = [np.array([0.0, 1.0])] * n_leaves
        lvl["mean"] = [0.0] * n_leaves

    def _sums(self, vals):
        sums = vals
        for _ in range(self.a - 1):
            sums = np.add.outer(sums, vals)
        return sums

    def node_value(self, h, sums):
        """The value of a height-h node whose children sum to ``sums``."""
        return np.tanh(sums / math.sqrt(self.a)) / self.scales[h - 1]

    def atoms(self, h, prev):
        """(values of a height-h node, the value id of every ordered tuple of
        the children's atoms, shape (A,) * arity)."""
        if h not in self._atoms:
            sums = self._sums(prev["tval"])
            uniq, inverse = np.unique(sums.ravel(), return_inverse=True)
            self._atoms[h] = (self.node_value(h, uniq), inverse.reshape(sums.shape))
        return self._atoms[h]

    def fhat(self, h, cand, prev):
        """f_hat of one subset per candidate shape (sorted child shape ids)."""
        G, N = self.node_value(h, self._sums(prev["tval"])), prev["tnu"]
        if self.a == 2:
            return (N @ G @ N.T)[cand[:, 0], cand[:, 1]]
        return _contract(G, N, cand)

    def level_power(self, h, cand, prev):
        fh = self.fhat(h, cand, prev)
        mult = np.array([float(m) for m in _mults(cand, prev["mult"])])
        mean = float(self.fhat(h, np.zeros((1, self.a), dtype=np.int64), prev)[0])
        n_nodes = self.a ** (self.L - h)
        return [mult * fh * fh] * n_nodes, [mean] * n_nodes

    def attach(self, h, lvl, cand, prev):
        node, inverse = self.atoms(h, prev)
        lvl["tval"] = node
        lvl["tnu"] = _push_forward(prev["tnu"], cand, inverse.ravel(), node.size)

    def second_moment(self, prev):
        G = self.node_value(self.L, self._sums(prev["tval"]))
        law = prev["tnu"][0]  # the empty shape's measure: the children's law
        p = law
        for _ in range(self.a - 1):
            p = np.multiply.outer(p, law)
        return float(np.sum(p * G * G))

    def wide_power(self, levels, f1, f2, mult):
        """(power per root shape (f1, f2), E f, E f^2) for ``_wide_root``
        (arity 2): for a carried f2, Y(v) = sum_w g(v + w) nu_f2(w) over the
        child's atoms v; as a function of the grandchildren's atoms (v_a,
        v_b), nu_a^T Y nu_b gives f_hat of every f1 = (a, b) at once."""
        L = len(levels)  # heights 0..L-1: the root is not listed yet
        child, grand = levels[L - 1], levels[L - 2]
        G = self.node_value(L, self._sums(child["tval"]))
        Y = G @ child["tnu"].T
        child_atoms = self.atoms(L - 1, grand)[1]
        f_cand = child["full"]["cand"]
        fh = np.empty(len(f1))
        for j, g in enumerate(child["full"]["keep"]):
            sel = f2 == g
            M = grand["tnu"] @ Y[child_atoms, j] @ grand["tnu"].T
            fh[sel] = M[f_cand[f1[sel], 0], f_cand[f1[sel], 1]]
        law = child["tnu"][0]  # the empty shape's measure: the children's law
        G2 = G * G
        return mult * fh * fh, float(law @ G @ law), float(law @ G2 @ law)


def tree_degree_profile(target) -> np.ndarray:
    """Walsh weight per degree of a tree target with multilinear nodes, by
    recursion over the tree (no 2^s transform; any number of leaves).

    A node g(u_1..u_a) = sum_T g_hat(T) prod_{c in T} u_c over children on
    disjoint leaves gives the sets S = S_1 u .. u S_a with nonempty parts
    N the coefficient C_N prod_{c in N} f_c_hat(S_c) (``_combine_power``),
    so its degree-generating polynomial of power is
    sum_{N nonempty} C_N^2 prod_{c in N} P_c(x), with P of a leaf = x.

    Args:
        target: a ``Tree`` target whose node is multilinear in its children
            (every node but ``tanh``).

    Returns:
        float64 array of length s + 1 (s = arity^L leaves): entry k is the
        sum of f_hat(S)^2 over |S| = k; entry 0 is the squared mean.

    References:
        O'Donnell, "Analysis of Boolean Functions", 2014, ch. 1.
    """
    a, L = target.spec["arity"], target.spec["L"]
    if target.spec["node"] == "tanh":
        raise UsageError("tree_degree_profile: node=tanh is not multilinear in its children")
    tg = _Target(target, a, L)
    prev = [(0.0, np.array([0.0, 1.0]))] * a**L  # leaves: mean 0, all power at degree 1
    for h in range(1, L + 1):
        cur = []
        for p in range(a ** (L - h)):
            ghat = tg.ghat[(h, p)]
            kids = prev[p * a : (p + 1) * a]
            means = [k[0] for k in kids]

            def coef(N, ghat=ghat, means=means):  # C_N
                total = 0.0
                for T in range(2**a):
                    if T & N == N and ghat[T] != 0:
                        term = ghat[T]
                        for c in range(a):
                            if (T >> c) & 1 and not (N >> c) & 1:
                                term *= means[c]
                        total += term
                return total

            poly = np.zeros(a**h + 1)
            for N in range(1, 2**a):
                cn = coef(N)
                if cn == 0:
                    continue
                term = np.array([cn * cn])
                for c in range(a):
                    if (N >> c) & 1:
                        term = np.convolve(term, kids[c][1])
                poly[: term.size] += term
            cur.append((coef(0), poly))
        prev = cur
    mean, poly = prev[0]
    out = poly.copy()
    out[0] = mean * mean
    return out


def _tanh_shape_powers(target):
    """(degree, multiplicity, f_hat) per shape of a ``tanh`` tree target,
    built height by height from the leaves (``_TanhTarget``): every subset of
    a shape has the same f_hat, the shape's multiplicity counts them.

    Args:
        target: a ``Tree`` target with ``node=tanh``.

    Returns:
        (int array of degrees, float array of multiplicities, float array of f_hat).
    """
    a, L = target.spec["arity"], target.spec["L"]
    tg = _TanhTarget(a, L)
    lvl = {"degree": np.array([0, 1]), "mult": [1, 1]}
    tg.leaf(lvl, a**L)
    for h in range(1, L + 1):
        n_prev = len(lvl["degree"])
        n_cand = math.comb(n_prev + a - 1, a)
        if h == L and n_cand > MAX_ROOT_SHAPES:
            raise UsageError(
                f"target '{target.spec}': {n_cand} root shapes exceed {MAX_ROOT_SHAPES} for "
                f"the tanh composition (allowed: arity=2 with L <= 5, arity=3 with L <= 3)"
            )
        cand = np.array(list(itertools.combinations_with_replacement(range(n_prev), a)))
        deg = lvl["degree"][cand].sum(1)
        mult = _mults(cand, lvl["mult"])
        if h == L:
            return deg, np.array(mult, dtype=np.float64), tg.fhat(h, cand, lvl)
        atoms = tg.atoms(h, lvl)[0].size
        if len(cand) * atoms > MAX_CELLS:
            raise UsageError(
                f"target '{target.spec}': {len(cand)} shapes x {atoms} node values at "
                f"height {h} exceed {MAX_CELLS} cells for the tanh composition "
                "(allowed: arity=2 with L <= 5, arity=3 with L <= 3)"
            )
        nxt = {"degree": deg, "mult": mult}
        tg.attach(h, nxt, cand, lvl)
        lvl = nxt
    raise AssertionError("unreachable: the loop returns at the root")


def tree_power_profile(target) -> dict:
    """Walsh weight per degree of any ``tree`` target by composition over the
    tree (no 2^s transform, so beyond the exact transform's support limit).

    Multilinear nodes compose their children's degree polynomials
    (``tree_degree_profile``); a ``tanh`` node, not multilinear, carries each
    shape's signed measure over the node's values (``_TanhTarget``), and as
    f_hat is constant on a shape, the coefficients' L1 norm and count come
    with it.

    Args:
        target: a ``Tree`` target (any node, any number of leaves the
            composition's budgets allow).

    Returns:
        dict with ``weight`` (float64 array of length s + 1: entry k is
        sum_{|S| = k} f_hat(S)^2, entry 0 the squared mean), ``mean`` and,
        for ``tanh`` nodes, ``l1_norm`` (sum_S |f_hat(S)|) and ``sparsity``
        (the number of nonzero f_hat(S)); random and other per-node tables
        give no per-subset values, so those two are absent for them.

    References:
        O'Donnell, "Analysis of Boolean Functions", 2014, ch. 1.
    """
    s = target.spec["arity"] ** target.spec["L"]
    if target.spec["node"] != "tanh":
        weight = tree_degree_profile(target)
        mean = _tree_mean(target)
        return {"weight": weight, "mean": mean}
    deg, mult, fh = _tanh_shape_powers(target)
    weight = np.bincount(deg, weights=mult * fh * fh, minlength=s + 1)
    top = float(np.abs(fh).max())
    nonzero = np.abs(fh) > 1e-12 * top
    return {
        "weight": weight,
        "mean": float(fh[deg == 0][0]),
        "l1_norm": float(np.sum(mult * np.abs(fh))),
        "sparsity": int(np.sum(mult[nonzero])),
    }


def _tree_mean(target) -> float:
    """E f of a tree target with multilinear nodes: each node's mean is its
    g_hat summed against the children's (independent) means."""
    a, L = target.spec["arity"], target.spec["L"]
    tg = _Target(target, a, L)
    means = [0.0] * a**L
    for h in range(1, L + 1):
        cur = []
        for p in range(a ** (L - h)):
            ghat = tg.ghat[(h, p)]
            kids = means[p * a : (p + 1) * a]
            cur.append(
                sum(
                    ghat[T] * math.prod(kids[c] for c in range(a) if (T >> c) & 1)
                    for T in range(2**a)
                )
            )
        means = cur
    return float(means[0])
