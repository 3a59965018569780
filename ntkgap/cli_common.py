"""What every CLI verb module shares: the verb registry and its decorator,
the one-line-error parser, output (``emit``), option converters and the
output-file check. ``ntkgap.cli`` builds the parser from ``VERBS``; the verb
modules (``ntkgap.cli``, ``ntkgap.cli_experiments``) register into it.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import tempfile

from ntkgap.errors import UsageError

VERBS = {}


class Parser(argparse.ArgumentParser):
    def error(self, message):  # argparse's own errors: one line, exit 2
        raise UsageError(message)

    def parse_known_args(self, args=None, namespace=None):
        # an unknown option is named before argparse reports the required
        # option it was meant to be ("--targt", not "required: --target")
        args = sys.argv[1:] if args is None else list(args)
        if not any(isinstance(a, argparse._SubParsersAction) for a in self._actions):
            _check_options(self, args)
        return super().parse_known_args(args, namespace)


def _check_options(parser, args):
    """Refuses the first ``--option`` no action of ``parser`` knows (nor
    abbreviates uniquely), naming the closest known one."""
    import difflib  # stdlib, cheap; only where options are checked

    known = [o for o in parser._option_string_actions if o.startswith("--")]
    for a in args:
        if a == "--":
            return
        if not a.startswith("--") or len(a) < 3:
            continue
        opt = a[: a.index("=")] if "=" in a else a  # --opt=value: an option, not a spec
        if opt in known or len([k for k in known if k.startswith(opt)]) == 1:
            continue
        close = difflib.get_close_matches(opt, known, n=1)
        hint = f" (did you mean {close[0]}?)" if close else ""
        raise UsageError(f"unknown option {opt}{hint}; allowed: {', '.join(sorted(known))}")


def verb(name, help, add_args):
    """Decorator registering ``fn`` as the CLI verb ``name`` in VERBS.

    Args:
        name: the verb, as typed after ``ntkgap``.
        help: its one-line help.
        add_args: a function adding the verb's options to its parser.

    Returns:
        a decorator that registers the function and returns it unchanged.
    """

    def deco(fn):
        VERBS[name] = (fn, help, add_args)
        return fn

    return deco


def emit(args, obj, text=None):
    """Prints a verb's result: one JSON object with ``--json``, else the text.

    Args:
        args: the parsed arguments (their ``json`` flag).
        obj: the JSON-ready result.
        text: the human-readable form (default: the indented JSON).

    Returns:
        None.
    """
    from ntkgap._infra.files import dumps  # lazy: it loads numpy; the CLI starts without it

    if args.json:
        sys.stdout.write(dumps(obj) + "\n")
    else:
        sys.stdout.write((text if text is not None else dumps(obj, indent=2)) + "\n")


def _converter(parse, kind, rule, ok, name):
    """An argparse type: ``parse`` the text, refused in one line when it
    fails or when the value breaks ``rule``.

    Args:
        parse: ``str -> value``, raising ValueError on text it cannot read.
        kind: what the text must be, for the message (``"a number"``).
        rule: what the value must be, for the message (``">= 1"``).
        ok: ``value -> bool``, whether the value keeps ``rule``.
        name: the converter's ``__name__`` (argparse names the type by it).

    Returns:
        the converter ``str -> value``.
    """

    def conv(text):
        try:
            v = parse(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not {kind}") from None
        if not ok(v):
            raise argparse.ArgumentTypeError(f"{text!r} must be {rule}")
        return v

    conv.__name__ = name
    return conv


def positive_float(option):
    """An argparse type: a number >= 0, refused in one line otherwise.

    Args:
        option: the option's name, for the message.

    Returns:
        the converter ``str -> float``.
    """
    return _converter(
        float, "a number", "a finite number >= 0", lambda v: math.isfinite(v) and v >= 0, option
    )


def int_at_least(lo):
    """An argparse type: an integer >= ``lo``, refused in one line otherwise.

    Args:
        lo: the smallest allowed value.

    Returns:
        the converter ``str -> int``.
    """
    return _converter(int, "an integer", f">= {lo}", lambda v: v >= lo, "integer")


def check_out(path, suffixes):
    """Checks an output path before any compute: its folder exists and is a
    folder, a file can be created there, and its suffix is allowed.

    Args:
        path: the output path.
        suffixes: the allowed suffixes.

    Returns:
        None (a one-line UsageError otherwise).
    """
    from ntkgap._infra.files import check_writable  # lazy: numpy, as in emit

    if not path.endswith(suffixes):
        raise UsageError(f"output file {path!r} must end in one of {', '.join(suffixes)}")
    folder = os.path.dirname(os.path.abspath(path))
    up = folder
    while not os.path.exists(up):
        up = os.path.dirname(up)
    if not os.path.isdir(up):
        raise UsageError(f"cannot write {path}: {up} is a file, not a folder")
    check_writable(path)
    try:
        with tempfile.NamedTemporaryFile(dir=folder, prefix=".ntkgap-probe-"):
            pass
    except FileNotFoundError:  # the folder exists, yet creating a file in it fails
        raise UsageError(
            f"cannot write {path}: {folder} does not accept new files (a virtual or "
            "read-only file system such as /proc or /sys); choose a folder on disk"
        ) from None
    except OSError as exc:
        raise UsageError(f"cannot write {path}: {folder}: {exc.strerror}") from None
