"""A fresh lake's catalog has every table and view, and the DuckDB command line opens it."""

from catalog import Catalog
from catalog.catalog import VIEW_TABLES

TABLES = {"runs", "datasets", "versions", "stage_stats", "validation_findings", "validation_results",
          "dedup_clusters", "dedup_no_change", "scrub_audit", "exports", "export_rows", "label_ledger",
          "ignored_inputs", "ingests", "ingested_units", "validated_groups", "catalog_meta"}


def test_every_catalog_table_exists_on_a_fresh_lake(tmp_path):
    with Catalog(str(tmp_path / "catalog.duckdb"), str(tmp_path)) as cat:
        names = {r[0] for r in cat.con.execute("SELECT table_name FROM information_schema.tables").fetchall()}
        assert TABLES | set(VIEW_TABLES) <= names
        # the views answer before any dataset exists, with the schema's columns
        assert cat.con.execute("SELECT count(*) FROM branches").fetchall() == [(0,)]
        assert "next_observation" in {r[0] for r in cat.con.execute("DESCRIBE branches").fetchall()}


def _old_catalog_with_export_rows(path, lake):
    """A catalog as written before lineage files: `export_rows` a table (without the recipe columns of later
    versions for one export) beside its `exports` rows."""
    import duckdb

    con = duckdb.connect(path)
    con.execute("CREATE TABLE exports (export_id VARCHAR PRIMARY KEY, kind VARCHAR, format VARCHAR, "
                "dataset VARCHAR, version INTEGER, out VARCHAR, created_at TIMESTAMPTZ, rows BIGINT, manifest JSON)")
    con.execute('CREATE TABLE export_rows (export_id VARCHAR, shard VARCHAR, "row" BIGINT, step_ids VARCHAR[])')
    con.execute("INSERT INTO exports VALUES ('aa11', 'sft', 'agentworld', 'android', 1, 'out/a', now(), 2, '{}'), "
                "('bb22', 'cpt', 'text', 'android', 1, 'out/b', now(), 1, '{}')")
    con.execute("INSERT INTO export_rows VALUES ('aa11', 'train/a.jsonl', 1, ['e:1', 'e:2']), "
                "('aa11', 'train/a.jsonl', 0, ['e:0']), ('bb22', 'train/b.parquet', 0, ['e:0', 'e:1', 'e:2'])")
    con.close()


def test_an_older_catalogs_export_rows_table_moves_to_lineage_files(tmp_path):
    path, lake = str(tmp_path / "catalog.duckdb"), str(tmp_path)
    _old_catalog_with_export_rows(path, lake)
    with Catalog(path, lake) as cat:
        kinds = dict(cat.con.execute("SELECT table_name, table_type FROM information_schema.tables").fetchall())
        assert kinds["export_rows"] == "VIEW"
        rows = cat.con.execute('SELECT export_id, shard, "row", step_ids, prompt_variant FROM export_rows '
                               'ORDER BY export_id, "row"').fetchall()
        assert rows == [("aa11", "train/a.jsonl", 0, ["e:0"], None), ("aa11", "train/a.jsonl", 1, ["e:1", "e:2"], None),
                        ("bb22", "train/b.parquet", 0, ["e:0", "e:1", "e:2"], None)]
        assert cat.con.execute("SELECT export_id, lineage FROM exports ORDER BY 1").fetchall() == [
            ("aa11", "export_rows/aa11.parquet"), ("bb22", "export_rows/bb22.parquet")]
    assert sorted(p.name for p in (tmp_path / "export_rows").iterdir()) == ["aa11.parquet", "bb22.parquet"]
    with Catalog(path, lake) as cat:  # opened again: nothing moved twice
        assert cat.con.execute("SELECT count(*) FROM export_rows").fetchall() == [(3,)]


def test_export_rows_read_every_exports_file_and_survive_one_removed(tmp_path):
    import datetime as dt

    import pyarrow as pa
    import pyarrow.parquet as pq

    from catalog.catalog import EXPORT_ROWS, export_rows_path

    path, lake = str(tmp_path / "catalog.duckdb"), str(tmp_path)
    (tmp_path / "export_rows").mkdir()
    with Catalog(path, lake) as cat:
        # bb22's file is of an export written before the dropped trajectories' columns
        older = pa.schema([f for f in EXPORT_ROWS if f.name not in ("episode_id", "line", "dropped_by")])
        for export_id, n, schema in (("aa11", 2, EXPORT_ROWS), ("bb22", 3, older)):
            rel = export_rows_path(export_id)
            pq.write_table(pa.table({"export_id": [export_id] * n, "shard": ["s"] * n, "row": list(range(n)),
                                     "step_ids": [["e:0"]] * n,
                                     **{f.name: [None] * n for f in schema if f.name not in (
                                         "export_id", "shard", "row", "step_ids")}},
                                    schema=schema), f"{lake}/{rel}")
            cat.add_export({"export_id": export_id, "kind": "sft", "format": "agentworld", "dataset": "d",
                            "version": 1, "out": "o", "created_at": dt.datetime.now(dt.timezone.utc), "rows": n}, rel)
        assert cat.con.execute("SELECT export_id, count(*) FROM export_rows GROUP BY 1 ORDER BY 1").fetchall() == [
            ("aa11", 2), ("bb22", 3)]
    (tmp_path / "export_rows" / "aa11.parquet").unlink()
    with Catalog(path, lake) as cat:
        cat.refresh_export_rows()
        assert cat.con.execute("SELECT export_id, count(*) FROM export_rows GROUP BY 1").fetchall() == [("bb22", 3)]
        # the older file alone: its rows have the newer columns, null
        assert cat.con.execute("SELECT count(*) FROM export_rows WHERE dropped_by IS NULL AND episode_id IS NULL "
                               "AND line IS NULL").fetchall() == [(3,)]
