"""Infrastructure that is not science: the environment (``config``), the
JAX/neural-tangents set-up (``compat``), cores, memory, progress bars,
files and derived seeds. Nothing here knows about kernels or targets."""
