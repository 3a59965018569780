"""Every public module-level function in ntkgap has an Args/Returns docstring."""

import ast
import pathlib

PACKAGE = pathlib.Path(__file__).resolve().parent.parent / "ntkgap"


def _takes_arguments(node: ast.FunctionDef) -> bool:
    a = node.args
    return bool(a.posonlyargs or a.args or a.kwonlyargs or a.vararg or a.kwarg)


def _offenders(package: pathlib.Path = PACKAGE) -> list[str]:
    bad = []
    for path in sorted(package.rglob("*.py")):
        rel = path.relative_to(package)
        if "_infra" in rel.parts or rel == pathlib.Path("__init__.py"):
            continue
        for node in ast.parse(path.read_text()).body:
            if not isinstance(node, ast.FunctionDef) or node.name.startswith("_"):
                continue
            doc = ast.get_docstring(node) or ""
            missing = [s for s in ("Returns:",) if s not in doc]
            if _takes_arguments(node) and "Args:" not in doc:
                missing.append("Args:")
            if missing:
                bad.append(f"ntkgap/{rel}:{node.lineno}:{node.name} lacks {', '.join(missing)}")
    return bad


def test_public_functions_have_args_and_returns_sections():
    offenders = _offenders()
    assert not offenders, "docstrings without sections:\n" + "\n".join(offenders)


def test_check_catches_a_missing_section(tmp_path):
    (tmp_path / "mod.py").write_text(
        'def f(x):\n    """Summary.\n\n    Returns:\n      x.\n    """\n'
    )
    (tmp_path / "ok.py").write_text(
        'def g():\n    """Summary.\n\n    Returns:\n      1.\n    """\n'
    )
    assert _offenders(tmp_path) == ["ntkgap/mod.py:1:f lacks Args:"]
