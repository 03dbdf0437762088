"""LangSmith's OpenTelemetry exporter form, read by the OpenTelemetry reader as the LangSmith reader reads run trees:
the retrieval agent of `producers/langchain_rag_run.py`, traced at test time by langchain-core 1.8.0 through the
LangSmith SDK's OTel exporter (`LANGSMITH_OTEL_ONLY`; the venv `.venv/producers/langchain-core-otel-1.8.0/`, `make
parts`), its spans written as OTLP/JSON lines (`producers/langchain_rag_otel_run.py`). What the script fixed and got
back (printed by it) is the oracle: the structured plan is the model's answer, each planned query a search action,
the retriever tool one call whose own retriever span is its work, then the answer."""

import json
import os
import subprocess
from pathlib import Path

from ingest.traces import otel
from tests.ingest.producers import PRODUCERS
from tests.ingest.traces.read_util import claims, read
from tests.parts import require

VENV = PRODUCERS / "langchain-core-otel-1.8.0"
SCRIPT = Path(__file__).parent / "producers" / "langchain_rag_otel_run.py"


def _traced(out: Path) -> tuple[Path, dict]:
    require(f"langchain-core 1.8.0 with langsmith[otel] in {VENV}", (VENV / ".installed").exists())
    spans = out / "spans.jsonl"
    done = subprocess.run([str(VENV / "bin" / "python"), str(SCRIPT), str(spans)], capture_output=True, text=True,
                          timeout=120, cwd=out, env={"PATH": os.environ.get("PATH", ""), "HOME": str(out),
                                                     "LANG": "C.UTF-8"})
    assert done.returncode == 0, done.stderr[-3000:]
    return spans, json.loads(done.stdout.strip().splitlines()[-1])


def test_structured_output_is_an_answer_and_a_retriever_inside_a_tool_is_the_tools_work(tmp_path):
    path, oracle = _traced(tmp_path)
    assert claims(otel, path)
    (ep,), rejected = read(otel, path)
    assert rejected == []
    got = [(s.action.kind, s.action.tool_name,
            json.loads(s.action.arguments) if s.action.kind == "tool_call" else s.action.text) for s in ep.steps]
    assert got == [("message", None, json.dumps({"queries": oracle["queries"]}, separators=(",", ":"))),
                   *[("tool_call", "search", {"query": q}) for q in oracle["queries"]],
                   *[("tool_call", name, args) for name, args in oracle["tool_calls"]],
                   ("message", None, oracle["answer"])]
    # the exporter drops `extra.options` (LangChain's `ls_structured_output_format`): the evidence is the forced
    # choice (`any` of the one tool offered) in the run's metadata beside the parser span of the same parent
    structured = json.loads(ep.steps[0].action.raw)["structured_output"]
    assert structured["schema"] == "Queries" and structured["evidence"].startswith("langsmith.metadata.tool_choice")
    for i, sources in zip((2, 3), oracle["found"]):
        assert [r["url"] for r in json.loads(ep.steps[i].observation.ui_tree)["results"]] == sources
    # the tool's own retriever span is no step: kept among the other spans; the tool's result is its output
    assert ep.steps[4].observation.text == oracle["tool_results"][0]
    assert [s["name"] for s in ep.env["trace"]["other_spans"]].count("NotesRetriever") == 1
    assert ep.domain == "search" and ep.agent == "scripted-model-1" and ep.terminated
