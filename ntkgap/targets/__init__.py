"""The target zoo: compositional functions on the circle and the hypercube.

``parse_target("tree:d=24,L=3,arity=2,node=parity")`` validates the spec and
returns a target object. Every target has a ``domain``, is callable on that
domain's points, and reports ``architecture()`` (its architectural
complexity: constituents, fan-in, depth, support) and ``moments()`` (mean,
variance, fourth moment, kurtosis, max |f|). Spectra live in
:mod:`ntkgap.spectral.fourier` (circle) and :mod:`ntkgap.spectral.walsh` (hypercube).

``file:PATH.toml`` reads a user-defined compositional DAG
(:mod:`ntkgap.targets.dag`); ``rhm:...`` is the random hierarchy model
(:mod:`ntkgap.targets.rhm`).
"""

from __future__ import annotations

from ntkgap.errors import SpecError
from ntkgap.specs import Field, Schema, describe, parse, raw_items, with_param
from ntkgap.targets import boolean, circle, dag, rhm

_FILE = {
    "file": Schema(
        {"path": Field(str, doc="a TOML file: domain, then [[node]] tables")},
        doc="file:PATH.toml, a compositional DAG defined in a TOML file "
        "(see ntkgap.targets.dag; {L} in PATH: a depth family)",
    )
}
SCHEMAS = {**circle.SCHEMAS, **boolean.SCHEMAS, **rhm.SCHEMAS, **_FILE}
_BUILDERS = {**circle.BUILDERS, **boolean.BUILDERS, **rhm.BUILDERS}


def parse_spec(text: str):
    """The validated Spec of a target, without building the target.

    Figures and claims read keys such as ``L`` through it.

    Args:
        text: a target spec string such as ``parity:d=20,k=3``.

    Returns:
        :class:`~ntkgap.specs.Spec` with the target's name and parameters.
    """
    return parse("target", text, SCHEMAS)


def parse_target(text: str):
    """Parse and validate a target spec; raises SpecError on bad input.

    Args:
        text: a spec such as ``parity:d=20,k=3`` or ``file:PATH.toml``.

    Returns:
        The target object.
    """
    if (body := dag.spec_path(text)) is not None:
        if not body:
            raise SpecError("target 'file': nothing after ':' (give file:PATH.toml)")
        return dag.DagTarget(dag.file_spec(body))
    spec = parse("target", text, SCHEMAS)
    return _BUILDERS[spec.name](spec)


def with_depth(text: str, L: int) -> str:
    """The member of depth L of a target family.

    ``{L}`` anywhere in the spec (a DAG file path such as
    ``file:dags/tree_L{L}.toml`` or ``tree:d=24,L={L},arity=2,node=and``) is
    replaced by L; a spec of a family with an ``L`` key that does not give it
    gets ``L=L`` appended.

    Args:
        text: the family's spec.
        L: the depth.

    Returns:
        A target spec string.
    """
    if "{L}" in text:
        return text.replace("{L}", str(int(L)))
    schema = SCHEMAS.get(raw_items(text)[0])
    if schema is not None and "L" in schema.fields:
        return with_param(text.strip(), "L", int(L))
    return text


def help_text() -> str:
    """Human-readable list of the target specs, for ``--help`` texts.

    Returns:
        str: one line per target with its keys, allowed values and defaults.
    """
    return describe("target", SCHEMAS)


__all__ = ["SCHEMAS", "help_text", "parse_target", "with_depth"]
