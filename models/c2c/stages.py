"""How a pipeline splits the layers: even shares, or the first and last stages given
(Megatron's decoder_first/last_pipeline_num_layers) and the rest split over the others."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from models.c2c.spec import FloatArray, Layouts, TransformerSpec


@dataclass(frozen=True)
class StageLayers:
    """Layers on the first stage, on each middle stage (at most), and on the last stage."""

    first: FloatArray
    middle: FloatArray
    last: FloatArray

    @property
    def most(self) -> FloatArray:
        return np.maximum(np.maximum(self.first, self.middle), self.last)


def stage_layers(model: TransformerSpec, lay: Layouts) -> StageLayers:
    """Layers per stage. A stage not given gets an even share of what the given ones leave,
    rounded up (94 layers on 4 stages: 24, 24, 24, 22 -> 24 on the busiest)."""
    first_given = lay.first_stage_layers.astype(np.float64)
    last_given = lay.last_stage_layers.astype(np.float64)
    pp = lay.pp.astype(np.float64)
    given = (first_given > 0).astype(np.float64) + (last_given > 0)
    others = np.maximum(pp - given, 0.0)
    rest = np.maximum(model.layers - first_given - last_given, 0.0)
    share = np.ceil(np.divide(rest, others, out=np.zeros_like(rest), where=others > 0))
    single = pp <= 1
    first = np.where(single, float(model.layers), np.where(first_given > 0, first_given, share))
    last = np.where(single, float(model.layers), np.where(last_given > 0, last_given, share))
    middle = np.where(pp > 2, share, 0.0)
    return StageLayers(first=first, middle=middle, last=last)
