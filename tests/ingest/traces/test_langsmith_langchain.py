"""The LangSmith reader on runs LangChain's own tracer writes at test time: each langchain-core release (its venv
under `.venv/producers/langchain-core-<version>/`, `make parts`) traces a small retrieval agent
(`producers/langchain_rag_run.py`: a scripted chat model plans queries with `with_structured_output`, a retriever
runs each, the model calls a retriever tool, then answers) to the scripted model server's stand-in of LangSmith's
ingest API. What the script fixed and got back (printed by it) is the oracle."""

import json
import os
import subprocess
from pathlib import Path

import pytest

from ingest.traces import langsmith
from tests.ingest.producers import PRODUCERS
from tests.ingest.traces.model_server import ModelServer, Script
from tests.ingest.traces.read_util import claims, read
from tests.parts import require

VERSIONS = ("0.3.86", "1.8.0")
SCRIPT = Path(__file__).parent / "producers" / "langchain_rag_run.py"


def _traced(version: str, out: Path) -> tuple[Path, dict]:
    venv = PRODUCERS / f"langchain-core-{version}"
    require(f"langchain-core {version} in {venv}", (venv / ".installed").exists())
    runs = out / "runs.jsonl"
    with ModelServer(Script([], traces_file=runs)) as server:
        done = subprocess.run([str(venv / "bin" / "python"), str(SCRIPT), server.base_url.removesuffix("/v1")],
                              capture_output=True, text=True, timeout=120, cwd=out,
                              env={"PATH": os.environ.get("PATH", ""), "HOME": str(out), "LANG": "C.UTF-8"})
    assert done.returncode == 0, done.stderr[-3000:]
    return runs, json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("version", VERSIONS)
def test_structured_output_is_an_answer_and_retrievals_are_search_actions(version, tmp_path):
    path, oracle = _traced(version, tmp_path)
    assert claims(langsmith, path)
    (ep,), rejected = read(langsmith, path)
    assert rejected == []
    got = [(s.action.kind, s.action.tool_name,
            json.loads(s.action.arguments) if s.action.kind == "tool_call" else s.action.text) for s in ep.steps]
    assert got == [("message", None, json.dumps({"queries": oracle["queries"]}, separators=(",", ":"))),
                   *[("tool_call", "search", {"query": q}) for q in oracle["queries"]],
                   *[("tool_call", name, args) for name, args in oracle["tool_calls"]],
                   ("message", None, oracle["answer"])]
    # the schema the model answered in, and why the reader took the call for it (LangChain's own marker)
    assert json.loads(ep.steps[0].action.raw)["structured_output"]["schema"] == "Queries"
    assert "ls_structured_output_format" in json.loads(ep.steps[0].action.raw)["structured_output"]["evidence"]
    # each retrieval's documents are the next step's observation, their sources in the order they came
    for i, sources in zip((2, 3), oracle["found"]):
        assert [r["url"] for r in json.loads(ep.steps[i].observation.ui_tree)["results"]] == sources
    # the retriever tool's own retriever run is the tool's work, not a step; its result is the ToolMessage's text
    assert ep.steps[4].observation.text == oracle["tool_results"][0] and not ep.steps[4].observation.is_error
    assert [s["name"] for s in ep.env["trace"]["other_spans"]][-1] == "NotesRetriever"
    assert ep.domain == "search" and ep.agent == "scripted-model-1" and ep.terminated
