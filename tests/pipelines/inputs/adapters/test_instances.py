"""The instance table (data/instances.yaml): declared, sourced, and only ledger GPU items."""

from __future__ import annotations

import pytest

from pipelines.inputs.adapters.instances import (
    DEFAULT_PATH,
    InstanceSpec,
    default_instances,
    load_instances,
)
from pipelines.inputs.packs import parse_pack
from pipelines.settings import PROJECT_ROOT

SHIPPED = DEFAULT_PATH.read_text(encoding="utf-8")
GOOD = """
sources:
  docs: {title: "Provider docs", url: "https://example.com/gpus", retrieved_on: 2026-11-23}
instances:
  aws:
    p5.48xlarge: {gpu: h100-sxm5, gpus: 8, accelerator: H100, source: docs}
accelerators:
  B200: {gpu: b200, source: docs}
untracked_instances:
  aws: {"g5.*": "NVIDIA A10G: no ledger item"}
untracked_accelerators:
  "tpu-*": "a TPU slice"
"""


def ledger_items() -> set[str]:
    """Every item key the shipped source packs declare."""
    keys: set[str] = set()
    for path in (PROJECT_ROOT / "data" / "sources").glob("*.yaml"):
        keys |= {item.key for item in parse_pack(path.name, path.read_bytes()).items}
    return keys


def test_the_shipped_table_loads_and_its_gpus_are_ledger_items():
    table = load_instances(SHIPPED)
    gpus = {spec.gpu for by_type in table.instances.values() for spec in by_type.values()}
    assert gpus | set(table.accelerators.values()) <= ledger_items()
    assert {"aws", "azure", "gcp"} <= set(table.instances)
    assert table.instance("aws", "p5.48xlarge") == InstanceSpec(
        provider="aws", instance_type="p5.48xlarge", gpu="h100-sxm5", gpus=8,
        source="aws-ec2-instance-types", accelerator="H100")
    assert table.instance("azure", "Standard_ND96isr_H100_v5").gpus == 8
    assert table.instance("gcp", "a3-megagpu-8g").accelerator == "H100-MEGA"


def test_every_entry_names_a_declared_source():
    table = load_instances(SHIPPED)
    for by_type in table.instances.values():
        for spec in by_type.values():
            assert spec.source in table.sources
            assert table.sources[spec.source].url


def test_the_adapters_default_is_the_shipped_table():
    assert default_instances() == load_instances(SHIPPED)


def test_untracked_instances_and_accelerators_match_patterns():
    table = load_instances(GOOD)
    assert table.untracked("aws", "g5.48xlarge") == "NVIDIA A10G: no ledger item"
    assert table.untracked("aws", "p5.48xlarge") is None
    assert table.untracked("azure", "g5.xlarge") is None  # patterns are per provider
    assert table.untracked_accelerator("tpu-v5p-8") == "a TPU slice"
    assert table.accelerator("B200") == "b200"
    assert table.accelerator("H100") is None


def test_an_untracked_h100_nvl_is_not_an_h100_sxm5():
    table = load_instances(SHIPPED)
    assert table.instance("azure", "Standard_NC40ads_H100_v5") is None
    assert "H100 NVL" in table.untracked("azure", "Standard_NC40ads_H100_v5")


@pytest.mark.parametrize("entry, message", [
    ("{gpu: h100-sxm5, gpus: 0, source: docs}", "instances.aws.p5.48xlarge: `gpus` must be"),
    ("{gpu: h100-sxm5, gpus: '8', source: docs}", "`gpus` must be a whole number"),
    ("{gpu: h100-sxm5, gpus: 8.5, source: docs}", "`gpus` must be a whole number"),
    ("{gpu: H100 SXM, gpus: 8, source: docs}", "`gpu` must be a ledger key"),
    ("{gpus: 8, source: docs}", "`gpu` must be a ledger key"),
    ("{gpu: h100-sxm5, gpus: 8}", "`source` is missing"),
    ("{gpu: h100-sxm5, gpus: 8, source: blog}", "source 'blog' is not declared"),
    ("{gpu: h100-sxm5, gpus: 8, source: docs, memory: 80}", "unknown key `memory`"),
    ("h100-sxm5", "`instances.aws.p5.48xlarge` must be a mapping"),
])
def test_a_bad_entry_is_a_value_error_naming_it(entry, message):
    text = GOOD.replace("{gpu: h100-sxm5, gpus: 8, accelerator: H100, source: docs}", entry)
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(".", r"\.")):
        load_instances(text)


@pytest.mark.parametrize("text, message", [
    ("sources: [1, 2]", "`sources` must be a mapping"),
    ("instances: {AWS: {}}", "provider 'AWS' must be lower-case"),
    ("prices: {}", "unknown section `prices`"),
    ("sources: {docs: {url: x}}", "sources.docs: `title` is missing"),
    ("accelerators: {B200: {gpu: b200}}", "accelerators.B200: `source` is missing"),
    ("untracked_accelerators: {T4: ''}", "untracked_accelerators.T4: say why"),
    ("instances: [", "malformed YAML"),
    ("- 1", "expected a mapping"),
])
def test_a_bad_table_is_a_value_error(text, message):
    with pytest.raises(ValueError, match=message):
        load_instances(text)
