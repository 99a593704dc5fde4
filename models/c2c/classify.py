"""C2C classes and the fabric a result points to (docs/c2c-method.md#classes-and-fabric)."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from models.c2c import calibration as cal
from models.c2c.spec import FloatArray, IntArray

COMPUTE_BOUND = "compute-bound"
PERFORMANCE_SENSITIVE = "performance-sensitive"
COMMUNICATION_BOUND = "communication-bound"

SCALE_UP = "scale-up (NVL72-class)"
INFINIBAND = "scale-out InfiniBand"
ETHERNET = "scale-out Ethernet (RoCE)"

# A model-parallel group wider than an 8-GPU node needs a larger NVLink domain.
NODE_GPUS = 8


def c2c_class(c2c: FloatArray) -> npt.NDArray[np.str_]:
    """<0.2 compute-bound, 0.2-0.6 performance-sensitive, >0.6 communication-bound."""
    return np.where(c2c < cal.COMPUTE_BOUND_BELOW, COMPUTE_BOUND,
                    np.where(c2c > cal.COMMUNICATION_BOUND_ABOVE, COMMUNICATION_BOUND,
                             PERFORMANCE_SENSITIVE))


def recommended_fabric(c2c_scale_up: FloatArray, c2c_scale_out: FloatArray,
                       model_parallel_gpus: IntArray) -> npt.NDArray[np.str_]:
    """Scale-up when the NVLink tier or the NICs are communication-bound, or when the
    TP x EP group spans more than a node; otherwise the scale-out C2C picks the fabric:
    performance-sensitive traffic wants InfiniBand, compute-bound traffic is fine on
    Ethernet."""
    needs_scale_up = ((c2c_scale_up > cal.COMMUNICATION_BOUND_ABOVE)
                      | (c2c_scale_out > cal.COMMUNICATION_BOUND_ABOVE)
                      | (model_parallel_gpus > NODE_GPUS))
    return np.where(needs_scale_up, SCALE_UP,
                    np.where(c2c_scale_out >= cal.COMPUTE_BOUND_BELOW, INFINIBAND, ETHERNET))
