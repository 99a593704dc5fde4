"""adapters: measurement runs, nccl points, item dates, ingest file format and options

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-22
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op


revision: str = '0004'
down_revision: str | None = '0003'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table('measurement_run',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('kind', sa.String(length=20), nullable=False),
    sa.Column('ingest_run_id', sa.Integer(), nullable=False),
    sa.Column('ingest_file_id', sa.Integer(), nullable=False),
    sa.Column('raw_file_id', sa.Integer(), nullable=False),
    sa.Column('item_key', sa.String(length=200), nullable=True),
    sa.Column('started_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('finished_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('ranks', sa.Integer(), nullable=True),
    sa.Column('nodes', sa.Integer(), nullable=True),
    sa.Column('gpus_per_node', sa.Integer(), nullable=True),
    sa.Column('device', sa.String(length=200), nullable=True),
    sa.Column('nccl_version', sa.String(length=50), nullable=True),
    sa.Column('collective', sa.String(length=50), nullable=True),
    sa.Column('benchmark', sa.String(length=100), nullable=True),
    sa.Column('duration_s', sa.Float(), nullable=True),
    sa.Column('metadata_json', sa.Text(), nullable=False),
    sa.CheckConstraint("kind IN ('nccl-tests', 'mlperf-result')", name=op.f('ck_measurement_run_kind')),
    sa.ForeignKeyConstraint(['ingest_file_id'], ['ingest_file.id'], name=op.f('fk_measurement_run_ingest_file_id_ingest_file')),
    sa.ForeignKeyConstraint(['ingest_run_id'], ['ingest_run.id'], name=op.f('fk_measurement_run_ingest_run_id_ingest_run')),
    sa.ForeignKeyConstraint(['raw_file_id'], ['raw_file.id'], name=op.f('fk_measurement_run_raw_file_id_raw_file')),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_measurement_run'))
    )
    with op.batch_alter_table('measurement_run', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_measurement_run_ingest_file_id'), ['ingest_file_id'], unique=False)
        batch_op.create_index(batch_op.f('ix_measurement_run_ingest_run_id'), ['ingest_run_id'], unique=False)
        batch_op.create_index(batch_op.f('ix_measurement_run_raw_file_id'), ['raw_file_id'], unique=False)

    op.create_table('nccl_point',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('measurement_run_id', sa.Integer(), nullable=False),
    sa.Column('line', sa.Integer(), nullable=True),
    sa.Column('collective', sa.String(length=50), nullable=False),
    sa.Column('size_bytes', sa.BigInteger(), nullable=False),
    sa.Column('count', sa.BigInteger(), nullable=False),
    sa.Column('dtype', sa.String(length=20), nullable=False),
    sa.Column('redop', sa.String(length=20), nullable=True),
    sa.Column('root', sa.Integer(), nullable=True),
    sa.Column('oop_time_us', sa.Float(), nullable=False),
    sa.Column('oop_algbw', sa.Float(), nullable=False),
    sa.Column('oop_busbw', sa.Float(), nullable=False),
    sa.Column('oop_wrong', sa.BigInteger(), nullable=True),
    sa.Column('ip_time_us', sa.Float(), nullable=True),
    sa.Column('ip_algbw', sa.Float(), nullable=True),
    sa.Column('ip_busbw', sa.Float(), nullable=True),
    sa.Column('ip_wrong', sa.BigInteger(), nullable=True),
    sa.ForeignKeyConstraint(['measurement_run_id'], ['measurement_run.id'], name=op.f('fk_nccl_point_measurement_run_id_measurement_run')),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_nccl_point'))
    )
    with op.batch_alter_table('nccl_point', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_nccl_point_measurement_run_id'), ['measurement_run_id'], unique=False)

    with op.batch_alter_table('ingest_file', schema=None) as batch_op:
        batch_op.add_column(sa.Column('format', sa.String(length=30), server_default='source-pack', nullable=False))
        batch_op.add_column(sa.Column('options', sa.Text(), server_default='{}', nullable=False))
        batch_op.create_check_constraint(
            'format', "format IN ('source-pack', 'epoch-ml-hardware', 'nccl-tests', "
                      "'mlperf-system', 'mlperf-result', 'unknown')")

    with op.batch_alter_table('item', schema=None) as batch_op:
        batch_op.add_column(sa.Column('announced_on', sa.Date(), nullable=True))
        batch_op.add_column(sa.Column('released_on', sa.Date(), nullable=True))



def downgrade() -> None:
    with op.batch_alter_table('item', schema=None) as batch_op:
        batch_op.drop_column('released_on')
        batch_op.drop_column('announced_on')

    with op.batch_alter_table('ingest_file', schema=None) as batch_op:
        batch_op.drop_constraint(batch_op.f('ck_ingest_file_format'), type_='check')
        batch_op.drop_column('options')
        batch_op.drop_column('format')

    with op.batch_alter_table('nccl_point', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_nccl_point_measurement_run_id'))

    op.drop_table('nccl_point')
    with op.batch_alter_table('measurement_run', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_measurement_run_raw_file_id'))
        batch_op.drop_index(batch_op.f('ix_measurement_run_ingest_run_id'))
        batch_op.drop_index(batch_op.f('ix_measurement_run_ingest_file_id'))

    op.drop_table('measurement_run')
