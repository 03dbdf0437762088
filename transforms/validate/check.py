"""Run every hot-path rule over a dataset version's tables and split them into kept and quarantined.

Pure: Arrow tables in, Arrow tables and a findings frame out. Policy: an episode with any `error` finding is
removed whole (with all its steps), since a broken trajectory teaches a world model wrong dynamics;
`warning` findings are reported and their records kept.
"""

from __future__ import annotations

from dataclasses import dataclass

import orjson
import polars as pl
import pyarrow as pa
import pyarrow.compute as pc

from schemas import v1
from transforms.validate import contract as contracts
from transforms.validate.consistency import check_consistency
from transforms.validate.invariants import check_episodes, check_steps, check_structure
from transforms.validate.rules import ERROR, RULES, SOURCE_SEVERITY, findings, severity_of


@dataclass
class Outcome:
    episodes: pa.Table  # kept
    steps: pa.Table  # kept
    findings: pl.DataFrame  # rule, episode_id, step_id, reason, severity (resolved)
    bad_episodes: list[str]  # episode ids removed by an error

    def counts(self) -> dict[str, dict[str, int]]:
        """{severity: {rule: findings}}."""
        out: dict[str, dict[str, int]] = {}
        for row in self.findings.group_by("severity", "rule").len().iter_rows(named=True):
            out.setdefault(row["severity"], {})[row["rule"]] = row["len"]
        return out


def conform_parts(episode_parts: list[tuple[str, pa.Table]], step_parts: list[tuple[str, pa.Table]],
                  contract: dict[str, str] | None = None) -> tuple[pa.Table, pa.Table, pl.DataFrame]:
    """Apply the schema contract to each (name, part) and concatenate: (episodes, steps, findings)."""
    contract = contract or {}
    found, episodes = [], []
    for name, part in episode_parts:
        formats = part["source_format"] if "source_format" in part.column_names else pa.nulls(part.num_rows, pa.string())
        table, f = contracts.conform(part, v1.EPISODES, contracts.row_modes(formats, contract), name)
        episodes.append(table)
        found.append(f)
    episodes_table = (pa.concat_tables(episodes, promote_options="default") if episodes
                      else v1.EPISODES.empty_table())
    source_of = pl.from_arrow(episodes_table.select(["episode_id", "source_format"])).unique("episode_id")
    steps = []
    for name, part in step_parts:
        ids = pl.DataFrame({"episode_id": part["episode_id"]}) if "episode_id" in part.column_names else \
            pl.DataFrame({"episode_id": pa.nulls(part.num_rows, pa.string())})
        formats = ids.join(source_of, on="episode_id", how="left", maintain_order="left")["source_format"]
        table, f = contracts.conform(part, v1.STEPS, contracts.row_modes(formats.to_arrow(), contract), name)
        steps.append(table)
        found.append(f)
    steps_table = pa.concat_tables(steps, promote_options="default") if steps else v1.STEPS.empty_table()
    return episodes_table, steps_table, pl.concat(found) if found else findings()


def validate(episodes: pa.Table, steps: pa.Table, *, severity: dict[str, str] | None = None,
             prior: pl.DataFrame | None = None, skip: tuple[str, ...] = ()) -> Outcome:
    """Every rule over conformed tables. `prior`: findings already made (the contract's); `severity`
    overrides rule defaults; `skip`: rule ids not to report (their checks still run)."""
    ep, st = pl.from_arrow(episodes), pl.from_arrow(steps)
    found = pl.concat([findings(prior), check_episodes(ep), check_steps(st), check_structure(ep, st),
                       check_consistency(st)])
    unknown = set(severity or {}) - set(RULES)
    if unknown:
        raise ValueError(f"severity given for unknown rules: {', '.join(sorted(unknown))}")
    found = found.filter(~pl.col("rule").is_in(list(skip))).with_columns(
        pl.coalesce(pl.col("severity"), pl.col("rule").replace_strict(
            {r: severity_of(r, severity) for r in RULES}, return_dtype=pl.String)).alias("severity"))
    found = _source_severities(found, ep, severity or {})
    bad = found.filter(pl.col("severity") == ERROR)["episode_id"].drop_nulls().unique().sort().to_list()
    bad_array = pa.array(bad, pa.string())
    keep_ep = pc.invert(pc.is_in(episodes["episode_id"], value_set=bad_array))
    keep_st = pc.invert(pc.is_in(steps["episode_id"], value_set=bad_array))
    # a null episode_id is itself an error with nowhere to attach: drop those rows too
    keep_ep = pc.and_(keep_ep, pc.is_valid(episodes["episode_id"]))
    keep_st = pc.and_(keep_st, pc.is_valid(steps["episode_id"]))
    # a clean version keeps every row: skip the filter, which would copy every column (view trees included)
    keep = lambda table, mask: table if pc.all(mask).as_py() is not False else table.filter(mask)  # noqa: E731
    return Outcome(keep(episodes, keep_ep), keep(steps, keep_st), found, bad)


def _source_severities(found: pl.DataFrame, episodes: pl.DataFrame, overrides: dict[str, str]) -> pl.DataFrame:
    """Apply SOURCE_SEVERITY: a rule's severity for the episodes of the source formats it names."""
    for rule, by_source in SOURCE_SEVERITY.items():
        if rule in overrides or not found.height or "source_format" not in episodes.columns:
            continue
        formats = episodes.select("episode_id", "source_format").unique("episode_id")
        joined = found.join(formats, on="episode_id", how="left", maintain_order="left")
        level = pl.col("source_format").replace_strict(by_source, default=None, return_dtype=pl.String)
        found = joined.with_columns(pl.when(pl.col("rule") == rule).then(pl.coalesce(level, pl.col("severity")))
                                    .otherwise(pl.col("severity")).alias("severity")).drop("source_format")
    return found


def quarantine_rows(outcome: Outcome, episodes: pa.Table, steps: pa.Table, run_id: str) -> pa.Table:
    """One quarantine row (schema v1, stage `validate`) per error finding, with the episode's source and
    the offending step's action (or the episode row) as the snippet. The removed records themselves stay
    readable in the parent version's parts, which versions never delete."""
    errors = outcome.findings.filter(pl.col("severity") == ERROR)
    if errors.height == 0:
        return v1.QUARANTINE.empty_table()
    ep = pl.from_arrow(episodes.select(["episode_id", "source_uri", "num_steps"]))
    errors = errors.join(ep.unique("episode_id"), on="episode_id", how="left", maintain_order="left")
    wanted = set(errors["step_id"].drop_nulls().to_list())
    step_rows = {}
    if wanted:
        picked = steps.filter(pc.is_in(steps["step_id"], value_set=pa.array(sorted(wanted), pa.string())))
        for row in picked.select(["step_id", "step_index", "action"]).to_pylist():
            step_rows[row["step_id"]] = row
    episode_rows = {}
    for row in episodes.select(["episode_id", "domain", "source_format", "task", "num_steps", "source_uri"]).filter(
            pc.is_in(episodes["episode_id"], value_set=pa.array(outcome.bad_episodes, pa.string()))).to_pylist():
        episode_rows[row["episode_id"]] = row
    out = []
    for r in errors.iter_rows(named=True):
        step = step_rows.get(r["step_id"])
        whole = f" (episode {r['episode_id']} quarantined whole: {r['num_steps']} steps)" if r["num_steps"] else ""
        snippet = step["action"] if step else episode_rows.get(r["episode_id"])
        out.append({
            "stage": "validate", "rule": r["rule"], "reason": r["reason"] + whole, "source_uri": r["source_uri"],
            "location": f"step {step['step_index']}" if step else "episode", "line": None,
            "record_id": r["step_id"] or r["episode_id"],
            "snippet": orjson.dumps(snippet, default=str).decode()[:2000] if snippet else None,
            "snippet_blob": None, "_run_id": run_id,
        })
    return pa.Table.from_pylist(out, schema=v1.QUARANTINE)
