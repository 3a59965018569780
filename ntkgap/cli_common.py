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
    from ntkgap._infra.files import dumps

    if args.json:
        sys.stdout.write(dumps(obj) + "\n")
    else:
        sys.stdout.write((text if text is not None else dumps(obj, indent=2)) + "\n")


def positive_float(option):
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
    """Refuse an output file that cannot be written, before any compute: a
    wrong suffix, a regular file where a folder should be, a folder in which
    no file can be created (probed by creating and removing one)."""
    import tempfile

    from ntkgap._infra.files import check_writable

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
