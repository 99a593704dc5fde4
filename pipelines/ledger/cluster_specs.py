"""A scenario's cluster as figures: inline values first, then the ledger (as of a dataset
version), then the model's documented defaults; each figure says where it came from."""

from __future__ import annotations

from datetime import date, datetime

from db.engine import Session
from db.queries import item_family, measured_run_shape
from models.c2c import calibration as cal
from models.c2c.spec import ClusterSpec, Precision
from models.units import si_factor
from pipelines.inputs.scenarios import ClusterRequest
from pipelines.ledger.figures import FigureUsed, figure_date, undated_note
from pipelines.ledger.resolved import resolved_value

# Peak nccl-tests bus bandwidth per GPU on a fabric item (ingested from nccl-tests output).
MEASURED_BUSBW = "busbw_measured"


class MissingSpec(LookupError):
    """A figure the model needs that neither the scenario nor the ledger gives."""


COUNTS = ("GPUs", "NICs")
# GPU <-> host memory when the scenario does not say: PCIe Gen5 x16, 64 GB/s each way (only
# activation offloading, parallel.offload_layers, uses it).
HOST_BW_DEFAULT = 64e9  # plain counts: no unit to convert
# (field, scenario key, ledger metric of the GPU item, the SI unit the model uses)
_GPU = (("peak_flops", "gpu_specs.peak", "peak_dense_bf16", "FLOP/s"),
        ("hbm_bytes", "gpu_specs.hbm", "hbm_capacity", "B"),
        ("hbm_bw", "gpu_specs.hbm_bw", "hbm_bandwidth", "B/s"))


class _Lookup:
    def __init__(self, session: Session | None, request: ClusterRequest, on: date,
                 known: datetime) -> None:
        self.session, self.request, self.on, self.known = session, request, on, known

    def ledger(self, name: str, item: str | None, metric: str, unit: str, scale: float = 1.0,
               origin: str = "ledger") -> FigureUsed | None:
        """The ledger's value of `metric` for `item` in the SI `unit` (pint converts from the
        metric's canonical unit in the catalogue), times `scale`; None when there is none."""
        if item is None or self.session is None:
            return None
        found = resolved_value(self.session, item, metric, on=self.on, known=self.known)
        if found is None:
            return None
        row = found.winner
        factor = scale if unit in COUNTS else scale * si_factor(row["unit"], unit)
        # A figure taken at a share of the metric (one direction of a both-directions rate)
        # says so: its value is not the metric's, and must not read as if it were.
        notes = [f"{scale:g} x {metric} ({float(row['value']):g} {row['unit']})"
                 if scale != 1.0 else None, undated_note(row)]
        note = "; ".join(n for n in notes if n) or None
        return FigureUsed(name, float(row["value"]) * factor, unit, origin, item=item,
                          metric=metric, source=row["source"],
                          as_of=figure_date(row),
                          observation_id=int(row["observation_id"]), note=note,
                          as_of_precision=row.get("as_of_precision"))

    def inline(self, name: str, key: str, unit: str, scale: float = 1.0) -> FigureUsed | None:
        quantity = self.request.inline.get(key)
        if quantity is None:
            return None
        return FigureUsed(name, quantity.value * scale, unit, "inline",
                        note=f"scenario {key}: {quantity.written}")

    def need(self, name: str, key: str, found: FigureUsed | None, item: str | None,
             metric: str) -> FigureUsed:
        if found is not None:
            return found
        where = (f"the ledger has no {metric} for item {item!r} valid on {self.on}"
                 if item else "no ledger item is named for it")
        raise MissingSpec(f"cluster.{key}: {where}; give cluster.{key} inline or ingest a "
                          f"source pack with that figure")


def resolve_cluster(request: ClusterRequest, session: Session | None, *, on: date,
                    known: datetime,
                    offloads: bool = False) -> tuple[ClusterSpec, list[FigureUsed]]:
    """The ClusterSpec a scenario runs on, and every figure used with its origin; the host
    link's bandwidth among them when the layout `offloads` activations (or it is given)."""
    look = _Lookup(session, request, on, known)
    used: dict[str, FigureUsed] = {}
    for name, key, metric, unit in _GPU:
        used[name] = look.need(name, key, look.inline(name, key, unit)
                               or look.ledger(name, request.gpu, metric, unit),
                               request.gpu, metric)
    used["domain_gpus"] = look.need(
        "domain_gpus", "scale_up.domain_gpus",
        look.inline("domain_gpus", "scale_up.domain_gpus", "GPUs")
        or look.ledger("domain_gpus", request.scale_up_system, "gpus_per_system", "GPUs"),
        request.scale_up_system, "gpus_per_system")
    used["scaleup_bw"] = _scale_up_bw(look)
    used.update(_scale_out(look))
    used.update(_efficiencies(look, used))
    gemm_peak = _gemm_peak(look)
    if gemm_peak is not None:
        used["gemm_peak_flops"] = gemm_peak
    host = look.inline("host_bw", "gpu_specs.host_bw", "B/s")
    if host is not None or offloads:  # listed only where the model reads it
        used["host_bw"] = host or FigureUsed(
            "host_bw", HOST_BW_DEFAULT, "B/s", "default",
            note="PCIe Gen5 x16, one direction (give cluster.gpu_specs.host_bw for "
                 "NVLink-C2C)")
    spec = ClusterSpec(peak_flops=used["peak_flops"].value, hbm_bytes=used["hbm_bytes"].value,
                       gemm_peak_flops=None if gemm_peak is None else gemm_peak.value,
                       arch=_arch(look),
                       hbm_bw=used["hbm_bw"].value, domain_gpus=int(used["domain_gpus"].value),
                       scaleup_bw=used["scaleup_bw"].value,
                       scaleout_bw=used["scaleout_bw_per_nic"].value
                       * used["nics_per_gpu"].value,
                       scaleup_efficiency=used["scaleup_efficiency"].value,
                       scaleout_efficiency=used["scaleout_efficiency"].value,
                       scaleup_latency=used["scaleup_latency"].value,
                       scaleout_latency=used["scaleout_latency"].value,
                       host_bw=used["host_bw"].value if "host_bw" in used
                       else HOST_BW_DEFAULT)
    return spec, list(used.values())


def _gemm_peak(look: _Lookup) -> FigureUsed | None:
    """The dense peak of the scenario's GEMM precision (FP8 or FP4): inline, else the GPU
    item's peak_dense_fp8 / peak_dense_fp4 in the ledger; None in BF16 (peak_flops is it)."""
    precision = look.request.precision
    if precision == Precision.BF16:
        return None
    key = "gpu_specs.peak_fp4" if precision == Precision.FP4 else "gpu_specs.peak_fp8"
    metric = precision.peak_metric
    return look.need("gemm_peak_flops", key,
                     look.inline("gemm_peak_flops", key, "FLOP/s")
                     or look.ledger("gemm_peak_flops", look.request.gpu, metric, "FLOP/s"),
                     look.request.gpu, metric)


def _arch(look: _Lookup) -> str:
    """The architecture whose compute efficiencies apply: gpu_specs.arch, else the GPU item's
    family in the ledger (Hopper, Blackwell, ...), else the pooled "generic"."""
    if look.request.arch:
        return cal.ARCH_OF_FAMILY.get(look.request.arch, look.request.arch)
    if look.session is None or look.request.gpu is None:
        return cal.GENERIC_ARCH
    family = item_family(look.session, look.request.gpu)
    return cal.ARCH_OF_FAMILY.get((family or "").strip().lower(), cal.GENERIC_ARCH)


def _scale_up_bw(look: _Lookup) -> FigureUsed:
    """Per-GPU, per-direction scale-up bandwidth: inline, else a measured bus bandwidth on the
    scale-up item (nccl-tests in one node), else half the bidirectional line rate."""
    item, key = look.request.scale_up_item, "scale_up.bw_per_gpu_bidir"
    found = (look.inline("scaleup_bw", key, "B/s", 0.5)
             or _measured(look.ledger("scaleup_bw", item, MEASURED_BUSBW, "B/s",
                                      origin="measured"), "")
             # one direction of a bidirectional figure
             or look.ledger("scaleup_bw", item, "scaleup_bw_per_gpu_bidir", "B/s", 0.5))
    return look.need("scaleup_bw", key, found, item, "scaleup_bw_per_gpu_bidir")


def _scale_out(look: _Lookup) -> dict[str, FigureUsed]:
    """Per-NIC bandwidth: a measured bus bandwidth when there is one (inline, per GPU from an
    nccl-tests run on the scale-out item, or per NIC in the ledger), else the line rate, which
    the default efficiency then discounts."""
    item = look.request.scale_out_item
    value, unit, note = cal.CLUSTER_DEFAULTS["nics_per_gpu"]
    nics = look.inline("nics_per_gpu", "scale_out.nics_per_gpu", unit) or FigureUsed(
        "nics_per_gpu", value, unit, "default", note=note)
    per_nic = look.inline("scaleout_bw_per_nic", "scale_out.busbw_per_nic", "B/s")
    run = None if per_nic else look.ledger("scaleout_bw_per_nic", item, MEASURED_BUSBW,
                                           "B/s", origin="measured")
    if run is not None:  # it covers all the GPU's NICs in the measured system
        nics = FigureUsed("nics_per_gpu", 1.0, "NICs", "measured", note=(
            "the measured bus bandwidth is per GPU, all its NICs together; the scenario's "
            f"nics_per_gpu ({nics.value:g}) is not applied again"))
        return {"scaleout_bw_per_nic": _measured(_per_rail(look, run), " per GPU"),
                "nics_per_gpu": nics}
    per_nic = per_nic or look.ledger("scaleout_bw_per_nic", item, "nic_busbw_measured",
                                     "B/s", origin="measured")
    measured = per_nic is not None
    per_nic = per_nic or look.inline("scaleout_bw_per_nic", "scale_out.nic_rate", "B/s") \
        or look.ledger("scaleout_bw_per_nic", item, "port_rate", "B/s")
    found = look.need("scaleout_bw_per_nic", "scale_out.nic_rate", per_nic, item, "port_rate")
    return {"scaleout_bw_per_nic": _measured(found, "") if measured else found,
            "nics_per_gpu": nics}


def _per_rail(look: _Lookup, run: FigureUsed) -> FigureUsed:
    """A multi-node nccl-tests busbw per GPU of one rail. With G GPUs per node all in one
    collective, NCCL's rings share the node's G rails, so a rank's busbw approaches G x one
    rail's rate (8 x 25 GB/s ~ 190 GB/s on 8x HDR A100 nodes). The model's scale-out groups
    (one GPU per node per group, groups side by side) each get one rail: busbw / G."""
    shape = (measured_run_shape(look.session, run.observation_id)
             if look.session is not None and run.observation_id is not None else None)
    if shape is None or shape[1] <= 1:
        return run
    nodes, per_node = shape
    return FigureUsed(**{**run.to_json(), "value": run.value / per_node,
                       "note": f"{run.value / 1e9:.4g} GB/s busbw of a {nodes}-node x "
                               f"{per_node}-GPU run / {per_node} GPUs sharing the node's rails"})


def _measured(found: FigureUsed | None, scope: str) -> FigureUsed | None:
    """A measured figure, marked so: it is used at efficiency 1.0 (it already includes it)."""
    if found is None:
        return None
    what = (f"measured bus bandwidth{scope} ({found.metric} of {found.item}, "
            f"{found.source}, {found.as_of})" if found.source else "measured bus bandwidth")
    if found.note:  # how a run's figure became this one
        what = f"{what}: {found.note}"
    return FigureUsed(**{**found.to_json(), "origin": "measured",
                       "note": f"{what}: used at efficiency 1.0 instead of the line rate x "
                               "the default efficiency"})


def _efficiencies(look: _Lookup, used: dict[str, FigureUsed]) -> dict[str, FigureUsed]:
    """Efficiencies and latencies: inline, else the model's default (models.c2c.calibration),
    except that a measured bus bandwidth is used at efficiency 1.0 (it already includes it)."""
    measured = {"scaleup_efficiency": used["scaleup_bw"].origin == "measured",
                "scaleout_efficiency": used["scaleout_bw_per_nic"].origin == "measured"}
    keys = {"scaleup_efficiency": "scale_up.efficiency", "scaleout_efficiency":
            "scale_out.efficiency", "scaleup_latency": "scale_up.latency",
            "scaleout_latency": "scale_out.latency"}
    out = {}
    for name, key in keys.items():
        value, unit, note = cal.CLUSTER_DEFAULTS[name]
        if measured.get(name):
            value, note = 1.0, "measured bus bandwidth already includes it"
        out[name] = look.inline(name, key, unit) or FigureUsed(name, value, unit, "default",
                                                             note=note)
    return out
