"""The labeler's vLLM offline backend (`pipelines label DATASET --backend vllm --model M`): the plumbing of
`complete_offline` and the command's flags.

What could not run here: a real vLLM engine. vLLM with CUDA is several GB, is not installed in this venv
(`import vllm` fails) and there is no GPU, so these tests inject a STAND-IN `vllm` module through
`sys.modules` (`StandInLLM`, `StandInEngine`, `StandInTokenizer`, `StandInSamplingParams`,
`StandInRequestOutput`, `StandInCompletionOutput`, `StandInRequestOutputKind`). The stand-ins copy the names and
shapes of the real API that `complete_offline` uses, as read in vLLM's source:
- vllm/entrypoints/llm.py: `LLM(model, **kwargs)` (kwargs go to EngineArgs, unknown ones are a TypeError),
  `LLM.llm_engine`, `LLM.get_tokenizer()`; `LLM.chat` renders with the chat template to text and encodes it with
  `add_special_tokens=False`; `_run_engine` loops `while llm_engine.has_unfinished_requests(): step()` and keeps
  the outputs with `.finished`;
- vllm/v1/engine/llm_engine.py: `add_request(request_id: str, prompt, params)` (newer versions return an internal
  id with a random suffix while outputs keep the caller's id), `step() -> list[RequestOutput]`,
  `has_unfinished_requests()`; a prompt longer than max_model_len is a ValueError from `add_request`;
- vllm/outputs.py: `RequestOutput(request_id, prompt, prompt_token_ids, prompt_logprobs, outputs, finished)`,
  `CompletionOutput(index, text, token_ids, cumulative_logprob, logprobs, finish_reason, stop_reason)`;
- vllm/sampling_params.py: `SamplingParams(temperature, top_p, top_k, seed, stop, max_tokens, output_kind)`,
  `RequestOutputKind.FINAL_ONLY` (no per-step outputs).
The stand-in engine schedules like continuous batching (up to `max_num_seqs` running, one token per running
request per step, first come first served), so results finish out of request order. Whether the real engine's
throughput, prefix caching and chat templates behave as intended needs a GPU node run.
"""

import dataclasses
import enum
import subprocess
import sys
import types

import pytest

from pipelines import cli
from pipelines.cli import label as label_cli
from pipelines.infra.label_client import ChatRequest, Sampling, complete_offline

# --- the stand-in vllm module ------------------------------------------------------------------------------


class StandInRequestOutputKind(enum.Enum):
    """Stand-in for vllm.sampling_params.RequestOutputKind."""

    CUMULATIVE = 0
    DELTA = 1
    FINAL_ONLY = 2


class StandInSamplingParams:
    """Stand-in for vllm.SamplingParams: exactly the fields complete_offline passes, by keyword, with vLLM's
    defaults (an unexpected keyword is a TypeError, as for the real msgspec struct)."""

    def __init__(self, *, temperature: float = 1.0, top_p: float = 1.0, top_k: int = 0, seed: int | None = None,
                 stop: str | list[str] | None = None, max_tokens: int | None = 16,
                 output_kind: StandInRequestOutputKind = StandInRequestOutputKind.CUMULATIVE):
        self.temperature, self.top_p, self.top_k, self.seed = temperature, top_p, top_k, seed
        self.stop, self.max_tokens, self.output_kind = stop, max_tokens, output_kind


@dataclasses.dataclass
class StandInCompletionOutput:
    """Stand-in for vllm.outputs.CompletionOutput."""

    index: int
    text: str
    token_ids: list[int]
    cumulative_logprob: float | None
    logprobs: list | None
    finish_reason: str | None = None
    stop_reason: int | str | None = None


class StandInRequestOutput:
    """Stand-in for vllm.outputs.RequestOutput."""

    def __init__(self, request_id: str, prompt: str | None, prompt_token_ids: list[int] | None, prompt_logprobs,
                 outputs: list[StandInCompletionOutput], finished: bool):
        self.request_id, self.prompt, self.prompt_token_ids = request_id, prompt, prompt_token_ids
        self.prompt_logprobs, self.outputs, self.finished = prompt_logprobs, outputs, finished


class StandInTokenizer:
    """Stand-in for the tokenizer `LLM.get_tokenizer()` returns: a ChatML-like template, one id per word."""

    def __init__(self):
        self.vocab: dict[str, int] = {}

    def apply_chat_template(self, messages, tokenize=True, add_generation_prompt=False, **kwargs):
        assert tokenize is False and add_generation_prompt is True
        text = "".join(f"<|im_start|>{m['role']} {m['content']} <|im_end|> " for m in messages)
        return text + "<|im_start|>assistant "

    def encode(self, text: str, add_special_tokens: bool = True) -> list[int]:
        assert add_special_tokens is False, "the chat template already holds the special tokens"
        return [self.vocab.setdefault(word, len(self.vocab)) for word in text.split()]

    def decode(self, ids: list[int]) -> str:
        words = {i: w for w, i in self.vocab.items()}
        return " ".join(words[i] for i in ids)


@dataclasses.dataclass
class _Running:
    request_id: str
    prompt_token_ids: list[int]
    params: StandInSamplingParams
    wanted: int  # tokens until the script's end of sequence
    finish: str  # the finish reason at the script's end of sequence
    generated: int = 0


class StandInEngine:
    """Stand-in for `LLM.llm_engine` (vllm/v1/engine/llm_engine.py LLMEngine): add_request / step /
    has_unfinished_requests, with continuous batching. The last user message scripts a request:
    "tokens=N" (end of sequence after N tokens; the default is 3) and "finish=REASON" (the reason then)."""

    def __init__(self, tokenizer: StandInTokenizer, max_model_len: int, max_num_seqs: int, internal_ids: bool):
        self.tokenizer = tokenizer
        self.max_model_len, self.max_num_seqs, self.internal_ids = max_model_len, max_num_seqs, internal_ids
        self.waiting: list[_Running] = []
        self.running: list[_Running] = []
        self.steps = 0
        self.added: list[str] = []
        self.most_unfinished = 0
        self.interrupt_at_step: int | None = None
        self.prompts: dict[str, list[int]] = {}
        self.last_params: StandInSamplingParams | None = None

    def add_request(self, request_id, prompt, params, arrival_time=None, lora_request=None,
                    tokenization_kwargs=None, trace_headers=None, priority=0):
        assert isinstance(request_id, str)
        assert isinstance(params, StandInSamplingParams)
        assert params.output_kind is StandInRequestOutputKind.FINAL_ONLY
        ids = prompt["prompt_token_ids"]
        if len(ids) > self.max_model_len:  # vLLM's input processor check, raised from add_request
            raise ValueError(f"The decoder prompt (length {len(ids)}) is longer than the maximum model length "
                             f"of {self.max_model_len}.")
        script = dict(word.split("=", 1) for word in self.tokenizer.decode(ids).split() if "=" in word)
        self.prompts[request_id], self.last_params = ids, params
        self.waiting.append(_Running(request_id, ids, params, int(script.get("tokens", 3)),
                                     script.get("finish", "stop")))
        self.added.append(request_id)
        self.most_unfinished = max(self.most_unfinished, len(self.waiting) + len(self.running))
        return f"{request_id}-a1b2c3d4" if self.internal_ids else None

    def has_unfinished_requests(self) -> bool:
        return bool(self.waiting or self.running)

    def step(self) -> list[StandInRequestOutput]:
        self.steps += 1
        if self.interrupt_at_step == self.steps:
            raise KeyboardInterrupt
        while self.waiting and len(self.running) < self.max_num_seqs:
            self.running.append(self.waiting.pop(0))
        outputs = []
        for r in list(self.running):
            r.generated += 1
            if r.generated >= r.wanted:
                reason = r.finish
            elif r.generated >= r.params.max_tokens:
                reason = "length"
            else:
                continue  # FINAL_ONLY: nothing until the request finishes
            self.running.remove(r)
            tokens = list(range(100, 100 + r.generated))
            text = " ".join(f"t{i}" for i in range(r.generated))
            outputs.append(StandInRequestOutput(r.request_id, None, r.prompt_token_ids, None,
                                                [StandInCompletionOutput(0, text, tokens, None, None, reason)], True))
        return outputs


class StandInLLM:
    """Stand-in for vllm.LLM: records its arguments; unknown ones are a TypeError like EngineArgs'."""

    ENGINE_ARGS = {"tensor_parallel_size", "max_model_len", "enable_prefix_caching", "gpu_memory_utilization",
                   "max_num_seqs", "dtype", "enforce_eager"}
    instances: list["StandInLLM"] = []
    internal_ids = False
    interrupt_at_step: int | None = None

    def __init__(self, model: str, **kwargs):
        unknown = set(kwargs) - self.ENGINE_ARGS
        if unknown:
            raise TypeError(f"EngineArgs.__init__() got an unexpected keyword argument {sorted(unknown)[0]!r}")
        self.model, self.kwargs = model, kwargs
        self._tokenizer = StandInTokenizer()
        self.llm_engine = StandInEngine(self._tokenizer, kwargs.get("max_model_len", 4096),
                                        kwargs.get("max_num_seqs", 256), self.internal_ids)
        self.llm_engine.interrupt_at_step = self.interrupt_at_step
        StandInLLM.instances.append(self)

    def get_tokenizer(self):
        return self._tokenizer


@pytest.fixture
def vllm(monkeypatch):
    """Installs the stand-in `vllm` (and `vllm.sampling_params`) module; yields the stand-in LLM class."""
    module = types.ModuleType("vllm")
    sampling_params = types.ModuleType("vllm.sampling_params")
    sampling_params.SamplingParams = module.SamplingParams = StandInSamplingParams
    sampling_params.RequestOutputKind = StandInRequestOutputKind
    module.LLM, module.sampling_params = StandInLLM, sampling_params
    monkeypatch.setitem(sys.modules, "vllm", module)
    monkeypatch.setitem(sys.modules, "vllm.sampling_params", sampling_params)
    monkeypatch.setattr(StandInLLM, "instances", [])
    yield StandInLLM


def _requests(*scripts: str) -> list[ChatRequest]:
    """One request per script ("tokens=5 finish=stop", read by the stand-in engine), keyed r0, r1, ..."""
    return [ChatRequest(f"r{i}", [{"role": "system", "content": "You are a world model."},
                                  {"role": "user", "content": f"### Turn 1 {s}"}]) for i, s in enumerate(scripts)]


# --- complete_offline ---------------------------------------------------------------------------------------


def test_results_reach_on_result_as_each_request_finishes(vllm):
    requests = _requests("tokens=6", "tokens=2", "tokens=4", "tokens=1")
    seen = []
    results = complete_offline("wm", Sampling(), requests,
                               lambda c: seen.append((c.key, vllm.instances[0].llm_engine.steps)))
    # completion order (shortest first), each at the step it finished, not after the whole batch
    assert seen == [("r3", 1), ("r1", 2), ("r2", 4), ("r0", 6)]
    assert [r.key for r in results] == ["r0", "r1", "r2", "r3"]  # the return value is in request order
    assert all(r.error is None and r.attempts == 1 for r in results)


def test_an_interrupted_run_has_already_delivered_what_finished(vllm, monkeypatch):
    monkeypatch.setattr(StandInLLM, "interrupt_at_step", 3)
    requests = _requests("tokens=1", "tokens=2", "tokens=5", "tokens=8")
    delivered = []
    with pytest.raises(KeyboardInterrupt):
        complete_offline("wm", Sampling(), requests, delivered.append)
    assert [c.key for c in delivered] == ["r0", "r1"]  # finished at steps 1 and 2, before the interrupt


@pytest.mark.parametrize("internal_ids", [False, True], ids=["ids-as-given", "engine-suffixed-ids"])
def test_outputs_map_back_to_their_request_whatever_id_add_request_returns(vllm, monkeypatch, internal_ids):
    monkeypatch.setattr(StandInLLM, "internal_ids", internal_ids)
    results = complete_offline("wm", Sampling(), _requests("tokens=3", "tokens=1"))
    assert [(r.key, r.tokens_out) for r in results] == [("r0", 3), ("r1", 1)]


def test_engine_args_reach_the_llm_constructor_with_prefix_caching_on_by_default(vllm):
    complete_offline("/models/wm", Sampling(), _requests("tokens=1"), tensor_parallel_size=2, max_model_len=32768)
    complete_offline("/models/wm", Sampling(), _requests("tokens=1"), enable_prefix_caching=False)
    first, second = vllm.instances
    assert first.model == "/models/wm"
    assert first.kwargs == {"enable_prefix_caching": True, "tensor_parallel_size": 2, "max_model_len": 32768}
    assert second.kwargs == {"enable_prefix_caching": False}  # overridden, no duplicate-keyword TypeError


def test_sampling_maps_to_sampling_params(vllm):
    complete_offline("wm", Sampling(temperature=0.2, top_p=0.5, top_k=7, max_tokens=99, seed=3, stop=("</s>",)),
                     _requests("tokens=1"))
    complete_offline("wm", Sampling(), _requests("tokens=1"))
    given, default = (llm.llm_engine.last_params for llm in vllm.instances)
    assert vars(given) == {"temperature": 0.2, "top_p": 0.5, "top_k": 7, "seed": 3, "stop": ["</s>"],
                           "max_tokens": 99, "output_kind": StandInRequestOutputKind.FINAL_ONLY}
    assert (default.stop, default.seed, default.max_tokens) == (None, None, Sampling().max_tokens)


def test_finish_reason_length_and_token_counts(vllm):
    requests = _requests("tokens=50", "tokens=2")
    results = complete_offline("wm", Sampling(max_tokens=4), requests)
    truncated, done = results
    prompt = vllm.instances[0].llm_engine.prompts
    assert (truncated.finish_reason, truncated.tokens_out, truncated.text) == ("length", 4, "t0 t1 t2 t3")
    assert (done.finish_reason, done.tokens_out, done.text) == ("stop", 2, "t0 t1")
    assert truncated.tokens_in == len(prompt["0"]) and done.tokens_in == len(prompt["1"]) > 0
    assert truncated.error is None and done.error is None  # truncation is the parser's call, as over HTTP


def test_a_rejected_request_gets_an_error_and_the_others_go_on(vllm):
    requests = _requests("tokens=2", "tokens=2", "tokens=1 finish=abort")
    requests[1].messages[-1]["content"] += " word" * 100  # over max_model_len: add_request raises
    delivered = []
    results = complete_offline("wm", Sampling(), requests, delivered.append, max_model_len=64)
    assert results[0].error is None and results[0].text == "t0 t1"
    assert results[1].error.startswith("vLLM rejected the request: ValueError: The decoder prompt (length")
    assert results[1].text is None and results[1].attempts == 1
    assert results[2].error == "vLLM ended the request with finish_reason 'abort'"
    assert sorted(c.key for c in delivered) == ["r0", "r1", "r2"]  # the rejected one is recorded too


def test_at_most_max_pending_requests_are_in_the_engine_added_in_request_order(vllm):
    requests = _requests(*[f"tokens={n}" for n in (3, 1, 4, 1, 5, 9, 2, 6)])
    results = complete_offline("wm", Sampling(), requests, max_pending=3)
    engine = vllm.instances[0].llm_engine
    assert engine.most_unfinished == 3
    assert engine.added == [str(i) for i in range(8)]
    assert all(r.error is None for r in results) and [r.tokens_out for r in results] == [3, 1, 4, 1, 5, 9, 2, 6]


def test_without_vllm_installed_the_error_says_how_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "vllm", None)  # import vllm -> ImportError
    with pytest.raises(RuntimeError, match=r"pip install 'trajforge\[label-vllm\]'"):
        complete_offline("wm", Sampling(), [])


# --- the command's flags ------------------------------------------------------------------------------------


def _args(*flags: str):
    return cli.build_parser().parse_args(["label", "android", "--model", "wm", *flags])


def test_engine_arg_values_are_json_else_strings():
    args = _args("--backend", "vllm", "--engine-arg", "tensor_parallel_size=2", "--engine-arg", "enforce_eager=true",
                 "--engine-arg", "enable_prefix_caching=False", "--engine-arg", "dtype=bfloat16",
                 "--engine-arg", "gpu_memory_utilization=0.85", "--engine-arg", 'compilation_config={"level": 3}',
                 "--engine-arg", "max_model_len=8192", "--engine-arg", "max_model_len=32768")
    label_cli.check_backend_args(args, log=pytest.fail)  # nothing to warn about
    assert args.engine_args == {"tensor_parallel_size": 2, "enforce_eager": True, "enable_prefix_caching": False,
                                "dtype": "bfloat16", "gpu_memory_utilization": 0.85,
                                "compilation_config": {"level": 3}, "max_model_len": 32768}


@pytest.mark.parametrize("item", ["tensor_parallel_size", "=2", "tensor parallel=2", "model=other"])
def test_a_malformed_engine_arg_is_a_one_line_usage_error(item, capsys):
    with pytest.raises(SystemExit) as exit_info:
        _args("--backend", "vllm", "--engine-arg", item)
    assert exit_info.value.code == 2
    errors = [line for line in capsys.readouterr().err.splitlines() if "error:" in line]
    assert len(errors) == 1 and f"argument --engine-arg: {item!r}" in errors[0]


def test_http_only_flags_are_reported_with_vllm_only_when_given():
    lines = []
    args = _args("--backend", "vllm", "--concurrency", "16", "--timeout", "30", "--endpoint", "http://h:8000/v1")
    label_cli.check_backend_args(args, lines.append)
    assert lines == ["label: --endpoint is ignored by the vllm backend",
                     "label: --concurrency is ignored by the vllm backend",
                     "label: --timeout is ignored by the vllm backend"]  # even a value equal to the default
    lines.clear()
    label_cli.check_backend_args(_args("--backend", "vllm", "--retries", "0"), lines.append)
    assert lines == ["label: --retries is ignored by the vllm backend"]
    lines.clear()
    label_cli.check_backend_args(_args("--backend", "vllm"), lines.append)
    assert lines == []


def test_http_keeps_its_defaults_and_flags():
    args = _args("--endpoint", "http://h:8000/v1")
    label_cli.check_backend_args(args, log=pytest.fail)
    assert (args.concurrency, args.timeout, args.retries, args.engine_args) == (16, 600.0, 4, {})
    args = _args("--endpoint", "http://h:8000/v1", "--concurrency", "4", "--timeout", "5", "--retries", "0")
    label_cli.check_backend_args(args, log=pytest.fail)
    assert (args.concurrency, args.timeout, args.retries) == (4, 5.0, 0)


def test_engine_arg_with_the_http_backend_is_an_error(capsys):
    code = cli.main(["label", "android", "--model", "wm", "--endpoint", "http://h:8000/v1",
                     "--engine-arg", "tensor_parallel_size=2", "--lake", "/nonexistent-lake"])
    assert code == 2
    assert capsys.readouterr().err.strip() == "error: --engine-arg applies to --backend vllm only"


def test_the_command_module_imports_nothing_heavy():
    code = ("import sys, pipelines.cli.label; "
            "heavy = {'vllm', 'torch', 'aiohttp'} & set(sys.modules); assert not heavy, heavy")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_the_offline_engines_tasks_ask_for_its_gpus_unless_the_definition_names_them():
    """`LABEL.needs`: with the vllm backend a group's task asks for tensor x pipeline parallel GPUs, where the
    declared resources (a definition's `[stage_resources.label]`) name none; the HTTP client's asks for what is
    declared."""
    from pipelines.infra.executor import ONE_CPU, Resources
    from pipelines.stages.label import LABEL, LabelOptions

    offline = lambda **args: LabelOptions(model="wm", backend="vllm", engine_args=args)  # noqa: E731
    assert LABEL.needs(offline(), ONE_CPU) == Resources(cpus=1, gpus=1)
    assert LABEL.needs(offline(tensor_parallel_size=2, pipeline_parallel_size=2), ONE_CPU) == Resources(cpus=1, gpus=4)
    assert LABEL.needs(offline(tensor_parallel_size=4), Resources(cpus=2, gpus=1, memory_mb=8192)) == \
        Resources(cpus=2, gpus=1, memory_mb=8192)
    assert LABEL.needs(LabelOptions(model="wm", endpoint="http://h:8000/v1"), ONE_CPU) == ONE_CPU
