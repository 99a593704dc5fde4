-- Questions over the two clocks, and each scenario's latest result.
-- Valid time: observation.as_of / valid_to (dates). Knowledge time: recorded_at /
-- superseded_at (UTC). This file holds what the ledger knew at meta.cutoff_at: rows recorded
-- later are absent and closures after it are NULL.

-- A point in time as an instant: a TIMESTAMPTZ is taken as is; a TIMESTAMP or text without
-- a zone is read as UTC, whatever the session's TimeZone (the CLI defaults to the machine's).
create macro utc_instant(t) as
    case when typeof(t) = 'TIMESTAMP WITH TIME ZONE' then t::timestamptz
         else timezone('UTC', t::timestamp) end;
comment on macro utc_instant is 'utc_instant(t): t as a TIMESTAMPTZ; a TIMESTAMP (or text) without a zone is read as UTC, a TIMESTAMPTZ is kept.';

-- Each series' latest figure (value_as_of's and build_resolved_span.sql's `latest`), listed
-- by source in an aggregate over the series of one (item, metric); set_aside keeps those the
-- rule did not pick: the alternative_values column.
create macro series_figures(latest) as
    list(struct_pack(source := latest.source, value := latest.value, low := latest.low,
                     high := latest.high, as_of := latest.written_as_of,
                     observation_id := latest.observation_id)
         order by latest.source, latest.observation_id);
comment on macro series_figures is 'series_figures(latest): an aggregate: the list of each series'' latest figure (source, value, low, high, as_of, observation_id), by source.';
create macro set_aside(figures, winner) as
    list_filter(figures, lambda x: x.observation_id <> winner);
comment on macro set_aside is 'set_aside(figures, winner BIGINT): the figures whose observation is not the winner''s: what the resolution rule set aside.';

-- The resolution rule (models/resolve.py), "valid on d, as known at t": each series' newest
-- figure (one publisher's sources, else a source alone; newest as_of, then publication, then
-- latest recorded), then across series the best source kind,
-- newest as_of (an undated figure oldest), newest publication (unknown last), latest recorded.
-- Two aggregates over keys
-- only, then the winners' rows: the same answer as two row_number windows in half the time.
create macro value_as_of(d, t) as table
with live as (
    -- recency: the as_of a conflict compares; an undated figure (precision none, its as_of
    -- only where its valid time starts) is older than any dated one (models/resolve.py).
    select item, metric, source, as_of, recorded_at, observation_id, value, low, high,
        case when as_of_precision = 'none' then date '0001-01-01' else as_of end as recency
    from observation
    -- t read as spec_known_at and `specledger value --known-at` read it: UTC when zone-less.
    where recorded_at <= utc_instant(t)
      and (superseded_at is null or superseded_at > utc_instant(t))
      and as_of <= d and (valid_to is null or valid_to > d)
),
latest_per_source as (
    -- A series: one publisher's sources, else a source alone (models/resolve.py).
    select l.item, l.metric,
        coalesce(nullif(trim(s.publisher), ''), 'source:' || l.source) as series,
        max(struct_pack(as_of := l.recency,
                        published_on := coalesce(s.published_on, date '0001-01-01'),
                        recorded_at := l.recorded_at, observation_id := l.observation_id,
                        source := l.source,
                        -- carried, not compared: observation_id already decides
                        value := l.value, low := l.low, high := l.high,
                        written_as_of := l.as_of)) as latest
    from live l
    join source s on s.key = l.source
    group by l.item, l.metric, series
),
ranked as (
    select p.item, p.metric,
        arg_max(struct_pack(observation_id := p.latest.observation_id, source_kind := s.kind),
                (-r.rank, p.latest.as_of, s.published_on is not null,
                 coalesce(s.published_on, date '0001-01-01'), p.latest.recorded_at,
                 p.latest.observation_id)) as winner,
        count(*) - 1 as alternatives,
        series_figures(p.latest) as candidates
    from latest_per_source p
    join source s on s.key = p.latest.source
    join source_kind_rank r on r.kind = s.kind
    group by p.item, p.metric
),
final as (
    select r.item, r.metric, o.value, o.low, o.high, o.unit, o.as_of, o.source,
        r.winner.source_kind, o.status, o.value_kind, o.quote, o.recorded_at, r.alternatives,
        o.observation_id,
        set_aside(r.candidates, o.observation_id) as alternative_values
    from ranked r
    join observation o on o.observation_id = r.winner.observation_id
)
select * from final;
comment on macro table value_as_of is 'value_as_of(d DATE, t TIMESTAMPTZ; a TIMESTAMP or text without a zone is UTC, whatever the session''s TimeZone): the resolved value of every (item, metric) valid on date d (as_of <= d < valid_to) as the ledger knew it at instant t (recorded_at <= t < superseded_at). Columns as current_value. spec_as_of and spec_known_at are the two usual questions.';

-- Valid-time question at this file's knowledge (the dataset version's cut-off): a lookup in
-- resolved_span, which holds value_as_of(d, meta.cutoff_at) for every d.
create macro spec_as_of(d) as table
with final as (
    select item, metric, value, low, high, unit, as_of, source, source_kind, status,
        value_kind, quote, recorded_at, alternatives, observation_id, alternative_values
    from resolved_span
    where valid_from <= d::date and (valid_until is null or valid_until > d::date)
)
select * from final;
comment on macro table spec_as_of is 'spec_as_of(d DATE): the resolved value of every (item, metric) valid on date d, as known at this file''s dataset-version cut-off (meta.cutoff_at). E.g. select * from spec_as_of(DATE ''2024-06-30'') where item = ''gb200-nvl72''. Columns as current_value.';

-- Knowledge-time question: what current_value showed at instant t (valid on t's UTC date).
create macro spec_known_at(t) as table
with final as (
    select * from value_as_of(timezone('UTC', utc_instant(t))::date, utc_instant(t))
)
select * from final;
comment on macro table spec_known_at is 'spec_known_at(t TIMESTAMP): the resolved value of every (item, metric) valid on t''s date (UTC) as the ledger knew it at t: what current_value showed at t. A TIMESTAMP without a zone is UTC. The file knows nothing recorded after meta.cutoff_at, so a later t answers with the cut-off''s knowledge. Columns as current_value.';

-- The file knows nothing after its cut-off, so what is known now is what was known then.
create view current_value as select * from spec_as_of(timezone('UTC', now())::date);
comment on view current_value is 'The resolved value of every (item, metric): valid today (UTC), as known now (this file knows up to meta.cutoff_at). One row per (item, metric); the other live series are counted in alternatives and listed, with their values, in alternative_values.';

-- The newest dataset version's rows of a result or flag table: the newest version that has
-- any (after an `ingest` without a recompute that is the version before the file's, and
-- current_version says so). results: the table's name.
create macro newest_version_rows(results) as table
with final as (
    select *, dataset_version_id = (select dataset_version from meta) as current_version
    from query_table(results)
    where dataset_version_id = (select max(dataset_version_id) from query_table(results))
)
select * from final;
comment on macro table newest_version_rows is 'newest_version_rows(results VARCHAR): the rows of the table named (c2c_result, tco_result, serving_result, flag) of the newest dataset version that has any, with current_version = whether that is this file''s version (meta.dataset_version): false after an ingest whose recompute has not run yet.';

-- Each scenario's row of the newest version's results: a scenario redefined within one
-- dataset version has two results there, and the newer wins.
create macro latest_result(results) as table
with ranked as (
    select *, row_number() over (partition by scenario order by id desc) as pick
    from newest_version_rows(results)
),
final as (
    select * exclude (pick) from ranked where pick = 1
)
select * from final;
comment on macro table latest_result is 'latest_result(results VARCHAR): each scenario''s result on the newest dataset version with results in the table named (c2c_result, tco_result or serving_result), the newest result where a scenario has two; current_version as in newest_version_rows.';

create view c2c_latest as select * from latest_result('c2c_result');
comment on view c2c_latest is 'The C2C results of the newest dataset version that has any, one per scenario (the newest where a scenario was redefined within it). current_version = false: the data moved on since (an ingest); specledger run recomputes them.';

create view tco_latest as select * from latest_result('tco_result');
comment on view tco_latest is 'The TCO results of the newest dataset version that has any, one per scenario (the newest where a scenario was redefined within it). current_version = false: the data moved on since (an ingest); specledger run recomputes them.';

create view serving_latest as select * from latest_result('serving_result');
comment on view serving_latest is 'The serving results of the newest dataset version that has any, one per scenario (the newest where a scenario was redefined within it). current_version = false: the data moved on since (an ingest); specledger run recomputes them.';

create view flag_latest as select * from newest_version_rows('flag');
comment on view flag_latest is 'The flags of the newest dataset version that has any. current_version = false: the data moved on since (an ingest); specledger run raises the new version''s flags.';
