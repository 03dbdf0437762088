"""The AgentWorldBench table against the reference's `aggregate_scores` on the same judged samples, and the
hybrid reward's weighting."""

import random

import pytest

from transforms.reward.judge import SCORE_DIMENSIONS
from transforms.reward.scores import aggregate, format_table, hybrid, normalize


def _jobs(seed: int) -> list[dict]:
    rng = random.Random(seed)
    jobs = []
    for i in range(60):
        domain = rng.choice(["android", "web", "terminal", "mcp"])
        if rng.random() < 0.25:
            jobs.append({"task": f"agentworld/{domain}", "failed": 1.0, "total_score": 0})
            continue
        scores = {d: rng.choice([0, 1, 2, 3, 4, 5, 5]) for d in SCORE_DIMENSIONS}
        valid = [v for v in scores.values() if v > 0]
        jobs.append({"task": f"agentworld/{domain}", "failed": 0.0, **scores,
                     "total_score": sum(valid) / len(valid) if valid else 0})
    jobs.append({"task": "agentworld/os", "failed": 1.0})  # a domain with no valid sample
    return jobs


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_table_equals_the_references(seed):
    from tests.transforms.reward import reference

    jobs = _jobs(seed)
    theirs = reference.printed_table(reference.aggregate_printout([dict(j) for j in jobs]))
    table = aggregate([{"domain": j["task"].split("/")[-1], "failed": bool(j["failed"]),
                        **{k: j.get(k, 0) for k in (*SCORE_DIMENSIONS, "total_score")}} for j in jobs])
    for d in table.domains:
        ref = theirs[d.domain]
        assert (d.valid, d.samples, d.failed) == (ref["valid"], ref["samples"], ref["failed"])
        for dim, score in d.scores.items():
            assert round(score, 2) == ref[dim], (d.domain, dim)
        if not d.valid:
            assert not d.scores and len(ref) == 3  # the reference prints no scores either
    assert round(table.overall, 2) == theirs["overall"]
    assert (table.samples, table.valid, table.failed) == theirs["totals"]
    assert "overall" in format_table(table)


def test_normalization_and_hybrid_weights():
    assert (normalize(1), normalize(3), normalize(5)) == (0.0, 50.0, 100.0)
    assert hybrid(5, 1.0) == 1.0 and hybrid(None, 0.0) == 0.0
    assert hybrid(None, 1.0) == pytest.approx(0.1)  # a judge failure: the rubric part is 0, the rule part 1/10
    assert hybrid(3, 0.0) == pytest.approx(0.9 * 0.5)
    assert hybrid(3, 1.0, (1, 1)) == pytest.approx(0.75)
    with pytest.raises(ValueError):
        hybrid(3, 1.0, (0, 0))
