"""From stored results to verdicts: the claims and their statistics
(``claims``) and the user-facing kernel-versus-network comparison
(``comparison``)."""
