"""`pipelines eval` on the bundled samples' held-out split: the exact AgentWorldBench table against the scripted
judge stand-in (chosen verdicts), resuming after a kill, and the real llama.cpp server as both world model
and judge (SmolLM2 mostly fails the judge format: those samples must count as failed exactly as the
reference counts them)."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pipelines import cli
from pipelines.infra.lake import Lake
from pipelines.infra.runs import open_catalog
from tests.pipelines.judge_servers import request_domain, ScriptedJudgeAndWorld, all_scores, verdict_text
from transforms.agentworld import answer_in_block

REPO = Path(__file__).resolve().parents[2]
SETTINGS = ["--split-ratios", "0,0,1", "--per-domain", "2"]
SCORES = {"format": 5, "factuality": 4, "consistency": 3, "realism": 2, "quality": 1}


@pytest.fixture
def lake(all_lake_copy) -> str:
    return all_lake_copy


def _world(messages: list[dict]) -> str:
    """terminal: no generation (the reference's empty `gen`); the others answer PRED-<domain> in their form."""
    domain = request_domain(messages)
    if domain == "terminal":
        return ""
    if answer_in_block(domain):
        return f"<think>hm</think><predicted_observation>\nPRED-{domain}\n</predicted_observation>"
    return f"**Environment Observation:**\nPRED-{domain}"


def _verdict(prediction: str, truth: str, attempt: int) -> str:
    """mcp: never a readable verdict; android: 5 everywhere; the others SCORES (fenced, in the tag)."""
    if prediction == "PRED-mcp":
        return "The simulation looks fine to me." if attempt % 2 else "<final_evaluation>{broken</final_evaluation>"
    return verdict_text(all_scores(5) if prediction == "PRED-android" else SCORES)


def _eval(lake: str, url: str, *extra: str) -> int:
    return cli.main(["eval", "all", "--lake", lake, "--endpoint", url, "--model", "wm", "--judge-endpoint", url,
                     "--judge-model", "judge", *SETTINGS, *extra])


def _sql(lake: str, query: str) -> list[dict]:
    with open_catalog(Lake(lake), read_only=True) as cat:
        return cat.sql(query).to_arrow_table().to_pylist()


def test_the_table_with_chosen_verdicts(lake, capsys):
    server = ScriptedJudgeAndWorld(_world, _verdict)
    try:
        assert _eval(lake, server.url) == 0
        printed = capsys.readouterr().out
        assert server.world_requests == 14  # 2 samples x 7 domains
        # judged: 12 samples with a generation; mcp's 2 take the reference's 3 attempts each
        assert server.judge_requests == 10 + 2 * 3
        scores = {(r["domain"], r["dimension"]): r for r in _sql(lake, "SELECT * FROM eval_scores")}
        assert scores[("android", "total_score")]["score"] == 100.0
        for domain in ("web", "os", "swe", "search"):
            got = {dim: scores[(domain, dim)]["score"] for dim in (*SCORES, "total_score")}
            assert got == {"format": 100.0, "factuality": 75.0, "consistency": 50.0, "realism": 25.0,
                           "quality": 0.0, "total_score": 50.0}
        for domain in ("terminal", "mcp"):  # failed: no generation / no readable verdict
            assert (scores[(domain, "total_score")]["failed"], scores[(domain, "total_score")]["valid"]) == (2, 0)
            assert scores[(domain, "total_score")]["score"] is None
        overall = scores[("overall", "total_score")]
        assert (overall["score"], overall["samples"], overall["valid"], overall["failed"]) == (60.0, 14, 10, 4)
        assert "overall 60.00   samples 14, valid 10, failed 4" in printed
        samples = _sql(lake, "SELECT domain, failed, error, prediction, ground_truth, rule_score, quality "
                             "FROM eval_samples ORDER BY domain")
        errors = {r["domain"]: r["error"] for r in samples}
        assert errors["terminal"] == "No model generation"
        assert errors["mcp"].startswith("Judge scoring failed after 3 attempts")
        web = next(r for r in samples if r["domain"] == "web")
        assert web["prediction"] == "PRED-web" and "URL: " in web["ground_truth"] and web["rule_score"] < 1
        requests = _sql(lake, "SELECT kind, status, count(*) AS n FROM eval_requests GROUP BY ALL ORDER BY ALL")
        assert requests == [{"kind": "infer", "status": "ok", "n": 14}, {"kind": "judge", "status": "failed", "n": 6},
                            {"kind": "judge", "status": "ok", "n": 10}]
        # a rerun sends nothing and gives the same table
        assert _eval(lake, server.url) == 0
        assert (server.world_requests, server.judge_requests) == (14, 16)
        assert _sql(lake, "SELECT count(*) AS n FROM evals") == [{"n": 1}]
    finally:
        server.close()


def test_killed_half_way_the_rerun_sends_only_what_is_missing(lake):
    server = ScriptedJudgeAndWorld(_world, lambda p, t, a: verdict_text(SCORES), delay_s=0.25)
    try:
        command = [sys.executable, "-c", "import sys; from pipelines.cli import main; sys.exit(main())", "eval", "all",
                   "--lake", lake, "--endpoint", server.url, "--model", "wm", "--judge-endpoint", server.url,
                   "--judge-model", "judge", *SETTINGS, "--concurrency", "1", "--judge-concurrency", "1",
                   "--flush-every", "2"]
        proc = subprocess.Popen(command, env={**os.environ, "PYTHONPATH": str(REPO)}, stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE)
        deadline = time.monotonic() + 120
        while server.world_requests + server.judge_requests < 20 and time.monotonic() < deadline:
            time.sleep(0.05)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
        assert proc.returncode == -signal.SIGKILL  # it died of the signal, half way
        kept = {r["kind"]: r["n"] for r in _sql(lake, "SELECT kind, count(*) AS n FROM eval_requests "
                                                      "WHERE status = 'ok' GROUP BY 1")}
        assert kept["infer"] == 14 and 0 < kept.get("judge", 0) < 12  # flushed while it ran
        assert _sql(lake, "SELECT status FROM runs WHERE pipeline = 'eval'") == [{"status": "running"}]
        world, judged = server.world_requests, server.judge_requests
        assert _eval(lake, server.url) == 0
        assert server.world_requests - world == 14 - kept["infer"]
        assert server.judge_requests - judged == 12 - kept["judge"]  # only what the ledger lacked
        assert sorted(r["status"] for r in _sql(lake, "SELECT status FROM runs WHERE pipeline = 'eval'")) \
            == ["died", "success"]
    finally:
        server.close()


def test_bench_jsonl_folder_and_bad_input(lake, tmp_path, capsys):
    """A folder of `*_test.jsonl` files is read as the reference reads AgentWorldBench."""
    bench = tmp_path / "bench"
    assert cli.main(["export", "sft", "all", "--lake", lake, "--format", "bench", "--out", str(bench),
                     "--split-ratios", "0,0,1"]) == 0
    server = ScriptedJudgeAndWorld(_world, _verdict)
    try:
        assert cli.main(["eval", str(bench / "test"), "--lake", lake, "--endpoint", server.url, "--model", "wm",
                         "--judge-endpoint", server.url, "--judge-model", "judge", "--per-domain", "1",
                         "--domains", "android", "web"]) == 0
        assert "overall 75.00   samples 2, valid 2, failed 0" in capsys.readouterr().out  # (5 + 3) / 2 -> 75
        (tmp_path / "bad_test.jsonl").write_text('{"prompt": ["x"]}\nnot json\n')
        assert cli.main(["eval", str(tmp_path / "bad_test.jsonl"), "--lake", lake, "--endpoint", server.url,
                         "--model", "wm", "--judge-endpoint", server.url, "--judge-model", "j"]) == 2
        assert "bad_test.jsonl line 2: not JSON" in capsys.readouterr().err
    finally:
        server.close()


def test_llama_server_as_world_model_and_judge(lake, llama_server):
    """SmolLM2-135M answers as the world model and as the judge. Whatever it writes, each sample is failed
    exactly when the reference's parser reads none of its judge answers (or it had no generation)."""
    from tests.transforms.reward import reference

    assert cli.main(["eval", "all", "--lake", lake, "--endpoint", llama_server, "--model", "smollm2",
                     "--judge-endpoint", llama_server, "--judge-model", "smollm2", "--split-ratios", "0,0,1",
                     "--per-domain", "1", "--domains", "mcp", "--max-tokens", "48", "--judge-max-tokens", "96",
                     "--concurrency", "1", "--judge-concurrency", "1"]) == 0
    samples = _sql(lake, "SELECT sample_key, failed, total_score, format FROM eval_samples")
    judged = _sql(lake, "SELECT sample_key, attempt, output FROM eval_requests WHERE kind = 'judge' "
                        "ORDER BY sample_key, attempt")
    assert len(samples) == 1 and judged
    for sample in samples:
        outputs = [r["output"] for r in judged if r["sample_key"] == sample["sample_key"]]
        verdicts = [reference.parse_judge_output(text) for text in outputs]
        read = [v for v in verdicts if v["success"]]
        assert sample["failed"] == (not read)
        assert len(outputs) == (len(verdicts) if not read else verdicts.index(read[0]) + 1)  # stops at the first read
        if read:
            assert sample["total_score"] == pytest.approx(read[0]["total_score"])
    table = _sql(lake, "SELECT failed, valid FROM eval_scores WHERE domain = 'overall'")
    assert table == [{"failed": sum(s["failed"] or not s["total_score"] for s in samples),
                      "valid": sum(bool(s["total_score"]) and not s["failed"] for s in samples)}]


def test_a_slow_world_model_gives_progress_lines_while_it_answers(lake, monkeypatch, capsys):
    """A server that takes a while (a CPU model at a large max_tokens): eval says every few seconds how many
    answers came back and what it waits on, instead of falling silent after "sending N to ..."."""
    import pipelines.infra.request_progress as request_progress
    import pipelines.stages.eval as eval_stage

    monkeypatch.setattr(eval_stage, "PROGRESS_EVERY_S", 0.2)
    monkeypatch.setattr(request_progress, "EVERY_S", 0.2)
    server = ScriptedJudgeAndWorld(_world, _verdict, delay_s=0.5)
    try:
        assert _eval(lake, server.url, "--concurrency", "2") == 0
    finally:
        server.close()
    lines_all = capsys.readouterr().err.splitlines()
    lines = [line for line in lines_all if line.startswith("  eval: world model:")]
    assert any("0/14 answered after" in line and "waiting on the first (max_tokens 32,768, 2 at a time)" in line
               for line in lines), lines
    assert lines[-1].startswith("  eval: world model: 14/14 answered, 0 failed")
    # the judge phase too, each attempt's round: 12 samples with a generation; mcp's 2 never read (failed), and
    # are asked again in attempts 2 and 3
    judge = [line for line in lines_all if line.startswith("  eval: judge attempt")]
    assert any(line.startswith("  eval: judge attempt 1: 0/12 answered after") and "waiting on the first" in line
               for line in judge), judge
    assert any(line.startswith("  eval: judge attempt 1: 12/12 answered, 2 failed, ") for line in judge), judge
    assert any(line.startswith("  eval: judge attempt 3: 2/2 answered, 2 failed, ") for line in judge), judge
    assert all("/s, ETA " in line for line in judge if "answered after" not in line), judge
