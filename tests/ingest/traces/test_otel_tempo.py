"""Grafana Tempo's trace export (`{"batches": [...]}` for OTLP's `resourceSpans`): a real kagent trace
(samples/traces/otel/agentevals-tempo, PROVENANCE.md) read as a person counts it, and the alias's edges."""

import json

from ingest.record import Episode, Rejected
from ingest.traces import otel
from tests.conftest import SAMPLES
from tests.ingest.golden import read_records
from tests.ingest import golden

TEMPO = SAMPLES / "traces" / "otel" / "agentevals-tempo" / "tempo_export_with_batches.json"


def test_a_real_tempo_export_is_read_as_its_agent_run():
    """Among the controller's HTTP and A2A spans, the run: the prompt, one `helm_list_releases` call with its
    output, then the answer naming the two releases (2 model calls in the raw file)."""
    assert otel.units([str(TEMPO)], golden.head) == [str(TEMPO)]
    records = read_records(otel, TEMPO)
    assert [r for r in records if isinstance(r, Rejected)] == []
    [ep] = [r for r in records if isinstance(r, Episode)]
    assert ep.key == "dd547580319ab0312cee07f1def50dad" and ep.task.strip() == "list all helm releases"
    assert [(s.action.kind, s.action.tool_name) for s in ep.steps] == [("tool_call", "helm_list_releases"),
                                                                       ("message", None)]
    assert ep.steps[1].observation.text.startswith("NAME") and "kagent" in ep.steps[1].observation.text
    assert ep.steps[1].action.text.startswith("There are two Helm releases") and ep.terminated
    assert ep.agent == "gpt-4.1-mini-2025-04-14"


def test_batches_are_read_only_when_they_hold_resources_and_their_spans(tmp_path):
    span = {"traceId": "0af7651916cd43dd8448eb211c80319c", "spanId": "b7ad6b7169203331", "name": "execute_tool ls",
            "startTimeUnixNano": "1700000000000000000", "endTimeUnixNano": "1700000001000000000",
            "attributes": [{"key": "gen_ai.operation.name", "value": {"stringValue": "execute_tool"}},
                           {"key": "gen_ai.tool.name", "value": {"stringValue": "ls"}}]}
    tempo = tmp_path / "trace.json"
    tempo.write_text(json.dumps({"batches": [{"resource": {"attributes": []}, "scopeSpans": [{"spans": [span]}]}]}))
    assert otel.units([str(tempo)], golden.head) == [str(tempo)]
    [ep] = [r for r in read_records(otel, tempo) if isinstance(r, Episode)]
    assert [s.action.tool_name for s in ep.steps] == ["ls"]
    other = tmp_path / "jobs.json"
    other.write_text(json.dumps({"batches": [{"id": 1, "size": 20}]}))
    assert otel.units([str(other)], golden.head) == []
