"""A serving scenario's verdict in one sentence: which option is cheaper per million output
tokens, by how much, and how the band was built."""

from __future__ import annotations

from dataclasses import replace

from reports.decisions import PAIRED_NOTE, band_basis, serving_dates, serving_verdict
from tests.support.contexts import serving


def test_the_verdict_names_the_cheaper_option_its_margin_and_band():
    [line] = serving()
    text = serving_verdict(line)
    assert text == ("gb200-nvl72-ep72 costs $0.148 per million output tokens at 35 tokens/s "
                    "per user, 86.7 % less than b200-ep16-ndr ($1.11), 80 % band +52 % to +92 % "
                    "(each option at its owner's cost per GPU-hour).")
    assert PAIRED_NOTE not in text


def test_two_measured_curves_give_a_measured_margin_not_a_band():
    [line] = serving()
    both = replace(line, options=tuple(replace(o, source="measured") for o in line.options),
                   saving_p10=line.saving, saving_p90=line.saving)
    text = serving_verdict(both)
    assert "86.7 % less than b200-ep16-ndr ($1.11), both measured (each option" in text
    assert "P10–P90" not in text
    assert "80 % band +52 % to +92 %" in serving_verdict(line)   # one measured: the model's band


def test_a_paired_band_says_the_two_estimates_errors_were_taken_together():
    [line] = serving()
    text = serving_verdict(replace(line, saving_basis="paired"))
    assert text.endswith("80 % band +52 % to +92 % (each option at its owner's cost per GPU-hour; "
                         "the two estimates' errors paired by GPU family).")
    too_close = serving_verdict(replace(line, saving_basis="paired", saving_p10=-0.1,
                                        too_close=True))
    assert too_close.startswith("Too close to call: ") and PAIRED_NOTE in too_close


def test_a_model_without_measured_serving_points_says_its_band_rests_on_other_models():
    [line] = serving()
    unmeasured = replace(line, model="llama-3.3-70b", model_measured=False)
    assert serving_verdict(unmeasured).endswith(
        "(each option at its owner's cost per GPU-hour; no llama-3.3-70b run among the model's "
        "measurements).")
    # Two measured curves carry no model error to qualify.
    both = replace(unmeasured, options=tuple(replace(o, source="measured")
                                             for o in line.options))
    assert "run among the model's measurements" not in serving_verdict(both)


def test_the_band_sentence_names_each_options_band_and_the_paired_margins():
    [line] = serving()
    assert band_basis(line).startswith("no measured serving point")   # one band: said once
    hopper = replace(line.options[1], band_basis="127 H100 / H200 points")
    paired = replace(line, options=(line.options[0], hopper), saving_basis="paired",
                     saving_note="293 comparisons of a B200 configuration against an H100 one")
    assert band_basis(paired) == (
        "gb200-nvl72-ep72: no measured serving point of this architecture: the priors, not a "
        "fit; b200-ep16-ndr: 127 H100 / H200 points. The margin's band: 293 comparisons of a "
        "B200 configuration against an H100 one")


def test_the_verdict_ends_with_how_old_the_compared_options_inputs_are():
    [line] = serving()
    gb200, b200 = line.options
    dated = replace(line, options=(
        replace(gb200, inputs_oldest="2024-03", inputs_newest="2026-05", inputs_undated=1),
        replace(b200, inputs_oldest="2025", inputs_newest="2026-08")))
    assert serving_dates(dated) == " Inputs dated 2024-03–2026-08 (1 undated)."
    assert serving_verdict(dated, brief=True).endswith(
        "80 % band +52 % to +92 %. Inputs dated 2024-03–2026-08 (1 undated).")
    # An option outside the comparison does not date it; nothing dated says nothing.
    third = replace(b200, name="h100", inputs_oldest="2019-01", inputs_newest="2019-01")
    assert serving_dates(replace(dated, options=(*dated.options, third))) == \
        serving_dates(dated)
    assert serving_dates(line) == ""


def test_a_family_short_of_the_calibration_targets_gives_no_verdict_in_one_number():
    """Issue 41: a model estimate whose GPU family misses the targets prints no band nobody
    can use; the sentence says "No verdict" and the family's one number instead."""
    [line] = serving()
    short = replace(line, short_of_targets=(("Blackwell", "62.7 % off", "≤ 20 %"),))
    text = serving_verdict(short)
    assert text.startswith("No verdict: gb200-nvl72-ep72 costs $0.148 per million output")
    assert "($1.11), no band: model 62.7 % off on Blackwell" in text
    assert "80 % band" not in text and "Too close to call" not in text
    # Two families, each its own number; a close call short of the targets is no verdict too.
    both = replace(short, too_close=True, short_of_targets=(
        ("Hopper", "27.4 % off", "≤ 20 %"), ("Blackwell", "62.7 % off", "≤ 20 %")))
    assert "no band: model 27.4 % off on Hopper, 62.7 % off on Blackwell (each" in (
        text := serving_verdict(both))
    assert text.startswith("No verdict:")


def test_each_option_names_its_engine_once_for_both_when_shared_and_not_on_page_one():
    [line] = serving()
    gb200, b200 = line.options
    laid = (replace(gb200, layout="DP72 x EP72", layout_note="best of 838"),
            replace(b200, layout="DP16 x EP16", layout_note="best of 126"))
    shared = replace(line, options=tuple(replace(o, engine="SGLang") for o in laid))
    text = serving_verdict(shared)
    assert "(DP72 x EP72, best of 838)" in text and "both on SGLang" in text
    assert "SGLang" not in serving_verdict(shared, brief=True)  # page 1: a line each
    apart = replace(line, options=(replace(laid[0], engine="SGLang"),
                                   replace(laid[1], engine="TensorRT-LLM")))
    text = serving_verdict(apart)
    assert "(DP72 x EP72, SGLang, best of 838)" in text
    assert "(DP16 x EP16, TensorRT-LLM, best of 126)" in text and "both on" not in text
