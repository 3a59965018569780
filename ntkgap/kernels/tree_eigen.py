"""Exact eigenvalues of the ``tree`` architecture's NTK on the hypercube, and
the Walsh power of tree targets, by recursion over the tree (no 2^s FWHT).

The kernel of ``tree:arity=a,L=L`` depends on x, y only through z = x*y on
its s = a^L leaves, so the characters chi_S are eigenfunctions with
mu_S = E_z[K(z) chi_S(z)]. Infinite-width recursion (Jacot et al. 2018;
Arora et al. 2019 for the NTK; Novak et al. 2019 for locally connected
layers, where only each position's own covariance propagates), with
q_l the common diagonal of the NNGP at height l:

* height 1 (a first ConvLocal unit p over leaves i in p):
  Sigma_1(p) = W^2 mean_i z_i + b^2, Theta_1(p) = Sigma_1(p);
* height l > 1, children c of p: Sigma_l(p) = W^2 mean_c E[phi phi](Sigma_c) + b^2,
  Theta_l(p) = Sigma_l(p) + W^2 mean_c Theta_c E[phi' phi'](Sigma_c), the
  expectations under the covariance [[q, Sigma_c], [Sigma_c, q]], q = q_{l-1};
* readout: K = W^2 E[phi phi](Sigma_root) + b^2 + W^2 Theta_root E[phi' phi'](Sigma_root).

So a node's value is a function of the multiset of its children's values:
a node's *type* is that multiset, finitely many per height. Children read
disjoint leaves, so they are independent under uniform z. For a subset S,
its *shape* at a node is the multiset of its children's shapes (at a leaf:
in S or not); mu_S depends on S only through its shape at the root (tree
automorphisms permute children). Per shape sigma, the signed measure
nu_sigma(v) = E[1{type = v} chi_S(z_sub)] over the node's types is the
outer product of the children's measures summed onto multisets, and
mu_S = sum over the root children's ordered types of prod_c nu_c(t_c) K(t).

Cost: the number of types and of shapes per height grows as
T_l = C(T_{l-1} + a - 1, a) (arity 2: 3, 6, 21, 231, 26796, ...). Every
height whose (shapes x types) fits ``MAX_CELLS`` is kept whole; above it
only the shapes of degree <= ``kcap`` and the shapes the target needs are
carried (at most ``MAX_CARRIED``, lowering the degree cap until they fit;
``capped_at`` records it). An arity-2 root over capped children then lists
every shape with at least one child carried (arity 2, L = 6: ~1.4M shapes,
~96% of the trace; every shape of degree <= capped_at among them). What is
listed is exact; the rest of the trace is ``tail_trace``. The root's cost is
one evaluation of the readout per unordered pair of child types (arity 2,
L = 6: 3.6e8, ~6 s on one core).

Tree targets (``ntkgap.targets.boolean.Tree``): a node g(u_1..u_a) =
sum_T g_hat(T) prod_{c in T} u_c over children reading disjoint leaves has
f_hat(S_1 u .. u S_a) = prod_{c in N} f_c_hat(S_c) * C_N with
N = {c : S_c nonempty}, C_N = sum_{T >= N} g_hat(T) prod_{c in T \\ N} E f_c,
so the power of a shape is C_N^2 times the children's powers, summed over
the distinct assignments of the shape's parts to children (O'Donnell,
"Analysis of Boolean Functions", 2014, ch. 1).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field

import numpy as np

from ntkgap.errors import UsageError

# largest (shapes x types) array of signed measures carried at one height
MAX_CELLS = 2**25
# most shapes carried at a capped height (the root's cost grows with it)
MAX_CARRIED = 96
# largest number of ordered child tuples combined at one node
MAX_ORDERED = 2**26


def _duals(act: str, xp=np):
    """(E phi(u)phi(v), E phi'(u)phi'(v), E phi(u)^2) as functions of (c, q)
    for (u, v) centred Gaussian with covariance [[q, c], [c, q]], in array
    module ``xp`` (numpy or jax.numpy) (Cho & Saul 2009 for ReLU, Williams
    1997 for erf)."""
    if act == "relu":

        def e_pp(c, q):
            rho = xp.clip(c / q, -1.0, 1.0)
            th = xp.arccos(rho)
            return q * (xp.sqrt(1.0 - rho * rho) + (np.pi - th) * rho) / (2 * np.pi)

        def e_dd(c, q):
            return (np.pi - xp.arccos(xp.clip(c / q, -1.0, 1.0))) / (2 * np.pi)

        return e_pp, e_dd, lambda q: q / 2
    if act == "erf":

        def e_pp(c, q):
            return 2 / np.pi * xp.arcsin(xp.clip(2 * c / (1 + 2 * q), -1.0, 1.0))

        def e_dd(c, q):
            den = 1 + 2 * q
            return 4 / np.pi / xp.sqrt(den * den - 4 * c * c)

        return e_pp, e_dd, lambda q: 2 / np.pi * np.arcsin(2 * q / (1 + 2 * q))
    raise UsageError(
        f"arch act={act}: recursive tree eigenvalues need a closed-form dual (allowed: relu, erf)"
    )


def _pair_form(u, w, N, act, W2, b2, q, tile=128):
    """Y = G N for the symmetric arity-2 root kernel
    G[i, j] = K(Sigma = W^2 (u_i + u_j)/2 + b^2, Theta = Sigma + W^2 (w_i + w_j)/2)
    (see ``tree_spectrum``), by square tiles of the upper triangle, each
    entry evaluated once. The readout is rewritten as
    G = F(x) + H(x) (e_i + e_j), x = r_i + r_j, with the per-row terms
    r, e precomputed (relu: x = Sigma / q; erf: x = 2 Sigma / (1 + 2q)).
    Small tiles keep the elementwise passes in cache (measured ~2x faster
    than 1024-wide tiles); the products run per row panel."""
    n, m = N.shape
    e = 0.5 * W2 * np.asarray(w)
    if act == "relu":
        r = (0.5 * W2 * np.asarray(u) + 0.5 * b2) / q
        c_sq, c_lin, c_h = W2 * q / (2 * np.pi), W2 * q / np.pi, W2 / (2 * np.pi)

        def tile_kernel(x, ee):
            np.minimum(x, 1.0, out=x)  # rounding above the diagonal's 1
            arc = np.arccos(x)
            np.subtract(np.pi, arc, out=arc)
            G = x * x
            np.subtract(1.0, G, out=G)
            np.sqrt(G, out=G)
            G *= c_sq
            x *= c_lin
            ee *= c_h
            x += ee
            x *= arc
            G += x
            return G

    else:
        den = 1 + 2 * q
        r = (0.5 * W2 * np.asarray(u) + 0.5 * b2) * (2 / den)
        c_f, c_h = 2 * W2 / np.pi, 4 * W2 / (np.pi * den)

        def tile_kernel(x, ee):
            inv = x * x
            np.subtract(1.0, inv, out=inv)
            np.sqrt(inv, out=inv)
            np.divide(1.0, inv, out=inv)
            G = np.arcsin(x)
            G += x * inv
            G *= c_f
            ee *= c_h
            ee *= inv
            G += ee
            return G

    Y = np.zeros((n, m))
    with _one_blas_thread():
        _pair_tiles(Y, r, e, N, tile_kernel, tile)
    Y += b2 * N.sum(0)  # the readout bias: a constant b^2 in every entry
    return Y


def _one_blas_thread():
    """BLAS on one thread: its threads spin between the panel products
    (measured: twice the CPU time, three times the wall time on 2 cores)."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover - threadpoolctl ships with scipy's stack
        import contextlib

        return contextlib.nullcontext()
    return threadpool_limits(1, user_api="blas")


def _pair_tiles(Y, r, e, N, tile_kernel, tile):
    n = N.shape[0]
    for i0 in range(0, n, tile):
        i = slice(i0, min(i0 + tile, n))
        # a panel of tiles (row block i, columns from i0 on), then two large
        # products: many tiny BLAS calls cost more than the tiles themselves
        panel = np.empty((i.stop - i0, n - i0))
        for j0 in range(i0, n, tile):
            j = slice(j0, min(j0 + tile, n))
            panel[:, j0 - i0 : j.stop - i0] = tile_kernel(
                r[i, None] + r[None, j], e[i, None] + e[None, j]
            )
        Y[i] += panel @ N[i0:]
        Y[i.stop :] += panel[:, i.stop - i0 :].T @ N[i]


def _multisets(n: int, a: int) -> np.ndarray:
    """All sorted a-tuples over range(n), lexicographic, shape (C(n+a-1, a), a)."""
    return np.array(list(itertools.combinations_with_replacement(range(n), a)), dtype=np.int64)


def _ordered_to_multiset(n: int, a: int, combos: np.ndarray) -> np.ndarray:
    """For every ordered tuple in range(n)^a (C order), the row of ``combos``
    holding its sorted version."""
    grid = np.indices((n,) * a).reshape(a, -1).T
    grid.sort(axis=1)
    weights = n ** np.arange(a - 1, -1, -1, dtype=np.int64)
    codes = combos @ weights  # increasing: combos are lexicographic
    return np.searchsorted(codes, grid @ weights)


def _distinct_orders(parts) -> int:
    """Number of distinct orderings of a multiset."""
    out = math.factorial(len(parts))
    run = 1
    for x, y in zip(parts[:-1], parts[1:]):  # parts are sorted
        run = run + 1 if x == y else 1
        out //= run
    return out


@dataclass
class TreeSpectrum:
    """Eigenvalues of a tree kernel per shape at the root.

    ``degree[i]``, ``eigenvalue[i]``, ``multiplicity[i]`` (exact integers,
    number of subsets of that shape) and ``children[i]`` (the root
    children's shape ids, sorted) per listed shape. ``capped_at`` is None
    when every shape is listed, else the degree below which (<=) every
    shape is listed. ``power`` (with a target) is the target's Walsh power
    per listed shape, ``second_moment`` its E f^2 and ``mean`` its E f."""

    degree: np.ndarray
    eigenvalue: np.ndarray
    multiplicity: list
    trace: float
    capped_at: int | None
    levels: list = field(repr=False, default_factory=list)
    power: np.ndarray | None = None
    second_moment: float | None = None
    mean: float | None = None

    @property
    def tail_trace(self) -> float:
        listed = float(np.dot(np.asarray(self.multiplicity, dtype=np.float64), self.eigenvalue))
        return max(self.trace - listed, 0.0)

    def shape_of(self, mask: int) -> int:
        """Index (into the listed shapes) of the subset with bit mask
        ``mask`` over the leaves; -1 if its shape is not listed."""
        a = self.levels[0]["arity"]
        L = len(self.levels) - 1
        ids = [(mask >> i) & 1 for i in range(a**L)]
        for h in range(1, L + 1):
            index = self.levels[h]["index"]
            nxt = []
            for p in range(len(ids) // a):
                kids = ids[p * a : (p + 1) * a]
                if min(kids) < 0:
                    nxt.append(-1)
                else:
                    nxt.append(index.get(tuple(sorted(kids)), -1))
            ids = nxt
        return ids[0]


class _Target:
    """Per node: E f and the Walsh power per shape, for a Tree target."""

    def __init__(self, target, a, L):
        from ntkgap.targets.boolean import _apply_node

        spec = target.spec
        if (spec["arity"], spec["L"]) != (a, L):
            raise UsageError(
                f"target '{spec}': recursive tree spectra need the arch's arity and L "
                f"(arity={a}, L={L})"
            )
        self.a = a
        self.node = spec["node"]
        cols = [np.where((np.arange(2**a) >> c) & 1, -1.0, 1.0) for c in range(a)]
        from ntkgap.spectral import walsh

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


def tree_spectrum(
    arch,
    *,
    kcap: int = 16,
    target=None,
    keep_power: int = 32,
    max_blocks: int | None = 50_000,
) -> TreeSpectrum:
    """Eigenvalues (and a tree target's power) of ``tree`` arch's NTK per shape.

    Args:
        arch: a ``tree`` Arch (act relu or erf).
        kcap: at heights too large to carry whole (see ``MAX_CELLS``), the
            shapes of degree <= kcap are carried (and listed at the root).
        target: optional ``Tree`` target with the arch's arity and L; its
            power per listed shape is computed, and at capped heights the
            ``keep_power`` shapes of largest power are carried too.
        keep_power: see ``target``.
        max_blocks: capped spectra list at most about this many blocks: every
            block of degree <= ``capped_at``, then the largest eigenvalues and
            (with a target) the largest powers; None lists every computed block.

    Returns:
        TreeSpectrum (exact for every listed shape).

    References: Jacot et al. 2018 and Arora et al. 2019 (NTK recursion),
    Novak et al. 2019 (locally connected layers); see the module docstring.
    """
    sp = arch.spec
    a, L = sp["arity"], sp["L"]
    W2, b2 = sp["W_std"] ** 2, sp["b_std"] ** 2
    e_pp, e_dd, e_qq = _duals(sp["act"])
    tg = _Target(target, a, L) if target is not None else None

    # --- types and their values, heights 0..L-1 (the root's children)
    # leaves: type 0 is z = +1, type 1 is z = -1
    leaf_z = np.array([1.0, -1.0])
    q = W2 + b2
    types = [None]
    sig = the = None
    for h in range(1, L):
        n_prev = 2 if h == 1 else sig.size
        if n_prev**a > MAX_ORDERED:
            raise UsageError(
                f"arch '{sp}': {n_prev}^{a} child types at height {h} exceed the recursion's "
                f"budget ({MAX_ORDERED})"
            )
        combos = _multisets(n_prev, a)
        if h == 1:
            s_new = W2 * leaf_z[combos].mean(1) + b2
            t_new = s_new.copy()
        else:
            u, w = e_pp(sig, q), the * e_dd(sig, q)
            s_new = W2 * u[combos].mean(1) + b2
            t_new = s_new + W2 * w[combos].mean(1)
            q = W2 * e_qq(q) + b2
        types.append({"combos": combos, "to_multiset": _ordered_to_multiset(n_prev, a, combos)})
        sig, the = s_new, t_new
    # q is now the diagonal at height L-1 (or of the leaves' layer for L = 1)

    # --- shapes, heights 0..L-1
    # level h: "children" (M, a) sorted child shape ids, "degree", "mult",
    # "nu" (M, T_h) signed measures, "index" {children tuple: id}
    levels = [
        {
            "arity": a,
            "degree": np.array([0, 1]),
            "mult": [1, 1],
            "nu": np.array([[0.5, 0.5], [0.5, -0.5]]),
            "index": {},
        }
    ]
    if tg is not None:
        n_leaves = a**L
        levels[0]["P"] = [np.array([0.0, 1.0])] * n_leaves  # per leaf: power per shape
        levels[0]["mean"] = [0.0] * n_leaves
    capped_at = None
    for h in range(1, L):
        prev = levels[h - 1]
        cand = _multisets(len(prev["degree"]), a)
        deg = prev["degree"][cand].sum(1)
        n_types = types[h]["combos"].shape[0]
        keep = np.ones(len(cand), dtype=bool)
        lvl = {"arity": a}
        if tg is not None:
            P_all, means = _level_power(tg, h, L, a, cand, prev)
        if len(cand) * n_types > MAX_CELLS:
            # carry the shapes of lowest degree that fit, and the target's
            k_eff = int(kcap)
            while k_eff > 0 and np.count_nonzero(deg <= k_eff) > MAX_CARRIED:
                k_eff -= 1
            keep = deg <= k_eff
            if tg is not None:
                score = np.sum(P_all, axis=0)
                top = np.argsort(-score, kind="stable")[:keep_power]
                keep[top[score[top] > 0]] = True
            capped_at = k_eff if capped_at is None else min(capped_at, k_eff)
        if not keep.all():
            lvl["full"] = {"cand": cand, "degree": deg, "keep": np.nonzero(keep)[0]}
            if tg is not None:
                lvl["full"]["P"] = P_all
        cand = cand[keep]
        lvl["degree"] = deg[keep]
        lvl["mult"] = [
            _distinct_orders(c) * math.prod(prev["mult"][i] for i in c) for c in cand.tolist()
        ]
        lvl["index"] = {tuple(c): i for i, c in enumerate(cand.tolist())}
        lvl["children"] = cand
        if tg is not None:
            lvl["P"] = [row[keep] for row in P_all]
            lvl["mean"] = means
        to_ms = types[h]["to_multiset"]
        nu = np.empty((len(cand), n_types))
        for i, c in enumerate(cand):
            outer = prev["nu"][c[0]]
            for j in c[1:]:
                outer = np.multiply.outer(outer, prev["nu"][j])
            nu[i] = np.bincount(to_ms, weights=outer.ravel(), minlength=n_types)
        lvl["nu"] = nu
        levels.append(lvl)

    # --- the root
    prev = levels[L - 1]
    if L == 1:
        u = leaf_z  # height-1 input: mean of z
    else:
        u, w = e_pp(sig, q), the * e_dd(sig, q)
        q_root = W2 * e_qq(q) + b2
    q_first = W2 + b2

    def root_kernel(idx):
        """K at ordered child-type tuples idx (n, a)."""
        if L == 1:
            s_r = W2 * u[idx].mean(1) + b2
            t_r = s_r
            qq = q_first
        else:
            s_r = W2 * u[idx].mean(1) + b2
            t_r = s_r + W2 * w[idx].mean(1)
            qq = q_root
        return W2 * e_pp(s_r, qq) + b2 + W2 * t_r * e_dd(s_r, qq)

    n_child = prev["nu"].shape[1]
    trace = float(root_kernel(np.zeros((1, a), dtype=np.int64))[0])
    if a == 2 and "full" in prev and L >= 3 and "full" not in levels[L - 2]:
        return _wide_root(levels, types, tg, u, w, sp, W2, b2, q_root, trace, capped_at, max_blocks)
    cand = _multisets(len(prev["degree"]), a)
    deg = prev["degree"][cand].sum(1)
    N = prev["nu"]
    if a == 2:
        if L == 1:
            # the root reads the leaves: Sigma = W^2 mean z + b^2, Theta = Sigma
            Y = _pair_form(leaf_z, np.zeros(2), N.T, sp["act"], W2, b2, q_first)
        else:
            Y = _pair_form(u, w, N.T, sp["act"], W2, b2, q_root)
        mu = np.einsum("ij,ji->i", N[cand[:, 0]], Y[:, cand[:, 1]])
    else:
        if n_child**a > MAX_ORDERED:
            raise UsageError(
                f"arch '{sp}': {n_child}^{a} ordered root tuples exceed the budget ({MAX_ORDERED})"
            )
        idx = np.indices((n_child,) * a).reshape(a, -1).T
        Kt = root_kernel(idx).reshape((n_child,) * a)
        mu = np.empty(len(cand))
        for i, c in enumerate(cand):
            acc = Kt
            for j in reversed(c.tolist()):
                acc = acc @ N[j]
            mu[i] = acc
    mult = [_distinct_orders(c) * math.prod(prev["mult"][i] for i in c) for c in cand.tolist()]
    root = {
        "arity": a,
        "degree": deg,
        "mult": mult,
        "index": {tuple(c): i for i, c in enumerate(cand.tolist())},
        "children": cand,
    }
    levels.append(root)
    out = TreeSpectrum(deg, mu, mult, trace, capped_at, levels)
    if tg is not None:
        P_all, means = _level_power(tg, L, L, a, cand, prev)
        out.power = P_all[0]
        out.mean = means[0]
        # E f^2 by the same recursion with every shape summed: the node
        # second moment from the children's (independent) moments
        out.second_moment = _second_moment(tg, L, a)
    return out


def _wide_root(levels, types, tg, u, w, sp, W2, b2, q_root, trace, capped_at, max_blocks):
    """Arity-2 root when the root's children are capped (the height below is
    whole): every root shape {sigma_1, sigma_2} with sigma_2 carried and
    sigma_1 any shape. For a carried sigma_2, Y = G nu_2 is a function of the
    child's type {r, s} (two grandchild types), so for every sigma_1 =
    (sigma_a, sigma_b), mu = nu_a^T Y[{r, s}] nu_b: one product with the
    grandchildren's measures lists all sigma_1 at once."""
    L = len(levels)  # heights 0..L-1 so far
    child, grand = levels[L - 1], levels[L - 2]
    full = child["full"]
    Y = _pair_form(u, w, child["nu"].T, sp["act"], W2, b2, q_root)
    n_grand_types = grand["nu"].shape[1]
    to_ms = types[L - 1]["to_multiset"]
    f_cand, f_deg = full["cand"], full["degree"]
    f_mult = np.array([float(m) for m in _mults(f_cand, grand["mult"])])
    carried = full["keep"]
    is_carried = np.zeros(len(f_cand), dtype=bool)
    is_carried[carried] = True
    mus, f1, f2 = [], [], []
    for j, g in enumerate(carried):
        Ym = Y[to_ms, j].reshape(n_grand_types, n_grand_types)
        M = grand["nu"] @ Ym @ grand["nu"].T
        row = M[f_cand[:, 0], f_cand[:, 1]]
        sel = ~is_carried | (np.arange(len(f_cand)) <= g)
        mus.append(row[sel])
        f1.append(np.nonzero(sel)[0])
        f2.append(np.full(int(sel.sum()), g))
    mu, f1, f2 = np.concatenate(mus), np.concatenate(f1), np.concatenate(f2)
    deg = f_deg[f1] + f_deg[f2]
    mult = np.where(f1 == f2, 1.0, 2.0) * f_mult[f1] * f_mult[f2]
    power = mean = second = None
    if tg is not None:
        ghat = tg.ghat[(L, 0)]
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
        mean = float(cn[0])
        second = _second_moment(tg, L, 2)
    keep = deg <= capped_at
    if max_blocks is not None and len(mu) > max_blocks:
        k = max_blocks // (2 if power is not None else 1)
        keep[np.argsort(-mu, kind="stable")[:k]] = True
        if power is not None:
            keep[np.argsort(-power, kind="stable")[:k]] = True
    else:
        keep[:] = True
    root = {"arity": 2, "degree": deg[keep], "index": {}, "children": np.stack([f1, f2], 1)[keep]}
    levels.append(root)
    out = TreeSpectrum(deg[keep], mu[keep], mult[keep], trace, capped_at, levels)
    if tg is not None:
        out.power, out.mean, out.second_moment = power[keep], mean, second
    return out


def _mults(cand, child_mult):
    return [_distinct_orders(c) * math.prod(child_mult[i] for i in c) for c in cand.tolist()]


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
