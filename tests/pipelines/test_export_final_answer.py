"""A final answer is the agent's output handed back to its caller, not a transition a world model can learn:
over the bundled smolagents benchmark runs (samples/chat/smolagents: a ToolCallingAgent whose `final_answer`
call's recorded result is the answer itself), no SFT or RL record acts with the terminal's empty completion
signal `[]` and predicts the agent's own answer, and no CPT document shows the answer as the environment's
output; the manifest counts each answer left out, and the lake keeps it."""

import json
import re

import duckdb
import pyarrow.parquet as pq
import pytest

from pipelines import cli
from pipelines.infra import definition
from pipelines.infra.runner import run_ingest
from tests.conftest import SAMPLES

SMOLAGENTS = SAMPLES / "chat" / "smolagents"
ACTION = re.compile(r"\*\*Action:\*\*\n```json\n(.*?)\n```", re.S)


@pytest.fixture(scope="module")
def lake(tmp_path_factory):
    lake = str(tmp_path_factory.mktemp("final_answer") / "lake")
    result = run_ingest(definition.load("ingest-all"), lake, [str(SMOLAGENTS)], progress=False, log=lambda line: None)
    assert result.status == "success"
    return lake


def _answers(lake: str) -> dict[str, str]:
    """step id -> answer of every final answer whose recorded result repeats it (what the fix is about)."""
    rows = duckdb.sql(f"SELECT step_id, action.text, final_observation.text FROM "
                      f"read_parquet('{lake}/datasets/all/parts/steps/*.parquet') WHERE action.kind = 'done'").fetchall()
    return {step: answer for step, answer, result in rows if result is not None and result.strip() == answer.strip()}


def _export(lake: str, out, kind: str) -> dict:
    assert cli.main(["export", kind, "all", "--out", str(out), "--lake", lake]) == 0
    return json.loads((out / "manifest.json").read_text())


def _empty_actions(text: str) -> list[str]:
    return [a for a in ACTION.findall(text) if json.loads(a) in ([], {})]


def test_no_sft_or_rl_record_predicts_a_final_answer(lake, tmp_path):
    answers = _answers(lake)
    assert len(answers) == 50  # every tool-calling run ends on its `final_answer` call, its result the answer
    sft = _export(lake, tmp_path / "sft", "sft")
    records = [json.loads(line) for s in sft["shards"] for line in (tmp_path / "sft" / s["path"]).read_text().splitlines()]
    assert records and not set(answers) & {r["id"] for r in records}  # a record's id is its acting step's
    for r in records:
        assert not any(_empty_actions(m["content"]) for m in r["messages"] if m["role"] == "user"), r["id"]
    assert sft["skipped"]["final_answer"] == 50 and sft["skipped_units"]["final_answer"] == "actions"
    assert sft["actions_in"] == sft["transitions_in"] + sft["skipped"]["no_next_observation"] + 50
    rl = _export(lake, tmp_path / "rl", "rl")
    rows = [row for s in rl["shards"] for row in pq.read_table(tmp_path / "rl" / s["path"]).to_pylist()]
    assert len(rows) == len({r["id"].split(":")[0] for r in records})  # still one turn of every trajectory
    for row in rows:
        assert not _empty_actions(row["prompt"][-1]["content"])
        assert row["reward_model"]["ground_truth"].strip() not in {a.strip() for a in answers.values()}
    assert rl["skipped"]["final_answer"] == 50


def test_cpt_documents_end_on_the_last_environment_reply(lake, tmp_path):
    answers = _answers(lake)
    cpt = _export(lake, tmp_path / "cpt", "cpt")
    docs = [row["text"] for s in cpt["shards"] for row in pq.read_table(tmp_path / "cpt" / s["path"]).to_pylist()]
    assert docs and not any(_empty_actions(d) for d in docs)
    assert not any(d.endswith("**Environment Observation:**\n" + a) for d in docs for a in answers.values())
    assert cpt["skipped"]["final_answer"] == 50
