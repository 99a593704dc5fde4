"""Property tests of the inference readers (InferenceX, MLPerf Inference): whatever the bytes or
the JSON, a reader either rejects the file (AdapterError) or gives points and rejected rows that
add up to the rows it read, every point fit to store; mutating one row of a real file changes
that row only."""

from __future__ import annotations

import json
import math
from datetime import date
from functools import cache

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pipelines.inputs.adapters import inferencex, mlperf_inference
from pipelines.inputs.adapters.base import AdapterError, AdapterOptions, InferencePoint, Parsed
from pipelines.inputs.adapters.guards import INT32_MAX, storable
from pipelines.inputs.limits import InputLimits
from tests.conftest import examples
from tests.support.shared_data import fixture_path

# The real files whose rows are mutated (shared copies: the project keeps none).
REAL_FILES = (("inferencex", "agg_bmk_kimik2.5_mi355x.json"),
              ("inferencex", "published_kimik2.5_mi355x.json"),
              ("mlperf_inference", "summary_results_v5.1_sample.json"))
OPTIONS = AdapterOptions(as_of=date(2026, 6, 1), limits=InputLimits(max_rows_per_file=50,
                                                                    json_max_depth=12))
READERS = (inferencex.parse, mlperf_inference.parse)


@cache
def real_rows(kind: str, name: str) -> list[dict]:
    return json.loads(fixture_path(kind, name).read_text())


@cache
def keys() -> list[str]:
    """The keys the real files' rows have."""
    return sorted({key for parts in REAL_FILES for row in real_rows(*parts) for key in row})


hostile_scalar = st.one_of(
    st.none(), st.booleans(), st.integers(-(2**70), 2**70),
    st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=20),
    st.sampled_from(["", " ", "nan", "1e400", "-0", "8", "8.0", "true", "True", "2026-02-30",
                     "2026-06-01", "h100", "mi355x", "dsr1", "Tokens/s", "a\x00b", "1" * 400,
                     "v5.1", "NVIDIA GB200", "AMD Instinct MI300X (x8), NVIDIA H100-SXM"]))
json_values = st.recursive(hostile_scalar, lambda inner: st.one_of(
    st.lists(inner, max_size=4),
    st.dictionaries(st.deferred(lambda: st.sampled_from(keys())) | st.text(max_size=8), inner,
                    max_size=6)),
    max_leaves=25)


def check(parsed: Parsed) -> None:
    """What must hold of anything a reader returns."""
    stored = storable(parsed)
    kept: list[InferencePoint] = [p for run in stored.runs for p in run.points]
    assert stored.read == len(kept) + len(stored.rejected)
    assert len(stored.runs) <= 1 and all(run.points for run in stored.runs)
    for point in kept:
        assert math.isfinite(point.tok_s_per_gpu) and point.tok_s_per_gpu > 0
        assert 1 <= point.gpus <= INT32_MAX
        for whole in (point.tp, point.ep, point.dp, point.concurrency, point.input_tokens,
                      point.output_tokens, point.prefill_gpus, point.decode_gpus):
            assert whole is None or 0 <= whole <= INT32_MAX
        for figure in (point.total_tok_s_per_gpu, point.tok_s_per_user, point.ttft_s,
                       point.tpot_s):
            assert figure is None or (math.isfinite(figure) and figure >= 0)
        assert point.source_key in {s.key for s in stored.pack.sources}
    for rejected in stored.rejected:
        assert rejected.field and rejected.reason and "\x00" not in rejected.reason
    json.dumps([run.metadata for run in stored.runs], allow_nan=False)


def read_all(data: bytes) -> None:
    for reader in READERS:
        try:
            parsed = reader("fuzz.json", data, OPTIONS)
        except AdapterError as exc:
            assert exc.reason
            continue
        check(parsed)


@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=300))
def test_any_bytes_are_a_rejected_file_or_rows_that_add_up(data):
    read_all(data)


@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(json_values)
def test_any_json_is_a_rejected_file_or_rows_that_add_up(document):
    read_all(json.dumps(document).encode())


@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(REAL_FILES), st.data())
def test_a_mutated_row_of_a_real_file_changes_that_row_only(real, data):
    rows = real_rows(*real)
    reader = mlperf_inference.parse if real[0] == "mlperf_inference" else inferencex.parse
    before = reader("real.json", json.dumps(rows, indent=2).encode(), OPTIONS)
    index = data.draw(st.integers(0, len(rows) - 1))
    key = data.draw(st.sampled_from(sorted(rows[index])))
    mutated = [dict(row) for row in rows]
    mutated[index][key] = data.draw(json_values)
    after = reader("real.json", json.dumps(mutated, indent=2).encode(), OPTIONS)

    check(after)

    def figures(parsed: Parsed) -> set[tuple]:
        return {(p.hardware, p.model, p.scenario, p.concurrency, p.input_tokens, p.tok_s_per_gpu)
                for run in parsed.runs for p in run.points}
    assert len(figures(before) - figures(after)) <= 1  # at most the mutated row's point
    assert len(figures(after) - figures(before)) <= 1  # at most the mutated row, read anew
