import json

import pytest

from tests.conftest import SAMPLES, episode_and_steps as _episode

BENCH = SAMPLES / "agentworld" / "bench"



def test_lines_of_one_trajectory_fold_into_one_episode(run, query):
    result = run("ingest-all", [BENCH])
    assert result.status == "success" and result.episodes == 2 and result.steps == 5 and result.quarantined == 0
    ep, steps = _episode(query, "terminal_test.jsonl")
    assert ep["source_format"] == "agentworldbench" and ep["domain"] == "terminal" and ep["platform"] == "linux"
    assert ep["task"] == "Count the lines of /app/data.csv without the header."
    env = json.loads(ep["env"])
    assert env["benchmark_id"] == 902115 and env["evaluated_turns"] == [1, 3] and env["total_turns"] == 3
    assert env["system_prompt"].startswith("# Role\n\nYou are a **Terminal World Model**")
    # turn 1's Current State is observation 0; response t (marker stripped) is observation t+1
    assert steps[0]["observation"]["kind"] == "terminal" and steps[0]["observation"]["text"] == "root@ad092d3df69c:/app#"
    first = steps[0]["action"]
    assert first["kind"] == "keystrokes" and first["text"] == "ls /app\n" and first["duration_s"] == 0.1
    assert first["raw"].startswith("### Turn 1\n**Current State:**")
    assert steps[1]["observation"]["text"] == "data.csv  run.sh\nroot@ad092d3df69c:/app#"
    assert steps[2]["action"]["text"] == "tail -n +2 /app/data.csv | wc -l\n"
    assert steps[2]["final_observation"]["text"] == "1200\nroot@ad092d3df69c:/app#"
    assert steps[-1]["is_last"] and not steps[-1]["is_terminal"]


def test_search_trajectory_gets_tool_calls_and_parsed_results(run, query):
    run("ingest-all", [BENCH])
    ep, steps = _episode(query, "search_test.jsonl")
    assert ep["domain"] == "search" and ep["num_steps"] == 2
    assert ep["task"] == "Which lighthouse is the tallest in France and how tall is it?"
    assert json.loads(ep["env"])["evaluated_turns"] == [1, 2]
    first = steps[0]["action"]
    assert first["kind"] == "tool_call" and first["tool_name"] == "web_search"
    assert json.loads(first["arguments"]) == {"queries": ["tallest lighthouse in France"]}
    assert steps[0]["observation"]["kind"] == "none"
    obs = steps[1]["observation"]
    assert obs["text"].startswith("[1] https://en.wikipedia.org/wiki/%C3%8Ele_Vierge_Lighthouse\nTitle:")
    assert not obs["text"].startswith("**Environment Observation:**") and "```" not in obs["text"]
    assert [r["title"] for r in json.loads(obs["ui_tree"])["results"]] == [
        "Île Vierge Lighthouse - Wikipedia", "Phare de l'île Vierge - Official site"]
    assert steps[1]["final_observation"]["text"].startswith("# Île Vierge Lighthouse")


def test_a_line_that_disagrees_with_its_trajectory_is_quarantined(run, query, tmp_path):
    lines = (BENCH / "terminal_test.jsonl").read_text().splitlines()
    bad = json.loads(lines[1])
    bad["response"][0] = "**Environment Observation:**\nsomething else"
    path = tmp_path / "in" / "terminal_test.jsonl"
    path.parent.mkdir()
    path.write_text("\n".join([lines[0], json.dumps(bad), "[1, 2]"]) + "\n")
    result = run("ingest-all", [path.parent])
    assert result.episodes == 1 and result.quarantined == 2
    rows = query("SELECT rule, line, reason FROM quarantine ORDER BY line")
    assert [(r["rule"], r["line"]) for r in rows] == [("conflicting_duplicate", 2), ("bad_record", 3)]
    assert rows[0]["reason"] == ("terminal_test.jsonl:2: sample 902115 turn 3 holds a different trajectory than "
                                 "its earlier lines (neither extends the other)")


INSTRUCTION = ("\n\nPlease analyze the input above and predict the realistic output/response that the environment "
               "would produce.\n\nFirst, think step by step to explain your reasoning. Then, provide the simulated "
               "environment observation wrapped strictly within the <predicted_observation></predicted_observation> tags.")


def _prefix_lines(order, instruction=""):
    """The bundled terminal trajectory as a file whose line k holds turns 1..k only (the evaluated turn and
    the ones before it), lines written in `order` of turns; `instruction` appended to each line's last prompt,
    as the released files do."""
    full = json.loads((BENCH / "terminal_test.jsonl").read_text().splitlines()[-1])
    lines = []
    for k in order:
        prompts = full["prompt"][:k]
        line = {**full, "prompt": prompts[:-1] + [prompts[-1] + instruction], "response": full["response"][:k],
                "turn_idx": k, "current_prompt": full["prompt"][k - 1], "total_turns": k}
        lines.append(json.dumps(line))
    return lines, full


def _write(tmp_path, lines):
    path = tmp_path / "in" / "terminal_test.jsonl"
    path.parent.mkdir()
    path.write_text("\n".join(lines) + "\n")
    return path.parent


@pytest.mark.parametrize("order", [[1, 2, 3], [3, 1, 2], [2, 3, 3, 1]], ids=["growing", "longest-first", "repeated"])
def test_lines_holding_growing_prefixes_fold_into_the_longest(run, query, tmp_path, order):
    lines, full = _prefix_lines(order)
    result = run("ingest-all", [_write(tmp_path, lines)])
    assert (result.episodes, result.steps, result.quarantined) == (1, 3, 0)
    ep, steps = _episode(query, "terminal_test.jsonl")
    assert [s["action"]["text"] for s in steps] == ["ls /app\n", "wc -l /app/data.csv\n",
                                                     "tail -n +2 /app/data.csv | wc -l\n"]
    assert steps[-1]["final_observation"]["text"] == "1200\nroot@ad092d3df69c:/app#"
    env = json.loads(ep["env"])
    assert env["evaluated_turns"] == sorted(order) and env["total_turns"] == 3


def test_growing_lines_with_the_evaluation_instruction_fold_into_one_trajectory(run, query, tmp_path):
    """Each line's last prompt ends with the instruction its later copies lack: still 3 steps, no conflict."""
    lines, _ = _prefix_lines([1, 2, 3], INSTRUCTION)
    result = run("ingest-all", [_write(tmp_path, lines)])
    assert (result.episodes, result.steps, result.quarantined) == (1, 3, 0)
    ep, steps = _episode(query, "terminal_test.jsonl")
    assert [s["action"]["text"] for s in steps] == ["ls /app\n", "wc -l /app/data.csv\n",
                                                     "tail -n +2 /app/data.csv | wc -l\n"]
    assert not any("Please analyze" in s["action"]["raw"] for s in steps)
    assert json.loads(ep["env"])["instruction_suffix"] == INSTRUCTION


def test_a_line_that_disagrees_with_the_prefix_before_it_is_quarantined(run, query, tmp_path):
    lines, _ = _prefix_lines([1, 2, 3])
    other = json.loads(lines[2])
    other["response"][0] = "**Environment Observation:**\nsomething else"  # turn 3's copy of turn 1 differs
    result = run("ingest-all", [_write(tmp_path, [lines[0], lines[1], json.dumps(other)])])
    assert (result.episodes, result.steps, result.quarantined) == (1, 2, 1)
    (row,) = query("SELECT rule, line FROM quarantine")
    assert (row["rule"], row["line"]) == ("conflicting_duplicate", 3)


def test_a_line_over_the_record_budget_is_quarantined_alone(run, query, tmp_path, monkeypatch):
    import ingest.source

    monkeypatch.setattr(ingest.source, "_DEFAULT", [ingest.source.Budgets(record_bytes=64 << 10)])
    lines = (BENCH / "terminal_test.jsonl").read_text().splitlines()
    big = json.loads(lines[-1])
    big["id"], big["response"][0] = 7, "x" * (100 << 10)
    path = tmp_path / "in" / "terminal_test.jsonl"
    path.parent.mkdir()
    path.write_text("\n".join([*lines, json.dumps(big)]) + "\n")
    result = run("ingest-all", [path.parent], stages=["ingest"])
    assert result.episodes == 1 and result.quarantined == 1
    row = query("SELECT rule, line, reason FROM quarantine")[0]
    assert row["rule"] == "budget_exceeded" and row["line"] == len(lines) + 1
    assert row["reason"].startswith(f"terminal_test.jsonl:{len(lines) + 1}: the line has ")
    assert row["reason"].endswith("over the record_bytes budget of 64 KiB (raise it with "
                                  "TRAJFORGE_BUDGET_RECORD_BYTES=<larger>)")
