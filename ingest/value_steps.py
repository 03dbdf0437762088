"""Steps a reader handed as values (`ingest.record.StepColumns`) to Arrow columns, for `ingest.arrow.TableBuilder`.

An episode's values are checked as its fields' arrays are built: a field whose values pyarrow converts, whose
texts' UTF-8 fits the `field_bytes` budget (a text's characters never outnumber its bytes), whose int32 values
are ints (pyarrow would store 1.5 as 1) and with no keys (a str would pass as a list of letters) holds nothing
`ingest.arrow.step_problem` would name. Anything else (a lone surrogate, a number past int32, a value of another
type, a non-ASCII text within the budget in characters but not in bytes) and `field_arrays` gives up: the builder
then checks and adds that episode as step objects, so a value is refused, or taken, exactly as any reader's.

The arrays of the episodes added since the last `ValueSteps.batch()` are kept per field and joined once there,
with the rows derived from the episodes (ids, flags); a field no step set costs one null array for all of them.
"""

from __future__ import annotations

import datetime as dt
import itertools

import pyarrow as pa
import pyarrow.compute as pc

from ingest.record import StepColumns
from schemas import v1

_STRUCTS = (("observation", v1.OBSERVATION), ("action", v1.ACTION))
_RARE = ((0, pa.float64()), (1, pa.string()))  # StepColumns.rare's (reward, reasoning, inferred): their types
# the step columns built from Python lists once per batch (derived from the episode, and the rare ones)
ROWS = ("episode_id", "step_index", "step_id", "domain", "final_observation", "timestamp", "reward", "is_first",
        "is_last", "is_terminal", "reasoning", "origin", "parent_step_id", "branch_id", "labeler", "_run_id",
        "action_inferred")


def _value_array(values: tuple, arrow_type: pa.DataType, limit: int) -> pa.Array | None:
    """`values` (not all None) as a column of `arrow_type` when each is plainly what the column takes (see the
    module's docstring), else None."""
    if arrow_type == pa.list_(pa.string()) or arrow_type == pa.int32() and \
            any(type(v) is not int for v in values if v is not None):
        return None
    try:
        array = pa.array(values, arrow_type)
    except (pa.ArrowException, TypeError, ValueError, OverflowError):  # a lone surrogate: UnicodeEncodeError
        return None
    # the buffers' size bounds every value's: the budget's check over each value only where they could pass it
    if arrow_type == pa.string() and array.nbytes > limit and pc.max(pc.binary_length(array)).as_py() > limit:
        return None
    return array


def field_arrays(steps: StepColumns, limit: int) -> dict[str, pa.Array | None] | None:
    """The arrays of the observation and action fields the steps set ("observation.text"...; None for a field
    no step set), or None when a value is not plainly what its column takes (see the module's docstring)."""
    if any(t is not None and not isinstance(t, dt.datetime) for t in steps.timestamps):
        return None
    arrays: dict[str, pa.Array | None] = {}
    for (name, struct), rows in zip(_STRUCTS, (steps.observations, steps.actions)):
        columns = list(itertools.zip_longest(*(r if r is not None else () for r in rows)))
        if len(columns) > struct.num_fields:
            return None  # more values than fields: made into objects, the step says what is wrong
        for k, field in enumerate(struct):
            key, values = f"{name}.{field.name}", columns[k] if k < len(columns) else ()
            if values.count(None) == len(values):  # most fields of a log's steps: never set
                arrays[key] = None
                continue
            arrays[key] = _value_array(values, field.type, limit)
            if arrays[key] is None:
                return None
    for k, arrow_type in _RARE:  # few steps have one: checked alone
        values = tuple(rare[k] for rare in steps.rare.values() if rare[k] is not None)
        if values and _value_array(values, arrow_type, limit) is None:
            return None
    if any(type(rare[2]) is not bool for rare in steps.rare.values()):
        return None
    return arrays


class ValueSteps:
    """The steps of episodes handed as values since the last `batch()`, in the order they were added."""

    def __init__(self):
        self.sizes: list[int] = []  # each episode's number of steps
        self.fields: dict[str, list] = {f"{name}.{f.name}": [] for name, struct in _STRUCTS for f in struct}
        self.rows: dict[str, list] = {name: [] for name in ROWS}
        self.no_action: list[bool] = []  # a step without an action: a null action

    def add(self, steps: StepColumns, arrays: dict[str, pa.Array | None], rows: dict[str, list]) -> None:
        """One episode's `field_arrays` and its rows (every name of `ROWS` but the rare ones, which come from
        `steps`)."""
        n = len(steps)
        self.sizes.append(n)
        for name, array in arrays.items():
            self.fields[name].append(array)
        for name, values in rows.items():
            self.rows[name] += values
        rewards, reasonings, inferred = [None] * n, [None] * n, [False] * n
        for i, (reward, reasoning, was_inferred) in steps.rare.items():
            rewards[i], reasonings[i], inferred[i] = reward, reasoning, was_inferred
        self.rows["reward"] += rewards
        self.rows["reasoning"] += reasonings
        self.rows["action_inferred"] += inferred
        self.no_action += [a is None for a in steps.actions] if None in steps.actions else [False] * n

    def __len__(self) -> int:
        return len(self.no_action)

    def batch(self) -> pa.RecordBatch:
        """The steps as one record batch of `v1.STEPS`."""
        columns = {name: pa.array(values, v1.STEPS.field(name).type) for name, values in self.rows.items()}
        for name, struct in _STRUCTS:
            children = [self._field(f"{name}.{f.name}", f.type) for f in struct]
            mask = pa.array(self.no_action, pa.bool_()) if name == "action" and any(self.no_action) else None
            columns[name] = pa.StructArray.from_arrays(children, fields=list(struct), mask=mask)
        return pa.RecordBatch.from_arrays([columns[name] for name in v1.STEPS.names], schema=v1.STEPS)

    def _field(self, name: str, arrow_type: pa.DataType) -> pa.Array:
        """One field's arrays joined, a run of episodes that never set it one null array."""
        pieces, unset = [], 0
        for n, array in zip(self.sizes, self.fields[name]):
            if array is None:
                unset += n
                continue
            if unset:
                pieces.append(pa.nulls(unset, arrow_type))
                unset = 0
            pieces.append(array)
        if unset or not pieces:
            pieces.append(pa.nulls(unset, arrow_type))
        return pieces[0] if len(pieces) == 1 else pa.concat_arrays(pieces)
