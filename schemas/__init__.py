"""Canonical schemas, vocabularies and text renderers (schema v1)."""

from schemas.v1 import (  # noqa: F401
    ACTION_KINDS, BLOBS, DOMAINS, EPISODES, OBSERVATION_KINDS, ORIGINS, OUTCOMES, PLATFORMS, QUARANTINE,
    SCHEMA_VERSION, STEPS, TABLES,
)
