import dataclasses
import os
import shutil
from pathlib import Path

import pytest

from pipelines.infra import definition
from pipelines.infra.runner import run_ingest
from pipelines.infra.runs import open_catalog
from pipelines.infra.lake import Lake
from tests import worker_groups

# The validate stage's great-expectations suites cost ~10 s per run: off in tests unless a test asks for them
# (stage option gx = true).
os.environ.setdefault("PIPELINES_GX", "0")

REPO = Path(__file__).resolve().parent.parent
SAMPLES = REPO / "samples"


def pytest_collection_modifyitems(config, items):
    """On a pytest-xdist worker (`make test`): the groups of tests that share a worker, longest first
    (tests/worker_groups.py)."""
    if hasattr(config, "workerinput"):
        worker_groups.order(items)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    """`--dist loadgroup` hands each worker whole groups of tests/worker_groups.py."""
    if config.getvalue("dist") == "loadgroup":
        return worker_groups.scheduler(config, log)
    return None


@pytest.fixture
def lake(tmp_path) -> str:
    return str(tmp_path / "lake")


@pytest.fixture
def run(lake):
    """run(pipeline, inputs=None, stages=None, **options) -> RunResult, into the test's own lake.
    `stages` replaces the definition's stages: `["ingest"]` shows what a reader wrote before validation."""

    def _run(pipeline: str, inputs=None, stages=None, **kwargs):
        kwargs.setdefault("progress", False)
        kwargs.setdefault("log", lambda line: None)
        defn = definition.load(pipeline)
        if stages is not None:
            defn = dataclasses.replace(defn, stages=list(stages))
        return run_ingest(defn, lake, [str(p) for p in inputs] if inputs else None, **kwargs)

    return _run


@pytest.fixture
def query(lake):
    """query(sql) -> list of row dicts, against the test lake's catalog."""

    def _query(sql: str):
        with open_catalog(Lake(lake), read_only=True) as cat:
            return cat.sql(sql).to_arrow_table().to_pylist()

    return _query


@pytest.fixture
def sample_copy(tmp_path):
    """Copy a bundled sample folder (relative to samples/) to a scratch place the test may alter."""

    def _copy(rel: str) -> Path:
        dst = tmp_path / "input" / Path(rel).name
        shutil.copytree(SAMPLES / rel, dst)
        return dst

    return _copy


def episode_and_steps(query, uri_suffix: str) -> tuple[dict, list[dict]]:
    """The episode whose source_uri ends with `uri_suffix`, and its steps in order."""
    ep = query(f"SELECT * FROM episodes WHERE source_uri LIKE '%{uri_suffix}'")[0]
    steps = query(f"SELECT * FROM steps WHERE episode_id = '{ep['episode_id']}' ORDER BY step_index")
    return ep, steps
