"""Producer in the loop for Inspect AI eval logs, run inside Inspect's own environment
(`.venv/producers/inspect-ai-<version>/`, made by `make setup-test`), never imported by the tests' Python.

    python inspect_producer.py write OUT_DIR    # run one eval, write it as .eval and as .json into OUT_DIR
    python inspect_producer.py read LOG...      # Inspect's own reading of each log, a JSON list on stdout (the oracle)

The eval: a task of three samples whose solver offers two tools (`add`, and `lookup`, which raises a
`ToolError`) and calls the model until it stops calling tools (`generate(tool_calls="loop")`); the model is Inspect's `mockllm` scripted with
`ModelOutput.for_tool_call` (no network). Sample 1 calls `add` then answers right; sample 2 calls `lookup`
(an error result) and `add` and answers wrong; sample 3 answers at once. The `match` scorer grades each
answer against its target: samples 1 and 3 are correct, sample 2 is not.

Inspect counts tokens with tiktoken's `o200k_base`, which tiktoken downloads on first use: the tests point
`TIKTOKEN_CACHE_DIR` at the cache the Makefile fills from a PyPI wheel that bundles the encoding (litellm's), so
nothing is fetched.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def _task():
    from inspect_ai import Task
    from inspect_ai.dataset import Sample
    from inspect_ai.scorer import match
    from inspect_ai.solver import generate, system_message, use_tools
    from inspect_ai.tool import ToolError, tool

    @tool
    def add():
        async def execute(x: int, y: int):
            """Add two numbers.

            Args:
                x: the first number
                y: the second number
            """
            return str(x + y)

        return execute

    @tool
    def lookup():
        async def execute(key: str):
            """Look a value up by key.

            Args:
                key: the key to look up
            """
            raise ToolError(f"no value for {key!r}")

        return execute

    samples = [
        Sample(id="add-1", input="What is 1 + 2? Use the add tool.", target="3", metadata={"kind": "sum"}),
        Sample(id="add-2", input="What is 20 + 22? Look the hint up first.", target="42"),
        Sample(id="echo-3", input="Say ok.", target="ok"),
    ]
    return Task(dataset=samples,
                solver=[system_message("You are a careful calculator."), use_tools([add(), lookup()]),
                        generate(tool_calls="loop")],
                scorer=match(), name="calc")


def _outputs():
    from inspect_ai.model import ModelOutput

    m = "mockllm/model"
    return [
        ModelOutput.for_tool_call(m, "add", {"x": 1, "y": 2}, content="Adding."),
        ModelOutput.from_content(m, "3"),
        ModelOutput.for_tool_call(m, "lookup", {"key": "hint"}),
        ModelOutput.for_tool_call(m, "add", {"x": 20, "y": 2}),
        ModelOutput.from_content(m, "22"),
        ModelOutput.from_content(m, "ok"),
    ]


def write(out: Path) -> list[str]:
    from inspect_ai import eval as inspect_eval
    from inspect_ai.model import get_model

    written = []
    for fmt in ("eval", "json"):
        model = get_model("mockllm/model", custom_outputs=_outputs())
        [log] = inspect_eval(_task(), model=model, log_dir=str(out), log_format=fmt, max_samples=1,
                             display="none", score_display=False)
        if log.status != "success":
            raise SystemExit(f"the eval did not succeed: {log.status} {log.error}")
        written.append(log.location)
    return written


def read(location: str) -> dict:
    """What Inspect itself reads from a log: per sample its id, epoch, messages (role, text, tool calls and
    the id a tool message answers, its error), scores and model."""
    from inspect_ai.log import read_eval_log

    log = read_eval_log(location, resolve_attachments=True)
    samples = []
    for s in log.samples or []:
        messages = []
        for m in s.messages:
            entry = {"role": m.role, "text": m.text}
            if m.role == "assistant":
                entry["model"] = m.model
                entry["tool_calls"] = [{"id": c.id, "function": c.function, "arguments": c.arguments}
                                       for c in (m.tool_calls or [])]
            if m.role == "tool":
                entry["tool_call_id"] = m.tool_call_id
                entry["function"] = m.function
                entry["error"] = m.error.message if m.error else None
            messages.append(entry)
        samples.append({"id": s.id, "epoch": s.epoch, "input": s.input if isinstance(s.input, str) else None,
                        "target": s.target, "messages": messages,
                        "scores": {k: {"value": v.value, "answer": v.answer} for k, v in (s.scores or {}).items()}})
    return {"version": log.version, "status": log.status, "task": log.eval.task, "model": log.eval.model,
            "samples": samples}


def main(argv: list[str]) -> int:
    if len(argv) == 2 and argv[0] == "write":
        print(json.dumps(write(Path(argv[1]))))
        return 0
    if len(argv) >= 2 and argv[0] == "read":
        print(json.dumps([read(log) for log in argv[1:]], default=str))
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
