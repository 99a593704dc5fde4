"""Recompute every scenario of one kind for a dataset version, one savepoint per scenario.

Shared by the C2C and TCO jobs: a scenario that fails (bad file, missing figure) is reported
and leaves nothing behind; the others are stored. A result whose inputs had not changed since
an earlier one is reused (copied, naming the original) instead of recomputed.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, TypeVar

from db import outputs, queries, results
from db.engine import Engine, Session, writing
from db.schema import DatasetVersion, ModelResult
from pipelines.inputs.scenarios import ScenarioError, canonical_json
from pipelines.ledger.cluster_specs import MissingSpec

Outcome = Literal["computed", "reused", "unchanged"]
S = TypeVar("S")


class MissingInput(LookupError):
    """A figure a scenario asks the ledger for that the ledger does not hold."""


# What makes one scenario fail without stopping the others.
SCENARIO_ERRORS = (ScenarioError, MissingSpec, MissingInput, ValueError)


@dataclass
class RecomputeReport:
    dataset_version: int
    computed: list[str] = field(default_factory=list)
    reused: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)  # already stored for this version
    failed: dict[str, str] = field(default_factory=dict)
    # New or changed scenarios not stored because the version already has a briefing: a
    # briefed version stays as its briefing read it; they are computed with the next version.
    deferred: list[str] = field(default_factory=list)


def recompute_each(target: Engine | Session, paths: list[Path], dataset_version: int, *,
                   load: Callable[[Path], S],
                   compute: Callable[[Session, S, DatasetVersion], Outcome],
                   name_of: Callable[[S], str],
                   lock_timeout_seconds: float) -> RecomputeReport:
    """Load and compute each scenario in one transaction that holds the ledger's write lock
    (writers never interleave; `target` may be a caller's open write session); each scenario
    in its own savepoint."""
    report = RecomputeReport(dataset_version)
    with writing(target, lock_timeout_seconds) as session:
        version = queries.dataset_version(session, dataset_version)
        briefed = outputs.is_briefed(session, dataset_version)
        for path in paths:
            name = path.stem
            try:
                scenario = load(path)
                name = name_of(scenario)
                with session.begin_nested() as savepoint:  # a failure leaves nothing behind
                    outcome = compute(session, scenario, version)
                    if briefed and outcome != "unchanged":
                        savepoint.rollback()  # issue 43, case 6: a briefed version is fixed
                        report.deferred.append(name)
                        continue
                getattr(report, outcome).append(name)
            except SCENARIO_ERRORS as exc:
                report.failed[name] = str(exc)
    return report


def stored_answer(session: Session, table: type[ModelResult], name: str,
                  content_sha256: str, dataset_version: int) -> dict[str, Any] | None:
    """The version's stored result of this very scenario definition (what the briefing and
    the warehouse show), or None: a definition the graph did not compute for the version."""
    found = results.stored_result(session, table, name, dataset_version)
    if found is None or found.content_sha256 != content_sha256:
        return None
    return {**found.result, "dataset_version": dataset_version}  # a reuse names the original


def inputs_digest(definition: dict[str, Any], figures: Any, code_version: str) -> str:
    """What a result depends on: the scenario, every figure it read, the code."""
    payload = {"scenario": definition, "code": code_version, "specs": figures}
    return hashlib.sha256(canonical_json(payload).encode()).hexdigest()
