"""The one parser for object spec strings such as ``parity:d=20,k=3``.

A spec is ``name`` or ``name:key=value,key=value``. Each kind of object
(target, arch, domain) keeps a table of schemas, one per name; the parser
checks every key against the schema (type, range, allowed values, required
or default) and then runs the schema's cross-field check. Any problem raises
:class:`~ntkgap.errors.SpecError` with one line naming the field, the bad
value and what is allowed, e.g. ``target 'parity': k=30 exceeds d=20``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ntkgap.errors import SpecError

_REQUIRED = object()
_NAME = re.compile(r"^[a-z][a-z0-9_-]*$")


@dataclass(frozen=True)
class Field:
    """One key of a schema: its type (int, float or str), default and range."""

    type: type
    default: Any = _REQUIRED
    choices: tuple | None = None
    min: float | None = None
    max: float | None = None
    doc: str = ""

    @property
    def required(self) -> bool:
        return self.default is _REQUIRED


@dataclass(frozen=True)
class Schema:
    """The keys a named object takes, and a check across keys."""

    fields: Mapping[str, Field]
    check: Callable[[dict], str | None] | None = None
    doc: str = ""


@dataclass(frozen=True)
class Spec:
    """A parsed, validated spec: its kind, name and full parameter set."""

    kind: str
    name: str
    params: Mapping[str, Any] = field(default_factory=dict)

    def __getitem__(self, key):
        return self.params[key]

    def __hash__(self):
        return hash((self.kind, str(self)))

    def __str__(self) -> str:
        if not self.params:
            return self.name
        body = ",".join(f"{k}={_fmt(v)}" for k, v in self.params.items())
        return f"{self.name}:{body}"


def _fmt(v) -> str:
    if isinstance(v, float):
        return repr(v)
    return str(v)


def _convert(kind, name, key, raw, fld: Field):
    where = f"{kind} '{name}': {key}={raw}"
    if fld.type is int:
        if not re.fullmatch(r"[+-]?\d+", raw):
            raise SpecError(f"{where} is not an integer")
        val = int(raw)
    elif fld.type is float:
        try:
            val = float(raw)
        except ValueError:
            raise SpecError(f"{where} is not a number") from None
        if not math.isfinite(val):
            raise SpecError(f"{where} is not a finite number")
    else:
        val = raw
        if not raw:
            raise SpecError(f"{kind} '{name}': {key} is empty")
    if fld.choices is not None and val not in fld.choices:
        allowed = ", ".join(map(str, fld.choices))
        raise SpecError(f"{where} is not allowed (allowed: {allowed})")
    if fld.min is not None and val < fld.min:
        raise SpecError(f"{where} must be >= {_fmt(fld.min)}")
    if fld.max is not None and val > fld.max:
        raise SpecError(f"{where} must be <= {_fmt(fld.max)}")
    return val


def parse(kind: str, text: str, schemas: Mapping[str, Schema]) -> Spec:
    """Parses ``text`` as a spec of ``kind`` against ``schemas``.

    Raises SpecError with a one-line message on any malformed input.

    Args:
        kind: what is parsed (e.g. "target", "arch"), for messages.
        text: the spec string, e.g. ``parity:d=20,k=3``.
        schemas: allowed spec names and their fields.

    Returns:
        Spec with ``kind``, the name and every field's converted value
        (defaults filled in).
    """
    if not isinstance(text, str) or not text.strip():
        raise SpecError(f"{kind}: empty spec (allowed: {', '.join(schemas)})")
    text = text.strip()
    name, sep, body = text.partition(":")
    if name not in schemas:
        # repr quotes (and escapes) an odd name itself: no second pair of quotes
        shown = f"'{name}'" if _NAME.match(name or "_") else repr(name)
        raise SpecError(f"{kind} {shown} is unknown (allowed: {', '.join(schemas)})")
    schema = schemas[name]
    if sep and not body:
        raise SpecError(f"{kind} '{name}': nothing after ':' (keys: {_keys(schema)})")
    given: dict[str, str] = {}
    for item in body.split(",") if body else []:
        key, eq, raw = item.partition("=")
        key, raw = key.strip(), raw.strip()
        if not eq or not key:
            raise SpecError(f"{kind} '{name}': '{item}' is not key=value (keys: {_keys(schema)})")
        if key not in schema.fields:
            raise SpecError(f"{kind} '{name}': unknown key '{key}' (allowed: {_keys(schema)})")
        if key in given:
            raise SpecError(f"{kind} '{name}': key '{key}' given twice")
        given[key] = raw
    params: dict[str, Any] = {}
    for key, fld in schema.fields.items():
        if key in given:
            params[key] = _convert(kind, name, key, given[key], fld)
        elif fld.required:
            raise SpecError(f"{kind} '{name}': missing required key '{key}'")
        else:
            params[key] = fld.default
    if schema.check is not None:
        problem = schema.check(params)
        if problem:
            raise SpecError(f"{kind} '{name}': {problem}")
    return Spec(kind, name, params)


def _keys(schema: Schema) -> str:
    return ", ".join(schema.fields) or "none"


def describe(kind: str, schemas: Mapping[str, Schema]) -> str:
    """Human-readable list of the specs of a kind, for ``--help`` texts.

    Args:
        kind: what is described (e.g. "target").
        schemas: the spec names and their fields.

    Returns:
        str: a header line, then one line per name with its keys, allowed
        values and defaults.
    """
    lines = []
    for name, schema in schemas.items():
        keys = []
        for key, fld in schema.fields.items():
            if fld.choices:
                val = "|".join(map(str, fld.choices))
            else:
                val = fld.type.__name__
            keys.append(f"{key}={val}" + ("" if fld.required else f" [{_fmt(fld.default)}]"))
        lines.append(f"  {name}:{','.join(keys)}" + (f"  {schema.doc}" if schema.doc else ""))
    return f"{kind} specs:\n" + "\n".join(lines)


def comma_items(text: str) -> list[str]:
    """The non-empty, stripped pieces of a comma-separated list (``a, b,c``).

    Args:
        text: the list as written.

    Returns:
        list of str, in the order given.
    """
    return [t.strip() for t in str(text).split(",") if t.strip()]


def parse_int_list(option: str, text: str, *, min_value: int = 1) -> list[int]:
    """Parses a comma-separated list of integers such as ``100,200,400``.

    Args:
        option: the option name, for messages.
        text: the list as written.
        min_value: the smallest allowed value.

    Returns:
        list of ints, in the order given.
    """
    items = comma_items(text)
    if not items:
        raise SpecError(f"option {option}: empty list (give comma-separated integers)")
    out = []
    for t in items:
        if not re.fullmatch(r"[+-]?\d+", t.replace("_", "")):
            raise SpecError(f"option {option}: '{t}' is not an integer")
        v = int(t.replace("_", ""))
        if v < min_value:
            raise SpecError(f"option {option}: {v} must be >= {min_value}")
        out.append(v)
    return out


def raw_items(text: str) -> tuple[str, list[tuple[str, str]]]:
    """A spec's name and its ``key=value`` pairs as written (unvalidated).

    For display and rewriting only; values are read through :func:`parse`.

    Args:
        text: the spec string.

    Returns:
        (name, items): the name and a list of (key, raw value) string pairs.
    """
    name, _, body = str(text).strip().partition(":")
    items = []
    for item in body.split(",") if body else []:
        key, _, raw = item.partition("=")
        items.append((key.strip(), raw.strip()))
    return name, items


def with_param(text: str, key: str, value) -> str:
    """``text`` with ``key=value`` appended when it does not give ``key``.

    Args:
        text: the spec string.
        key: the key to add.
        value: its value (formatted with str).

    Returns:
        str: the spec string, unchanged if it already gives ``key``.
    """
    name, items = raw_items(text)
    if any(k == key for k, _ in items):
        return text
    return f"{name}:" + ",".join([f"{k}={v}" for k, v in items] + [f"{key}={value}"])


def label(text: str, drop=()) -> str:
    """A short display label: the spec as written without the keys in ``drop``.

    Args:
        text: the spec string.
        drop: keys to leave out.

    Returns:
        str: ``name:key=value,...`` (just the name when no key is left).
    """
    name, items = raw_items(text)
    keep = [f"{k}={v}" for k, v in items if k not in drop]
    return name + (":" + ",".join(keep) if keep else "")
