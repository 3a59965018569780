"""The exact ReLU network of the iterated sawtooth (arXiv 2607.06382; the
classic construction of Telgarsky 2016).

On u in [0, 1] the tent map is t(u) = 2 relu(u) - 4 relu(u - 1/2). Feeding
each tent into the next layer's two units gives a depth-L, width-2 ReLU
network computing g_L(u) - 1/2 exactly from the angle u = theta / 2pi:
layer 1 (1 -> 2): 2 weights + 2 biases; layers 2..L (2 -> 2, the readout
[2, -4] of the previous tent folded into the weights [[2, -4], [2, -4]]):
4 + 2 each; readout (2 -> 1): 2 + 1. Parameter count 4 + 6 (L - 1) + 3 = 6L + 1.
"""

from __future__ import annotations

import numpy as np


def exact_params(L: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """Weights of the depth-L, width-2 ReLU network computing the sawtooth exactly.

    Args:
        L: the depth (>= 1).

    Returns:
        list of L + 1 (W, b) pairs, float64 arrays, the last one the linear
        readout: W of shape (1, 2) then (2, 2), readout (2, 1).

    References:
        Telgarsky, "Benefits of depth in neural networks", 2016.
    """
    if L < 1:
        raise ValueError("L must be >= 1")
    layers = [(np.array([[1.0, 1.0]]), np.array([0.0, -0.5]))]
    fold = np.array([[2.0, 2.0], [-4.0, -4.0]])
    layers += [(fold, np.array([0.0, -0.5])) for _ in range(L - 1)]
    layers.append((np.array([[2.0], [-4.0]]), np.array([-0.5])))
    return layers


def n_params(L: int) -> int:
    """Parameter count of the exact depth-L sawtooth network.

    Args:
        L: the depth (>= 1).

    Returns:
        int 6L + 1.
    """
    return sum(W.size + b.size for W, b in exact_params(L))


def apply(layers, u) -> np.ndarray:
    """Evaluates a ReLU network given as (W, b) layers.

    Args:
        layers: (W, b) pairs as ``exact_params`` gives them.
        u: inputs, shape (n,) (the angle u = theta / 2pi for the sawtooth).

    Returns:
        float64 array of shape (n,).
    """
    h = np.asarray(u, dtype=np.float64)[:, None]
    for W, b in layers[:-1]:
        h = np.maximum(h @ W + b, 0.0)
    W, b = layers[-1]
    return (h @ W + b)[:, 0]


def to_stax(L: int, *, W_std: float, b_std: float):
    """The exact network as parameters of ``fc:depth=L,input=angle`` at width 2.

    stax's NTK parametrisation computes W_std W x / sqrt(fan_in) + b_std b,
    so weights and biases are divided by those factors.

    Args:
        L: the depth (>= 1).
        W_std: the arch's weight standard deviation.
        b_std: the arch's bias standard deviation (> 0).

    Returns:
        list of stax parameters: (W, b) per Dense layer, () per activation.

    References:
        Telgarsky, "Benefits of depth in neural networks", 2016.
    """
    if b_std <= 0:
        raise ValueError("b_std must be > 0 to represent the biases")
    params = []
    for i, (W, b) in enumerate(exact_params(L)):
        params.append((W * np.sqrt(W.shape[0]) / W_std, b / b_std))
        if i < L:
            params.append(())  # the activation layer has no parameters
    return params
