"""unbounded text: columns holding what files and users write become TEXT

PostgreSQL refused a title over 500 characters, a unit over 50 or an item key over 200 that
SQLite stored: both now take the same text. String(n) stays only for what the code makes
(hashes, code versions, vocabularies). A downgrade cuts longer text to the old lengths.

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-24
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '0007'
down_revision: str | None = '0006'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# table -> (column, its former length, nullable)
COLUMNS: dict[str, tuple[tuple[str, int, bool], ...]] = {
    'raw_file': (('file_name', 500, False),),
    'ingest_file': (('path', 1000, False),),
    'rejected_row': (('field', 100, False),),
    'source': (('key', 200, False), ('title', 500, False), ('publisher', 200, True),
               ('url', 1000, True)),
    'item': (('key', 200, False), ('name', 300, False), ('kind', 50, False),
             ('vendor', 100, True), ('family', 100, True)),
    'metric': (('key', 100, False), ('unit', 50, False)),
    'observation': (('value_written', 100, False), ('unit_written', 50, False)),
    'measurement_run': (('item_key', 200, True), ('device', 200, True),
                        ('nccl_version', 50, True), ('collective', 50, True),
                        ('benchmark', 100, True)),
    'nccl_point': (('collective', 50, False), ('dtype', 20, False), ('redop', 20, True)),
    'scenario': (('name', 200, False), ('path', 1000, True)),
    'tco_result': (('scale_up_option', 200, True), ('scale_out_option', 200, True),
                   ('cheaper_option', 200, True)),
    'flag': (('subject', 400, False), ('item_key', 200, True), ('metric_key', 100, True),
             ('scenario_name', 200, True)),
    'briefing': (('path', 1000, False),),
    'remote_fetch': (('source_name', 200, False), ('url', 2000, False), ('etag', 500, True),
                     ('last_modified', 100, True)),
}


def upgrade() -> None:
    for table, columns in COLUMNS.items():
        with op.batch_alter_table(table, schema=None) as batch_op:
            for column, length, nullable in columns:
                batch_op.alter_column(column, existing_type=sa.String(length=length),
                                      type_=sa.Text(), existing_nullable=nullable)


def downgrade() -> None:
    for table, columns in COLUMNS.items():
        with op.batch_alter_table(table, schema=None) as batch_op:
            for column, length, nullable in columns:
                # PostgreSQL refuses to shorten a column holding longer text: cut it.
                batch_op.alter_column(column, existing_type=sa.Text(),
                                      type_=sa.String(length=length),
                                      existing_nullable=nullable,
                                      postgresql_using=f'left({column}, {length})')
