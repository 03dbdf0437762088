import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from pipelines import definition
from pipelines.lake import Lake
from pipelines.runner import run_ingest
from pipelines.runs import open_catalog
from tests.conftest import SAMPLES

RUN = SAMPLES / "android" / "droidbot-run"


@pytest.fixture(scope="module")
def droidbot(tmp_path_factory):
    """(episodes rows, steps rows) of the DroidBot run as ingested, as Python dicts to alter."""
    lake = str(tmp_path_factory.mktemp("lake"))
    run_ingest(definition.load("ingest-android"), lake, [str(RUN)], progress=False, log=lambda s: None)
    with open_catalog(Lake(lake), read_only=True) as cat:
        version = cat.current_version("android")
    read = lambda t: pa.concat_tables([pq.read_table(f"{lake}/{p}") for p in version.parts[t]])  # noqa: E731
    return read("episodes").to_pylist(), read("steps").to_pylist()
