from dataclasses import replace
from datetime import UTC, date, datetime

from models.resolve import Candidate, disagree, resolve

T = datetime(2026, 1, 1, tzinfo=UTC)


def candidate(n, kind="secondary_press", as_of=date(2024, 3, 18), published=None, value=1.0):
    return Candidate(n, f"source-{n}", kind, published, as_of, T, value, value, value)


def test_no_candidates_resolve_to_nothing():
    assert resolve([]) is None


def test_source_kind_rank_decides_first_and_losers_are_kept():
    resolution = resolve([candidate(1, "secondary_press", date(2025, 1, 1), value=142),
                          candidate(2, "vendor_datasheet", date(2024, 1, 1), value=120)])
    assert resolution.winner.observation_id == 2
    assert [c.observation_id for c in resolution.alternatives] == [1]
    assert "vendor_datasheet outranks secondary_press" in resolution.reason
    assert "values differ" in resolution.reason


def test_a_published_guide_outranks_one_persons_notes_of_the_same_date_whatever_the_order():
    # GB300 NVL72: an integrator's guide says ~120 kW, a personal notes page ~142 kW, both
    # dated 2025-03-18; the notes page, recorded later, no longer wins by recording order.
    guide, notes = (candidate(1, "secondary_press", value=120),
                    candidate(2, "personal_notes", value=142))
    for order in ([guide, notes], [notes, guide]):
        resolution = resolve(order)
        assert resolution.winner.value == 120
        assert "secondary_press outranks personal_notes" in resolution.reason


def test_same_kind_newest_as_of_wins():
    resolution = resolve([candidate(1, as_of=date(2024, 1, 1)),
                          candidate(2, as_of=date(2025, 1, 1))])
    assert resolution.winner.observation_id == 2
    assert "newest as_of" in resolution.reason


def test_same_kind_and_date_newest_publication_wins():
    resolution = resolve([candidate(1, published=date(2025, 5, 1)),
                          candidate(2, published=date(2024, 5, 1)), candidate(3)])
    assert resolution.winner.observation_id == 1
    assert "newest publication" in resolution.reason


def test_a_source_newer_figure_follows_its_own_series_rather_than_conflicting():
    old = candidate(1, kind="dataset", as_of=date(2024, 1, 1), value=0.0771)
    new = Candidate(2, "source-1", "dataset", None, date(2025, 1, 1), T, 0.0826, 0.0826, 0.0826)
    resolution = resolve([old, new])
    assert resolution.winner.observation_id == 2
    assert resolution.alternatives == ()
    assert resolution.reason == "only live value (source source-1)"


def test_figures_disagree_only_beyond_the_tolerance():
    def figure(low: float, high: float | None = None) -> Candidate:
        return Candidate(1, "s", "dataset", None, date(2024, 1, 1),
                         datetime(2024, 1, 1, tzinfo=UTC), low, low, high or low)

    assert not disagree(figure(700), figure(700))
    assert not disagree(figure(989.4), figure(989.5))  # rounding, within 1 %
    assert disagree(figure(8.0), figure(7.7))  # B200 HBM bandwidth: NVIDIA vs Epoch
    assert not disagree(figure(120, 132), figure(130))  # inside the range
    assert disagree(figure(8.0), figure(7.7), tolerance=0.01)
    assert not disagree(figure(8.0), figure(7.7), tolerance=0.05)


def test_one_publishers_successive_publications_are_a_series_not_a_conflict():
    """CBRE's colocation price in its H2-2023 and H2-2024 reports: the newest stands, the
    older one is history, not an alternative that disagrees."""
    older = Candidate(1, "cbre-h2-2023", "analyst", date(2024, 2, 1), date(2023, 7, 1),
                      datetime(2026, 1, 1, tzinfo=UTC), 150.0, 150.0, 150.0, "CBRE")
    newer = Candidate(2, "cbre-h2-2024", "analyst", date(2025, 2, 1), date(2024, 7, 1),
                      datetime(2026, 1, 1, tzinfo=UTC), 184.0, 184.0, 184.0, "CBRE")
    other = Candidate(3, "jll-2024", "analyst", date(2025, 1, 1), date(2024, 7, 1),
                      datetime(2026, 1, 1, tzinfo=UTC), 170.0, 170.0, 170.0, "JLL")
    resolution = resolve([older, newer, other])
    assert resolution.winner == newer
    assert resolution.alternatives == (other,)  # another publisher: a real alternative
    # Without publishers, each source is its own series and both stay alternatives.
    anonymous = [replace(c, source_publisher=None) for c in (older, newer, other)]
    assert len(resolve(anonymous).alternatives) == 2


def test_an_undated_figure_never_wins_on_recency_whatever_its_valid_from():
    """GB200 NVL72 rack power: a dated 120 kW (2024-03-18) and an undated 132 kW whose valid
    time starts later; the dated one wins, and the reason says the other is undated."""
    dated = candidate(1, as_of=date(2024, 3, 18), value=120)
    undated = replace(candidate(2, as_of=date(2025, 1, 1), value=132), dated=False)
    for order in ([dated, undated], [undated, dated]):
        resolution = resolve(order)
        assert resolution.winner.value == 120
        assert "2024-03-18 over undated" in resolution.reason


def test_an_undated_figure_still_wins_on_source_kind_and_two_undated_fall_through():
    datasheet = replace(candidate(1, "vendor_datasheet", date(2020, 1, 1), value=5), dated=False)
    press = candidate(2, "secondary_press", date(2025, 1, 1), value=6)
    assert resolve([press, datasheet]).winner.value == 5      # the better kind, dated or not
    older, newer = (replace(candidate(n, published=p, value=n), dated=False)
                    for n, p in ((3, date(2023, 1, 1)), (4, date(2024, 1, 1))))
    resolution = resolve([older, newer])
    assert resolution.winner.value == 4 and "newest publication" in resolution.reason


def test_a_series_newest_figure_is_its_newest_dated_one():
    """One source's dated figure follows its undated one, even when the undated one's valid
    time starts later: an undated figure is no newer than anything."""
    undated = replace(candidate(1, as_of=date(2025, 6, 1), value=1), dated=False)
    dated = replace(candidate(2, as_of=date(2024, 1, 1), value=2), source_key="source-1")
    assert resolve([undated, dated]).winner.value == 2
