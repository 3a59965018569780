"""An architecture variant of a comparison (``ntkgap compare --arch-variant``).

A variant is a list of ``KEY=VALUE`` fields, or names of E8's modifications
(``NAMES``: ``residual``, ``layernorm``, ``b0``, ``b1``, ``width16``, ...),
applied to every architecture the comparison trains and kernelises: each
field goes to each architecture whose spec has that key (``b_std`` to the
tree and to fc; ``residual`` and ``norm`` to fc only, the tree keeps its
own), so each trained net still meets the NTK of its own, modified,
architecture on the same pools and test points. ``width`` and ``param``
(``mf``: muP / mean-field) are the trained nets' cell fields, no arch key;
the kernel side is the NTK of the same architecture. Which architecture took which
field is reported (:func:`applied`), never silently dropped; a field that no
compared architecture has is an error.
"""

from __future__ import annotations

from ntkgap.errors import UsageError
from ntkgap.nets.arch import parse_arch
from ntkgap.nets.train_config import BY_NAME as TRAIN_FIELDS
from ntkgap.specs import SpecError, comma_items, raw_items
from ntkgap.verdicts.comparison_checks import FC

#: E8's modifications by name (experiments/e8_modifications.toml's ``mod``)
NAMES = {
    "b0": "b_std=0",
    "b1": "b_std=1",
    "mf": "param=mf",
    "residual": "residual=1",
    "layernorm": "norm=layer",
    "width16": "width=16",
    "width32": "width=32",
    "width128": "width=128",
}
#: the keys a comparison sets itself, from the family (not a variant's)
FIXED = ("arity", "L")
#: the specs whose keys a field may name, each as a valid example
_PROBES = ("fc:depth=2", "tree:arity=2,L=2")


#: the trained nets' cell fields a variant may set
NET_FIELDS = ("width", "param")


def _allowed() -> list[str]:
    keys = list(NET_FIELDS)
    for probe in _PROBES:
        keys += [k for k in parse_arch(probe).spec.params if k not in keys and k not in FIXED]
    return keys


def parse_variant(text: str | None) -> dict:
    """The fields of ``--arch-variant TEXT``.

    Args:
        text: ``KEY=VALUE`` fields and/or names of ``NAMES``, comma-separated;
            None: no variant.

    Returns:
        ``{"fields": [(key, value), ...], "width": int | None, "param": str
        | None, "text": TEXT}`` ({} for None).

    Raises:
        UsageError: naming the bad field and the allowed keys and names.
    """
    if text is None:
        return {}
    allowed = _allowed()
    hint = f"allowed: {', '.join(allowed)} as KEY=VALUE, or {', '.join(NAMES)}"
    fields, width, param = [], None, None
    for part in comma_items(",".join(NAMES.get(p, p) for p in comma_items(text))):
        key, sep, value = (s.strip() for s in part.partition("="))
        if not sep or not key or not value or key not in allowed:
            raise UsageError(f"--arch-variant: {part!r} is not an architecture field ({hint})")
        if key == "width":
            if not value.isdigit() or int(value) < 1:
                raise UsageError(f"--arch-variant: width={value!r} must be an integer >= 1")
            width = int(value)
        elif key == "param":
            choices = TRAIN_FIELDS["param"].choices
            if value not in choices:
                raise UsageError(f"--arch-variant: param={value!r} is not allowed "
                                 f"(allowed: {', '.join(choices)})")  # fmt: skip
            param = value
        else:
            fields.append((key, value))
    if not fields and width is None and param is None:
        raise UsageError(f"--arch-variant {text!r}: give at least one field ({hint})")
    return {"fields": fields, "width": width, "param": param, "text": text}


def _apply(arch: str, variant: dict) -> tuple[str, list[str]]:
    name, items = raw_items(arch)
    own, taken = dict(items), []
    for key, value in variant.get("fields", []):
        try:
            parse_arch(f"{name}:" + ",".join(f"{k}={v}" for k, v in {**own, key: value}.items()))
        except SpecError as e:
            if f"unknown key '{key}'" in str(e):
                continue  # this architecture has no such key: it keeps its own
            raise UsageError(f"--arch-variant: {key}={value}: {e}") from None
        own[key] = value
        taken.append(f"{key}={value}")
    return f"{name}:" + ",".join(f"{k}={v}" for k, v in own.items()), taken


def apply(arch: str, variant: dict) -> str:
    """``arch`` with each of the variant's fields that its spec has.

    Args:
        arch: an architecture spec (``fc:depth=2``, ``tree:arity=2,L=3``).
        variant: :func:`parse_variant`'s dict ({}: none).

    Returns:
        the modified spec (``arch`` itself when no field applies).

    Raises:
        UsageError: a field's value that the spec refuses.

    Examples:
        >>> from ntkgap.verdicts import comparison_variant as cv
        >>> v = cv.parse_variant("residual,b_std=0")
        >>> cv.apply("fc:depth=2", v), cv.apply("tree:arity=2,L=3", v)
        ('fc:depth=2,residual=1,b_std=0', 'tree:arity=2,L=3,b_std=0')
    """
    return _apply(arch, variant)[0]


def applied(arch: str, variant: dict) -> list[str]:
    """The variant's fields (``KEY=VALUE``) that :func:`apply` gives ``arch``."""
    return _apply(arch, variant)[1]


def compared(tree: str | None, variant: dict) -> list[str]:
    """The architectures a comparison's member is compared on: its depth-aware
    one (if any), then fc, each with the variant's fields."""
    return [apply(a, variant) for a in ([FC] if tree is None else [tree, FC])]


def notes(trees, variant: dict) -> list[str]:
    """One line per (architecture kind, field) the variant does not apply to.

    Args:
        trees: the members' depth-aware architectures (None for none).
        variant: :func:`parse_variant`'s dict.

    Returns:
        list of str (empty when every field applies to every architecture).
    """
    out = []
    for arch in {a.partition(":")[0]: a for t in trees for a in compared(t, {})}.values():
        kind = arch.partition(":")[0]
        for key, value in variant.get("fields", []):
            if f"{key}={value}" not in applied(arch, {"fields": [(key, value)]}):
                out.append(f"--arch-variant {key}={value}: a {kind} spec has no key {key!r}, "
                           f"so the {kind} net and its NTK are compared unmodified")  # fmt: skip
    return out
