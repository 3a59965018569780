"""User-facing errors: each carries one line naming the bad field, the bad
value and what is allowed; the CLI prints it and exits with status 2."""


class UsageError(ValueError):
    """Bad input from the user (a spec, an option, a config, data)."""


class SpecError(UsageError):
    """A malformed or out-of-range object spec such as ``parity:d=20,k=30``."""


class MemoryLimitError(UsageError):
    """A request whose arrays would not fit in memory, refused before allocating."""
