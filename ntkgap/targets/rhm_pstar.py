"""The random hierarchy model's published sample-complexity law and its
thresholds: the number of valid strings, P* = n_c m^L, the classification
threshold P* is read at, and the regime where the law applies.

References:
    Cagnetta, Petrini, Tomasini, Favero & Wyart, "How deep neural networks
    learn compositional data: the random hierarchy model", Phys. Rev. X 14,
    031001 (2024).
"""

from __future__ import annotations


def n_valid_formula(n_c: int, m: int, s: int, L: int) -> int:
    """The number of valid RHM strings, n_c m^((s^L - 1)/(s - 1)).

    Args:
        n_c: the number of classes.
        m: the synonymous rules per symbol.
        s: the tuple size of a rule.
        L: the number of levels.

    Returns:
        int.

    References:
        Cagnetta, Petrini, Tomasini, Favero & Wyart, "How deep neural
        networks learn compositional data: the random hierarchy model",
        Phys. Rev. X 14, 031001 (2024).
    """
    return n_c * m ** ((s**L - 1) // (s - 1))


# The classification threshold of the published sample complexity: P* is the
# fewest training strings at which the test classification error falls below
# this fraction of the random-guess error 1 - 1/n_c (Cagnetta et al., PRX 2024,
# the definition of P* beside their sample-complexity figures).
PSTAR_FRACTION_OF_GUESS = 0.1


# The regime of the published law: P* at most this fraction of the valid
# strings n_c m^((s^L - 1)/(s - 1)), so that the training set is a small sample
# of the data and P* is not set by exhausting it (Cagnetta et al., PRX 2024,
# measure P* far below the number of valid strings; the 10% is this toolkit's choice).
PSTAR_REGIME_FRACTION = 0.1


def pstar_regime_edge(n_c: int, m: int, s: int, L: int) -> float:
    """The largest P* inside the published law's regime:
    PSTAR_REGIME_FRACTION x the number of valid strings.

    Args:
        n_c, m, s, L: the hierarchy model's parameters.

    Returns:
        float (25.6 for n_c = 2, m = 2, s = 2, L = 3: 10% of 256).
    """
    return PSTAR_REGIME_FRACTION * n_valid_formula(n_c, m, s, L)


#: the ``eps`` a config or a claim gives for "the published P* threshold of
#: this target's n_c" (``pstar_threshold``), read by ``threshold_of``
PSTAR_EPS = "pstar"


def threshold_of(eps, n_c: int):
    """An error level as given: ``pstar_threshold(n_c)`` for ``PSTAR_EPS``,
    else ``eps`` itself.

    Args:
        eps: a number, or ``PSTAR_EPS``.
        n_c: the target's number of classes.

    Returns:
        the number.
    """
    return pstar_threshold(n_c) if eps == PSTAR_EPS else eps


def random_guess_error(n_c: int) -> float:
    """The classification error of a uniform random guess, 1 - 1/n_c.

    Args:
        n_c: the number of classes.

    Returns:
        float.
    """
    return 1.0 - 1.0 / n_c


def pstar_threshold(n_c: int) -> float:
    """The classification error at which the published P* is read:
    PSTAR_FRACTION_OF_GUESS x (1 - 1/n_c).

    Args:
        n_c: the number of classes.

    Returns:
        float (0.05 for n_c = 2, 0.075 for n_c = 4).

    References:
        Cagnetta, Petrini, Tomasini, Favero & Wyart, Phys. Rev. X 14,
        031001 (2024) (P* at test error epsilon_rand / 10).
    """
    return PSTAR_FRACTION_OF_GUESS * random_guess_error(n_c)


def paper_pstar(n_c: int, m: int, L: int) -> int:
    """The published scaling of the trained CNN's sample complexity, n_c m^L
    (up to a constant).

    Args:
        n_c: the number of classes.
        m: the synonymous rules per symbol.
        L: the number of levels.

    Returns:
        int.

    References:
        Cagnetta, Petrini, Tomasini, Favero & Wyart, Phys. Rev. X 14,
        031001 (2024).
    """
    return n_c * m**L
