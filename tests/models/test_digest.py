from models.digest import EMPTY_DIGEST, combine, observation_digest

A = observation_digest(("nvlink-5", "scaleup_bw_per_gpu_bidir", "nvidia", 1800.0))
B = observation_digest(("gb200-nvl72", "rack_it_power", "nvidia", 126.0))


def test_the_set_digest_ignores_order():
    assert combine(EMPTY_DIGEST, [A, B]) == combine(EMPTY_DIGEST, [B, A])


def test_removing_what_was_added_gives_the_previous_digest():
    both = combine(EMPTY_DIGEST, [A, B])
    assert combine(both, removed=[B]) == combine(EMPTY_DIGEST, [A])
    assert combine(both, removed=[A, B]) == EMPTY_DIGEST


def test_any_field_changes_the_observation_digest():
    assert observation_digest(("x", 1.0)) != observation_digest(("x", 1.0000001))
    assert observation_digest(("x", None)) != observation_digest(("x", "None "))


def test_an_observation_digest_is_the_one_ledgers_already_hold():
    """Stored digests are compared with new ones at every ingest: the text hashed for each
    type of value never changes (text as itself, None as "", floats by repr, dates and times
    by isoformat, anything else by str)."""
    from datetime import date, datetime
    from decimal import Decimal

    fields = ("h100", "gpu_hour_price", "azure", date(2026, 11, 23), 12.29, -0.0, float("inf"),
              None, 8, True, datetime(2026, 1, 2, 3, 4), Decimal("98.320"), "ünï")
    assert observation_digest(fields) == (
        "22cc4a6d65156df08262a52436b420177e5c8236fb24738edc939fc5eac22b90")
