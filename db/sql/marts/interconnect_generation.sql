-- interconnect_generation: one row per NVLink, InfiniBand or Ethernet generation, with its
-- headline bandwidth (NVLink: per GPU, both directions; InfiniBand: the port rate; Ethernet:
-- the standard's rate), the date it came (announced, else released, else its first figure)
-- and the source of the bandwidth, resolved as of the file's as_of date.
create table interconnect_generation as
with generations as (
    select key as generation, name, family, kind, announced_on, released_on from item
    where kind in ('scaleup_fabric', 'scaleout_fabric')
       or (kind = 'standard' and family = 'Ethernet')
),
resolved as (
    select r.item, r.metric, r.value, r.unit, r.source, r.as_of
    from resolved_span r, meta m
    where r.valid_from <= m.as_of and (r.valid_until is null or r.valid_until > m.as_of)
      and r.metric in ('scaleup_bw_per_gpu_bidir', 'port_rate', 'standard_rate')
),
first_seen as (
    select item, min(as_of) as first_as_of from observation group by item
),
final as (
    select g.family, g.generation, g.name, g.kind,
        r.metric as bandwidth_metric, r.value as bandwidth, r.unit as bandwidth_unit,
        case r.metric when 'scaleup_bw_per_gpu_bidir' then 'per GPU, both directions'
                      when 'port_rate' then 'per port' when 'standard_rate' then 'per port'
        end as bandwidth_scope,
        coalesce(g.announced_on, g.released_on, f.first_as_of) as introduced_on,
        case when g.announced_on is not null then 'announced'
             when g.released_on is not null then 'released'
             when f.first_as_of is not null then 'first figure' end as introduced_by,
        r.source as bandwidth_source, r.as_of as bandwidth_as_of
    from generations g
    left join resolved r on r.item = g.generation
    left join first_seen f on f.item = g.generation
)
select * from final order by family, introduced_on, generation;
comment on table interconnect_generation is 'One row per interconnect generation (NVLink, InfiniBand, Ethernet; a generation with two bandwidth figures has a row for each), with its bandwidth resolved as of meta.as_of, its source and when it came.';
comment on column interconnect_generation.family is 'NVLink, InfiniBand or Ethernet (item.family)';
comment on column interconnect_generation.generation is 'The generation''s item (item.key): nvlink-5, ib-xdr, ieee-802-3df';
comment on column interconnect_generation.bandwidth_metric is 'Which figure bandwidth is: scaleup_bw_per_gpu_bidir (NVLink), port_rate (InfiniBand), standard_rate (Ethernet)';
comment on column interconnect_generation.bandwidth is 'The headline bandwidth in bandwidth_unit';
comment on column interconnect_generation.bandwidth_scope is 'per GPU, both directions (NVLink) or per port (InfiniBand, Ethernet)';
comment on column interconnect_generation.introduced_on is 'Announcement date, else release date, else the date of its first figure in the ledger (introduced_by says which)';
comment on column interconnect_generation.bandwidth_source is 'Source of the bandwidth (source.key)';
comment on column interconnect_generation.name is 'Generation name (item.name)';
comment on column interconnect_generation.kind is 'scaleup_fabric, scaleout_fabric or standard (Ethernet)';
comment on column interconnect_generation.bandwidth_unit is 'Unit of bandwidth (the metric''s canonical unit)';
comment on column interconnect_generation.introduced_by is 'What introduced_on is: announced, released or first figure';
comment on column interconnect_generation.bandwidth_as_of is 'Date of the bandwidth figure as its source gives it';
