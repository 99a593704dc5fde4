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
