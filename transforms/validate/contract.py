"""Schema contract: how a part whose columns differ from schema v1 is treated, chosen per source format.

Modes (after dlt's schema contracts), applied to each row by its episode's `source_format`:

- `evolve` (default): a new column is kept and counted (`schema.new_column`, warning); a missing column is
  filled with nulls (the required-field rules then judge it); a different type is cast when the cast is safe.
- `freeze`: the source must match schema v1 exactly: a new column holding a value, a missing column or a
  different type is an error on every row of that source in the part.
- `discard_row`: rows that hold a value in a new column, or in a column of a different type, are errors;
  the others are kept and the extra column is dropped; a missing column is filled with nulls.

Type mismatches that cannot be cast safely are errors under every mode. The contract works on one part at a
time: parts of different schemas cannot be concatenated before they are conformed.
"""

from __future__ import annotations

import polars as pl
import pyarrow as pa
import pyarrow.compute as pc

from transforms.validate.rules import ERROR, findings

MODES = ("evolve", "freeze", "discard_row")
DEFAULT_MODE = "evolve"


def row_modes(source_formats: pa.Array | pa.ChunkedArray, contract: dict[str, str]) -> pa.Array:
    """The contract mode of each row, from its source format (`contract["default"]`, else `evolve`, for
    formats the contract does not name)."""
    for fmt, mode in contract.items():
        if mode not in MODES:
            raise ValueError(f"contract mode for {fmt!r} is {mode!r}; expected one of {', '.join(MODES)}")
    default = contract.get("default", DEFAULT_MODE)
    formats = pl.Series(pa.chunked_array([source_formats]) if isinstance(source_formats, pa.Array)
                        else source_formats)
    return formats.replace_strict(contract, default=default, return_dtype=pl.String).to_arrow()


def _findings(ids: pl.DataFrame, mask, rule: str, reason: str, severity: str | None = None) -> pl.DataFrame:
    rows = ids.filter(pl.Series(mask).fill_null(False))
    return findings(rows.with_columns(pl.lit(rule).alias("rule"), pl.lit(reason).alias("reason"),
                                      pl.lit(severity, pl.String).alias("severity")))


def conform(part: pa.Table, expected: pa.Schema, modes: pa.Array, where: str) -> tuple[pa.Table, pl.DataFrame]:
    """`part` with schema v1's columns in order (plus new columns kept under `evolve`), and the contract's
    findings. `modes` holds each row's mode; `where` names the part in reasons."""
    n = part.num_rows
    ids = pl.DataFrame({
        "episode_id": part["episode_id"] if "episode_id" in part.column_names else pa.nulls(n, pa.string()),
        "step_id": part["step_id"] if "step_id" in part.column_names else pa.nulls(n, pa.string()),
    })
    modes = pl.Series(modes)
    frozen, discarding, evolving = (modes == "freeze").to_numpy(), (modes == "discard_row").to_numpy(), \
        (modes == "evolve").to_numpy()
    found, columns = [], {}
    for field in expected:
        if field.name not in part.column_names:
            found.append(_findings(ids, frozen, "schema.missing_column", f"{where}: no column {field.name}"))
            columns[field.name] = pa.nulls(n, field.type)
            continue
        column = part[field.name]
        if column.type == field.type:
            columns[field.name] = column
            continue
        valid = pc.is_valid(column).to_numpy(zero_copy_only=False)
        try:
            columns[field.name] = column.cast(field.type, safe=True)
            strict = frozen | (discarding & valid)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            columns[field.name] = pa.nulls(n, field.type)
            strict = valid | frozen
        found.append(_findings(ids, strict, "schema.type_mismatch",
                               f"{where}: {field.name} is {column.type}, schema v1 has {field.type}"))
    for name in part.column_names:
        if name in expected.names:
            continue
        valid = pc.is_valid(part[name]).to_numpy(zero_copy_only=False)
        found.append(_findings(ids, valid & ~frozen & ~discarding, "schema.new_column",
                               f"{where}: new column {name} ({part[name].type})"))
        found.append(_findings(ids, (valid & discarding) | frozen, "schema.new_column",
                               f"{where}: column {name} is not in schema v1 and the source's contract forbids it",
                               ERROR))
        if evolving.any():
            columns[name] = part[name]
    table = pa.table(columns)
    return table, pl.concat(found) if found else findings()
