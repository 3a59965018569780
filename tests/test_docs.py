"""The documentation: the public API's docstring examples run (doctest), the
API reference docs/api.md is the one docs/make_api.py generates, the README
is short and states the headline verdict with its number, every section or
file that README, Makefile and setup.cfg cite exists, and no tracked file
outside CHANGELOG.md speaks of an issue tracker."""

import doctest
import importlib
import os
import re
import subprocess
import sys

import pytest

import ntkgap

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
README = os.path.join(ROOT, "README.md")

# the modules whose docstring examples run here (the public API and its results)
DOCTEST_MODULES = (
    "ntkgap.api",
    "ntkgap.results",
    "ntkgap.verdicts.proportions",
    "ntkgap.verdicts.comparison_variant",
)


def _doctests(module_name):
    module = importlib.import_module(module_name)
    finder = doctest.DocTestFinder(exclude_empty=True)
    return [t for t in finder.find(module, globs={"ntkgap": ntkgap}) if t.examples]


def _tracked():
    out = subprocess.run(
        ["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout
    return [p for p in out.splitlines() if os.path.isfile(os.path.join(ROOT, p))]


def _read(rel):
    with open(os.path.join(ROOT, rel), encoding="utf-8", errors="replace") as fh:
        return fh.read()


def _anchor(heading):
    """GitHub's anchor of a Markdown heading: lower case, punctuation dropped,
    spaces to hyphens."""
    text = re.sub(r"[`*_]", "", heading.strip().lower())
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def _headings(md):
    return {_anchor(m.group(1)) for m in re.finditer(r"^#{1,6} +(.+?) *$", md, re.M)}


@pytest.mark.fast
@pytest.mark.parametrize("module_name", DOCTEST_MODULES)
def test_docstring_examples_run(module_name):
    """Every ``>>>`` example in the public API's docstrings gives the output
    its docstring shows (``python -m pytest tests/test_docs.py``)."""
    tests = _doctests(module_name)
    assert tests, f"{module_name} has no docstring examples"
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    for t in tests:
        runner.run(t)
    result = runner.summarize(verbose=False)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples failed"


@pytest.mark.fast
def test_at_least_eight_public_functions_have_examples():
    """At least 8 of the names in ``ntkgap.__all__`` carry a runnable example."""
    with_examples = [
        name
        for name in ntkgap.__all__
        if ">>>" in (getattr(getattr(ntkgap, name), "__doc__", None) or "")
    ]
    assert len(with_examples) >= 8, with_examples


@pytest.mark.fast
def test_api_reference_is_up_to_date():
    """docs/api.md is what ``python docs/make_api.py`` writes from the
    docstrings now (regenerate it after changing a public docstring)."""
    out = subprocess.run(
        [sys.executable, os.path.join(ROOT, "docs", "make_api.py"), "--stdout"],
        cwd=ROOT, capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    assert out == _read("docs/api.md"), "docs/api.md is stale: run python docs/make_api.py"


@pytest.mark.fast
def test_readme_is_short_and_states_the_headline_first():
    """README.md is at most 12,500 bytes, holds no commit hash or UTC time, and
    its first 40 lines give the headline claim's verdict with its number."""
    text = _read("README.md")
    assert len(text.encode()) <= 12_500, len(text.encode())
    assert not re.search(r"\b(?=[0-9a-f]*[a-f])(?=[0-9a-f]*[0-9])[0-9a-f]{7,40}\b", text)
    assert "UTC" not in text
    head = "\n".join(text.splitlines()[:40])
    assert re.search(r"E4-Q1-tree-tanh\b.*\*?supported\*?.*\d\.\d\d", head), head


@pytest.mark.fast
def test_readme_links_resolve():
    """Every ``#anchor`` and relative file link in README.md (and the docs it
    links) points at a heading or a file that exists."""
    for rel in ("README.md", "CONTRIBUTING.md", "docs/results.md"):
        md = _read(rel)
        base = os.path.dirname(os.path.join(ROOT, rel))
        for target in re.findall(r"\]\(([^)\s]+)\)", md):
            if re.match(r"[a-z]+:", target):
                continue  # an external address
            path, _, anchor = target.partition("#")
            if path.startswith("figures/"):
                continue  # drawn by make figures, not tracked
            full = os.path.normpath(os.path.join(base, path)) if path else os.path.join(ROOT, rel)
            assert os.path.exists(full), f"{rel}: link to missing {target}"
            if anchor and full.endswith(".md"):
                with open(full, encoding="utf-8") as fh:
                    assert anchor in _headings(fh.read()), f"{rel}: no heading for #{anchor}"


@pytest.mark.fast
def test_cited_readme_sections_exist():
    """The README sections that Makefile, setup.cfg and the docs cite by name
    (``README, "X"``) are headings of README.md."""
    heads = {m.strip().lower() for m in re.findall(r"^#+ +(.+)$", _read("README.md"), re.M)}
    for rel in ("Makefile", "setup.cfg", "CONTRIBUTING.md", "docs/results.md", "README.md"):
        for name in re.findall(r'README,? "([^"]+)"', _read(rel)):
            assert name.strip().lower() in heads, f'{rel} cites README "{name}"'


ISSUE_WORDS = re.compile(
    r"issue ?#|\bthe issue\b|\bissues? [0-9]+\b|(?<![\w&/])#[0-9]{2,3}\b(?! *[0-9a-f])",
    re.IGNORECASE,
)


@pytest.mark.fast
def test_no_tracked_file_names_an_issue():
    """Code, configs, tests and docs speak of the project only: no issue
    number or tracker wording outside CHANGELOG.md."""
    offenders = []
    for rel in _tracked():
        if rel == "CHANGELOG.md" or rel.endswith((".png", ".pdf", ".npy", ".lock")):
            continue
        for i, line in enumerate(_read(rel).splitlines(), 1):
            if ISSUE_WORDS.search(line):
                offenders.append(f"{rel}:{i}: {line.strip()[:80]}")
    assert not offenders, "\n".join(offenders)
