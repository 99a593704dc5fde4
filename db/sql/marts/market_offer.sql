-- market_offer: the market on this build's date (meta.as_of), one row per current offer: each
-- offer's price valid on that date (the newest as_of, then the latest known), its price
-- date and age, and why an analyst would not take it at face value (flags). The price index
-- (price_index) is computed in Python from the same offers; this is its offer-level view.
-- The age limit is the build's (meta.market_max_age_days, SPECLEDGER_MARKET_MAX_AGE_DAYS), the
-- one the price index applies. The outlier rule: within a GPU and term, over the fresh offers that are not
-- false spot, a price further from their median than 3.5 scaled median absolute deviations
-- (1.4826 x MAD, the normal-consistent scale), when that deviation is not zero.
create table market_offer as
with market as (
    select as_of as market_date from meta
),
current_prices as (
    select p.*, row_number() over (partition by p.offer
                                   order by p.as_of desc, p.known_at desc,
                                            p.observation_id desc) as newest
    from gpu_hour_price p, market m
    where not p.superseded and p.gpu is not null and p.as_of <= m.market_date
        and (p.valid_to is null or p.valid_to > m.market_date)
),
offers as (
    select c.*, m.market_date, date_diff('day', c.as_of, m.market_date) as age_days
    from current_prices c, market m
    where c.newest = 1
),
on_demand as (
    select provider, coalesce(region, '') as region_key, gpu, coalesce(gpus, -1) as gpus_key,
        min(usd_per_gpu_hour) as on_demand_usd
    from offers where term = 'on_demand'
    group by all
),
checked as (
    select o.*, o.age_days > (select market_max_age_days from meta) as stale,
        o.term = 'spot' and d.on_demand_usd is not null
            and o.usd_per_gpu_hour >= d.on_demand_usd as false_spot
    from offers o
    left join on_demand d
        on d.provider = o.provider and d.region_key = coalesce(o.region, '')
        and d.gpu = o.gpu and d.gpus_key = coalesce(o.gpus, -1)
),
-- The market's median is over providers, as the price index's (models/market/index.py): each
-- provider's median first, so a provider listing fifty regions is one voice, not fifty.
voices as (
    select gpu, term, provider, median(usd_per_gpu_hour) as voice_usd
    from checked where not stale and not false_spot
    group by all
),
centre as (
    select gpu, term, median(voice_usd) as median_usd
    from voices
    group by all
),
spread as (
    select c.gpu, c.term, c.median_usd,
        1.4826 * median(abs(k.usd_per_gpu_hour - c.median_usd)) as scaled_mad
    from centre c
    join checked k on k.gpu = c.gpu and k.term = c.term
    where not k.stale and not k.false_spot
    group by all
),
final as (
    select k.provider, k.region, k.term, k.instance_type, k.gpu, k.gpus,
        k.usd_per_gpu_hour * k.gpus as usd_per_instance_hour, k.usd_per_gpu_hour,
        k.as_of as price_date, k.age_days, k.stale, k.false_spot,
        coalesce(not k.stale and not k.false_spot and s.scaled_mad > 0
                 and abs(k.usd_per_gpu_hour - s.median_usd) > 3.5 * s.scaled_mad,
                 false) as outlier,
        s.median_usd as market_median_usd,
        k.offer, k.source, k.observation_id, k.market_date,
        -- An offer of a GPU no pack declared is published and said, not a failed build:
        -- what ingest accepted, the warehouse publishes.
        k.gpu in (select key from item) as gpu_known
    from checked k
    left join spread s on s.gpu = k.gpu and s.term = k.term
)
select *,
    concat_ws(', ', case when stale then 'stale' end, case when false_spot then 'false spot' end,
              case when outlier then 'outlier' end,
              case when not gpu_known then 'unknown gpu' end) as flags
from final
order by gpu, term, usd_per_gpu_hour, provider, region, offer;
comment on table market_offer is 'The market on the build''s date (meta.as_of): one row per offer with a live price valid on that date (its newest), with its price date, age and flags. Offers older than the build''s age limit (meta.market_max_age_days) are stale (out of the price index); spot at or above the same offer''s on-demand is not spot; an outlier is more than 3.5 scaled median absolute deviations from the median of its GPU and term.';
comment on column market_offer.provider is 'Who offers the price: a cloud (aws, azure, gcp), a neocloud or a reseller';
comment on column market_offer.region is 'The provider''s region name; NULL where the source gives none';
comment on column market_offer.term is 'on_demand, spot, reserved_1y, reserved_3y, capacity_block, contract, quote';
comment on column market_offer.instance_type is 'Instance type priced (p5.48xlarge, Standard_ND96isr_H100_v5); NULL where the source names none';
comment on column market_offer.gpu is 'GPU item (item.key) the price is for';
comment on column market_offer.gpus is 'GPUs in the priced instance; NULL where the source does not say';
comment on column market_offer.usd_per_instance_hour is 'USD per instance-hour: usd_per_gpu_hour x gpus (a reservation''s whole-term price spread over its hours); NULL without gpus';
comment on column market_offer.usd_per_gpu_hour is 'USD per GPU-hour (normalised: per hour, per GPU, in USD)';
comment on column market_offer.price_date is 'Valid time: the date the price holds from (the price list''s date)';
comment on column market_offer.age_days is 'Days from price_date to the build''s date (meta.as_of)';
comment on column market_offer.stale is 'Priced more than meta.market_max_age_days (SPECLEDGER_MARKET_MAX_AGE_DAYS) days before the build''s date: left out of the price index';
comment on column market_offer.false_spot is 'A spot price at or above the same offer''s on-demand price (a price list writing SpotPrice = Price): not counted as spot';
comment on column market_offer.outlier is 'More than 3.5 scaled median absolute deviations (1.4826 x MAD) from the median of the fresh offers of its GPU and term';
comment on column market_offer.market_median_usd is 'Median USD per GPU-hour of the fresh, true offers of the same GPU and term, over providers (each provider''s median first, as the price index''s median); the outlier rule''s centre';
comment on column market_offer.offer is 'The offer item (item.key): provider, instance type, region and term';
comment on column market_offer.source is 'Source of the price (source.key)';
comment on column market_offer.observation_id is 'The observation (observation.observation_id)';
comment on column market_offer.market_date is 'The build''s date (meta.as_of) the market is read on';
comment on column market_offer.gpu_known is 'Whether gpu is an item of the ledger (false: an offer of a GPU no pack declared, kept and flagged ''unknown gpu'')';
comment on column market_offer.flags is 'stale, false spot, outlier, unknown gpu: the flags that hold, comma-separated; empty when none';
