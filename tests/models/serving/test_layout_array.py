"""The serving model over arrays gives, layout by layout, what the scalar model and
cost.at_target give: the search ranks by the same numbers page 1 prints."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from models.serving.calibration import PRIOR, EngineConstants, ServingConstants
from models.serving.cost import Point, at_target
from models.serving.curve import concurrencies, max_concurrency, serving_curve
from models.serving.layout_array import (
    Layouts,
    concurrency_grid,
    throughput_at_target,
)
from models.serving.layout_array import max_concurrency as array_max_concurrency
from models.serving.presets import PRESETS
from models.serving.spec import Deployment, RequestShape, WeightFormat
from tests.models.serving.test_curve import HGX, NVL72, PEAK

FITTED = ServingConstants(decode_hbm_efficiency=0.62, prefill_efficiency=0.21,
                          layer_overhead_s=31e-6, decode_compute_efficiency=0.33,
                          token_overhead_s=0.4e-6, kernel_share=0.6)
ENGINE = EngineConstants(overhead_scale=1.3, ep_layer_s=12e-6)


def scalar(llm, dep, hw, request, k, e, target) -> float:
    """What the search must agree with: the curve, read at the target as page 1 reads it."""
    curve = [Point(p.concurrency, p.tok_s_per_gpu, p.tok_s_per_user, p.ttft_s)
             for p in serving_curve(llm, dep, hw, request, k, PEAK, e)]
    found = at_target(curve, target)
    return math.nan if found is None else found.tok_s_per_gpu


@st.composite
def layouts(draw, llm):
    power = st.sampled_from([1, 2, 4, 8, 16])
    tp, dp, pp = draw(power), draw(power), draw(st.sampled_from([1, 2, 4]))
    ep = draw(st.sampled_from([None, tp * dp])) if llm.is_moe else None
    prefill = draw(st.sampled_from([0, 0, tp, 2 * tp, 8 * tp]))
    return Deployment(tp=tp, dp=dp, ep=ep, pp=pp, prefill_gpus=prefill,
                      weights=draw(st.sampled_from(list(WeightFormat))),
                      max_batch=draw(st.sampled_from([16, 256, 2048])))


@settings(max_examples=300, deadline=None)
@given(data=st.data(), model=st.sampled_from(sorted(PRESETS)), hw=st.sampled_from([HGX, NVL72]),
       shape=st.sampled_from([(1024, 1024), (8192, 1024), (1024, 8192), (128, 2048)]),
       k=st.sampled_from([PRIOR, FITTED]), e=st.sampled_from([EngineConstants(), ENGINE]),
       target=st.sampled_from([5.0, 20.0, 50.0, 150.0, 1000.0]))
def test_each_layout_gets_the_scalar_models_answer_at_the_target(data, model, hw, shape, k, e,
                                                                 target):
    llm = PRESETS[model]
    deps = data.draw(st.lists(layouts(llm), min_size=1, max_size=6))
    # One batch shares its base's formats and limit: group the drawn rows by them.
    base = deps[0]
    deps = [dataclasses.replace(d, weights=base.weights, max_batch=base.max_batch)
            for d in deps]
    request = RequestShape(*shape)
    got = throughput_at_target(llm, Layouts.of(deps), hw, request, base, k, e, PEAK, target)
    want = [scalar(llm, d, hw, request, k, e, target) for d in deps]
    np.testing.assert_allclose(got, want, rtol=1e-9, equal_nan=True)


def test_the_grid_is_the_curves_concurrencies_row_by_row():
    limits = np.array([0, 1, 2, 3, 8, 1000, 2048])
    grid = concurrency_grid(limits)
    for row, limit in zip(grid, limits, strict=True):
        assert sorted(row[~np.isnan(row)]) == concurrencies(int(limit))


def test_the_concurrency_limit_is_the_scalar_ones():
    llm = PRESETS["deepseek-r1"]
    deps = [Deployment(tp=8), Deployment(tp=1, dp=8, ep=8), Deployment(tp=4),
            Deployment(tp=2, pp=4, weights=WeightFormat.FP4)]
    got = array_max_concurrency(llm, Layouts.of(deps), HGX, RequestShape(1024, 1024), deps[0])
    assert list(got) == [max_concurrency(llm, dataclasses.replace(d, weights=deps[0].weights),
                                         HGX, RequestShape(1024, 1024)) for d in deps]
    assert got[2] == 0      # 671 B parameters in FP8 do not fit on four 80 GB GPUs


def test_a_layout_whose_weights_do_not_fit_has_no_answer():
    llm = PRESETS["deepseek-r1"]
    deps = [Deployment(tp=4), Deployment(tp=8)]
    got = throughput_at_target(llm, Layouts.of(deps), NVL72, RequestShape(1024, 1024),
                               deps[0], PRIOR, EngineConstants(), PEAK, 20.0)
    assert not np.isnan(got).any()            # 671 GB of FP8 weights fit on four 186 GB GPUs
    tiny = dataclasses.replace(NVL72, hbm_bytes=40e9)
    none = throughput_at_target(llm, Layouts.of(deps), tiny, RequestShape(1024, 1024),
                                deps[0], PRIOR, EngineConstants(), PEAK, 20.0)
    assert np.isnan(none).all()


def test_columns_of_different_lengths_are_refused():
    one = np.array([1])
    with pytest.raises(ValueError, match="differ in length"):
        Layouts(one, one, one, one, np.array([0, 0]))
