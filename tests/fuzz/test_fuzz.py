"""The fuzz harness in CI: the quick subset (~36 variants, ~15 s on 2 cores); `TRAJFORGE_FUZZ=full` runs every
variant (~190, ~2 min). `TRAJFORGE_FUZZ_JOBS` sets how many children run at once (default 2)."""

import os

import pytest

from tests.fuzz.harness import run_variants, summary
from tests.fuzz.variants import variants

FULL = os.environ.get("TRAJFORGE_FUZZ", "") == "full"


@pytest.fixture(scope="module")
def results():
    return run_variants(variants(full=FULL), jobs=int(os.environ.get("TRAJFORGE_FUZZ_JOBS", "2")))


def test_no_variant_hangs_runs_out_of_memory_fails_a_task_or_loses_records_silently(results):
    assert not [r for r in results if r.problems], summary(results)


def test_the_intact_samples_ingest_clean(results):
    for r in results:
        assert r.baseline.status == "ok" and r.baseline.steps > 0 and not r.baseline.rows, r.variant.sample


def test_damage_to_one_record_keeps_the_others(results):
    """Each record-scope variant lands every step but the damaged record's, with a row naming it."""
    checked = [r for r in results if r.variant.scope == "record"]
    assert checked
    for r in checked:
        assert r.outcome.steps >= r.baseline.steps - r.variant.max_loss, r.variant.name
        assert r.outcome.rows, r.variant.name
