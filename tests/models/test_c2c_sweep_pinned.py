"""The layout search's results, pinned: the best layouts of four searches and their iteration
time and memory, and sums over every enumerated layout's estimates, as the model computed them
before the sweep was made faster (commit 4d4627f). A speed-up must leave every number as it
was (relative 1e-12: an operation reordered may move the last bit, nothing more).

Cases: the bench's GPT-3 175B and 64-expert MoE on 1,024 A100s (Framework() defaults); a
GQA MoE with shared experts, a dense first layer, untied embeddings and the layers + 2 split
on 256 H100s in FP8 with TP and EP overlap and fp32 gradients; and an unfused-attention GPT
with dropout and no DP overlap. `blocks` evaluates every layout again with block-limited
recompute and activation offloading set on some rows, so those branches are pinned too.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from models.c2c.estimate import evaluate
from models.c2c.spec import ClusterSpec, Framework, Precision, TransformerSpec
from models.c2c.sweep import enumerate_layouts, sweep
from models.c2c.validation import A100_SELENE

H100 = ClusterSpec(peak_flops=989e12, hbm_bytes=80e9, hbm_bw=3.35e12, domain_gpus=8,
                   scaleup_bw=450e9, scaleout_bw=50e9, scaleup_efficiency=0.82,
                   scaleout_efficiency=0.94, scaleup_latency=3.4e-6, scaleout_latency=14e-6,
                   gemm_peak_flops=1979e12, arch="hopper")
GPT3 = TransformerSpec(layers=96, hidden=12288, heads=96, seq_len=2048, vocab=51200)
MOE = TransformerSpec(layers=32, hidden=4096, heads=32, seq_len=4096, vocab=32000,
                      experts=64, top_k=2)
GQA_MOE = TransformerSpec(layers=94, hidden=4096, heads=64, seq_len=8192, vocab=151936,
                          kv_heads=4, swiglu=True, experts=128, top_k=8, moe_ffn=1536,
                          head_dim=128, first_dense_layers=1, shared_experts=1,
                          tied_embeddings=False)
CASES = {
    "gpt3": (GPT3, A100_SELENE, Framework(), 1024, 1536),
    "moe": (MOE, A100_SELENE, Framework(), 1024, 1024),
    "gqa_moe_fp8": (GQA_MOE, H100, Framework(tp_overlap=True, ep_overlap=True,
                                              precision=Precision.FP8,
                                              grad_reduce_in_fp32=True), 256, 512),
    "unfused": (replace(GPT3, layers=48, hidden=6144, heads=64), A100_SELENE,
                Framework(flash_attention=False, dropout=True, dp_overlap=False), 512, 1024),
}
SHOWN = ("tp", "pp", "dp", "ep", "cp", "etp", "micro_batch", "interleave", "sequence_parallel",
         "recompute", "zero")
TOLERANCE = 1e-12

# Computed by the code before the speed-up (commit 4d4627f).
EXPECTED = {'gpt3': {'evaluated': 10740,
          'valid': 5476,
          'index': [1172, 1436, 1424, 1412, 1400],
          'layouts': [(4, 1, 256, 1, 1, 0, 3, 1, 1, 0, 3),
                      (4, 2, 128, 1, 1, 0, 3, 8, 1, 0, 3),
                      (4, 2, 128, 1, 1, 0, 3, 7, 1, 0, 3),
                      (4, 2, 128, 1, 1, 0, 3, 6, 1, 0, 3),
                      (4, 2, 128, 1, 1, 0, 3, 4, 1, 0, 3)],
          't_iter': [14.832092309605361,
                     15.480129339897555,
                     15.531690625728922,
                     15.604759884681382,
                     15.879946241312867],
          'memory': [61392316416.0, 65028974592.0, 65028974592.0, 66236934144.0, 68652853248.0],
          'smallest': 3586418688.0,
          'all': [539805.1075210352,
                  201975.26374582882,
                  221869.22799219465,
                  1474557465747456.0,
                  3523.3997264867403,
                  1.2571777957515313e+18,
                  5852.45740872108,
                  7962.219089750958,
                  3281.4572636698617,
                  171599422302.57516,
                  5476],
          'blocks': [502497.3193555444,
                     186237.57591665653,
                     207914.05540635565,
                     1782710499958784.0,
                     3780.3739488457286,
                     1.2493880938303672e+18,
                     5986.50448557641,
                     8215.227822106022,
                     3466.9447007577073,
                     159739595844.12396,
                     4229]},
 'moe': {'evaluated': 250122,
         'valid': 179050,
         'index': [109, 391, 127, 91, 427],
         'layouts': [(1, 1, 1024, 16, 1, 4, 1, 1, 0, 0, 1),
                     (1, 1, 512, 16, 2, 4, 2, 1, 0, 0, 1),
                     (1, 1, 1024, 32, 1, 2, 1, 1, 0, 0, 1),
                     (1, 1, 1024, 8, 1, 8, 1, 1, 0, 0, 1),
                     (1, 1, 512, 32, 2, 2, 2, 1, 0, 0, 1)],
         't_iter': [1.6734977460527407,
                    1.6774750297990821,
                    1.6867371972346925,
                    1.690575118097861,
                    1.690714480981034],
         'memory': [56463941632.0, 56463941632.0, 56463941632.0, 56463941632.0, 56463941632.0],
         'smallest': 5442910208.0,
         'all': [5048041.371516073,
                 571579.9396084193,
                 1060494.186577926,
                 2.7806090396020736e+16,
                 34662.50316028132,
                 1.2387725428654254e+19,
                 1298907.3862374052,
                 1327567.0189230682,
                 1115203.6171109255,
                 1203546851042.765,
                 179050],
         'blocks': [4925818.112696373,
                    539700.5989658784,
                    1028769.7148828349,
                    2.870317405062349e+16,
                    36348.82806206266,
                    1.2232838964707535e+19,
                    1381396.62368232,
                    1408234.552720178,
                    1190035.7171440632,
                    1174406555341.8096,
                    175590]},
 'gqa_moe_fp8': {'evaluated': 195698,
                 'valid': 79951,
                 'index': [23815, 23809, 23821, 68125, 68113],
                 'layouts': [(1, 8, 8, 16, 4, 1, 1, 4, 0, 0, 1),
                             (1, 8, 8, 16, 4, 1, 1, 3, 0, 0, 1),
                             (1, 8, 8, 16, 4, 1, 1, 6, 0, 0, 1),
                             (2, 4, 16, 16, 2, 1, 1, 6, 1, 0, 1),
                             (2, 4, 16, 16, 2, 1, 1, 4, 1, 0, 1)],
                 't_iter': [6.712204766457329,
                            6.721833054390175,
                            6.750059619971292,
                            6.7598823386750455,
                            6.761506145912258],
                 'memory': [57904354935.82979,
                            59631214592.0,
                            56177495279.65958,
                            66323009797.44681,
                            67803175217.02127],
                 'smallest': 16952612695.148935,
                 'all': [4298304.087053691,
                         1614063.5524118734,
                         1189870.5425216332,
                         3.386739233813616e+16,
                         26076.888533312114,
                         5.895578705715411e+19,
                         162935.26025131674,
                         320130.41270291427,
                         138898.7508709345,
                         1024795552981.7799,
                         79951],
                 'blocks': [3990774.4585736627,
                            1492274.44376786,
                            1104199.9902456766,
                            3.9098903938112136e+16,
                            27986.203923250905,
                            5.852842518285779e+19,
                            168503.30151856877,
                            324890.99059255293,
                            142502.1836718552,
                            951474775927.9402,
                            50435]},
 'unfused': {'evaluated': 11802,
             'valid': 8419,
             'index': [586, 604, 568, 964, 550],
             'layouts': [(2, 2, 128, 1, 1, 0, 1, 6, 1, 0, 1),
                         (2, 2, 128, 1, 1, 0, 1, 8, 1, 0, 1),
                         (2, 2, 128, 1, 1, 0, 1, 5, 1, 0, 1),
                         (2, 4, 64, 1, 1, 0, 1, 6, 1, 0, 1),
                         (2, 2, 128, 1, 1, 0, 1, 4, 1, 0, 1)],
             't_iter': [3.7634143503595388,
                        3.7636094859276557,
                        3.768532895317812,
                        3.775917545523988,
                        3.78060625726586],
             'memory': [69118627840.0,
                        68233629696.00001,
                        69118627840.00002,
                        60036845568.00001,
                        70888624128.0],
             'smallest': 908702720.0,
             'all': [164243.15428126208,
                     59934.844122229304,
                     36668.26433738461,
                     939296634423296.0,
                     2432.670835555794,
                     8.337198971118643e+17,
                     11954.412261427398,
                     11954.412261427395,
                     7213.733078744184,
                     78317238941.79443,
                     8419],
             'blocks': [157136.2087883398,
                        57959.96898203794,
                        35795.52923805606,
                        1138723556455082.8,
                        2514.8068906953754,
                        8.221517641469632e+17,
                        11801.470358586423,
                        11801.470358586423,
                        7191.8708840956515,
                        74928383249.44485,
                        7429]}}


def _sums(model: TransformerSpec, hw: ClusterSpec, fw: Framework, gpus: int,
          batch: int) -> dict[str, list[float]]:
    """Sums over every enumerated layout of the estimates, plain and with block recompute
    and offloading on some rows; the count that fits last."""
    lay = enumerate_layouts(model, fw, gpus, batch)
    rows = np.arange(len(lay))
    blocks = replace(lay, recompute_layers=(rows % 3).astype(np.int64),
                     offload_layers=(rows % 2).astype(np.int64))
    sums = {}
    for label, layouts in (("all", lay), ("blocks", blocks)):
        e = evaluate(model, hw, fw, layouts, tokens=1e12)
        assert e.time_to_train_s is not None
        sums[label] = [float(np.sum(x)) for x in (
            e.t_iter, e.t_compute, e.t_bubble, e.memory_bytes, e.mfu, e.hw_flops_per_gpu,
            e.c2c, e.c2c_link, e.c2c_scale_out, e.time_to_train_s)] + [int(e.fits.sum())]
    return sums


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_search_finds_the_same_best_layouts_with_the_same_time_and_memory(name):
    model, hw, fw, gpus, batch = CASES[name]
    expected = EXPECTED[name]
    result = sweep(model, hw, fw, gpus, batch, top=5)
    best = result.best
    assert (result.evaluated, result.valid) == (expected["evaluated"], expected["valid"])
    assert result.index is not None and result.index.tolist() == expected["index"]
    assert [tuple(int(getattr(best.layouts, f)[i]) for f in SHOWN)
            for i in range(len(best.t_iter))] == expected["layouts"]
    assert best.t_iter.tolist() == pytest.approx(expected["t_iter"], rel=TOLERANCE)
    assert best.memory_bytes.tolist() == pytest.approx(expected["memory"], rel=TOLERANCE)
    assert result.smallest_memory_bytes == pytest.approx(expected["smallest"], rel=TOLERANCE)


@pytest.mark.parametrize("name", sorted(CASES))
def test_every_layouts_estimates_sum_as_before(name):
    sums = _sums(*CASES[name])
    for label in ("all", "blocks"):
        *values, fits = sums[label]
        *expected, expected_fits = EXPECTED[name][label]
        assert values == pytest.approx(expected, rel=TOLERANCE), label
        assert fits == expected_fits, label
