"""Rules for the rows of `branches` (see `schemas.branches`): a branch must leave from a real step of this
version, its history must be that step's real prefix, and it must carry a usable predicted state.

A bad branch is quarantined alone: its real episode is never touched by a branch's fault. A branch whose
parent episode is quarantined goes with it (rule `branch.parent_quarantined`, naming the episode).
Pure: Arrow in, (kept branches, findings) out.
"""

from __future__ import annotations

import orjson
import polars as pl
import pyarrow as pa
import pyarrow.compute as pc

from schemas import BRANCH_ORIGINS, QUARANTINE
from transforms.label.parse import leftover_tags
from transforms.validate.invariants import SCREEN_DOMAINS
from transforms.validate.rules import ERROR, findings, severity_of


def _finding(rule: str, reason: pl.Expr) -> list[pl.Expr]:
    return [pl.col("episode_id"), pl.col("step_id"), pl.lit(rule).alias("rule"), reason.alias("reason")]


def check_branches(branches: pa.Table, steps: pa.Table, quarantined_episodes: list[str],
                   severity: dict[str, str] | None = None) -> tuple[pa.Table, pl.DataFrame]:
    """(kept branches, findings with severity) of `branches` against the version's `steps` (before the
    validation removed anything) and the episodes it quarantined."""
    if branches.num_rows == 0:
        return branches, findings()
    br = pl.from_arrow(branches.select(["step_id", "branch_id", "parent_step_id", "episode_id", "step_index",
                                        "domain", "origin", "labeler"])).with_columns(
        state=pl.from_arrow(pc.struct_field(branches["next_observation"], "text")))
    parents = pl.from_arrow(steps.select(["step_id", "episode_id", "step_index", "origin"])).rename(
        {"step_id": "parent_step_id", "episode_id": "parent_episode", "step_index": "parent_index",
         "origin": "parent_origin"})
    br = br.join(parents.unique("parent_step_id"), on="parent_step_id", how="left", maintain_order="left")
    gone = pl.col("parent_episode").is_in(quarantined_episodes)
    tags = pl.col("state").map_elements(lambda s: " ".join(leftover_tags(s)), return_dtype=pl.String)
    parts = [
        br.filter(pl.col("parent_episode").is_null()).select(_finding(
            "branch.parent_missing", pl.format("parent step {} is not in this version's steps",
                                               pl.col("parent_step_id").fill_null("(null)")))),
        br.filter(gone).select(_finding(
            "branch.parent_quarantined", pl.format("its parent episode {} was quarantined by this validation",
                                                   pl.col("parent_episode")))),
        br.filter(pl.col("parent_origin").is_not_null() & (pl.col("parent_origin") != "real")).select(_finding(
            "branch.parent_not_real", pl.format("parent step {} is {}, not real", pl.col("parent_step_id"),
                                                pl.col("parent_origin")))),
        br.filter(pl.col("parent_episode").is_not_null() & (
            (pl.col("episode_id") != pl.col("parent_episode")) | (pl.col("step_index") != pl.col("parent_index"))
        )).select(_finding("branch.prefix_mismatch", pl.format(
            "episode_id/step_index {}/{} are not its parent's {}/{}", pl.col("episode_id"), pl.col("step_index"),
            pl.col("parent_episode"), pl.col("parent_index")))),
        br.filter(~pl.col("origin").is_in(list(BRANCH_ORIGINS)) | pl.col("origin").is_null()).select(_finding(
            "branch.origin", pl.format("origin {} is not one of {}", pl.col("origin").fill_null("null"),
                                       pl.lit("|".join(BRANCH_ORIGINS))))),
        br.filter(pl.col("branch_id").is_null() | pl.col("labeler").is_null()).select(_finding(
            "branch.lineage_missing", pl.lit("branch_id or labeler is null"))),
        br.filter(pl.col("state").is_null()).select(_finding(
            "branch.state_missing", pl.lit("next_observation has no text: no predicted state"))),
        br.filter((pl.col("state") == "") & pl.col("domain").is_in(list(SCREEN_DOMAINS))).select(_finding(
            "branch.state_empty", pl.format("an empty predicted {} screen", pl.col("domain")))),
        br.filter(pl.col("state").is_not_null()).with_columns(tags=tags).filter(pl.col("tags") != "").select(
            _finding("branch.state_unparsed", pl.format("reasoning or tags left in the predicted state: {}",
                                                        pl.col("tags")))),
    ]
    found = findings(pl.concat(parts)).with_columns(
        pl.col("rule").map_elements(lambda r: severity_of(r, severity), return_dtype=pl.String).alias("severity"))
    bad = found.filter(pl.col("severity") == ERROR)["step_id"].unique().to_list()
    if not bad:
        return branches, found
    return branches.filter(pc.invert(pc.is_in(branches["step_id"], pa.array(bad, pa.string())))), found


def quarantine_rows(found: pl.DataFrame, branches: pa.Table, episodes: pa.Table, run_id: str) -> pa.Table:
    """One quarantine row (stage `validate`) per error finding on a branch, with the branch's action and
    predicted state as the snippet."""
    errors = found.filter(pl.col("severity") == ERROR)
    if errors.height == 0:
        return QUARANTINE.empty_table()
    uris = dict(zip(episodes["episode_id"].to_pylist(), episodes["source_uri"].to_pylist()))
    wanted = pa.array(errors["step_id"].unique().to_list(), pa.string())
    rows = {r["step_id"]: r for r in branches.filter(pc.is_in(branches["step_id"], wanted)).select(
        ["step_id", "parent_step_id", "action", "next_observation"]).to_pylist()}
    out = []
    for r in errors.iter_rows(named=True):
        branch = rows.get(r["step_id"], {})
        snippet = orjson.dumps({"action": branch.get("action"), "next_observation": branch.get("next_observation")},
                               default=str).decode()
        out.append({"stage": "validate", "rule": r["rule"], "reason": f"branch {r['step_id']}: {r['reason']}",
                    "source_uri": uris.get(r["episode_id"]), "location": f"branch of step {branch.get('parent_step_id')}",
                    "line": None, "record_id": r["step_id"], "snippet": snippet[:2000], "snippet_blob": None,
                    "_run_id": run_id})
    return pa.Table.from_pylist(out, schema=QUARANTINE)
