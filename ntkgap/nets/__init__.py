"""Finite networks: architecture specs (``arch``), their training
(``training``, ``train_config``) and the hand-built sawtooth network.
Reads targets and splits; never kernels' results."""
