"""One exported record per domain (`export sft --format bench`, over every bundled sample) held against the
benchmark's record layout for that domain: a reviewed golden per domain in
tests/transforms/export/golden/bench_layout/, each naming its evidence (the released rows the dataset viewer
shows, the reference's README record and prompts, a loader of the real files). Checked: the sections of turn 1
and of the later turns, in order; the action's fence; the response marker. What still differs is listed in
each golden with its reason, and every such difference is in the README."""

import json
import re
from pathlib import Path

import pytest

from pipelines import cli

from pipelines.infra import definition
from pipelines.infra.lake import Lake
from pipelines.infra.runner import run_ingest
from pipelines.infra.runs import open_catalog
from tests.conftest import REPO, SAMPLES
from transforms import agentworld
from transforms.browsergym_code import browsergym_call

LAYOUTS = REPO / "tests" / "transforms" / "export" / "golden" / "bench_layout"
SECTION = re.compile(r"^\*\*([A-Z][A-Za-z ]+):\*\*$", re.M)
FENCE = re.compile(r"\*\*Action:\*\*\n```([\w-]*)\n")


@pytest.fixture(scope="module")
def lake(tmp_path_factory) -> str:
    lake = str(tmp_path_factory.mktemp("bench-layout") / "lake")
    assert run_ingest(definition.load("ingest-all"), lake, [str(SAMPLES)], progress=False,
                      log=lambda line: None).status == "success"
    return lake


def _bench(lake: str, out: Path, *extra: str) -> list[dict]:
    assert cli.main(["export", "sft", "all", "--format", "bench", "--out", str(out), "--lake", lake,
                     "--split-ratios", "1,0,0", *extra]) == 0
    return [json.loads(line) for path in sorted(out.rglob("*_train.jsonl")) for line in path.read_text().splitlines()]


def _episodes(lake: str, where: str) -> set[str]:
    with open_catalog(Lake(lake), read_only=True) as cat:
        return {r[0] for r in cat.con.execute(f"SELECT episode_id FROM episodes WHERE {where}").fetchall()}


@pytest.fixture(scope="module")
def records(lake, tmp_path_factory) -> list[dict]:
    """The bench export of every bundled sample, less the benchmark's own rows read back (the layout is held
    against what our sources become)."""
    bench = _episodes(lake, "source_format = 'agentworldbench'")
    rows = _bench(lake, tmp_path_factory.mktemp("bench") / "out")
    return [r for r in rows if r["source_id"].split(":")[0] not in bench]


def _layout(domain: str) -> dict:
    return json.loads((LAYOUTS / f"{domain}.json").read_text())


def _sections(prompt: str) -> list[str]:
    """The prompt's own section headers, in order (the state's text is not searched: it ends at the action)."""
    head, _, _ = prompt.partition("**Action:**\n")
    # the phone tool's state opens with a bold header of its own: part of the state, not a section
    return [s for s in SECTION.findall(head) if s != "Current Phone State"] + ["Action"]


def _after_action(prompt: str) -> list[str]:
    """The section headers after the action's fence (the evaluation instruction left out)."""
    tail = prompt.replace(agentworld.EVALUATION_INSTRUCTION, "").partition("**Action:**\n")[2]
    return SECTION.findall(tail.split("\n```", 1)[-1])


def _matches(found: list[str], expected: list[str]) -> bool:
    """`found` is `expected` with the optional sections (marked `?`) present or not, in order."""
    pattern = "".join(f"({re.escape(s[:-1])}\\n)?" if s.endswith("?") else f"{re.escape(s)}\\n" for s in expected)
    return re.fullmatch(pattern, "".join(f"{s}\n" for s in found)) is not None


@pytest.mark.parametrize("domain", agentworld.DOMAINS)
def test_one_record_per_domain_follows_the_benchmark_layout(records, domain):
    layout = _layout(domain)
    # a difference the golden lists may say how our first turn differs (and why)
    first = next((d["ours_first_turn"] for d in layout["differences"] if "ours_first_turn" in d), layout["first_turn"])
    # a run that recorded only a screenshot of its first screen has no state text to show there (the README's
    # screenshot-only states): such a record shows its first turn without one, the layout is checked on the others
    screenshot_first = [r for r in records if r["task"] == domain and "Current State" in first
                        and "**Current State:**" not in r["prompt"][0]]
    assert all(_sections(r["prompt"][0]) == [s.rstrip("?") for s in first if s != "Current State"]
               for r in screenshot_first if r["turn_idx"] >= 1)
    candidates = [r for r in records if r["task"] == domain and r["turn_idx"] >= 2 and r not in screenshot_first]
    record = min(candidates, key=lambda r: (len(json.dumps(r)), r["source_id"]))
    prompts = record["prompt"][:record["turn_idx"]]
    assert _matches(_sections(prompts[0]), first), (domain, _sections(prompts[0]))
    for prompt in prompts[1:]:
        assert _matches(_sections(prompt), layout["later_turns"]), (domain, _sections(prompt))
    # what follows the action (search's Simulation Instruction, in turn 1 only)
    assert _matches(_after_action(prompts[0]), layout.get("first_turn_after_action", [])), domain
    assert not any(_after_action(p) for p in prompts[1:]), domain
    excused = any("action form" in d["what"] for d in layout["differences"])
    fences = layout["benchmark_action_fences"] + [f for d in layout["differences"] for f in d.get("ours_action_fences", [])]
    for prompt in prompts:
        assert FENCE.search(prompt).group(1) in fences or excused, domain
    assert all(r.startswith(agentworld.OBSERVATION_MARKER + "\n") for r in record["response"])


def test_the_task_instruction_opens_the_records_where_the_benchmark_gives_it(records):
    """android and os records of a trajectory with a task open with it; the other domains never show one."""
    shown = {r["task"] for r in records if r["prompt"][0].startswith("### Turn 1\n**Task Instruction:**\n")}
    assert shown == {"os", "android"} & shown and "os" in shown
    assert not any("**Task Instruction:**" in p for r in records if r["task"] not in ("android", "os")
                   for p in r["prompt"])


@pytest.mark.parametrize("domain", agentworld.DOMAINS)
def test_every_remaining_difference_is_in_the_readme(domain):
    readme = (REPO / "README.md").read_text()
    for difference in _layout(domain)["differences"]:
        assert difference["what"] in readme and difference["why"]


def test_http_captures_are_kept_out_of_web_unless_named(lake, records, tmp_path):
    """HAR and DevTools-log episodes hold HTTP exchanges, not page states: not exported as web unless
    `--domains web-http` names them (then they are web records)."""
    http = _episodes(lake, "source_format IN ('har', 'cdp')")
    assert http and any(r["task"] == "web" for r in records)
    assert not any(r["source_id"].split(":")[0] in http for r in records)
    assert not any(r["source_id"].split(":")[0] in http for r in _bench(lake, tmp_path / "web", "--domains", "web"))
    named = _bench(lake, tmp_path / "web-http", "--domains", "web-http")
    assert named and {r["source_id"].split(":")[0] for r in named} <= http and {r["task"] for r in named} == {"web"}
    manifest = json.loads((tmp_path / "web-http" / "manifest.json").read_text())
    assert manifest["skipped"]["domain_not_selected"] > 0


def test_terminal_records_show_the_shell_screen(lake, records, tmp_path):
    """Terminus's wrappers are cut from every terminal state and observation, and its run (whose first
    message is instructions) starts at its first screen; the turns before it are counted in the manifest."""
    terminal = [r for r in records if r["task"] == "terminal"]
    assert terminal and not any("New Terminal Output:" in text or "Current terminal state:" in text
                                for r in terminal for text in r["prompt"] + r["response"])
    terminus = _episodes(lake, "source_uri LIKE '%terminus_2/hello-world-context-summarization.trajectory.json'")
    first = [r for r in terminal if r["source_id"].split(":")[0] in terminus and r["turn_idx"] == 1]
    assert first and all(r["prompt"][0].startswith("### Turn 1\n**Current State:**\nroot@CONTAINER_ID:/app# mkdir "
                                                   "test_dir\n\n**Action:**") for r in first)
    _bench(lake, tmp_path / "out")
    assert json.loads((tmp_path / "out" / "manifest.json").read_text())["skipped"]["before_first_screen"] >= 1


def test_web_actions_are_browsergym_calls_where_one_says_them(lake, records):
    """Every web action is a BrowserGym call fenced as text, the benchmark's form, but the Playwright API calls
    that are no browser action (kept in the schema's JSON form, as the web golden lists)."""
    web = [r for r in records if r["task"] == "web"]
    formats = {}
    with open_catalog(Lake(lake), read_only=True) as cat:
        for episode, source_format in cat.con.execute("SELECT episode_id, source_format FROM episodes").fetchall():
            formats[episode] = source_format
    actions = {}
    for record in web:
        for turn, prompt in enumerate(record["prompt"]):
            body = prompt.split("**Action:**\n", 1)[1]
            actions[(record["source_id"].split(":")[0], turn)] = body
    calls = {formats[e] for (e, _), body in actions.items() if body.startswith("```text\n")}
    assert calls >= {"browsergym", "playwright_trace", "browser_use"}, calls
    for (episode, _), body in actions.items():
        if body.startswith("```json\n"):
            value = json.loads(body[len("```json\n"):body.index("\n```")])
            assert value["kind"] == "code" and browsergym_call(value) is None, (formats[episode], value)
        else:
            assert re.fullmatch(r"```text\n[a-z_]+\(.*\)\n```(\n\n.*)?", body, re.S), body


def test_each_line_asks_what_the_released_lines_ask_and_reads_back_as_its_trajectory(records, tmp_path):
    """The evaluated turn's prompt ends with the released lines' evaluation instruction (`current_prompt`, the
    judge's, without it); the benchmark's reader folds a trajectory's lines into one episode with all its turns,
    nothing quarantined, as it does the released files."""
    for record in records:
        k = record["turn_idx"]
        assert record["prompt"][k - 1] == record["current_prompt"] + agentworld.EVALUATION_INSTRUCTION
        assert not any(agentworld.EVALUATION_INSTRUCTION in p for i, p in enumerate(record["prompt"]) if i != k - 1)
    path = tmp_path / "lines" / "bench_test.jsonl"
    path.parent.mkdir()
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    lake = str(tmp_path / "lake")
    result = run_ingest(definition.load("ingest-all"), lake, [str(path.parent)], progress=False, log=lambda line: None)
    trajectories = {}
    for record in records:
        trajectories[record["id"]] = max(trajectories.get(record["id"], 0), len(record["prompt"]))
    assert result.status == "success"
    with open_catalog(Lake(lake), read_only=True) as cat:
        steps = dict(cat.con.execute("SELECT CAST(json_extract(e.env, '$.benchmark_id') AS BIGINT), count(*) "
                                     "FROM episodes e JOIN steps s USING (episode_id) GROUP BY 1").fetchall())
        rules = [r[0] for r in cat.con.execute("SELECT rule FROM quarantine").fetchall()]
    # no line conflicts with its trajectory's others, and every action reads back as one its domain uses (an
    # action in the schema's own form, such as an android shell command, too)
    assert rules == [] and steps == trajectories
