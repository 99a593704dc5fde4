"""A TCO comparison calls a winner only when the model's band and the cost ranges allow it."""

from __future__ import annotations

from pipelines.jobs.tco import SETTLE, verdict


def band(p10: float, p90: float) -> dict[str, float]:
    return {"p10": p10, "p50": (p10 + p90) / 2, "p90": p90}


def test_overlapping_speed_up_and_break_even_bands_are_too_close_to_call():
    call = verdict({"speedup": band(0.92, 1.32), "break_even_speedup": band(1.07, 1.07)},
                   "nvl72")
    assert call == {"call": "too close to call", "settle_with": SETTLE}


def test_separate_bands_name_the_cheaper_option():
    call = verdict({"speedup": band(1.20, 1.40), "break_even_speedup": band(1.05, 1.10)},
                   "nvl72")
    assert call == {"call": "nvl72", "settle_with": None}


def test_without_a_modelled_speed_up_there_is_no_call():
    assert verdict({"break_even_speedup": band(1.05, 1.10)}, None)["call"] is None
