"""Cross-step consistency per domain: does step t's action agree with what was seen before it, and with
what came after it? Each check only fires when both sides are known; an unknown side is not a finding.

The observation *after* action t is step t+1's observation, or the last step's `final_observation`.
Where the sources keep ids that the schema has no column for, they are read from the JSON the schema does
keep: a tool call's id from `action.raw`, a tool result's id from the result text when it is a JSON object.
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit

import orjson
import polars as pl

from transforms.validate.rules import findings

TAP_KINDS = ("tap", "click", "long_press", "double_click", "right_click")
# Commands after which the prompt's directory may legitimately differ.
_CD_LIKE = re.compile(r"(^|[\s;&|(`])(cd|pushd|popd|exit|logout|ssh|su|sudo|bash|sh|zsh|docker|z|j)(\s|$|;|&|\))")
# bash-style `user@host:DIR$ ` and SWE-agent's `(Current directory: DIR)`; the last one in the text wins.
# A prompt match may start only where a run of name characters starts, and every part has a length cap:
# without both, findall retries from each character of a long word run and validate goes quadratic
# (a 200 kB run of letters took 87 s). Real users, hosts and paths are far shorter than the caps.
_PROMPTS = (re.compile(r"(?<![\w.-])[\w.-]{1,256}@[\w.-]{1,256}:([^\s$#]{1,4096})\s?[$#]"),
            re.compile(r"\(Current directory: ([^)]{1,4096})\)"))
_ID_KEYS = ("tool_call_id", "call_id", "toolCallId", "id")
_BOUNDS_TEXT = re.compile(r"\[(-?\d+),(-?\d+)\]\[(-?\d+),(-?\d+)\]")


def _with_next(steps: pl.DataFrame, columns: list[pl.Expr]) -> pl.DataFrame:
    """Steps sorted per episode with `next_*` columns: the observation after each step's action."""
    obs, final = pl.col("observation").struct, pl.col("final_observation").struct
    nxt = lambda field: pl.coalesce(obs.field(field).shift(-1).over("episode_id"), final.field(field))  # noqa: E731
    return steps.sort("episode_id", "step_index").select(
        "episode_id", "step_id", "step_index", "domain", *columns,
        nxt("kind").alias("next_kind"), nxt("text").alias("next_text"), nxt("url").alias("next_url"))


def _rows(df: pl.DataFrame, rule: str, reasons: list[tuple[str, str, str]]) -> pl.DataFrame:
    if not reasons:
        return findings()
    return findings(pl.DataFrame(reasons, schema=["episode_id", "step_id", "reason"], orient="row")
                    .with_columns(pl.lit(rule).alias("rule")))


# android ------------------------------------------------------------------------------------------------
def _bounds(value) -> tuple | None:
    if isinstance(value, str):
        m = _BOUNDS_TEXT.match(value)
        return tuple(int(g) for g in m.groups()) if m else None
    if isinstance(value, (list, tuple)):
        if len(value) == 2 and all(isinstance(p, (list, tuple)) and len(p) == 2 for p in value):
            return (value[0][0], value[0][1], value[1][0], value[1][1])
        if len(value) == 4 and all(isinstance(v, (int, float)) for v in value):
            return tuple(value)
    if isinstance(value, dict) and {"left", "top", "right", "bottom"} <= value.keys():
        return (value["left"], value["top"], value["right"], value["bottom"])
    return None


def _tree_nodes(tree) -> tuple[set, set]:
    """(view ids, bounds) of every node of a view hierarchy JSON: a flat list (DroidBot) or nested nodes."""
    ids, bounds, stack = set(), set(), [tree]
    while stack:
        item = stack.pop()
        if isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, dict):
            if item.get("view_str"):
                ids.add(item["view_str"])
            b = _bounds(item.get("bounds"))
            if b:
                bounds.add(b)
            stack.extend(v for v in item.values() if isinstance(v, (list, dict)))
    return ids, bounds


def _tap_reason(tree, element, x, y, width, height) -> str | None:
    """The exact check of one tap on a parsed view hierarchy: why its target is missing, or None."""
    ids, bounds = _tree_nodes(tree)
    element = element if isinstance(element, dict) else {}
    target = _bounds(element.get("bounds"))
    if element.get("view_str") and ids:
        if element["view_str"] not in ids:
            return f"target view {element['view_str']} is not in the view hierarchy"
    elif target and bounds:
        if target not in bounds:
            return f"target bounds {list(target)} match no node"
    elif x is not None and y is not None and width and height and bounds:
        px, py = x * width, y * height
        if not any(x1 <= px <= x2 and y1 <= py <= y2 for x1, y1, x2, y2 in bounds):
            return f"point ({px:.0f}, {py:.0f}) is inside no node"
    return None


def _target_key(element: str | None) -> tuple[str | None, bool]:
    """(needle, point_only) for one tap's element JSON. The needle is the compact-JSON text of a node key
    whose presence in the view hierarchy proves the target is there: `"view_str":"..."` when the element has
    DroidBot's view id, else `"bounds":[[..]]` when it has bounds. `point_only`: the element gives neither,
    so the tap's point decides."""
    try:
        element = orjson.loads(element) if element else {}
    except orjson.JSONDecodeError:
        return None, False  # no finding either way (see _tap_reason's caller)
    element = element if isinstance(element, dict) else {}
    view = element.get("view_str")
    if view:
        return ('"view_str":' + orjson.dumps(view).decode() if isinstance(view, str) else None), False
    if _bounds(element.get("bounds")):
        try:
            return '"bounds":' + orjson.dumps(element["bounds"]).decode(), False
        except TypeError:
            return None, False
    return None, True


def check_android_taps(steps: pl.DataFrame) -> pl.DataFrame:
    """A tap/click must target an element present in the view hierarchy it was made on (the step's own
    observation: what the agent saw before acting). Matched by DroidBot's `view_str`, else by the element's
    bounds, else the point must fall inside some node's bounds.

    Fast path, without parsing any hierarchy: the readers write hierarchies as compact JSON (orjson), so a
    node key `{"view_str":"<id>"` or `,"view_str":"<id>"` in the text (a quote inside a JSON string is always
    escaped) proves the id is there; likewise the element's exact bounds, or, for a bare point, the first
    node's bounds containing it. Only taps without such proof are parsed, each distinct hierarchy once; they
    get the exact check, so the findings are those of parsing every hierarchy."""
    obs, act = pl.col("observation").struct, pl.col("action").struct
    rows = steps.filter((pl.col("domain") == "android") & act.field("kind").is_in(TAP_KINDS)
                        & obs.field("ui_tree").is_not_null()
                        & (act.field("element").is_not_null() | act.field("x").is_not_null())).select(
        "episode_id", "step_id", obs.field("ui_tree"), obs.field("width"), obs.field("height"),
        act.field("element"), act.field("x"), act.field("y"))
    if rows.height == 0:
        return findings()
    keys = [_target_key(e) for e in rows["element"].to_list()]  # elements are small; hierarchies are not
    tree, needle = pl.col("ui_tree"), pl.col("_needle")
    first = tree.str.extract_groups(r'[{,]"bounds":\[\[(-?\d+),(-?\d+)\],\[(-?\d+),(-?\d+)\]\]').struct
    px, py = pl.col("x") * pl.col("width"), pl.col("y") * pl.col("height")
    inside = ((first.field("1").cast(pl.Int64) <= px) & (px <= first.field("3").cast(pl.Int64))
              & (first.field("2").cast(pl.Int64) <= py) & (py <= first.field("4").cast(pl.Int64)))
    proven = rows.with_columns(
        pl.Series("_needle", [k for k, _ in keys], pl.String),
        pl.Series("_point", [p for _, p in keys], pl.Boolean)).select(
        pl.when(needle.is_not_null()).then(
            tree.str.contains(pl.lit("{") + needle, literal=True)
            | tree.str.contains(pl.lit(",") + needle, literal=True))
        .when(pl.col("_point") & (pl.col("width") > 0) & (pl.col("height") > 0)).then(inside)
        .otherwise(False).fill_null(False).alias("_proven"))["_proven"]
    rest = rows.filter(~proven)
    reasons, parsed = [], {}
    for r in rest.iter_rows(named=True):
        try:
            if r["ui_tree"] not in parsed:  # DroidBot runs revisit states: parse each hierarchy once
                parsed[r["ui_tree"]] = orjson.loads(r["ui_tree"])
            element = orjson.loads(r["element"]) if r["element"] else {}
        except orjson.JSONDecodeError:
            continue  # malformed JSON is the ingest's business, not a consistency finding
        reason = _tap_reason(parsed[r["ui_tree"]], element, r["x"], r["y"], r["width"], r["height"])
        if reason:
            reasons.append((r["episode_id"], r["step_id"], reason))
    return _rows(rows, "android.tap_target_missing", reasons)


# terminal -----------------------------------------------------------------------------------------------
def _cwd(text: str | None) -> str | None:
    if not text:
        return None
    for pattern in _PROMPTS:
        found = pattern.findall(text)
        if found:
            return found[-1].strip()
    return None


def check_terminal_cwd(steps: pl.DataFrame) -> pl.DataFrame:
    """Where prompts show the working directory, it changes only after a cd-like command."""
    act = pl.col("action").struct
    typed = pl.concat_str([act.field("code"), act.field("text"), act.field("keys").list.join(" ")],
                          separator=" ", ignore_nulls=True)
    rows = _with_next(steps.filter(pl.col("domain").is_in(["terminal", "swe", "os"])),
                      [pl.col("observation").struct.field("text").alias("text"), typed.alias("typed")])
    reasons = []
    for r in rows.filter(pl.col("next_text").is_not_null() & pl.col("text").is_not_null()).iter_rows(named=True):
        before, after = _cwd(r["text"]), _cwd(r["next_text"])
        if before and after and before != after and not _CD_LIKE.search(r["typed"] or ""):
            reasons.append((r["episode_id"], r["step_id"],
                            f"prompt directory {before} became {after} after {(r['typed'] or '')[:80]!r}"))
    return _rows(rows, "terminal.cwd_discontinuity", reasons)


# tools --------------------------------------------------------------------------------------------------
def _json_id(text: str | None) -> str | None:
    if not text or not text.lstrip().startswith("{"):
        return None
    try:
        data = orjson.loads(text)
    except orjson.JSONDecodeError:
        return None
    if not isinstance(data, dict):
        return None
    for key in _ID_KEYS:
        if data.get(key) is not None:
            return str(data[key])
    calls = data.get("tool_calls")
    if isinstance(calls, list) and calls and isinstance(calls[0], dict) and calls[0].get("id") is not None:
        return str(calls[0]["id"])
    return None


def check_tool_results(steps: pl.DataFrame) -> pl.DataFrame:
    """The tool result after a tool call answers that call's id (when the source keeps both ids)."""
    act = pl.col("action").struct
    rows = _with_next(steps, [act.field("kind").alias("kind"), act.field("raw").alias("raw")]).filter(
        (pl.col("kind") == "tool_call") & (pl.col("next_kind") == "tool_result"))
    reasons = []
    for r in rows.iter_rows(named=True):
        call, answer = _json_id(r["raw"]), _json_id(r["next_text"])
        if call is not None and answer is not None and call != answer:
            reasons.append((r["episode_id"], r["step_id"], f"call id {call} answered by result id {answer}"))
    return _rows(rows, "tool.result_id_mismatch", reasons)


# web ----------------------------------------------------------------------------------------------------
def _navigation_target(text: str | None, arguments: str | None) -> str | None:
    if text and "://" in text:
        return text.strip()
    if arguments:
        try:
            args = orjson.loads(arguments)
        except orjson.JSONDecodeError:
            return None
        if isinstance(args, dict) and isinstance(args.get("url"), str):
            return args["url"]
    return None


def _site(url: str) -> str:
    host = (urlsplit(url).hostname or "").lower()
    return host[4:] if host.startswith("www.") else host


def check_web_navigation(steps: pl.DataFrame) -> pl.DataFrame:
    """After `navigate` to U the page is on U's site (redirects inside a site are normal)."""
    act = pl.col("action").struct
    rows = _with_next(steps.filter(pl.col("domain").is_in(["web", "search", "swe"])),
                      [act.field("kind").alias("kind"), act.field("text").alias("target_text"),
                       act.field("arguments").alias("arguments")]).filter(
        (pl.col("kind") == "navigate") & pl.col("next_url").is_not_null())
    reasons = []
    for r in rows.iter_rows(named=True):
        target = _navigation_target(r["target_text"], r["arguments"])
        if target and _site(target) and _site(r["next_url"]) and _site(target) != _site(r["next_url"]):
            reasons.append((r["episode_id"], r["step_id"], f"navigated to {target} but the page is {r['next_url']}"))
    return _rows(rows, "web.url_not_following_navigation", reasons)


CHECKS = (check_android_taps, check_terminal_cwd, check_tool_results, check_web_navigation)


def check_consistency(steps: pl.DataFrame) -> pl.DataFrame:
    return pl.concat([check(steps) for check in CHECKS])
