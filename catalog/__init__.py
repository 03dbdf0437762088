"""The DuckDB catalog of the lake."""

from catalog.catalog import Catalog, Version  # noqa: F401
