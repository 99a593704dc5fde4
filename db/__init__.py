"""The ledger: SQLAlchemy schema, Alembic migrations, the store and the DuckDB publisher."""
