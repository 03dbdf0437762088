"""The labeler end to end: a real llama.cpp server with SmolLM2-135M on loopback (the same HTTP backend vLLM
users use), plus scripted loopback servers for the failure modes (down, slow, 5xx, malformed JSON, 4xx)."""

import os
import re
import shutil

import orjson
import pytest

from pipelines import cli
from pipelines.stages.label import LabelOptions, label, template_hash
from pipelines.infra.label_client import ChatRequest, ClientConfig, Sampling, complete
from pipelines.infra.lake import Lake
from pipelines.infra.runs import open_catalog
from tests.conftest import SAMPLES
from tests.pipelines.label_servers import ScriptedServer, chat_completion, free_port
from transforms import agentworld

DROIDBOT = SAMPLES / "android" / "droidbot-run"  # one episode, 12 steps, screens on steps 0-3
MESSAGES = [{"role": "system", "content": "You are a world model."}, {"role": "user", "content": "### Turn 1"}]
OK = (200, chat_completion("<predicted_observation>Home screen</predicted_observation>"), 0.0)


@pytest.fixture
def server():
    servers = []

    def _start(script):
        servers.append(ScriptedServer(script))
        return servers[-1]

    yield _start
    for s in servers:
        s.close()


def _config(url, **kw) -> ClientConfig:
    kw.setdefault("backoff_s", 0.01)
    return ClientConfig(url, "world-model", **kw)


# client faults ------------------------------------------------------------------------------------------
def test_request_body_and_result(server):
    s = server([OK])
    (result,) = complete(_config(s.url), [ChatRequest("k1", MESSAGES)])
    assert (result.text, result.finish_reason, result.tokens_in, result.tokens_out, result.attempts, result.error) \
        == ("<predicted_observation>Home screen</predicted_observation>", "stop", 100, 20, 1, None)
    assert s.bodies == [{"model": "world-model", "messages": MESSAGES, "temperature": 0.6, "top_p": 0.95,
                         "top_k": 20, "max_tokens": 32768}]


def test_5xx_then_success(server):
    s = server([(500, b'{"error": "overloaded"}', 0), (503, b"", 0), (429, b"{}", 0), OK])
    (result,) = complete(_config(s.url, retries=4), [ChatRequest("k", MESSAGES)])
    assert result.error is None and result.attempts == 4 and s.hits == 4
    assert result.text.endswith("Home screen</predicted_observation>")


def test_5xx_gives_up_after_retries(server):
    s = server([(502, b'{"error": {"message": "bad gateway"}}', 0)])
    (result,) = complete(_config(s.url, retries=2), [ChatRequest("k", MESSAGES)])
    assert s.hits == 3 and result.attempts == 3
    assert result.error == f"HTTP 502 from {s.url}/chat/completions: bad gateway (gave up after 3 attempts)"


def test_slow_response_hits_the_timeout(server):
    s = server([(200, chat_completion("late"), 1.5)])
    (result,) = complete(_config(s.url, timeout_s=0.2, retries=1), [ChatRequest("k", MESSAGES)])
    assert result.text is None and s.hits == 2
    assert result.error.startswith("timed out after 0.2 s waiting for") and "after 2 attempts" in result.error


def test_server_down():
    url = f"http://127.0.0.1:{free_port()}/v1"
    (result,) = complete(_config(url, retries=1), [ChatRequest("k", MESSAGES)])
    assert result.error.startswith(f"cannot reach {url}/chat/completions") and result.attempts == 2


def test_malformed_json_is_retried(server):
    s = server([(200, b'{"choices": [', 0), (200, b"<html>proxy error</html>", 0), OK])
    (result,) = complete(_config(s.url), [ChatRequest("k", MESSAGES)])
    assert result.error is None and result.attempts == 3
    s2 = server([(200, b"not json", 0)])
    (bad,) = complete(_config(s2.url, retries=1), [ChatRequest("k", MESSAGES)])
    assert bad.error.startswith(f"malformed JSON from {s2.url}/chat/completions: b'not json'")


def test_4xx_is_a_clear_error_not_retried(server):
    s = server([(400, b'{"error": {"message": "The model `wm` does not exist."}}', 0)])
    (result,) = complete(_config(s.url), [ChatRequest("k", MESSAGES)])
    assert s.hits == 1 and result.attempts == 1
    assert result.error.startswith(f"HTTP 400 from {s.url}/chat/completions: The model `wm` does not exist.")


def test_bounded_concurrency_and_order(server):
    # each answer takes 1.5 s: long enough that on a loaded machine the second request is sent before the first
    # is answered (at 0.5 s the test failed now and then with other work on both cores)
    s = server([(200, chat_completion("x"), 1.5)])
    requests = [ChatRequest(f"k{i}", [{"role": "user", "content": str(i)}]) for i in range(4)]
    results = complete(_config(s.url, concurrency=2), requests)
    assert s.max_in_flight == 2 and [r.key for r in results] == [f"k{i}" for i in range(4)]
    # Sent in the order given (prefix-sharing requests are adjacent): the first two start together.
    assert [b["messages"][0]["content"] for b in s.bodies[:2]] in (["0", "1"], ["1", "0"])


# the labeler with a scripted model ----------------------------------------------------------------------
def _predict(body):
    """Answers with the action kind it was asked about (so a test can check each result lands on its
    branch); scroll requests are cut at max_tokens."""
    named = re.findall(r'"(kind|action_type)": "(\w+)"', body["messages"][-1]["content"])[-1]
    # android actions come as JSONAction where that form holds them: the schema kind it stands for
    kind = named[1] if named[0] == "kind" else {v: k for k, v in agentworld._JSON_ACTION.items()}.get(
        named[1], "key" if named[1] == "keyboard_enter" else named[1])
    if kind == "scroll":
        return 200, chat_completion("<predicted_observation>[1] List", "length"), 0.0
    return 200, chat_completion(f"<think>It is {kind}.</think>\n<predicted_observation>\n"
                                f"**Environment Observation:**\nActivity: after {kind}\n</predicted_observation>"), 0.0


def _label(lake, url, **kw):
    kw.setdefault("branch_points", "every")
    return label(Lake(lake), None, "android", LabelOptions(model="wm-1", endpoint=url, backoff_s=0.01, **kw),
                 "run-test", log=lambda line: None)


def test_branches_ledger_and_rerun(run, lake, query, server):
    base = run("ingest-android", [DROIDBOT]).version
    s = server([_predict])
    first = _label(lake, s.url)
    # DroidBot run: screens on steps 0-3; 4 + 4 + 2 + 4 counterfactuals (step 2 is BACK on a screen with
    # nothing else to tap); the 4 scrolls come back truncated.
    assert (first.requests, first.sent, first.ok, first.failed, first.errors) == (14, 14, 10, 4, 0)
    assert (first.branches_written, first.version, first.tokens_in) == (10, base + 1, 1400)
    sim = query("SELECT * FROM branches ORDER BY step_id")
    # the real line is untouched: 12 real steps, and no branch in steps
    assert len(sim) == 10 and query("SELECT list(DISTINCT origin) o, count(*) n FROM steps")[0] == {"o": ["real"], "n": 12}
    real = {r["step_id"]: r for r in query("SELECT * FROM steps")}
    for step in sim:
        parent = real[step["parent_step_id"]]
        assert step["episode_id"] == parent["episode_id"] and step["step_index"] == parent["step_index"]
        assert step["step_id"] == f"{parent['step_id']}:sim-{step['request_key'][:16]}" and step["origin"] == "simulated"
        assert step["next_observation"]["text"] == f"Activity: after {step['action']['kind']}"
        raw = orjson.loads(step["action"]["raw"])
        assert raw["replaces"] == parent["step_id"] and raw["counterfactual"] == step["strategy"]
        labeler = orjson.loads(step["labeler"])
        assert labeler["model"] == "wm-1" and labeler["template"] == template_hash("android")
        assert labeler["sampling"]["temperature"] == 0.6 and labeler["sampling"]["max_tokens"] == 32768
    assert len({s["branch_id"] for s in sim}) == 10
    ledger = query("SELECT status, finish_reason, count(*) n, list(DISTINCT strategy) strategies, "
                   "any_value(error) AS error FROM label_ledger GROUP BY ALL ORDER BY 1")
    assert [(r["status"], r["finish_reason"], r["n"]) for r in ledger] == [("failed", "length", 4), ("ok", "stop", 10)]
    assert ledger[0]["strategies"] == ["scroll"] and ledger[0]["error"].startswith("truncated")

    again = _label(lake, s.url)  # every request answered by the ledger: nothing sent, nothing new
    assert (again.cached, again.sent, again.branches_written, again.version, again.version_created) == \
        (14, 0, 0, base + 1, False) and s.hits == 14

    other_model = label(Lake(lake), None, "android", LabelOptions(model="wm-2", endpoint=s.url, branch_points="every",
                        strategies=["home"]), "run-2", log=lambda line: None)
    assert (other_model.sent, other_model.branches_written, other_model.version) == (4, 4, base + 2)
    home = query("SELECT count(DISTINCT branch_id) ids, count(*) n FROM branches WHERE action.kind = 'home'")[0]
    assert home == {"ids": 4, "n": 8}  # two models' answers to the same 4 counterfactuals share their branch ids


def test_template_change_invalidates_exactly_its_domain(run, lake, server, monkeypatch):
    run("ingest-android", [DROIDBOT])
    s = server([_predict])
    _label(lake, s.url, strategies=["back", "home"])
    before = {d: template_hash(d) for d in ("android", "terminal")}
    from transforms import agentworld
    original = agentworld._template
    monkeypatch.setattr(agentworld, "_template",
                        lambda d: original(d) + ("\nBe brief." if d == "android" else ""))
    assert template_hash("android") != before["android"] and template_hash("terminal") == before["terminal"]
    assert _label(lake, s.url, strategies=["back", "home"]).sent == 7
    monkeypatch.undo()
    # Widening the strategies sends only the requests not asked before.
    wider = _label(lake, s.url, strategies=["back", "home", "other_element"])
    assert (wider.cached, wider.sent) == (7, 3)


def test_errors_are_recorded_and_resent(run, lake, query, server):
    base = run("ingest-android", [DROIDBOT]).version
    down = f"http://127.0.0.1:{free_port()}/v1"
    failed = _label(lake, down, strategies=["home"], retries=0)
    assert (failed.errors, failed.branches_written, failed.version) == (4, 0, base)
    errors = query("SELECT status, error FROM label_ledger")
    assert {r["status"] for r in errors} == {"error"} and all("cannot reach" in r["error"] for r in errors)
    s = server([_predict])
    resumed = _label(lake, s.url, strategies=["home"])
    assert (resumed.cached, resumed.sent, resumed.ok, resumed.version) == (0, 4, 4, base + 1)


def test_cli_dry_run_prints_requests_and_sends_nothing(run, lake, server, capsys):
    run("ingest-android", [DROIDBOT])
    s = server([_predict])
    code = cli.main(["label", "android", "--lake", lake, "--endpoint", s.url, "--model", "wm", "--dry-run",
                     "--requests-out", "-", "--branch-points", "changed", "--strategies", "home", "back",
                     "--max-tokens", "4096"])
    lines = [orjson.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert code == 0 and s.hits == 0 and len(lines) == 3  # steps 1, 2 changed the screen; step 2 is BACK
    for line in lines:
        assert line["url"] == f"{s.url}/chat/completions"
        body = line["body"]
        assert (body["model"], body["max_tokens"], body["top_k"]) == ("wm", 4096, 20)
        roles = [m["role"] for m in body["messages"]]
        assert roles[0] == "system" and roles[-1] == "user"
        assert roles[1:] == ["user", "assistant"] * ((len(roles) - 2) // 2) + ["user"]
        assert body["messages"][1]["content"].startswith("### Turn 1\n**Current State:**\nActivity: ")


def test_cli_dry_run_prints_a_bounded_preview_and_writes_every_request_to_the_file_it_names(
        run, lake, server, capsys, tmp_path):
    """A dataset's requests run to megabytes: the terminal gets the first few, each message cut short, and the
    count naming the file; the file holds every request whole, as `--requests-out -` prints them."""
    run("ingest-android", [DROIDBOT])
    s, path = server([_predict]), tmp_path / "requests.jsonl"
    args = ["label", "android", "--lake", lake, "--endpoint", s.url, "--model", "wm", "--dry-run",
            "--branch-points", "every", "--strategies", "home"]
    assert cli.main([*args, "--requests-out", "-"]) == 0
    everything = capsys.readouterr().out
    assert cli.main([*args, "--requests-out", str(path)]) == 0
    captured = capsys.readouterr()
    written = path.read_text()
    assert written == everything and s.hits == 0
    n = len(written.splitlines())
    assert n > 3 and len(written) > 20_000
    assert captured.out.count("request ") == 3 and len(captured.out) < 4_000, captured.out
    assert " ... (" in captured.out and "messages of earlier turns" in captured.out
    assert f"dry run: {n} requests printed to {path} (the first 3 above), 0 already in the ledger" in captured.err


def test_cli_dry_run_counts_what_it_prints_and_shares_identical_requests(run, lake, server, capsys, tmp_path):
    copy = tmp_path / "copy" / "droidbot-run"
    shutil.copytree(DROIDBOT, copy)  # the same run twice: the same requests, printed (and sent) once
    run("ingest-android", [DROIDBOT, copy.parent])
    s = server([_predict])
    code = cli.main(["label", "android", "--lake", lake, "--endpoint", s.url, "--model", "wm", "--dry-run",
                     "--requests-out", "-", "--branch-points", "changed", "--strategies", "home", "back"])
    captured = capsys.readouterr()
    lines = captured.out.splitlines()
    assert code == 0 and s.hits == 0 and len(lines) == len({orjson.loads(x)["request_key"] for x in lines}) == 3
    assert ("dry run: 3 requests printed, 0 already in the ledger, 3 identical to a printed one"
            in captured.out + captured.err)


def test_cli_label_runs_and_records(run, lake, query, server, capsys):
    base = run("ingest-android", [DROIDBOT]).version
    s = server([_predict])
    code = cli.main(["label", "android", "--lake", lake, "--endpoint", s.url, "--model", "wm",
                     "--per-episode", "1", "--strategies", "home"])
    out = capsys.readouterr().out
    assert code == 0 and "1 requests (0 from the ledger, 1 sent): 1 ok" in out and f"android v{base + 1} (new)" in out
    (row,) = query("SELECT pipeline, status, version, steps FROM runs WHERE pipeline = 'label'")
    assert row == {"pipeline": "label", "status": "success", "version": base + 1, "steps": 1}
    down = f"http://127.0.0.1:{free_port()}/v1"
    assert cli.main(["label", "android", "--lake", lake, "--endpoint", down, "--model", "other", "--retries", "0",
                     "--per-episode", "1", "--strategies", "home"]) == 1


# the real model ------------------------------------------------------------------------------------------
def test_real_model_end_to_end(run, lake, query, llama_server):
    """SmolLM2-135M through llama.cpp's OpenAI server: the plumbing, not the quality of its predictions."""
    base = run("ingest-android", [DROIDBOT]).version

    def _run(max_tokens: int):
        options = LabelOptions(model="smollm2", endpoint=llama_server, branch_points="changed", strategies=["home"],
                               sampling=Sampling(temperature=0.0, max_tokens=max_tokens, seed=0), concurrency=2,
                               timeout=120, retries=1)
        return label(Lake(lake), None, "android", options, f"run-{max_tokens}", log=lambda line: None)

    # Steps 1 and 2 changed the screen: one HOME branch from each (the second request extends the first's
    # prefix, which llama.cpp's cache serves).
    first = _run(24)
    assert (first.requests, first.sent, first.errors) == (2, 2, 0)
    assert first.ok + first.failed == 2 and first.branches_written == first.ok
    ledger = query("SELECT * FROM label_ledger ORDER BY parent_step_id, strategy")
    assert [(r["parent_step_id"].split(":")[1], r["strategy"]) for r in ledger] == [("1", "home"), ("2", "home")]
    for row in ledger:
        assert row["tokens_in"] > 600  # the Android system prompt and the real history were sent
        assert 1 <= row["tokens_out"] <= 24 and row["latency_s"] > 0 and row["output"] is not None
        assert row["finish_reason"] in ("stop", "length")
        assert (row["status"] == "ok") == (row["observation"] is not None)
        assert row["status"] == "ok" or row["error"]
    sim = {s["parent_step_id"] + s["action"]["kind"]: s for s in query("SELECT * FROM branches")}
    for row in ledger:
        if row["status"] == "ok":
            step = sim[row["parent_step_id"] + row["strategy"]]
            assert step["next_observation"]["text"] == row["observation"] and step["branch_id"] == row["branch_id"]
            assert step["request_key"] == row["request_key"]
            assert orjson.loads(step["labeler"])["model"] == "smollm2"
    assert query("SELECT max(version) v FROM versions")[0]["v"] == (base + 1 if first.ok else base)

    again = _run(24)  # the ledger answers: nothing is sent
    assert (again.cached, again.sent, again.branches_written) == (2, 0, 0)

    cut = _run(1)  # a different sampling is a different request; one token cannot be a state
    assert (cut.sent, cut.failed, cut.ok, cut.branches_written) == (2, 2, 0, 0)
    cut_rows = query("SELECT finish_reason, status, error FROM label_ledger WHERE sampling->>'max_tokens' = '1'")
    assert len(cut_rows) == 2 and {(r["finish_reason"], r["status"]) for r in cut_rows} == {("length", "failed")}


def _labeled_definition(inputs, url: str, more: str = "") -> str:
    """A definition that ingests `inputs` (DroidBot runs) and labels them at `url`, then `more` TOML lines."""
    return f"""
dataset = "android"
formats = ["droidbot"]
inputs = ["{inputs}"]
stages = ["ingest", "label"]
[stage_options.label]
endpoint = "{url}"
model = "wm"
branch_points = "changed"
strategies = ["home"]
""" + more


def test_label_stage_in_a_pipeline_definition(lake, query, server):
    from pipelines.infra import definition
    from pipelines.infra.runner import run_ingest

    s = server([_predict])
    defn = definition.parse("android-labeled", _labeled_definition("samples/android/droidbot-run", s.url,
                                                                   "max_tokens = 2048\n"))
    result = run_ingest(defn, lake, progress=False, log=lambda line: None)
    assert result.status == "success" and result.version == 2
    assert result.stage_summaries[0].startswith("label: 2 requests (0 from the ledger, 2 sent): 2 ok")
    assert s.bodies[0]["max_tokens"] == 2048 and s.bodies[0]["temperature"] == 0.6
    stats = query("SELECT stage, records_in, records_out FROM stage_stats ORDER BY stage")
    assert {"stage": "label", "records_in": 2, "records_out": 2} in stats
    assert query("SELECT count(*) n FROM branches WHERE origin = 'simulated'")[0]["n"] == 2


def test_state_with_tags_left_is_unusable(run, lake, query, server):
    """Tags rebuilt by removing the reasoning (`<thi<think>..</think>nk>`) leave `<think>` in the parsed state:
    it is counted unusable and no simulated step holds it."""
    run("ingest-android", [DROIDBOT])
    s = server([lambda body: (200, chat_completion("<thi<think>x</think>nk> Activity: after"), 0.0)])
    result = _label(lake, s.url, strategies=["home"])
    assert result.requests > 0 and (result.ok, result.failed, result.branches_written) == (0, result.requests, 0)
    assert f"{result.requests} unusable" in result.summary()
    assert all("reasoning or tags left" in m for m in result.messages)
    assert query("SELECT count(*) n FROM branches")[0]["n"] == 0


def test_dry_run_history_shows_every_earlier_recorded_action_in_order(run, lake, query, server, capsys):
    # an episode's action blocks are rendered once for all its requests: request t must still show actions
    # 0..t-1, each in its own turn, and only those
    from transforms.agentworld import action_block

    run("ingest-android", [DROIDBOT])
    s = server([_predict])
    assert cli.main(["label", "android", "--lake", lake, "--endpoint", s.url, "--model", "wm", "--dry-run",
                     "--requests-out", "-", "--branch-points", "every", "--strategies", "home"]) == 0
    actions = [r["action"] for r in query("SELECT action FROM steps ORDER BY step_index")]
    bodies = [orjson.loads(line)["body"] for line in capsys.readouterr().out.splitlines()]
    histories = [[m["content"] for m in b["messages"] if m["role"] == "user"][:-1] for b in bodies]  # last: the branch's
    assert len(histories) >= 3 and max(map(len, histories)) >= 2
    for users in histories:
        for turn, content in enumerate(users):
            assert action_block(actions[turn], "android") in content, (turn, content[:200])


def test_a_slow_server_gives_progress_lines_while_it_answers(run, lake, server, monkeypatch, capsys):
    """A server that takes a while (a CPU model): label says every few seconds how many answers came back, how
    many made no state, the rate and the ETA, and before the first answer how long and on what it waits."""
    import pipelines.infra.request_progress as request_progress

    monkeypatch.setattr(request_progress, "EVERY_S", 0.2)
    run("ingest-android", [DROIDBOT])
    s = server([(OK[0], OK[1], 0.5)])
    assert cli.main(["label", "android", "--lake", lake, "--endpoint", s.url, "--model", "wm", "--concurrency", "1",
                     "--branch-points", "changed", "--strategies", "home", "back"]) == 0
    lines = [line for line in capsys.readouterr().err.splitlines() if line.startswith("  label: ")]
    assert any(line.startswith("  label: 0/3 answered after ") and
               line.endswith("waiting on the first (max_tokens 32,768, 1 at a time)") for line in lines), lines
    assert any(line.startswith(("  label: 1/3 answered, 0 failed, ", "  label: 2/3 answered, 0 failed, "))
               and "/s, ETA " in line for line in lines), lines
    assert lines[-1].startswith("  label: 3/3 answered, 0 failed, ") and lines[-1].endswith("ETA 0 s"), lines


# on Ray ---------------------------------------------------------------------------------------------------
_STAND_IN_VLLM = {
    "__init__.py": "from tests.pipelines.test_label_vllm import StandInLLM as LLM, "
                   "StandInSamplingParams as SamplingParams\n",
    "sampling_params.py": "from tests.pipelines.test_label_vllm import StandInSamplingParams as SamplingParams, "
                          "StandInRequestOutputKind as RequestOutputKind\n",
}


def test_on_ray_each_group_is_a_task_asking_what_the_backend_needs_and_labels_as_in_process(
        run, lake, query, server, tmp_path, monkeypatch):
    """Label's groups as Ray tasks (a local Ray with one declared GPU): the HTTP client's tasks ask for the declared
    CPU and get no GPU; the offline engine's (the stand-in vLLM of `test_label_vllm`, importable by the workers)
    ask for its tensor-parallel GPUs and get them; a definition's `[stage_resources.label]` is what they ask
    for. The HTTP run's answers reach the ledger through the driver and it commits what the same run
    in-process commits."""
    import ray

    from pipelines.infra import definition
    from pipelines.infra.runner import run_ingest

    copy = tmp_path / "copy" / "droidbot-run"
    shutil.copytree(DROIDBOT, copy)  # the same run twice, in two part groups: the same requests in each
    run("ingest-android", [DROIDBOT, copy.parent], task_mb=0.01)
    copies = {name: str(tmp_path / name) for name in ("in-process", "http", "vllm")}
    for copy in copies.values():
        shutil.copytree(lake, copy)
    for name, text in _STAND_IN_VLLM.items():
        (tmp_path / "stand-in" / "vllm").mkdir(parents=True, exist_ok=True)
        (tmp_path / "stand-in" / "vllm" / name).write_text(text)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(tmp_path / "stand-in"), os.getcwd(),
                                                      os.environ.get("PYTHONPATH", "")]))
    s = server([_predict])
    options = LabelOptions(model="wm", endpoint=s.url, branch_points="changed", strategies=["home", "back"])
    offline = LabelOptions(model="wm", backend="vllm", branch_points="changed", strategies=["home"],
                           engine_args={"tensor_parallel_size": 1})
    in_process = label(Lake(copies["in-process"]), None, "android", options, "run-ray", log=lambda line: None,
                       executor="local")
    lines: dict[str, list[str]] = {"http": [], "vllm": []}
    ray.init(num_cpus=1, num_gpus=1, include_dashboard=False, logging_level="ERROR", log_to_driver=False,
             configure_logging=False, _node_ip_address="127.0.0.1")
    try:
        on_ray = label(Lake(copies["http"]), None, "android", options, "run-ray", log=lines["http"].append,
                       executor="ray")
        engine = label(Lake(copies["vllm"]), None, "android", offline, "run-vllm", log=lines["vllm"].append,
                       executor="ray")
        lines["definition"] = []
        defined = run_ingest(definition.parse("android-labeled", _labeled_definition(
            DROIDBOT, s.url, "[stage_resources.label]\ncpus = 0.5\n")), str(tmp_path / "defined"), progress=False, log=lines["definition"].append, executor="ray")
    finally:
        ray.shutdown()
    placed = re.compile(r"  label android: (\d+) part groups on Ray, each asking (.*), given (.*); "
                        r"nodes \S+ \((\d+)\)$")
    found = {name: [m.groups() for m in map(placed.match, got) if m] for name, got in lines.items()}
    assert found["http"] == [("2", "CPU 1", "CPU 1", "2")], lines["http"]
    assert found["vllm"] == [("2", "CPU 1, GPU 1", "CPU 1, GPU 1", "2")], lines["vllm"]
    assert found["definition"] == [("1", "CPU 0.5", "CPU 0.5", "1")], lines["definition"]  # its stage_resources
    assert defined.status == "success" and defined.stage_summaries[0].startswith("label: 2 requests (0 from the ")
    # the tasks' progress lines reach the driver's log with their results
    assert lines["http"][0].startswith("label: 3 requests, 0 from the ledger, sending 3 to ")
    assert (engine.requests, engine.errors) == (4, 0)
    fields = lambda r: (r.requests, r.ok, r.failed, r.branches_written, r.version)  # noqa: E731
    assert fields(on_ray) == fields(in_process) == (6, 6, 0, 6, 2)
    # in-process the second group finds the first one's answers in the ledger; a Ray task has the plan's copy
    assert (in_process.sent, in_process.cached, on_ray.sent, on_ray.cached) == (3, 3, 6, 0)
    committed = []
    for copy in (copies["in-process"], copies["http"]):
        with open_catalog(Lake(copy), read_only=True) as cat:
            ledger = cat.sql("SELECT request_key, status, observation FROM label_ledger ORDER BY 1").fetchall()
            committed.append((cat.current_version("android").parts, ledger))
    assert committed[0] == committed[1] and len(committed[0][1]) == 3
