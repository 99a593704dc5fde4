"""db/ may not import models/ (the layer rule), so the CHECK constraints keep their own copy
of the vocabularies; this keeps the copies equal."""

from db import schema
from models import observations, resolve


def test_source_kinds_match_the_resolution_rule():
    assert set(schema.SOURCE_KINDS) == set(resolve.SOURCE_KIND_RANK)


def test_value_kinds_and_statuses_match_validation():
    assert schema.VALUE_KINDS == observations.VALUE_KINDS
    assert schema.STATUSES == observations.STATUSES


def test_flag_kinds_and_severities_match_the_trends_model():
    from models.trends import types

    assert schema.FLAG_KINDS == types.FLAG_KINDS
    assert schema.FLAG_SEVERITIES == types.SEVERITIES


def test_fetch_outcomes_are_exactly_what_a_fetch_can_come_to():
    from itertools import product

    from pipelines.fetch.remote import decide_outcome

    produced = {decide_outcome(status, sha, previous, conditional)
                for status, sha, previous, conditional in product(
                    (200, 304, 404, 503, None), ("a", None), ("a", "b", None), (True, False))}
    assert produced == set(schema.FETCH_OUTCOMES)
