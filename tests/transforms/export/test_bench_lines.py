"""`--format bench` lines read as the released ones are: the evaluated turn's prompt ends with the evaluation
instruction the released lines carry (the world model is asked what they ask; `current_prompt`, which the
judge reads, is the turn without it), `pipelines eval` builds the same request from ours as from theirs, and
the benchmark's reader folds our lines back into the trajectory they came from. Search records open with the
`**Simulation Instruction:**` where the trajectory recorded a query or a reference answer."""

import json

from ingest import agentworldbench
from pipelines import cli
from pipelines.infra import definition
from pipelines.infra.runner import run_ingest
from ingest.record import Episode
from pipelines.stages.eval import infer_messages
from tests.conftest import SAMPLES
from tests.ingest.golden import read_records
from transforms import agentworld
from transforms.export.budget import TokenCounter
from transforms.export.chat import TrajectoryRenderer
from transforms.export.sft import bench_record
from transforms.export.transitions import Trajectory, Turn

RELEASED = SAMPLES / "agentworld" / "released" / "android_test.jsonl"


def _trajectory(domain: str, actions: list[dict], observations: list[str], task=None, env=None,
                first_state=None) -> Trajectory:
    turns = [Turn(f"s{i}", action, "real", observation, f"s{i + 1}", "real")
             for i, (action, observation) in enumerate(zip(actions, observations))]
    return Trajectory("ep", "main", domain, task, "unknown", "test", env or {}, first_state, "s0", "real", turns)


def _lines(trajectory: Trajectory) -> list[dict]:
    renderer = TrajectoryRenderer(trajectory, TokenCounter("bound"))
    return [bench_record(renderer.sample(t), renderer) for t in range(len(trajectory.turns))]


SEARCH = [{"kind": "tool_call", "tool_name": "web_search", "arguments": '{"queries": ["parquet footer"]}'},
          {"kind": "tool_call", "tool_name": "web_extractor", "arguments": '{"url": "https://parquet.apache.org/"}'}]
RESULTS = ["[1] https://parquet.apache.org/\nTitle: Parquet\nSnippet: The footer holds the metadata.\nDate: N/A",
           "# Apache Parquet\nThe file metadata is written after the data."]


def test_the_evaluated_prompt_ends_with_the_released_instruction():
    released = [json.loads(line) for line in RELEASED.read_text().splitlines()]
    suffixes = {agentworldbench.split_instruction(line["prompt"][line["turn_idx"] - 1])[1] for line in released}
    assert suffixes == {agentworld.EVALUATION_INSTRUCTION}  # the one instruction every released line carries
    lines = _lines(_trajectory("search", SEARCH, RESULTS))
    for line in lines:
        k = line["turn_idx"]
        evaluated = line["prompt"][k - 1]
        assert evaluated == line["current_prompt"] + agentworld.EVALUATION_INSTRUCTION
        assert not any("Please analyze" in p for i, p in enumerate(line["prompt"]) if i != k - 1)
        # the world model's request ends with it, as a released line's does
        assert infer_messages(line)[-1]["content"].endswith(agentworld.EVALUATION_INSTRUCTION)
    assert infer_messages(released[0])[-1]["content"].endswith(agentworld.EVALUATION_INSTRUCTION)


def test_our_lines_read_back_as_the_trajectory_with_the_instruction_cut(tmp_path):
    lines = _lines(_trajectory("search", SEARCH, RESULTS))
    path = tmp_path / "search_test.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    records = read_records(agentworldbench, path)
    assert [type(r) for r in records] == [Episode]  # both lines fold into one episode, nothing quarantined
    episode = records[0]
    assert len(episode.steps) == 2 and episode.env["instruction_suffix"] == agentworld.EVALUATION_INSTRUCTION
    assert [s.action.tool_name for s in episode.steps] == ["web_search", "web_extractor"]
    assert not any("Please analyze" in (s.action.raw or "") for s in episode.steps)
    assert [s.observation.text for s in episode.steps[1:]] + [episode.final_observation.text] == RESULTS
    # exported again, the line carries the instruction its benchmark line did
    again = _trajectory("search", SEARCH, RESULTS, env={"instruction_suffix": "\n\nPredict it."})
    assert _lines(again)[0]["prompt"][0].endswith("**Action:**\n```json\n" + agentworld.action_json(
        "search", SEARCH[0]) + "\n```\n\nPredict it.")


def test_search_records_open_with_the_simulation_instruction_their_source_recorded(tmp_path):
    env = {"inspect": {"target": ["The footer", "file metadata"]}}
    trajectory = _trajectory("search", SEARCH, RESULTS, task="Where does Parquet keep its metadata?", env=env)
    line = _lines(trajectory)[1]
    assert line["prompt"][0] == ("### Turn 1\n" + agentworld.action_block(SEARCH[0], "search") + "\n\n"
                                 "**Simulation Instruction:**\nTarget Query: Where does Parquet keep its metadata?\n"
                                 "Reference Answer: The footer\nfile metadata")
    assert "**Simulation Instruction:**" not in line["prompt"][1]
    # the benchmark's reader reads the query back as the task
    path = tmp_path / "search_test.jsonl"
    path.write_text(json.dumps(line) + "\n")
    assert read_records(agentworldbench, path)[0].task == "Where does Parquet keep its metadata?"
    # a query alone, and nothing at all where neither is recorded
    alone = _lines(_trajectory("search", SEARCH, RESULTS, task="parquet footer?"))[1]["prompt"][0]
    assert alone.endswith("```\n\n**Simulation Instruction:**\nTarget Query: parquet footer?")
    assert "Simulation" not in _lines(_trajectory("search", SEARCH, RESULTS))[1]["prompt"][0]
    # other domains never show it
    mcp = _lines(_trajectory("mcp", SEARCH, RESULTS, task="q", env=env))[1]["prompt"][0]
    assert "Simulation" not in mcp


def test_released_lines_read_and_exported_again_are_the_released_lines(tmp_path):
    """The released android sample through `ingest-all` and `export sft --format bench`: each line's turns up to
    its evaluated one, its responses and `current_prompt` are the released line's byte for byte, the phone
    tool's `<invoke name="phone">` calls (fenced as xml) and the JSONActions as the rows wrote them, the
    evaluated prompt ending with the same instruction."""
    lake = str(tmp_path / "lake")
    assert run_ingest(definition.load("ingest-all"), lake, [str(RELEASED.parent)], progress=False,
                      log=lambda line: None).status == "success"
    out = tmp_path / "out"
    assert cli.main(["export", "sft", "all", "--format", "bench", "--out", str(out), "--lake", lake,
                     "--split-ratios", "1,0,0"]) == 0
    ours = [json.loads(line) for path in out.rglob("*_train.jsonl") for line in path.read_text().splitlines()]
    released = [json.loads(line) for line in RELEASED.read_text().splitlines()]
    assert len(ours) == len(released) == 5
    for line in released:
        k = line["turn_idx"]
        match = [o for o in ours if o["turn_idx"] == k and o["response"][:k] == line["response"]]
        assert len(match) == 1, (line["id"], k)
        assert match[0]["prompt"][:k] == line["prompt"] and match[0]["current_prompt"] == line["current_prompt"]
    phone = [p for o in ours for p in o["prompt"] if '<invoke name="phone">' in p]
    assert phone and all('**Action:**\n```xml\n<invoke name="phone">' in p for p in phone)


def test_a_benchmark_search_row_read_back_keeps_its_simulation_instruction(tmp_path):
    """The bundled search sample's instruction (Target Query, Reference Answer, after the first action) comes
    back in the line exported from it."""
    bench = SAMPLES / "agentworld" / "bench" / "search_test.jsonl"
    row = json.loads(bench.read_text().splitlines()[-1])
    episode = read_records(agentworldbench, bench)[0]
    assert episode.env["reference_answer"] == "Phare de l'Île Vierge, 82.5 m"
    actions = [{"kind": "tool_call", "tool_name": s.action.tool_name, "arguments": s.action.arguments}
               for s in episode.steps]
    results = [s.observation.text for s in episode.steps[1:]] + [episode.final_observation.text]
    line = _lines(_trajectory("search", actions, results, task=episode.task, env=episode.env))[-1]
    assert line["prompt"][0] == row["prompt"][0] and line["current_prompt"] == row["current_prompt"]


def test_an_action_in_the_schema_s_form_reads_back_as_that_action(tmp_path):
    """An action no form of its domain holds (an android shell command, a drag's end point) is written in the
    schema's JSON form; the benchmark's reader reads it back as that action, not as a tool call."""
    actions = [{"kind": "command", "code": "am force-stop com.example"},
               {"kind": "drag", "x": 0.1, "y": 0.2, "x2": 0.3, "y2": 0.4, "element": '{"resource_id": "list"}'}]
    lines = _lines(_trajectory("android", actions, ["screen 1", "screen 2"], first_state="screen 0"))
    path = tmp_path / "android_test.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    steps = read_records(agentworldbench, path)[0].steps
    assert [(s.action.kind, s.action.code) for s in steps] == [("command", "am force-stop com.example"), ("drag", None)]
    assert (steps[1].action.x, steps[1].action.y2, json.loads(steps[1].action.element)) == (0.1, 0.4, {"resource_id": "list"})
