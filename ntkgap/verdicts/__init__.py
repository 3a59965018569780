"""From stored results to verdicts: what is read (``selection``), the claims
of a config (``claims``: parsing and evaluation) with their schema and
decision rules (``rules``) and statistics (``curve_statistics``,
``nstar_statistics``), the report's tables (``tables``), the overview of a run's cells
(``overview``, for ``ntkgap show``) and the user-facing kernel-versus-network
comparison (``comparison``)."""
