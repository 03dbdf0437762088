"""`{demonstrations}` filled (`export --demonstrations N|FILE`) on the bundled MCP sessions: N example tool calls
with their real results, each from another trajectory of the train split, the same for the same seed, in the
reference prompts' few-shot layout; a file's text per domain; empty when not asked."""

import json
import re

import pytest

from pipelines import cli

from pipelines.infra import definition
from pipelines.infra.lake import Lake
from pipelines.infra.runner import run_ingest
from pipelines.infra.runs import open_catalog
from tests.conftest import SAMPLES
from transforms import agentworld
from transforms.export import demonstrations
from transforms.export.demonstrations import Example

EXAMPLE = re.compile(r"## Example (\d+)\n### Turn 1\n\*\*Action:\*\*\n```json\n(.*?)\n```\n"
                     r"\*\*Environment Observation:\*\*\n(.*?)\n(?=\n## Example|\Z)", re.S)


@pytest.fixture(scope="module")
def lake(tmp_path_factory) -> str:
    lake = str(tmp_path_factory.mktemp("demos") / "lake")
    assert run_ingest(definition.load("ingest-all"), lake, [str(SAMPLES / "mcp")], progress=False,
                      log=lambda line: None).status == "success"
    return lake


@pytest.fixture(scope="module")
def pairs(lake) -> dict[tuple[str, str], set[str]]:
    """(action JSON, result) -> the episodes whose trajectory holds that transition."""
    with open_catalog(Lake(lake), read_only=True) as cat:
        rows = cat.con.execute(
            "SELECT episode_id, action, coalesce(lead(observation.text) OVER w, "
            "CASE WHEN lead(step_index) OVER w IS NULL THEN final_observation.text END) FROM steps "
            "WINDOW w AS (PARTITION BY episode_id ORDER BY step_index)").fetchall()
    out: dict = {}
    for episode, action, result in rows:
        out.setdefault((agentworld.action_json("mcp", action), result), set()).add(episode)
    return out


def _export(lake: str, out, *extra: str) -> dict[str, list[dict]]:
    assert cli.main(["export", "sft", "all", "--format", "agentworld", "--out", str(out), "--lake", lake,
                     "--domains", "mcp", *extra]) == 0
    by_split = {}
    for path in sorted(out.rglob("*.jsonl")):
        split = path.parent.name
        by_split.setdefault(split, []).extend(json.loads(line) for line in path.read_text().splitlines())
    return by_split


def _examples(record: dict) -> list[tuple[str, str]]:
    system = record["messages"][0]["content"]
    return [(action, result) for _, action, result in EXAMPLE.findall(system.split("# Few-shot Examples", 1)[-1])]


def test_n_examples_from_other_trajectories_of_the_train_split(lake, pairs, tmp_path):
    by_split = _export(lake, tmp_path / "two", "--demonstrations", "2", "--split-ratios", "0.5,0,0.5")
    train_episodes = {r["id"].split(":")[0] for r in by_split.get("train", [])}
    records = [r for rs in by_split.values() for r in rs]
    assert train_episodes and len(train_episodes) < len({r["id"].split(":")[0] for r in records})
    for record in records:
        episode = record["id"].split(":")[0]
        examples = _examples(record)
        assert len(examples) == 2 and "\n---\n\n# Few-shot Examples\n" in record["messages"][0]["content"]
        for example in examples:
            sources = pairs[example]  # a real transition of the dataset, as it happened
            assert sources - {episode} and sources & train_episodes, (episode, example)
        assert "{demonstrations}" not in record["messages"][0]["content"]
    # the same seed draws the same examples; no option, no examples
    again = _export(lake, tmp_path / "again", "--demonstrations", "2", "--split-ratios", "0.5,0,0.5")
    assert again == by_split
    plain = _export(lake, tmp_path / "none", "--split-ratios", "0.5,0,0.5")
    assert not any("# Few-shot Examples" in r["messages"][0]["content"] for rs in plain.values() for r in rs)


def test_a_file_gives_each_domain_its_text(lake, tmp_path):
    path = tmp_path / "demos.json"
    path.write_text(json.dumps({"mcp": "\n## Example 1\nEXAMPLE TEXT\n"}))
    records = _export(lake, tmp_path / "file", "--demonstrations", str(path), "--split-ratios", "1,0,0")["train"]
    assert records and all(r["messages"][0]["content"].endswith("consistent with the session context.\n"
                                                                "\n## Example 1\nEXAMPLE TEXT\n") for r in records)
    path.write_text(json.dumps({"android": "x"}))
    assert cli.main(["export", "sft", "all", "--out", str(tmp_path / "bad"), "--lake", lake,
                     "--demonstrations", str(path)]) != 0


def _example(episode: str, step: str, tool: str) -> Example:
    return Example(episode, step, tool, {"kind": "tool_call", "tool_name": tool, "arguments": "{}"}, "ok")


def test_the_trajectory_s_own_tools_come_first_never_its_own_transitions():
    pool = [_example("self", "s1", "query"), _example("a", "a1", "query"), _example("a", "a2", "list_tables"),
            _example("b", "b1", "echo"), _example("b", "b2", "query")]
    chosen = demonstrations.choose(pool, "self", ["list_tables", "query"], 3, seed="")
    assert [e.tool for e in chosen[:2]] == ["list_tables", "query"] and chosen[2].tool in ("echo", "query")
    assert all(e.episode_id != "self" for e in chosen)
    assert demonstrations.choose(pool, "self", ["query"], 9, seed="") == \
        demonstrations.choose(list(reversed(pool)), "self", ["query"], 9, seed="")  # by seeded hash, not order
    assert len(demonstrations.choose(pool, "self", [], 9, seed="")) == 4
