import pytest

from pipelines.infra.datasets import read_table, resolve
from pipelines.infra.lake import Lake
from pipelines.infra.runs import open_catalog


@pytest.fixture
def droidbot_steps(run, lake):
    """The bundled DroidBot run (12 steps, screens on steps 0-3): (episode_id, ordered schema-v1 step dicts)."""
    run("ingest-android")
    with open_catalog(Lake(lake), read_only=True) as cat:
        version = resolve(cat, "android")
        episodes = read_table(Lake(lake), version, "episodes").to_pylist()
        steps = read_table(Lake(lake), version, "steps").to_pylist()
    (episode_id,) = [e["episode_id"] for e in episodes if e["source_format"] == "droidbot"]
    return episode_id, sorted((s for s in steps if s["episode_id"] == episode_id), key=lambda s: s["step_index"])
