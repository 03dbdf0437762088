"""The RL reward verl calls (`pipelines.stages.reward.compute_score`): the hybrid of the rule part and the judge's
rubric, against the scripted judge stand-in (chosen verdicts: exact numbers) and, in verl's own venv, through
verl's loader and reward manager from the fragment `pipelines export rl` writes."""

import json
import os
import shutil
import subprocess
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from pipelines import cli
from pipelines.stages.reward import STATS, compute_score
from tests.parts import require
from tests.pipelines.judge_servers import ScriptedJudgeAndWorld, all_scores, verdict_text
from tests.transforms.reward.test_rules import STATES, reference_forms
from transforms.agentworld import DOMAINS, observation_turn
from transforms.reward.judge import judge_system_prompt

REPO = Path(__file__).resolve().parents[2]
VERL_PYTHON = REPO / ".venv" / "producers" / "verl-0.9.1" / "bin" / "python"


def _exact_or_poor(prediction: str, truth: str, attempt: int) -> str:
    return verdict_text(all_scores(5 if prediction == truth else 2))


@pytest.fixture
def judge():
    servers = []

    def _start(verdict=_exact_or_poor):
        servers.append(ScriptedJudgeAndWorld(lambda m: "unused", verdict))
        return servers[-1]

    yield _start
    for s in servers:
        s.close()


def _settings(server, tmp_path, **kw):
    return {"judge_endpoint": server.url, "judge_model": "judge", "cache_dir": str(tmp_path / "cache"), **kw}


@pytest.mark.parametrize("domain", DOMAINS)
def test_the_real_state_in_every_form_scores_the_maximum_and_no_answer_the_minimum(domain, judge, tmp_path):
    server = judge()
    truth = STATES[domain]
    for form, output in reference_forms(truth).items():  # every form the reference's parser reads it back from
        best = compute_score(f"trajforge/{domain}", output, truth,
                             {"current_prompt": "### Turn 1\n**Action:**\n```json\n{}\n```"},
                             **_settings(server, tmp_path))
        assert (best["score"], best["rule"], best["rubric"]) == (1.0, 1.0, 1.0), form
        assert (best["judge_used"], best["judge_failed"], best["quality"]) == (1, 0, 5)
    assert server.judge_requests == 1  # one judge input, whatever the form: the others from the cache
    weighted = compute_score(f"trajforge/{domain}", truth, truth, {}, **_settings(server, tmp_path), form_weight=0.5)
    native = compute_score(f"trajforge/{domain}", observation_turn(truth, domain), truth, {},
                           **_settings(server, tmp_path), form_weight=0.5)
    assert native["score"] == 1.0 and weighted["rule"] == 0.5 and weighted["score"] == pytest.approx(0.95)
    asked = server.judge_requests
    for output in ("", "<think>never answers", "<think>only</think>"):
        worst = compute_score(f"trajforge/{domain}", output, truth, {}, **_settings(server, tmp_path))
        assert worst["score"] == 0.0 and worst["judge_used"] == 0
    assert server.judge_requests == asked  # nothing to judge: no judge call
    assert set(best) == set(worst)  # verl batches the extra keys: every call returns the same ones


def test_hybrid_weights_and_what_the_judge_saw(judge, tmp_path):
    server = judge()
    truth = STATES["terminal"]
    near = "**Environment Observation:**\nroot@ad092d3df69c:/app# ls\nmain.py\nroot@ad092d3df69c:/app# "
    result = compute_score("trajforge/terminal", near, truth, {"current_prompt": "### Turn 3\nls"},
                           **_settings(server, tmp_path))
    assert 0 < result["rule"] < 1 and result["rubric"] == 0.25  # judge: 2 on every dimension -> (2-1)/4
    assert result["score"] == pytest.approx((9 * 0.25 + result["rule"]) / 10)
    body = server.server.bodies[-1]
    assert body["model"] == "judge" and set(body) == {"model", "messages", "temperature", "max_tokens"}
    assert "# Current Turn:\n\n### Turn 3\nls" in body["messages"][1]["content"]
    assert body["messages"][0]["content"].startswith("# Role and Objective")  # the terminal judge prompt
    even = compute_score("trajforge/terminal", near, truth, {}, **_settings(server, tmp_path), weights="1,1")
    assert even["score"] == pytest.approx((0.25 + result["rule"]) / 2)


def test_judge_failure_scores_zero_and_is_counted(judge, tmp_path):
    server = judge(lambda p, t, attempt: "I will not answer in JSON.")
    before = STATS["judge_failed"]
    truth = STATES["mcp"]
    result = compute_score("trajforge/mcp", observation_turn(truth, "mcp"), truth, {}, **_settings(server, tmp_path))
    assert result["judge_failed"] == 1 and result["rubric"] == 0.0 and result["score"] == pytest.approx(0.1)
    assert server.judge_requests == 3 and STATS["judge_failed"] == before + 1  # the reference's 3 attempts
    down = compute_score("trajforge/mcp", observation_turn(truth, "mcp"), truth, {},
                         **_settings(server, tmp_path, judge_endpoint="http://127.0.0.1:9/v1", judge_retries=0))
    assert down["judge_failed"] == 1 and down["score"] == pytest.approx(0.1)


def test_a_rerun_pays_nothing_twice(judge, tmp_path):
    server = judge(lambda p, t, attempt: "no verdict" if attempt == 1 else verdict_text(all_scores(4)))
    truth = STATES["web"]
    args = ("trajforge/web", observation_turn(truth, "web"), truth, {})
    first = compute_score(*args, **_settings(server, tmp_path))
    assert first["format"] == 4 and server.judge_requests == 2  # attempt 1 did not read, attempt 2 did
    again = compute_score(*args, **_settings(server, tmp_path))
    assert again == first and server.judge_requests == 2  # both attempts come from the cache
    compute_score(*args, **_settings(server, tmp_path, judge_model="other-judge"))
    assert server.judge_requests == 3  # another judge model is another request


def test_settings_from_the_environment_and_errors(judge, tmp_path, monkeypatch):
    server = judge()
    truth = STATES["swe"]
    monkeypatch.setenv("TRAJFORGE_JUDGE_ENDPOINT", server.url)
    monkeypatch.setenv("TRAJFORGE_JUDGE_MODEL", "judge")
    monkeypatch.setenv("TRAJFORGE_JUDGE_CACHE", "")
    assert compute_score("trajforge/swe", observation_turn(truth, "swe"), truth)["judge_used"] == 1
    monkeypatch.delenv("TRAJFORGE_JUDGE_ENDPOINT")
    rule_only = compute_score("trajforge/swe", observation_turn(truth, "swe"), truth)
    assert (rule_only["score"], rule_only["judge_used"]) == (1.0, 0)
    with pytest.raises(ValueError, match="data_source 'openai/gsm8k'"):
        compute_score("openai/gsm8k", "x", "y")
    with pytest.raises(TypeError, match="judge_modle"):
        compute_score("trajforge/swe", "x", "y", judge_modle="x")
    with pytest.raises(ValueError, match="weights"):
        compute_score("trajforge/swe", "x", "y", weights="9")


def test_the_judge_sees_the_history_as_the_reference_shows_it(bundled_all_lake, judge, tmp_path):
    """Every multi-turn RL row of the bundled samples: the judge request `compute_score` sends (recorded by the
    stand-in) is the one the reference's `build_judge_messages` makes for the AgentWorldBench record of the
    same transition (`export sft --format bench`): Context section, current turn, prediction, real state."""
    from tests.transforms.reward import reference

    ref = reference.load()
    # android states and actions, and web actions, as the bench export shows them by default (each source's own
    # rendering; BrowserGym calls)
    assert cli.main(["export", "rl", "all", "--lake", bundled_all_lake, "--out", str(tmp_path / "rl"),
                     "--split-ratios", "1,0,0", "--android-state", "per-source", "--web-action", "browsergym"]) == 0
    assert cli.main(["export", "sft", "all", "--lake", bundled_all_lake, "--out", str(tmp_path / "bench"),
                     "--format", "bench", "--split-ratios", "1,0,0"]) == 0
    rows = [r for f in sorted((tmp_path / "rl").glob("*/*.parquet")) for r in pq.read_table(f).to_pylist()]
    bench = [json.loads(line) for f in sorted((tmp_path / "bench").glob("*/*.jsonl"))
             for line in f.read_text().splitlines()]
    multi = [r for r in rows if r["extra_info"]["turn_idx"] > 1]
    assert len(multi) >= 10 and all(r["extra_info"]["judge_context"] for r in multi)
    assert all(r["extra_info"]["judge_context"] == "" for r in rows if r["extra_info"]["turn_idx"] == 1)
    prompts = {d: judge_system_prompt(d) for d in DOMAINS}
    server = judge()
    for row in multi:
        info, domain, truth = row["extra_info"], row["data_source"].split("/")[1], row["reward_model"]["ground_truth"]
        [record] = [b for b in bench if b["source_id"] in info["step_ids"] and b["current_prompt"] ==
                    info["current_prompt"] and b["turn_idx"] == info["turn_idx"]]
        solution = f"<think>hm</think>{observation_turn('PRED line', domain)}"
        before = len(server.server.bodies)
        compute_score(row["data_source"], solution, truth, info, **_settings(server, tmp_path))
        expected = ref.build_judge_messages(record, reference.parse_model_output(solution), prompts)
        if len(server.server.bodies) == before:
            # the same transition in another bundled run (one example saved in several folders) is answered
            # from the judge cache: its request was sent once, for the first of them
            assert expected in [b["messages"] for b in server.server.bodies]
            continue
        sent = server.server.bodies[-1]["messages"]
        assert sent == expected
        assert sent[1]["content"].startswith("# Context (Historical Interactions):")
    distinct = {json.dumps(b["messages"], sort_keys=True) for b in server.server.bodies}
    assert server.judge_requests == len(distinct) > len(multi) // 2


# verl itself -------------------------------------------------------------------------------------------
def test_verl_loads_the_reward_from_the_exported_fragment(bundled_all_lake, judge, tmp_path):
    """verl 0.9's `load_reward_manager` reads the fragment merged over its trainer config, loads our
    function from the path it names, and its naive reward manager scores rollouts of every domain."""
    require(f"verl's venv ({VERL_PYTHON})", VERL_PYTHON.exists(), "make setup-test builds it")
    out = tmp_path / "rl"
    assert cli.main(["export", "rl", "all", "--lake", bundled_all_lake, "--out", str(out)]) == 0
    manifest = json.loads((out / "manifest.json").read_text())
    assert "verl_reward.yaml" in manifest["extra_files"] and manifest["verl"]["max_prompt_tokens"] > 0
    rows = [r for shard in manifest["shards"] for r in pq.read_table(out / shard["path"]).to_pylist()]
    by_domain = {r["data_source"].split("/")[1]: r for r in rows}
    assert set(by_domain) == set(DOMAINS)  # the bundled samples cover every domain
    cases = []
    for domain, row in sorted(by_domain.items()):
        truth = row["reward_model"]["ground_truth"]
        info = dict(row["extra_info"])
        cases += [{"data_source": row["data_source"], "response": observation_turn(truth, domain),
                   "ground_truth": truth, "extra_info": info},
                  {"data_source": row["data_source"], "response": "", "ground_truth": truth, "extra_info": info},
                  {"data_source": row["data_source"], "response": "<think>no answer", "ground_truth": truth,
                   "extra_info": info}]
    (tmp_path / "cases.json").write_text(json.dumps(cases, default=str))
    server = judge()
    env = {**os.environ, "TRAJFORGE_JUDGE_ENDPOINT": server.url, "TRAJFORGE_JUDGE_MODEL": "judge",
           "TRAJFORGE_JUDGE_CACHE": str(tmp_path / "cache"), "PYTHONPATH": ""}
    done = subprocess.run([str(VERL_PYTHON), str(Path(__file__).parent / "verl_reward_check.py"),
                           str(out / "verl_reward.yaml"), str(tmp_path / "cases.json"), str(tmp_path / "out.json")],
                          env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads((tmp_path / "out.json").read_text())
    assert result["verl"] == "0.9.1" and result["data"]["filter_overlong_prompts"] is True
    assert result["data"]["max_prompt_length"] >= manifest["verl"]["max_prompt_tokens"]
    scores = [r["reward_score"] for r in result["results"]]
    assert scores == [1.0, 0.0, 0.0] * len(DOMAINS)
    best = result["results"][0]["reward_extra_info"]
    assert (best["judge_used"], best["judge_failed"], best["format"]) == (1, 0, 5)
    assert server.judge_requests == len(DOMAINS)  # one verdict per real-state rollout, none for the others
    # the history reached the judge through verl's reward path: every multi-turn row's Context section
    contexts = [r["extra_info"]["judge_context"] for r in by_domain.values() if r["extra_info"]["turn_idx"] > 1]
    sent = [b["messages"][1]["content"] for b in server.server.bodies]
    assert contexts and all(any(c in text for text in sent) for c in contexts)
    shutil.rmtree(tmp_path / "cache")


def test_called_from_a_thread_running_an_event_loop(judge, tmp_path):
    """A trainer may call the reward inside its event loop: the judge's requests still run."""
    import asyncio

    server = judge()
    truth = STATES["os"]

    async def inside_a_loop():
        return compute_score("trajforge/os", observation_turn(truth, "os"), truth, {}, **_settings(server, tmp_path))

    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(1) as pool:  # a thread of its own: the session may run a loop in this one
        result = pool.submit(asyncio.run, inside_a_loop()).result()
    assert result["score"] == 1.0 and server.judge_requests == 1
