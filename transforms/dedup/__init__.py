"""Duplicate detection: exact (`exact`) and near-duplicate (`minhash`) episodes, and the one rule that picks
which member of a cluster is kept (`representative`)."""
