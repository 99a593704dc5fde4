"""The instance table (data/instances.yaml): which GPU item a cloud instance type carries and
how many, so that a price list's instance-hour becomes a USD per GPU-hour of a ledger item.

Declared, not guessed: every entry names its source. Three answers for an instance type:
- listed: its GPU item and count (and the name SkyPilot's catalog gives the GPU);
- untracked: a GPU the ledger has no item for (a pattern such as `g5.*`): the price is skipped;
- neither: a new GPU instance, which the adapters reject so that someone adds it here.

`load_instances` is pure (text in, table out) and names the entry of any error; the adapters
load the packaged table themselves when AdapterOptions.instances is None.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from functools import lru_cache
from pathlib import Path
from typing import Any

from pipelines.inputs.yaml_lines import YamlError, load_yaml

DEFAULT_PATH = Path(__file__).resolve().parents[3] / "data" / "instances.yaml"
_SECTIONS = ("sources", "instances", "accelerators", "untracked_instances",
             "untracked_accelerators", "gpuhunt_gpus")
_INSTANCE_KEYS = {"gpu", "gpus", "accelerator", "source"}
_KEY = re.compile(r"[a-z0-9][a-z0-9._-]*")  # a ledger item key or a source key
_PROVIDER = re.compile(r"[a-z0-9][a-z0-9-]*")


@dataclass(frozen=True)
class TableSource:
    """Where the table's facts come from (a page of the provider's documentation)."""

    key: str
    title: str
    url: str | None
    retrieved_on: str | None


@dataclass(frozen=True)
class InstanceSpec:
    """One instance type: the GPU item it carries and how many."""

    provider: str
    instance_type: str
    gpu: str  # a ledger item key
    gpus: int
    source: str
    accelerator: str | None = None  # SkyPilot's AcceleratorName for this GPU


@dataclass(frozen=True)
class GpuName:
    """What one GPU name in gpuhunt's catalogs means: a ledger item and the memory per GPU
    of the whole GPU (less is a fraction of it), or why it is not priced (`untracked`: no
    item, skipped; `ambiguous`: the name covers two items, so only a listed instance is)."""

    name: str
    source: str
    gpu: str | None = None
    memory_gb: float | None = None
    untracked: str | None = None
    ambiguous: str | None = None


@dataclass(frozen=True)
class InstanceTable:
    """data/instances.yaml, validated. Lookups never raise."""

    sources: dict[str, TableSource] = field(default_factory=dict)
    instances: dict[str, dict[str, InstanceSpec]] = field(default_factory=dict)
    accelerators: dict[str, str] = field(default_factory=dict)  # SkyPilot name -> item key
    untracked_instances: dict[str, dict[str, str]] = field(default_factory=dict)
    untracked_accelerators: dict[str, str] = field(default_factory=dict)
    gpuhunt_gpus: dict[str, GpuName] = field(default_factory=dict)

    def instance(self, provider: str, instance_type: str) -> InstanceSpec | None:
        return self.instances.get(provider, {}).get(instance_type)

    def untracked(self, provider: str, instance_type: str) -> str | None:
        """Why an instance type is deliberately not priced (its GPU has no item), else None."""
        return _match(self.untracked_instances.get(provider, {}), instance_type)

    def accelerator(self, name: str) -> str | None:
        """The GPU item a SkyPilot AcceleratorName means, when it means only one."""
        return self.accelerators.get(name)

    def untracked_accelerator(self, name: str) -> str | None:
        return _match(self.untracked_accelerators, name)


def _match(patterns: dict[str, str], name: str) -> str | None:
    if name in patterns:
        return patterns[name]
    return next((why for pattern, why in patterns.items() if fnmatchcase(name, pattern)), None)


def load_instances(text: str) -> InstanceTable:
    """The table from the text of data/instances.yaml; ValueError naming the bad entry."""
    try:
        document: Any = load_yaml(text)
    except YamlError as exc:
        raise ValueError(f"instance table: malformed YAML: {exc}") from exc
    if not isinstance(document, dict):
        raise ValueError("instance table: expected a mapping with `sources` and `instances`")
    unknown = sorted(str(k) for k in document if k not in _SECTIONS)
    if unknown:
        raise ValueError(f"instance table: unknown section `{unknown[0]}` "
                         f"(known: {', '.join(_SECTIONS)})")
    sources = _sources(_mapping(document, "sources"))
    instances: dict[str, dict[str, InstanceSpec]] = {}
    for provider, entries in _mapping(document, "instances").items():
        where = f"instances.{provider}"
        _check_provider(str(provider), where)
        instances[str(provider)] = {
            str(name): _instance(str(provider), str(name), raw, sources)
            for name, raw in _as_mapping(entries, where).items()}
    accelerators = {}
    for name, raw in _mapping(document, "accelerators").items():
        where = f"accelerators.{name}"
        entry = _as_mapping(raw, where)
        _only(entry, {"gpu", "source"}, where)
        accelerators[str(name)] = _key(entry.get("gpu"), where, "gpu")
        _source_of(entry, sources, where)
    untracked: dict[str, dict[str, str]] = {}
    for provider, patterns in _mapping(document, "untracked_instances").items():
        _check_provider(str(provider), f"untracked_instances.{provider}")
        untracked[str(provider)] = _reasons(patterns, f"untracked_instances.{provider}")
    return InstanceTable(
        sources=sources, instances=instances, accelerators=accelerators,
        untracked_instances=untracked,
        untracked_accelerators=_reasons(document.get("untracked_accelerators"),
                                        "untracked_accelerators"),
        gpuhunt_gpus={str(name): _gpu_name(str(name), raw, sources)
                      for name, raw in _mapping(document, "gpuhunt_gpus").items()})


@lru_cache(maxsize=1)
def default_instances() -> InstanceTable:
    """The packaged data/instances.yaml (read once per process)."""
    return load_instances(DEFAULT_PATH.read_text(encoding="utf-8"))


def _mapping(document: dict[str, Any], section: str) -> dict[Any, Any]:
    return _as_mapping(document.get(section), section)


def _as_mapping(raw: Any, where: str) -> dict[Any, Any]:
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise ValueError(f"instance table: `{where}` must be a mapping")
    return raw


def _only(entry: dict[Any, Any], allowed: set[str], where: str) -> None:
    unknown = sorted(str(k) for k in entry if k not in allowed)
    if unknown:
        raise ValueError(f"instance table: {where}: unknown key `{unknown[0]}` "
                         f"(known: {', '.join(sorted(allowed))})")


def _check_provider(provider: str, where: str) -> None:
    if not _PROVIDER.fullmatch(provider):
        raise ValueError(f"instance table: {where}: provider {provider!r} must be lower-case "
                         "letters, digits and dashes (aws, azure, gcp)")


def _key(raw: Any, where: str, name: str) -> str:
    text = "" if raw is None or isinstance(raw, dict | list) else str(raw).strip()
    if not _KEY.fullmatch(text):
        raise ValueError(f"instance table: {where}: `{name}` must be a ledger key "
                         f"(lower-case, e.g. h100-sxm5), got {raw!r}")
    return text


def _sources(raw: dict[Any, Any]) -> dict[str, TableSource]:
    sources = {}
    for key, entry in raw.items():
        where = f"sources.{key}"
        entry = _as_mapping(entry, where)
        _only(entry, {"title", "url", "retrieved_on"}, where)
        title = str(entry.get("title") or "").strip()
        if not title:
            raise ValueError(f"instance table: {where}: `title` is missing")
        sources[_key(key, where, "key")] = TableSource(
            key=str(key), title=title, url=_text(entry.get("url")),
            retrieved_on=_text(entry.get("retrieved_on")))
    return sources


def _source_of(entry: dict[Any, Any], sources: dict[str, TableSource], where: str) -> str:
    source = _text(entry.get("source"))
    if source is None:
        raise ValueError(f"instance table: {where}: `source` is missing (every entry names "
                         "the page its facts come from)")
    if source not in sources:
        raise ValueError(f"instance table: {where}: source {source!r} is not declared under "
                         "`sources`")
    return source


def _instance(provider: str, name: str, raw: Any,
              sources: dict[str, TableSource]) -> InstanceSpec:
    where = f"instances.{provider}.{name}"
    entry = _as_mapping(raw, where)
    if not entry:
        raise ValueError(f"instance table: {where}: expected {{gpu, gpus, source}}")
    _only(entry, _INSTANCE_KEYS, where)
    gpus = entry.get("gpus")
    if isinstance(gpus, bool) or not isinstance(gpus, int) or not 1 <= gpus <= 1024:
        raise ValueError(f"instance table: {where}: `gpus` must be a whole number from 1 to "
                         f"1024, got {gpus!r}")
    return InstanceSpec(provider=provider, instance_type=name,
                        gpu=_key(entry.get("gpu"), where, "gpu"), gpus=gpus,
                        source=_source_of(entry, sources, where),
                        accelerator=_text(entry.get("accelerator")))


def _gpu_name(name: str, raw: Any, sources: dict[str, TableSource]) -> GpuName:
    """One `gpuhunt_gpus` entry: exactly one of gpu (with memory_gb), untracked, ambiguous."""
    where = f"gpuhunt_gpus.{name}"
    entry = _as_mapping(raw, where)
    _only(entry, {"gpu", "memory_gb", "untracked", "ambiguous", "source"}, where)
    said = [k for k in ("gpu", "untracked", "ambiguous") if entry.get(k) is not None]
    if len(said) != 1:
        raise ValueError(f"instance table: {where}: give exactly one of `gpu`, `untracked` "
                         "and `ambiguous`")
    memory = entry.get("memory_gb")
    if "gpu" in said and (isinstance(memory, bool) or not isinstance(memory, int | float)
                          or not 1 <= memory <= 10000):
        raise ValueError(f"instance table: {where}: `memory_gb` (the whole GPU's, 1 to "
                         f"10000) is needed with `gpu`, got {memory!r}")
    return GpuName(name=name, source=_source_of(entry, sources, where),
                   gpu=_key(entry["gpu"], where, "gpu") if "gpu" in said else None,
                   memory_gb=float(memory) if "gpu" in said else None,
                   untracked=_text(entry.get("untracked")),
                   ambiguous=_text(entry.get("ambiguous")))


def _reasons(raw: Any, where: str) -> dict[str, str]:
    reasons = {}
    for pattern, why in _as_mapping(raw, where).items():
        text = _text(why)
        if text is None:
            raise ValueError(f"instance table: {where}.{pattern}: say why it is untracked")
        reasons[str(pattern)] = text
    return reasons


def _text(raw: Any) -> str | None:
    if raw is None or isinstance(raw, dict | list):
        return None
    return str(raw).strip() or None
