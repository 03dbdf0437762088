"""The request ledger: one row per world-model request ever answered, in the catalog table `label_ledger`
(`pipelines eval` keeps its requests the same way, in `eval_requests`: the functions take the table).

Key: `request_key` = hash of (model, template hash, input hash, sampling params). A rerun finds its rows and
sends nothing; a changed template (per domain), model or sampling gives new keys, so exactly the affected
requests are sent again (old rows stay as history). Status:

- `ok`: the output parsed to an observation (`observation` holds it);
- `failed`: the server answered but the output is unusable (empty, truncated at max_tokens): kept, not resent
  unless asked (`retry_failed`), since the same request would likely fail the same way;
- `error`: no answer (server down, timeouts, HTTP errors after retries): resent on the next run.
"""

from __future__ import annotations

from typing import Iterable

COLUMNS = ("request_key", "model", "template_hash", "input_hash", "sampling", "domain", "parent_step_id",
           "strategy", "branch_id", "status", "observation", "output", "finish_reason", "tokens_in",
           "tokens_out", "latency_s", "attempts", "error", "run_id", "created_at")


def exists(con, table: str = "label_ledger") -> bool:
    """Whether the table exists (a catalog opened read-only, written before the table was added, lacks it)."""
    rows = con.execute("SELECT count(*) FROM information_schema.tables WHERE table_name = ?", [table]).fetchall()
    return bool(rows[0][0])


def lookup(con, keys: Iterable[str], table: str = "label_ledger") -> dict[str, dict]:
    """request_key -> ledger row (as a dict) for the keys already in the ledger."""
    keys = list(keys)
    if not keys or not exists(con, table):
        return {}
    import pyarrow as pa

    con.register("_wanted_keys", pa.table({"request_key": keys}))
    try:
        found = con.sql(f"SELECT l.* FROM {table} l JOIN _wanted_keys USING (request_key)").to_arrow_table()
    finally:
        con.unregister("_wanted_keys")
    return {row["request_key"]: row for row in found.to_pylist()}


def record(con, rows: list[dict], table: str = "label_ledger", columns: tuple[str, ...] = COLUMNS) -> None:
    """Insert or replace rows (dicts with the `columns` keys)."""
    if not rows:
        return
    import pyarrow as pa

    con.register("_ledger_rows", pa.Table.from_pylist([{c: r.get(c) for c in columns} for r in rows]))
    try:
        con.execute(f"INSERT OR REPLACE INTO {table} SELECT {', '.join(columns)} FROM _ledger_rows")
    finally:
        con.unregister("_ledger_rows")
