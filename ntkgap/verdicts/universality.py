"""The activation falsifier: is the kernel-network gap fundamental or
activation-specific?

The source paper names its own test: "if the exponential gap holds only for
ReLU networks and vanishes for other activations, the result is
activation-specific rather than fundamental". A ``universality`` claim reads
the verdicts of per-activation ratio claims of the same experiment (its
``params.members``, claim ids, and ``params.reference``, the ReLU claim's
id) and decides, pre-registered:

- *supported* (the gap is universal): every member reads supported;
- *not supported* (activation-specific): the reference reads supported and
  at least one other member reads not supported;
- *inconclusive* otherwise (a member undecided, too few depths, or the
  reference itself not supported: then the gap is not ReLU's either).

Each member is one test of the family; the report states Holm's procedure
over them (:func:`ntkgap.verdicts.claims.family_wise`).

References:
    arXiv 2607.06382 (the falsification criteria: universality across
    activations).
    Holm, "A simple sequentially rejective multiple test procedure",
    Scand. J. Statist. 6 (1979) 65-70.
"""

from __future__ import annotations

from ntkgap.errors import UsageError
from ntkgap.verdicts.rules import (
    INCONCLUSIVE,
    NOT_SUPPORTED,
    SUPPORTED,
    Measured,
)

__all__ = ["check_params", "universal"]


def check_params(params: dict, ids: set, tag: str) -> None:
    """One-line UsageError unless a universality claim's params name at
    least two member claims of the config, the reference among them.

    Args:
        params: the claim's params (``members``: list of claim ids;
            ``reference``: the id whose gap the others are judged against).
        ids: the ids of the config's claims.
        tag: the claim's tag for messages.

    Returns:
        None; raises ``UsageError`` naming the bad field otherwise.
    """
    members = params.get("members")
    if not isinstance(members, list) or len(members) < 2:
        raise UsageError(f"{tag}: params.members must list >= 2 claim ids of this config")
    missing = [m for m in members if m not in ids]
    if missing:
        raise UsageError(f"{tag}: params.members names unknown claims: {', '.join(missing)}")
    if params.get("reference") not in members:
        raise UsageError(f"{tag}: params.reference must be one of params.members")


def _fmt(x) -> str:
    """A number of a member's reading, or ``?``."""
    return "?" if x is None else f"{x:.3g}"


def _line(ev: dict) -> str:
    """One member's value, CI and verdict, for the detail."""
    ci = f"[{_fmt(ev.get('lo'))}, {_fmt(ev.get('hi'))}]"
    return f"{ev['id']} {_fmt(ev.get('value'))} {ci} {ev['verdict']}"


def universal(params: dict, evaluated: list[dict]) -> Measured:
    """The universality verdict from the members' evaluated claims.

    Args:
        params: the claim's params (``reference``: the ReLU claim's id).
        evaluated: the members' evaluated claim dicts (``id``, ``value``,
            ``lo``, ``hi``, ``verdict``), in the config's order.

    Returns:
        Measured: ``value`` the share of members supported, its own
        ``verdict`` (the module's rule), ``detail`` each member's value, CI
        and verdict; ``data`` ``{"members": {id: verdict}}``.
    """
    ref = params["reference"]
    verdicts = {ev["id"]: ev["verdict"] for ev in evaluated}
    others = [i for i in verdicts if i != ref]
    if all(v == SUPPORTED for v in verdicts.values()):
        verdict, why = SUPPORTED, "every activation's gap is supported"
    elif verdicts[ref] == SUPPORTED and any(verdicts[i] == NOT_SUPPORTED for i in others):
        bad = ", ".join(i for i in others if verdicts[i] == NOT_SUPPORTED)
        verdict, why = NOT_SUPPORTED, f"activation-specific: {ref} supported, {bad} not"
    else:
        why = "neither every activation supported nor a refutation beside " + ref
        verdict = INCONCLUSIVE
    share = sum(v == SUPPORTED for v in verdicts.values()) / len(verdicts)
    detail = why + "; " + "; ".join(_line(ev) for ev in evaluated)
    return Measured(
        value=share,
        seeds=None,
        ci_method="verdicts of the member claims (Holm over the family: REPORT.md)",
        detail=detail,
        verdict=verdict,
        data={"members": verdicts},
    )
