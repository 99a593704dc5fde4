"""A serving verdict compares like with like: every option on one price basis, the market's
rent set beside each option rather than mixed into the answer."""

from __future__ import annotations

import json

import pytest

from tests.pipelines.conftest import SHIPPED_SCENARIOS, SOURCES

LLAMA = SHIPPED_SCENARIOS / "serving-llama-3.3-70b-fp8.yaml"


@pytest.fixture(autouse=True)
def shipped_offers_in_the_index(monkeypatch):
    """The shipped offers are priced in 2025 (data/sources/costs.yaml), older on today's date
    than the market's default age limit (120 days, SPECLEDGER_MARKET_MAX_AGE_DAYS): these
    tests of renting beside an option widen the limit so that they stay in the index."""
    monkeypatch.setenv("SPECLEDGER_MARKET_MAX_AGE_DAYS", "36500")


def test_an_owners_cost_against_a_renters_price_is_not_a_verdict(cli, tmp_path):
    cli("ingest", str(SOURCES), "--json")
    mixed = tmp_path / "mixed.yaml"
    mixed.write_text(LLAMA.read_text(encoding="utf-8").replace(
        "{tco: tco-serving-owned-nodes, option: own-hgx-h100}",
        "{market: {gpu: h100-sxm5, term: on_demand}}"), encoding="utf-8")
    # The TCO scenario the owned options are priced from sits beside the file.
    (tmp_path / "tco-serving-owned-nodes.yaml").write_bytes(
        (SHIPPED_SCENARIOS / "tco-serving-owned-nodes.yaml").read_bytes())

    result = cli("serving", str(mixed), "--json")

    assert result.exit_code == 0, result.output
    answer = json.loads(result.stdout)
    assert answer["price_basis"] == "mixed"
    assert answer["cheaper_option"] is None and answer["call"] is None
    assert answer["not_compared"] == ("the options are priced on different bases (owned, "
                                      "rented on demand): a verdict needs them all owned, or "
                                      "all rented on one term")


def test_each_option_shows_renting_the_same_gpu_beside_its_own_price(cli):
    cli("ingest", str(SOURCES), "--json")
    answer = json.loads(cli("serving", str(LLAMA), "--json").stdout)
    h100 = next(o for o in answer["options"] if o["name"] == "hgx-h100")
    rent = h100["rent_beside"]
    # The same tokens/s per GPU at the rent: the cost scales with the price, nothing else.
    owned, rented = h100["at_target"]["usd_per_mtok_out"], rent["usd_per_mtok_out"]
    assert rented / owned == pytest.approx(rent["usd_per_gpu_hour"] / h100["usd_per_gpu_hour"])


def test_each_option_is_priced_owned_at_a_neocloud_and_at_a_hyperscaler_input_and_output_apart(
        cli):
    cli("ingest", str(SOURCES), "--json")
    answer = json.loads(cli("serving", str(LLAMA), "--json").stdout)
    h100 = next(o for o in answer["options"] if o["name"] == "hgx-h100")
    tiers = {t["tier"]: t for t in h100["price_tiers"]}
    assert set(tiers) == {"owned", "neocloud", "hyperscaler"}
    assert tiers["owned"]["usd_per_gpu_hour"] == h100["usd_per_gpu_hour"]
    # The shipped packs price H100 on demand at neoclouds (Lambda, RunPod, ...) well under
    # the hyperscalers (AWS, GCP, Oracle).
    assert tiers["neocloud"]["usd_per_gpu_hour"] < tiers["hyperscaler"]["usd_per_gpu_hour"]
    assert "neocloud median over" in tiers["neocloud"]["source"]
    request = answer["request"]
    for tier in tiers.values():
        # Input and output apart pay for the same GPU-time as all of it charged to output.
        paid = (tier["usd_per_mtok_in"] * request["input_tokens"]
                + tier["usd_per_mtok_out"] * request["output_tokens"])
        assert paid == pytest.approx(tier["usd_per_mtok_all_out"] * request["output_tokens"])
        assert tier["usd_per_mtok_all_out"] == pytest.approx(
            h100["at_target"]["usd_per_mtok_out"] * tier["usd_per_gpu_hour"]
            / h100["usd_per_gpu_hour"])
    assert 0 < h100["prefill_share"] < 1
