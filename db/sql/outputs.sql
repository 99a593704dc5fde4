-- What each dataset version led to besides model results: its flags, rendered briefings and
-- their deliveries. All are loaded for the dataset versions whose cut-off is at or before this file's
-- (meta.cutoff_at), the same rule as c2c_result and tco_result. Times are UTC.

create table flag (
    id bigint primary key,
    dataset_version_id integer not null references dataset_version (id),
    kind varchar not null,
    severity varchar not null,
    subject varchar not null,
    item varchar,
    metric varchar,
    scenario varchar,
    message varchar not null,
    observation_ids bigint[] not null,
    code_version varchar not null,
    computed_at timestamptz not null
);
comment on table flag is 'Trend and evidence findings computed for each dataset version (append-only): density and interconnect trends, evidence gaps (single source, unconfirmed, stale, conflicting, claim without measurement, undated) and changes since the previous version. The briefing''s executive summary lists them, most severe first.';
comment on column flag.id is 'Ledger id of the flag';
comment on column flag.dataset_version_id is 'Dataset version the flag was computed for (dataset_version.id)';
comment on column flag.kind is 'What was found: density_threshold, density_growth, interconnect_trend, bandwidth_ratio, switch_capacity, single_source, unconfirmed, stale, conflicting, claim_without_measurement, undated, added, changed, superseded, result_moved, price_move, new_cheapest, quote_expiring or lead_time_grew';
comment on column flag.severity is 'critical, warning or info (most severe first)';
comment on column flag.subject is 'What the flag is about, unique per (dataset_version_id, kind): e.g. "gb200-nvl72 / rack_it_power" or a scenario name';
comment on column flag.item is 'Item key the flag is about (item.key), NULL when it is not about one item';
comment on column flag.metric is 'Metric key the flag is about (metric.key), NULL when it is not about one metric';
comment on column flag.scenario is 'Scenario name the flag is about (scenario.name), NULL when it is not about a scenario';
comment on column flag.message is 'One sentence for the reader, with the numbers, units, sources and dates it rests on';
comment on column flag.observation_ids is 'The observations the flag rests on (observation.observation_id), ascending; join with unnest(observation_ids)';
comment on column flag.code_version is 'specledger version that computed the flag';
comment on column flag.computed_at is 'When the flag was recorded (UTC); knowledge time, after its dataset version''s cut-off';

create table briefing (
    id bigint primary key,
    dataset_version_id integer not null references dataset_version (id),
    as_of date not null,
    path varchar not null,
    sha256 varchar not null,
    size_bytes bigint not null,
    pages integer,
    code_version varchar not null,
    rendered_at timestamptz not null
);
comment on table briefing is 'Every rendered briefing PDF (append-only): the dataset version and date it reports on and the sha256 of its bytes. Re-rendering a past briefing from the ledger gives the same sha256. Renderings recorded after this file was built appear in the next publish.';
comment on column briefing.id is 'Ledger id of the rendering';
comment on column briefing.dataset_version_id is 'Dataset version the briefing was rendered from (dataset_version.id)';
comment on column briefing.as_of is 'Valid-time date the briefing reports on (its cover date)';
comment on column briefing.path is 'Where the PDF was written, as given to the renderer';
comment on column briefing.sha256 is 'sha256 of the PDF bytes (64 hex digits): compare with sha256sum of a copy';
comment on column briefing.size_bytes is 'Size of the PDF, in bytes';
comment on column briefing.pages is 'Page count of the PDF (NULL when not measured)';
comment on column briefing.code_version is 'specledger version that rendered it';
comment on column briefing.rendered_at is 'When it was rendered (UTC)';

create table briefing_delivery (
    id bigint primary key,
    briefing_id bigint not null references briefing (id),
    channel varchar not null,
    target varchar not null,
    status varchar not null,
    attempts integer not null,
    message_id varchar,
    error varchar,
    delivered_at timestamptz not null
);
comment on table briefing_delivery is 'Every delivery of a briefing to its readers (append-only): one row per channel (e-mail, a folder copy) per run, all retries included, with how it went. A failed delivery never loses the briefing: briefing.path still holds it. Deliveries recorded after this file was built appear in the next publish.';
comment on column briefing_delivery.id is 'Ledger id of the delivery';
comment on column briefing_delivery.briefing_id is 'The briefing delivered (briefing.id)';
comment on column briefing_delivery.channel is 'email or folder';
comment on column briefing_delivery.target is 'The e-mail''s recipients (comma-separated) or the folder the copy was written to';
comment on column briefing_delivery.status is 'delivered or failed (after every retry)';
comment on column briefing_delivery.attempts is 'How many attempts it took (1 = the first succeeded)';
comment on column briefing_delivery.message_id is 'The e-mail''s Message-ID header, as the readers'' mail clients see it (NULL for a folder)';
comment on column briefing_delivery.error is 'Why the last attempt failed (NULL when delivered)';
comment on column briefing_delivery.delivered_at is 'When the last attempt ended (UTC)';
