"""Running experiments: configs read and expanded (``config``), methods
declared with their defaults (``registry``) and computed (``methods``),
results stored by the filled cell (``store``), executed locally or on Dask
(``executors``); n* searches (``search``, ``sample_complexity``), the
run-time learning-rate choice (``lr_choice``) and the scaling fits that
searches and verdicts share (``scaling``)."""
