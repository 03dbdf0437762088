"""Client defaults from what the server says: a llama.cpp server's slots and context, vLLM's max_model_len,
llama-cpp-python's one request at a time (the real server `make serve-model` starts). `eval` and `label`
send what was chosen, say so, and never change a flag the user gave."""

import pytest

from pipelines import cli
from pipelines.infra.server_limits import LOCAL_MAX_TOKENS, ServerLimits, chosen, probe
from tests.pipelines.judge_servers import ScriptedJudgeAndWorld
from tests.pipelines.label_servers import ScriptedServer, chat_completion, free_port
from tests.pipelines.test_eval import _verdict, _world

LLAMA_CPP_PROPS = {"/props": {"default_generation_settings": {"n_ctx": 2048}, "total_slots": 1}}
VLLM_MODELS = {"/v1/models": {"object": "list", "data": [{"id": "wm", "object": "model", "max_model_len": 40000}]}}


def _server(gets: dict) -> ScriptedServer:
    return ScriptedServer([(200, chat_completion("<predicted_observation>x</predicted_observation>"), 0)], gets)


@pytest.mark.parametrize("gets, expected", [
    (LLAMA_CPP_PROPS, ServerLimits("llama.cpp", 2048, 1)),
    (VLLM_MODELS, ServerLimits("vLLM", 40000)),
    ({"/v1/models": {"data": [{"id": "smollm2", "object": "model", "owned_by": "me", "permissions": []}]}},
     ServerLimits("llama-cpp-python", None, 1)),
    ({"/v1/models": {"data": [{"id": "gpt", "object": "model", "owned_by": "openai"}]}}, ServerLimits()),
    ({}, ServerLimits()),
])
def test_probe_reads_what_each_server_reports(gets, expected):
    server = _server(gets)
    try:
        assert probe(server.url) == expected
    finally:
        server.close()
    assert probe(f"http://127.0.0.1:{free_port()}/v1") == ServerLimits()  # nobody there: the defaults


def test_chosen_keeps_what_was_given_and_bounds_the_rest():
    llama = ServerLimits("llama.cpp", 2048, 1)
    assert chosen(llama, None, None, 32768, 16)[:2] == (1024, 1)
    assert chosen(llama, 300, 4, 32768, 16) == (300, 4, "")
    assert chosen(ServerLimits("vLLM", 262144), None, None, 32768, 16) == (32768, 16, "")
    assert chosen(ServerLimits("llama-cpp-python", None, 1), None, None, 32768, 16)[:2] == (LOCAL_MAX_TOKENS, 1)
    assert chosen(ServerLimits(), None, None, 32768, 16) == (32768, 16, "")


def test_eval_against_a_one_slot_llama_cpp_server_sends_one_at_a_time_within_its_context(all_lake_copy, capsys):
    scripted = ScriptedJudgeAndWorld(_world, _verdict, delay_s=0.05)
    scripted.server.gets.update(LLAMA_CPP_PROPS)
    try:
        assert cli.main(["eval", "all", "--lake", all_lake_copy, "--endpoint", scripted.url, "--model", "wm",
                         "--judge-endpoint", scripted.url, "--judge-model", "judge", "--split-ratios", "0,0,1",
                         "--per-domain", "1"]) == 0
    finally:
        scripted.close()
    err = capsys.readouterr().err
    assert (f"eval: world model: {scripted.url} is llama.cpp (context 2,048 tokens, 1 slot(s)): max_tokens 1,024, "
            "concurrency 1 instead of the defaults (give --max-tokens / --concurrency to choose)") in err
    assert "eval: judge: " in err and "--judge-max-tokens / --judge-concurrency" in err
    bodies = scripted.server.bodies
    assert bodies and {b["max_tokens"] for b in bodies} == {1024} and scripted.server.max_in_flight == 1


def test_label_keeps_the_flags_given_and_chooses_the_others(run, lake, capsys):
    from tests.pipelines.test_label import DROIDBOT

    run("ingest-android", [DROIDBOT])
    server = _server(LLAMA_CPP_PROPS)
    try:
        base = ["label", "android", "--lake", lake, "--endpoint", server.url, "--model", "wm", "--per-episode", "1",
                "--strategies", "home"]
        assert cli.main(base) == 0
        assert "label: " + server.url + " is llama.cpp (context 2,048 tokens, 1 slot(s))" in capsys.readouterr().err
        assert cli.main([*base, "--max-tokens", "300", "--concurrency", "3", "--seed", "1"]) == 0
        assert " is llama.cpp" not in capsys.readouterr().err  # both given: nothing to choose, nothing probed
    finally:
        server.close()
    assert [b["max_tokens"] for b in server.bodies] == [1024, 300]


def test_the_server_make_serve_model_starts_is_read_as_one_request_at_a_time(llama_server):
    assert probe(llama_server) == ServerLimits("llama-cpp-python", None, 1)


def test_label_mode_sample_chooses_for_the_rollouts_and_the_judge(all_lake_copy, capsys):
    from tests.pipelines.test_sample_targets import Scripted, _sample

    scripted = Scripted()
    scripted.server.gets.update(LLAMA_CPP_PROPS)
    try:
        assert _sample(all_lake_copy, scripted.url, "--rollouts", "1", "--per-domain", "1") == 0
    finally:
        scripted.close()
    err = capsys.readouterr().err
    assert f"label: {scripted.url} is llama.cpp (context 2,048 tokens, 1 slot(s)): max_tokens 1,024" in err
    assert f"label: judge: {scripted.url} is llama.cpp" in err
    assert scripted.world and scripted.judge  # both were asked, each within the server's context, one at a time
    assert {b["max_tokens"] for b in scripted.server.bodies} == {1024} and scripted.server.max_in_flight == 1
