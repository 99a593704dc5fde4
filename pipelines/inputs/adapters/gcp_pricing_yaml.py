"""The "Google Cloud Pricing Cost Calculator" `pricing.yml`
(github.com/Cyclenerd/google-cloud-pricing-cost-calculator) as GPU-hour prices: up to four
offers per GPU machine type and region, on-demand (`hour`), spot (`hour_spot`), and 1-year and
3-year commitments (`month_1y`, `month_3y`).

The file is the tool's own YAML, built weekly from the Cloud Billing Catalog SKUs:
`compute.instance.<machine type>` holds the VM's `cpu`, `ram`, `local-ssd`, its GPU count under
a key named after the GPU (`a100: 8`, `a100-80gb: 8`, `h100-80gb: 8`, `h100-80gb-mega: 8`,
`l4: 1`, `rtx6000: 0.125`), and `cost.<region>` with the whole VM's prices in USD: `hour`,
`hour_spot`, `month`, `month_spot` and, where Google sells a commitment, `month_1y` and
`month_3y`. The VM price is the tool's sum of the GPU, vCPU, RAM (and bundled local SSD) SKUs.

- On-demand is `hour` and spot `hour_spot`, per VM-hour. `month` and `month_spot` are not read:
  they are `hour` x 730 (less the sustained-use discount on the families that have one).
- Commitments are priced per month only: an offer of `month_1y` / `month_3y` divides by 730
  hours, the month the file itself uses (pricing.pl `--hours`, default 730, "same as Google
  Cloud Pricing Calculator").
- The file has no DWS / flex-start (calendar-mode) line: its `hour` is the on-demand SKUs' sum
  (a3-highgpu-8g in us-central1: 88.49 USD/h, 11.06 per GPU-hour), not the flex-start GPU price
  another catalog lists for the same machine (4.20 per GPU-hour in SkyPilot's GCP catalog). A
  price key other than the six above (a future `hour_dws`...) is never read as any term; the
  notes name it.
- The `license` section (OS licences per machine type) and the disks, network and storage
  prices are not offers and are not read.

Which GPU item a machine type carries comes from data/instances.yaml: a listed machine type
must agree with it on the GPU count (else its prices are rejected); an untracked one (g2 with
L4, g4 with RTX PRO 6000) is skipped; one without a GPU key (n2, c3 ...) is not a GPU machine
and is skipped; any other GPU machine type is rejected, each price naming its line and key
path, so that someone adds it to the table.

Accounting: what is read is a price, one term's key in one `cost.<region>` block (a block that
is not a mapping, a block with no term key, or a machine type with no `cost` blocks counts
once). Every one is an offer, a rejection, or a skip counted with its reason in the notes.

Dated by the file's own `about.generated` ("Thu Jul  2 06:56:58 2026"), else
`about.timestamp` (Unix seconds, UTC), else --as-of, else a YYYY-MM-DD in the file's name;
never the day it is read. A file that ends before its top-level `region:` section (written
after `compute:`; the tool writes its keys in order) is refused as truncated.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, date, datetime
from typing import Any

from pipelines.inputs.adapters.base import (
    AdapterError,
    AdapterOptions,
    Parsed,
    date_in_name,
    decode,
)
from pipelines.inputs.adapters.instances import InstanceSpec, InstanceTable
from pipelines.inputs.adapters.offers import (
    Offer,
    OfferSink,
    check_size,
    instance_table,
    positive_price,
    trimmed,
    written,
)
from pipelines.inputs.packs import Pack, SourceDecl
from pipelines.inputs.yaml_lines import YamlError, load_yaml

FORMAT = "gcp-pricing-yaml"
PROVIDER = "gcp"
CURRENCY = "USD"  # the file writes no currency: every price in it is USD
SOURCE_URL = "https://github.com/Cyclenerd/google-cloud-pricing-cost-calculator"
PUBLISHER = "Google Cloud Pricing Cost Calculator (Nils Knieling)"
# Google's month is 730 hours (the file's `month` is `hour` x 730): a commitment's monthly
# price is spread over 730 hours, not over the year's 8,760 as a whole-term price would be.
HOURS_PER_MONTH = 730
# (term, the key of its price in cost.<region>, the hours that price is for, unit as written)
TERMS = (("on_demand", "hour", 1, "hour"), ("spot", "hour_spot", 1, "hour"),
         ("reserved_1y", "month_1y", HOURS_PER_MONTH, "month"),
         ("reserved_3y", "month_3y", HOURS_PER_MONTH, "month"))
TERM_KEYS = tuple(key for _, key, _, _ in TERMS)
# Price keys known and deliberately not read (derived from `hour` and `hour_spot`).
DERIVED_KEYS = ("month", "month_spot")
# A machine type's keys that are not its GPU count; any other key names its GPU.
HOST_KEYS = frozenset({"cost", "cpu", "ram", "local-ssd", "type"})
_SNIFF_BYTES = 16 * 1024
_ABOUT = re.compile(r"^about:[ \t]*\r?$", re.MULTILINE)
_ABOUT_KEYS = re.compile(r"^[ \t]+(?:generated|timestamp):|google-cloud-pricing-cost-calculator",
                         re.MULTILINE)
_COMPUTE = re.compile(r"^compute:[ \t]*\r?\n[ \t]+instance:[ \t]*\r?$", re.MULTILINE)
_GENERATED_FORMATS = ("%a %b %d %H:%M:%S %Y", "%a %b %d %H:%M:%S %Z %Y")
_TRAILING_COMMENT = re.compile(r"\s+#.*$")


def detect(name: str, data: bytes) -> str | None:
    """"gcp-pricing-yaml" when the head of the file has the tool's top-level `about:` (with
    `generated:`, `timestamp:` or the project's address) and a `compute:` -> `instance:`."""
    head = data[:_SNIFF_BYTES].decode("utf-8-sig", errors="replace")
    if _ABOUT.search(head) and _ABOUT_KEYS.search(head) and _COMPUTE.search(head):
        return FORMAT
    return None


def parse(name: str, data: bytes, options: AdapterOptions) -> Parsed:
    """Read one pricing.yml into on-demand, spot and commitment GPU machine offers."""
    check_size(data, options.limits)
    text = decode(data)
    try:
        document = load_yaml(text, options.limits)
    except YamlError as exc:
        raise AdapterError(exc.line, f"not a readable pricing.yml: {exc.reason}") from exc
    instances = _instances(document, text)
    sink = OfferSink(Parsed(FORMAT, Pack()), options.limits)
    as_of, generated = _as_of(document, name, options, sink.parsed.notes)
    reader = _Reader(text.split("\n"), instance_table(options), sink, as_of,
                     _source(as_of, generated))
    duplicated = _duplicates(instances)
    for machine, entry in instances.items():
        reader.read_machine(str(machine), entry, instances.key_line(str(machine)),
                            duplicated.get(str(machine)))
    if reader.unknown_keys:
        keys = ", ".join(sorted(reader.unknown_keys))
        sink.parsed.notes.append(
            f"price key(s) {keys} of GPU machine types ignored: only {', '.join(TERM_KEYS)} "
            f"are read as terms ({', '.join(DERIVED_KEYS)} are derived from them)")
    return sink.finish("price(s)")


def _instances(document: Any, text: str) -> dict[Any, Any]:
    """compute.instance, or AdapterError when the file is not a whole pricing.yml."""
    if not isinstance(document, dict):
        raise AdapterError(1, "not a pricing.yml: expected a mapping with `about`, `compute` "
                              "and `region`")
    compute = document.get("compute")
    instances = compute.get("instance") if isinstance(compute, dict) else None
    if not isinstance(instances, dict) or not instances:
        raise AdapterError(getattr(compute, "line", 1), (
            "not a pricing.yml: no `compute.instance` mapping of machine types"))
    if not isinstance(document.get("region"), dict):
        last = text.count("\n") + (0 if text.endswith("\n") else 1)
        raise AdapterError(last, (
            "truncated pricing.yml: it ends (line "
            f"{last:,}) before the top-level `region:` section the tool writes after "
            "`compute:`; fetch the whole file"))
    return instances


def _as_of(document: dict[Any, Any], name: str, options: AdapterOptions,
           notes: list[str]) -> tuple[date, str | None]:
    """The price date and the generation text it was read from (None: not from the file)."""
    about = document.get("about")
    about = about if isinstance(about, dict) else {}
    generated, stamp = about.get("generated"), about.get("timestamp")
    found: date | None = None
    said: str | None = None
    if generated is not None:
        said = " ".join(str(generated).split())
        found = _generated_day(said)
        if found is None:
            notes.append(f"about.generated {said!r} is not a date: the file is dated otherwise")
    if found is None and stamp is not None:
        found = _timestamp_day(stamp)
        said = f"timestamp {stamp}" if found is not None else said
    if found is not None:
        if options.as_of is not None and options.as_of != found:
            notes.append(f"--as-of {options.as_of.isoformat()} not used: the file says it was "
                         f"generated on {found.isoformat()} ({said})")
        return found, said
    fallback = options.as_of or date_in_name(name)
    if fallback is None:
        raise AdapterError(None, "as_of needed: the file has no readable about.generated or "
                                 "about.timestamp; give --as-of or a YYYY-MM-DD in the file's "
                                 "name (pricing_2026-07-02.yml)")
    return fallback, None


def _generated_day(text: str) -> date | None:
    for pattern in _GENERATED_FORMATS:
        try:
            return datetime.strptime(text, pattern).date()
        except ValueError:
            continue
    try:
        return date.fromisoformat(text[:10])
    except ValueError:
        return None


def _timestamp_day(raw: Any) -> date | None:
    if isinstance(raw, bool) or not isinstance(raw, int) or not 0 < raw < 10**11:
        return None
    return datetime.fromtimestamp(raw, UTC).date()


def _duplicates(mapping: Any) -> dict[str, int]:
    """Key -> line of its second writing (load_yaml keeps the first), for a YamlMap."""
    return dict(reversed(getattr(mapping, "duplicates", [])))


@dataclass(frozen=True)
class _Price:
    """One candidate: a term's price in one region block, or a block or machine type that
    counts once because it holds no price to read."""

    line: int
    path: str  # the YAML key path: compute.instance.<type>.cost.<region>.<key>
    first: int  # the lines its raw text spans
    last: int
    region: str = ""
    term: str = ""  # "" when there is no price (problem, or a block with no term key)
    key: str = ""
    value: Any = None
    problem: str | None = None  # a reason to reject it whatever the machine type
    extra: tuple[str, ...] = ()  # the block's keys that are not prices read (on its first)


class _Reader:
    def __init__(self, lines: list[str], table: InstanceTable, sink: OfferSink, as_of: date,
                 source: SourceDecl) -> None:
        self.lines, self.table, self.sink, self.as_of = lines, table, sink, as_of
        self.source = source
        self.unknown_keys: set[str] = set()

    def read_machine(self, machine: str, entry: Any, line: int,
                     written_again: int | None) -> None:
        if not isinstance(entry, dict):
            self._reject_all(self._prices(machine, entry, line), (
                f"{machine} is not a mapping of cpu, ram, GPU count and cost"))
            return
        gpu_keys = [key for key in entry if str(key) not in HOST_KEYS]
        spec = self.table.instance(PROVIDER, machine)
        if spec is None:
            untracked = self.table.untracked(PROVIDER, machine)
            if untracked is not None:
                self.sink.skip(f"untracked GPU machine type ({untracked})", _count(entry))
            elif not gpu_keys:
                self.sink.skip("not a GPU machine type (no GPU count key)", _count(entry))
            else:
                counts = ", ".join(f"{key}: {entry[key]}" for key in gpu_keys)
                self._reject_all(self._prices(machine, entry, line), (
                    f"unknown GPU machine type {machine} ({counts}): add it to "
                    "data/instances.yaml with its source"))
            return
        problem = _disagreement(machine, entry, gpu_keys, spec)
        if problem is None and written_again is not None:
            problem = (f"{machine} is written twice (lines {line} and {written_again}): which "
                       "prices are its own cannot be told")
        if problem is not None:
            self._reject_all(self._prices(machine, entry, line), problem)
            return
        for price in self._prices(machine, entry, line):
            self._read_price(price, spec)

    def _prices(self, machine: str, entry: Any, line: int) -> Iterator[_Price]:
        """The machine type's candidates, in the file's order."""
        path = f"compute.instance.{machine}"
        cost = entry.get("cost") if isinstance(entry, dict) else None
        if not isinstance(cost, dict) or not cost:
            where = getattr(cost, "line", None) or (entry.key_line("cost")
                                                    if hasattr(entry, "key_line") else line)
            yield _Price(where, f"{path}.cost", line, where,
                         problem=f"{machine} has no cost.<region> prices")
            return
        again = _duplicates(cost)
        for region_key, block in cost.items():
            region = str(region_key).strip() if isinstance(region_key, str) else ""
            start = cost.key_line(str(region_key))
            block_path = f"{path}.cost.{region_key}"
            if not region:
                yield _Price(start, block_path, start, _last_line(block, start),
                             problem=f"region {region_key!r} is not a region name")
                continue
            if not isinstance(block, dict):
                yield _Price(start, block_path, start, start, region,
                             problem=f"cost.{region} is not a mapping of prices")
                continue
            end = _last_line(block, start)
            twice = again.get(str(region_key))
            block_problem = (f"cost.{region} is written twice (lines {start} and {twice}): "
                             "which prices hold cannot be told") if twice is not None else None
            keys_again = _duplicates(block)
            extra = tuple(str(k) for k in block if k not in TERM_KEYS and k not in DERIVED_KEYS)
            present = False
            for term, key, _, _ in TERMS:
                if key not in block:
                    continue
                present = True
                key_twice = keys_again.get(key)
                problem = block_problem or (
                    f"{key} is written twice in cost.{region} (lines {block.key_line(key)} and "
                    f"{key_twice})" if key_twice is not None else None)
                yield _Price(block.key_line(key), f"{block_path}.{key}", start, end, region,
                             term, key, block[key], problem, extra)
                extra = ()
            if not present:
                yield _Price(start, block_path, start, end, region, problem=block_problem)

    def _read_price(self, price: _Price, spec: InstanceSpec) -> None:
        if price.problem is not None:
            self._reject(price, price.problem)
            return
        if not price.term:
            self.sink.skip("regions of a GPU machine type with no hour, hour_spot, month_1y "
                           "or month_3y price")
            return
        self.unknown_keys.update(price.extra)
        text = self._written(price)
        amount = positive_price(text if isinstance(price.value, float) else price.value)
        if amount is None:
            self._reject(price, f"{price.key} {text!r} is not a finite positive number")
            return
        _, _, hours, unit = next(t for t in TERMS if t[0] == price.term)
        offer = Offer(provider=PROVIDER, region=price.region, term=price.term, instance=spec,
                      price=amount, price_written=text, currency=CURRENCY, unit_written=unit,
                      hours=hours)
        self.sink.use_source(self.source)
        self.sink.add(offer, line=price.line, raw_text=self._raw(price), column=price.path,
                      as_of=self.as_of)

    def _written(self, price: _Price) -> str:
        """The price as the file wrote it: a number's digits from its line, else its text."""
        value = price.value
        if isinstance(value, float) and 0 < price.line <= len(self.lines):
            stripped = self.lines[price.line - 1].strip()
            if stripped.startswith(f"{price.key}:"):
                token = _TRAILING_COMMENT.sub("", stripped[len(price.key) + 1:]).strip()
                if token.lower().lstrip("+-") in (".inf", ".nan"):
                    return token  # YAML's infinity and not-a-number, as written
                try:
                    if float(token) == value:
                        return token
                except ValueError:
                    pass
            return repr(value)
        return written(value)

    def _raw(self, price: _Price) -> str:
        return trimmed("\n".join(line.rstrip("\r")
                                 for line in self.lines[price.first - 1:price.last]))

    def _reject(self, price: _Price, reason: str) -> None:
        self.sink.reject(price.line, price.path, reason, self._raw(price))

    def _reject_all(self, prices: Iterator[_Price], reason: str) -> None:
        for price in prices:
            self._reject(price, reason)


def _count(entry: dict[Any, Any]) -> int:
    """How many candidates _Reader._prices gives for a machine type, without building them."""
    cost = entry.get("cost")
    if not isinstance(cost, dict) or not cost:
        return 1
    return sum(max(1, sum(key in block for key in TERM_KEYS)) if isinstance(block, dict) else 1
               for block in cost.values())


def _last_line(value: Any, start: int) -> int:
    """The last line a block's keys are written on (its own line when it has none)."""
    key_lines = getattr(value, "key_lines", None) or {}
    return max([start, getattr(value, "line", start) or start, *key_lines.values()])


def _disagreement(machine: str, entry: dict[Any, Any], gpu_keys: list[Any],
                  spec: InstanceSpec) -> str | None:
    """Why the file's GPU count contradicts data/instances.yaml, else None."""
    said = f"data/instances.yaml says {spec.gpus} x {spec.gpu}: check the table"
    if not gpu_keys:
        return f"{machine} has no GPU count key here but {said}"
    if len(gpu_keys) > 1:
        return f"{machine} has GPU counts {', '.join(map(str, gpu_keys))} here but {said}"
    count = entry[gpu_keys[0]]
    if isinstance(count, bool) or not isinstance(count, int) or count != spec.gpus:
        return f"{machine} has {gpu_keys[0]}: {count} here but {said}"
    return None


def _source(as_of: date, generated: str | None) -> SourceDecl:
    when = f"generated {generated}" if generated else f"as of {as_of.isoformat()}"
    return SourceDecl(
        key=f"gcp-pricing-yml-{as_of.isoformat()}", kind="dataset", publisher=PUBLISHER,
        url=SOURCE_URL,
        title=f"Google Cloud Pricing Cost Calculator, pricing.yml: Compute Engine machine type "
              f"prices per region ({when})",
        published_on=as_of)
