"""The dependency rule, checked on the source: who may import whom, and no cycles.

Top level: pipelines -> {db, models, reports}, reports -> models; only db imports SQLAlchemy
and Alembic, only pipelines/flows imports Prefect, models does no I/O through them. Inside
pipelines/ the rooms depend downwards (cli and flows on jobs; jobs on fetch, delivery, briefing,
ledger and inputs; fetch and delivery on the retry helper, never on each other; ledger on
inputs; inputs on models), so a newcomer can read them bottom-up.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("pipelines", "db", "models", "reports")
IN_PROJECT = {"db", "models", "reports", "pipelines.cli", "pipelines.flows", "pipelines.jobs",
              "pipelines.fetch", "pipelines.delivery", "pipelines.inputs", "pipelines.ledger",
              "pipelines.briefing", "pipelines.settings", "pipelines.retry"}
ALLOWED = {
    "models": set(),
    "db": set(),
    "reports": {"models"},
    "pipelines.inputs": {"models"},
    "pipelines.settings": {"pipelines.inputs"},
    "pipelines.retry": set(),
    "pipelines.ledger": {"db", "models", "pipelines.inputs", "pipelines.settings"},
    "pipelines.briefing": {"db", "models", "reports", "pipelines.inputs", "pipelines.ledger",
                           "pipelines.settings"},
    # Fetching and delivering talk to the outside world; each retries through pipelines.retry.
    "pipelines.fetch": {"db", "pipelines.inputs", "pipelines.settings", "pipelines.retry"},
    "pipelines.delivery": {"db", "pipelines.ledger", "pipelines.settings", "pipelines.retry"},
    "pipelines.jobs": {"db", "models", "reports", "pipelines.inputs", "pipelines.ledger",
                       "pipelines.briefing", "pipelines.fetch", "pipelines.delivery",
                       "pipelines.settings"},
    "pipelines.flows": {"db", "models", "pipelines.inputs", "pipelines.ledger",
                        "pipelines.briefing", "pipelines.jobs", "pipelines.fetch",
                        "pipelines.delivery", "pipelines.settings"},
    "pipelines.cli": {"db", "models", "pipelines.inputs", "pipelines.ledger",
                      "pipelines.briefing", "pipelines.jobs", "pipelines.fetch",
                      "pipelines.delivery", "pipelines.flows", "pipelines.settings"},
}
THIRD_PARTY_ONLY_IN = {"sqlalchemy": {"db"}, "alembic": {"db"}, "prefect": {"pipelines.flows"}}


def modules() -> dict[str, set[str]]:
    """module name -> every module it imports (at any depth of the file, lazily or not)."""
    found: dict[str, set[str]] = {}
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            if "versions" in path.parts:  # migrations are Alembic's own scripts
                continue
            name = ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(
                ".__init__")
            imported: set[str] = set()
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Import):
                    imported |= {alias.name for alias in node.names}
                elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                    imported |= {node.module} | {f"{node.module}.{a.name}" for a in node.names}
            found[name] = imported
    return found


def room(module: str) -> str:
    parts = module.split(".")
    return ".".join(parts[:2]) if parts[0] == "pipelines" else parts[0]


MODULES = modules()


@pytest.mark.parametrize("module", sorted(MODULES))
def test_each_module_imports_only_what_its_room_may(module):
    own = room(module)
    for imported in MODULES[module]:
        target = room(imported)
        if target in IN_PROJECT and target != own:
            assert target in ALLOWED[own], f"{module} imports {imported}"
        top = imported.split(".")[0]
        if top in THIRD_PARTY_ONLY_IN:
            assert own in THIRD_PARTY_ONLY_IN[top], f"{module} imports {imported}"


def test_the_import_graph_has_no_cycle():
    # A submodule importing its own package (models.trends.changes -> models.trends, whose
    # __init__ re-exports it) is how packages are written, not a cycle between modules.
    graph = {m: {i for i in deps if i in MODULES and i != m and not m.startswith(f"{i}.")}
             for m, deps in MODULES.items()}
    done: set[str] = set()

    def visit(node: str, path: list[str]) -> None:
        if node in path:
            raise AssertionError(" -> ".join([*path[path.index(node):], node]))
        if node in done:
            return
        for nxt in sorted(graph[node]):
            visit(nxt, [*path, node])
        done.add(node)

    for module in sorted(graph):
        visit(module, [])
