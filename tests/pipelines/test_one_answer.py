"""One question, one answer: page 1 of the briefing, `specledger tco --json` and
`specledger serving --json` read the same stored records of a dataset version.

A weekly run on the shipped packs and scenarios, then the CLI on every shipped TCO comparison
and serving scenario against the same home: each figure the CLI prints is the figure page 1
prints (as page 1 formats it), and the CLI names the version the briefing was made from.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

from pipelines.cli.app import app
from pipelines.inputs.scenarios import scenario_paths
from pipelines.inputs.tco_scenarios import load_tco_scenario
from reports.formatting import format_percent, format_usd
from tests.pipelines.conftest import SHIPPED_SCENARIOS
from tests.support.shipped_week import shipped_week


@pytest.fixture(scope="module")
def weekly(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, int, str]:
    """A home after a weekly run (a copy of the run's shared shipped week,
    tests/support/shipped_week.py): its dataset version and page 1 of its briefing as text."""
    shared = shipped_week(tmp_path_factory)
    settings = shared.copied_to(tmp_path_factory.mktemp("one-answer") / "home")
    briefing = shared.rendered_in(settings)
    page_one = subprocess.run(["pdftotext", "-layout", "-f", "1", "-l", "1",
                               str(briefing.path), "-"], check=True, capture_output=True,
                              text=True).stdout
    return settings.home, shared.version, " ".join(page_one.split())


def cli_json(home: Path, *args: str) -> dict:
    result = CliRunner().invoke(app, [*args, "--json", "--home", str(home)])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def comparisons() -> list[Path]:
    """The shipped TCO comparisons of modelled workloads: the ones page 1 decides (the
    illustrative ones, with job times given, are priced in the TCO section)."""
    return [p for p in scenario_paths(SHIPPED_SCENARIOS, "tco")
            if (s := load_tco_scenario(p)).mode == "comparison" and s.c2c_links]


@pytest.mark.parametrize("path", comparisons(), ids=lambda p: p.stem)
def test_page_one_prints_what_tco_json_says(weekly, path):
    home, version, page_one = weekly
    result = cli_json(home, "tco", str(path))
    assert result["dataset_version"] == version
    verdict = result["verdict"]
    if verdict["saving"] is not None:
        margin = (f"{format_percent(verdict['saving'])} cheaper per job than "
                  f"{verdict['dearer']} at each option's best layout, P10–P90 "
                  f"{format_percent(verdict['saving_p10'], signed=True)} to "
                  f"{format_percent(verdict['saving_p90'], signed=True)}")
        # "Buy nvl72: 7.8 % ...", "(nvl72 7.8 % ..." or "own-nvl72 is 84 % ...": the same figures
        # (compared without spaces: a line may break anywhere in it, "P10–" then "P90")
        found = rf"{re.escape(verdict['cheaper'])}(:|is)?{re.escape(margin.replace(' ', ''))}"
        assert re.search(found, re.sub(r"\s", "", page_one)), margin
    for option in result["options"]:
        assert format_usd(option["usd_per_gpu_hour"]) in page_one
        if option["job_cost_usd"] is not None:
            assert format_usd(option["job_cost_usd"]) in page_one
    for market in (result.get("market") or {}).values():
        rented = market.get("on_demand_job_cost_usd")
        if rented is not None:  # the rent-vs-buy figure: computed once, by the TCO stage
            assert format_usd(rented) in page_one


@pytest.mark.parametrize("path", scenario_paths(SHIPPED_SCENARIOS, "serving"),
                         ids=lambda p: p.stem)
def test_page_one_prints_what_serving_json_says(weekly, path):
    home, version, page_one = weekly
    result = cli_json(home, "serving", str(path))
    assert result["dataset_version"] == version
    if result["cheaper_option"] is None:
        return
    options = {o["name"]: o for o in result["options"]}

    def named(name: str) -> str:   # as page 1 names an option: with its layout
        layout = options[name]["layout"]
        return f"{name} ({layout['label']}, {layout['note']})"

    cheaper = result["cheaper_option"]
    cost = options[cheaper]["at_target"]["usd_per_mtok_out"]
    assert f"{named(cheaper)} costs {format_usd(cost)} per million output tokens" in page_one
    assert (f"{format_percent(result['margin'])} less than {named(result['dearer_option'])}"
            in page_one)


def test_a_draft_scenario_is_priced_from_the_versions_stored_records(weekly, tmp_path):
    # Not a scenario the graph computed (another name): the CLI prices it from the same
    # version's stored C2C estimates and price index, and says which version.
    home, version, _ = weekly
    [shipped] = [p for p in comparisons() if p.stem == "tco-1t-dense-nvl72-vs-hgx-ndr"]
    text = shipped.read_text(encoding="utf-8")
    draft = tmp_path / "draft.yaml"
    draft.write_text(text.replace("name: tco-1t-dense-nvl72-vs-hgx-ndr", "name: my-draft"),
                     encoding="utf-8")
    stored, drafted = cli_json(home, "tco", str(shipped)), cli_json(home, "tco", str(draft))
    assert drafted["scenario"] == "my-draft" and drafted["dataset_version"] == version
    assert drafted["break_even_speedup"] == pytest.approx(stored["break_even_speedup"])
    assert drafted["speedup"] == pytest.approx(stored["speedup"])


def test_the_warehouse_stores_each_verdict_as_page_one_states_it(weekly):
    """Issue 39: `cheaper_option` is the cheaper at the estimate; `verdict` is what page 1
    says, "too close to call" included (a procurement script reads that column)."""
    import duckdb

    from models.tco.decision import NO_VERDICT, TOO_CLOSE
    from pipelines.jobs import steps
    from pipelines.settings import Settings
    from tests.support.shipped_week import DAY, Clock

    home, version, page_one = weekly
    published = steps.publish(Settings(home=home), version, as_of=DAY, built_at=Clock()())
    con = duckdb.connect(str(published.path), read_only=True)
    try:
        serving = con.execute("select scenario, cheaper_option, verdict from serving_result "
                              "where dataset_version_id = ?", [version]).fetchall()
        tco = dict(con.execute("select scenario, verdict from tco_result where "
                               "dataset_version_id = ? and mode = 'comparison'",
                               [version]).fetchall())
    finally:
        con.close()
    assert serving and tco
    for scenario, cheaper, verdict in serving:
        answer = cli_json(home, "serving", str(SHIPPED_SCENARIOS / f"{scenario}.yaml"))
        assert verdict == answer["call"]
        if cheaper is None:
            continue
        layout = next(o["layout"] for o in answer["options"] if o["name"] == cheaper)
        said = f"Too close to call: {cheaper} ({layout['label']}, {layout['note']}) costs"
        assert (said in page_one) == (verdict == TOO_CLOSE), said
        # A family short of the calibration targets: no verdict, said in its one number.
        said = f"No verdict: {cheaper} ({layout['label']}, {layout['note']}) costs"
        assert (said in page_one) == (verdict == NO_VERDICT), said
        assert (verdict == NO_VERDICT) == bool(answer["short_of_targets"])
    for path in comparisons():
        result = cli_json(home, "tco", str(path))
        assert tco[result["scenario"]] == result["verdict"]["call"]


@pytest.mark.parametrize("path", comparisons(), ids=lambda p: p.stem)
def test_a_tco_draft_prices_the_layouts_the_stored_result_prices(weekly, path):
    """Issue 43, case 10 (and issue 39, case 8): a TCO comparison priced from its C2C
    scenarios' files (no stored estimate: a draft before `run`) runs each at the layout the
    recompute graph stores, so the draft's job times and winner are the stored result's."""
    from db import queries
    from db.engine import Session
    from pipelines.jobs import tco
    from pipelines.ledger.connection import connect_ledger
    from pipelines.settings import Settings
    from tests.support.shipped_week import DAY

    home, version, _ = weekly
    stored = cli_json(home, "tco", str(path))
    scenario = load_tco_scenario(path)
    engine = connect_ledger(Settings(home=home))
    try:
        with Session(engine) as session:
            known = queries.dataset_version(session, version).cutoff_at
            resolved = tco.resolve_inputs(scenario, session, on=DAY, known=known,
                                          scenarios_dir=SHIPPED_SCENARIOS,
                                          dataset_version=version, c2c_results=None)
            draft = tco.evaluate(scenario, resolved, version)
    finally:
        engine.dispose()
    days = {o["name"]: o["jct_days"] for o in stored["options"]}
    assert {o["name"]: o["jct_days"] for o in draft["options"]} == pytest.approx(days)
    assert draft["verdict"]["call"] == stored["verdict"]["call"]


@pytest.mark.parametrize("path", scenario_paths(SHIPPED_SCENARIOS, "c2c"), ids=lambda p: p.stem)
def test_estimate_and_sweep_give_the_stored_estimate(weekly, path):
    """Issue 39: `estimate` is the layout the version stores (its best, unless pinned) and, for
    a searched scenario, `sweep`'s first row is the same layout, with the same time, C2C and
    time to train; the file's own layout is `estimate --as-written`."""
    from sqlalchemy.orm import Session

    from db.engine import make_engine
    from db.results import stored_results
    from db.schema import C2CResult
    from pipelines.settings import Settings

    home, version, _ = weekly
    engine = make_engine(Settings(home=home).resolved_database_url)
    with Session(engine) as session:
        stored = stored_results(session, C2CResult, version)[path.stem].result
    engine.dispose()
    estimate = cli_json(home, "estimate", str(path))
    swept = cli_json(home, "sweep", str(path), "--top", "1")
    pinned = stored["layout_choice"]["mode"] == "pinned"
    # A pinned scenario stores its own layout; its sweep searches around the file's choices.
    assert swept["search"] == ("written" if pinned else "calibrated")
    for found in (estimate,) if pinned else (estimate, swept["best"][0]):
        assert found["parallel"] == stored["parallel"], path.stem
        for key in ("t_iter_s", "c2c", "c2c_scale_up", "c2c_scale_out", "time_to_train_days"):
            assert found[key] == pytest.approx(stored[key], rel=1e-9), key
    assert estimate["layout_choice"]["mode"] == stored["layout_choice"]["mode"]
    written = cli_json(home, "estimate", str(path), "--as-written")
    assert "layout_choice" not in written
    # A per-direction figure read from a both-directions metric says it is half of it.
    for spec in estimate["specs"]:
        if (spec.get("metric") or "").endswith("_bidir"):
            assert spec["note"].startswith(f"0.5 x {spec['metric']} ("), spec
