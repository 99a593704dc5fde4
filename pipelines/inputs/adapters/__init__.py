"""Adapters for files users already have (Epoch AI ml_hardware.csv, nccl-tests output, MLPerf
systems and results): each turns one file's bytes into a Parsed (pipelines.inputs.adapters.base),
which pipelines.jobs.ingest stores with the same guarantees as a source pack."""
