"""Property tests of the serving and TCO scenario readers: whatever the file holds, the reader
returns a scenario or raises a ScenarioError naming the file and a field, never anything else.

Two kinds of input: a shipped-like document with one part replaced, dropped or added (so most
examples get past the outer checks into the sections), and arbitrary bytes.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pipelines.inputs.limits import InputLimits
from pipelines.inputs.scenarios import ScenarioError
from pipelines.inputs.serving_scenarios import ServingScenario, load_serving_scenario
from pipelines.inputs.tco_scenarios import TcoScenario, load_tco_scenario
from tests.conftest import examples
from tests.pipelines.inputs.test_serving_scenarios import INLINE, MOE
from tests.pipelines.inputs.test_tco_scenarios import TWO_OPTIONS

SMALL = InputLimits(yaml_max_depth=12, yaml_max_alias_nodes=100, max_samples=5000)
BASES = {"serving": [yaml.safe_load(INLINE), yaml.safe_load(MOE)],
         "tco": [yaml.safe_load(TWO_OPTIONS)]}
READERS: dict[str, Callable[[Path, InputLimits], Any]] = {
    "serving": load_serving_scenario, "tco": load_tco_scenario}
TYPES = {"serving": ServingScenario, "tco": TcoScenario}
# Keys the readers know, so that a made-up mapping often reaches a real check.
KEYS = ["name", "kind", "model", "precision", "request", "options", "cluster", "deployment",
        "price", "tp", "ep", "experts", "top_k", "moe_layers", "layers", "market", "tco",
        "option", "gpu", "capex", "cost", "life_years", "jct", "c2c_scenario", "rent", "item",
        "metric", "times", "per", "as_of", "uncertainty", "samples", "training_run",
        "compare", "scale_up", "finance"]
hostile = st.sampled_from(["", "0", "-1", "1e400", "1e12", ".nan", "-.inf", "1.8 TB/s",
                           "30 day", "7 USD", "-5 USD", "1e400 USD", "12 kW", "0 kW", "fp8",
                           "bf16", "serving", "tco", "llama-3.3-70b", "2024-02-30",
                           "2024-01-01", "9999-01-01", "on_demand", "median", "1" + "0" * 40,
                           "{", "*a", "&a x", "x: y"])
scalars = st.one_of(st.none(), st.booleans(), st.integers(-(2**70), 2**70),
                    st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=12),
                    hostile)
values = st.recursive(
    scalars, lambda inner: st.lists(inner, max_size=3)
    | st.dictionaries(st.sampled_from(KEYS) | st.text(max_size=6), inner, max_size=3),
    max_leaves=8)


def places(value: Any) -> list[tuple[Any, Any]]:
    """Every (container, key or index) in a document, outermost first."""
    found: list[tuple[Any, Any]] = []
    items = value.items() if isinstance(value, dict) else enumerate(value) \
        if isinstance(value, list) else ()
    for key, inner in items:
        found.append((value, key))
        found.extend(places(inner))
    return found


def read(kind: str, text: bytes) -> Any:
    """What the reader makes of `text`; a ScenarioError must name this file and a field."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "scenario.yaml"
        path.write_bytes(text)
        try:
            scenario = READERS[kind](path, SMALL)
        except ScenarioError as exc:
            assert exc.path == str(path) and exc.field and exc.reason
            assert exc.line is None or exc.line >= 1
            assert "__lines__" not in str(exc)  # a mapping is quoted as "a mapping"
            return exc
    assert isinstance(scenario, TYPES[kind])
    return scenario


@settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(sorted(READERS)), st.data())
def test_a_document_with_one_part_changed_reads_or_names_file_and_field(kind, data):
    document = yaml.safe_load(yaml.safe_dump(data.draw(st.sampled_from(BASES[kind]))))
    for _ in range(data.draw(st.integers(1, 3))):
        container, key = data.draw(st.sampled_from(places(document)))
        action = data.draw(st.sampled_from(["replace", "drop", "add"]))
        if action == "replace":
            container[key] = data.draw(values)
        elif action == "drop":
            del container[key]
        elif isinstance(container, dict):
            container[data.draw(st.sampled_from(KEYS))] = data.draw(values)
        else:
            container.append(data.draw(values))
    result = read(kind, yaml.safe_dump(document, allow_unicode=True).encode())
    if isinstance(result, ServingScenario):  # the model's arithmetic holds for what is read
        assert 0 <= result.model.expert_params <= result.model.total_params * (1 + 1e-9)


@settings(max_examples=examples(200), deadline=None)
@given(st.sampled_from(sorted(READERS)), st.binary(max_size=300))
def test_arbitrary_bytes_read_or_name_the_file(kind, data):
    read(kind, data)


@settings(max_examples=examples(100), deadline=None)
@given(st.sampled_from(sorted(READERS)), st.data())
def test_a_document_cut_or_damaged_anywhere_reads_or_names_the_file(kind, data):
    text = yaml.safe_dump(data.draw(st.sampled_from(BASES[kind])))
    cut = data.draw(st.integers(0, len(text)))
    damage = data.draw(st.sampled_from(["", "\n", ":", "- ", "{", "]", "\t", "&a ", "*a",
                                        "\x00", "---\n"]) | st.text(max_size=4))
    read(kind, (text[:cut] + damage + text[cut:]).encode("utf-8", "surrogatepass"))
