"""Input and output tokens priced apart: the GPU-time of a request split between its prefill
and its decode, which together pay what the benchmarks' all-to-output figure pays."""

from __future__ import annotations

import pytest

from models.serving.calibration import PRIOR
from models.serving.cost import usd_per_mtok
from models.serving.spec import Deployment, RequestShape
from models.serving.token_costs import prefill_share, token_costs
from tests.models.serving.test_curve import GPT_OSS, HGX, LLAMA, PEAK


def test_input_and_output_together_pay_for_the_same_gpu_time():
    request = RequestShape(input_tokens=8192, output_tokens=1024)
    split = token_costs(2.0, 500.0, request, share=0.25)
    per_request = usd_per_mtok(2.0, 500.0) * 1024 / 1e6
    assert (split.usd_per_mtok_in * 8192 + split.usd_per_mtok_out * 1024) / 1e6 == (
        pytest.approx(per_request))
    assert split.usd_per_mtok_out == pytest.approx(0.75 * usd_per_mtok(2.0, 500.0))


def test_a_share_outside_zero_to_one_is_refused():
    with pytest.raises(ValueError, match="between 0 and 1"):
        token_costs(2.0, 500.0, RequestShape(1024, 1024), share=1.5)


def test_longer_prompts_take_a_larger_share_of_the_gpu_time():
    short, long = RequestShape(1024, 1024), RequestShape(8192, 1024)
    shares = [prefill_share(LLAMA, Deployment(tp=8), HGX, r, 64, PRIOR, PEAK)
              for r in (short, long)]
    assert 0 < shares[0] < shares[1] < 1


def test_a_disaggregated_deployment_charges_its_prefill_gpus_to_the_input():
    split = Deployment(tp=8, prefill_gpus=8)
    assert prefill_share(GPT_OSS, split, HGX, RequestShape(1024, 1024), 64, PRIOR,
                         PEAK) == pytest.approx(8 / split.total_gpus)
