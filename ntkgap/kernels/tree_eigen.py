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

Activations: relu and erf in closed form here; every other one through
``ntkgap.kernels.dual`` (closed forms, or the Hermite series of Daniely,
Frostig & Singer 2016).

Tree targets: their Walsh power per shape, by composition over the same
shapes, is ``ntkgap.kernels.tree_target`` (``tree_spectrum(target=...)``).
"""

from __future__ import annotations

import contextlib
import itertools
from dataclasses import dataclass, field

import numpy as np

from ntkgap.errors import UsageError
from ntkgap.kernels import dual
from ntkgap.kernels.tree_target import _contract, _make_target, _mults, _push_forward

try:  # optional: threadpoolctl ships with scikit-learn, not with ntkgap's dependencies
    from threadpoolctl import threadpool_limits
except ImportError:  # pragma: no cover
    threadpool_limits = None

# significant digits of the Hermite-series duals (gelu, tanh, silu, softplus):
# float64 needs no more, and their set-up time grows with it (~0.6 s per q at 16)
DUAL_DIGITS = 17
# largest (shapes x types) array of signed measures carried at one height
MAX_CELLS = 2**25
# most shapes carried at a capped height (the root's cost grows with it)
MAX_CARRIED = 96
# largest number of ordered child tuples combined at one node
MAX_ORDERED = 2**26


def _duals(act: str, xp=np, slope: float = 0.01):
    """(E phi(u)phi(v), E phi'(u)phi'(v), E phi(u)^2) as functions of (c, q)
    for (u, v) centred Gaussian with covariance [[q, c], [c, q]].

    relu and erf in closed form in array module ``xp`` (numpy or jax.numpy)
    (Cho & Saul 2009 for ReLU, Williams 1997 for erf); every other
    activation of ``ntkgap.kernels.dual`` through its dual there (closed
    forms for leaky_relu, abs, sin; the Hermite series of Daniely, Frostig &
    Singer 2016 to ``DUAL_DIGITS`` digits for gelu, tanh, silu, softplus),
    in numpy only.

    Args:
        act: the activation's name (``ntkgap.kernels.dual.ACTS``).
        xp: the array module of the closed forms.
        slope: leaky_relu's negative slope.

    Returns:
        tuple of three functions: e_pp(c, q), e_dd(c, q), e_qq(q).
    """
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
    if act not in dual.ACTS:
        raise UsageError(f"arch act={act}: no dual (allowed: {', '.join(dual.ACTS)})")
    return _series_duals(act, slope)


def _series_duals(act: str, slope: float):
    """``_duals`` through ``ntkgap.kernels.dual``'s per-q dual objects (cached per q)."""
    cache = {}

    def at(q):
        key = float(q)
        if key not in cache:
            cache[key] = dual._Dual(act, key, dual._Numpy(), "numpy", slope, DUAL_DIGITS, False)
        return cache[key]

    def e_qq(q):
        return float(at(q)(np.asarray(float(q)))[2])

    return (lambda c, q: at(q)(c)[0]), (lambda c, q: at(q)(c)[1]), e_qq


def _pair_form(u, w, N, act, W2, b2, q, tile=128, duals=None):
    """Y = G N for the symmetric arity-2 root kernel
    G[i, j] = K(Sigma = W^2 (u_i + u_j)/2 + b^2, Theta = Sigma + W^2 (w_i + w_j)/2)
    (see ``tree_spectrum``), by square tiles of the upper triangle, each
    entry evaluated once. The readout is rewritten as
    G = F(x) + H(x) (e_i + e_j), x = r_i + r_j, with the per-row terms
    r, e precomputed (relu: x = Sigma / q; erf: x = 2 Sigma / (1 + 2q);
    other activations: x = Sigma, through ``duals``, the triple of
    ``_duals``). Small tiles keep the elementwise passes in cache (measured
    ~2x faster than 1024-wide tiles); the products run per row panel."""
    n, m = N.shape
    e = 0.5 * W2 * np.asarray(w)
    if act == "relu":
        r = (0.5 * W2 * np.asarray(u) + 0.5 * b2) / q
        tile_kernel = _relu_tile(W2, q)
    elif act == "erf":
        r = (0.5 * W2 * np.asarray(u) + 0.5 * b2) * (2 / (1 + 2 * q))
        tile_kernel = _erf_tile(W2, q)
    else:
        r = 0.5 * W2 * np.asarray(u) + 0.5 * b2
        e_pp, e_dd, _ = duals

        def tile_kernel(x, ee):
            return W2 * e_pp(x, q) + W2 * (x + ee) * e_dd(x, q)

    Y = np.zeros((n, m))
    with _one_blas_thread():
        _pair_tiles(Y, r, e, N, tile_kernel, tile)
    Y += b2 * N.sum(0)  # the readout bias: a constant b^2 in every entry
    return Y


def _relu_tile(W2, q):
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

    return tile_kernel


def _erf_tile(W2, q):
    den = 1 + 2 * q
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

    return tile_kernel


def _one_blas_thread():
    """BLAS on one thread: its threads spin between the panel products
    (measured: twice the CPU time, three times the wall time on 2 cores)."""
    if threadpool_limits is None:  # pragma: no cover
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


@dataclass
class NodeTypes:
    """The node recursion over types (see the module docstring).

    ``combos[h]`` (h = 1..L-1) lists the sorted child-type tuples of the
    types at height h, ``to_multiset[h]`` maps every ordered child-type tuple
    (C order) to its type. ``u``, ``w`` hold per root-child type
    E[phi phi](Sigma) and Theta E[phi' phi'](Sigma) (L = 1: the leaves'
    z and 0), and ``q_root`` is the root's NNGP diagonal."""

    arity: int
    L: int
    W2: float
    b2: float
    duals: tuple
    combos: list
    to_multiset: list
    u: np.ndarray
    w: np.ndarray
    q_root: float

    def root_kernel(self, u_mean, w_mean, kind: str = "ntk"):
        """The readout's kernel at the root children's mean u and mean w.

        Args:
            u_mean: mean over the root's children of ``u`` at their types.
            w_mean: the same for ``w``.
            kind: "ntk" or "nngp".

        Returns:
            array shaped like ``u_mean``.
        """
        e_pp, e_dd, _ = self.duals
        s = self.W2 * u_mean + self.b2
        out = self.W2 * e_pp(s, self.q_root) + self.b2
        if kind == "ntk":
            out = out + self.W2 * (s + self.W2 * w_mean) * e_dd(s, self.q_root)
        return out


def node_types(arch) -> NodeTypes:
    """Types of every height below the root of a ``tree`` arch, and the
    values its root reads (the recursion of the module docstring).

    Args:
        arch: a ``tree`` Arch (any activation of ``ntkgap.kernels.dual``).

    Returns:
        NodeTypes.

    References: Jacot et al. 2018 and Arora et al. 2019 (NTK recursion),
    Novak et al. 2019 (locally connected layers).
    """
    sp = arch.spec
    a, L = sp["arity"], sp["L"]
    W2, b2 = sp["W_std"] ** 2, sp["b_std"] ** 2
    duals = _duals(sp["act"], slope=sp["slope"])
    e_pp, e_dd, e_qq = duals
    leaf_z = np.array([1.0, -1.0])  # leaf type 0 is z = +1, type 1 is z = -1
    q = W2 + b2  # the NNGP diagonal at height 1
    combos, to_ms = [None], [None]
    sig = the = None
    for h in range(1, L):
        n_prev = 2 if h == 1 else sig.size
        if n_prev**a > MAX_ORDERED:
            raise UsageError(
                f"arch '{sp}': {n_prev}^{a} child types at height {h} exceed the recursion's "
                f"budget ({MAX_ORDERED})"
            )
        c = _multisets(n_prev, a)
        if h == 1:
            s_new = W2 * leaf_z[c].mean(1) + b2
            t_new = s_new.copy()
        else:
            u, w = e_pp(sig, q), the * e_dd(sig, q)
            s_new = W2 * u[c].mean(1) + b2
            t_new = s_new + W2 * w[c].mean(1)
            q = W2 * e_qq(q) + b2
        combos.append(c)
        to_ms.append(_ordered_to_multiset(n_prev, a, c))
        sig, the = s_new, t_new
    if L == 1:
        u, w, q_root = leaf_z, np.zeros(2), W2 + b2
    else:
        u, w, q_root = e_pp(sig, q), the * e_dd(sig, q), W2 * e_qq(q) + b2
    return NodeTypes(a, L, W2, b2, duals, combos, to_ms, u, w, q_root)


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
        arch: a ``tree`` Arch (any activation of ``ntkgap.kernels.dual``).
        kcap: at heights too large to carry whole (see ``MAX_CELLS``), the
            shapes of degree <= kcap are carried (and listed at the root).
        target: optional ``Tree`` target with the arch's arity and L (any
            node, tanh included); its power per listed shape is computed,
            and at capped heights the ``keep_power`` shapes of largest power
            are carried too.
        keep_power: see ``target``.
        max_blocks: capped spectra list at most about this many blocks: every
            block of degree <= ``capped_at``, then the largest eigenvalues and
            (with a target) the largest powers; None lists every computed block.

    Returns:
        TreeSpectrum (exact for every listed shape).

    References: Jacot et al. 2018 and Arora et al. 2019 (NTK recursion),
    Novak et al. 2019 (locally connected layers); see the module docstring.
    """
    a, L = arch.spec["arity"], arch.spec["L"]
    nt = node_types(arch)
    tg = _make_target(target, a, L) if target is not None else None
    levels = [_leaf_level(a, L, tg)]
    capped_at = None
    for h in range(1, L):
        lvl, k_eff = _shape_level(levels[h - 1], h, nt, tg, kcap, keep_power)
        if k_eff is not None:
            capped_at = k_eff if capped_at is None else min(capped_at, k_eff)
        levels.append(lvl)
    trace = float(nt.root_kernel(nt.u[:1], nt.w[:1])[0])
    if a == 2 and "full" in levels[L - 1] and L >= 3 and "full" not in levels[L - 2]:
        return _wide_root(levels, nt, tg, arch.spec["act"], trace, capped_at, max_blocks)
    return _root(levels, nt, tg, arch.spec, trace, capped_at)


def _leaf_level(a, L, tg):
    lvl = {
        "arity": a,
        "degree": np.array([0, 1]),
        "mult": [1, 1],
        "nu": np.array([[0.5, 0.5], [0.5, -0.5]]),
        "index": {},
    }
    if tg is not None:
        tg.leaf(lvl, a**L)
    return lvl


def _keep(deg, cells, kcap, P_all, keep_power):
    """Which candidate shapes a height carries, and the degree cap (None: all)."""
    if cells <= MAX_CELLS:
        return np.ones(deg.size, dtype=bool), None
    # carry the shapes of lowest degree that fit, and the target's
    k_eff = int(kcap)
    while k_eff > 0 and np.count_nonzero(deg <= k_eff) > MAX_CARRIED:
        k_eff -= 1
    keep = deg <= k_eff
    if P_all is not None:
        score = np.sum(P_all, axis=0)
        top = np.argsort(-score, kind="stable")[:keep_power]
        keep[top[score[top] > 0]] = True
    return keep, k_eff


def _shape_level(prev, h, nt, tg, kcap, keep_power):
    """The shapes of height h (``levels[h]`` of ``tree_spectrum``): sorted
    child shape ids, degree, multiplicity, signed measure over the types, and
    with a target its power per node. Returns (level, degree cap or None)."""
    a = nt.arity
    cand = _multisets(len(prev["degree"]), a)
    deg = prev["degree"][cand].sum(1)
    n_types = nt.combos[h].shape[0]
    P_all = means = None
    if tg is not None:
        P_all, means = tg.level_power(h, cand, prev)
    keep, k_eff = _keep(deg, len(cand) * n_types, kcap, P_all, keep_power)
    lvl = {"arity": a}
    if not keep.all():
        lvl["full"] = {"cand": cand, "degree": deg, "keep": np.nonzero(keep)[0]}
        if tg is not None:
            lvl["full"]["P"] = P_all
    cand = cand[keep]
    lvl["degree"] = deg[keep]
    lvl["mult"] = _mults(cand, prev["mult"])
    lvl["index"] = {tuple(c): i for i, c in enumerate(cand.tolist())}
    lvl["children"] = cand
    if tg is not None:
        lvl["P"] = [row[keep] for row in P_all]
        lvl["mean"] = means
        tg.attach(h, lvl, cand, prev)
    lvl["nu"] = _push_forward(prev["nu"], cand, nt.to_multiset[h], n_types)
    return lvl, k_eff


def _root(levels, nt, tg, sp, trace, capped_at):
    """Every root shape over whole (or capped) children: mu_S = nu^T G nu."""
    a, L = nt.arity, nt.L
    prev = levels[L - 1]
    cand = _multisets(len(prev["degree"]), a)
    deg = prev["degree"][cand].sum(1)
    N = prev["nu"]
    n_child = N.shape[1]
    if a == 2:
        Y = _pair_form(nt.u, nt.w, N.T, sp["act"], nt.W2, nt.b2, nt.q_root, duals=nt.duals)
        mu = np.einsum("ij,ji->i", N[cand[:, 0]], Y[:, cand[:, 1]])
    else:
        if n_child**a > MAX_ORDERED:
            raise UsageError(
                f"arch '{sp}': {n_child}^{a} ordered root tuples exceed the budget ({MAX_ORDERED})"
            )
        idx = np.indices((n_child,) * a).reshape(a, -1).T
        Kt = nt.root_kernel(nt.u[idx].mean(1), nt.w[idx].mean(1)).reshape((n_child,) * a)
        mu = _contract(Kt, N, cand)
    mult = _mults(cand, prev["mult"])
    index = {tuple(c): i for i, c in enumerate(cand.tolist())}
    levels.append({"arity": a, "degree": deg, "mult": mult, "index": index, "children": cand})
    out = TreeSpectrum(deg, mu, mult, trace, capped_at, levels)
    if tg is not None:
        P_all, means = tg.level_power(L, cand, prev)
        out.power, out.mean = P_all[0], means[0]
        out.second_moment = tg.second_moment(prev)
    return out


def _wide_root(levels, nt, tg, act, trace, capped_at, max_blocks):
    """Arity-2 root when the root's children are capped (the height below is
    whole): every root shape {sigma_1, sigma_2} with sigma_2 carried and
    sigma_1 any shape. For a carried sigma_2, Y = G nu_2 is a function of the
    child's type {r, s} (two grandchild types), so for every sigma_1 =
    (sigma_a, sigma_b), mu = nu_a^T Y[{r, s}] nu_b: one product with the
    grandchildren's measures lists all sigma_1 at once."""
    L = len(levels)  # heights 0..L-1 so far
    child, grand = levels[L - 1], levels[L - 2]
    full = child["full"]
    Y = _pair_form(nt.u, nt.w, child["nu"].T, act, nt.W2, nt.b2, nt.q_root, duals=nt.duals)
    n_grand_types = grand["nu"].shape[1]
    to_ms = nt.to_multiset[L - 1]
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
    power = None
    if tg is not None:
        power, mean, second = tg.wide_power(levels, f1, f2, mult)
    keep = _wide_keep(deg, mu, power, capped_at, max_blocks)
    root = {"arity": 2, "degree": deg[keep], "index": {}, "children": np.stack([f1, f2], 1)[keep]}
    levels.append(root)
    out = TreeSpectrum(deg[keep], mu[keep], mult[keep], trace, capped_at, levels)
    if tg is not None:
        out.power, out.mean, out.second_moment = power[keep], mean, second
    return out


def _wide_keep(deg, mu, power, capped_at, max_blocks):
    keep = deg <= capped_at
    if max_blocks is not None and len(mu) > max_blocks:
        k = max_blocks // (2 if power is not None else 1)
        keep[np.argsort(-mu, kind="stable")[:k]] = True
        if power is not None:
            keep[np.argsort(-power, kind="stable")[:k]] = True
    else:
        keep[:] = True
    return keep
