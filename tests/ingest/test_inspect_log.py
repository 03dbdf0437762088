"""Inspect AI eval logs, written at test time by Inspect itself and read back by its own parser as the oracle.

`make setup-test` installs Inspect at two releases whose `.eval` logs differ (0.3.150 writes deflate members,
0.3.285 zstd ones) in `.venv/producers/inspect-ai-<version>/`, and fills the tiktoken cache Inspect's token
counting needs offline. Each release runs `tests/ingest/inspect_producer.py` once (a 3-sample task, the
`mockllm` model scripted with tool calls), writing a `.eval` and a `.json` log; without the venvs these tests
skip, and under CI they fail. Cost: about 15 s per release.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ingest import inspect_log
from ingest.record import Episode, Rejected
from tests.ingest.golden import read_records
from tests.ingest.producers import INSPECT_VERSIONS, inspect_runs  # noqa: F401 (a fixture)


@pytest.fixture(params=INSPECT_VERSIONS)
def logs(request, inspect_runs):  # noqa: F811
    """(version, {".eval": path, ".json": path}, {path: Inspect's own reading})"""
    paths, oracle = inspect_runs[request.param]
    return request.param, paths, oracle


def _episodes(path: Path) -> list[Episode]:
    records = read_records(inspect_log, path)
    assert [r for r in records if isinstance(r, Rejected)] == []
    return records


def test_both_logs_are_detected_from_content(logs):
    _, paths, _ = logs
    files = [str(p) for p in paths.values()]
    heads = {str(p): p.read_bytes()[:4096] for p in paths.values()}
    assert inspect_log.units(files, heads.__getitem__) == files


def test_what_we_ingest_is_what_inspect_reads(logs):
    """Per sample: the task, each tool call (name, arguments) in order, the result paired with it (text or
    error), the final answer, the score as reward, as `inspect_ai.log.read_eval_log` returns them."""
    _, paths, oracle = logs
    for path in paths.values():
        theirs = oracle[path]
        ours = _episodes(path)
        assert [e.key for e in ours] == [f"{s['id']}:{s['epoch']}" for s in theirs["samples"]]
        for ep, sample in zip(ours, theirs["samples"]):
            assert ep.task == sample["input"] and ep.agent == theirs["model"]
            assert ep.env["inspect"]["task"] == theirs["task"] and ep.env["inspect"]["target"] == sample["target"]
            expected_actions, expected_results = [], {}
            for m in sample["messages"]:
                if m["role"] == "assistant":
                    expected_actions += [(c["function"], c["arguments"]) for c in m["tool_calls"]] or [("", m["text"])]
                elif m["role"] == "tool":
                    expected_results[m["tool_call_id"]] = (m["text"] or m["error"], bool(m["error"]))
            got = [(s.action.tool_name or "", json.loads(s.action.arguments) if s.action.arguments else s.action.text)
                   for s in ep.steps]
            assert got == expected_actions
            calls = [c for m in sample["messages"] if m["role"] == "assistant" for c in m["tool_calls"]]
            for i, call in enumerate(calls):  # the observation after call i is its result
                obs = ep.steps[i + 1].observation
                text, is_error = expected_results[call["id"]]
                assert (obs.text, bool(obs.is_error)) == (text, is_error)
            [score] = sample["scores"].values()
            assert ep.reward == {"C": 1.0, "I": 0.0}[score["value"]]
            assert ep.outcome == ("success" if score["value"] == "C" else "failure")


def test_the_eval_and_json_logs_of_one_run_give_the_same_episodes(logs):
    """Same task, model and scripted outputs: the two log formats must ingest to the same steps (times and ids
    differ between the two runs, so they are left out)."""
    _, paths, _ = logs

    def shape(path):
        return [(e.key, e.task, e.outcome, e.reward, e.terminated, e.env.get("system_prompt"),
                 [(s.action.kind, s.action.tool_name, s.action.arguments, s.action.text, s.observation.kind,
                   s.observation.text, s.observation.is_error, s.reasoning) for s in e.steps])
                for e in _episodes(path)]

    assert shape(paths[".eval"]) == shape(paths[".json"])


def test_golden_sample_two(logs):
    """Read by hand against the producer's script: sample add-2 calls `lookup` (its ToolError comes back as an
    error result), then `add`, then answers 22 against the target 42 (match scorer: I)."""
    version, paths, _ = logs
    ep = next(e for e in _episodes(paths[".eval"]) if e.key == "add-2:1")
    steps = [(s.action.kind, s.action.tool_name, s.action.arguments, s.action.text) for s in ep.steps]
    assert steps == [("tool_call", "lookup", '{"key":"hint"}', None), ("tool_call", "add", '{"x":20,"y":2}', None),
                     ("message", None, None, "22")]
    obs = [(s.observation.kind, s.observation.text, s.observation.is_error) for s in ep.steps]
    assert obs == [("text", "What is 20 + 22? Look the hint up first.", None),
                   ("tool_result", "no value for 'hint'", True), ("tool_result", "22", None)]
    assert [s.reasoning for s in ep.steps] == ["tool call for tool lookup", "tool call for tool add", None]
    assert (ep.outcome, ep.reward, ep.terminated, ep.domain) == ("failure", 0.0, True, "swe")
    assert ep.env["system_prompt"] == "You are a careful calculator."
    assert ep.env["inspect"]["scores"]["match"]["answer"] == "22"
    # step times come from the model events: in order, within the sample's span
    times = [s.timestamp for s in ep.steps]
    assert all(times) and times == sorted(times)


def test_ingest_swe_reads_both_logs_and_validates_them(logs, run, query):
    _, paths, _ = logs
    folder = next(iter(paths.values())).parent
    result = run("ingest-swe", [folder])
    assert result.status == "success", result.messages
    assert (result.episodes, result.steps, result.quarantined) == (6, 12, 0)
    rows = query("SELECT source_format, outcome, count(*) AS n FROM episodes GROUP BY ALL ORDER BY ALL")
    assert rows == [{"source_format": "inspect_log", "outcome": "failure", "n": 2},
                    {"source_format": "inspect_log", "outcome": "success", "n": 4}]


def _log(samples, **extra) -> dict:
    return {"version": 2, "status": "success", "eval": {"task": "t", "task_id": "tid", "model": "openai/gpt-4o"},
            "samples": samples, **extra}


def test_pooled_attachments_images_and_unknown_parts(tmp_path):
    """Hand-made edge cases in the shapes of `inspect_ai.model._chat_message`: text pooled as `attachment://`
    (older logs), an image part as a data URI (to the blob store), an unknown part kept raw, a sample error."""
    import base64

    png = base64.b64encode(b"\x89PNG\r\n\x1a\nfake").decode()
    sample = {"id": 7, "epoch": 2, "input": "attachment://aa", "target": "x", "error": {"message": "timeout"},
              "attachments": {"aa": "Describe the picture.", "bb": "a long tool result"},
              "scores": {"model_graded": {"value": {"accuracy": 1}}},
              "messages": [
                  {"role": "user", "content": [{"type": "text", "text": "attachment://aa"},
                                               {"type": "image", "image": f"data:image/png;base64,{png}"}]},
                  {"role": "assistant", "content": [{"type": "reasoning", "reasoning": "look"},
                                                    {"type": "text", "text": "Calling."}],
                   "tool_calls": [{"id": "c1", "function": "bash", "arguments": {"cmd": "attachment://bb"}}]},
                  {"role": "tool", "tool_call_id": "c1", "function": "bash", "content": "attachment://bb"},
                  {"role": "assistant", "content": [{"type": "hologram", "data": 1}]}]}
    path = tmp_path / "log.json"
    path.write_text(json.dumps(_log([sample])))
    blobs = {}
    [ep] = read_records(inspect_log, path, blobs)
    assert ep.key == "7:2" and ep.task == "Describe the picture."
    [(ref, (media, data))] = blobs.items()
    assert media == "image/png" and data.startswith(b"\x89PNG")
    assert ep.steps[0].observation.text == f"Describe the picture.\n[image {ref}]"
    assert ep.steps[0].action.arguments == '{"cmd":"a long tool result"}'
    assert ep.steps[0].reasoning == "look\n\nCalling."
    assert ep.steps[1].observation.text == "a long tool result"
    assert ep.steps[1].action.text == "[hologram]"
    assert (ep.outcome, ep.reward, ep.terminated) == ("unknown", None, False)  # a dict score; an errored sample


def test_a_log_without_samples_and_a_broken_sample(tmp_path):
    empty = tmp_path / "empty.json"
    empty.write_text(json.dumps(_log([])))
    [row] = read_records(inspect_log, empty)
    assert row.rule == "no_samples" and "'t'" in row.reason
    broken = tmp_path / "broken.json"
    good = {"id": 1, "epoch": 1, "input": "hi", "messages": [{"role": "user", "content": "hi"},
                                                            {"role": "assistant", "content": "hello"}],
            "scores": {"s": {"value": 0.25}}}
    broken.write_text(json.dumps(_log([{"id": 0, "messages": "nope"}, good])))
    records = read_records(inspect_log, broken)
    assert isinstance(records[0], Rejected) and "samples[0]" in records[0].reason
    assert (records[1].reward, records[1].outcome) == (0.25, "failure")
