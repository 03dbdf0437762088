"""Readers' records to schema-v1 Arrow tables. Computes the derived step fields (ids, first/last/terminal)
so no reader has to.

Every value of an episode is checked against its column's type as the episode is added: a str without lone
surrogates where a string goes (or bytes, taken as the UTF-8 JSON text orjson wrote, as `ingest.record.JSONText`
says, unvalidated: decoding them would cost ~2% of ingest), an int that fits int32, a float, a bool, a
timezone-aware datetime, an `env` orjson can write; and every text value against the `field_bytes` budget (a
text costs ~8x its size by the time the Parquet part is written). An episode holding one that does not fit
raises `SchemaMismatch`, whose `rejected` names the step and the field, before anything of it is kept, so
building the task's tables never fails because of one record. The common case costs a type test per field
(~1% of ingest-android); anything unusual (numpy scalars, str subclasses...) is asked of pyarrow itself, which
decides exactly as the table build would. Readers check their steps one by one with `step_problem` (and the
episode's own fields with `checked_episode`) to drop one record instead of the episode.

Steps handed as values (`ingest.record.StepColumns`, a long log's) skip the objects: their fields become
Arrow arrays as the episode is added, checked as they are built (`ingest.value_steps`); an episode holding a
value those arrays cannot vouch for is checked and added as `Step` objects instead, so the same value is
refused, or taken, the same way whichever way a reader handed it.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import re

import orjson
import pyarrow as pa

from ingest.record import Action, Episode, Observation, Rejected, StepColumns, episode_id, utc
from ingest.source import ENV_PREFIX, default_budgets, human_bytes
from ingest.value_steps import ValueSteps, field_arrays
from schemas import v1
from schemas.branches import branch_key

_INT32_MIN, _INT32_MAX = -(1 << 31), (1 << 31) - 1
_UTC = dt.timezone.utc
_SURROGATE = re.compile("[\ud800-\udfff]")
_TEXT, _INT32, _FLOAT, _BOOL, _KEYS = pa.string(), pa.int32(), pa.float64(), pa.bool_(), pa.list_(pa.string())
_OBS_TEXT = ("kind", "text", "ui_tree", "url", "title", "screenshot")
_OBS_INT32 = ("exit_code", "width", "height")
_ACTION_TEXT = ("kind", "text", "element", "direction", "tool_name", "arguments", "code", "raw")
_ACTION_FLOAT = ("x", "y", "x2", "y2", "duration_s")


class SchemaMismatch(ValueError):
    """An episode holds a value its column cannot take; `rejected` is the quarantine row (rule
    `schema_mismatch`) naming the step and the field."""

    def __init__(self, rejected: Rejected):
        super().__init__(rejected.reason)
        self.rejected = rejected


def _refused(value, arrow_type: pa.DataType) -> str | None:
    """None when pyarrow takes `value` as `arrow_type`, else why not (one line)."""
    try:
        pa.scalar(value, arrow_type)
        return None
    except Exception as e:  # ArrowInvalid, ArrowTypeError, OverflowError, UnicodeEncodeError...
        shown = repr(value)
        shown = shown if len(shown) <= 60 else shown[:57] + "..."
        return f"{type(value).__name__} {shown} does not fit {arrow_type} ({str(e).splitlines()[0][:120]})"


def _field_limit() -> int:
    return default_budgets().field_bytes


def _text_problem(value, limit: int | None = None) -> str | None:
    limit = _field_limit() if limit is None else limit
    if type(value) is str or type(value) is bytes:
        if len(value) > limit:
            return (f"{len(value)} characters, over the field_bytes budget of {human_bytes(limit)} (raise it with "
                    f"{ENV_PREFIX}FIELD_BYTES=<larger>)")
        if type(value) is bytes:  # JSON text as orjson wrote it (ingest.record.JSONText): UTF-8 by construction
            return None
        if value.isascii() or not _SURROGATE.search(value):
            return None
        return "a string holding a lone surrogate (not encodable as UTF-8)"
    return _refused(value, _TEXT)


def _texts_problem(d: dict, names, limit: int) -> str | None:
    """"name: why" for the first text field of `d` a column cannot take (short ASCII strings pass at once)."""
    for name in names:
        v = d.get(name)
        if v is not None and not (type(v) is str and v.isascii() and len(v) <= limit) and \
                (problem := _text_problem(v, limit)):
            return f"{name}: {problem}"
    return None


def _typed_problem(d: dict, names, fits, arrow_type: pa.DataType, refused=_refused) -> str | None:
    """"name: why" for the first of `names` in `d` that is neither of the type `fits` accepts at once nor
    taken by `refused` (default: pyarrow) as `arrow_type`."""
    for name in names:
        v = d.get(name)
        if v is not None and not fits(v) and (problem := refused(v, arrow_type)):
            return f"{name}: {problem}"
    return None


def _refused_as_integer(value, arrow_type: pa.DataType) -> str | None:
    """`_refused`, and a float with a fraction: pyarrow takes 1.5 as an int32 and stores 1."""
    if type(value) is float and not value.is_integer():
        return f"float {value!r} is not a whole number ({arrow_type} would store it truncated)"
    return _refused(value, arrow_type)


def _is_int32(v) -> bool:
    return type(v) is int and _INT32_MIN <= v <= _INT32_MAX


def _observation_problem(obs, limit: int) -> str | None:
    d = vars(obs)
    return (_texts_problem(d, _OBS_TEXT, limit) or _typed_problem(d, _OBS_INT32, _is_int32, _INT32, _refused_as_integer)
            or _typed_problem(d, ("is_error",), lambda v: type(v) is bool, _BOOL))


def _action_problem(action, limit: int) -> str | None:
    d = vars(action)
    if problem := (_texts_problem(d, _ACTION_TEXT, limit)
                   or _typed_problem(d, _ACTION_FLOAT, lambda v: type(v) is float, _FLOAT)):
        return problem
    keys = d.get("keys")
    if keys is not None and not (type(keys) is list and all(type(k) is str and k.isascii() for k in keys)):
        if type(keys) is list and all(type(k) is str for k in keys):
            bad = next((k for k in keys if _text_problem(k, limit)), None)
            return f"keys: {_text_problem(bad, limit)}" if bad is not None else None
        if isinstance(keys, str):  # pyarrow would take it as a sequence: "ctrl" stored as c, t, r, l
            return f"keys: str {keys[:40]!r} is not a list of keys"
        if problem := _refused(keys, _KEYS):
            return f"keys: {problem}"
    return None


def checked_env(env: dict) -> tuple[dict, list[str]]:
    """`env` without the entries orjson cannot write (nested deeper than 255 levels, integers past 64 bits,
    non-string keys, objects that are not JSON), and one "key: why" line for each entry left out."""
    try:
        orjson.dumps(env, option=orjson.OPT_SORT_KEYS)
        return env, []
    except (TypeError, orjson.JSONEncodeError):
        pass
    kept, dropped = {}, []
    for key, value in env.items():
        try:
            if not isinstance(key, str):
                raise TypeError(f"{type(key).__name__} key")
            orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
            kept[key] = value
        except (TypeError, orjson.JSONEncodeError) as e:
            dropped.append(f"{key}: cannot be written as JSON ({e})")
    return kept, dropped


def _plain_text(v, limit: int) -> bool:
    """Whether `v` is None, or a str (without lone surrogates) or bytes within `limit`."""
    return v is None or (type(v) is str and (v.isascii() or not _SURROGATE.search(v)) or type(v) is bytes) \
        and len(v) <= limit


def _plain_step(step, limit: int) -> bool:
    """Whether every value of `step` is of a type its column takes at once (text within `limit`, an int32, a
    float, a bool, a datetime; no keys): most steps, which `step_problem` then need not look into field by field.
    (Loops inlined: a step per call of a long log.)"""
    o, a = step.observation, step.action
    if type(o) is not Observation:
        return False
    for v in (o.kind, o.text, o.ui_tree, o.url, o.title, o.screenshot):
        if v is not None and not ((type(v) is str and (v.isascii() or not _SURROGATE.search(v))
                                   or type(v) is bytes) and len(v) <= limit):
            return False
    if not o.exit_code is o.width is o.height is None:  # most observations: no numbers, no loop
        for v in (o.exit_code, o.width, o.height):
            if v is not None and not (type(v) is int and _INT32_MIN <= v <= _INT32_MAX):
                return False
    if o.is_error is not None and type(o.is_error) is not bool:
        return False
    if a is not None:
        if type(a) is not Action or a.keys is not None:
            return False
        for v in (a.kind, a.text, a.element, a.direction, a.tool_name, a.arguments, a.code, a.raw):
            if v is not None and not ((type(v) is str and (v.isascii() or not _SURROGATE.search(v))
                                       or type(v) is bytes) and len(v) <= limit):
                return False
        if not a.x is a.y is a.x2 is a.y2 is a.duration_s is None:  # a tool call, a key: no coordinates
            for v in (a.x, a.y, a.x2, a.y2, a.duration_s):
                if v is not None and type(v) is not float:
                    return False
    ts = step.timestamp
    return (ts is None or isinstance(ts, dt.datetime)) and (step.reward is None or type(step.reward) is float) \
        and (step.reasoning is None or _plain_text(step.reasoning, limit))


def step_problem(step, limit: int | None = None) -> str | None:
    """"field: what is wrong" for the first value of `step` its column cannot take, or a text value over the
    `field_bytes` budget (`limit`, default the process's), else None (readers use it to drop one step instead
    of losing the episode)."""
    limit = _field_limit() if limit is None else limit
    if _plain_step(step, limit):
        return None
    if (problem := _observation_problem(step.observation, limit)) is not None:
        return f"observation.{problem}"
    if step.action is not None and (problem := _action_problem(step.action, limit)) is not None:
        return f"action.{problem}"
    ts = step.timestamp
    if ts is not None and not isinstance(ts, dt.datetime):
        return f"timestamp: {type(ts).__name__} {str(ts)[:40]!r} is not a datetime"
    if step.reward is not None and type(step.reward) is not float and (problem := _refused(step.reward, _FLOAT)):
        return f"reward: {problem}"
    if step.reasoning is not None and (problem := _text_problem(step.reasoning, limit)):
        return f"reasoning: {problem}"
    return None


def checked_episode(ep: Episode, where: str, env_checked: bool = False) -> Episode | Rejected:
    """`ep`, or the quarantine row (`schema_mismatch`) that replaces it when one of its own fields (task,
    agent, final observation, env...) does not fit: for readers that checked each step with `step_problem`
    already and must not hand `TableBuilder.add_episode` an episode it refuses. `env_checked`: `ep.env` is
    what `checked_env` just gave (not written as JSON once more: a long log's env holds a dict per call)."""
    found = episode_problem(ep, steps=False)
    if found is None:
        if env_checked:
            return ep
        try:
            orjson.dumps(ep.env, option=orjson.OPT_SORT_KEYS)
            return ep
        except (TypeError, orjson.JSONEncodeError) as e:
            found = (None, f"env: cannot be written as JSON ({e})")
    record, problem = found
    key = f"episode {ep.key!r}" if ep.key else "the episode"
    return Rejected("schema_mismatch", f"{where}: {key}: field {problem}; the episode is quarantined whole",
                    where, record_id=record or ep.key or None)


def episode_problem(ep: Episode, limit: int | None = None, steps: bool = True) -> tuple[str | None, str] | None:
    """(record, "field: what is wrong") for the first value of `ep` its column cannot take (or a text over
    `limit`, the `field_bytes` budget), else None; record is "step N", "branch N" or None for the episode's
    own fields. `steps=False` leaves the steps out (a reader checked them one by one)."""
    limit = _field_limit() if limit is None else limit
    return _own_problem(ep, limit) or (_steps_problem(ep.steps, limit) if steps else None) or \
        _branches_problem(ep, limit)


def _own_problem(ep: Episode, limit: int) -> tuple[None, str] | None:
    for name in ("domain", "platform", "task", "agent", "outcome", "license"):
        v = getattr(ep, name)
        if v is not None and (problem := _text_problem(v, limit)):
            return None, f"{name}: {problem}"
    if ep.reward is not None and type(ep.reward) is not float and (problem := _refused(ep.reward, _FLOAT)):
        return None, f"reward: {problem}"
    if ep.final_observation is not None and (problem := _observation_problem(ep.final_observation, limit)):
        return None, f"final_observation.{problem}"
    return None


def _steps_problem(steps, limit: int) -> tuple[str, str] | None:
    for i, step in enumerate(steps):
        if _plain_step(step, limit):  # most steps: nothing to look into
            continue
        try:
            problem = step_problem(step, limit)
        except TypeError as e:  # an observation or action that is not an object with fields
            problem = f"not a step of Observation and Action ({e})"
        if problem is not None:
            return f"step {i}", problem
    return None


def _branches_problem(ep: Episode, limit: int) -> tuple[str, str] | None:
    for i, branch in enumerate(ep.branches):
        problem = (f"action.{p}" if (p := _action_problem(branch.action, limit)) else None) or \
            (f"next_observation.{p}" if (p := _observation_problem(branch.next_observation, limit)) else None)
        if not (type(branch.step) is int and 0 <= branch.step < len(ep.steps)):
            problem = f"step: {branch.step!r} is not the index of one of the episode's steps"
        if problem is not None:
            return f"branch {i}", problem
    return None


class TableBuilder:
    """Accumulates the rows of one task; `tables()` returns the Arrow tables."""

    def __init__(self, run_id: str, stage: str = "ingest"):
        self.run_id, self.stage = run_id, stage
        self.episodes: list[dict] = []
        self.steps: dict[str, list] = {name: [] for name in v1.STEPS.names}
        self.quarantine: list[dict] = []
        self.branches: list[dict] = []
        self.value_steps = ValueSteps()  # steps handed as values (`StepColumns`), after those in `step_batches`
        self.step_batches: list[pa.RecordBatch] = []  # steps in Arrow already, before those in `steps`
        self.field_limit = default_budgets().field_bytes

    def add_episode(self, ep: Episode, *, source_format: str, source_uri: str, source_sha256: str,
                    ingestor_version: str) -> str:
        """Add the episode's rows; returns its id. Raises `SchemaMismatch` (nothing added) when a value does
        not fit its column. Steps held as `StepColumns` become Arrow columns here, checked as they are built."""
        arrays = None
        if type(ep.steps) is StepColumns:
            arrays = field_arrays(ep.steps, self.field_limit)
            if arrays is None:  # a value to look into: the steps as objects, checked and added as any reader's
                ep = dataclasses.replace(ep, steps=list(ep.steps))
        if arrays is None:
            found = episode_problem(ep, self.field_limit)
        else:  # the steps' values passed as their columns were built
            found = _own_problem(ep, self.field_limit) or _branches_problem(ep, self.field_limit)
        try:
            env = orjson.dumps(ep.env, option=orjson.OPT_SORT_KEYS).decode()
        except (TypeError, orjson.JSONEncodeError) as e:
            found = found or (None, f"env: cannot be written as JSON ({e})")
        if found is not None:
            record, problem = found
            where = f"episode {ep.key!r}" if ep.key else "the episode"
            raise SchemaMismatch(Rejected("schema_mismatch", f"{where}: {record + ' ' if record else ''}field "
                                          f"{problem}", ep.key or None, record_id=record))
        eid = episode_id(source_format, source_uri, ep.key)
        n = len(ep.steps)
        timestamps = ep.steps.timestamps if type(ep.steps) is StepColumns else [s.timestamp for s in ep.steps]
        timestamps = [t if t is None or t.tzinfo is _UTC else utc(t) for t in timestamps]
        known = [t for t in timestamps if t is not None]
        self.episodes.append({
            "episode_id": eid, "domain": ep.domain, "platform": ep.platform, "source_format": source_format,
            "task": ep.task, "agent": ep.agent, "num_steps": n, "outcome": ep.outcome, "reward": ep.reward,
            "started_at": min(known) if known else None, "ended_at": max(known) if known else None,
            "env": env, "license": ep.license,
            "source_uri": source_uri, "source_sha256": source_sha256, "ingest_run_id": self.run_id,
            "ingestor_version": f"{source_format}/{ingestor_version}", "_run_id": self.run_id,
        })
        if arrays is None:
            self._add_steps(ep, eid, timestamps)
        else:
            self._add_step_values(ep, eid, timestamps, arrays)
        for branch in ep.branches:
            parent = f"{eid}:{branch.step}"
            action = vars(branch.action)
            key = branch_key(parent, action)
            self.branches.append({
                "step_id": f"{parent}:sim-{(branch.request_key or key)[:16]}", "branch_id": key,
                "parent_step_id": parent, "episode_id": eid, "step_index": branch.step, "domain": ep.domain,
                "origin": branch.origin, "action": action, "next_observation": vars(branch.next_observation),
                "strategy": branch.strategy, "labeler": branch.labeler, "request_key": branch.request_key,
                "_run_id": self.run_id})
        return eid

    def _derived(self, ep: Episode, eid: str, n: int) -> dict[str, list]:
        """The step columns derived from the episode, not read (ids, first/last/terminal flags, origin)."""
        nones = [None] * n
        return {"episode_id": [eid] * n, "step_index": range(n), "step_id": [f"{eid}:{i}" for i in range(n)],
                "domain": [ep.domain] * n, "is_first": [True] + [False] * (n - 1),
                "is_last": [False] * (n - 1) + [True], "is_terminal": [False] * (n - 1) + [ep.terminated],
                "origin": ["real"] * n, "parent_step_id": nones, "branch_id": nones, "labeler": nones,
                "_run_id": [self.run_id] * n,
                "final_observation": nones[1:] + [vars(ep.final_observation) if ep.final_observation else None]}

    def _add_steps(self, ep: Episode, eid: str, timestamps: list) -> None:
        """The episode's step rows, a column at a time (a long episode's steps cost a few list extends, not a
        row of appends each)."""
        n = len(ep.steps)
        if not n:
            return
        if len(self.value_steps):
            self._flush()
        cols, steps = self.steps, ep.steps
        for name, values in self._derived(ep, eid, n).items():
            cols[name] += values
        cols["observation"] += [vars(s.observation) for s in steps]
        cols["action"] += [vars(s.action) if s.action is not None else None for s in steps]
        cols["timestamp"] += timestamps
        cols["reward"] += [s.reward for s in steps]
        cols["reasoning"] += [s.reasoning for s in steps]
        cols["action_inferred"] += [s.action_inferred for s in steps]

    def _add_step_values(self, ep: Episode, eid: str, timestamps: list, arrays: dict) -> None:
        """The episode's steps handed as values (`field_arrays` checked and built them), after the step rows
        added as objects before them (step rows keep the order their episodes were added in)."""
        n = len(timestamps)
        if not n:
            return
        if self.steps["episode_id"]:
            self._flush()
        rows = self._derived(ep, eid, n)
        rows["timestamp"] = timestamps
        self.value_steps.add(ep.steps, arrays, rows)

    def _flush(self) -> None:
        """The step rows added so far (as objects, or as values), as a record batch after those made before."""
        if self.steps["episode_id"]:
            self.step_batches.append(pa.RecordBatch.from_pydict(self.steps, schema=v1.STEPS))
            self.steps = {name: [] for name in v1.STEPS.names}
        if len(self.value_steps):
            self.step_batches.append(self.value_steps.batch())
            self.value_steps = ValueSteps()

    def add_rejected(self, rej: Rejected, *, source_uri: str) -> None:
        self.quarantine.append({
            "stage": self.stage, "rule": rej.rule, "reason": rej.reason, "source_uri": source_uri,
            "location": rej.location, "line": rej.line, "record_id": rej.record_id,
            "snippet": rej.snippet[:2000] if rej.snippet else None, "snippet_blob": None, "_run_id": self.run_id,
        })

    @property
    def num_steps(self) -> int:
        return len(self.steps["episode_id"]) + len(self.value_steps) + sum(b.num_rows for b in self.step_batches)

    def _steps_table(self) -> pa.Table:
        if not self.step_batches and not len(self.value_steps):
            return pa.Table.from_pydict(self.steps, schema=v1.STEPS)
        self._flush()
        table = pa.Table.from_batches(self.step_batches, schema=v1.STEPS)
        return table if len(self.step_batches) == 1 else table.combine_chunks()

    def tables(self) -> dict[str, pa.Table]:
        return {
            "episodes": pa.Table.from_pylist(self.episodes, schema=v1.EPISODES),
            "steps": self._steps_table(),
            "branches": pa.Table.from_pylist(self.branches, schema=v1.BRANCHES),
            "quarantine": pa.Table.from_pylist(self.quarantine, schema=v1.QUARANTINE),
        }
