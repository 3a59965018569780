"""The target zoo: compositional functions on the circle and the hypercube.

``parse_target("tree:d=24,L=3,arity=2,node=parity")`` validates the spec and
returns a target object. Every target has a ``domain``, is callable on that
domain's points, and reports ``architecture()`` (its architectural
complexity: constituents, fan-in, depth, support). Spectra live in
:mod:`ntkgap.fourier` (circle) and :mod:`ntkgap.walsh` (hypercube).
"""

from __future__ import annotations

from ntkgap.specs import describe, parse
from ntkgap.targets import boolean, circle

SCHEMAS = {**circle.SCHEMAS, **boolean.SCHEMAS}
_BUILDERS = {**circle.BUILDERS, **boolean.BUILDERS}


def parse_spec(text: str):
    """The validated :class:`~ntkgap.specs.Spec` of a target, without
    building the target (figures and claims read keys such as ``L``)."""
    return parse("target", text, SCHEMAS)


def parse_target(text: str):
    """Parse and validate a target spec; raises SpecError on bad input."""
    spec = parse("target", text, SCHEMAS)
    return _BUILDERS[spec.name](spec)


def help_text() -> str:
    return describe("target", SCHEMAS)
