"""What a world model is trained on and asked, read against each domain's own system prompt, over the
bundled samples of every domain: every SFT record of the export and every labeler request.

- inputs: no placeholder left; a tool domain lists its tools (never an empty list); os and android show the
  task in turn 1 (where the benchmark's rows give it);
- state: the GUI domains (android, web, os) show `**Current State:**` in every turn after the first, as the
  benchmark's android rows do; the others in the record's first turn only;
- action form: os a fenced Python block; swe, mcp, search a `{"name", "arguments"}` tool call, every turn;
- target form: the `<predicted_observation>` block where the prompt demands it (android, web, os), the
  `**Environment Observation:**` marker elsewhere; never empty (a silent command is `(no output)`);
- layout: turns numbered from 1 in every record, also when a budget trims history.
One record per domain is checked in as a golden file (tests/transforms/export/golden/agentworld/), reviewed
against the domain's prompt.
"""

import json
import re
from pathlib import Path

import pytest

from ingest.android.bench_actions import bench_android_action
from pipelines import cli
from pipelines.infra import definition
from pipelines.stages.label import LabelOptions, label
from pipelines.infra.lake import Lake
from pipelines.infra.runner import run_ingest
from tests import goldens
from tests.conftest import SAMPLES
from transforms import agentworld
from transforms.label.parse import parse_output

GOLDEN = Path(__file__).resolve().parent.parent / "transforms" / "export" / "golden" / "agentworld"
TOOL_DOMAINS = ("swe", "mcp", "search")
BLOCK_DOMAINS = ("android", "web", "os")
GUI_DOMAINS = ("android", "web", "os")
TASK_DOMAINS = ("android", "os")


@pytest.fixture(scope="module")
def lake(tmp_path_factory):
    lake = str(tmp_path_factory.mktemp("fidelity") / "lake")
    result = run_ingest(definition.load("ingest-all"), lake, [str(SAMPLES)], progress=False, log=lambda line: None)
    assert result.status == "success"
    return lake


def _records(lake: str, out: Path, *extra: str) -> tuple[list[dict], dict]:
    assert cli.main(["export", "sft", "all", "--out", str(out), "--lake", lake, *extra]) == 0
    manifest = json.loads((out / "manifest.json").read_text())
    records = [json.loads(line) for s in manifest["shards"] for line in (out / s["path"]).read_text().splitlines()]
    return records, manifest


def _check_messages(domain: str, messages: list[dict], task_expected: bool) -> None:
    """The prompt's contract on one request (system .. final user turn)."""
    system, turns = messages[0]["content"], messages[1:]
    assert "{tool_definitions}" not in system and "{demonstrations}" not in system
    if domain in TOOL_DOMAINS:
        listed = system.split("You can simulate the following tools:", 1)[-1] if domain != "search" else system
        assert re.search(r'"name": "[^"]+"', listed), f"{domain}: no tool listed"
    users = [m["content"] for m in turns if m["role"] == "user"]
    numbers = [int(n) for u in users for n in re.findall(r"^### Turn (\d+)$", u, re.M)]
    assert numbers == list(range(1, len(users) + 1))
    for i, user in enumerate(users):
        action = user.split("**Action:**\n", 1)[1]
        # search's Simulation Instruction follows the first action (the prompt's third input), nowhere else
        action, instruction = (action.split("\n\n**Simulation Instruction:**\nTarget Query: ", 1) + [None])[:2]
        assert instruction is None or (domain == "search" and i == 0), (domain, i)
        if domain == "os":
            assert action.startswith("```python\n") and action.endswith("\n```")
        elif domain == "android" and action.startswith(("```text\n", "```xml\n")):
            # a DroidBot source's action as DroidBot's event text, as the benchmark's DroidBot rows give it (and
            # a benchmark phone-tool row's `<invoke name="phone">`, as it gave it): the reader of those rows reads
            # it as a known action
            body = action.split("\n", 1)[1][:-len("\n```")]
            assert action.endswith("\n```") and bench_android_action(body, None, body) is not None, body
        elif domain == "web" and action.startswith("```text\n"):
            # a BrowserGym call, the benchmark's web action form: one call, `name(args)`
            assert re.fullmatch(r"```text\n[a-z_]+\(.*\)\n```", action, re.S), action
        else:
            assert action.startswith("```json\n") and action.endswith("\n```")
            value = json.loads(action[len("```json\n"):-len("\n```")])
            if domain in TOOL_DOMAINS:
                assert set(value) == {"name", "arguments"} and isinstance(value["arguments"], dict)
        assert ("**Task Instruction:**\n" in user) == (i == 0 and task_expected)
        if i > 0:
            assert ("**Current State:**\n" in user) == (domain in GUI_DOMAINS), f"{domain} turn {i + 1}"
    for m in turns:
        if m["role"] == "assistant":
            _check_target(domain, m["content"])


def _check_target(domain: str, target: str) -> None:
    if domain in BLOCK_DOMAINS:
        assert target.startswith("<predicted_observation>\n") and target.endswith("\n</predicted_observation>")
        assert target.count("<predicted_observation>") == 1
    else:
        assert target.startswith(agentworld.OBSERVATION_MARKER + "\n")
    parsed = parse_output(target)  # the reference's parser reads back exactly the observation
    assert parsed.failure is None and parsed.observation is not None


def test_every_sft_record_reads_correctly_against_its_prompt(lake, tmp_path):
    records, manifest = _records(lake, tmp_path / "sft")
    domains = {r["domain"] for r in records}
    assert domains == set(agentworld.DOMAINS)
    for r in records:
        task = r["domain"] in TASK_DOMAINS and bool(_task_of(lake, r["id"]))
        _check_messages(r["domain"], r["messages"][:-1], task)
        _check_target(r["domain"], r["messages"][-1]["content"])


def test_one_golden_record_per_domain(lake, tmp_path):
    """The shortest record with one turn of history whose action acts on the environment (not a chat
    message to a user, nor a final answer: no keystrokes), per domain (tests/goldens.py: a missing one fails with
    the command that writes it)."""
    records, _ = _records(lake, tmp_path / "sft")
    bench = _released_rows(lake)  # the released benchmark's rows (there for the reader's tests) pick no golden
    for domain in agentworld.DOMAINS:
        candidates = [r for r in records if r["domain"] == domain and len(r["messages"]) == 5
                      and '"name": "message"' not in r["messages"][3]["content"]
                      and not r["messages"][3]["content"].endswith("```json\n[]\n```")
                      and r["id"].split(":")[0] not in bench]
        chosen = min(candidates, key=lambda r: (len(json.dumps(r)), r["id"]))
        goldens.check_json(GOLDEN / f"{domain}.json", chosen, indent=1, sort_keys=True)


def test_a_budget_keeps_every_record_numbered_from_1_and_reports_what_does_not_fit(lake, tmp_path, capsys):
    records, manifest = _records(lake, tmp_path / "sft-4k", "--max-tokens", "4096")
    out = capsys.readouterr().out
    trimmed = [r for r in records if "earlier turn" in r["messages"][1]["content"]]
    assert trimmed  # some history was cut, and said so in one line before the first turn
    for r in records:
        _check_messages(r["domain"], r["messages"][:-1],
                        r["domain"] in TASK_DOMAINS and bool(_task_of(lake, r["id"])))
        assert re.match(r"(\(\d+ earlier turns? of this trajectory not shown\)\n\n)?### Turn 1\n",
                        r["messages"][1]["content"])
    # the search prompt alone is ~7.4k tokens: no search record fits, and that is said loudly
    assert manifest["system_prompt_over_budget"]["search"] > 4096
    assert "search" not in {r["domain"] for r in records}
    assert "WARNING search: its system prompt alone is" in out


def test_every_labeler_request_reads_correctly_against_its_prompt(lake, tmp_path, capsys):
    requests = tmp_path / "requests.jsonl"
    with requests.open("w") as f:
        result = label(Lake(lake), None, "all", LabelOptions(model="m", branch_points="every", dry_run=True), "dry",
                       log=lambda line: None, out=f)
    bodies = [json.loads(line)["body"] for line in requests.read_text().splitlines()]
    assert 0 < len(bodies) <= result.requests  # identical requests (duplicated episodes) are printed once
    seen, with_task = set(), set()
    for body in bodies:
        domain = _domain_of_prompt(body["messages"][0]["content"])
        seen.add(domain)
        task = "**Task Instruction:**\n" in body["messages"][1]["content"]
        _check_messages(domain, body["messages"], task)
        if task:
            with_task.add(domain)
    assert seen == set(agentworld.DOMAINS) and with_task == set(TASK_DOMAINS)


def _domain_of_prompt(system: str) -> str:
    for domain in agentworld.DOMAINS:
        if system.startswith(agentworld._template(domain).split("{", 1)[0][:200]):
            return domain
    raise AssertionError("unknown system prompt")


def _task_of(lake: str, step_id: str) -> str | None:
    from pipelines.infra.runs import open_catalog

    with open_catalog(Lake(lake), read_only=True) as cat:
        rows = cat.con.execute("SELECT task FROM episodes WHERE episode_id = ?", [step_id.split(":")[0]]).fetchall()
    return rows[0][0] if rows else None


def _released_rows(lake: str) -> set[str]:
    from pipelines.infra.runs import open_catalog

    with open_catalog(Lake(lake), read_only=True) as cat:
        rows = cat.con.execute("SELECT episode_id FROM episodes WHERE source_uri LIKE '%agentworld/released/%'"
                               ).fetchall()
    return {row[0] for row in rows}
