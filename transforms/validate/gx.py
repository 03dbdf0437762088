"""Declared great-expectations (1.x) suites over a dataset version: dataset-level quality reports, not
row filters (the hot-path rules do that, 7-13x faster).

Suites are JSON files in `suites/`: `<table>.json` runs on the whole table, `<table>.<domain>.json` on that
domain's rows. Steps are flattened first (`action_kind`, `action_x`, `observation_kind`,
`observation_text_chars`...) since expectations name plain columns.

Engine: pandas. Measured here (2 cores, 200k rows, 3 expectations): pandas 0.17 s, SQLite SQL datasource
0.55 s (before the load into SQLite), and the DuckDB SQLAlchemy dialect failed inside GX 1.24's metric
resolution ("list index out of range"); `bench/validate.py` repeats the pandas figure on the bench corpus.
Tables above `SAMPLE_ROWS` rows are validated on a seeded random sample of that many rows (uniqueness
expectations then speak for the sample only); the result rows say so.

`import great_expectations` costs ~3.5 s: this module imports it inside `run_suites` only.
"""

from __future__ import annotations

import functools
import json
import logging
import os
import time
from dataclasses import dataclass
from pathlib import Path

import polars as pl
import pyarrow as pa

SUITES_DIR = Path(__file__).parent / "suites"
# GX holds ~1 KB a sampled row (pandas copies; measured: 100k step rows +166 MB, 142k +206 MB), so the sample
# is what validate's memory grows with: 100,000 rows are reached at ~2 GB of DroidBot input, and past it the
# peak stays flat (250,000 took validate from 623 MB at 2 GB to 920 MB at 10 GB). The hot-path rules check
# every row; the suites' distributions (null shares, ranges, sets) are estimated to ~0.3 % at this size.
SAMPLE_ROWS = 100_000
SAMPLE_SEED = 0
SAMPLE_BYTES = 32 << 20  # the flattened sample per table (~150 B a step row) held while groups are validated


@dataclass
class SuiteRun:
    results: list[dict]  # suite, expectation, success, observed_value, rows, sampled
    seconds: float
    docs_dir: str | None  # local folder with the Data Docs site (index.html), when asked for


def load_suites(directory: Path = SUITES_DIR) -> list[dict]:
    """The suite files, sorted by name; each has `name`, `meta.table`, `meta.domain`, `expectations`."""
    suites = []
    for path in sorted(directory.glob("*.json")):
        suite = json.loads(path.read_text())
        table, _, domain = path.stem.partition(".")
        suite.setdefault("meta", {}).update(table=table, domain=domain or None)
        suites.append(suite)
    return suites


def suite_columns(table: str, suites: list[dict] | None = None) -> frozenset[str]:
    """The columns `table`'s suites name, with the ids (the sample is drawn by them) and `domain` (it picks a
    domain suite's rows): the rest of a row costs GX memory for nothing (an episode's task text, metadata)."""
    return frozenset(_named_columns(table, suites)) if suites else _bundled_columns(table)


@functools.lru_cache(maxsize=None)
def _bundled_columns(table: str) -> frozenset[str]:
    """`suite_columns` of the bundled suites, read from their files once, not once per part group."""
    return frozenset(_named_columns(table, load_suites()))


def _named_columns(table: str, suites: list[dict]) -> set[str]:
    names = {"episode_id", "domain"} | ({"step_id"} if table == "steps" else set())
    for spec in suites:
        if spec["meta"]["table"] != table:
            continue
        for expectation in spec["expectations"]:
            for key in ("column", "column_A", "column_B", "column_list"):
                value = expectation.get("kwargs", {}).get(key)
                names.update(value if isinstance(value, list) else [value] if value else [])
    return names


def flatten_steps(steps: pa.Table, suites: list[dict] | None = None) -> pl.DataFrame:
    """The step columns suites name: scalars, plus action/observation fields as plain columns."""
    obs, act = pl.col("observation").struct, pl.col("action").struct
    frame = pl.from_arrow(steps.select(["episode_id", "step_id", "step_index", "domain", "origin", "is_first",
                                       "is_last", "is_terminal", "timestamp", "reward", "observation",
                                       "action"])).select(
        "episode_id", "step_id", "step_index", "domain", "origin", "is_first", "is_last", "is_terminal",
        "timestamp", "reward",
        obs.field("kind").alias("observation_kind"), obs.field("url").alias("observation_url"),
        obs.field("text").str.len_chars().alias("observation_text_chars"),
        act.field("kind").alias("action_kind"), act.field("x").alias("action_x"), act.field("y").alias("action_y"),
        act.field("x2").alias("action_x2"), act.field("y2").alias("action_y2"))
    named = suite_columns("steps", suites)
    return frame.select([c for c in frame.columns if c in named])


def _sample(df: pl.DataFrame, limit: int) -> tuple[pl.DataFrame, bool]:
    return (df.sample(limit, seed=SAMPLE_SEED), True) if df.height > limit else (df, False)


def _observed(result) -> str | None:
    r = result.result or {}
    value = r.get("observed_value")
    if value is None and "unexpected_count" in r:
        value = {"unexpected_count": r["unexpected_count"], "unexpected_percent": r.get("unexpected_percent"),
                 "partial_unexpected_list": (r.get("partial_unexpected_list") or [])[:5]}
    if result.exception_info and result.exception_info.get("raised_exception"):
        value = {"exception": result.exception_info.get("exception_message")}
    return None if value is None else json.dumps(value, default=str, ensure_ascii=False)


def episode_frame(episodes: pa.Table, suites: list[dict] | None = None) -> pl.DataFrame:
    """The episode columns suites name."""
    named = suite_columns("episodes", suites)
    return pl.from_arrow(episodes.select([c for c in episodes.column_names if c in named]))


def run_suites(episodes: pa.Table, steps: pa.Table, *, docs_dir: str | None = None,
               sample_rows: int = SAMPLE_ROWS, suites: list[dict] | None = None) -> SuiteRun:
    """Run every suite on its table (or domain slice); empty slices are skipped. With `docs_dir`, build
    the Data Docs HTML site there."""
    return run_frames({"episodes": episode_frame(episodes, suites), "steps": flatten_steps(steps, suites)},
                      docs_dir=docs_dir, sample_rows=sample_rows, suites=suites)


def run_frames(frames: dict[str, pl.DataFrame], *, docs_dir: str | None = None, sample_rows: int = SAMPLE_ROWS,
               suites: list[dict] | None = None, presampled: bool = False) -> SuiteRun:
    """`run_suites` on frames already made with `episode_frame` / `flatten_steps` (`presampled`: they are a
    sample of a larger dataset, so every result is marked sampled)."""
    started = time.perf_counter()
    logging.getLogger("great_expectations").setLevel(logging.ERROR)
    os.environ.setdefault("GX_ANALYTICS_ENABLED", "false")
    import great_expectations as gx  # slow import: only here

    context = gx.get_context(mode="ephemeral")
    context.variables.progress_bars = {"globally": False}
    if docs_dir:
        context.add_data_docs_site("local", {
            "class_name": "SiteBuilder", "site_index_builder": {"class_name": "DefaultSiteIndexBuilder"},
            "store_backend": {"class_name": "TupleFilesystemStoreBackend", "base_directory": docs_dir}})
    source = context.data_sources.add_pandas("dataset")
    results = []
    for spec in suites or load_suites():
        table, domain = spec["meta"]["table"], spec["meta"]["domain"]
        df = frames[table]
        if domain:
            df = df.filter(pl.col("domain") == domain)
            if df.height == 0:
                continue
        df, sampled = _sample(df, sample_rows)
        suite = context.suites.add(gx.ExpectationSuite(name=spec["name"], expectations=spec["expectations"],
                                                       meta=spec.get("meta")))
        batch = source.add_dataframe_asset(spec["name"]).add_batch_definition_whole_dataframe("all")
        definition = context.validation_definitions.add(gx.ValidationDefinition(
            name=spec["name"], data=batch, suite=suite))
        outcome = definition.run(batch_parameters={"dataframe": df.to_pandas()})
        for r in outcome.results:
            config = r.expectation_config
            column = config.kwargs.get("column")
            results.append({"suite": spec["name"],
                            "expectation": f"{config.type}({column})" if column else config.type,
                            "success": bool(r.success), "observed_value": _observed(r), "rows": df.height,
                            "sampled": sampled or presampled})
    if docs_dir:
        context.build_data_docs(site_names=["local"])
    return SuiteRun(results, time.perf_counter() - started, docs_dir)
