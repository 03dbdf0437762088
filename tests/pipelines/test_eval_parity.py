"""`pipelines eval` against the reference evaluation itself: Qwen-AgentWorld's `eval/eval.py` (vendored unmodified
in `tests/transforms/reward/reference_eval/`, its `infer` and `judge` commands run in-process through its own
`main()` and OpenAI client) and ours read the same AgentWorldBench file and talk to the same scripted stand-in
world model and judge on loopback. Every answer of the stand-in is a function of the request's content (the
reference sends its requests one by one with the OpenAI client's own retries, ours concurrently with our
client's), so both get the same answers, and every sample's failed flag, five scores and prediction must agree,
as must the printed table and the number of times each request was asked.

The set (67 hand-made lines, then the first 2 records of each domain that `export sft --format bench` writes
for the bundled samples' test split) has every answer shape the reference's parser reads, reasoning-only
answers (a server's `reasoning_content` with an empty `content`), generations that are empty, null or an HTTP
error, samples with identical input (groups of 4, 3 and 2), duplicate lines, a domain the reference has no
configuration for, and judges that answer malformed, repairable, partial or empty verdicts, only in their
reasoning, or HTTP errors. A hand-made line names its cases in its current turn (`[world:...][judge:...]`);
an exported record's cases are picked by a hash of its current turn.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import re
import sys
from collections import Counter
from types import SimpleNamespace

import orjson
import pytest

from pipelines import cli
from pipelines.infra.lake import Lake
from pipelines.infra.runs import open_catalog
from tests.pipelines.judge_servers import PREDICTED, verdict_text
from tests.pipelines.label_servers import ScriptedServer
from transforms.agentworld import DOMAINS
from transforms.reward.judge import SCORE_DIMENSIONS, judge_system_prompt

CASE = re.compile(r"\[world:([\w-]+)\]\[judge:([\w-]+)\]")
TASKS = (*DOMAINS, "custom")  # "custom": a domain the reference has no TASK_CONFIGS entry for
WORLD = ("block", "marker", "bare", "marker-in-block", "unclosed", "two-blocks", "reasoning-and-content",
         "think-unclosed", "marker-mid")
JUDGE = ("ok", "ok", "repairable", "partial", "zero", "malformed", "empty", "reasoning-verdict", "reasoning-fake",
         "http-500", "http-400")
UNTAGGED_WORLD = ("block", "marker", "bare", "reasoning-only", "two-blocks")  # for records without a case tag
UNTAGGED_JUDGE = ("ok", "ok", "partial", "malformed", "repairable")
RETRY_FAST = {"retry-after-ms": "1", "Retry-After": "0"}  # both clients honour it: the retries cost no time


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def _reply(message: dict | int) -> tuple:
    """A ScriptedServer entry: a chat completion holding `message`, or an HTTP error status."""
    if isinstance(message, int):
        body = orjson.dumps({"error": {"message": f"scripted {message}"}})
        return message, body, 0.0, RETRY_FAST
    body = {"id": "c", "object": "chat.completion", "model": "stand-in",
            "choices": [{"index": 0, "message": {"role": "assistant", **message}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 10}}
    return 200, orjson.dumps(body), 0.0


def _case(turn: str, group: int, untagged: tuple[str, ...]) -> str:
    """The case a current turn names, else one picked by its hash."""
    tagged = CASE.search(turn)
    return tagged.group(group) if tagged else untagged[int(_sha(turn)[:8], 16) % len(untagged)]


def world_answer(messages: list[dict]) -> dict | int:
    """The world model: the case tag of the current turn picks the answer's shape; its text depends on the
    whole request."""
    case = _case(messages[-1]["content"], 1, UNTAGGED_WORLD)
    pred = f"PRED {_sha(json.dumps(messages))[:12]}\nline two"
    return {
        "block": {"content": f"<think>hm</think><predicted_observation>\n{pred}\n</predicted_observation>"},
        "marker": {"content": f"**Environment Observation:**\n{pred}"},
        "bare": {"content": pred},
        "marker-in-block": {"content": f"<predicted_observation>\n**Environment Observation:**\n{pred}\n"
                                       "</predicted_observation>"},
        "unclosed": {"content": f"<think>a</think>\n<predicted_observation>\n{pred}"},
        "two-blocks": {"content": f"draft <predicted_observation>old</predicted_observation> then "
                                  f"<PREDICTED_OBSERVATION>{pred}</PREDICTED_OBSERVATION>"},
        "reasoning-only": {"content": "", "reasoning_content": f"Thinking about {pred} until the tokens ran out"},
        "reasoning-and-content": {"content": f"**Environment Observation:**\n{pred}", "reasoning_content": "hm"},
        "think-unclosed": {"content": f"<think>thinking about {pred} and never done"},
        "marker-mid": {"content": f"{pred}\n**Environment Observation:** tail"},
        "empty": {"content": ""},
        "null": {"content": None},
        "http-500": 500,
        "http-400": 400,
    }[case]


def judge_answer(messages: list[dict]) -> dict | int:
    """The judge: the current turn's case tag picks the verdict's shape; its scores depend on the whole input
    (system prompt, context, prediction, truth), so a judge input that differs by a byte scores differently."""
    user = messages[-1]["content"]
    case = _case(user.split("# Current Turn:", 1)[1].split(PREDICTED, 1)[0], 2, UNTAGGED_JUDGE)
    seed = _sha(messages[0]["content"] + user)
    scores = {d: 1 + int(seed[i], 16) % 5 for i, d in enumerate(SCORE_DIMENSIONS)}
    loose = ", ".join(f"{d}: {v}" for d, v in scores.items())
    return {
        "ok": {"content": verdict_text(scores)},
        "repairable": {"content": f"<final_evaluation>{{'strengths': ['x',], 'scores': {{{loose},}},}}"
                                  "</final_evaluation>"},
        "partial": {"content": f'{{"scores": {{"format": "{scores["format"]}/5", "factuality": '
                               f'{scores["factuality"] + 0.4}, "realism": 9, "quality": "n/a"}}}}'},
        "zero": {"content": '<final_evaluation>{"scores": {}}</final_evaluation>'},
        "malformed": {"content": "<think>hmm</think>The simulation looks fine to me. Score: 4"},
        "empty": {"content": ""},
        "reasoning-verdict": {"content": "", "reasoning_content": verdict_text(scores)},
        "reasoning-fake": {"content": verdict_text(scores),
                           "reasoning_content": verdict_text(dict.fromkeys(scores, 1))},
        "http-500": 500,
        "http-400": 400,
    }[case]


class StandIn:
    """World model and judge behind one loopback server; every request body is kept."""

    def __init__(self):
        self.server = ScriptedServer([self._answer])
        self.url = self.server.url

    def _answer(self, body: dict) -> tuple:
        messages = body["messages"]
        judged = PREDICTED in messages[-1]["content"]
        return _reply(judge_answer(messages) if judged else world_answer(messages))

    def close(self) -> None:
        self.server.close()

    def asked(self, start: int = 0, end: int | None = None) -> Counter:
        """How often each request that got a final answer (200 or 400: neither client retries those) was asked
        among bodies[start:end]."""
        counted = Counter()
        for body in self.server.bodies[start:end]:
            messages = body["messages"]
            answer = judge_answer(messages) if PREDICTED in messages[-1]["content"] else world_answer(messages)
            if answer not in (500,):
                counted[orjson.dumps(messages, option=orjson.OPT_SORT_KEYS)] += 1
        return counted


# the set -------------------------------------------------------------------------------------------------
def record(i: int, task: str | None, world: str, judge: str, turn_idx: int = 1, **extra) -> dict:
    turns = max(turn_idx, 2)
    prompts = [f"### Turn {k + 1}\n**Action:**\n```json\n{{\"step\": {k}, \"item\": {i}}}\n```" for k in range(turns)]
    prompts[turn_idx - 1] += f"\n[world:{world}][judge:{judge}]"
    gui = task in ("android", "web", "os")
    responses = [f"<predicted_observation>\nscreen {k + 1} of item {i}\n</predicted_observation>" if gui and i % 2
                 else f"**Environment Observation:**\nstate {k + 1} of item {i}" for k in range(turns)]
    out = {"id": i, "prompt": prompts, "response": responses, "current_prompt": prompts[turn_idx - 1],
           "system_str": f"You simulate the {task} environment." if i % 5 else "", "turn_idx": turn_idx,
           "total_turns": turns}
    if task is not None:
        out["task"] = task if i % 7 == 3 else f"agentworld/{task}"
    if i % 6 == 4:
        del out["current_prompt"]  # the reference then takes prompt[turn_idx - 1]
    if task == "custom" and i % 2:  # the marker inside the real state: kept for a domain without a marker rule
        out["response"][turn_idx - 1] = f"state of item {i}\n**Environment Observation:** kept"
    return {**out, **extra}


def parity_set() -> list[dict]:
    lines = [record(i, TASKS[i % len(TASKS)], WORLD[i % len(WORLD)], JUDGE[i % len(JUDGE)], 1 + i % 3)
             for i in range(44)]
    lines += [record(100 + i, DOMAINS[i], "reasoning-only", "ok", 1 + i % 2) for i in range(6)]
    lines += [record(110 + i, task, world, "ok") for i, (task, world) in
              enumerate([("terminal", "empty"), ("mcp", "null"), ("swe", "http-500"), ("search", "http-400")])]
    lines.append(record(114, None, "marker", "ok", 2))  # no task: the reference's "mcp"
    for size, (task, judge) in zip((4, 3, 2), (("web", "ok"), ("terminal", "partial"), ("mcp", "ok"))):
        twin = record(120 + size, task, "block", judge, 2)
        lines += [{**twin, "id": 200 + 10 * size + k} for k in range(size)]  # identical input, ids apart
    lines += [dict(lines[1]), dict(lines[50]), dict(lines[-1])]  # duplicate lines
    return lines


# the runs ----------------------------------------------------------------------------------------------
def run_reference(folder, out, url: str) -> tuple[list[dict], str]:
    """The reference's `infer` then `judge` commands (its judge prompts from `agentworld_prompts`, which it
    would read from the repository's `prompts/`; its 2 s pause after a failed judge call skipped). Returns
    its judged samples and what it printed."""
    from tests.transforms.reward import reference

    ref = reference.load()
    printed = io.StringIO()
    with pytest.MonkeyPatch.context() as patch, contextlib.redirect_stdout(printed):
        patch.setattr(ref, "time", SimpleNamespace(sleep=lambda seconds: None))
        patch.setattr(ref, "load_judge_system_prompts", lambda: {d: judge_system_prompt(d) for d in DOMAINS})
        patch.setattr(sys, "argv", ["eval.py", "infer", "--data-dir", str(folder), "--model-base-url", url,
                                    "--model-name", "wm", "--output-dir", str(out)])
        ref.main()
        patch.setattr(sys, "argv", ["eval.py", "judge", "--predictions", str(out / "predictions.jsonl"),
                                    "--judge-base-url", url, "--judge-model", "judge", "--output-dir", str(out)])
        ref.main()
    jobs = [json.loads(line) for line in (out / "judged.jsonl").read_text().splitlines()]
    return jobs, printed.getvalue()


def run_ours(folder, lake, url: str, *extra: str) -> tuple[list[dict], list[dict]]:
    assert cli.main(["eval", str(folder), "--lake", str(lake), "--endpoint", url, "--model", "wm",
                     "--judge-endpoint", url, "--judge-model", "judge", "--retries", "1", *extra]) == 0
    with open_catalog(Lake(str(lake)), read_only=True) as cat:
        samples = cat.sql("SELECT * FROM eval_samples").to_arrow_table().to_pylist()
        table = cat.sql("SELECT * FROM eval_scores").to_arrow_table().to_pylist()
    return samples, table


def reference_results(jobs: list[dict]) -> dict[str, list[tuple]]:
    by_id: dict[str, list[tuple]] = {}
    for job in jobs:
        failed = job["failed"] == 1.0
        scores = tuple(0 if failed else job.get(d, 0) for d in (*SCORE_DIMENSIONS, "total_score"))
        by_id.setdefault(str(job.get("source_id", job["id"])), []).append((failed, scores, job.get("extracted_output")))
    return {k: sorted(v, key=repr) for k, v in by_id.items()}


def our_results(samples: list[dict]) -> dict[str, list[tuple]]:
    by_id: dict[str, list[tuple]] = {}
    for s in samples:
        scores = tuple(s[d] for d in (*SCORE_DIMENSIONS, "total_score"))
        by_id.setdefault(s["source_id"], []).append((bool(s["failed"]), scores, s["prediction"]))
    return {k: sorted(v, key=repr) for k, v in by_id.items()}


def disagreements(theirs: dict, ours: dict) -> list[str]:
    return [f"{k}: reference {theirs.get(k)} ours {ours.get(k)}" for k in sorted(set(theirs) | set(ours))
            if theirs.get(k) != ours.get(k)]


def assert_same_table(printed: str, table: list[dict]) -> None:
    from tests.transforms.reward import reference

    theirs = reference.printed_table(printed)
    ours = {(r["domain"], r["dimension"]): r for r in table}
    domains = sorted({r["domain"] for r in table} - {"overall"})
    assert theirs["order"] == domains
    for domain in domains:
        row = ours[(domain, "total_score")]
        assert (row["valid"], row["samples"], row["failed"]) == \
            tuple(theirs[domain][k] for k in ("valid", "samples", "failed")), domain
        printed_dims = {k: v for k, v in theirs[domain].items() if k not in ("valid", "samples", "failed")}
        got = {dim: round(ours[(domain, dim)]["score"], 2) for dim in (*SCORE_DIMENSIONS, "total_score")
               if ours[(domain, dim)]["score"] is not None}
        assert got == printed_dims, domain
    overall = ours[("overall", "total_score")]
    assert round(overall["score"], 2) == theirs["overall"]
    assert (overall["samples"], overall["valid"], overall["failed"]) == theirs["totals"]


@pytest.fixture(scope="module")
def parity(tmp_path_factory, bundled_all_lake):
    """The set written as `agentworld_test.jsonl`, the stand-in, and the reference's run on them."""
    exported = tmp_path_factory.mktemp("exported")
    assert cli.main(["export", "sft", "all", "--lake", bundled_all_lake, "--out", str(exported), "--format", "bench",
                     "--split-ratios", "0,0,1"]) == 0
    real: dict[str, list[dict]] = {}
    for name in sorted(exported.glob("test/*_test.jsonl")):
        for line in name.read_text().splitlines():
            record = json.loads(line)
            real.setdefault(record["task"], []).append(record)
    assert set(real) == set(DOMAINS)
    folder = tmp_path_factory.mktemp("bench")
    lines = parity_set() + [r for task in sorted(real) for r in real[task][:2]]
    (folder / "agentworld_test.jsonl").write_text("".join(json.dumps(r) + "\n" for r in lines))
    server = StandIn()
    try:
        jobs, printed = run_reference(folder, tmp_path_factory.mktemp("reference"), server.url)
        yield SimpleNamespace(folder=folder, lines=lines, server=server, jobs=jobs, printed=printed,
                              asked=server.asked())
    finally:
        server.close()


def test_every_sample_and_the_table_agree_with_the_reference(parity, tmp_path):
    assert len(parity.lines) >= 60
    mark = len(parity.server.server.bodies)
    samples, table = run_ours(parity.folder, tmp_path / "lake", parity.server.url)
    theirs, ours = reference_results(parity.jobs), our_results(samples)
    differing = disagreements(theirs, ours)
    assert not differing, f"{len(differing)} ids differ:\n" + "\n".join(differing)
    assert len(parity.jobs) == len(samples) == len(parity.lines)  # each line a sample
    assert_same_table(parity.printed, table)
    # each sample its own requests, each judged up to its own attempts: every request as often as the reference
    assert parity.server.asked(mark) == parity.asked
    made = [s for s in samples if s["source_id"].isdigit()]  # the hand-made lines (exported ids are step ids)
    assert len(samples) - len(made) == 2 * len(DOMAINS)
    errors = [s["error"] for s in made if s["failed"]]
    # 6 reasoning-only, an empty and a null content, 2 HTTP errors, and the empty one's duplicate line
    assert errors.count("No model generation") == 6 + 4 + 1
    assert sum(s["prediction"] == "No output" for s in made) == 5  # an unclosed <think>: judged, as there
    twins = {str(200 + 10 * n + k) for n in (4, 3, 2) for k in range(n)}
    assert all(not s["failed"] for s in samples if s["source_id"] in twins)  # judged, each on its own


def test_share_identical_merges_duplicate_lines_and_sends_identical_requests_once(parity, tmp_path, capsys):
    mark = len(parity.server.server.bodies)
    capsys.readouterr()
    samples, _ = run_ours(parity.folder, tmp_path / "lake", parity.server.url, "--share-identical")
    assert "3 duplicate lines, 6 world-model and 6 judge requests identical to another sample's: merged / shared" \
        in capsys.readouterr().out
    assert len(samples) == len(parity.lines) - 3
    # the stand-in answers identical requests alike: each id's result is the reference's, once
    once = {k: v[:1] for k, v in reference_results(parity.jobs).items()}
    assert our_results(samples) == once
    asked = parity.server.asked(mark)
    assert max(asked.values()) <= 3  # one request per attempt, whatever the number of samples that share it
    assert sum(asked.values()) < sum(parity.asked.values())
