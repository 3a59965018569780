"""Writes docs/api.md, the reference of ntkgap's public API, from the
docstrings of the names in ``ntkgap.__all__`` (``python docs/make_api.py``;
``--stdout`` prints it instead). tests/test_docs.py checks the file is up to
date. inspect gives the signatures; the docstrings are copied as written
(their Args / Returns / References / Examples sections are plain text that
Markdown shows in a code block)."""

import inspect
import os
import sys

import ntkgap

HERE = os.path.dirname(os.path.abspath(__file__))

HEADER = """# API reference

Generated from the docstrings by `python docs/make_api.py`; do not edit by hand. Every name
below is importable from `ntkgap` (`ntkgap.__all__`); `import ntkgap` is cheap, JAX loads on the
first call that needs it. Spec strings (`"tree:d=8,L=2,arity=2,node=and"`, `"fc:depth=2"`,
`"hypercube:d=6"`) and parsed objects are accepted alike. The `>>>` examples run as doctests in
`make test` (`tests/test_docs.py`).

"""


def _entry(name):
    obj = getattr(ntkgap, name)
    kind = "class" if inspect.isclass(obj) else "function"
    try:
        sig = str(inspect.signature(obj))
    except (TypeError, ValueError):
        sig = "(...)"
    doc = inspect.cleandoc(obj.__doc__ or "(no docstring)")
    first, _, rest = doc.partition("\n")
    head = f"## `{name}`\n\n```python\n{kind} ntkgap.{name}{sig}\n```\n\n"
    body = f"{first}\n" + (f"\n```text\n{rest.strip()}\n```\n" if rest.strip() else "")
    return head + body


def render():
    """The whole reference as one Markdown string.

    Returns:
        str: a header, a table of contents and one section per public name.
    """
    names = sorted(ntkgap.__all__, key=str.lower)
    toc = " · ".join(f"[`{n}`](#{n.lower()})" for n in names)
    return HEADER + toc + "\n\n" + "\n".join(_entry(n) for n in names)


def main(argv):
    """Writes docs/api.md (or prints it with ``--stdout``).

    Args:
        argv: the command line's arguments after the script name.

    Returns:
        0.
    """
    text = render()
    if "--stdout" in argv:
        sys.stdout.write(text)
    else:
        with open(os.path.join(HERE, "api.md"), "w", encoding="utf-8") as fh:
            fh.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
