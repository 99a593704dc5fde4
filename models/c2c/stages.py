"""How a pipeline splits the layers: even shares, or the first and last stages given
(Megatron's decoder_first/last_pipeline_num_layers) and the rest split over the others, or
with the embedding and the loss each counted as a layer (Megatron's
account_for_embedding/loss_in_pipeline_split: 126 layers on PP16 x VP4 = 64 chunks of 2,
the first chunk holding the embedding and one layer, the last one layer and the loss)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from models.c2c.spec import FloatArray, Layouts, TransformerSpec


@dataclass(frozen=True)
class StageLayers:
    """Layers on the first stage, on each middle stage (at most), and on the last stage;
    `embedded`: the embedding and the loss take a layer's place in the first and last chunk."""

    first: FloatArray
    middle: FloatArray
    last: FloatArray
    embedded: npt.NDArray[np.bool_]

    @property
    def most(self) -> FloatArray:
        return np.maximum(np.maximum(self.first, self.middle), self.last)


def stage_layers(model: TransformerSpec, lay: Layouts) -> StageLayers:
    """Layers per stage. A stage not given gets an even share of what the given ones leave,
    rounded up (94 layers on 4 stages: 24, 24, 24, 22 -> 24 on the busiest)."""
    pp = lay.pp.astype(np.float64)
    single = pp <= 1
    chunks = lay.pp * lay.interleave
    uneven = (lay.first_stage_layers > 0) | (lay.last_stage_layers > 0)
    if uneven.any():
        first_given = lay.first_stage_layers.astype(np.float64)
        last_given = lay.last_stage_layers.astype(np.float64)
        given = (first_given > 0).astype(np.float64) + (last_given > 0)
        others = np.maximum(pp - given, 0.0)
        rest = np.maximum(model.layers - first_given - last_given, 0.0)
        share = np.ceil(np.divide(rest, others, out=np.zeros_like(rest), where=others > 0))
        first = np.where(single, float(model.layers),
                         np.where(first_given > 0, first_given, share))
        last = np.where(single, float(model.layers), np.where(last_given > 0, last_given, share))
    else:  # the sweep's case: even shares
        share = np.ceil(model.layers / pp)
        first = last = np.where(single, float(model.layers), share)
    middle = np.where(pp > 2, share, 0.0)
    embedded = ~uneven & (lay.pp > 1) & (model.layers % chunks != 0)
    if embedded.any():
        embedded &= (model.layers + 2) % chunks == 0
        per_stage = (model.layers + 2) / pp
        first = np.where(embedded, per_stage - 1, first)
        last = np.where(embedded, per_stage - 1, last)
        middle = np.where(embedded & (pp > 2), per_stage, middle)
    return StageLayers(first=first, middle=middle, last=last, embedded=embedded)
