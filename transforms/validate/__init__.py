"""Validation of a dataset version: hot-path rules in polars/pyarrow (`check.validate`, rule ids in
`rules.RULES`), the per-source schema contract (`contract`), cross-step consistency per domain
(`consistency`), and declared great-expectations suites (`gx`, imported lazily: it is slow to import)."""
