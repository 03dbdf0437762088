"""The DuckDB catalog of the lake.

`Catalog` and `Version` are loaded on first use: a Ray worker reaches this package only for the lake's object
store settings (`catalog.object_store`), and loading DuckDB cost each worker ~0.1 s of CPU before its first
task."""


def __getattr__(name: str):
    if name in ("Catalog", "Version"):
        import importlib

        return getattr(importlib.import_module("catalog.catalog"), name)
    raise AttributeError(f"module 'catalog' has no attribute {name!r}")
