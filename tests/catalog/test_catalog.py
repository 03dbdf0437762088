"""A fresh lake's catalog has every table and view, and the DuckDB command line opens it."""

from catalog import Catalog
from catalog.catalog import VIEW_TABLES

TABLES = {"runs", "datasets", "versions", "stage_stats", "validation_findings", "validation_results",
          "dedup_clusters", "dedup_no_change", "scrub_audit", "exports", "export_rows", "label_ledger",
          "ignored_inputs", "ingests", "ingested_units", "validated_groups"}


def test_every_catalog_table_exists_on_a_fresh_lake(tmp_path):
    with Catalog(str(tmp_path / "catalog.duckdb"), str(tmp_path)) as cat:
        names = {r[0] for r in cat.con.execute("SELECT table_name FROM information_schema.tables").fetchall()}
        assert TABLES | set(VIEW_TABLES) <= names
        # the views answer before any dataset exists, with the schema's columns
        assert cat.con.execute("SELECT count(*) FROM branches").fetchall() == [(0,)]
        assert "next_observation" in {r[0] for r in cat.con.execute("DESCRIBE branches").fetchall()}
