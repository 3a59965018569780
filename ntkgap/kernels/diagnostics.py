"""Diagnostics of a kernel's Gram on a training sample against a target:
centered kernel-target alignment, effective rank, and the share of the
target's Walsh weight in the Gram's top eigenspace.

All take a symmetric positive semi-definite Gram K (n x n, float64) on the
sample X and, where a target enters, its labels y = f(X). They are
invariant to the kernel's overall scale, so an empirical NTK and the NTK of
a rescaled model (alpha (f - f0), muP's readout) give the same numbers.
"""

from __future__ import annotations

import numpy as np

from ntkgap.errors import UsageError
from ntkgap.spectral import walsh

# ways of counting a spectrum's effective rank (see effective_rank)
RANKS = ("participation", "entropy")
# Walsh modes per block of the share's n x modes character matrix
MODE_BLOCK = 4096
# entries of the Walsh-share transform route's array, a chunk of columns at a time
# (2^22: 32 MiB of float64; the transform's copy and temporaries make ~4.5x that at peak)
TRANSFORM_ENTRIES = 2**22


def _gram(K) -> np.ndarray:
    K = np.asarray(K, dtype=np.float64)
    if K.ndim != 2 or K.shape[0] != K.shape[1] or K.shape[0] < 2:
        raise UsageError(f"kernel diagnostics: Gram of shape {K.shape} is not square (n >= 2)")
    if not np.all(np.isfinite(K)):
        raise UsageError("kernel diagnostics: the Gram contains NaN or infinite values")
    return (K + K.T) / 2


def centered_alignment(K, y) -> float:
    """Centered kernel-target alignment A(K, y y^T).

    A = <K_c, Y_c>_F / (||K_c||_F ||Y_c||_F) with K_c = H K H, Y_c = H y y^T H
    and H = I - 1 1^T / n; since Y_c = y_c y_c^T (y_c = H y) this is
    y_c^T K y_c / (||K_c||_F ||y_c||^2). It lies in [-1, 1] (in [0, 1] for a
    positive semi-definite K) and is 1 exactly when K_c is a positive
    multiple of y_c y_c^T.

    Args:
        K: the Gram on the sample, (n, n).
        y: the labels, (n,).

    Returns:
        float: the alignment.

    References:
        Cortes, Mohri & Rostamizadeh, "Algorithms for Learning Kernels Based
        on Centered Alignment", JMLR 13, 2012 (Definition 1).
    """
    K = _gram(K)
    y = np.asarray(y, dtype=np.float64)
    if y.shape != (K.shape[0],):
        raise UsageError(f"kernel diagnostics: {y.shape} labels for a {K.shape} Gram")
    yc = y - y.mean()
    Kc = K - K.mean(axis=0, keepdims=True) - K.mean(axis=1, keepdims=True) + K.mean()
    denom = np.linalg.norm(Kc) * float(yc @ yc)
    if denom == 0.0:
        raise UsageError("kernel diagnostics: alignment undefined (constant labels or kernel)")
    return float(yc @ Kc @ yc / denom)


def effective_rank(K, kind: str = "participation") -> float:
    """Effective rank of a positive semi-definite Gram, from its eigenvalues
    lambda_i (negative round-off clipped to 0).

    ``participation``: (sum lambda)^2 / sum lambda^2, the participation
    ratio (Gao et al. 2017), r when r eigenvalues are equal and the rest 0.
    ``entropy``: exp(-sum p_i log p_i) with p_i = lambda_i / sum lambda
    (Roy & Vetterli 2007), also r in that case; it weighs small eigenvalues
    more than the participation ratio does (it is never smaller).

    Args:
        K: the Gram, (n, n).
        kind: one of RANKS.

    Returns:
        float in [1, n].

    References:
        Roy & Vetterli, "The effective rank: a measure of effective
        dimensionality", EUSIPCO 2007; Gao et al., "A theory of multineuronal
        dimensionality, dynamics and measurement", bioRxiv 2017.
    """
    if kind not in RANKS:
        raise UsageError(f"effective rank kind '{kind}' is not allowed (allowed: {RANKS})")
    lam = np.clip(np.linalg.eigvalsh(_gram(K)), 0.0, None)
    total = float(lam.sum())
    if total == 0.0:
        raise UsageError("kernel diagnostics: effective rank of a zero Gram")
    if kind == "participation":
        return float(total**2 / np.sum(lam**2))
    p = lam[lam > 0] / total
    return float(np.exp(-np.sum(p * np.log(p))))


def top_eigenvectors(K, k: int) -> np.ndarray:
    """The k eigenvectors of the Gram with the largest eigenvalues.

    Args:
        K: the Gram, (n, n).
        k: how many, 1 <= k <= n.

    Returns:
        (n, k) array with orthonormal columns, largest eigenvalue first.
    """
    K = _gram(K)
    if not 1 <= k <= K.shape[0]:
        raise UsageError(f"kernel diagnostics: top k={k} of a {K.shape[0]}-point Gram")
    _, vecs = np.linalg.eigh(K)
    return vecs[:, ::-1][:, :k]


def walsh_modes(target, tol: float = 1e-12):
    """A hypercube target's Walsh modes that carry weight.

    Args:
        target: a hypercube target (exact spectrum: see
            :func:`ntkgap.spectral.walsh.walsh_spectrum`).
        tol: modes with |f_hat(S)| <= tol max |f_hat| are left out.

    Returns:
        (support, subsets, coefficients): the support coordinates, the
        subset indices S (bit j: support coordinate j) and f_hat(S).
    """
    spec = walsh.walsh_spectrum(target)
    c = spec.coefficients
    keep = np.flatnonzero(np.abs(c) > tol * np.abs(c).max())
    return np.asarray(spec.support, np.int64), keep, c[keep]


def walsh_share(K, x, target, k: int | None = None, *, centered: bool = True) -> dict:
    """Share of a hypercube target's Walsh weight in the Gram's top-k eigenspace.

    With V_k the span of the top k eigenvectors of K on the sample X, each
    Walsh mode S of f = sum_S f_hat(S) chi_S is captured in the fraction
    c_S = ||P_k chi_S(X)||^2 / ||chi_S(X)||^2 of its sampled vector, and the
    share is sum_S f_hat(S)^2 c_S / sum_S f_hat(S)^2 (1 for a kernel whose
    top eigenspace contains every mode of f on the sample; k / n on average
    for a random k-dimensional space). ``centered`` leaves out the constant
    mode S = {} (the mean, which every kernel with a bias nearly captures).

    Args:
        K: the Gram on the sample, (n, n).
        x: the sample's hypercube points (domain format, +-1), (n, d).
        target: the hypercube target.
        k: the eigenspace's dimension (default: the number of the target's
            modes that carry weight, capped at n // 2: the dimension a
            kernel matched to f would need).
        centered: leave out the constant mode.

    Returns:
        ``{"share": float, "k": int, "modes": int}``.

    References:
        O'Donnell, "Analysis of Boolean Functions", 2014, ch. 1 (the Walsh
        expansion); Kopitkov & Indelman, "Neural Spectrum Alignment:
        Empirical Study", ICANN 2020 (target energy in a kernel's top
        eigenvectors).
    """
    K = _gram(K)
    x = np.asarray(x)
    support, modes, coef = walsh_modes(target)
    if centered:
        coef, modes = coef[modes != 0], modes[modes != 0]
    if modes.size == 0:
        raise UsageError("kernel diagnostics: the target has no Walsh weight to capture")
    n = K.shape[0]
    k = min(modes.size, n // 2) if k is None else int(k)
    U = top_eigenvectors(K, max(k, 1))
    # point index in the support cube: bit j set where support coordinate j is -1
    idx = ((x[:, support] < 0).astype(np.int64) << np.arange(support.size)).sum(axis=1)
    bits = support.size
    # the cheaper route; the transform's only where one column's array fits TRANSFORM_ENTRIES
    by_transform = bits * 2**bits <= n * modes.size and 2**bits <= TRANSFORM_ENTRIES
    route = _captured_by_transform if by_transform else _captured_by_modes
    captured = route(U, idx, modes, bits)
    w = coef**2
    return {"share": float(w @ captured / w.sum()), "k": int(k), "modes": int(modes.size)}


def _captured_by_modes(U, idx, modes, bits):
    """||U^T chi_S(X)||^2 / n per mode S, each mode's column sampled (n x modes work)."""
    n, captured = len(idx), np.empty(modes.size)
    for a in range(0, modes.size, MODE_BLOCK):
        S = modes[a : a + MODE_BLOCK]
        chi = 1.0 - 2.0 * (walsh.popcount(idx[:, None] & S[None, :]) & 1)
        captured[a : a + MODE_BLOCK] = np.sum((U.T @ chi) ** 2, axis=0) / n
    return captured


def _captured_by_transform(U, idx, modes, bits):
    """The same numbers from Walsh transforms of U's columns scattered on the
    support cube: (U^T chi_S(X))_j = sum_z G_j(z) chi_S(z) = (H G_j)(S) with
    G_j(z) = sum_{i: idx_i = z} U_ij (bits 2^bits work per column), a chunk
    of columns at a time (2^bits x chunk <= TRANSFORM_ENTRIES)."""
    chunk = max(1, TRANSFORM_ENTRIES // 2**bits)
    captured = np.zeros(modes.size)
    for a in range(0, U.shape[1], chunk):
        G = np.zeros((2**bits, min(chunk, U.shape[1] - a)))
        np.add.at(G, idx, U[:, a : a + chunk])
        captured += np.sum(walsh.fwht(G)[modes] ** 2, axis=1)
    return captured / len(idx)
