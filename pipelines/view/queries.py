"""The SQL behind each page, one function per question, all bounded: lists are paged (LIMIT/OFFSET, or a
step_index range), everything else is an aggregate with a small result. Functions take an open read-only
connection and return plain dicts; nothing here renders.

Optional catalog tables (`dedup_clusters`, `exports`, `export_rows`) are used when `tables` says they exist.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

import orjson

from pipelines.view.db import rows
from transforms.reward.judge import clean_marker

TEXT_CHARS = 20_000  # observation text shown per step; the rest is counted, not sent
EXPORT_ROWS_PER_STEP = 5
MEMBERS_PER_CLUSTER = 8


def _one(con, sql: str, params: list):
    found = rows(con, sql, params)
    return found[0] if found else None


# datasets, versions, runs --------------------------------------------------------------------------------
def datasets_list(con, limit: int, offset: int) -> list[dict]:
    return rows(con, """
        SELECT d.name, d.current_version, d.updated_at, v.episodes, v.steps, v.quarantined
        FROM datasets d LEFT JOIN versions v ON v.dataset = d.name AND v.version = d.current_version
        ORDER BY d.name LIMIT ? OFFSET ?""", [limit, offset])


def dataset_exists(con, name: str) -> bool:
    return _one(con, "SELECT 1 AS x FROM datasets WHERE name = ? LIMIT 1", [name]) is not None


def versions_page(con, dataset: str, limit: int, offset: int) -> tuple[list[dict], int]:
    """A dataset's versions, newest first, each with its parent's counts and the run that made it."""
    found = rows(con, """
        SELECT v.version, v.run_id, v.created_at, v.parent_version, v.episodes, v.steps, v.quarantined, v.note,
               v.parts, p.episodes AS parent_episodes, p.steps AS parent_steps,
               p.quarantined AS parent_quarantined, r.pipeline
        FROM versions v
        LEFT JOIN versions p ON p.dataset = v.dataset AND p.version = v.parent_version
        LEFT JOIN runs r ON r.run_id = v.run_id
        WHERE v.dataset = ? ORDER BY v.version DESC LIMIT ? OFFSET ?""", [dataset, limit, offset])
    total = _one(con, "SELECT count(*) AS n FROM versions WHERE dataset = ?", [dataset])["n"]
    for v in found:
        v["parts"] = orjson.loads(v["parts"]) if v["parts"] else {}
    return found, total


def quarantine_by_version(con, root: str, versions: list[dict]) -> dict[int, dict[str, int]]:
    """Quarantined records per rule in each of `versions` (their own parts, not the current view)."""
    selects, params = [], []
    for v in versions:
        paths = [f"{root}/{p}" for p in v["parts"].get("quarantine", [])]
        if paths:
            selects.append("SELECT ? AS version, rule, count(*) AS n FROM read_parquet(?, union_by_name = true) "
                           "GROUP BY rule")
            params += [v["version"], paths]
    out: dict[int, dict[str, int]] = {}
    if selects:
        for r in rows(con, " UNION ALL ".join(selects) + " ORDER BY version, rule", params):
            out.setdefault(r["version"], {})[r["rule"] or "?"] = r["n"]
    return out


def runs_page(con, dataset: str, limit: int, offset: int) -> tuple[list[dict], int]:
    where, params = ("WHERE dataset = ?", [dataset]) if dataset else ("", [])
    found = rows(con, f"""
        SELECT run_id, pipeline, dataset, status, started_at, ended_at, inputs, version, bytes_in,
               coalesce(seconds, epoch(ended_at) - epoch(started_at)) AS seconds,
               units_in, files_ignored, tasks_total, tasks_skipped, tasks_failed, episodes, steps, quarantined,
               error
        FROM runs {where} ORDER BY started_at DESC, run_id DESC LIMIT ? OFFSET ?""", [*params, limit, offset])
    total = _one(con, f"SELECT count(*) AS n FROM runs {where}", params)["n"]
    for r in found:
        r["inputs"] = orjson.loads(r["inputs"]) if r["inputs"] else []
    return found, total


def stage_stats(con, run_ids: list[str]) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {}
    if run_ids:
        for r in rows(con, "SELECT * FROM stage_stats WHERE list_contains(?, run_id) ORDER BY run_id LIMIT ?",
                      [run_ids, 50 * len(run_ids)]):
            out.setdefault(r["run_id"], []).append(r)
    return out


# episodes -------------------------------------------------------------------------------------------------
@dataclass
class EpisodeFilter:
    """The episode list's filters, as they come from the query string ("" = any)."""
    dataset: str = ""
    domain: str = ""
    platform: str = ""
    source_format: str = ""
    outcome: str = ""
    q: str = ""  # text in the task, or the start of an episode id
    branches: str = ""  # yes | no
    cluster: str = ""  # yes | no: in a dedup cluster

    @classmethod
    def from_query(cls, params) -> "EpisodeFilter":
        return cls(**{f.name: (params.get(f.name) or "").strip()[:500] for f in fields(cls)})

    def as_params(self) -> dict[str, str]:
        return {f.name: getattr(self, f.name) for f in fields(self) if getattr(self, f.name)}

    def where(self, have: set[str]) -> tuple[str, list]:
        """SQL condition over `episodes e`, and its parameters."""
        conds, params = ["true"], []
        for name in ("dataset", "domain", "platform", "source_format", "outcome"):
            if getattr(self, name):
                conds.append(f"e.{name} = ?")
                params.append(getattr(self, name))
        if self.q:
            conds.append("(contains(lower(coalesce(e.task, '')), lower(?)) OR starts_with(e.episode_id, lower(?)))")
            params += [self.q, self.q]
        if self.branches in ("yes", "no"):
            exists = ("EXISTS (SELECT 1 FROM branches b WHERE b.dataset = e.dataset AND b.episode_id = e.episode_id)")
            conds.append(exists if self.branches == "yes" else f"NOT {exists}")
        if self.cluster in ("yes", "no"):
            exists = ("EXISTS (SELECT 1 FROM dedup_clusters c WHERE c.dataset = e.dataset "
                      "AND c.episode_id = e.episode_id)") if "dedup_clusters" in have else "false"
            conds.append(exists if self.cluster == "yes" else f"NOT {exists}")
        return " AND ".join(conds), params


def episode_facets(con) -> list[dict]:
    """Counts per (dataset, domain, platform, source_format, outcome): the filters' choices."""
    return rows(con, "SELECT dataset, domain, platform, source_format, outcome, count(*) AS n FROM episodes "
                     "GROUP BY ALL ORDER BY ALL LIMIT 5000")


# What an episode without a task is about, from what its reader kept in `env`: the app a DroidBot or UI Automator
# run explored, the page a HAR recorded, a benchmark's task or instance name
_SUBJECT_KEYS = ("app_package", "package", "app", "page_title", "task_name", "instance_id", "exp_name")
_SUBJECT = "coalesce(" + ", ".join(f"json_extract_string(e.env, '$.{key}')" for key in _SUBJECT_KEYS) + ")"
SUBJECT = f"CASE WHEN e.task IS NULL OR e.task = '' THEN {_SUBJECT} END AS subject"


def episodes_page(con, f: EpisodeFilter, have: set[str], limit: int, offset: int) -> list[dict]:
    where, params = f.where(have)
    in_cluster = ("(SELECT dataset, episode_id, count(DISTINCT cluster_id) AS clusters FROM dedup_clusters "
                  "WHERE episode_id IN (SELECT episode_id FROM page) GROUP BY ALL)" if "dedup_clusters" in have
                  else "(SELECT NULL::VARCHAR AS dataset, NULL::VARCHAR AS episode_id, 0 AS clusters WHERE false)")
    return rows(con, f"""
        WITH page AS MATERIALIZED (
            SELECT e.dataset, e.episode_id, e.domain, e.platform, e.source_format, left(e.task, 300) AS task,
                   {SUBJECT},
                   e.agent, e.num_steps, e.outcome, e.reward, e.started_at,
                   epoch(e.ended_at) - epoch(e.started_at) AS duration_s
            FROM episodes e WHERE {where}
            ORDER BY e.dataset, e.started_at DESC NULLS LAST, e.episode_id LIMIT ? OFFSET ?)
        SELECT page.*, coalesce(b.n, 0) AS branches, coalesce(c.clusters, 0) AS clusters FROM page
        LEFT JOIN (SELECT dataset, episode_id, count(*) AS n FROM branches
                   WHERE episode_id IN (SELECT episode_id FROM page) GROUP BY ALL) b USING (dataset, episode_id)
        LEFT JOIN {in_cluster} c USING (dataset, episode_id)
        ORDER BY page.dataset, page.started_at DESC NULLS LAST, page.episode_id""", [*params, limit, offset])


def episodes_summary(con, f: EpisodeFilter, have: set[str]) -> dict:
    """For the filtered episodes: how many, a histogram of steps per episode (powers of two), domain mix."""
    where, params = f.where(have)
    buckets = rows(con, f"""
        SELECT CAST(ceil(log2(greatest(coalesce(e.num_steps, 0), 1))) AS INTEGER) AS bucket, count(*) AS n
        FROM episodes e WHERE {where} GROUP BY 1 ORDER BY 1""", params)
    domains = rows(con, f"SELECT e.domain, count(*) AS n FROM episodes e WHERE {where} GROUP BY 1 ORDER BY 2 DESC "
                        "LIMIT 50", params)
    return {"total": sum(b["n"] for b in buckets), "buckets": buckets, "domains": domains}


# one episode ------------------------------------------------------------------------------------------------
_OBS = ("{{'kind': {c}.kind, 'text': left({c}.text, {n}), 'text_chars': length({c}.text), 'url': {c}.url, "
        "'title': {c}.title, 'screenshot': {c}.screenshot, 'exit_code': {c}.exit_code, 'is_error': {c}.is_error, "
        "'width': {c}.width, 'height': {c}.height, 'ui_tree_chars': length({c}.ui_tree)}}")


def _obs(column: str) -> str:
    """A struct of the observation without its ui_tree (counted, not sent), text cut at TEXT_CHARS."""
    return f"CASE WHEN {column} IS NULL THEN NULL ELSE {_OBS.format(c=column, n=TEXT_CHARS)} END"


def episode(con, dataset: str, episode_id: str) -> dict | None:
    return _one(con, f"SELECT *, {SUBJECT} FROM episodes e WHERE dataset = ? AND episode_id = ? LIMIT 1",
                [dataset, episode_id])


def steps_range(con, dataset: str, episode_id: str, first: int, last: int) -> list[dict]:
    """Steps first..last (inclusive) of one episode: a page of steps plus the one after it, whose
    observation is the last one's next state."""
    return rows(con, f"""
        SELECT step_index, step_id, timestamp, reward, is_first, is_last, is_terminal, reasoning, origin, action,
               {_obs('observation')} AS observation, {_obs('final_observation')} AS final_observation
        FROM steps WHERE dataset = ? AND episode_id = ? AND step_index BETWEEN ? AND ?
        ORDER BY step_index LIMIT ?""", [dataset, episode_id, first, last, last - first + 1])


def branches_of(con, dataset: str, step_ids: list[str], limit: int = 500) -> list[dict]:
    """Branches leaving from these real steps (branches.parent_step_id = steps.step_id)."""
    return rows(con, f"""
        SELECT step_id, branch_id, parent_step_id, step_index, origin, action, strategy, labeler, request_key,
               {_obs('next_observation')} AS next_observation
        FROM branches WHERE dataset = ? AND list_contains(?, parent_step_id)
        ORDER BY step_index, step_id LIMIT ?""", [dataset, step_ids, limit])


def export_rows_of(con, dataset: str, step_ids: list[str], have: set[str]) -> list[dict]:
    """The export rows that contain each step (at most EXPORT_ROWS_PER_STEP each, with the total)."""
    if not step_ids or not {"exports", "export_rows"} <= have:
        return []
    return rows(con, """
        WITH hits AS (
            SELECT r.export_id, r.shard, r."row", unnest(list_intersect(r.step_ids, $1)) AS step_id
            FROM export_rows r WHERE list_has_any(r.step_ids, $1))
        SELECT h.step_id, h.export_id, e.kind, e.format, e.out, h.shard, h."row",
               count(*) OVER (PARTITION BY h.step_id) AS total
        FROM hits h JOIN exports e ON e.export_id = h.export_id AND e.dataset = $2
        QUALIFY row_number() OVER (PARTITION BY h.step_id ORDER BY e.created_at DESC, h.export_id, h.shard,
                                   h."row") <= $3
        ORDER BY h.step_id, e.created_at DESC, h.export_id, h.shard, h."row" LIMIT $4
        """, [step_ids, dataset, EXPORT_ROWS_PER_STEP, EXPORT_ROWS_PER_STEP * len(step_ids)])


# quarantine -----------------------------------------------------------------------------------------------
@dataclass
class QuarantineFilter:
    dataset: str = ""
    stage: str = ""
    rule: str = ""

    @classmethod
    def from_query(cls, params) -> "QuarantineFilter":
        return cls(**{f.name: (params.get(f.name) or "").strip()[:500] for f in fields(cls)})

    def as_params(self) -> dict[str, str]:
        return {f.name: getattr(self, f.name) for f in fields(self) if getattr(self, f.name)}

    def where(self) -> tuple[str, list]:
        conds = [(f"q.{f.name} = ?", getattr(self, f.name)) for f in fields(self) if getattr(self, f.name)]
        return " AND ".join(["true", *(c for c, _ in conds)]), [v for _, v in conds]


def quarantine_groups(con, dataset: str = "") -> list[dict]:
    where, params = ("WHERE dataset = ?", [dataset]) if dataset else ("", [])
    return rows(con, f"SELECT dataset, stage, rule, count(*) AS n FROM quarantine {where} GROUP BY ALL "
                     "ORDER BY dataset, stage, n DESC, rule LIMIT 1000", params)


_Q_ORDER = "dataset, stage, rule, source_uri, line, location, record_id"


def quarantine_page(con, f: QuarantineFilter, limit: int, offset: int) -> list[dict]:
    """Quarantined records, each with the episode it names when that episode is in the current version."""
    where, params = f.where()
    return rows(con, f"""
        WITH page AS MATERIALIZED (
            SELECT q.dataset, q.stage, q.rule, q.reason, q.source_uri, q.location, q.line, q.record_id,
                   left(q.snippet, 2048) AS snippet, q.snippet_blob, q._run_id,
                   split_part(q.record_id, ':', 1) AS episode_key
            FROM quarantine q WHERE {where} ORDER BY {_Q_ORDER} LIMIT ? OFFSET ?)
        SELECT page.*, e.episode_id AS episode FROM page
        LEFT JOIN (SELECT DISTINCT dataset, episode_id FROM episodes
                   WHERE episode_id IN (SELECT episode_key FROM page)) e
               ON e.dataset = page.dataset AND e.episode_id = page.episode_key
        ORDER BY {_Q_ORDER}""", [*params, limit, offset])


# duplicates -----------------------------------------------------------------------------------------------
def clusters_page(con, dataset: str, limit: int, offset: int) -> tuple[list[dict], int]:
    """Dedup clusters (newest run first), each with its representative and up to MEMBERS_PER_CLUSTER
    members, representative first."""
    where, params = ("WHERE dataset = ?", [dataset]) if dataset else ("", [])
    members = rows(con, f"""
        WITH page AS MATERIALIZED (
            SELECT dataset, run_id, cluster_id, count(*) AS members FROM dedup_clusters {where}
            GROUP BY ALL ORDER BY dataset, run_id DESC, cluster_id LIMIT ? OFFSET ?)
        SELECT d.dataset, d.run_id, d.cluster_id, d.episode_id, d.representative, d.similarity, d.kind,
               page.members
        FROM dedup_clusters d JOIN page USING (dataset, run_id, cluster_id)
        QUALIFY row_number() OVER (PARTITION BY d.dataset, d.run_id, d.cluster_id
                                   ORDER BY d.episode_id = d.representative DESC, d.similarity DESC,
                                            d.episode_id) <= ?
        ORDER BY d.dataset, d.run_id DESC, d.cluster_id, d.episode_id = d.representative DESC,
                 d.similarity DESC, d.episode_id""", [*params, limit, offset, MEMBERS_PER_CLUSTER])
    total = _one(con, f"SELECT count(*) AS n FROM (SELECT DISTINCT dataset, run_id, cluster_id "
                      f"FROM dedup_clusters {where})", params)["n"]
    return members, total


def dedup_input_parts(con, dataset: str, run_id: str) -> dict[str, list[str]]:
    """Episodes and steps parts of the version a dedup run read and the one it wrote (members it removed
    are only in the first)."""
    made = _one(con, "SELECT version, parent_version, parts FROM versions WHERE dataset = ? AND run_id = ? "
                     "ORDER BY version DESC LIMIT 1", [dataset, run_id])
    if made is None:  # nothing was removed, or the run is gone: the current version still has them
        made = _one(con, "SELECT v.version, NULL AS parent_version, v.parts FROM datasets d JOIN versions v "
                         "ON v.dataset = d.name AND v.version = d.current_version WHERE d.name = ? LIMIT 1", [dataset])
    if made is None:
        return {}
    parts = [orjson.loads(made["parts"])]
    if made["parent_version"] is not None:
        parent = _one(con, "SELECT parts FROM versions WHERE dataset = ? AND version = ? LIMIT 1",
                      [dataset, made["parent_version"]])
        parts += [orjson.loads(parent["parts"])] if parent else []
    return {t: sorted({p for ps in parts for p in ps.get(t, [])}) for t in ("episodes", "steps")}


def cluster_members(con, root: str, parts: dict[str, list[str]], episode_ids: list[str]) -> dict[str, dict]:
    """What people compare in a cluster: task, size, outcome, source, and the first observation."""
    if not episode_ids or not parts.get("episodes"):
        return {}
    episodes = [f"{root}/{p}" for p in parts["episodes"]]
    steps = [f"{root}/{p}" for p in parts.get("steps", [])]
    first_obs = ("(SELECT episode_id, any_value(left(observation.text, 600)) AS first_observation "
                 "FROM read_parquet($3, union_by_name = true) WHERE step_index = 0 "
                 "AND list_contains($2, episode_id) GROUP BY 1)" if steps
                 else "(SELECT NULL::VARCHAR AS episode_id, NULL::VARCHAR AS first_observation WHERE false)")
    found = rows(con, f"""
        SELECT e.episode_id, left(e.task, 300) AS task, {SUBJECT}, e.num_steps, e.outcome, e.source_uri,
               e.source_format, e.domain, s.first_observation
        FROM read_parquet($1, union_by_name = true) e LEFT JOIN {first_obs} s USING (episode_id)
        WHERE list_contains($2, e.episode_id)
        QUALIFY row_number() OVER (PARTITION BY e.episode_id) = 1 LIMIT {len(episode_ids)}""",
                 [episodes, episode_ids] + ([steps] if steps else []))
    return {r["episode_id"]: r for r in found}


# blobs ------------------------------------------------------------------------------------------------------
def blob(con, sha: str) -> dict | None:
    return _one(con, "SELECT uri, media_type, size_bytes FROM blobs WHERE sha256 = ? LIMIT 1", [sha])


# evaluations (`pipelines eval`) ------------------------------------------------------------------------------
def evals_page(con, limit: int, offset: int) -> tuple[list[dict], int]:
    """Evaluations, newest first, with their table's size and overall score."""
    found = rows(con, """
        SELECT eval_id, source, dataset, version, split, model, judge_model, samples, valid, failed, overall,
               run_id, created_at
        FROM evals ORDER BY created_at DESC, eval_id LIMIT ? OFFSET ?""", [limit, offset])
    return found, _one(con, "SELECT count(*) AS n FROM evals", [])["n"]


def eval_header(con, eval_id: str) -> dict | None:
    return _one(con, "SELECT * FROM evals WHERE eval_id = ?", [eval_id])


def eval_table(con, eval_id: str) -> list[dict]:
    """The AgentWorldBench table: one row per domain (then overall) and dimension."""
    return rows(con, """
        SELECT domain, dimension, score, samples, valid, failed FROM eval_scores WHERE eval_id = ?
        ORDER BY domain = 'overall', domain LIMIT 1000""", [eval_id])


def eval_worst(con, eval_id: str, domain: str, limit: int, offset: int) -> tuple[list[dict], int]:
    """The worst-scored samples (failed ones first, then by judge total, then rule score), with the
    prediction (its marker removed as the judge input removes it) and the real state (each cut to TEXT_CHARS)."""
    where, params = ("eval_id = ? AND domain = ?", [eval_id, domain]) if domain else ("eval_id = ?", [eval_id])
    found = rows(con, f"""
        SELECT sample_key, domain, source_id, turn_idx, failed, error, format, factuality, consistency, realism,
               quality, total_score, rule_score, strengths, weaknesses,
               left(prediction, {TEXT_CHARS}) AS prediction, length(prediction) AS prediction_chars,
               left(ground_truth, {TEXT_CHARS}) AS ground_truth, length(ground_truth) AS ground_truth_chars
        FROM eval_samples WHERE {where}
        ORDER BY failed DESC, total_score, rule_score, sample_key LIMIT ? OFFSET ?""", [*params, limit, offset])
    total = _one(con, f"SELECT count(*) AS n FROM eval_samples WHERE {where}", params)["n"]
    for r in found:
        r["strengths"] = orjson.loads(r["strengths"]) if r["strengths"] else []
        r["weaknesses"] = orjson.loads(r["weaknesses"]) if r["weaknesses"] else []
        if r["prediction"] is not None:  # stored as the reference's extracted_output; shown as its judge saw it
            r["prediction"] = clean_marker(r["prediction"], r["domain"])
    return found, total
