"""bench/ and tests/ share code one way: bench scripts import tests.support as a normal module
(run from the repository root as `python -m bench.<name>`), and nothing under tests/ imports
bench/; a bench script that imports the tests' code does not reach it by editing sys.path."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def imported(path: Path) -> set[str]:
    """Every module a file imports, at any depth."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
    return found


def test_no_test_module_imports_bench():
    offenders = {str(path.relative_to(ROOT)): sorted(m for m in imported(path)
                                                      if m.split(".")[0] == "bench")
                 for path in (ROOT / "tests").rglob("*.py")}
    assert {p: m for p, m in offenders.items() if m} == {}


def test_bench_reaches_the_tests_code_only_through_tests_support():
    users = 0
    for path in (ROOT / "bench").glob("*.py"):
        from_tests = {m for m in imported(path) if m.split(".")[0] == "tests"}
        assert all(m.startswith("tests.support") for m in from_tests), (path.name, from_tests)
        if from_tests:
            users += 1
            assert "sys.path" not in path.read_text(encoding="utf-8"), path.name
    assert users >= 4   # briefing_bench, c2c_fit, serving_fit, fault_trials
