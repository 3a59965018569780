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


def positive_float(option):
    """An argparse type: a number >= 0, refused in one line otherwise.

    Args:
        option: the option's name, for the message.

    Returns:
        the converter ``str -> float``.
    """

    def conv(text):
        try:
            v = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
        if not math.isfinite(v) or v < 0:
            raise argparse.ArgumentTypeError(f"{text!r} must be a finite number >= 0")
        return v

    conv.__name__ = option
    return conv


def int_at_least(lo):
    """An argparse type: an integer >= ``lo``, refused in one line otherwise.

    Args:
        lo: the smallest allowed value.

    Returns:
        the converter ``str -> int``.
    """

    def conv(text):
        try:
            v = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
        if v < lo:
            raise argparse.ArgumentTypeError(f"{v} must be >= {lo}")
        return v

    conv.__name__ = "integer"
    return conv


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
    except OSError as exc:
        raise UsageError(f"cannot write {path}: {folder}: {exc.strerror}") from None
