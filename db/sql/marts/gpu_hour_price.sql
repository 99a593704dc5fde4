-- gpu_hour_price: every market GPU-hour price with its offer terms, on both clocks (one row
-- per observation: a superseded price stays, with live = false), as the price lists and
-- hand-typed prices gave them.
create table gpu_hour_price as
with prices as (
    select o.*, max(case when o.superseded_at is null then o.as_of end)
            over (partition by o.item) as newest_as_of
    from observation o
    where o.metric = 'gpu_hour_price' and o.offer_provider is not null
),
final as (
    select p.offer_provider as provider, p.offer_region as region, p.offer_term as term,
        p.offer_gpu as gpu, p.offer_units as gpus, p.offer_instance as instance_type,
        p.value as usd_per_gpu_hour, p.value_written, p.unit_written,
        p.offer_currency as currency, p.as_of, p.valid_to, p.recorded_at as known_at, p.superseded_at,
        p.superseded_at is not null as superseded,
        -- Live: the offer's current price on the build's date: not superseded, its newest
        -- price date, still valid, and within the market's age limit (a 2023 catalog row is
        -- history, not a price to act on).
        p.superseded_at is null and p.as_of = p.newest_as_of and p.as_of <= m.as_of
            and (p.valid_to is null or p.valid_to > m.as_of)
            and date_diff('day', p.as_of, m.as_of) <= m.market_max_age_days as live,
        p.item as offer, p.source, p.observation_id
    from prices p, meta m
)
select * from final order by gpu, term, provider, region, as_of, known_at;
comment on table gpu_hour_price is 'Every GPU-hour price of a cloud offer or a hand-typed market price with its terms (provider, region, term, GPU, GPUs per instance), on both clocks: one row per observation, so an offer''s series is its rows in as_of order; a later price list supersedes by knowledge time and the old price stays here (superseded).';
comment on column gpu_hour_price.term is 'on_demand, spot, reserved_1y, reserved_3y, capacity_block, contract';
comment on column gpu_hour_price.gpus is 'GPUs in the priced instance (the price is per GPU-hour: the instance''s over its GPUs)';
comment on column gpu_hour_price.usd_per_gpu_hour is 'USD per GPU-hour (normalised: per hour, per GPU, in USD)';
comment on column gpu_hour_price.value_written is 'The price as the file wrote it';
comment on column gpu_hour_price.unit_written is 'The unit as the file wrote it (a reservation''s price is for its whole term)';
comment on column gpu_hour_price.known_at is 'Knowledge time: when the ledger learned it (UTC)';
comment on column gpu_hour_price.superseded_at is 'Knowledge time: when a later price replaced it (UTC); NULL = live at the cut-off';
comment on column gpu_hour_price.superseded is 'Replaced by a later price by this file''s cut-off (knowledge time)';
comment on column gpu_hour_price.live is 'The offer''s current price on the build''s date (meta.as_of): not superseded, the newest price date of its offer, still valid (valid_to), and priced within the market''s age limit (meta.market_max_age_days)';
comment on column gpu_hour_price.offer is 'The offer item (item.key): provider, instance type, region and term';
comment on column gpu_hour_price.provider is 'Who offers the price: a cloud (aws, azure, gcp), a neocloud or a reseller';
comment on column gpu_hour_price.region is 'The provider''s region name (eastus, us-east-1); NULL where the source gives none';
comment on column gpu_hour_price.gpu is 'GPU item (item.key) the price is for; NULL where the source does not say which part';
comment on column gpu_hour_price.instance_type is 'Instance type priced (p5.48xlarge, Standard_ND96isr_H100_v5)';
comment on column gpu_hour_price.currency is 'Currency the price was written in (usd_per_gpu_hour is always USD)';
comment on column gpu_hour_price.as_of is 'Valid time: the date the price holds from';
comment on column gpu_hour_price.valid_to is 'Valid time: the first date the price no longer holds (a quote''s or price list''s end of validity); NULL = open-ended';
comment on column gpu_hour_price.source is 'Source of the price (source.key)';
comment on column gpu_hour_price.observation_id is 'The observation (observation.observation_id)';
