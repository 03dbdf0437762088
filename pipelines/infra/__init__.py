"""What every stage runs on: the lake and its dataset versions (`lake`, `datasets`), the catalog's run records
(`runs`), pipeline definitions and their options (`definition`, `options`), ingest planning and its tasks
(`plan`, `task`, `harness_files`), the executor that runs per-part work in-process or on Ray (`executor`,
`ray_setup`), the runner that drives a definition (`runner`), Parquet shard writing (`parquet_shard`), and the
model-server client the model stages share (`label_client`, `server_limits`, `request_progress`)."""
