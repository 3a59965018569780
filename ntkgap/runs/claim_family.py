"""Claim families: one short table expanded into many ``[[claim]]`` tables at load.

A ``[[claim_family]]`` holds the fields its claims share and the list it is
expanded over. ``over`` is a table of lists (their cartesian product, the
first key outermost); ``each`` is a list of tables, one per claim (after
``over``'s values, innermost). In an item, a claim field (``id``,
``claim``, ``profile``, ...) is that claim's own value; every other key is
a template variable: ``{name}`` in any string of the shared fields (nested
tables and lists too) is replaced by it, and a string that is exactly
``{name}`` takes the variable's value as it is (a number, a table). Braces
that name no variable (``L={L}`` in a predictor spec) are left alone::

    [[claim_family]]
    id = "E8-{activation}"
    claim = "{activation} nets: the kernel-network gap grows with depth"
    statistic = "nstar_ratio_growth"
    profile = "full"
    params = { a = ["ntk_search", "fc"], b = ["net_search", "fc"], eps = 0.1,
               family = { name = "tree", arity = 2, node = "{activation}" } }
    rule = { kind = "above", threshold = 1.5, reason = "..." }
    over = { activation = ["tanh", "relu"] }

gives the claims ``E8-tanh`` and ``E8-relu``. The claims of the families
come first, in the file's order, then the config's ``[[claim]]`` tables.
"""

from __future__ import annotations

import itertools
import re

from ntkgap.errors import UsageError

__all__ = ["FAMILY_KEYS", "expand_families"]

#: the keys of a family that are not claim fields
FAMILY_KEYS = ("over", "each")


def expand_families(cfg: dict, where: str, claim_keys: set[str] | None = None) -> dict:
    """The config with its ``[[claim_family]]`` tables expanded into claims.

    Args:
        cfg: the config as read from TOML (not modified).
        where: the config's path, for messages.
        claim_keys: the claim fields an item may set directly (None: the
            keys of the family's shared fields and ``id``, ``claim``,
            ``paper``, ``profile``, ``statistic``, ``predictors``, ``params``,
            ``rule``, ``expect``, ``note``).

    Returns:
        a new dict: ``claim`` holds the families' claims, then the config's
        own ``[[claim]]`` tables; no ``claim_family`` key.
    """
    fams = cfg.get("claim_family", [])
    if not isinstance(fams, list) or not all(isinstance(f, dict) for f in fams):
        raise UsageError(f"config {where}: 'claim_family' must be a list of tables")
    keys = claim_keys or {
        "id", "claim", "paper", "profile", "statistic", "predictors", "params", "rule", "expect",
        "note",
    }  # fmt: skip
    claims = [
        c for i, f in enumerate(fams) for c in _expand_one(f, f"{where}: claim_family {i}", keys)
    ]
    own = cfg.get("claim", [])
    out = {k: v for k, v in cfg.items() if k != "claim_family"}
    if claims or "claim" in cfg:
        out["claim"] = claims + (list(own) if isinstance(own, list) else own)
    return out


def _items(fam: dict, tag: str) -> list[dict]:
    """The family's items: ``over``'s product, each joined with every ``each`` table."""
    over = fam.get("over", {})
    each = fam.get("each", [{}])
    if not isinstance(over, dict) or not all(isinstance(v, list) and v for v in over.values()):
        raise UsageError(f"config {tag}: 'over' must be a table of non-empty lists")
    if not isinstance(each, list) or not each or not all(isinstance(e, dict) for e in each):
        raise UsageError(f"config {tag}: 'each' must be a non-empty list of tables")
    if "over" not in fam and "each" not in fam:
        raise UsageError(f"config {tag}: a family needs 'over' (a table of lists) or 'each'")
    names = list(over)
    return [
        {**dict(zip(names, vals)), **e}
        for vals in itertools.product(*(over[n] for n in names))
        for e in each
    ]


def _expand_one(fam: dict, tag: str, keys: set[str]) -> list[dict]:
    """The claim tables of one family, in ``_items`` order."""
    shared = {k: v for k, v in fam.items() if k not in FAMILY_KEYS}
    unknown = set(shared) - keys
    if unknown:
        raise UsageError(
            f"config {tag}: unknown key '{sorted(unknown)[0]}' "
            f"(allowed: {', '.join(sorted(keys | set(FAMILY_KEYS)))})"
        )
    out = []
    for item in _items(fam, tag):
        own = {k: v for k, v in item.items() if k in keys}
        variables = {k: v for k, v in item.items() if k not in keys}
        claim = {k: _fill(v, variables) for k, v in shared.items()}
        claim.update(own)
        out.append(claim)
    return out


def _fill(value, variables: dict):
    """``value`` with every ``{name}`` of ``variables`` filled in (recursively)."""
    if isinstance(value, dict):
        return {k: _fill(v, variables) for k, v in value.items()}
    if isinstance(value, list):
        return [_fill(v, variables) for v in value]
    if not isinstance(value, str) or not variables:
        return value
    whole = re.fullmatch(r"\{(\w+)\}", value)
    if whole and whole.group(1) in variables:
        return variables[whole.group(1)]
    pattern = re.compile(r"\{(" + "|".join(map(re.escape, variables)) + r")\}")
    return pattern.sub(lambda m: str(variables[m.group(1)]), value)
