-- resolved_span: value_as_of(d, meta.cutoff_at) for every d at once. The answer for an
-- (item, metric) can only change on a date where one of its live observations starts (as_of)
-- or stops (valid_to) holding, so resolving it at each such breakpoint covers every date up
-- to the next one. Runs after the loads; live = not closed by the cut-off.
insert into resolved_span
with live as (
    select * from observation where superseded_at is null
),
breakpoints as (
    select item, metric, as_of as valid_from from live
    union
    select item, metric, valid_to from live where valid_to is not null
),
spans as (
    select item, metric, valid_from,
        lead(valid_from) over (partition by item, metric order by valid_from) as valid_until
    from breakpoints
),
candidates as (
    -- Every live observation valid at the start of each span.
    select s.valid_from, s.valid_until, l.item, l.metric, l.source, l.as_of, l.recorded_at,
        l.observation_id, l.value, l.low, l.high,
        -- recency, as value_as_of compares it: an undated figure is older than any dated one
        case when l.as_of_precision = 'none' then date '0001-01-01' else l.as_of end as recency
    from spans s
    join live l on l.item = s.item and l.metric = s.metric
    where l.as_of <= s.valid_from and (l.valid_to is null or l.valid_to > s.valid_from)
),
latest_per_source as (
    -- The same rule as value_as_of, per span: a series is one publisher's sources, else a
    -- source alone.
    select c.item, c.metric, c.valid_from,
        coalesce(nullif(trim(s.publisher), ''), 'source:' || c.source) as series,
        any_value(c.valid_until) as valid_until,
        max(struct_pack(as_of := c.recency,
                        published_on := coalesce(s.published_on, date '0001-01-01'),
                        recorded_at := c.recorded_at, observation_id := c.observation_id,
                        source := c.source,
                        -- carried, not compared: observation_id already decides
                        value := c.value, low := c.low, high := c.high,
                        written_as_of := c.as_of)) as latest
    from candidates c
    join source s on s.key = c.source
    group by c.item, c.metric, c.valid_from, series
),
ranked as (
    select p.item, p.metric, p.valid_from, any_value(p.valid_until) as valid_until,
        arg_max(struct_pack(observation_id := p.latest.observation_id, source_kind := s.kind),
                (-r.rank, p.latest.as_of, s.published_on is not null,
                 coalesce(s.published_on, date '0001-01-01'), p.latest.recorded_at,
                 p.latest.observation_id)) as winner,
        count(*) - 1 as alternatives,
        series_figures(p.latest) as candidates
    from latest_per_source p
    join source s on s.key = p.latest.source
    join source_kind_rank r on r.kind = s.kind
    group by p.item, p.metric, p.valid_from
),
final as (
    select r.item, r.metric, r.valid_from, r.valid_until, o.value, o.low, o.high, o.unit,
        o.as_of, o.source, r.winner.source_kind, o.status, o.value_kind, o.quote,
        o.recorded_at, r.alternatives, o.observation_id,
        set_aside(r.candidates, o.observation_id) as alternative_values
    from ranked r
    join observation o on o.observation_id = r.winner.observation_id
)
select * from final;
