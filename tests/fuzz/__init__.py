"""Fuzz harness: malformed variants of the bundled samples, each ingested in a child process under a time and
memory limit, checked for conservation.

- `tests.fuzz.variants`: the variant classes (truncations, byte flips, invalid UTF-8, wrong JSON types in key
  fields, huge lines, deep nesting, empty files, zip traversal, zip and gzip bombs, gzip members and trailing
  data, pickles with `__reduce__` payloads, allocation bombs and memo DAG bombs, values that overflow the
  schema), generated from `samples/`;
- `tests.fuzz.harness`: runs each variant through `pipelines.infra.runner.run_ingest` (pipeline `ingest-all`, the
  ingest stage only) in a child with `RLIMIT_AS` and a timeout, and classifies what went wrong;
- `tests/fuzz/test_fuzz.py`: the quick subset in CI; `TRAJFORGE_FUZZ=full` runs every variant;
- `bench/fuzz.py`: the same from the command line, with a table of the results.

Problems a variant can show (`harness.PROBLEMS`): `hang` (timeout), `killed` (the child died: signal, or
`MemoryError` under the limit), `over_2gb` (peak RSS), `failed_task` (the run failed a task), `silent_loss`
(fewer steps than the intact sample and no quarantine row), `unit_lost` (a damage to one record lost more
than that record), `unnamed_record` (a record was lost and no row names one: no record id, no line),
`wrong_reason` (no row says what the variant expects, e.g. the budget it must hit), `payload_ran` (a
pickle's `__reduce__` ran). `unclaimed` (the damaged file is no longer
recognised by any format: it is listed among the files no format reads) is reported, not a failure.
"""
