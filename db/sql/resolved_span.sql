-- The resolved value of each (item, metric) over valid time, as known at this file's cut-off:
-- filled by build_resolved_span.sql once the ledger's rows are loaded. spec_as_of(d) reads it.

create table resolved_span (
    item varchar not null,
    metric varchar not null,
    valid_from date not null,
    valid_until date,
    value double not null,
    low double not null,
    high double not null,
    unit varchar not null,
    as_of date not null,
    source varchar not null,
    source_kind varchar not null,
    status varchar not null,
    value_kind varchar not null,
    quote varchar,
    recorded_at timestamptz not null,
    alternatives bigint not null,
    observation_id bigint not null,
    alternative_values struct(source varchar, value double, low double, high double,
                              as_of date, observation_id bigint)[] not null
);
comment on table resolved_span is 'The resolved value of every (item, metric) over valid time, as known at this file''s cut-off (meta.cutoff_at): one row per interval [valid_from, valid_until) in which the resolution rule picks the same answer. Dates with no row have no valid value. spec_as_of(d) is the row whose interval holds d; chart a resolved history by valid_from.';
comment on column resolved_span.item is 'Item key (item.key)';
comment on column resolved_span.metric is 'Metric key (metric.key)';
comment on column resolved_span.valid_from is 'Valid time: first date of the interval (an as_of or valid_to date of a live observation)';
comment on column resolved_span.valid_until is 'Valid time: first date after the interval, when another figure starts or stops holding (NULL = open)';
comment on column resolved_span.value is 'The resolved point value in the metric''s unit; the midpoint when the source gives a range';
comment on column resolved_span.low is 'Low end of the resolved range in the metric''s unit (= value for a point)';
comment on column resolved_span.high is 'High end of the resolved range in the metric''s unit (= value for a point)';
comment on column resolved_span.unit is 'The metric''s canonical unit';
comment on column resolved_span.as_of is 'Valid time: the date the winning figure was announced, published or measured';
comment on column resolved_span.source is 'Source key of the winning figure (source.key)';
comment on column resolved_span.source_kind is 'Kind of the winning source (source.kind); its rank in source_kind_rank decided the conflict first';
comment on column resolved_span.status is 'C = checked against a primary source, S = secondary only, U = unconfirmed';
comment on column resolved_span.value_kind is 'reported, estimate, derived or measured';
comment on column resolved_span.quote is 'The source''s own words for the winning figure, when recorded';
comment on column resolved_span.recorded_at is 'Knowledge time: when the ledger learned the winning figure (UTC)';
comment on column resolved_span.alternatives is 'How many other sources had a live value in the interval (see observation for them)';
comment on column resolved_span.alternative_values is 'The other live series'' figures the resolution rule set aside, one struct each (source, value, low, high in unit, as_of, observation_id), by source: a conflict''s values without a join to observation. E.g. select item, metric, value, unnest(alternative_values, recursive := true) from current_value where alternatives > 0';
comment on column resolved_span.observation_id is 'The winning observation (observation.observation_id)';
