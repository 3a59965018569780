"""Infinite-width kernels and their predictors: dual activations
(``dual``), Gram matrices (``gram``), eigensystems (``eigen``,
``tree_eigen``, ``tree_target``), kernel ridge regression (``krr``), the NTK predictor on a
split (``ntk_predictor``) and eigenlearning theory (``eigenlearning``,
``theory``)."""
