"""Rejection sampling (`pipelines label --mode sample`) on the bundled samples, and `export sft --targets
sampled`: exact decisions against a scripted reasoning model and judge (a stand-in, named so: each rollout's
quality is chosen by its seed, so the best-of-N choice, the bar, ties and unreadable verdicts are checked
exactly), rerun sending nothing, the real-target export unchanged, and rollouts from the real llama.cpp
server."""

import json
from pathlib import Path

import orjson
import pytest

from pipelines import cli
from pipelines.infra.label_client import Sampling
from pipelines.infra.lake import Lake
from pipelines.infra.runs import open_catalog
from pipelines.stages.sample import SampleOptions, sample_targets
from tests.pipelines.judge_servers import request_domain, PREDICTED, all_scores, judged_parts, verdict_text
from tests.pipelines.label_servers import ScriptedServer, chat_completion
from transforms.agentworld import observation_turn

SPLITS = ["--split-ratios", "1,0,0"]  # every transition in train: all of them are sampled
# the first transitions of each domain: every domain's scripted case is there, without four rollouts and a judging
# of every bundled transition (hundreds since the bundled agent benchmarks)
PER_DOMAIN = ["--per-domain", "12"]


@pytest.fixture
def lake(all_lake_copy) -> str:
    return all_lake_copy


def _prediction(domain: str, seed: int) -> str:
    return f"PRED-{domain}-{seed}"


def _score(domain: str, seed: int) -> int | None:
    """The judge's score (all five dimensions) of the rollout with this seed; None: no readable verdict. mcp
    never reaches the bar (all 3, tied); search's best is its last rollout; swe's two 5s tie (the lower index
    wins); android's best is exactly at the bar (4: kept)."""
    if domain == "mcp":
        return 3
    return {"search": {0: 3, 1: 4, 2: None, 3: 5}, "swe": {0: 3, 1: 5, 2: None, 3: 5},
            "android": {0: 3, 1: 4, 2: None, 3: 2}}.get(domain, {0: 3, 1: 5, 2: None, 3: 2})[seed]


class Scripted:
    """World model: rollout with seed s reasons "thinking s" (as the server's `reasoning_content` for even
    seeds, inline `<think>` for odd ones) and predicts PRED-<domain>-s in the domain's answer form; on
    terminal, seed 0 is cut by max_tokens. Judge: `_score` of the prediction."""

    def __init__(self):
        self.world = self.judge = 0
        self.server = ScriptedServer([self.answer])
        self.url = self.server.url

    def answer(self, body: dict):
        user = body["messages"][-1]["content"]
        if PREDICTED in user:
            self.judge += 1
            prediction, _ = judged_parts(user)
            domain, seed = prediction.rsplit("-", 2)[1], int(prediction.rsplit("-", 1)[1])
            score = _score(domain, seed)
            return 200, chat_completion(verdict_text(None if score is None else all_scores(score))), 0
        self.world += 1
        domain, seed = request_domain(body["messages"]), body["seed"]
        if domain == "terminal" and seed == 0:
            return 200, chat_completion("**Environment Observation:**\nPRED", finish_reason="length"), 0
        answer = observation_turn(_prediction(domain, seed), domain)
        if seed % 2:
            return 200, chat_completion(f"<think>thinking {seed}</think>\n{answer}"), 0
        reply = orjson.loads(chat_completion(answer))
        reply["choices"][0]["message"]["reasoning_content"] = f"thinking {seed}"
        return 200, orjson.dumps(reply), 0

    def close(self):
        self.server.close()


def _sample(lake: str, url: str, *extra: str) -> int:
    return cli.main(["label", "all", "--lake", lake, "--mode", "sample", "--endpoint", url, "--model", "reasoner",
                     "--judge-endpoint", url, "--judge-model", "judge", "--rollouts", "4", "--min-score", "4",
                     "--split", "train", "--sampling-seed", "0", *extra])


def _sql(lake: str, query: str) -> list[dict]:
    with open_catalog(Lake(lake), read_only=True) as cat:
        return cat.sql(query).to_arrow_table().to_pylist()


def _records(out: Path) -> list[dict]:
    return [json.loads(line) for f in sorted(out.glob("*/*.jsonl")) for line in f.read_text().splitlines()]


def test_best_of_n_kept_above_the_bar_and_exported_marked(lake, tmp_path, monkeypatch):
    monkeypatch.setattr("pipelines.stages.sample.CHUNK", 7)  # several chunks
    assert cli.main(["export", "sft", "all", "--lake", lake, "--out", str(tmp_path / "real"), *SPLITS]) == 0
    real = {r["id"]: r for r in _records(tmp_path / "real")}
    # the real export as `label --mode sample` renders it (its default splits): the transitions it samples
    server = Scripted()
    try:
        assert _sample(lake, server.url, *PER_DOMAIN) == 0
        rollouts = _sql(lake, "SELECT * FROM sampled_rollouts ORDER BY step_id, rollout")
        transitions = {r["step_id"]: r["domain"] for r in rollouts}
        assert len(rollouts) == 4 * len(transitions)
        assert server.world == len({r["request_key"] for r in rollouts})  # identical requests sent once
        assert set(transitions) <= set(real)
        by_step: dict[str, list[dict]] = {}
        for r in rollouts:
            by_step.setdefault(r["step_id"], []).append(r)
        expected_kept = 0
        for step_id, rows in by_step.items():
            domain = transitions[step_id]
            scores = [r["score"] for r in rows]
            want = [float(_score(domain, s) or 0) for s in range(4)]
            if domain == "terminal":
                want[0] = 0.0  # cut by max_tokens: unusable, never judged
                assert rows[0]["status"] == "failed" and rows[0]["judge_key"] is None
            assert scores == want, (step_id, domain)
            if domain != "mcp":
                assert rows[2]["error"].startswith("Judge scoring failed after 3 attempts")
            best = max(range(4), key=lambda i: (want[i], -i))
            kept = want[best] >= 4
            expected_kept += kept
            assert [r["chosen"] for r in rows] == [kept and i == best for i in range(4)]
            assert all(r["kept"] == kept for r in rows)
        targets = {t["parent_step_id"]: t for t in _sql(lake, "SELECT * FROM targets")}
        assert len(targets) == expected_kept > 0
        for step_id, t in targets.items():
            domain = transitions[step_id]
            seed = 3 if domain == "search" else 1
            assert t["target"] == (f"<think>\nthinking {seed}\n</think>\n\n"
                                   + observation_turn(_prediction(domain, seed), domain))
            assert t["origin"] == "sampled" and t["prediction"] == _prediction(domain, seed)
            assert t["score"] == (4.0 if domain == "android" else 5.0) and t["rollouts"] == 4
        kept_domains = {transitions[s] for s in targets}
        assert "mcp" not in kept_domains and {"android", "swe", "search"} <= kept_domains
        ledger = _sql(lake, "SELECT strategy, parent_step_id, output FROM label_ledger WHERE strategy LIKE 'rollout-%'")
        assert len(ledger) == server.world
        # even seeds came as the server's reasoning_content: kept in the ledger's output as a think block
        assert all(r["output"].startswith("<think>\nthinking 0\n</think>") for r in ledger
                   if r["strategy"] == "rollout-0" and transitions[r["parent_step_id"]] != "terminal")

        world, judge = server.world, server.judge
        assert _sample(lake, server.url, *PER_DOMAIN) == 0  # a rerun: everything from the ledgers, no new version
        assert (server.world, server.judge) == (world, judge)
        assert len(_sql(lake, "SELECT * FROM targets")) == expected_kept
    finally:
        server.close()

    assert cli.main(["export", "sft", "all", "--lake", lake, "--out", str(tmp_path / "again"), *SPLITS]) == 0
    assert _records(tmp_path / "again") == list(real.values())  # the real export does not change
    assert cli.main(["export", "sft", "all", "--lake", lake, "--out", str(tmp_path / "sampled"), "--targets",
                     "sampled", *SPLITS]) == 0
    sampled = _records(tmp_path / "sampled")
    assert {r["id"] for r in sampled} == set(targets)
    for record in sampled:
        assert record["origin"] == "sampled" and record["target_origin"] == "sampled"
        assert record["messages"][-1] == {"role": "assistant", "content": targets[record["id"]]["target"]}
        assert record["messages"][:-1] == real[record["id"]]["messages"][:-1]  # the same prompt
    manifest = json.loads((tmp_path / "sampled" / "manifest.json").read_text())
    assert manifest["skipped"]["no_sampled_target"] == len(real) - len(targets)
    assert manifest["config"]["targets"] == "sampled"
    lineage = _sql(lake, "SELECT r.step_ids FROM export_rows r JOIN exports e USING (export_id) "
                         f"WHERE e.out = '{tmp_path / 'sampled'}'")
    target_ids = {t["step_id"] for t in targets.values()}
    assert all(row["step_ids"][-1] in target_ids for row in lineage) and len(lineage) == len(sampled)


def test_the_label_stage_of_a_definition_samples(lake):
    """`[stage_options.label]` with `mode = "sample"`: two rollouts (seeds 1 and 2) of one swe transition; seed 1
    is judged 5, seed 2's verdict never reads: the target is seed 1's."""
    from pipelines.stages.label import label_stage
    from pipelines.infra.options import OptionsError
    from pipelines.stages import StageContext

    server = Scripted()
    options = {"mode": "sample", "model": "reasoner", "judge_model": "judge", "endpoint": server.url,
               "judge_endpoint": server.url, "rollouts": 2, "per_domain": 1, "domains": ["swe"],
               "sampling": {"seed": 1, "max_tokens": 512}}
    try:
        result = label_stage(StageContext(Lake(lake), None, "all", "run-stage", options, log=lambda line: None))
        with pytest.raises(OptionsError, match="rollout"):
            label_stage(StageContext(Lake(lake), None, "all", "run-bad", {**options, "rollout": 2}))
    finally:
        server.close()
    assert (result.records_in, result.records_out, result.quarantined) == (1, 1, 0) and result.version
    [target] = _sql(lake, "SELECT * FROM targets")
    assert target["prediction"] == _prediction("swe", 1)
    sampling = [orjson.loads(r["sampling"]) for r in _sql(lake, "SELECT sampling FROM label_ledger")]
    assert sorted((s["seed"], s["max_tokens"], s["temperature"]) for s in sampling) == [(1, 512, 0.6), (2, 512, 0.6)]


def test_sampled_targets_refused_where_they_do_not_belong(lake, tmp_path, capsys):
    for kind, fmt in (("rl", None), ("cpt", None), ("sft", "bench")):
        argv = ["export", kind, "all", "--lake", lake, "--out", str(tmp_path / kind), "--targets", "sampled"]
        assert cli.main(argv + (["--format", fmt] if fmt else [])) != 0
        assert "--targets sampled applies to sft" in capsys.readouterr().err
    # a judge is required
    assert cli.main(["label", "all", "--lake", lake, "--mode", "sample", "--endpoint", "http://127.0.0.1:9/v1",
                     "--model", "m"]) != 0
    assert "needs a judge" in capsys.readouterr().err


def test_rollouts_from_the_real_llama_server(lake, llama_server):
    """SmolLM2 behind llama.cpp writes the rollouts (two seeds each); the stand-in judge gives 5 to any
    prediction, so every usable rollout may win: the kept target is the first usable rollout's own text."""
    judge = ScriptedServer([lambda body: (200, chat_completion(verdict_text(all_scores(5))), 0)])
    try:
        options = SampleOptions(model="smollm2", judge_model="judge", endpoint=llama_server,
                                judge_endpoint=judge.url, rollouts=2, per_domain=1, domains=["mcp"],
                                sampling=Sampling(temperature=1.0, max_tokens=48, seed=7, stop=("\n\n",)),
                                concurrency=2, split=None)
        result = sample_targets(Lake(lake), None, "all", options, "run-llama", log=lambda line: None)
    finally:
        judge.close()
    assert result.queries == 1 and result.rollouts == 2 and result.rollouts_sent == 2
    ledger = {r["request_key"]: r for r in _sql(lake, "SELECT * FROM label_ledger WHERE run_id = 'run-llama'")}
    assert len(ledger) == 2 and all(r["output"] is not None for r in ledger.values())
    assert {orjson.loads(r["sampling"])["seed"] for r in ledger.values()} == {7, 8}
    rollouts = _sql(lake, "SELECT * FROM sampled_rollouts WHERE run_id = 'run-llama' ORDER BY step_id, rollout")
    for row in rollouts:
        usable = ledger[row["request_key"]]["status"] == "ok"
        assert row["score"] == (5.0 if usable else 0.0)
    targets = _sql(lake, "SELECT * FROM targets")
    assert len(targets) == result.kept == sum(r["chosen"] for r in rollouts)
    for t in targets:
        row = ledger[t["request_key"]]
        assert t["prediction"] == row["observation"]
        assert t["target"].endswith(observation_turn(row["observation"], t["domain"]))


@pytest.mark.parametrize("share", [False, True])
def test_rollouts_with_the_same_answer_are_each_judged(lake, share):
    """Three rollouts predict the same state: identical judge inputs. Each is judged, on its own request
    (or on one shared request with `share_identical`); none is failed without its judge being asked."""
    from pipelines.stages.label import label_stage
    from pipelines.stages import StageContext

    def answer(body: dict):
        if PREDICTED in body["messages"][-1]["content"]:
            return 200, chat_completion(verdict_text(all_scores(4))), 0
        return 200, chat_completion(observation_turn("SAME", request_domain(body["messages"]))), 0

    server = ScriptedServer([answer])
    options = {"mode": "sample", "model": "reasoner", "judge_model": "judge", "endpoint": server.url,
               "judge_endpoint": server.url, "rollouts": 3, "per_domain": 1, "domains": ["terminal"],
               "share_identical": share}
    try:
        result = label_stage(StageContext(Lake(lake), None, "all", "run-same", options, log=lambda line: None))
        judged = [b for b in server.bodies if PREDICTED in b["messages"][-1]["content"]]
    finally:
        server.close()
    rollouts = _sql(lake, "SELECT rollout, score, error, judge_key FROM sampled_rollouts ORDER BY rollout")
    assert [(r["score"], r["error"]) for r in rollouts] == [(4.0, None)] * 3
    assert len(judged) == (1 if share else 3) and len({r["judge_key"] for r in rollouts}) == (1 if share else 3)
    assert result.records_out == 1


def test_slow_rollouts_and_judge_give_progress_lines(lake, monkeypatch, capsys):
    """A slow server (a CPU model): every round of rollouts and of judge requests says every few seconds what
    came back (done / total, failed, rate, ETA), and before the first answer how long and on what it waits."""
    import pipelines.infra.request_progress as request_progress

    monkeypatch.setattr(request_progress, "EVERY_S", 0.2)
    scripted = Scripted()
    answer = scripted.answer
    scripted.server.script = [lambda body: (*answer(body)[:2], 0.3)]  # every answer takes 0.3 s
    try:
        assert _sample(lake, scripted.url, "--rollouts", "1", "--per-domain", "1", "--concurrency", "2") == 0
    finally:
        scripted.close()
    err = capsys.readouterr().err.splitlines()
    rollout = [line for line in err if line.startswith("  label: rollout 1:")]
    judge = [line for line in err if line.startswith("  label: judge attempt 1:")]
    assert any("0/7 answered after" in line and "waiting on the first" in line for line in rollout), rollout
    assert rollout[-1].startswith("  label: rollout 1: 7/7 answered, 0 failed, ") and "ETA" in rollout[-1]
    assert any("answered after" in line and "waiting on the first" in line for line in judge), judge
    # seed 0: terminal's rollout was cut by max_tokens (not judged), the other 6 read a verdict
    assert judge[-1].startswith("  label: judge attempt 1: 6/6 answered, 0 failed, "), judge
