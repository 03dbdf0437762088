"""Per-step and per-episode invariants of schema v1, vectorized in polars. Each check takes the episodes
and steps frames and returns findings (`rules.findings` columns); none of them reads a file."""

from __future__ import annotations

import orjson
import polars as pl

from schemas import v1
from transforms.validate.rules import findings

# Action kinds each domain's traces use. A kind outside its domain's set is a reader bug or a mixed-up
# domain; extend a set here (with a sample that shows it) when a new format needs a kind.
DOMAIN_ACTION_KINDS: dict[str, frozenset[str]] = {
    # double_click: AndroidWorld's double_tap
    "android": frozenset({"tap", "double_click", "long_press", "swipe", "scroll", "type", "key", "back", "home",
                          "open_app", "command", "drag", "wait", "done", "message"}),
    "web": frozenset({"click", "double_click", "right_click", "move", "type", "key", "hotkey", "scroll", "drag",
                      "navigate", "back", "wait", "done", "message", "code", "tool_call"}),
    "os": frozenset({"click", "double_click", "right_click", "move", "drag", "type", "key", "hotkey", "scroll",
                     "keystrokes", "command", "code", "open_app", "wait", "done", "message"}),
    # tool_call: terminal agents' non-shell tools (ATIF trajectories, AgentWorldBench terminal turns)
    "terminal": frozenset({"keystrokes", "command", "key", "hotkey", "type", "code", "tool_call", "wait", "done",
                           "message"}),
    "swe": frozenset({"command", "code", "tool_call", "message", "navigate", "keystrokes", "type", "key",
                      "wait", "done"}),
    "mcp": frozenset({"tool_call", "message", "wait", "done"}),
    "search": frozenset({"tool_call", "navigate", "code", "message", "wait", "done"}),
}
# Domains whose observations are text by nature: a world model must predict that text.
TEXT_DOMAINS = frozenset({"terminal", "swe", "mcp", "search"})
# Screen domains may carry only a screenshot (AITW has no view tree), but not nothing at all.
SCREEN_DOMAINS = frozenset({"android", "web", "os"})

REQUIRED_EPISODE = ("episode_id", "domain", "platform", "source_format", "num_steps", "outcome")
REQUIRED_STEP = ("episode_id", "step_index", "step_id", "domain", "is_first", "is_last", "is_terminal")


def _vocab(df: pl.DataFrame, expr: pl.Expr, allowed, rule: str, what: str, step_level: bool) -> pl.DataFrame:
    bad = df.filter(expr.is_not_null() & ~expr.is_in(list(allowed)))
    return bad.select(
        "episode_id",
        (pl.col("step_id") if step_level else pl.lit(None, pl.String)).alias("step_id"),
        pl.lit(rule).alias("rule"),
        pl.format(f"{what} {{}} is not in the vocabulary", expr).alias("reason"))


def _required(df: pl.DataFrame, columns, step_level: bool) -> list[pl.DataFrame]:
    out = []
    for column in columns:
        bad = df.filter(pl.col(column).is_null())
        if bad.height:
            out.append(bad.select(
                "episode_id",
                (pl.col("step_id") if step_level else pl.lit(None, pl.String)).alias("step_id"),
                pl.lit("schema.required_null").alias("rule"),
                pl.lit(f"{column} is null").alias("reason")))
    return out


def check_episodes(episodes: pl.DataFrame) -> pl.DataFrame:
    parts = _required(episodes, REQUIRED_EPISODE, False)
    parts += [
        _vocab(episodes, pl.col("domain"), v1.DOMAINS, "vocab.domain", "domain", False),
        _vocab(episodes, pl.col("platform"), v1.PLATFORMS, "vocab.platform", "platform", False),
        _vocab(episodes, pl.col("outcome"), v1.OUTCOMES, "vocab.outcome", "outcome", False),
        _reader_warnings(episodes),
    ]
    return pl.concat([findings(p) for p in parts])


def _reader_warnings(episodes: pl.DataFrame) -> pl.DataFrame:
    """One `ingest.kept_unknown` finding per warning a reader put in an episode's env (`v1.ENV_WARNINGS`)."""
    if "env" not in episodes.columns:
        return findings()
    marked = episodes.filter(pl.col("env").str.contains(f'"{v1.ENV_WARNINGS}"', literal=True))
    rows = []
    for episode, env in marked.select("episode_id", "env").iter_rows():
        try:
            entries = orjson.loads(env).get(v1.ENV_WARNINGS)
        except (orjson.JSONDecodeError, AttributeError):
            continue
        for entry in entries if isinstance(entries, list) else []:
            if isinstance(entry, dict):
                rows.append({"episode_id": episode, "rule": "ingest.kept_unknown",
                             "reason": f"{entry.get('rule')}: {entry.get('reason')}"})
    return findings(pl.DataFrame(rows)) if rows else findings()


def _points_outside_screen(steps: pl.DataFrame) -> pl.DataFrame:
    """Actions whose point, in the space the source gave it, is off its screen: `ingest.coords.place` keeps such
    a point at the edge in x/y and marks `raw.point.outside_screen` (a real action of the agent, kept)."""
    raw = pl.col("action").struct.field("raw")
    flagged = steps.filter(raw.is_not_null() & raw.str.contains('"outside_screen":true', literal=True))

    def at(key: str) -> pl.Expr:
        return raw.str.json_path_match(f"$.point.{key}").fill_null("?")

    return flagged.select("episode_id", "step_id", pl.lit("action.point_outside_screen").alias("rule"),
                          pl.format("the point ({}, {}) in {} lies outside its {}x{} screen", at("x"), at("y"),
                                    at("space"), at("width"), at("height")).alias("reason"))


def check_steps(steps: pl.DataFrame) -> pl.DataFrame:
    """Row-local step checks: required fields, vocabularies, origin, coordinates, kinds per domain,
    observation content."""
    obs, act = pl.col("observation").struct, pl.col("action").struct
    parts = _required(steps, REQUIRED_STEP, True)
    # a null action is allowed (ingest.arrow writes one for observation-only records such as a lone UI
    # dump); an action without a kind is not
    parts.append(steps.filter(pl.col("action").is_not_null() & act.field("kind").is_null()).select(
        "episode_id", "step_id", pl.lit("schema.required_null").alias("rule"),
        pl.lit("action.kind is null").alias("reason")))
    parts.append(steps.filter(obs.field("kind").is_null()).select(
        "episode_id", "step_id", pl.lit("schema.required_null").alias("rule"),
        pl.lit("observation.kind is null").alias("reason")))
    parts += [
        _vocab(steps, obs.field("kind"), v1.OBSERVATION_KINDS, "vocab.observation_kind", "observation.kind", True),
        _vocab(steps, act.field("kind"), v1.ACTION_KINDS, "vocab.action_kind", "action.kind", True),
        _vocab(steps, pl.col("origin"), v1.ORIGINS, "origin.not_in_vocabulary", "origin", True),
    ]
    parts.append(steps.filter(pl.col("origin").is_null()).select(
        "episode_id", "step_id", pl.lit("origin.missing").alias("rule"), pl.lit("origin is null").alias("reason")))
    parts.append(steps.filter(pl.col("origin").is_in(["simulated", "perturbed"])).select(
        "episode_id", "step_id", pl.lit("origin.not_real").alias("rule"),
        pl.format("a {} step in steps: branches belong in the branches table (`pipelines migrate`)",
                  pl.col("origin")).alias("reason")))

    for axis in ("x", "y", "x2", "y2"):
        value = act.field(axis)
        bad = steps.filter(value.is_not_null() & (value.is_nan() | (value < 0) | (value > 1)))
        parts.append(bad.select("episode_id", "step_id", pl.lit("step.coordinate_out_of_range").alias("rule"),
                                pl.format(f"action.{axis} = {{}} is outside [0, 1]", value).alias("reason")))

    parts.append(_points_outside_screen(steps))

    allowed = pl.DataFrame({"domain": list(DOMAIN_ACTION_KINDS),
                            "_allowed": [sorted(k) for k in DOMAIN_ACTION_KINDS.values()]})
    kinds = steps.select("episode_id", "step_id", "domain", act.field("kind").alias("_kind")).join(
        allowed, on="domain", how="inner")
    parts.append(kinds.filter(pl.col("_kind").is_not_null() & pl.col("_kind").is_in(list(v1.ACTION_KINDS))
                              & ~pl.col("_kind").is_in(pl.col("_allowed"))).select(
        "episode_id", "step_id", pl.lit("action.kind_not_allowed").alias("rule"),
        pl.format("action kind {} is not used in the {} domain", pl.col("_kind"), pl.col("domain")).alias("reason")))

    has_content = obs.field("kind").is_not_null() & (obs.field("kind") != "none")
    # In a text domain an empty (or blank) text is a real observation: a command that printed nothing, a
    # tool that returned "". Only an absent text means the reader lost what the agent saw.
    parts.append(steps.filter(pl.col("domain").is_in(list(TEXT_DOMAINS)) & has_content
                              & obs.field("text").is_null()).select(
        "episode_id", "step_id", pl.lit("observation.text_missing").alias("rule"),
        pl.format("{} observation in the {} domain has no text (null)", obs.field("kind"), pl.col("domain")).alias("reason")))
    text_empty = obs.field("text").is_null() | (obs.field("text").str.strip_chars() == "")
    parts.append(steps.filter(pl.col("domain").is_in(list(SCREEN_DOMAINS)) & has_content & text_empty
                              & obs.field("screenshot").is_null()).select(
        "episode_id", "step_id", pl.lit("observation.empty").alias("rule"),
        pl.format("{} observation has neither text nor screenshot", obs.field("kind")).alias("reason")))
    return pl.concat([findings(p) for p in parts])


def check_structure(episodes: pl.DataFrame, steps: pl.DataFrame) -> pl.DataFrame:
    """Per-episode structure: steps 0..n-1, one is_first on 0, one is_last on n-1, terminal only last,
    num_steps agrees, timestamps never go back, every step has an episode and every episode steps."""
    parts = []
    ordered = steps.select("episode_id", "step_id", "step_index", "is_first", "is_last", "is_terminal",
                           "timestamp").sort("episode_id", "step_index")
    per = ordered.group_by("episode_id").agg(
        pl.len().alias("n"),
        pl.col("step_index").min().alias("lo"),
        pl.col("step_index").max().alias("hi"),
        pl.col("step_index").n_unique().alias("distinct"),
        pl.col("is_first").sum().alias("firsts"),
        pl.col("is_first").filter(pl.col("step_index") == 0).any().alias("first_on_0"),
        pl.col("is_last").sum().alias("lasts"),
        pl.col("is_last").filter(pl.col("step_index") == pl.col("step_index").max()).any().alias("last_on_end"),
    )
    ep = lambda rule, reason: [pl.lit(None, pl.String).alias("step_id"), pl.lit(rule).alias("rule"),
                               reason.alias("reason")]  # noqa: E731
    parts.append(per.filter((pl.col("lo") != 0) | (pl.col("hi") != pl.col("n") - 1)
                            | (pl.col("distinct") != pl.col("n"))).select(
        "episode_id", *ep("step.index_not_contiguous",
                          pl.format("{} steps with step_index {}..{} ({} distinct)", "n", "lo", "hi", "distinct"))))
    parts.append(per.filter((pl.col("firsts") != 1) | ~pl.col("first_on_0").fill_null(False)).select(
        "episode_id", *ep("step.is_first", pl.format("{} steps marked is_first; step 0 marked: {}", "firsts",
                                                     pl.col("first_on_0").fill_null(False)))))
    parts.append(per.filter((pl.col("lasts") != 1) | ~pl.col("last_on_end").fill_null(False)).select(
        "episode_id", *ep("step.is_last", pl.format("{} steps marked is_last; last step marked: {}", "lasts",
                                                    pl.col("last_on_end").fill_null(False)))))
    parts.append(ordered.filter(pl.col("is_terminal") & ~pl.col("is_last")).select(
        "episode_id", "step_id", pl.lit("step.terminal_not_last").alias("rule"),
        pl.format("step {} is terminal but not last", "step_index").alias("reason")))
    parts.append(ordered.filter(pl.col("step_id") != pl.format("{}:{}", "episode_id", "step_index")).select(
        "episode_id", "step_id", pl.lit("step.step_id_mismatch").alias("rule"),
        pl.format("step_id {} is not episode_id:step_index ({})", "step_id", "step_index").alias("reason")))
    # timestamps: compare with the latest known earlier one, so null gaps neither hide nor cause findings
    previous = pl.col("timestamp").forward_fill().shift(1).over("episode_id")
    parts.append(ordered.with_columns(previous.alias("_prev")).filter(pl.col("timestamp") < pl.col("_prev")).select(
        "episode_id", "step_id", pl.lit("step.timestamp_decreasing").alias("rule"),
        pl.format("timestamp {} is before the previous step's {}", "timestamp", "_prev").alias("reason")))

    counts = episodes.select("episode_id", "num_steps").join(per.select("episode_id", "n"), on="episode_id",
                                                             how="left")
    parts.append(counts.filter(pl.col("n").is_null()).select(
        "episode_id", *ep("episode.no_steps", pl.lit("the episode has no step rows"))))
    parts.append(counts.filter(pl.col("n").is_not_null() & (pl.col("n") != pl.col("num_steps"))).select(
        "episode_id", *ep("episode.num_steps_mismatch", pl.format("num_steps = {} but {} step rows", "num_steps", "n"))))
    parts.append(ordered.join(episodes.select("episode_id"), on="episode_id", how="anti").select(
        "episode_id", "step_id", pl.lit("step.orphan").alias("rule"),
        pl.lit("no episode row has this episode_id").alias("reason")))
    return pl.concat([findings(p) for p in parts])
