"""Scores: the AgentWorldBench table (the reference's `aggregate_scores`) and the hybrid RL reward.

Table, per domain (the reference's subtask): a sample is valid when its judge verdict was read (`failed`
is 0); each dimension's score is the mean of the valid samples' non-zero values, normalized to 0-100 as
(mean - 1) / 4 x 100 (0 when there are none); `total_score` likewise over the per-sample totals. Overall is
the normalized mean of every valid sample's non-zero total (so each sample weighs the same, whatever its
domain), and its failed count is every sample without a non-zero total, as the reference prints them.

Reward: `weights` (rubric, rule), 9 : 1 by default as in the technical report; the rubric part is the
judge's total mapped to [0, 1] as (total - 1) / 4, and 0 when the judge failed.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from transforms.reward.judge import SCORE_DIMENSIONS

DIMENSIONS = (*SCORE_DIMENSIONS, "total_score")


def normalize(raw: float) -> float:
    return (raw - 1) / 4 * 100


@dataclass
class DomainScores:
    domain: str
    samples: int
    valid: int
    failed: int
    scores: dict[str, float] = field(default_factory=dict)  # dimension -> 0..100; empty when nothing is valid


@dataclass
class Table:
    domains: list[DomainScores]
    overall: float | None  # None when no sample has a total
    samples: int
    valid: int  # samples with a non-zero total
    failed: int


def aggregate(samples: list[dict]) -> Table:
    """`samples`: dicts with `domain`, `failed` (bool or 0/1) and, when valid, the five dimensions and
    `total_score`. Domains come out sorted by name, as the reference prints them."""
    by_domain: dict[str, list[dict]] = {}
    for s in samples:
        by_domain.setdefault(s["domain"], []).append(s)
    domains, totals = [], []
    for domain in sorted(by_domain):
        rows = by_domain[domain]
        valid = [r for r in rows if not r.get("failed", True)]
        entry = DomainScores(domain, len(rows), len(valid), len(rows) - len(valid))
        if valid:
            for dim in DIMENSIONS:
                values = [r.get(dim) or 0 for r in valid if (r.get(dim) or 0) != 0]
                entry.scores[dim] = normalize(sum(values) / len(values)) if values else normalize(0.0)
                if dim == "total_score":
                    totals += values
        domains.append(entry)
    overall = normalize(sum(totals) / len(totals)) if totals else None
    return Table(domains, overall, len(samples), len(totals), len(samples) - len(totals))


def format_table(table: Table) -> str:
    """The table as text: one row per domain (valid / samples, failed, each dimension), then overall."""
    head = f"{'domain':10s} {'valid':>9s} {'failed':>6s} " + " ".join(f"{d[:11]:>11s}" for d in DIMENSIONS)
    lines = [head]
    for d in table.domains:
        cells = " ".join(f"{d.scores[k]:11.2f}" if k in d.scores else f"{'-':>11s}" for k in DIMENSIONS)
        lines.append(f"{d.domain:10s} {f'{d.valid}/{d.samples}':>9s} {d.failed:6d} {cells}")
    overall = f"{table.overall:.2f}" if table.overall is not None else "-"
    lines.append(f"overall {overall}   samples {table.samples}, valid {table.valid}, failed {table.failed}")
    return "\n".join(lines)


def hybrid(rubric_total: float | None, rule: float, weights: tuple[float, float] = (9.0, 1.0)) -> float:
    """The reward in [0, 1]: weighted mean of the rubric ((total - 1) / 4; 0 when the judge failed or gave
    no total: None or 0) and the rule score. A zero rubric weight gives the rule score alone."""
    rubric_weight, rule_weight = weights
    if rubric_weight + rule_weight <= 0:
        raise ValueError(f"reward weights must not both be 0: {weights}")
    rubric = max(0.0, (rubric_total - 1) / 4) if rubric_total else 0.0
    return (rubric_weight * rubric + rule_weight * rule) / (rubric_weight + rule_weight)
