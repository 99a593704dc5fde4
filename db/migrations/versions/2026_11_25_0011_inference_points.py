"""inference points: the serving points of inference benchmarks (InferenceX, MLPerf Inference)

Each point is one measured configuration and load of a model on a hardware: parallelism,
disaggregation, sequence lengths, concurrency and what it delivered (tokens/s per GPU and per
user, TTFT, TPOT), dated and sourced. measurement_run takes the kind 'inference', ingest_file
the formats of the InferenceX and MLPerf Inference readers.

Going down drops the points and, since the older vocabularies cannot name them, the inference
runs (their raw files and rejected rows stay) and the two formats (those files read 'unknown').

Revision ID: 0011
Revises: 0010
Create Date: 2026-11-25
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '0011'
down_revision: str | None = '0010'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_OLD_KINDS = ('nccl-tests', 'mlperf-result')
_NEW_KINDS = (*_OLD_KINDS, 'inference')
_OLD_FORMATS = ('source-pack', 'epoch-ml-hardware', 'nccl-tests', 'mlperf-system',
                'mlperf-result', 'unknown', 'azure-retail-prices', 'aws-price-list',
                'skypilot-catalog', 'quote-sheet')
_NEW_FORMATS = (*_OLD_FORMATS, 'inferencex', 'mlperf-inference')


def _allowed(table: str, column: str, values: tuple[str, ...]) -> None:
    """Replace the CHECK constraint that lists a column's allowed values."""
    with op.batch_alter_table(table) as batch:
        batch.drop_constraint(op.f(f'ck_{table}_{column}'), type_='check')
        batch.create_check_constraint(
            column, f"{column} IN (" + ", ".join(f"'{v}'" for v in values) + ")")


def upgrade() -> None:
    op.create_table('inference_point',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('measurement_run_id', sa.Integer(), nullable=False),
    sa.Column('line', sa.Integer(), nullable=True),
    sa.Column('source_key', sa.Text(), nullable=False),
    sa.Column('as_of', sa.Date(), nullable=False),
    sa.Column('hardware', sa.Text(), nullable=False),
    sa.Column('hardware_written', sa.Text(), nullable=False),
    sa.Column('system', sa.Text(), nullable=True),
    sa.Column('gpus', sa.Integer(), nullable=False),
    sa.Column('model', sa.Text(), nullable=False),
    sa.Column('model_written', sa.Text(), nullable=False),
    sa.Column('precision', sa.Text(), nullable=True),
    sa.Column('framework', sa.Text(), nullable=True),
    sa.Column('framework_version', sa.Text(), nullable=True),
    sa.Column('spec_decoding', sa.Text(), nullable=True),
    sa.Column('tp', sa.Integer(), nullable=True),
    sa.Column('ep', sa.Integer(), nullable=True),
    sa.Column('dp', sa.Integer(), nullable=True),
    sa.Column('disaggregated', sa.Boolean(), nullable=False),
    sa.Column('prefill_gpus', sa.Integer(), nullable=True),
    sa.Column('decode_gpus', sa.Integer(), nullable=True),
    sa.Column('input_tokens', sa.Integer(), nullable=True),
    sa.Column('output_tokens', sa.Integer(), nullable=True),
    sa.Column('concurrency', sa.Integer(), nullable=True),
    sa.Column('tok_s_per_gpu', sa.Float(), nullable=False),
    sa.Column('total_tok_s_per_gpu', sa.Float(), nullable=True),
    sa.Column('tok_s_per_user', sa.Float(), nullable=True),
    sa.Column('ttft_s', sa.Float(), nullable=True),
    sa.Column('tpot_s', sa.Float(), nullable=True),
    sa.Column('scenario', sa.Text(), nullable=True),
    sa.Column('benchmark', sa.Text(), nullable=False),
    sa.ForeignKeyConstraint(['measurement_run_id'], ['measurement_run.id'], name=op.f('fk_inference_point_measurement_run_id_measurement_run')),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_inference_point'))
    )
    with op.batch_alter_table('inference_point', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_inference_point_measurement_run_id'), ['measurement_run_id'], unique=False)
    _allowed('measurement_run', 'kind', _NEW_KINDS)
    _allowed('ingest_file', 'format', _NEW_FORMATS)


def downgrade() -> None:
    with op.batch_alter_table('inference_point', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_inference_point_measurement_run_id'))
    op.drop_table('inference_point')
    op.execute("DELETE FROM measurement_run WHERE kind = 'inference'")
    op.execute("UPDATE ingest_file SET format = 'unknown' "
               "WHERE format IN ('inferencex', 'mlperf-inference')")
    _allowed('ingest_file', 'format', _OLD_FORMATS)
    _allowed('measurement_run', 'kind', _OLD_KINDS)
