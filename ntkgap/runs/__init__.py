"""Running experiments: the config runner and its results store
(``runner``), n* searches (``search``, ``sample_complexity``) and the
scaling fits that searches and verdicts share (``scaling``)."""
