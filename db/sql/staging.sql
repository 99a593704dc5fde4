-- Staging: ledger rows as they arrive, with ledger ids instead of keys (a million joined key
-- strings cost seconds to fetch in Python). Temporary: gone when the build's connection closes.
-- build_observation.sql turns stg_observation into observation.

create temp table stg_item (id bigint primary key, key varchar not null);
create temp table stg_metric (id bigint primary key, key varchar not null, unit varchar not null);
create temp table stg_source (id bigint primary key, key varchar not null);
create temp table stg_raw_file (id bigint primary key, sha256 varchar not null);

create temp table stg_observation (
    observation_id bigint not null,
    item_id bigint not null,
    metric_id bigint not null,
    source_id bigint not null,
    value double not null,
    low double not null,
    high double not null,
    value_written varchar not null,
    unit_written varchar not null,
    value_kind varchar not null,
    status varchar not null,
    quote varchar,
    as_of date not null,
    as_of_precision varchar not null,
    valid_to date,
    recorded_at timestamptz not null,
    superseded_at timestamptz,
    ingest_run_id bigint not null,
    raw_file_id bigint not null,
    offer_provider varchar,
    offer_region varchar,
    offer_term varchar,
    offer_gpu varchar,
    offer_units integer,
    offer_instance varchar,
    offer_currency varchar,
    offer_valid_until date
);
