-- The analyst warehouse: explicit DDL, rebuilt from the ledger on every publish.
-- Times are UTC (TIMESTAMPTZ); valid-time dates are calendar dates of the figure.

create table meta (
    dataset_version integer not null,
    dataset_hash varchar not null,
    cutoff_at timestamptz not null,
    as_of date not null,
    built_at timestamptz not null,
    code_version varchar not null,
    market_max_age_days integer not null
);
comment on table meta is 'One row: which dataset version this file was built from, and when.';
comment on column meta.dataset_version is 'Ledger dataset_version id the file was built from';
comment on column meta.dataset_hash is 'sha256 of the content of the live observations at cutoff_at';
comment on column meta.cutoff_at is 'Knowledge-time cut-off of the dataset version (UTC)';
comment on column meta.as_of is 'The valid-time date the briefing of this build reports on';
comment on column meta.built_at is 'When this file was built (UTC)';
comment on column meta.code_version is 'specledger version that built it';
comment on column meta.market_max_age_days is 'The market''s age limit this build applies (SPECLEDGER_MARKET_MAX_AGE_DAYS): an offer priced longer ago is stale, out of the price index (market_offer.stale)';

create table source_kind_rank (
    kind varchar primary key,
    rank integer not null
);
comment on table source_kind_rank is 'The resolution rule''s first step: lower rank wins a conflict.';

create table source (
    key varchar primary key,
    title varchar not null,
    publisher varchar,
    url varchar,
    kind varchar not null,
    published_on date,
    retrieved_on date
);
comment on table source is 'Where facts come from: datasheets, press releases, datasets, surveys.';
comment on column source.kind is 'vendor_datasheet, vendor_press, standard_body, dataset, analyst, measurement, secondary_press or derived';
comment on column source.published_on is 'Publication date of the source (may be NULL when unknown)';

create table item (
    key varchar primary key,
    name varchar not null,
    kind varchar not null,
    vendor varchar,
    family varchar,
    announced_on date,
    released_on date
);
comment on column item.announced_on is 'Announcement date, when a source gives it.';
comment on column item.released_on is 'Release or availability date (e.g. Epoch AI''s Release date); not the announcement, not when the ledger recorded it.';
comment on table item is 'What a fact is about: a GPU, an NVLink generation, a switch, a rack, a price series.';

create table metric (
    key varchar primary key,
    unit varchar not null,
    counts varchar,
    scope varchar not null,
    direction varchar not null,
    min_value double,
    max_value double,
    description varchar not null
);
comment on table metric is 'Metric definitions: every observation value is in the metric''s canonical unit.';
comment on column metric.unit is 'Canonical unit of every value, low and high of this metric';
comment on column metric.counts is 'For data rates and sizes: bits or bytes (never converted into each other)';
comment on column metric.scope is 'What one value describes: per_link, per_gpu, per_port, per_switch, per_system, per_rack, ...';
comment on column metric.direction is 'bidirectional (both directions summed), unidirectional or n/a';

-- item, metric and source name item.key, metric.key and source.key. The references are
-- declared checks (db/warehouse_checks.py), not foreign keys: on a million rows their indexes
-- cost about 1.6 s per publish and 16 MiB of a file analysts only read.
create table observation (
    observation_id bigint primary key,
    item varchar not null,
    metric varchar not null,
    source varchar not null,
    value double not null,
    low double not null,
    high double not null,
    unit varchar not null,
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
    raw_file_sha256 varchar not null,
    offer_provider varchar,
    offer_region varchar,
    offer_term varchar,
    offer_gpu varchar,
    offer_units integer,
    offer_instance varchar,
    offer_currency varchar,
    offer_valid_until date
);
comment on table observation is 'Every observation ever recorded, with both clocks (full history, append-only).';
comment on column observation.value is 'Point value in the metric''s unit; the midpoint when the source gives a range';
comment on column observation.low is 'Low end of the range in the metric''s unit (= value for a point)';
comment on column observation.high is 'High end of the range in the metric''s unit (= value for a point)';
comment on column observation.unit is 'The metric''s canonical unit (value, low and high are in it)';
comment on column observation.value_written is 'The value exactly as the source wrote it';
comment on column observation.unit_written is 'The unit exactly as the source wrote it';
comment on column observation.value_kind is 'reported, estimate, derived or measured';
comment on column observation.status is 'C = checked against a primary source, S = secondary only, U = unconfirmed';
comment on column observation.as_of is 'Valid time: the date the figure was announced, published or measured';
comment on column observation.as_of_precision is 'day, month or year: how precisely the source dates the figure; none: the source gives no date (as_of: undated), as_of is then only the start of its valid time (valid_from) and it never wins a conflict on recency';
comment on column observation.valid_to is 'Valid time: the date the figure stops holding (NULL = open)';
comment on column observation.recorded_at is 'Knowledge time: when the ledger learned it (UTC); at or before meta.cutoff_at for every row here';
comment on column observation.superseded_at is 'Knowledge time: when a later observation from the same source replaced it (UTC); NULL = still live at this file''s cut-off (meta.cutoff_at): closures after it are later knowledge and not shown';
comment on column observation.raw_file_sha256 is 'sha256 of the ingested file the observation came from';
comment on column observation.offer_provider is 'A market price''s provider (a cloud, a neocloud, a reseller; a quote''s vendor); NULL for every other figure';
comment on column observation.offer_region is 'A market price''s region as the provider names it (eastus, us-east-1)';
comment on column observation.offer_term is 'A market price''s term: on_demand, spot, reserved_1y, reserved_3y, capacity_block, contract or quote';
comment on column observation.offer_gpu is 'The GPU item (item.key) a market price is for';
comment on column observation.offer_units is 'GPUs in the priced instance, or a quote''s quantity';
comment on column observation.offer_instance is 'The instance type priced (p5.48xlarge, Standard_ND96isr_H100_v5)';
comment on column observation.offer_currency is 'The currency the price was written in (value is always in the metric''s unit, USD)';
comment on column observation.offer_valid_until is 'The last day a quote holds';

create table dataset_version (
    id integer primary key,
    cutoff_at timestamptz not null,
    content_hash varchar not null,
    observation_count integer not null,
    ingest_run_id integer,
    created_at timestamptz not null
);
comment on table dataset_version is 'Knowledge-time cut-offs with the content hash of the live observations at each.';

-- What each dataset version changed in the resolved values (what current_value showed at its
-- cut-off against what it showed at the version before's): filled after the loads, one
-- value_as_of per version (db/warehouse.py).
create table changes (
    dataset_version integer not null,
    previous_version integer,
    item varchar not null,
    metric varchar not null,
    change varchar not null,
    old_value double,
    new_value double,
    old_low double,
    old_high double,
    new_low double,
    new_high double,
    unit varchar not null,
    old_source varchar,
    new_source varchar,
    old_as_of date,
    new_as_of date,
    old_observation_id bigint,
    new_observation_id bigint,
    changed_at timestamptz not null
);
comment on table changes is 'What each dataset version changed in the resolved values: one row per (item, metric) whose answer (the value current_value showed, valid on the cut-off''s date, as known at the cut-off) differs from the version before''s, old -> new with unit and source. change = added (no value before), changed (another value or another winning source) or removed (no value now). The first version adds everything it holds. E.g. select item, metric, old_value, new_value, unit, old_source, new_source from changes where dataset_version = (select max(dataset_version) from changes).';
comment on column changes.dataset_version is 'The dataset version the change is part of (dataset_version.id)';
comment on column changes.previous_version is 'The dataset version it is compared with, the one before it by cut-off (NULL for the first)';
comment on column changes.item is 'Item key (item.key)';
comment on column changes.metric is 'Metric key (metric.key)';
comment on column changes.change is 'added (no value at the previous version), changed (another value, or the same value from another winning source) or removed (no value at this version)';
comment on column changes.old_value is 'The resolved value at the previous version, in unit (NULL when added)';
comment on column changes.new_value is 'The resolved value at this version, in unit (NULL when removed)';
comment on column changes.old_low is 'Low end of the old range (= old_value for a point)';
comment on column changes.old_high is 'High end of the old range (= old_value for a point)';
comment on column changes.new_low is 'Low end of the new range (= new_value for a point)';
comment on column changes.new_high is 'High end of the new range (= new_value for a point)';
comment on column changes.unit is 'The metric''s canonical unit (old and new are in it)';
comment on column changes.old_source is 'Source key of the old winning figure (source.key)';
comment on column changes.new_source is 'Source key of the new winning figure (source.key)';
comment on column changes.old_as_of is 'Valid time: the date of the old winning figure';
comment on column changes.new_as_of is 'Valid time: the date of the new winning figure';
comment on column changes.old_observation_id is 'The old winning observation (observation.observation_id)';
comment on column changes.new_observation_id is 'The new winning observation (observation.observation_id)';
comment on column changes.changed_at is 'The cut-off of the dataset version (UTC): when the change became known';

-- The observations each dataset version recorded or superseded, read from the two clocks: a row per
-- observation recorded after the version before's cut-off and by this one's (recorded), and
-- per observation a later one replaced in that window (superseded).
create view observation_changes as
with versions as (
    select id as dataset_version, cutoff_at,
           lag(id) over (order by cutoff_at, id) as previous_version,
           lag(cutoff_at) over (order by cutoff_at, id) as previous_cutoff_at
    from dataset_version
)
select v.dataset_version, v.previous_version, 'recorded' as change, o.item, o.metric,
       o.source, o.as_of, o.valid_to, o.value, o.low, o.high, o.unit, o.observation_id,
       o.recorded_at as changed_at
from versions v join observation o
  on o.recorded_at <= v.cutoff_at
 and (v.previous_cutoff_at is null or o.recorded_at > v.previous_cutoff_at)
union all
select v.dataset_version, v.previous_version, 'superseded' as change, o.item, o.metric,
       o.source, o.as_of, o.valid_to, o.value, o.low, o.high, o.unit, o.observation_id,
       o.superseded_at as changed_at
from versions v join observation o
  on o.superseded_at <= v.cutoff_at
 and (v.previous_cutoff_at is null or o.superseded_at > v.previous_cutoff_at);
comment on column observation_changes.dataset_version is 'The dataset version the change is part of (dataset_version.id)';
comment on column observation_changes.previous_version is 'The dataset version before it (by cut-off); NULL for the first';
comment on column observation_changes.change is 'recorded (the ledger learned the observation in between) or superseded (a later observation of the same source replaced it in between)';
comment on column observation_changes.changed_at is 'When it changed (UTC): recorded_at for recorded, superseded_at for superseded';
comment on view observation_changes is 'The observations behind each dataset version''s changes (changes has the values they moved, old and new): a row per observation the version recorded or superseded since the one before it (previous_version; NULL for the first): change = recorded (an observation the ledger learned in between) or superseded (one a later observation of the same source replaced in between). E.g. select * from observation_changes where dataset_version = 7 order by item, metric.';

create table rejected_row (
    ingest_run_id integer not null,
    path varchar not null,
    sha256 varchar not null,
    line integer,
    field varchar not null,
    reason varchar not null,
    raw_text varchar
);
comment on table rejected_row is 'Rows (or whole files, field = file) that failed validation, kept for review.';

create table measurement_run (
    id integer primary key,
    kind varchar not null,
    sha256 varchar not null,
    item varchar,
    started_at timestamptz,
    finished_at timestamptz,
    ranks integer,
    nodes integer,
    gpus_per_node integer,
    device varchar,
    nccl_version varchar,
    collective varchar,
    benchmark varchar,
    duration_s double,
    metadata_json json not null
);
comment on table measurement_run is 'A measurement one ingested file describes: an nccl-tests run (its size points in nccl_point, its peak busbw an observation of metric busbw_measured), an MLPerf training result, or a file of inference serving results (its points in inference_point).';
comment on column measurement_run.kind is 'nccl-tests, mlperf-result or inference.';
comment on column measurement_run.sha256 is 'sha256 of the raw file it came from.';
comment on column measurement_run.item is 'The ledger item measured (a fabric for nccl-tests, a system for MLPerf, the GPU of an inference file when all its points share one), when known.';
comment on column measurement_run.started_at is 'Start of the run, UTC (nccl-tests prints local time without a zone: read as UTC).';
comment on column measurement_run.duration_s is 'MLPerf: run_stop - run_start, seconds (the time to train when the run succeeded).';
comment on column measurement_run.metadata_json is 'What the file says about the run: command line, parameters, rank -> host -> device map, footer, MLPerf status.';
comment on column measurement_run.id is 'Ledger id of the run; nccl_point.measurement_run_id and inference_point.measurement_run_id refer to it.';
comment on column measurement_run.finished_at is 'End of the run, UTC, when the file gives it.';
comment on column measurement_run.ranks is 'nccl-tests ranks (GPUs) in the run.';
comment on column measurement_run.nodes is 'Distinct hosts in the run.';
comment on column measurement_run.gpus_per_node is 'GPUs per host (ranks / nodes when even).';
comment on column measurement_run.device is 'GPU model as the file names it (e.g. NVIDIA H100 80GB HBM3).';
comment on column measurement_run.nccl_version is 'NCCL library version, when given.';
comment on column measurement_run.collective is 'nccl-tests collective (all_reduce, all_gather, ...).';
comment on column measurement_run.benchmark is 'MLPerf benchmark (e.g. gnn, resnet); inference: inferencex or mlperf-inference-<round> when all its points share one.';

create table nccl_point (
    measurement_run_id integer not null references measurement_run (id),
    line integer,
    collective varchar not null,
    size_bytes bigint not null,
    count bigint not null,
    dtype varchar not null,
    redop varchar,
    root integer,
    oop_time_us double not null,
    oop_algbw double not null,
    oop_busbw double not null,
    oop_wrong bigint,
    ip_time_us double,
    ip_algbw double,
    ip_busbw double,
    ip_wrong bigint
);
comment on table nccl_point is 'One measured message size of an nccl-tests run; oop_ = out-of-place, ip_ = in-place.';
comment on column nccl_point.oop_time_us is 'Time per operation, microseconds.';
comment on column nccl_point.oop_algbw is 'Algorithm bandwidth size/time, GB/s (1e9 bytes/s), as nccl-tests reports it.';
comment on column nccl_point.oop_busbw is 'Bus bandwidth, GB/s (1e9 bytes/s): algbw x the collective''s factor (2(n-1)/n for all-reduce).';
comment on column nccl_point.oop_wrong is '#wrong elements (NULL for legacy error floats and N/A).';
comment on column nccl_point.measurement_run_id is 'The run this point belongs to.';
comment on column nccl_point.line is 'Line of the point in the raw file.';
comment on column nccl_point.collective is 'Collective measured.';
comment on column nccl_point.size_bytes is 'Message size, bytes.';
comment on column nccl_point.count is 'Elements per message.';
comment on column nccl_point.dtype is 'Element type (float, half, bfloat16, ...).';
comment on column nccl_point.redop is 'Reduction operation (sum, ...), NULL when none.';
comment on column nccl_point.root is 'Root rank for rooted collectives, NULL otherwise.';
comment on column nccl_point.ip_time_us is 'In-place time per operation, microseconds.';
comment on column nccl_point.ip_algbw is 'In-place algorithm bandwidth, GB/s (1e9 bytes/s).';
comment on column nccl_point.ip_busbw is 'In-place bus bandwidth, GB/s (1e9 bytes/s).';
comment on column nccl_point.ip_wrong is 'In-place #wrong elements (NULL for legacy error floats and N/A).';

create table inference_point (
    measurement_run_id integer not null references measurement_run (id),
    line integer,
    source_key varchar not null,
    as_of date not null,
    hardware varchar not null,
    hardware_written varchar not null,
    system varchar,
    gpus integer not null,
    model varchar not null,
    model_written varchar not null,
    precision varchar,
    framework varchar,
    framework_version varchar,
    spec_decoding varchar,
    tp integer,
    ep integer,
    dp integer,
    disaggregated boolean not null,
    prefill_gpus integer,
    decode_gpus integer,
    input_tokens integer,
    output_tokens integer,
    concurrency integer,
    tok_s_per_gpu double not null,
    total_tok_s_per_gpu double,
    tok_s_per_user double,
    ttft_s double,
    tpot_s double,
    scenario varchar,
    benchmark varchar not null,
    samples_per_s double,
    target_qps double,
    ttft_p99_s double,
    tpot_p99_s double,
    ttft_limit_s double,
    tpot_limit_s double
);
comment on table inference_point is 'One measured serving point of an inference benchmark (InferenceX, MLPerf Inference): a model on a GPU at one configuration and load, and what it delivered. Throughput is per GPU over all the point''s GPUs; times in seconds; NULL where the file gives no figure.';
comment on column inference_point.measurement_run_id is 'The run (the ingested file) this point belongs to.';
comment on column inference_point.line is 'Line of the point''s row in the raw file.';
comment on column inference_point.source_key is 'The source it is cited by (inferencex-<date>, mlperf-inference-<round>); source.key.';
comment on column inference_point.as_of is 'Valid time: the run''s date (InferenceX; an MLPerf loadgen detail log''s test_datetime) or the round''s publication date (MLPerf summary_results.json and mlperf_log_summary.txt, given with --as-of).';
comment on column inference_point.hardware is 'The GPU: the ledger''s item key after data/item_aliases.yaml (h100-sxm5, b200, gb200, amd-mi355x, ...), else a slug of the written name.';
comment on column inference_point.hardware_written is 'The GPU as the file names it (InferenceX hw / hardware, MLPerf Accelerator).';
comment on column inference_point.system is 'The system or rack it ran in, when known: gb200-nvl72 / gb300-nvl72 for InferenceX GB200/GB300, the MLPerf system''s item (as its systems JSON gives it).';
comment on column inference_point.gpus is 'GPUs the per-GPU figures divide by: one instance''s tp x pp x pcp (InferenceX single node), prefill + decode GPUs (disaggregated), Nodes x a# (MLPerf summary_results.json), accelerators_per_node x number_of_nodes of the systems JSON (a loadgen log).';
comment on column inference_point.model is 'Canonical model key (deepseek-r1, llama-3.3-70b, gpt-oss-120b, llama-2-70b, ...).';
comment on column inference_point.model_written is 'The model as the file names it (an InferenceX model path or prefix, an MLPerf benchmark model such as llama2-70b-99).';
comment on column inference_point.precision is 'Weights'' precision as written, lowercased (fp8, fp4, int4, mxfp4, ...); NULL when not given.';
comment on column inference_point.framework is 'Serving framework (vllm, sglang, trt-llm, dynamo-trt-llm, mori-sglang, tensorrt, ...).';
comment on column inference_point.framework_version is 'Its version: the container image tag (InferenceX), the version in Software (MLPerf).';
comment on column inference_point.spec_decoding is 'Speculative decoding (InferenceX spec_decoding: mtp or none); NULL when not given.';
comment on column inference_point.tp is 'Tensor parallelism (of the decode workers for a disaggregated point); NULL when not given (MLPerf).';
comment on column inference_point.ep is 'Expert parallelism (decode workers for a disaggregated point).';
comment on column inference_point.dp is 'Attention data parallelism: tp with DP attention, else 1 (decode workers for a disaggregated point).';
comment on column inference_point.disaggregated is 'Prefill and decode on separate GPUs (MLPerf''s table does not say: false).';
comment on column inference_point.prefill_gpus is 'GPUs of the prefill workers of a multinode point.';
comment on column inference_point.decode_gpus is 'GPUs of the decode workers of a multinode point.';
comment on column inference_point.input_tokens is 'Input sequence length, tokens (InferenceX isl; NULL for MLPerf, whose lengths are its dataset''s).';
comment on column inference_point.output_tokens is 'Output sequence length, tokens (InferenceX osl; NULL for MLPerf).';
comment on column inference_point.concurrency is 'Concurrent requests (InferenceX conc); NULL for MLPerf.';
comment on column inference_point.tok_s_per_gpu is 'Output tokens/s per GPU over all the point''s GPUs (InferenceX output_tput_per_gpu, rescaled from decode GPUs to all for a disaggregated point; MLPerf Performance_Result / (Nodes x a#); a loadgen log''s tokens per second / the systems JSON''s accelerators).';
comment on column inference_point.total_tok_s_per_gpu is 'Input and output tokens/s per GPU (InferenceX tput_per_gpu).';
comment on column inference_point.tok_s_per_user is 'Output tokens/s each user sees (InferenceX median_intvty; 1 / median TPOT of an MLPerf loadgen log).';
comment on column inference_point.ttft_s is 'Median time to first token, seconds (InferenceX median_ttft; the 50th percentile of an MLPerf loadgen log).';
comment on column inference_point.tpot_s is 'Median time per output token, seconds (InferenceX median_tpot; the 50th percentile of an MLPerf loadgen log).';
comment on column inference_point.scenario is 'MLPerf scenario (Offline, Server, Interactive); NULL for InferenceX.';
comment on column inference_point.benchmark is 'inferencex, or mlperf-inference-<round> (mlperf-inference-v5.1).';
comment on column inference_point.samples_per_s is 'Requests completed per second by the whole system (an MLPerf loadgen log''s samples per second); NULL for other files.';
comment on column inference_point.target_qps is 'The Poisson arrival rate the run was offered, requests/s (MLPerf Server and Interactive target_qps): not a concurrency; NULL otherwise.';
comment on column inference_point.ttft_p99_s is 'p99 time to first token, seconds (MLPerf loadgen log, Server and Interactive).';
comment on column inference_point.tpot_p99_s is 'p99 time per output token, seconds (MLPerf loadgen log, Server and Interactive).';
comment on column inference_point.ttft_limit_s is 'The p99 time-to-first-token limit the run was held to, seconds (the scenario''s ttft_latency; NULL for Offline).';
comment on column inference_point.tpot_limit_s is 'The p99 time-per-output-token limit the run was held to, seconds (the scenario''s tpot_latency; NULL for Offline).';


create table scenario (
    id bigint primary key,
    name varchar not null,
    kind varchar not null,
    content_sha256 varchar not null,
    definition json not null,
    path varchar,
    recorded_at timestamptz not null,
    unique (name, content_sha256)
);
comment on table scenario is 'Named cluster/training scenarios, one row per definition: a changed scenario file is a new row, never an update.';
comment on column scenario.id is 'Ledger id of this definition of the scenario';
comment on column scenario.name is 'Scenario name; c2c_result.scenario refers to it';
comment on column scenario.kind is 'c2c (performance model), tco (cost model) or serving (cost per million tokens)';
comment on column scenario.content_sha256 is 'sha256 of the scenario''s canonical definition; with name, identifies the row';
comment on column scenario.definition is 'The scenario as JSON (JSON type: read fields with ->> and json_extract)';
comment on column scenario.path is 'File the scenario was read from (NULL when not from a file)';
comment on column scenario.recorded_at is 'Knowledge time: when the ledger first saw this definition (UTC)';

create table c2c_result (
    id bigint primary key,
    scenario varchar not null,
    scenario_sha256 varchar not null,
    dataset_version_id integer not null references dataset_version (id),
    code_version varchar not null,
    inputs_sha256 varchar not null,
    computed_at timestamptz not null,
    reused_from_id bigint,
    gpus integer not null,
    t_iter_s double not null,
    t_compute_s double not null,
    t_bubble_s double not null,
    c2c double not null,
    c2c_scale_up double not null,
    c2c_scale_out double not null,
    c2c_class varchar not null,
    recommended_fabric varchar not null,
    mfu double not null,
    hw_tflops_per_gpu double not null,
    model_tflops_per_gpu double not null,
    memory_gib_per_gpu double not null,
    fits boolean not null,
    time_to_train_days double,
    result_json json not null
);
comment on table c2c_result is 'The C2C performance model''s estimate for each scenario on each dataset version (append-only; ad-hoc estimates without a dataset version are not published).';
comment on column c2c_result.id is 'Ledger id of the result';
comment on column c2c_result.scenario is 'Scenario name (scenario.name)';
comment on column c2c_result.scenario_sha256 is 'content_sha256 of the scenario definition used; joins scenario on (name, content_sha256)';
comment on column c2c_result.dataset_version_id is 'Dataset version whose ledger values the estimate used (dataset_version.id)';
comment on column c2c_result.code_version is 'specledger version that computed the figures';
comment on column c2c_result.inputs_sha256 is 'sha256 of the scenario definition, the spec values read from the ledger and the code version';
comment on column c2c_result.computed_at is 'When this row was recorded (UTC); for a reused result, when the reuse was recorded';
comment on column c2c_result.reused_from_id is 'NULL when computed here; else the id of the original result whose figures were copied because the inputs (inputs_sha256) had not changed. The original may be an ad-hoc estimate not published here';
comment on column c2c_result.gpus is 'GPUs in the job';
comment on column c2c_result.t_iter_s is 'Modelled time of one training iteration, in seconds';
comment on column c2c_result.t_compute_s is 'Compute time per iteration, in seconds';
comment on column c2c_result.t_bubble_s is 'Pipeline-parallel bubble (idle) time per iteration, in seconds';
comment on column c2c_result.c2c is 'Communication-to-computation ratio: exposed (not overlapped) communication time / compute time, per iteration';
comment on column c2c_result.c2c_scale_up is 'Exposed communication time on the scale-up tier (NVLink domain) / compute time';
comment on column c2c_result.c2c_scale_out is 'Exposed communication time on the scale-out NICs (InfiniBand or Ethernet) / compute time';
comment on column c2c_result.c2c_class is 'C2C class: compute-bound (C2C < 0.2), performance-sensitive (0.2 to 0.6) or communication-bound (> 0.6)';
comment on column c2c_result.recommended_fabric is 'The fabric the estimate points to, as named by the C2C model';
comment on column c2c_result.mfu is 'Model FLOPs utilisation: model_tflops_per_gpu / the GPU''s peak, as a fraction (0 to 1)';
comment on column c2c_result.hw_tflops_per_gpu is 'Hardware FLOP rate achieved per GPU including recomputation, in TFLOP/s';
comment on column c2c_result.model_tflops_per_gpu is 'Model FLOP rate achieved per GPU (useful work only), in TFLOP/s';
comment on column c2c_result.memory_gib_per_gpu is 'Modelled memory needed per GPU, in GiB';
comment on column c2c_result.fits is 'Whether memory_gib_per_gpu fits in the GPU''s memory';
comment on column c2c_result.time_to_train_days is 'Time to train the scenario''s token budget, in days (NULL when the scenario sets none)';
comment on column c2c_result.result_json is 'The full estimate as JSON (JSON type: read fields with ->>): time stack with link and exposed times per parallelism dimension, layout, and the specs used with their sources';

create table tco_result (
    id bigint primary key,
    scenario varchar not null,
    scenario_sha256 varchar not null,
    dataset_version_id integer not null references dataset_version (id),
    code_version varchar not null,
    inputs_sha256 varchar not null,
    computed_at timestamptz not null,
    reused_from_id bigint,
    mode varchar not null,
    scale_up_option varchar,
    scale_out_option varchar,
    break_even_speedup double,
    break_even_p10 double,
    break_even_p50 double,
    break_even_p90 double,
    speedup double,
    cheaper_option varchar,
    verdict varchar,
    total_cost_usd double,
    result_json json not null
);
comment on table tco_result is 'The TCO (total cost of ownership) model''s result for each scenario on each dataset version (append-only; ad-hoc results without a dataset version are not published). mode = comparison: a scale-up option against a scale-out option; mode = training-run: the cost of one training run. The other mode''s columns are NULL.';
comment on column tco_result.id is 'Ledger id of the result';
comment on column tco_result.scenario is 'Scenario name (scenario.name)';
comment on column tco_result.scenario_sha256 is 'content_sha256 of the scenario definition used; joins scenario on (name, content_sha256)';
comment on column tco_result.dataset_version_id is 'Dataset version whose ledger values (prices, power, specs) the result used (dataset_version.id)';
comment on column tco_result.code_version is 'specledger version that computed the figures';
comment on column tco_result.inputs_sha256 is 'sha256 of the scenario definition, the values read from the ledger and the code version';
comment on column tco_result.computed_at is 'When this row was recorded (UTC); for a reused result, when the reuse was recorded';
comment on column tco_result.reused_from_id is 'NULL when computed here; else the id of the original result whose figures were copied because the inputs (inputs_sha256) had not changed. The original may be an ad-hoc result not published here';
comment on column tco_result.mode is 'comparison (scale-up vs scale-out option, per year of ownership) or training-run (cost of one training run)';
comment on column tco_result.scale_up_option is 'Comparison: name of the scale-up option U (e.g. NVL72-class racks); NULL for a training run';
comment on column tco_result.scale_out_option is 'Comparison: name of the scale-out option O (e.g. 8-GPU nodes on InfiniBand or Ethernet); NULL for a training run';
comment on column tco_result.break_even_speedup is 'Comparison: break-even speed-up s* = (R_U + K) / (R_O + K), a ratio of annual costs in USD per year (R = annualised capex + opex, K = time-proportional cost); U is cheaper per job when JCT_O / JCT_U >= s*';
comment on column tco_result.break_even_p10 is 'Comparison: 10th percentile of s* when a ledger input is a range (NULL otherwise), dimensionless';
comment on column tco_result.break_even_p50 is 'Comparison: median of s* when a ledger input is a range (NULL otherwise), dimensionless';
comment on column tco_result.break_even_p90 is 'Comparison: 90th percentile of s* when a ledger input is a range (NULL otherwise), dimensionless';
comment on column tco_result.speedup is 'Comparison: speed-up s = JCT_O / JCT_U from the job completion times (days) of both options, dimensionless; NULL when a JCT is unknown';
comment on column tco_result.cheaper_option is 'Comparison: the option whose job costs less (s against s*); NULL when the speed-up is unknown';
comment on column tco_result.verdict is 'Comparison: the verdict as page 1 of the briefing states it: the option to buy, or ''too close to call'' when the Monte Carlo band of s against s* straddles the break-even (cheaper_option still names the cheaper at the point estimate); NULL without both job times or for a training run';
comment on column tco_result.total_cost_usd is 'Training run: total cost of the run in USD (hardware, interconnect and energy); NULL for a comparison';
comment on column tco_result.result_json is 'The full result as JSON (JSON type: read fields with ->>): per-option costs with ranges, inputs with their sources, the tornado (sensitivity) and the other figures the model printed';

create table tco_option_result (
    result_id bigint not null references tco_result (id),
    scenario varchar not null,
    dataset_version_id integer not null references dataset_version (id),
    option varchar not null,
    gpus integer,
    annual_capex_usd double,
    annual_opex_usd double,
    annual_total_usd double,
    usd_per_gpu_hour double,
    usd_per_useful_gpu_hour double,
    jct_days double,
    job_cost_usd double,
    job_cost_p10 double,
    job_cost_p90 double,
    primary key (result_id, option)
);
comment on table tco_option_result is 'One row per option (cluster build) of each published TCO comparison result, taken from tco_result.result_json.';
comment on column tco_option_result.result_id is 'The comparison result the option belongs to (tco_result.id)';
comment on column tco_option_result.scenario is 'Scenario name (scenario.name, tco_result.scenario)';
comment on column tco_option_result.dataset_version_id is 'Dataset version of the result (dataset_version.id)';
comment on column tco_option_result.option is 'Name of the option, as tco_result.scale_up_option or scale_out_option name it';
comment on column tco_option_result.gpus is 'GPUs in the option''s cluster';
comment on column tco_option_result.annual_capex_usd is 'Annualised capital expenditure (compute, network, facility), in USD per year';
comment on column tco_option_result.annual_opex_usd is 'Operating expenditure (energy x PUE, colocation, maintenance, staff and licences), in USD per year';
comment on column tco_option_result.annual_total_usd is 'Annual owned cost R = capex + opex, in USD per year';
comment on column tco_option_result.usd_per_gpu_hour is 'Annual total / (GPUs x 8760 h), in USD per GPU-hour at 100 % availability and goodput';
comment on column tco_option_result.usd_per_useful_gpu_hour is 'Annual total / (GPUs x 8760 h x availability x goodput), in USD per useful GPU-hour';
comment on column tco_option_result.jct_days is 'Job completion time of the scenario''s job on this option, in days (NULL when unknown)';
comment on column tco_option_result.job_cost_usd is 'Cost of the job on this option, (R + K) x JCT / 365, in USD (NULL when the JCT is unknown)';
comment on column tco_option_result.job_cost_p10 is '10th percentile of job_cost_usd in USD when a ledger input is a range (NULL otherwise)';
comment on column tco_option_result.job_cost_p90 is '90th percentile of job_cost_usd in USD when a ledger input is a range (NULL otherwise)';

-- Column comments for the remaining columns.
comment on column source_kind_rank.kind is 'A source kind';
comment on column source_kind_rank.rank is 'Its rank in the resolution rule (1 = strongest)';
comment on column source.key is 'Stable key of the source, as written in the packs';
comment on column source.title is 'Title of the document or dataset';
comment on column source.publisher is 'Who published it';
comment on column source.url is 'Where it can be read';
comment on column source.retrieved_on is 'When it was retrieved (may be NULL)';
comment on column item.key is 'Stable key of the item (e.g. nvlink-5, gb200-nvl72)';
comment on column item.name is 'Display name';
comment on column item.kind is 'gpu, scaleup_fabric, scaleout_switch, switch_silicon, rack, system, standard, energy_price, ...';
comment on column item.vendor is 'Vendor or body behind the item';
comment on column item.family is 'Product family or generation';
comment on column metric.key is 'Stable key of the metric (e.g. scaleup_bw_per_gpu_bidir)';
comment on column metric.min_value is 'Smallest plausible value in the canonical unit (lower values are rejected)';
comment on column metric.max_value is 'Largest plausible value in the canonical unit (higher values are rejected)';
comment on column metric.description is 'What the metric measures';
comment on column observation.observation_id is 'Ledger id of the observation';
comment on column observation.item is 'Item key (item.key)';
comment on column observation.metric is 'Metric key (metric.key)';
comment on column observation.source is 'Source key (source.key)';
comment on column observation.quote is 'The source''s own words for the figure, when recorded';
comment on column observation.ingest_run_id is 'Ingest run that recorded the observation';
comment on column dataset_version.id is 'Dataset version id';
comment on column dataset_version.cutoff_at is 'Knowledge-time cut-off (UTC)';
comment on column dataset_version.content_hash is 'sha256 of the content of the observations live at the cut-off';
comment on column dataset_version.observation_count is 'Live observations at the cut-off';
comment on column dataset_version.ingest_run_id is 'Ingest run that produced this version';
comment on column dataset_version.created_at is 'When the version was recorded (UTC)';
comment on column rejected_row.ingest_run_id is 'Ingest run that rejected the row';
comment on column rejected_row.path is 'File path as given to the ingest';
comment on column rejected_row.sha256 is 'sha256 of the file (raw bytes are kept in the ledger)';
comment on column rejected_row.line is 'Line of the row in the file (NULL when unknown)';
comment on column rejected_row.field is 'Field that failed validation (file = the whole file)';
comment on column rejected_row.reason is 'Why it was rejected';
comment on column rejected_row.raw_text is 'The row as read';

create table model_error (
    checks varchar not null,
    set_key varchar not null,
    calibration_set varchar not null,
    url varchar not null,
    published_on date not null,
    quantity varchar not null,
    error_unit varchar not null,
    point varchar not null,
    model varchar,
    gpu varchar,
    engine varchar,
    layout varchar,
    measured double not null,
    predicted double not null,
    error double not null
);
comment on table model_error is 'The C2C model (training runs) and the serving model (measured serving points) against every published measurement they are calibrated on (specledger validate): one row per point, with the models of this build. Sign convention: error > 0 means the model predicts more than was measured (a longer iteration time for iteration-time sets, a higher MFU or throughput for the others). E.g. select checks, gpu, engine, avg(abs(error)) from model_error group by all.';
comment on column model_error.checks is 'Which of specledger''s models the point checks: c2c (training) or serving';
comment on column model_error.set_key is 'Short key of the calibration set (one published table, or one serving GPU family): group by it';
comment on column model_error.calibration_set is 'Title of the published set of measurements';
comment on column model_error.url is 'Where the set was published (pinned to a commit where it is a repository file)';
comment on column model_error.published_on is 'When the set was published';
comment on column model_error.quantity is 'What measured and predicted are: iteration time (s), MFU (%) or throughput (tokens/s/GPU)';
comment on column model_error.error_unit is '% (error relative to measured) or points (MFU difference)';
comment on column model_error.point is 'The measured run: model, GPUs, system, precision';
comment on column model_error.model is 'The model measured (a preset key for serving, the table''s model name for training)';
comment on column model_error.gpu is 'The GPU (serving: the ledger''s item key) or system (training: DGX-H100, a100, ...) it ran on';
comment on column model_error.engine is 'The serving engine (sglang, trt, vllm, atom) or training stack (megatron, pytorch)';
comment on column model_error.layout is 'The parallel layout: tp/ep (+ dp-attention) for serving, tp pp dp cp ep vp for training';
comment on column model_error.measured is 'The published value, in quantity';
comment on column model_error.predicted is 'The model''s value for the same run, in quantity';
comment on column model_error.error is 'Signed error, in error_unit: positive when the model predicts more than was measured, negative when less';

create table price_index (
    dataset_version bigint not null,
    version_date date not null,
    gpu varchar not null,
    term varchar not null,
    offers bigint not null,
    providers bigint not null,
    median_usd double not null,
    min_usd double not null,
    p25_usd double not null,
    p75_usd double not null,
    cheapest_provider varchar not null,
    cheapest_region varchar,
    cheapest_usd double not null,
    cheapest_source varchar not null,
    change_wow double,
    change_90d double
);
comment on table price_index is 'The GPU-hour price index: per dataset version (up to this file''s), GPU and term, the spread of USD per GPU-hour across providers and regions of every offer that version knew (each offer at its newest price), and the cheapest offer. Computed by models/market.';
comment on column price_index.dataset_version is 'The dataset version the index is as of (dataset_version.id)';
comment on column price_index.cheapest_provider is 'Provider of the cheapest offer';
comment on column price_index.cheapest_region is 'Region of the cheapest offer';
comment on column price_index.version_date is 'The dataset version''s cut-off date: the index as of then';
comment on column price_index.gpu is 'GPU item (item.key)';
comment on column price_index.term is 'on_demand, spot, reserved_1y, reserved_3y, capacity_block or contract';
comment on column price_index.offers is 'Offers behind the figures (an instance type in a region of a provider)';
comment on column price_index.providers is 'Distinct providers among them';
comment on column price_index.median_usd is 'Median USD per GPU-hour over providers (each provider one price: the median of its offers)';
comment on column price_index.min_usd is 'Lowest USD per GPU-hour of any offer';
comment on column price_index.p25_usd is '25th percentile of the providers'' prices (linear interpolation)';
comment on column price_index.p75_usd is '75th percentile of the providers'' prices (linear interpolation)';
comment on column price_index.cheapest_usd is 'The cheapest offer''s USD per GPU-hour (= min_usd)';
comment on column price_index.cheapest_source is 'Source of the cheapest offer';
comment on column price_index.change_wow is 'Median''s change against the latest version at least 7 days older, as a fraction (-0.12 = fell 12 %); NULL without one';
comment on column price_index.change_90d is 'Median''s change against the latest version at least 90 days older, as a fraction';

create table serving_result (
    id bigint primary key,
    scenario varchar not null,
    scenario_sha256 varchar not null,
    dataset_version_id integer not null references dataset_version (id),
    code_version varchar not null,
    inputs_sha256 varchar not null,
    computed_at timestamptz not null,
    reused_from_id bigint,
    target_tok_s_per_user double not null,
    cheaper_option varchar,
    verdict varchar,
    margin double,
    margin_p10 double,
    margin_p90 double,
    result_json json not null
);
comment on table serving_result is 'Each serving scenario''s answer on each dataset version (append-only): per option a curve of output tokens/s per GPU against tokens/s per user (measured when the ledger has points for the same hardware, model, precision and request shape, else the serving model''s), its USD per GPU-hour and USD per million output tokens; at the target interactivity the cheaper option with its margin and band. The points are in serving_curve.';
comment on column serving_result.id is 'Ledger id of the answer';
comment on column serving_result.scenario is 'Scenario name (scenario.name)';
comment on column serving_result.scenario_sha256 is 'content_sha256 of the scenario definition used; joins scenario on (name, content_sha256)';
comment on column serving_result.dataset_version_id is 'Dataset version whose hardware figures, prices and measured points the answer used (dataset_version.id)';
comment on column serving_result.code_version is 'specledger version that computed it';
comment on column serving_result.inputs_sha256 is 'sha256 of the scenario definition, the answer''s figures and the code version';
comment on column serving_result.computed_at is 'When this row was recorded (UTC); for a reused answer, when the reuse was recorded';
comment on column serving_result.reused_from_id is 'NULL when computed here; else the id of the original answer whose figures were copied because nothing it rests on had changed';
comment on column serving_result.target_tok_s_per_user is 'Target interactivity: output tokens/s each user must get (1 / time per output token)';
comment on column serving_result.cheaper_option is 'The option with the lowest USD per million output tokens at the target; NULL when fewer than two options reach it';
comment on column serving_result.verdict is 'The verdict as page 1 of the briefing states it: the cheaper option, or ''too close to call'' when the margin''s band crosses zero (cheaper_option still names the cheaper at the estimate); NULL when there is no comparison (fewer than two options reach the target, or they are priced on different bases)';
comment on column serving_result.margin is 'How much cheaper per million output tokens the cheaper option is than the next: 1 - cost_cheaper / cost_next (0.2 = 20 % cheaper)';
comment on column serving_result.margin_p10 is 'P10 of the margin with each option''s throughput at the ends of its error band (measured / predicted per GPU architecture), the widest combination; below 0 the other option may be cheaper';
comment on column serving_result.margin_p90 is 'P90 of the margin, as margin_p10';
comment on column serving_result.result_json is 'The full answer as JSON (JSON type: read fields with ->>): per option its curve, point at the target, price and where it comes from, band and the hardware figures used with their sources';

create table serving_curve (
    result_id bigint not null references serving_result (id),
    scenario varchar not null,
    dataset_version_id integer not null references dataset_version (id),
    option varchar not null,
    source varchar not null,
    usd_per_gpu_hour double not null,
    at_target boolean not null,
    concurrency double not null,
    tok_s_per_gpu double not null,
    tok_s_per_user double not null,
    ttft_s double,
    usd_per_mtok_out double not null
);
comment on table serving_curve is 'One row per point of each option''s serving curve in each published serving answer (serving_result.result_json), plus the option''s point at the target interactivity (at_target = true).';
comment on column serving_curve.result_id is 'The answer the point belongs to (serving_result.id)';
comment on column serving_curve.scenario is 'Scenario name (serving_result.scenario)';
comment on column serving_curve.dataset_version_id is 'Dataset version of the answer (dataset_version.id)';
comment on column serving_curve.option is 'Name of the option (a cluster, a deployment and a price)';
comment on column serving_curve.source is 'measured (points from inference_point) or model (the serving model)';
comment on column serving_curve.usd_per_gpu_hour is 'The option''s price, USD per GPU-hour (inline, the market''s price index, or the TCO model''s own figure)';
comment on column serving_curve.at_target is 'true for the point at the target interactivity (interpolated in log-log between the two points that bracket it)';
comment on column serving_curve.concurrency is 'Requests the model instance serves at once (interpolated for the target point)';
comment on column serving_curve.tok_s_per_gpu is 'Output tokens/s per GPU of the instance';
comment on column serving_curve.tok_s_per_user is 'Output tokens/s each request gets (1 / time per output token)';
comment on column serving_curve.ttft_s is 'Time to first token, seconds (NULL where a measurement does not give it)';
comment on column serving_curve.usd_per_mtok_out is 'USD per million output tokens: usd_per_gpu_hour / (3600 x tok_s_per_gpu) x 1e6';
