"""Guards of "one fact, one place" that can regress silently: spec strings
are split only by ntkgap.specs, and environment variables are read only by
ntkgap._infra.config."""

import pathlib
import re

from conftest import ROOT

SOURCES = [
    p
    for folder in ("ntkgap", "experiments")
    for p in sorted((pathlib.Path(ROOT) / folder).rglob("*.py"))
]
SPLITS = re.compile(r"""\.(split|partition|rpartition)\(\s*["'](:|,|=|depth=|d=)["']""")
# reads: .get(...), getenv(...), or a subscript not assigned to (writes that set up a
# child process or a default for the config module are allowed)
ENV_READS = re.compile(r"os\.environ\.get\(|os\.getenv\(|os\.environ\[[^]]*\](?!\s*=)")


def _offenders(allowed_file, bad):
    """file:line of every line of SOURCES (except ``allowed_file``) where ``bad(line)``."""
    return [
        f"{p.relative_to(ROOT)}:{i}"
        for p in SOURCES
        if p.name != allowed_file
        for i, line in enumerate(p.read_text().splitlines(), 1)
        if bad(line)
    ]


def test_spec_strings_are_split_only_by_the_spec_module():
    offenders = _offenders("specs.py", SPLITS.search)
    assert not offenders, offenders


def test_environment_is_read_only_by_the_config_module():
    offenders = _offenders("config.py", lambda line: ENV_READS.search(line) and "NTKGAP" in line)
    assert not offenders, offenders
