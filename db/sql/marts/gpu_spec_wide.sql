-- gpu_spec_wide: one row per GPU, its headline figures side by side, each with its unit,
-- source and date. The resolved values (the resolution rule of current_value) as of the
-- file's as_of date: comparing H100, B200 and GB200 is one select, no pivot, no join.
create table gpu_spec_wide as
with gpus as (
    select key as gpu, name, vendor, family, released_on from item where kind = 'gpu'
),
resolved as (
    select r.item, r.metric, r.value, r.unit, r.source, r.as_of
    from resolved_span r, meta m
    where r.valid_from <= m.as_of and (r.valid_until is null or r.valid_until > m.as_of)
),
final as (
    select g.gpu, g.name, g.vendor, g.family, g.released_on,
        max(r.value) filter (where r.metric = 'peak_dense_bf16') as peak_bf16,
        max(r.unit) filter (where r.metric = 'peak_dense_bf16') as peak_bf16_unit,
        max(r.source) filter (where r.metric = 'peak_dense_bf16') as peak_bf16_source,
        max(r.as_of) filter (where r.metric = 'peak_dense_bf16') as peak_bf16_as_of,
        max(r.value) filter (where r.metric = 'peak_dense_fp8') as peak_fp8,
        max(r.unit) filter (where r.metric = 'peak_dense_fp8') as peak_fp8_unit,
        max(r.source) filter (where r.metric = 'peak_dense_fp8') as peak_fp8_source,
        max(r.as_of) filter (where r.metric = 'peak_dense_fp8') as peak_fp8_as_of,
        max(r.value) filter (where r.metric = 'hbm_capacity') as hbm,
        max(r.unit) filter (where r.metric = 'hbm_capacity') as hbm_unit,
        max(r.source) filter (where r.metric = 'hbm_capacity') as hbm_source,
        max(r.as_of) filter (where r.metric = 'hbm_capacity') as hbm_as_of,
        max(r.value) filter (where r.metric = 'hbm_bandwidth') as hbm_bw,
        max(r.unit) filter (where r.metric = 'hbm_bandwidth') as hbm_bw_unit,
        max(r.source) filter (where r.metric = 'hbm_bandwidth') as hbm_bw_source,
        max(r.as_of) filter (where r.metric = 'hbm_bandwidth') as hbm_bw_as_of,
        max(r.value) filter (where r.metric = 'tdp') as tdp,
        max(r.unit) filter (where r.metric = 'tdp') as tdp_unit,
        max(r.source) filter (where r.metric = 'tdp') as tdp_source,
        max(r.as_of) filter (where r.metric = 'tdp') as tdp_as_of,
        max(r.value) filter (where r.metric = 'scaleup_bw_per_gpu_bidir') as scaleup_bw,
        max(r.unit) filter (where r.metric = 'scaleup_bw_per_gpu_bidir') as scaleup_bw_unit,
        max(r.source) filter (where r.metric = 'scaleup_bw_per_gpu_bidir') as scaleup_bw_source,
        max(r.as_of) filter (where r.metric = 'scaleup_bw_per_gpu_bidir') as scaleup_bw_as_of,
        max(r.value) filter (where r.metric = 'gpu_price') as price,
        max(r.unit) filter (where r.metric = 'gpu_price') as price_unit,
        max(r.source) filter (where r.metric = 'gpu_price') as price_source,
        max(r.as_of) filter (where r.metric = 'gpu_price') as price_as_of
    from gpus g
    left join resolved r on r.item = g.gpu
    group by g.gpu, g.name, g.vendor, g.family, g.released_on
)
select * from final order by gpu;
comment on table gpu_spec_wide is 'One row per GPU (item kind gpu): peak BF16 / FP8, HBM, HBM bandwidth, TDP, scale-up bandwidth and price, each resolved as of meta.as_of with its unit, source and date.';
comment on column gpu_spec_wide.gpu is 'GPU item (item.key)';
comment on column gpu_spec_wide.released_on is 'Release or availability date, when a source gives it';
comment on column gpu_spec_wide.peak_bf16 is 'Dense BF16 peak (peak_dense_bf16), resolved as of meta.as_of; NULL when the ledger has none';
comment on column gpu_spec_wide.peak_bf16_unit is 'Unit of peak_bf16 (the metric''s canonical unit)';
comment on column gpu_spec_wide.peak_bf16_source is 'Source of peak_bf16 (source.key)';
comment on column gpu_spec_wide.peak_bf16_as_of is 'Date of peak_bf16 as the source gives it';
comment on column gpu_spec_wide.peak_fp8 is 'Dense FP8 peak (peak_dense_fp8), resolved as of meta.as_of; NULL when the ledger has none';
comment on column gpu_spec_wide.peak_fp8_unit is 'Unit of peak_fp8 (the metric''s canonical unit)';
comment on column gpu_spec_wide.peak_fp8_source is 'Source of peak_fp8 (source.key)';
comment on column gpu_spec_wide.peak_fp8_as_of is 'Date of peak_fp8 as the source gives it';
comment on column gpu_spec_wide.hbm is 'HBM capacity (hbm_capacity), resolved as of meta.as_of; NULL when the ledger has none';
comment on column gpu_spec_wide.hbm_unit is 'Unit of hbm (the metric''s canonical unit)';
comment on column gpu_spec_wide.hbm_source is 'Source of hbm (source.key)';
comment on column gpu_spec_wide.hbm_as_of is 'Date of hbm as the source gives it';
comment on column gpu_spec_wide.hbm_bw is 'HBM bandwidth (hbm_bandwidth), resolved as of meta.as_of; NULL when the ledger has none';
comment on column gpu_spec_wide.hbm_bw_unit is 'Unit of hbm_bw (the metric''s canonical unit)';
comment on column gpu_spec_wide.hbm_bw_source is 'Source of hbm_bw (source.key)';
comment on column gpu_spec_wide.hbm_bw_as_of is 'Date of hbm_bw as the source gives it';
comment on column gpu_spec_wide.tdp is 'Thermal design power (tdp), resolved as of meta.as_of; NULL when the ledger has none';
comment on column gpu_spec_wide.tdp_unit is 'Unit of tdp (the metric''s canonical unit)';
comment on column gpu_spec_wide.tdp_source is 'Source of tdp (source.key)';
comment on column gpu_spec_wide.tdp_as_of is 'Date of tdp as the source gives it';
comment on column gpu_spec_wide.scaleup_bw is 'Scale-up (NVLink-class) bandwidth per GPU, both directions (scaleup_bw_per_gpu_bidir), resolved as of meta.as_of; NULL when the ledger has none';
comment on column gpu_spec_wide.scaleup_bw_unit is 'Unit of scaleup_bw (the metric''s canonical unit)';
comment on column gpu_spec_wide.scaleup_bw_source is 'Source of scaleup_bw (source.key)';
comment on column gpu_spec_wide.scaleup_bw_as_of is 'Date of scaleup_bw as the source gives it';
comment on column gpu_spec_wide.price is 'Purchase price of one GPU (gpu_price), resolved as of meta.as_of; NULL when the ledger has none';
comment on column gpu_spec_wide.price_unit is 'Unit of price (the metric''s canonical unit)';
comment on column gpu_spec_wide.price_source is 'Source of price (source.key)';
comment on column gpu_spec_wide.price_as_of is 'Date of price as the source gives it';
comment on column gpu_spec_wide.name is 'GPU name (item.name)';
comment on column gpu_spec_wide.vendor is 'Vendor (item.vendor)';
comment on column gpu_spec_wide.family is 'Architecture family (Hopper, Blackwell, ...)';
