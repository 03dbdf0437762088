import pytest

from pipelines.infra import datasets, definition
from pipelines.infra.lake import Lake
from pipelines.infra.runner import run_ingest
from pipelines.infra.runs import open_catalog
from tests.conftest import SAMPLES
from tests.transforms.dedup.copies import DROIDBOT_RUN, edited_copy, volatile_copy


@pytest.fixture(scope="package")
def android(tmp_path_factory):
    """Real Android episodes, ingested once: the DroidBot run, its rerun (only volatile values differ), an
    edited copy (two events changed) and an unrelated getevent recording. Returns (episodes, steps, uri->id)."""
    tmp = tmp_path_factory.mktemp("dedup")
    inputs = [DROIDBOT_RUN, volatile_copy(tmp / "rerun"), edited_copy(tmp / "edited"), SAMPLES / "android" / "getevent"]
    lake = Lake(str(tmp / "lake"))
    result = run_ingest(definition.load("ingest-android"), lake.url, [str(p) for p in inputs], progress=False,
                        log=lambda line: None)
    assert result.status == "success" and result.episodes == 4
    with open_catalog(lake, read_only=True) as cat:
        version = datasets.resolve(cat, "android")
    episodes = datasets.read_table(lake, version, "episodes")
    steps = datasets.read_table(lake, version, "steps")
    ids = {uri.split("/")[0]: eid for uri, eid in zip(episodes.column("source_uri").to_pylist(),
                                                      episodes.column("episode_id").to_pylist())}
    return episodes, steps, ids
