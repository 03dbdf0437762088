"""`pipelines run ingest-all` over one folder that mixes every bundled sample with the logs the agent-log producers
write at test time (Inspect AI at both versions, greenlight-mcp with and without payloads, the OpenAI Agents SDK's,
the OpenTelemetry SDK's and the LangSmith SDK's trace files against the scripted model server) and the real public
Claude Code / Codex sessions of ../shared/samples when they are there: every trajectory is read, and nothing a
person would call a trace is reported as "no format reads it" (only provenance notes are: a trajectory's
screenshot files are read with it). Cost: ~10 s after the producer fixtures (shared with tests/ingest)."""

from __future__ import annotations

import shutil
from pathlib import Path

from ingest.record import Episode, Rejected
from ingest.swe import claude_code, codex
from ingest.traces import langsmith, otel
from tests.conftest import SAMPLES
from tests.ingest.golden import read_records
from tests.ingest.producers import greenlight_logs, inspect_runs  # noqa: F401 (fixtures)
from tests.ingest.traces import producer_runs

SHARED = SAMPLES.parent.parent / "shared" / "samples"
JAEGER_DATA = Path(__file__).resolve().parents[1] / "ingest" / "traces" / "data"

# the trace producers' files: mode -> {file: the format that reads it}; a handoff run gives two episodes a file
TRACE_RUNS = {"chat": {"spans.jsonl": "openai_agents", "backend.jsonl": "openai_agents", "otlp.jsonl": "otel"},
              "tool-spans": {"console.json": "otel", "otlp.jsonl": "otel"}}
for _mode in ("responses", "handoff"):
    TRACE_RUNS[_mode] = TRACE_RUNS["chat"]
for _mode in ("model-spans", "genai", "openllmetry"):
    TRACE_RUNS[_mode] = TRACE_RUNS["tool-spans"]
TRACE_RUNS["langsmith"] = {"runs.jsonl": "langsmith"}


def _trace_files(mixed: Path, tmp_path_factory) -> tuple[dict[str, int], dict[str, int]]:
    """Copies every trace producer's files into `mixed`: (episodes, tool calls its scripts fixed) per format."""
    episodes, fixed = dict.fromkeys(("openai_agents", "otel", "langsmith"), 0), {}
    for mode, files in TRACE_RUNS.items():
        out, script = producer_runs.run(mode, tmp_path_factory)
        (mixed / f"traces-{mode}").mkdir()
        for name, fmt in files.items():
            shutil.copy(out / name, mixed / f"traces-{mode}" / name)
            episodes[fmt] += 2 if mode == "handoff" else 1
            fixed[fmt] = fixed.get(fmt, 0) + len(producer_runs.scripted_calls(script))
    return episodes, fixed


def test_ingest_all_reads_every_agent_log_mixed_with_the_samples(inspect_runs, greenlight_logs, run, query,  # noqa: F811
                                                                  tmp_path, tmp_path_factory):
    mixed = tmp_path / "mixed"
    shutil.copytree(SAMPLES, mixed / "samples")
    for version, (paths, _) in inspect_runs.items():
        for path in paths.values():
            (mixed / f"inspect-{version}").mkdir(exist_ok=True)
            shutil.copy(path, mixed / f"inspect-{version}" / path.name)
    for kind, path in greenlight_logs.items():
        (mixed / f"greenlight-{kind}").mkdir()
        shutil.copy(path, mixed / f"greenlight-{kind}" / path.name)
    trace_episodes, fixed_calls = _trace_files(mixed, tmp_path_factory)
    # Jaeger's JSON among them: Jaeger UI's GenAI download (one agent trace, one trace with no message) and the query
    # service's answer for a service's own spans (tests/ingest/traces/data: they yield rows, so they are no samples)
    jaeger_files = [JAEGER_DATA / "jaeger-ui" / "genai-flamegraph-traces.json",
                    JAEGER_DATA / "jaeger" / "otlp2jaeger-out.json"]
    (mixed / "jaeger").mkdir()
    jaeger_records = []
    for path in jaeger_files:
        shutil.copy(path, mixed / "jaeger" / path.name)
        jaeger_records += read_records(otel, path)
    assert sorted(r.rule for r in jaeger_records if isinstance(r, Rejected)) == ["empty_episode", "no_agent_spans"]
    jaeger_episodes = [r for r in jaeger_records if isinstance(r, Episode)]
    # the real sessions a person laid in ../shared/samples: each must read in the mix as its reader reads it alone
    from_shared = {"claude_code": 0, "codex": 0}
    shared_rejected = []
    for fmt, module in (("claude_code", claude_code), ("codex", codex)):
        folder = SHARED / fmt.replace("_", "-")
        for path in sorted(folder.rglob("*.jsonl")) if folder.is_dir() else ():
            target = mixed / "shared" / path.relative_to(SHARED)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(path, target)
            records = read_records(module, path)
            from_shared[fmt] += sum(isinstance(r, Episode) for r in records)
            shared_rejected += [r.rule for r in records if isinstance(r, Rejected)]

    result = run("ingest-all", [mixed])
    assert result.status == "success", result.messages

    ignored = {r["path"]: r["reason"] for r in query("SELECT path, reason FROM ignored_inputs")}
    # the Harbor trial's Claude Code session is read as the trajectory Harbor made from it, and listed so
    made_from = [p for p, why in ignored.items() if "Harbor made agent/trajectory.json from it" in why]
    assert [p.rsplit("/mixed/", 1)[1] for p in made_from] == [
        "samples/atif/harbor-claude-code/fix-calc-add__Vq7mR2p/agent/sessions/projects/-app/"
        "5c2e8f0a-91d3-4b6e-8a7f-3d1c0b9e2a44.jsonl"]
    # beside the samples: their provenance, a license text, and the kagent runs' truth files (their recorders' reading
    # of the spans, the oracle its test compares with): no trace among them
    not_traces = ("PROVENANCE.md", "/LICENSE", "/agentevals-kagent/adk_go_1turn.truth.json",
                  "/agentevals-kagent/adk_go_2turn.truth.json")
    traces = [p for p in ignored if not p.endswith(not_traces) and p not in made_from]
    assert traces == [], f"trace files no format read: {traces}"

    formats = {r["source_format"]: r["n"] for r in query(
        "SELECT source_format, count(*) AS n FROM episodes GROUP BY 1")}
    assert formats["inspect_log"] == 12  # 2 versions x (.eval + .json) x 3 samples
    assert formats["mcp_audit_log"] == 1
    # the excerpt's main line and its subagent; the Harbor trial's session belongs to its trial (read by atif)
    assert formats["claude_code"] == 2 + from_shared["claude_code"]
    assert formats["codex"] == 1 + from_shared["codex"]
    # the bundled real OpenTelemetry dumps are in the mix too: each read there as its reader reads it alone
    alone = [r for path in sorted((SAMPLES / "traces" / "otel").rglob("*.json*")) for r in read_records(otel, path)
             if isinstance(r, Episode)]
    # any-agent's four framework dumps, agent-factory's three exports, observability-stack's two span documents,
    # agentevals' Tempo export and its kagent OTLP/JSON runs, one trace each, but the two-turn kagent run (two)
    assert trace_episodes == {"openai_agents": 8, "otel": 12, "langsmith": 1} and len(alone) == 13
    alone += jaeger_episodes
    assert len(jaeger_episodes) == 1
    # the bundled real LangSmith trace (chat-langchain: one episode, its 9 retrievals the tool calls)
    runs_alone = [r for path in sorted((SAMPLES / "traces" / "langsmith").rglob("*.jsonl"))
                  for r in read_records(langsmith, path) if isinstance(r, Episode)]
    assert len(runs_alone) == 1
    assert {f: formats[f] for f in trace_episodes} == {**trace_episodes, "otel": 12 + len(alone),
                                                       "langsmith": 1 + len(runs_alone)}
    calls = {r["source_format"]: r["n"] for r in query(
        "SELECT e.source_format, count(*) AS n FROM steps s JOIN episodes e USING (episode_id) "
        "WHERE (s.action).kind = 'tool_call' AND e.source_format IN ('otel', 'openai_agents', 'langsmith') GROUP BY 1")}

    def tool_calls(episodes):
        return sum(step.action.kind == "tool_call" for episode in episodes for step in episode.steps)
    assert tool_calls(runs_alone) == 9
    assert calls == {**fixed_calls, "otel": fixed_calls["otel"] + tool_calls(alone),
                     "langsmith": fixed_calls["langsmith"] + tool_calls(runs_alone)}
    # quarantined: greenlight's metadata-only log (the row names the flag that records payloads), and what the
    # shared sessions' readers reject alone (an opening cut before the answer: its row keeps the task)
    rows = sorted(r["rule"] for r in query("SELECT rule FROM quarantine"))
    assert rows == sorted(["no_payloads", *shared_rejected, "empty_episode", "no_agent_spans"])  # and Jaeger's rows
    assert result.stage_summaries and " 0 errors " in result.stage_summaries[0]
