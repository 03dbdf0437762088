# `make demo`: set up and run the main job on the bundled samples.  `make test`: set up and run the tests.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: setup demo test clean

$(BIN)/pipelines: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[test]'
	touch $@

setup: $(BIN)/pipelines

demo: setup
	$(BIN)/pipelines run ingest-android
	$(BIN)/pipelines sql "SELECT domain, count(*) AS steps FROM steps GROUP BY 1"

test: setup
	$(BIN)/pytest

clean:
	rm -rf lake .pytest_cache
