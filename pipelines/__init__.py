"""Pipeline definitions, the runner, and the `pipelines` command."""
