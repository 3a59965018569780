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
    seen: dict[str, str] = {}
    _, items = raw_items("variant:" + ",".join(NAMES.get(p, p) for p in comma_items(text)))
    for key, value in items:
        part = f"{key}={value}" if value else key
        if key not in allowed:
            raise UsageError(f"--arch-variant: {part!r} is not an architecture field ({hint})")
        if not value:
            raise UsageError(f"--arch-variant: {key}= needs a value")
        if key in seen:
            raise UsageError(f"--arch-variant: {key} given twice ({key}={seen[key]}, {part}); "
                             "give each field once")  # fmt: skip
        seen[key] = value
    if not seen:
        raise UsageError(f"--arch-variant {text!r}: give at least one field ({hint})")
    width, param = seen.pop("width", None), seen.pop("param", None)
    if width is not None and (not width.isdigit() or int(width) < 1):
        raise UsageError(f"--arch-variant: width={width!r} must be an integer >= 1")
    choices = TRAIN_FIELDS["param"].choices
    if param is not None and param not in choices:
        raise UsageError(
            f"--arch-variant: param={param!r} is not allowed (allowed: {', '.join(choices)})"
        )
    return {"fields": list(seen.items()), "width": None if width is None else int(width),
            "param": param, "text": text}  # fmt: skip


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
    """The variant's fields that :func:`apply` gives ``arch``.

    Args:
        arch: an architecture spec.
        variant: :func:`parse_variant`'s dict.

    Returns:
        list of ``KEY=VALUE`` strings, in the variant's order.
    """
    return _apply(arch, variant)[1]


def compared(tree: str | None, variant: dict) -> list[str]:
    """The architectures a comparison's member is compared on.

    Args:
        tree: the member's depth-aware architecture, or None.
        variant: :func:`parse_variant`'s dict ({}: none).

    Returns:
        the depth-aware architecture (if any), then fc, each with the variant's fields.
    """
    return [apply(a, variant) for a in ([FC] if tree is None else [tree, FC])]


def notes(trees, variant: dict) -> list[str]:
    """One line per (architecture kind, field) the variant does not apply to,
    and, for a variant, what the net's prediction (``--predict``) can see.

    Args:
        trees: the members' depth-aware architectures (None for none).
        variant: :func:`parse_variant`'s dict.

    Returns:
        list of str (empty for no variant).

    Raises:
        UsageError: a field that no compared architecture has.
    """
    if not variant:
        return []
    archs = {raw_items(a)[0]: a for t in trees for a in compared(t, {})}
    out = []
    for key, value in variant["fields"]:
        lacking = [k for k, a in archs.items() if not applied(a, {"fields": [(key, value)]})]
        if len(lacking) == len(archs):
            raise UsageError(f"--arch-variant {key}={value}: no compared architecture "
                             f"({', '.join(archs)}) has the key {key!r}")  # fmt: skip
        out += [f"--arch-variant {key}={value}: a {kind} spec has no key {key!r}, so the "
                f"{kind} net and its NTK are compared unmodified" for kind in lacking]  # fmt: skip
    out.append("--arch-variant: with --predict, the net's n* comes from the law n* = c C^p, "
               "fitted on unmodified nets (the same for every variant); the kernel's from "
               "the theory of the modified NTK")  # fmt: skip
    return out
