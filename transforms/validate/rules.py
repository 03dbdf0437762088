"""Every hot-path rule by its stable id, with its default severity and what it means.

A rule id never changes meaning once shipped: quarantine rows, `validation_findings` and dashboards key on
it. Severity `error` removes the record's whole episode from the new version (a broken trajectory teaches a
world model wrong dynamics, and a trajectory with a hole in it is no longer a trajectory); `warning` is
counted and the record is kept. Severities can be overridden per rule (stage option `severity`).
"""

from __future__ import annotations

import polars as pl

ERROR, WARNING = "error", "warning"

RULES: dict[str, tuple[str, str]] = {
    # schema contract (per part, see contract.py)
    "schema.missing_column": (ERROR, "a schema-v1 column is absent from a part"),
    "schema.type_mismatch": (ERROR, "a column's type differs from schema v1 and cannot be cast safely"),
    "schema.new_column": (WARNING, "a column schema v1 does not define (error under `freeze`/`discard_row`)"),
    "schema.required_null": (ERROR, "a required field is null"),
    "ingest.kept_unknown": (WARNING, "the reader kept something it does not know raw (a pickle class, an event "
                                     "kind, an action type, a field); the episode's env.ingest_warnings says what"),
    # vocabularies
    "vocab.domain": (ERROR, "domain not in schema v1 DOMAINS"),
    "vocab.platform": (ERROR, "platform not in schema v1 PLATFORMS"),
    "vocab.outcome": (ERROR, "outcome not in schema v1 OUTCOMES"),
    "vocab.observation_kind": (ERROR, "observation.kind not in schema v1 OBSERVATION_KINDS"),
    "vocab.action_kind": (ERROR, "action.kind not in schema v1 ACTION_KINDS"),
    "origin.missing": (ERROR, "a step has no origin"),
    "origin.not_in_vocabulary": (ERROR, "origin not in real|simulated|perturbed"),
    # retired: "origin.lineage_missing" (schema 1 kept branches in steps)
    "origin.not_real": (ERROR, "a step in `steps` is not real (branches belong in the `branches` table)"),
    # episode structure
    "episode.no_steps": (ERROR, "an episode row has no steps"),
    "episode.num_steps_mismatch": (ERROR, "episodes.num_steps differs from the number of step rows"),
    "step.orphan": (ERROR, "a step whose episode_id has no episode row"),
    "step.index_not_contiguous": (ERROR, "step_index is not 0..n-1 without gaps or repeats"),
    "step.step_id_mismatch": (ERROR, "step_id is not '{episode_id}:{step_index}'"),
    "step.is_first": (ERROR, "not exactly one is_first, on step 0"),
    "step.is_last": (ERROR, "not exactly one is_last, on the last step"),
    "step.terminal_not_last": (ERROR, "is_terminal on a step that is not the last"),
    "step.timestamp_decreasing": (ERROR, "a timestamp earlier than the previous known one"),
    "step.coordinate_out_of_range": (ERROR, "an action coordinate outside [0, 1] or NaN"),
    "action.point_outside_screen": (WARNING, "the source's point lies outside the screen it acts on (kept at the "
                                             "edge in x/y; the source's numbers and space in raw.point)"),
    "action.kind_not_allowed": (ERROR, "the action kind is not one the episode's domain uses"),
    "observation.text_missing": (ERROR, "a text domain's observation (kind != none) has null text (empty text is a real, silent output)"),
    "observation.empty": (ERROR, "a screen domain's observation (kind != none) has neither text nor screenshot"),
    # branches (branches.py): a bad branch is quarantined alone, never its real episode
    "branch.parent_missing": (ERROR, "a branch's parent_step_id is not a step of the version"),
    "branch.parent_quarantined": (ERROR, "a branch's parent episode was quarantined: the branch goes with it"),
    "branch.parent_not_real": (ERROR, "a branch leaves from a step that is not real"),
    "branch.prefix_mismatch": (ERROR, "a branch's episode_id/step_index differ from its parent's (its history "
                                      "would not be the parent's real prefix)"),
    "branch.origin": (ERROR, "a branch's origin is not simulated|perturbed"),
    "branch.lineage_missing": (ERROR, "a branch lacks branch_id or labeler"),
    "branch.state_missing": (ERROR, "a branch has no predicted state (next_observation.text null)"),
    "branch.state_empty": (ERROR, "a screen domain's branch predicts an empty state"),
    "branch.state_unparsed": (ERROR, "a branch's predicted state still holds reasoning or answer tags"),
    # cross-step consistency (consistency.py)
    "android.tap_target_missing": (ERROR, "a tap/click targets an element absent from the view hierarchy it was made on"),
    "terminal.cwd_discontinuity": (WARNING, "the prompt's working directory changed without a cd-like command"),
    "tool.result_id_mismatch": (ERROR, "a tool result answers another call id than the preceding call's"),
    "web.url_not_following_navigation": (WARNING, "the page URL after a navigation is not the one navigated to"),
}

# Rules whose default is wrong for some real producers, by source format: the decision for that source (shown
# as the finding's severity in `validation_findings`). An explicit `severity` option still wins.
SOURCE_SEVERITY: dict[str, dict[str, str]] = {
    # AITW's and AndroidControl's element lists come from screen detection (OCR, icons), not the view
    # hierarchy: a real tap often lands outside every detected box. A hierarchy (DroidBot, UI Automator,
    # AndroidWorld) lists every view, so there a missing target is a broken step.
    "android.tap_target_missing": {"aitw": WARNING, "androidcontrol": WARNING},
}

# One row per finding; step_id is null for episode-level findings; severity null means the rule's default.
FINDING_SCHEMA = {"rule": pl.String, "episode_id": pl.String, "step_id": pl.String, "reason": pl.String,
                  "severity": pl.String}


def findings(rows: pl.DataFrame | None = None) -> pl.DataFrame:
    """An empty findings frame, or `rows` coerced to the findings columns (missing ones null)."""
    if rows is None or rows.height == 0:
        return pl.DataFrame(schema=FINDING_SCHEMA)
    return rows.select([(pl.col(c) if c in rows.columns else pl.lit(None)).cast(t).alias(c)
                        for c, t in FINDING_SCHEMA.items()])


def severity_of(rule: str, overrides: dict[str, str] | None = None) -> str:
    if overrides and rule in overrides:
        if overrides[rule] not in (ERROR, WARNING):
            raise ValueError(f"severity for {rule} must be 'error' or 'warning', not {overrides[rule]!r}")
        return overrides[rule]
    return RULES[rule][0]
