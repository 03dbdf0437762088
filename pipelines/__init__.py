"""The pipelines, in three places: `stages/` (the work on a dataset: validate, dedup, label, sample, export,
eval, migrate, and publish), `infra/` (the lake, the catalog's run records, definitions, planning, the
executor and the runner), and the interfaces people use (`cli/`, the `pipelines` command; `view/`, the local
viewer). Definitions shipped with the package are in `definitions/`."""
