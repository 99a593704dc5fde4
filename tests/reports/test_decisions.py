"""Page 1 in words: workloads as option columns, verdicts, flips and the e-mail digest."""

from __future__ import annotations

import dataclasses

from reports.decisions import (
    bottom_line,
    capex_gaps,
    digest,
    flip,
    input_label,
    verdict,
    workloads,
)
from tests.support.contexts import decisions, full_context


def test_comparisons_of_one_workload_share_a_table_and_an_option_priced_alike_is_one_column():
    [workload] = workloads(decisions())
    assert workload.title == "128 layers x 25600 hidden, 3,072 GPUs"
    assert [names for names, _ in workload.options] == ["nvl72", "hgx-ndr", "hgx-800gbe"]
    assert len(workload.decisions) == 2
    [illustration] = workloads(decisions(), illustrative=True)
    assert illustration.title == "tco-worked-illustration"


def test_an_option_priced_differently_in_two_comparisons_keeps_two_columns():
    first, second, _ = decisions()
    cheaper_nvl72 = dataclasses.replace(second.options[0], name="own-nvl72",
                                        usd_per_gpu_hour=2.0)
    second = dataclasses.replace(second, options=(cheaper_nvl72, second.options[1]))
    [workload] = workloads([first, second])
    assert [names for names, _ in workload.options] == ["nvl72", "hgx-ndr", "own-nvl72",
                                                       "hgx-800gbe"]
    same = dataclasses.replace(cheaper_nvl72, usd_per_gpu_hour=first.options[0].usd_per_gpu_hour)
    [workload] = workloads([first, dataclasses.replace(second, options=(same,))])
    assert workload.options[0][0] == "nvl72 / own-nvl72"


def test_a_close_verdict_names_its_band_and_what_would_settle_it():
    close, clear, illustration = decisions()
    assert verdict(close).startswith("Either: too close to call (nvl72 2.15 % cheaper per job")
    assert verdict(close).endswith("; what decides it: a measured nccl-tests all-reduce on the "
                                   "scale-out fabric, or firm quotes for both.")
    assert "lead time" not in verdict(close)   # not in the ledger: never the advice
    assert verdict(clear) == ("Buy hgx-800gbe: 2.99 % cheaper per job than nvl72, P10–P90 "
                              "+1.2 % to +16.4 %.")
    assert "cost per job needs both job times" in verdict(illustration)


def with_layouts(line, searched):
    """The decision with each option's job time at a layout, searched or pinned."""
    options = tuple(dataclasses.replace(o, layout="TP8 x PP8 x DP48", layout_searched=s)
                    for o, s in zip(line.options, searched, strict=True))
    return dataclasses.replace(line, options=options)


def test_the_bottom_line_says_on_which_layouts_the_options_compare():
    _, clear, _ = decisions()
    assert verdict(with_layouts(clear, [True, True])) == (
        "Buy hgx-800gbe: 2.99 % cheaper per job than nvl72 at each option's best layout, "
        "P10–P90 +1.2 % to +16.4 %.")
    assert "at the layouts the scenarios pin" in verdict(with_layouts(clear, [False, False]))
    assert "some options searched" in verdict(with_layouts(clear, [True, False]))


def own_against_rent(basis: str, **rent: object):
    """The clear comparison with its nvl72 option rented as rent-h100 at `basis`, and owning
    (hgx-800gbe) the cheaper."""
    _, clear, _ = decisions()
    nvl72, hgx = clear.options
    rented = dataclasses.replace(nvl72, name="rent-h100", rented=True, basis=basis, **rent)
    return dataclasses.replace(clear, options=(rented, hgx), cheaper="hgx-800gbe",
                               dearer="rent-h100")


def test_owning_against_renting_is_its_own_line_naming_the_rent():
    line = own_against_rent("rented at $2.10/GPU-hour: median of 4 reserved_1y offers, price "
                            "of 2026-10-01")
    assert verdict(line) == (
        "Own rather than rent: hgx-800gbe is 2.99 % cheaper per job than rent-h100, P10–P90 "
        "+1.2 % to +16.4 %. rent-h100 is rented at $2.10/GPU-hour: median of 4 reserved_1y "
        "offers, price of 2026-10-01.")
    flipped = dataclasses.replace(line, cheaper="rent-h100", dearer="hgx-800gbe")
    assert verdict(flipped).startswith("Rent rather than own: rent-h100 is 2.99 % cheaper")


def test_a_rent_past_the_markets_age_limit_gives_no_verdict_and_says_why():
    """Issue 39: no verdict from a rent price older than the market's age limit."""
    basis = ("rented at $2.10/GPU-hour: h100-index (ornn), price of 2026-03-01 (266 days old, "
             "past the market's 120-day limit)")
    assert verdict(own_against_rent(basis, rent_stale=True)) == (
        "No verdict: no current rent price for rent-h100 (rented at $2.10/GPU-hour: h100-index "
        "(ornn), price of 2026-03-01 (266 days old, past the market's 120-day limit)).")
    assert verdict(own_against_rent(basis)).startswith("Own rather than rent: hgx-800gbe")


def test_the_flip_reads_the_break_even_against_the_models_speed_up():
    close, clear, illustration = decisions()
    assert flip(close).startswith("It flips if nvl72 runs less than 1.07× as fast as hgx-ndr")
    assert flip(clear).startswith("It flips if nvl72 runs at least 1.11× as fast")
    assert flip(illustration) == ""


def test_own_against_rent_of_one_machine_flips_on_the_rent():
    """Issue 39: one job time behind both (s = 1 in every draw): the flip is a rent, not a
    speed-up that cannot happen."""
    _, clear, _ = decisions()
    own, other = clear.options
    rent = dataclasses.replace(other, name="rent-b200", rented=True, usd_per_gpu_hour=5.0,
                               job_cost_usd=2.0e6)
    own = dataclasses.replace(own, name="own-b200", job_cost_usd=1.0e6)
    line = dataclasses.replace(clear, options=(own, rent), cheaper="own-b200",
                               dearer="rent-b200", speedup=1.0, speedup_p10=1.0,
                               speedup_p90=1.0, flips=())
    assert flip(line) == ("Both run the same job in the same time: it flips if rent-b200's "
                          "rent falls below owning's $2.50/GPU-hour.")
    rented_cheaper = dataclasses.replace(line, cheaper="rent-b200", dearer="own-b200")
    assert "rent rises above owning's $2.50/GPU-hour" in flip(rented_cheaper)
    # A speed-up the model is unsure of is a flip on speed, as before.
    assert flip(dataclasses.replace(line, speedup_p90=1.2)).startswith("It flips if")


def test_input_names_read_as_a_buyer_names_them():
    assert input_label("options.hgx-ndr.jct") == "hgx-ndr job time (days)"
    assert input_label("options.nvl72.capex.racks.cost") == "nvl72 capex racks cost"
    assert input_label("finance.cost_of_capital") == "finance cost of capital"


def test_the_digest_is_page_one_as_plain_text():
    text = digest(full_context())
    assert text.startswith("specledger briefing, 2026-11-22 (dataset version 7)")
    assert "  nvl72: 10.1 days to train, $1.91 M per job, $2.56 per GPU-hour" in text
    assert "too close to call" in text and "Since the last briefing:" in text
    assert "  - h100-sxm5: $10.00, cheapest $3.29 (lambda, on demand)" in text
    assert "tco-worked-illustration" not in text


def test_the_digests_market_lines_carry_their_price_dates_and_composition_apart():
    from datetime import date

    context = full_context()
    h100, *rest = context.market
    dated = dataclasses.replace(h100, price_from=date(2025, 3, 1), price_to=date(2025, 3, 8),
                                cheapest_as_of=date(2025, 3, 1),
                                composition="lambda added 2 regions")
    text = digest(dataclasses.replace(context, market=[dated, *rest]))
    assert ("  - h100-sxm5: $10.00 (prices of 2025-03-01 to 2025-03-08), cheapest $3.29 (lambda, "
            "on demand, price of 2025-03-01); lambda added 2 regions") in text


def test_page_one_states_the_utilisation_availability_and_goodput_each_cost_per_job_assumes():
    [workload] = workloads(decisions())
    assert "utilisation 100 %" in workload.assumptions
    first, second, third = decisions()
    idle = dataclasses.replace(first.options[0], utilisation=0.6, availability=0.95)
    [workload] = workloads([dataclasses.replace(first, options=(idle, first.options[1])),
                            second, third])
    assert "utilisation 100 % / 60 %" in workload.assumptions
    assert "availability 95 %, goodput 100 %" in workload.assumptions


def test_each_workload_has_a_bottom_line_in_one_sentence():
    """Issue 39: "Buy X", or "Either X or Y: too close to call; what decides it: ..." (a
    measurement or firm quotes, never what the ledger lacks), then own or rent."""
    close, clear, _ = decisions()
    assert bottom_line([clear]) == "Buy hgx-800gbe."
    either = bottom_line([close])
    assert either == ("Either nvl72 or hgx-ndr: too close to call; what decides it: a measured "
                      "nccl-tests all-reduce on the scale-out fabric, or firm quotes for each.")
    assert "lead time" not in either
    mixed = bottom_line([close, clear])
    assert mixed.startswith("Buy hgx-800gbe rather than nvl72; against ")
    nvl72, hgx = clear.options
    rent = dataclasses.replace(nvl72, name="rent-b200", rented=True)
    own_or_rent = dataclasses.replace(clear, options=(rent, hgx), cheaper="hgx-800gbe",
                                      dearer="rent-b200")
    assert bottom_line([clear, own_or_rent]) == (
        "Buy hgx-800gbe; own rather than rent, 2.99 % cheaper per job than rent-b200.")
    stale = dataclasses.replace(own_or_rent, options=(
        dataclasses.replace(rent, rent_stale=True), hgx))
    assert bottom_line([stale]) == "Own or rent: no current rent price for rent-b200."
    assert bottom_line([]) == ""


def test_a_capex_category_an_option_lacks_is_said_not_in_the_ledger():
    close, _, _ = decisions()
    nvl72, ndr = close.options
    lacking = dataclasses.replace(ndr, capex_missing=("cooling",))
    columns = (("nvl72", nvl72), ("hgx-ndr", lacking), ("hgx-800gbe", lacking))
    assert capex_gaps(columns) == "; not in the ledger: cooling of hgx-ndr, hgx-800gbe"
    assert capex_gaps((("nvl72", nvl72),)) == ""
    [workload] = workloads([dataclasses.replace(close, options=(nvl72, lacking))])
    assert ("capex items at purchase; not in the ledger: cooling of hgx-ndr. Inputs dated: "
            in workload.assumptions)


def test_a_goodput_the_ledger_gives_is_stated_with_its_source():
    close, _, _ = decisions()
    sourced = tuple(dataclasses.replace(o, goodput=0.95, goodput_source="run (src, 2024-07)")
                    for o in close.options)
    [workload] = workloads([dataclasses.replace(close, options=sourced)])
    assert ("Job times assume availability 100 %, goodput 95 % (set per option in the "
            "scenario; goodput from run (src, 2024-07), the only published large-run figure, "
            "every option's).") in workload.assumptions
    # One option without a ledger goodput: said as the scenario's, no source claimed.
    mixed = (sourced[0], close.options[1])
    [plain] = workloads([dataclasses.replace(close, options=mixed)])
    assert "(all set per option in the scenario)" in plain.assumptions


def test_page_one_states_the_markets_date_and_a_feed_that_was_not_fetched():
    from datetime import date

    from reports.decisions import market_dates

    context = full_context()
    lines = tuple(dataclasses.replace(m, price_from=date(2026, 8, 19), price_to=date(2026, 11, 9))
                  if i == 0 else dataclasses.replace(m, price_from=None, price_to=None)
                  for i, m in enumerate(context.market))
    dated = dataclasses.replace(context, market=lines, stale_sources=(), stale_source_count=0)
    assert market_dates(dated) == "market prices of 2026-08-19 to 2026-11-09"
    offline = dataclasses.replace(dated, stale_source_count=10)
    assert market_dates(offline) == ("market prices of 2026-08-19 to 2026-11-09 (10 feeds not "
                                     "fetched: last good copies)")
    assert market_dates(dataclasses.replace(dated, market=())) == ""
