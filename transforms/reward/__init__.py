"""The world-model reward and the AgentWorldBench evaluation's pure parts: rule checks per domain
(`rules`), the LLM judge's input and verdict reading (`judge`), score aggregation and the hybrid reward
(`scores`). The I/O (judge requests, caches, the catalog) is in `pipelines.stages.reward` and `pipelines.stages`."""
