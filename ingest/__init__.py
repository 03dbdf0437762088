"""Format readers: raw traces to schema-v1 records. One sub-package per platform, one module per format."""
