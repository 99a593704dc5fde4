"""A TCO comparison calls a winner only when the model's band and the cost ranges allow it:
one rule (models.tco.decision), stored with the result and read by every output."""

from __future__ import annotations

import pytest

from models.tco.decision import SETTLE, TOO_CLOSE, Band, comparison_verdict


def test_overlapping_speed_up_and_break_even_bands_are_too_close_to_call():
    verdict = comparison_verdict("nvl72", "hgx", Band(1.10, 0.92, 1.32), Band(1.07, 1.07, 1.07))
    assert verdict.call == TOO_CLOSE and verdict.settle_with == SETTLE
    assert verdict.margin is not None and verdict.margin.p10 < 0 < verdict.margin.p90


def test_separate_bands_name_the_cheaper_option_with_its_margin():
    verdict = comparison_verdict("nvl72", "hgx", Band(1.30, 1.20, 1.40), Band(1.08, 1.05, 1.10))
    assert verdict.call == "nvl72" and verdict.settle_with is None
    assert verdict.to_json()["saving"] == pytest.approx(1 - 1.08 / 1.30)
    assert verdict.to_json()["saving_p10"] == pytest.approx(1 - 1.10 / 1.20)


def test_a_scale_out_option_can_win():
    verdict = comparison_verdict("nvl72", "hgx", Band(1.00, 0.98, 1.02), Band(1.20, 1.18, 1.22))
    assert verdict.call == "hgx"


def test_without_a_modelled_speed_up_there_is_no_call():
    verdict = comparison_verdict("nvl72", "hgx", None, Band(1.07, 1.05, 1.10))
    assert verdict.call is None and verdict.to_json()["saving"] is None


@pytest.mark.parametrize(("p10", "p90"), [(0.9, 1.07), (1.07, 1.2)])
def test_bands_that_touch_are_too_close_to_call(p10, p90):
    # s's band ends where s*'s begins: at that end the two options cost the same.
    verdict = comparison_verdict("nvl72", "hgx", Band(1.0 if p90 == 1.07 else 1.1, p10, p90),
                                 Band(1.07, 1.07, 1.07))
    assert verdict.call == TOO_CLOSE
