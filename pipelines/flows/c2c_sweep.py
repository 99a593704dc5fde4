"""The `c2c-sweep` flow: one scenario's layout search cut into shares, each a Prefect task.

The shares run concurrently on the flow's task runner and are merged into exactly the result
of one unsplit search (ties rank by position in the enumeration), so a large search can be
spread over more cores, or over task workers, without changing its answer.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from prefect import flow, task
from prefect.cache_policies import NO_CACHE

from models.c2c.sweep import SweepResult
from pipelines.inputs.scenarios import load_scenario
from pipelines.jobs import c2c
from pipelines.ledger.view import scenario_specs
from pipelines.settings import Settings


@task(name="sweep-share", cache_policy=NO_CACHE)
def sweep_share(share: Callable[[int], SweepResult], part: int) -> SweepResult:
    return share(part)


def as_tasks(share: Callable[[int], SweepResult], parts: Sequence[int]) -> list[SweepResult]:
    """Run each share as a task and wait for all of them."""
    futures = [sweep_share.with_options(task_run_name=f"sweep-share {p + 1}/{len(parts)}")
               .submit(share, p) for p in parts]
    return [f.result() for f in futures]


@flow(name="c2c-sweep", flow_run_name="c2c-sweep {scenario_file}")
def c2c_sweep(scenario_file: Path, parts: int = 4, top: int = 5,
              home: Path | None = None) -> dict[str, Any]:
    """Search every layout of `scenario_file` on its cluster.gpus GPUs in `parts` shares; the
    `top` fastest that fit in memory, with the figures read from the ledger. A search larger
    than the sweep_max_layouts setting is refused (a ScenarioError saying how to narrow it)."""
    if parts < 1:
        raise ValueError(f"parts must be at least 1, not {parts}")
    limits = (Settings(home=home) if home is not None else Settings()).input_limits
    scenario = load_scenario(scenario_file, limits)
    hw, used, version = scenario_specs(scenario, home)
    return c2c.sweep_scenario(scenario, (hw, used), top, version, parts=parts,
                              map_shares=as_tasks, max_layouts=limits.sweep_max_layouts)
