"""The Langfuse SDK run at test time (`.venv/producers/langfuse-<version>/`, `make setup-test`): it is
OpenTelemetry based, so with no Langfuse server it exports its observations as OTLP/HTTP to a stand-in of
Langfuse's OTLP endpoint on loopback, which keeps each request as OTLP/JSON (`producers/langfuse_run.py`). The
script is the oracle: every call it recorded, its arguments, its result (the failed one an error), the model, the
task and the answer are in the one episode the OpenTelemetry reader makes of the file, reading the SDK's
`langfuse.observation.*` attributes as the Langfuse reader reads an observation."""

import json
import subprocess
from pathlib import Path

from ingest.record import Episode, Rejected
from ingest.traces import langfuse, langsmith, openai_agents, otel
from tests.ingest.golden import read_records
from tests.ingest.producers import PRODUCERS
from tests.parts import require

VERSION = "5.2.0"
SCRIPT = Path(__file__).parent / "producers" / "langfuse_run.py"


def test_the_langfuse_sdks_otlp_export_reads_as_the_script_recorded_it(tmp_path):
    venv = PRODUCERS / f"langfuse-{VERSION}"
    require(f"the Langfuse SDK {VERSION} in {venv}", (venv / ".installed").exists())
    path = tmp_path / "langfuse-otlp.jsonl"
    done = subprocess.run([str(venv / "bin" / "python"), str(SCRIPT), str(path)], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    oracle = json.loads(done.stdout.splitlines()[-1])
    head = lambda p: Path(p).read_bytes()[:4096]  # noqa: E731
    assert otel.units([str(path)], head) == [str(path)]
    assert [m.units([str(path)], head) for m in (langfuse, langsmith, openai_agents)] == [[], [], []]
    records = read_records(otel, path)
    assert [r for r in records if isinstance(r, Rejected)] == []
    [ep] = [r for r in records if isinstance(r, Episode)]
    calls = [s for s in ep.steps if s.action.kind == "tool_call"]
    assert [(s.action.tool_name, json.loads(s.action.arguments)) for s in calls] == \
        [(c["name"], c["arguments"]) for c in oracle["calls"]]
    results = [ep.steps[i + 1].observation for i, s in enumerate(ep.steps) if s.action.kind == "tool_call"]
    assert [(o.text, bool(o.is_error)) for o in results] == [tuple(r) for r in oracle["results"]]
    assert (ep.steps[-1].action.kind, ep.steps[-1].action.text) == ("message", oracle["answer"])
    assert ep.task == oracle["task"] and ep.agent == oracle["model"] and ep.terminated
    assert ep.env["trace"]["agents"] == ["file-agent"]
    assert [(e["span"], e["error"]) for e in ep.env["trace"]["errors"]] == [("stat", "no such file")]
