"""The Inspect AI log reader called directly (`inspect_log.read`) on hand-made `.json` logs and `.eval` zips in
the shapes `inspect_ai/log/_recorders` writes (`EvalLog`, `EvalSample`, `ChatMessage*`, `ModelEvent`): each
step's time from its model event, the action and raw call, the reward and outcome every score value gives, the
terminal flag, and the rows for logs without samples and broken samples."""

import base64
import datetime as dt
import json
import zipfile

import pytest
from fsspec.implementations.local import LocalFileSystem

from ingest import inspect_log
from ingest.record import Episode, Rejected
from ingest.source import Source


def _read(path, blobs=None) -> list:
    def put_blob(data, media, uri):
        ref = f"sha256:{len(blobs or {})}"
        if blobs is not None:
            blobs[ref] = (media, data, uri)
        return ref

    return list(inspect_log.read(Source(fs=LocalFileSystem(), path=str(path), uri=f"in/{path.name}",
                                        put_blob=put_blob)))


def _log(samples, **extra) -> dict:
    return {"version": 2, "status": "success",
            "eval": {"task": "t", "task_id": "tid", "eval_id": "e", "run_id": "r", "model": "openai/gpt-4o",
                     "created": "2025-01-01T00:00:00+00:00"}, "samples": samples, **extra}


def _write(tmp_path, log, name="log.json"):
    path = tmp_path / name
    path.write_text(json.dumps(log))
    return path


def _split(records):
    return [r for r in records if isinstance(r, Episode)], [r for r in records if isinstance(r, Rejected)]


def _sample(messages, **more):
    return {"id": 1, "epoch": 1, "input": "task", "messages": messages, **more}


def _model_event(msg_id, completed=None, timestamp=None):
    event = {"event": "model", "output": {"choices": [{"message": {"id": msg_id}}]}}
    if completed:
        event["completed"] = completed
    if timestamp:
        event["timestamp"] = timestamp
    return event


def test_steps_times_from_their_model_events_actions_and_results(tmp_path):
    call = {"id": "c1", "function": "bash", "arguments": {"cmd": "ls"}, "type": "function"}
    messages = [{"role": "system", "content": "be good"},
                {"role": "user", "content": "task", "source": "input"},
                {"id": "m1", "role": "assistant", "content": "calling", "model": "gpt-4o-2024", "tool_calls": [
                    call, "junk"]},
                {"role": "tool", "tool_call_id": "c1", "function": "bash", "content": "a b",
                 "error": {"type": "parsing", "message": "ignored: content wins"}},
                {"id": "m2", "role": "assistant", "content": "second", "stop_reason": "stop"},
                {"id": "m3", "role": "assistant", "content": "third"},
                {"id": 5, "role": "assistant", "content": "fourth"}]
    events = [_model_event("m1", completed="2025-07-05T13:59:43.058756+00:00", timestamp="2025-07-05T13:00:00Z"),
              _model_event("m1", completed="2025-07-05T14:00:00Z"),  # the first call that produced it counts
              _model_event("m2", timestamp="2025-07-05T13:59:50Z"),
              {"event": "model", "output": {"choices": ["x", {"message": "y"}, {"message": {"id": 7}}]}},
              {"event": "model", "output": "none"}, {"event": "tool", "output": {"choices": [{"message": {
                  "id": "m3"}}]}}, "junk"]
    (ep,), rows = _split(_read(_write(tmp_path, _log([_sample(messages, events=events)]))))
    assert rows == []
    assert [s.timestamp for s in ep.steps] == [
        dt.datetime(2025, 7, 5, 13, 59, 43, 58756, tzinfo=dt.timezone.utc),
        dt.datetime(2025, 7, 5, 13, 59, 50, tzinfo=dt.timezone.utc), None, None]
    assert (ep.steps[0].action.kind, ep.steps[0].action.tool_name, json.loads(ep.steps[0].action.arguments)) == (
        "tool_call", "bash", {"cmd": "ls"})
    assert json.loads(ep.steps[0].action.raw) == call
    assert ep.steps[0].reasoning == "calling"
    assert (ep.steps[1].observation.text, ep.steps[1].observation.is_error) == ("a b", True)
    assert [s.action.text for s in ep.steps[1:]] == ["second", "third", "fourth"]
    assert ep.env["system_prompt"] == "be good" and ep.task == "task"
    assert ep.agent == "openai/gpt-4o"


def test_a_tool_error_without_content_is_its_message(tmp_path):
    messages = [{"role": "user", "content": "go"},
                {"role": "assistant", "content": "", "tool_calls": [{"id": "c1", "function": "python",
                                                                     "arguments": {"code": "1/0"}}]},
                {"role": "tool", "tool_call_id": "c1", "function": 5, "content": "", "error": {
                    "type": "unknown", "message": "ZeroDivisionError"}},
                {"role": "assistant", "content": "", "tool_calls": [{"id": "c2", "function": "python"}]},
                {"role": "tool", "tool_call_id": "c2", "content": None, "error": {"message": 5}},
                {"role": "assistant", "content": "done"},
                {"role": "tool", "tool_call_id": "c9", "content": "x", "error": "not an object"}]
    (ep,), _ = _split(_read(_write(tmp_path, _log([_sample(messages)]))))
    assert [(s.observation.text, s.observation.is_error) for s in ep.steps[1:]] == [("ZeroDivisionError", True),
                                                                                    (None, True)]
    assert ep.steps[0].action.tool_name == "python" and ep.final_observation.is_error is None


@pytest.mark.parametrize("value, reward, outcome", [
    ("C", 1.0, "success"), (" p ", 0.5, "failure"), ("I", 0.0, "failure"), ("N", 0.0, "failure"),
    ("yes", 1.0, "success"), ("No", 0.0, "failure"), ("TRUE", 1.0, "success"), ("false", 0.0, "failure"),
    ("correct", 1.0, "success"), ("incorrect", 0.0, "failure"), ("0.75", 0.75, "failure"), ("1", 1.0, "success"),
    ("maybe", None, "unknown"), (True, 1.0, "success"), (False, 0.0, "failure"), (2, 2.0, "success"),
    (0.999, 0.999, "failure"), ({"accuracy": 1}, None, "unknown"), ([1], None, "unknown"), (None, None, "unknown"),
])
def test_every_score_value_as_inspect_reads_it(tmp_path, value, reward, outcome):
    sample = _sample([{"role": "user", "content": "q"}, {"role": "assistant", "content": "a"}],
                     scores={"first": {"value": value, "answer": "a"}, "second": {"value": "C"}})
    (ep,), _ = _split(_read(_write(tmp_path, _log([sample]))))
    assert (ep.reward, ep.outcome, ep.terminated) == (reward, outcome, True)
    assert ep.env["inspect"]["scores"] == sample["scores"]


@pytest.mark.parametrize("scores", [None, {}, {"s": "C"}, "C"])
def test_no_usable_score_is_unknown(tmp_path, scores):
    sample = _sample([{"role": "user", "content": "q"}, {"role": "assistant", "content": "a"}], scores=scores)
    (ep,), _ = _split(_read(_write(tmp_path, _log([sample]))))
    assert (ep.reward, ep.outcome) == (None, "unknown")


@pytest.mark.parametrize("more, terminated", [({}, True), ({"error": {"message": "boom"}}, False),
                                              ({"limit": {"type": "message", "limit": 30}}, False),
                                              ({"error": None, "limit": None}, True)])
def test_a_sample_that_errored_or_hit_a_limit_is_not_terminated(tmp_path, more, terminated):
    sample = _sample([{"role": "user", "content": "q"}, {"role": "assistant", "content": "a"}], **more)
    (ep,), _ = _split(_read(_write(tmp_path, _log([sample]))))
    assert ep.terminated is terminated


def test_the_inspect_env_the_key_and_the_domain(tmp_path):
    sample = {"id": "s-9", "epoch": 3, "input": "q", "target": "t", "metadata": {"k": 1},
              "error": {"message": "e"}, "limit": {"type": "token"}, "started_at": "2025-01-01T00:00:01Z",
              "completed_at": "2025-01-01T00:00:09Z", "scores": {"s": {"value": "C"}},
              "messages": [{"role": "user", "content": "q"}, {"role": "assistant", "content": "", "tool_calls": [
                  {"id": "c", "function": "web_search", "arguments": {"query": "x"}}]}]}
    no_epoch = {"id": 4, "input": "q", "metadata": {}, "messages": sample["messages"][:1] + [
        {"role": "assistant", "content": "a"}]}
    (ep, other), _ = _split(_read(_write(tmp_path, _log([sample, no_epoch]))))
    assert ep.key == "s-9:3" and other.key == "4:1"
    assert ep.env["inspect"] == {"task": "t", "task_id": "tid", "eval_id": "e", "run_id": "r", "model": "openai/gpt-4o",
                                 "created": "2025-01-01T00:00:00+00:00", "sample_id": "s-9", "epoch": 3, "target": "t",
                                 "scores": {"s": {"value": "C"}}, "metadata": {"k": 1}, "error": {"message": "e"},
                                 "limit": {"type": "token"}, "started_at": "2025-01-01T00:00:01Z",
                                 "completed_at": "2025-01-01T00:00:09Z"}
    assert other.env["inspect"]["sample_id"] == 4 and "metadata" not in other.env["inspect"]
    assert (ep.domain, other.domain) == ("search", "swe") and ep.platform == "linux"


@pytest.mark.parametrize("value, task", [
    ("attachment://aa", "pooled task"), ("attachment://zz", "attachment://zz"),
    ([{"role": "system", "content": "s"}, "x", {"role": "user", "content": [{"type": "text", "text": "first"},
                                                                           {"type": "text", "text": "more"}]},
      {"role": "user", "content": "second"}], "first\nmore"),
    ([{"role": "assistant", "content": "no user"}], None), (5, None),
])
def test_the_task_from_the_input(tmp_path, value, task):
    sample = _sample([{"role": "user", "content": "u"}, {"role": "assistant", "content": "a"}], input=value,
                     attachments={"aa": "pooled task", "bb": 5})
    (ep,), _ = _split(_read(_write(tmp_path, _log([sample]))))
    assert ep.task == (task if task is not None else "u")  # no input text: the first user message


def test_pooled_text_in_arguments_parts_and_reasoning(tmp_path):
    png = base64.b64encode(b"\x89PNG\r\n\x1a\nfake").decode()
    messages = [{"role": "user", "content": [{"type": "text", "text": "attachment://aa"},
                                             {"type": "image", "image": f"data:image/png;base64,{png}"},
                                             {"type": "image", "image": "data:image/png;base64,%%%"},
                                             {"type": "image", "image": "https://x/cat.png"},
                                             {"type": "audio", "audio": 5}, "plain", {"type": "text", "text": 3}]},
                {"role": "assistant", "content": [{"type": "reasoning", "reasoning": "attachment://bb"},
                                                  {"type": "reasoning", "reasoning": "r2"},
                                                  {"type": "reasoning", "reasoning": 7},
                                                  {"type": "text", "text": "t"}],
                 "tool_calls": [{"id": "c", "function": "f", "arguments": {"a": ["attachment://aa", {
                     "b": "attachment://bb"}], "n": 1}}]},
                {"role": "tool", "tool_call_id": "c", "content": {"type": "text", "text": "single part"}}]
    blobs = {}
    (ep,), _ = _split(_read(_write(tmp_path, _log([_sample(messages, attachments={"aa": "A", "bb": "B"})])), blobs))
    (ref,) = blobs
    assert blobs[ref][:2] == ("image/png", b"\x89PNG\r\n\x1a\nfake") and blobs[ref][2] == "in/log.json"
    assert ep.steps[0].observation.text == (f"A\n[image {ref}]\n[image: undecodable data]\n[image https://x/cat.png]"
                                            "\n[audio]\n[unknown content]\n[text]")
    assert ep.steps[0].reasoning == "B\nr2\n\n[reasoning]\nt"  # a reasoning part that is no text: a placeholder
    assert json.loads(ep.steps[0].action.arguments) == {"a": ["A", {"b": "B"}], "n": 1}
    assert ep.final_observation.text == "single part"


def test_parts_that_are_no_text_are_kept_raw_in_the_message(tmp_path):
    part = {"type": "document", "document": "attachment://aa", "name": "d"}
    messages = [{"role": "user", "content": "go"},
                {"role": "assistant", "content": [part], "stop_reason": "stop", "model": 5, "source": "generate"}]
    (ep,), rows = _split(_read(_write(tmp_path, _log([_sample(messages, attachments={"aa": "long " * 100})]))))
    assert ep.steps[0].action.text == "[document " + ("long " * 100)[:200] + "]"
    assert json.loads(ep.steps[0].action.raw) == {"stop_reason": "stop", "content_parts": [part]}


def test_a_deep_value_is_resolved_down_to_the_bound(tmp_path):
    deep = "attachment://aa"
    for _ in range(70):
        deep = [deep]
    messages = [{"role": "user", "content": "go"},
                {"role": "assistant", "content": "", "tool_calls": [{"id": "c", "function": "f", "arguments": {
                    "v": deep, "w": [[["attachment://aa"]]]}}]}]
    (ep,), _ = _split(_read(_write(tmp_path, _log([_sample(messages, attachments={"aa": "A"})]))))
    args = json.loads(ep.steps[0].action.arguments)
    assert args["w"] == [[["A"]]]
    inner = args["v"]
    for _ in range(70):
        inner = inner[0]
    assert inner == "attachment://aa"  # past 64 levels the value is kept as written


@pytest.mark.parametrize("log, reason", [
    (_log([]), "log.json: an Inspect log of task 't' (status 'success') holds no samples: it was written with "
               "--no-log-samples, or the run stopped before its first sample finished"),
    ({"status": "started", "eval": "x", "samples": None}, "log.json: an Inspect log of task None (status 'started') "
                                                           "holds no samples: it was written with --no-log-samples, or"
                                                           " the run stopped before its first sample finished"),
    (_log({"a": 1}), None),
])
def test_a_log_without_samples_is_one_row_naming_its_task(tmp_path, log, reason):
    (row,) = _read(_write(tmp_path, log))
    assert (row.rule, row.location) == ("no_samples", "log.json")
    if reason:
        assert row.reason == reason


def test_a_log_that_is_no_object_and_broken_samples_are_rows(tmp_path):
    (row,) = _read(_write(tmp_path, [1]))
    assert (row.rule, row.location, row.reason) == ("bad_record", "log.json",
                                                    "log.json: an Inspect log is a JSON object")
    good = _sample([{"role": "user", "content": "q"}, "junk", {"role": "assistant", "content": "a"}])
    eps, rows = _split(_read(_write(tmp_path, _log(["x", {"id": 0, "messages": "nope"}, good]))))
    assert [(r.rule, r.location, r.reason, r.record_id) for r in rows] == [
        ("bad_record", "log.json: samples[0]", "log.json: samples[0]: a sample needs a `messages` list", None),
        ("bad_record", "log.json: samples[1]", "log.json: samples[1]: a sample needs a `messages` list", None),
        ("bad_record", "log.json: samples[2]", "log.json: samples[2]: messages[1] is not an object", "messages[1]")]
    assert [s.action.text for s in eps[0].steps] == ["a"]


def _eval(tmp_path, members: dict, name="run.eval"):
    path = tmp_path / name
    with zipfile.ZipFile(path, "w") as z:
        for member, value in members.items():
            z.writestr(member, value if isinstance(value, str) else json.dumps(value))
    return path


def test_an_eval_zip_reads_each_sample_member_with_the_header(tmp_path):
    header = {k: v for k, v in _log([]).items() if k != "samples"}
    s1 = _sample([{"role": "user", "content": "q"}, {"role": "assistant", "content": "a"}], id="x", epoch=2,
                 scores={"m": {"value": "C"}})
    path = _eval(tmp_path, {"_journal/start.json": {"eval": {"task": "journal"}}, "header.json": header,
                            "samples/x_epoch_2.json": s1, "samples/bad_epoch_1.json": "{nope",
                            "samples/odd.txt": "{}", "summaries.json": []})
    eps, rows = _split(_read(path))
    (ep,) = eps
    assert (ep.key, ep.reward, ep.outcome, ep.env["inspect"]["task"]) == ("x:2", 1.0, "success", "t")
    assert [(r.rule, r.location) for r in rows] == [("parse_error", "run.eval/samples/bad_epoch_1.json")]


def test_an_unfinished_eval_has_only_its_journal(tmp_path):
    path = _eval(tmp_path, {"_journal/start.json": {"status": "started", "eval": {"task": "journal"}}})
    (row,) = _read(path)
    assert (row.rule, row.location) == ("no_samples", "run.eval")
    assert row.reason.startswith("run.eval: an Inspect log of task 'journal' (status 'started') holds no samples")
    s1 = _sample([{"role": "user", "content": "q"}, {"role": "assistant", "content": "a"}])
    path = _eval(tmp_path, {"_journal/start.json": {"eval": {"task": "journal", "model": "m"}},
                            "samples/1_epoch_1.json": s1}, "two.eval")
    (ep,) = _read(path)
    assert ep.env["inspect"]["task"] == "journal" and ep.agent == "m"


def test_units_claim_eval_zips_and_json_logs():
    heads = {"/a.eval": b"PK\x03\x04....header.json", "/b.eval": b"PK\x03\x04..._journal/start.json",
             "/c.eval": b"PK\x03\x04 other", "/d.eval": b"xx header.json",
             "/e.json": b' { "version": 2, "status": "success", "eval": {', "/f.json": b'{"version": 2, "eval": {',
             "/g.txt": b'{"version": 2, "status": "success", "eval": {'}
    assert inspect_log.units(sorted(heads), heads.__getitem__) == ["/a.eval", "/b.eval", "/e.json"]


def _one(tmp_path, messages, **more):
    return _split(_read(_write(tmp_path, _log([_sample(messages, **more)]))))


def test_results_pair_with_their_calls_by_id_and_name_their_tool(tmp_path):
    messages = [{"role": "user", "content": "go"},
                {"role": "assistant", "content": "", "tool_calls": [
                    {"id": "a", "function": "other", "arguments": {}},
                    {"id": "b", "function": "other", "arguments": {}}]},
                {"role": "tool", "tool_call_id": "b", "function": "bash", "content": "B"},
                {"role": "tool", "tool_call_id": "a", "content": "A"},
                {"role": "tool", "tool_call_id": "a", "function": 5, "content": "A2"},
                {"role": "assistant", "content": "done"}]
    (ep,), _ = _one(tmp_path, messages)
    assert [(s.observation.text, s.observation.kind) for s in ep.steps[1:]] == [("A\n\nA2", "tool_result"),
                                                                                ("B", "terminal")]


def test_models_of_the_messages_the_raw_of_a_message_and_an_empty_result(tmp_path):
    messages = [{"role": "user", "content": "go"},
                {"id": "m1", "role": "assistant", "content": "one", "model": "a", "tool_calls": [],
                 "stop_reason": "stop", "source": "generate"},
                {"role": "assistant", "content": "", "model": 5, "tool_calls": [{"id": "c", "function": "f"}]},
                {"role": "tool", "tool_call_id": "c", "function": "f", "content": []},
                {"role": "assistant", "content": "two", "model": "b"}]
    (ep,), _ = _one(tmp_path, messages)
    assert ep.env["models"] == ["a", "b"] and ep.env["model_per_step"] == ["a", None, "b"]
    assert json.loads(ep.steps[0].action.raw) == {"stop_reason": "stop"}
    assert ep.steps[2].observation.text is None


def test_kept_messages_name_their_sample_and_place(tmp_path):
    messages = [{"role": "tool", "tool_call_id": "x", "function": "bash", "content": "early", "error": None},
                {"role": 5, "content": "odd"}, {"role": "user", "content": "go"},
                {"role": "assistant", "content": "hi"}]
    (ep,), rows = _one(tmp_path, messages)
    assert [(r.rule, r.location) for r in rows] == [("unknown_content", "log.json: samples[0]: messages[0]"),
                                                    ("unknown_content", "log.json: samples[0]: messages[1]")]
    assert "role '5' is none of" in rows[1].reason
    assert ep.env["unmapped"][0]["raw"] == {"error": None}


def test_a_sample_without_actions_is_one_row_naming_it(tmp_path):
    (row,) = _read(_write(tmp_path, _log([_sample([{"role": "user", "content": "go"}])])))
    assert (row.rule, row.location) == ("empty_episode", "log.json: samples[0]")


def test_pooled_text_in_the_input_messages_and_odd_attachments(tmp_path):
    sample = _sample([{"role": "user", "content": "attachment://aa"}, {"role": "assistant", "content": "a"}],
                     input=[{"role": "user", "content": [{"type": "text", "text": "attachment://aa"}]}],
                     attachments={"aa": "pooled"})
    (ep,), _ = _split(_read(_write(tmp_path, _log([sample]))))
    assert ep.task == "pooled" and ep.steps[0].observation.text == "pooled"
    sample["attachments"] = "junk"
    (ep,), _ = _split(_read(_write(tmp_path, _log([sample]))))
    assert ep.task == "attachment://aa"


def test_a_header_whose_eval_is_no_object(tmp_path):
    log = {**_log([_sample([{"role": "user", "content": "q"}, {"role": "assistant", "content": "a"}])]), "eval": "x"}
    (ep,), _ = _split(_read(_write(tmp_path, log)))
    assert ep.agent is None and ep.env["inspect"] == {"sample_id": 1, "epoch": 1}


def _nested(depth, leaf, container):
    value = leaf
    for _ in range(depth):
        value = [value] if container == "list" else {"k": value}
    return value


@pytest.mark.parametrize("container", ["list", "dict"])
def test_pooled_text_is_resolved_down_to_64_levels(tmp_path, container):
    messages = [{"role": "user", "content": "go"},
                {"role": "assistant", "content": "", "tool_calls": [{"id": "c", "function": "f", "arguments": {
                    "at64": _nested(64, "attachment://aa", container),
                    "at65": _nested(65, "attachment://aa", container)}}]}]
    (ep,), _ = _one(tmp_path, messages, attachments={"aa": "A"})
    args = json.loads(ep.steps[0].action.arguments)
    assert args["at64"] == _nested(64, "A", container) and args["at65"] == _nested(65, "attachment://aa", container)


def test_a_json_log_that_is_no_json_fails_naming_it(tmp_path):
    from ingest.source import SourceError

    path = tmp_path / "log.json"
    path.write_text("{nope")
    with pytest.raises(SourceError) as e:
        _read(path)
    assert e.value.reason.startswith("log.json: invalid JSON")


def test_eval_members_in_order_a_broken_sample_first_images_and_rows(tmp_path):
    png = base64.b64encode(b"\x89PNG\r\n\x1a\nfake").decode()
    good = _sample([{"role": "user", "content": [{"type": "image", "image": f"data:image/png;base64,{png}"}]},
                    {"role": "assistant", "content": "a"}])
    path = _eval(tmp_path, {"header.json": {"eval": {"task": "t"}}, "samples/0_bad.json": "{nope",
                            "samples/1_nomsg.json": {"id": 1}, "samples/2_good.json": good})
    blobs = {}
    eps, rows = _split(_read(path, blobs))
    assert [(r.rule, r.location) for r in rows] == [("parse_error", "run.eval/samples/0_bad.json"),
                                                    ("bad_record", "run.eval/samples/1_nomsg.json")]
    (ref,) = blobs
    assert eps[0].steps[0].observation.text == f"[image {ref}]"


def test_an_eval_that_is_broken_or_over_its_budget_fails_naming_it(tmp_path):
    from ingest.source import Budgets, SourceError

    path = tmp_path / "run.eval"
    path.write_bytes(b"not a zip")
    with pytest.raises(SourceError) as e:
        _read(path)
    assert e.value.reason.startswith("run.eval")
    path = _eval(tmp_path, {"header.json": "{nope"}, "h.eval")
    with pytest.raises(SourceError) as e:
        _read(path)
    assert e.value.reason.startswith("h.eval/header.json: invalid JSON")
    path = _eval(tmp_path, {"header.json": {"eval": {}}, "samples/a.json": {}, "samples/b.json": {}}, "m.eval")
    with pytest.raises(SourceError) as e:
        list(inspect_log.read(Source(fs=LocalFileSystem(), path=str(path), uri="in/m.eval", put_blob=lambda *a: "",
                                     budgets=Budgets(archive_members=2))))
    assert e.value.rule == "archive_too_large"  # 3 members, 2 allowed
