-- observation: the staged ledger rows with their item, metric, source and raw-file keys.
-- Left joins: an id without its key gives a NULL that the NOT NULL columns refuse, loudly.
insert into observation
with staged as (
    select * from stg_observation
),
final as (
    select o.observation_id, i.key as item, m.key as metric, s.key as source, o.value, o.low,
        o.high, m.unit, o.value_written, o.unit_written, o.value_kind, o.status, o.quote,
        o.as_of, o.as_of_precision, o.valid_to, o.recorded_at, o.superseded_at,
        o.ingest_run_id, r.sha256 as raw_file_sha256, o.offer_provider, o.offer_region,
        o.offer_term, o.offer_gpu, o.offer_units, o.offer_instance, o.offer_currency,
        o.offer_valid_until
    from staged o
    left join stg_item i on i.id = o.item_id
    left join stg_metric m on m.id = o.metric_id
    left join stg_source s on s.id = o.source_id
    left join stg_raw_file r on r.id = o.raw_file_id
)
select * from final;
