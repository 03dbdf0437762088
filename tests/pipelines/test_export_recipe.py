"""The AgentWorld data recipe (`--recipe agentworld`) on the bundled samples: every step shown on the real
trace that has its case, every decision counted in the manifest and `export_rows`, and without the recipe
the exports unchanged byte for byte."""

import hashlib
import json
from pathlib import Path

import pytest

from pipelines.infra import definition
from pipelines.cli import main
from pipelines.stages.export import export
from pipelines.stages.export.shards import Lineage
from pipelines.infra.lake import Lake
from pipelines.infra.options import ExportOptions
from pipelines.infra.runner import run_ingest
from pipelines.infra.runs import open_catalog
from tests import goldens
from tests.conftest import REPO, SAMPLES
from transforms import agentworld
from transforms.export import recipe as recipes
from transforms.export.rl import FRAGMENT_NAME as VERL_FRAGMENT
from transforms.export.transitions import HTTP_WEB

GOLDEN = Path(__file__).resolve().parent.parent / "transforms" / "export" / "golden"
DROIDBOT_ONLY = definition.parse("ingest-droidbot", 'dataset = "android"\nformats = ["droidbot"]\n'
                                 'inputs = ["samples/android/droidbot-run"]\nstages = ["ingest"]\n')
FORMATS = {"cpt": ["text", "swift"], "sft": ["agentworld", "trl", "swift", "sharegpt", "bench"], "rl": ["verl"]}


@pytest.fixture
def bundled(bundled_lake):
    return bundled_lake


def _query(lake: str, sql: str, params=()) -> list[dict]:
    with open_catalog(Lake(lake), read_only=True) as cat:
        return cat.con.execute(sql, list(params)).to_arrow_table().to_pylist()


# the DevTools log's web episodes are HTTP captures, exported only when named: they are among the cases here
EVERY_DOMAIN = [*agentworld.DOMAINS, HTTP_WEB]


def _export(lake: str, out: Path, kind: str, fmt: str | None = None, **options) -> dict:
    options.setdefault("domains", EVERY_DOMAIN)
    return export(Lake(lake), None, "all", str(out), ExportOptions(kind=kind, format=fmt, **options),
                  log=lambda line: None)


def _records(out: Path, manifest: dict) -> list[dict]:
    import pyarrow.parquet as pq

    rows = []
    for shard in manifest["shards"]:
        path = out / shard["path"]
        if manifest["file_type"] == "parquet":
            rows += pq.read_table(path).to_pylist()
        else:
            rows += [json.loads(line) for line in path.read_text().splitlines()]
    return rows


def _steps(lake: str, uri_suffix: str) -> list[dict]:
    return _query(lake, "SELECT s.step_id, s.step_index, s.observation.text AS text FROM steps s JOIN episodes e "
                        f"USING (episode_id) WHERE e.source_uri LIKE '%{uri_suffix}' ORDER BY s.step_index")


# --- without the recipe: today's output ------------------------------------------------------------------
def test_without_the_recipe_every_export_is_byte_for_byte_what_it_was(tmp_path):
    """The digests were written by the exporter before the recipe existed (every kind and format of the
    DroidBot sample: shards, extra files, and the manifest less its path-dependent export id; the RL digests
    include the reward's judge context in `extra_info`, which came first; the formats that show a GUI turn's
    state were rewritten when every turn, not the first only, came to show it, and the android shards of sft
    agentworld and bench when their states came in the benchmark's rendering for DroidBot sources). Only the trainer configs
    (`trainers/`, the manifest's `trainer_configs`) are new; the verl fragment names absolute paths, so it is
    left out of the digests. The manifests' digests were written again when token counts became the Qwen3.5
    tokenizer's (its `tokenizer`, `tokens` and `tokens_total`); every shard's digest is the first one."""
    golden = json.loads((GOLDEN / "plain-export-digests.json").read_text())
    lake = str(tmp_path / "lake")
    run_ingest(DROIDBOT_ONLY, lake, [str(SAMPLES / "android" / "droidbot-run")], progress=False, log=lambda l: None)
    for kind, formats in FORMATS.items():
        for fmt in formats:
            out = tmp_path / f"{kind}-{fmt}"
            manifest = export(Lake(lake), None, "android", str(out), ExportOptions(kind=kind, format=fmt),
                              log=lambda line: None)
            # the trainer configs are new beside every export: everything else is as before
            trainers = manifest.pop("trainer_configs")["files"]
            manifest["extra_files"] = [f for f in manifest["extra_files"] if f not in trainers]
            files = {str(p.relative_to(out)): hashlib.sha256(p.read_bytes()).hexdigest()
                     for p in sorted(out.rglob("*"))
                     if p.is_file() and p.name not in ("manifest.json", "verl_reward.yaml")
                     and str(p.relative_to(out)) not in trainers}
            manifest.pop("export_id")
            files["manifest.json without export_id"] = hashlib.sha256(
                json.dumps(manifest, sort_keys=True).encode()).hexdigest()
            assert files == golden[f"{kind}-{fmt}"], f"{kind}-{fmt}"


# --- with the recipe: the output fixed -------------------------------------------------------------------
# traces with every case the recipe decides: GUI turns that change nothing (DroidBot, after dedup), refused
# edits retried (SWE-agent's pydicom run), undeclared tools (MCP), an environment failure (BrowserGym), masked
# turns (OpenHands, SWE-agent 1.x, a DevTools log), a terminal agent's session (Claude Code in Harbor) and GUI
# text (AgentNet on macOS)
RECIPE_SAMPLES = ["android/droidbot-run", "swe/sweagent-legacy", "mcp", "browser/browsergym-agentlab",
                  "swe/openhands-events", "swe/sweagent-v1", "browser/cdp-devtoolslog", "atif/harbor-claude-code",
                  "macos/agentnet-darwin"]
RECIPE_EXPORTS = {f"{kind}-{fmt}": (kind, fmt, {}) for kind, formats in FORMATS.items() for fmt in formats}
RECIPE_EXPORTS["cpt-text-windows"] = ("cpt", "text", {"max_tokens": 1500})  # documents cut by the budget
RECIPE_EXPORTS["sft-agentworld-trimmed"] = ("sft", "agentworld", {"max_tokens": 3000})  # history trimmed


def _recipe_output(lake: str, out: Path, kind: str, fmt: str, options: dict) -> dict:
    """What a recipe export wrote: its decisions (readable), and digests of its files (shards and trainer
    configs; not the verl fragment, which names absolute paths) and of its `export_rows`."""
    manifest = _export(lake, out, kind, fmt, recipe="agentworld", **options)
    files = {str(p.relative_to(out)): hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(out.rglob("*"))
             if p.is_file() and p.name not in ("manifest.json", VERL_FRAGMENT)}
    lineage = _query(lake, 'SELECT shard, "row", step_ids, prompt_variant, masked_step_ids, dropped_step_ids, '
                           'episode_id, line, dropped_by FROM export_rows WHERE export_id = ? '
                           'ORDER BY shard, "row", episode_id, line', [manifest["export_id"]])
    manifest.pop("export_id")
    digest = lambda value: hashlib.sha256(json.dumps(value, sort_keys=True).encode()).hexdigest()
    return {"rows": manifest["rows"], "skipped": manifest["skipped"], "recipe": manifest["recipe"], "files": files,
            "export_rows sha256": digest(lineage), "manifest sha256 without export_id": digest(manifest)}


def test_the_recipe_output_of_the_samples_is_fixed(tmp_path):
    """Every kind and format exported with `--recipe agentworld` from traces with every case the recipe
    decides, byte for byte: a change that makes the recipe cheaper must not change what it writes."""
    lake = str(tmp_path / "lake")
    result = run_ingest(definition.load("ingest-all"), lake, [str(SAMPLES / s) for s in RECIPE_SAMPLES],
                        progress=False, log=lambda line: None)
    assert result.status == "success"
    assert main(["dedup", "all", "--lake", lake]) == 0  # the no-change steps
    outputs = {name: _recipe_output(lake, tmp_path / name, *export) for name, export in RECIPE_EXPORTS.items()}
    r = outputs["cpt-text"]["recipe"]
    assert sum(r["turns_masked"].values()) and r["turns_dropped"]["no_change"] and r["turns_dropped"]["retry_cycle"]
    assert r["trajectories_dropped"]["undeclared_tools"] and r["trajectories_dropped"]["environment_failure"]
    goldens.check_json(GOLDEN / "recipe-export-outputs.json", outputs, indent=1, sort_keys=True)


# --- the accounting ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("kind", ["cpt", "sft", "rl"])
def test_the_manifest_accounts_for_every_turn(bundled, tmp_path, kind):
    manifest = _export(bundled, tmp_path / kind, kind, recipe="agentworld")
    r = manifest["recipe"]
    steps = _query(bundled, "SELECT count(*) AS n FROM steps")[0]["n"]
    assert r["turns_in"] == steps  # every recorded step is one turn of the main line
    assert r["turns_kept"] + sum(r["turns_masked"].values()) + sum(r["turns_dropped"].values()) == r["turns_in"]
    assert r["trajectories_in"] == _query(bundled, "SELECT count(*) AS n FROM episodes")[0]["n"]
    assert sum(r["trajectories_dropped"].values()) > 0 and sum(r["turns_dropped"].values()) > 0
    if kind == "cpt":
        assert sum(r["turns_masked"].values()) > 0
        # every turn a document can hold has a category (turns after the last observation have none)
        assert sum(r["turns_masked"].values()) < sum(r["turn_categories"].values()) <= r["turns_kept"] + sum(
            r["turns_masked"].values())
    else:
        assert sum(r["turns_masked"].values()) == 0
    assert sum(r["prompt_variants"].values()) == (manifest["rows"] if kind != "cpt" else 0)  # cpt text: no prompt
    assert manifest["config"]["recipe"] == "agentworld" and r["steps"]["min_turns"] == 2


# --- trajectory filters ----------------------------------------------------------------------------------
def test_trajectory_filters_on_real_traces(bundled, tmp_path):
    manifest = _export(bundled, tmp_path / "sft", "sft", recipe="agentworld")
    ids = {r["id"] for r in _records(tmp_path / "sft", manifest)}
    episodes = _query(bundled, "SELECT episode_id, source_uri, source_format, domain, env FROM episodes")

    def steps_of(episode: dict) -> set[str]:
        return {s["step_id"] for s in _query(bundled, f"SELECT step_id FROM steps WHERE episode_id = '{episode['episode_id']}'")}

    def tools(episode: dict) -> set[str]:
        env = json.loads(episode["env"] or "{}")
        return {t["name"] for t in env.get("tools", [])}

    # MCP: the sessions that call `nope` or `get_humidity`, which their tools/list never declared, are
    # dropped; the SQL session calls only declared tools (and `resources/read` is a protocol method)
    mcp = [e for e in episodes if e["domain"] == "mcp"]
    assert not any(ids & steps_of(e) for e in mcp if tools(e) in ({"add", "echo", "fail"},
                                                                  {"get_weather", "get_forecast", "read_file"}))
    assert all(ids & steps_of(e) for e in mcp if tools(e) == {"list_tables", "query"})
    # BrowserGym recorded an uncaught exception of the environment (RateLimitError): a GUI environment failure
    browsergym = [e for e in episodes if "RateLimitError" in (e["env"] or "")]
    assert len(browsergym) == 1 and not ids & steps_of(browsergym[0])
    # the uiautomator dump is one observation with no action: an empty action, then fewer than 2 turns
    dump = [e for e in episodes if e["source_uri"].endswith("window_dump.xml")]
    assert dump and not ids & steps_of(dump[0])
    r = manifest["recipe"]
    # one turn: the asciicast markers cast, the HAR page, the dump, the three context-summarization subagents of
    # Harbor's goldens, the Claude Code sidechain, the agent-factory span export that holds the answer only, the
    # two OpenSearch span documents (one answer each), the one-click OSWorld run (karakuri-ai/OSWorld-JP), the seven
    # Langfuse framework traces of one answer or one call (autogen, crewai, google-gemini, llamaindex,
    # pydantic-ai-with-gemini, vercel-aisdk, vertex-ai); and one whose only other turn has an empty action; twelve
    # runs of smolagents' gpt-4o CodeAgent benchmark: nine whose first code answered, three left with one turn once
    # their retry cycles (the same failing code again) are dropped
    assert r["trajectories_dropped"] == {"fewer_than_min_turns": 31, "undeclared_tools": 3, "environment_failure": 1}
    # empty actions: that turn, the last turn of the Gemini CLI run stopped while the model thought (aim), and four
    # replies in the OpenCode markdown transcript whose text the markdown does not set apart from the thinking before
    # it (the reader keeps both in the reasoning)
    assert r["turns_dropped"]["empty_action"] == 6


@pytest.mark.parametrize("kind", ["cpt", "sft", "rl"])
def test_every_dropped_trajectory_is_named_once_with_its_filter(bundled, tmp_path, kind):
    """The episodes the trajectory filters dropped, in SQL: a row each (no shard, no row), its filter, as many per
    filter as the manifest counts, none that a record was made from; and with the turns every record names, each
    turn the manifest counts as dropped is named once."""
    manifest = _export(bundled, tmp_path / kind, kind, recipe="agentworld")
    rows = _query(bundled, "SELECT shard, \"row\", step_ids, dropped_step_ids, episode_id, line, dropped_by "
                           "FROM export_rows WHERE export_id = ?", [manifest["export_id"]])
    dropped = [r for r in rows if r["dropped_by"] is not None]
    r = manifest["recipe"]
    assert {f: sum(1 for d in dropped if d["dropped_by"] == f) for f in recipes.TRAJECTORY_FILTERS} == \
        r["trajectories_dropped"]
    if kind == "sft":
        assert r["trajectories_dropped"]["fewer_than_min_turns"] == 31
    assert all(d["shard"] is None and d["row"] is None and d["step_ids"] == [] and d["line"] == "main"
               for d in dropped)
    episodes = [d["episode_id"] for d in dropped]
    assert len(episodes) == len(set(episodes))
    exported = {s.split(":")[0] for row in rows for s in row["step_ids"]}
    assert exported and not exported & set(episodes)
    steps = {row["episode_id"]: row["n"] for row in _query(
        bundled, "SELECT episode_id, count(*) AS n FROM steps GROUP BY 1")}
    assert all(len(d["dropped_step_ids"]) == steps.get(d["episode_id"], 0) for d in dropped)  # all its turns
    named = [s for row in rows for s in row["dropped_step_ids"] or ()]
    assert len(named) == len(set(named)) == sum(r["turns_dropped"].values())
    # the README's query: which episodes the export dropped, and why
    why = _query(bundled, "SELECT dropped_by, count(*) AS episodes FROM export_rows WHERE export_id = ? "
                          "AND dropped_by IS NOT NULL GROUP BY dropped_by", [manifest["export_id"]])
    assert {w["dropped_by"]: w["episodes"] for w in why} == {f: n for f, n in r["trajectories_dropped"].items() if n}


def test_the_readme_query_lists_the_dropped_episodes(bundled, tmp_path, monkeypatch, capsys):
    """The README's commands, as written there (on the bundled lake): the episodes the query lists are those
    the manifest counts, per filter, and the numbers the README gives."""
    import csv
    import re
    import shlex

    readme = (REPO / "README.md").read_text(encoding="utf-8")
    at = readme.index("Which episodes an\nexport dropped, and why")
    commands = re.findall(r"^    \.venv/bin/pipelines (.*)$", readme[at:readme.index("\nlists ", at)], re.M)
    assert [c.split()[0] for c in commands] == ["export", "sql"]
    monkeypatch.chdir(tmp_path)
    for command in commands:
        capsys.readouterr()
        assert main([*shlex.split(command), "--lake", bundled]) == 0
    listed = list(csv.DictReader(capsys.readouterr().out.splitlines()))
    manifest = json.loads((tmp_path / "out" / "sft" / "manifest.json").read_text())
    by_filter = {f: sum(1 for row in listed if row["dropped_by"] == f) for f in recipes.TRAJECTORY_FILTERS}
    assert by_filter == manifest["recipe"]["trajectories_dropped"]
    said = re.match(r"lists (\d+) episodes: (\d+) `fewer_than_min_turns` .*?, (\d+) `undeclared_tools` .*?, "
                    r"(\d+) `environment_failure`", readme[readme.index("\nlists ", at) + 1:], re.S)
    assert [int(n) for n in said.groups()] == [len(listed), *by_filter.values()]


def test_dropped_trajectories_are_written_in_row_groups_as_they_come(monkeypatch):
    """The lineage holds a row group of dropped lines at most (by lines, or by their turns), not the export's."""
    import pyarrow.parquet as pq

    from pipelines.stages.export.shards import Lineage

    monkeypatch.setattr(Lineage, "DROPPED_ROWS", 3)
    monkeypatch.setattr(Lineage, "DROPPED_STEP_IDS", 10)
    lineage = Lineage("x")
    dropped = [recipes.DroppedTrajectory(f"e{n}", "main", "fewer_than_min_turns", [f"e{n}:0"]) for n in range(7)]
    held = []
    for n in range(0, 7, 2):  # groups of two lines
        lineage.add_dropped_trajectories(dropped[n:n + 2])
        held.append(len(lineage.dropped))
    lineage.add_dropped_trajectories([recipes.DroppedTrajectory("long", "b1", "undeclared_tools",
                                                                [f"long:{i}" for i in range(12)])])
    held.append(len(lineage.dropped))
    lineage.close()
    assert held == [2, 0, 2, 0, 0]
    file = pq.ParquetFile(lineage.path)
    assert file.metadata.num_row_groups == 3
    rows = file.read().to_pylist()
    assert [r["episode_id"] for r in rows] == [*(d.episode_id for d in dropped), "long"]
    assert rows[-1]["line"] == "b1" and rows[-1]["dropped_by"] == "undeclared_tools"
    assert all(r["shard"] is None and r["row"] is None and r["export_id"] == "x" for r in rows)
    lineage.remove()


def test_undeclared_tools_are_named_from_the_recorded_definitions_only():
    from transforms.export.transitions import Trajectory, Turn

    def trajectory(tools, names):
        turns = [Turn(f"s{i}", {"kind": "tool_call", "tool_name": n, "arguments": "{}"}, "real", "ok", f"s{i + 1}",
                      "real") for i, n in enumerate(names)]
        return Trajectory("e", "main", "mcp", None, "unknown", None, {"tools": tools} if tools else {}, "start",
                          "s0", "real", turns)

    assert recipes.undeclared_tools(trajectory([{"name": "add"}], ["add", "resources/read", "nope"])) == ["nope"]
    assert recipes.undeclared_tools(trajectory([{"name": "add"}], ["add"])) == []
    assert recipes.undeclared_tools(trajectory(None, ["anything"])) == []  # nothing recorded: not judged


# --- turn filters ----------------------------------------------------------------------------------------
def test_retry_cycles_drop_the_failed_attempts_and_keep_the_state_chain(bundled, tmp_path):
    """SWE-agent's pydicom run: three edits refused by its linter ("Your proposed edit has introduced new
    syntax error(s)", nothing applied), then the edit that works. The three go; the working edit follows the
    `open` turn whose state it acted on."""
    steps = _steps(bundled, "pydicom__pydicom-1458.traj")
    refused = [s["step_id"] for s in steps if s["text"] and "proposed edit has introduced" in s["text"]]
    assert len(refused) == 3  # the observations of steps 6, 7, 8: after the actions of steps 5, 6, 7
    failed_attempts = [steps[s["step_index"] - 1]["step_id"] for s in steps if s["step_id"] in refused]
    manifest = _export(bundled, tmp_path / "sft", "sft", "trl", recipe="agentworld")
    # and the 66 failed attempts of smolagents' gpt-4o benchmark runs (code that raised, then tried again)
    assert manifest["recipe"]["turns_dropped"]["retry_cycle"] == 3 + 66
    rows = {r["id"]: r for r in _records(tmp_path / "sft", manifest)}
    assert not set(failed_attempts) & set(rows)  # no record predicts a refused edit's outcome
    working_edit = steps[8]["step_id"]
    prompt = rows[working_edit]["prompt"]
    text = "\n".join(m["content"] for m in prompt)
    assert "proposed edit has introduced" not in text
    # the turn before the working edit is the `open` of the file (turn 5 of the record, renumbered)
    assert "numpy_handler" in prompt[-2]["content"] and prompt[-1]["content"].startswith("### Turn 6\n")
    lineage = _query(bundled, "SELECT dropped_step_ids, prompt_variant FROM export_rows r JOIN exports e "
                              "USING (export_id) WHERE e.export_id = ? AND list_contains(r.step_ids, ?) "
                              "ORDER BY len(r.step_ids)", [manifest["export_id"], working_edit])
    # the working edit's record (the shortest holding it) names them; the later ones, whose history holds them
    # too, do not name them again
    assert sorted(lineage[0]["dropped_step_ids"]) == sorted(failed_attempts)
    assert not set(failed_attempts) & {s for row in lineage[1:] for s in row["dropped_step_ids"]}
    assert lineage[0]["prompt_variant"].startswith("sft-")


def test_no_change_turns_of_gui_domains_come_from_dedup(bundled, tmp_path):
    no_change = _query(bundled, "SELECT n.step_id, s.domain FROM dedup_no_change n JOIN steps s USING (step_id)")
    gui = {r["step_id"] for r in no_change if r["domain"] in recipes.GUI_DOMAINS}
    assert gui and len(gui) < len(no_change)  # the SWE one is not a GUI turn: kept
    manifest = _export(bundled, tmp_path / "cpt", "cpt", "swift", drop_no_change=True)  # this step alone
    assert manifest["recipe"]["turns_dropped"]["no_change"] == len(gui)
    assert manifest["recipe"]["steps"]["min_turns"] == 0 and not manifest["recipe"]["steps"]["loss_mask"]
    rows = _query(bundled, "SELECT shard, step_ids, dropped_step_ids FROM export_rows WHERE export_id = ?",
                  [manifest["export_id"]])
    named = [s for row in rows for s in row["dropped_step_ids"]]
    # every dropped turn named once: the 10 no-change taps of the bundled AndroidWorld task-runner run
    # (samples/android/androidworld-history, UI-TARS) come after its last kept turn, and its last document
    # names them; the turns of lines that make no document are named by the run-level row (no shard)
    assert sorted(named) == sorted(set(named)) and set(named) == gui
    run_level = [row for row in rows if row["shard"] is None]
    assert len(run_level) == 1 and run_level[0]["step_ids"] == [] and run_level[0]["dropped_step_ids"]
    in_documents = [s for row in rows if row["shard"] is not None for s in row["dropped_step_ids"]]
    plain = _export(bundled, tmp_path / "plain", "cpt", "swift")
    turns = lambda m, out: sum(r["messages"].__len__() // 2 for r in _records(out, m))
    assert turns(plain, tmp_path / "plain") - turns(manifest, tmp_path / "cpt") == len(in_documents)


@pytest.mark.parametrize("weight", [0, 2])
def test_a_mixture_weight_names_each_dropped_turn_once_still(bundled, tmp_path, weight):
    """A weight of 2 writes a record twice: its first copy names its dropped turns; a weight of 0 writes none of a
    domain's records: the run-level row names theirs."""
    no_change = _query(bundled, "SELECT n.step_id, s.domain FROM dedup_no_change n JOIN steps s USING (step_id)")
    gui = {r["step_id"]: r["domain"] for r in no_change if r["domain"] in recipes.GUI_DOMAINS}
    manifest = _export(bundled, tmp_path / "cpt", "cpt", "swift", drop_no_change=True,
                       mix={domain: weight for domain in set(gui.values())})
    rows = _query(bundled, "SELECT shard, dropped_step_ids FROM export_rows WHERE export_id = ?",
                  [manifest["export_id"]])
    named = [s for row in rows for s in row["dropped_step_ids"]]
    assert sorted(named) == sorted(set(named)) and set(named) == set(gui)
    run_level = {s for row in rows if row["shard"] is None for s in row["dropped_step_ids"]}
    assert run_level == set(gui) if weight == 0 else run_level < set(gui)


def test_run_level_rows_are_written_as_row_groups_as_they_fill(tmp_path, monkeypatch):
    import pyarrow.parquet as pq

    monkeypatch.setattr(Lineage, "DROPPED_STEP_IDS", 4)
    lineage = Lineage("e1")
    lineage.add_unnamed(["a", "b", "c"])
    assert lineage.unnamed == ["a", "b", "c"]  # under the bound: held
    lineage.add_unnamed(["d", "e"])
    assert lineage.unnamed == []  # the bound reached: a run-level row written, nothing held
    lineage.add_unnamed(["f"])
    lineage.close()
    try:
        written = pq.ParquetFile(lineage.path)
        rows = written.read().to_pylist()
        assert written.metadata.num_row_groups == 2
        assert [r["dropped_step_ids"] for r in rows] == [["a", "b", "c", "d", "e"], ["f"]]
        assert all(r["shard"] is None and r["step_ids"] == [] and r["export_id"] == "e1" for r in rows)
    finally:
        lineage.remove()


def test_an_export_holds_a_bounded_count_of_unnamed_turns(bundled, tmp_path, monkeypatch):
    """With a small bound, the turns of lines with no record (a weight of 0 leaves out every GUI record) are
    named by several run-level rows, each turn once, and no more than the bound is ever held."""
    held = []
    add_unnamed = Lineage.add_unnamed

    def counted(self, dropped_step_ids):
        add_unnamed(self, dropped_step_ids)
        held.append(len(self.unnamed))

    monkeypatch.setattr(Lineage, "DROPPED_STEP_IDS", 3)
    monkeypatch.setattr(Lineage, "add_unnamed", counted)
    no_change = _query(bundled, "SELECT n.step_id, s.domain FROM dedup_no_change n JOIN steps s USING (step_id)")
    gui = {r["step_id"]: r["domain"] for r in no_change if r["domain"] in recipes.GUI_DOMAINS}
    manifest = _export(bundled, tmp_path / "cpt", "cpt", "swift", drop_no_change=True,
                       mix={domain: 0 for domain in set(gui.values())})
    rows = _query(bundled, "SELECT shard, dropped_step_ids, dropped_by FROM export_rows WHERE export_id = ?",
                  [manifest["export_id"]])
    run_level = [row["dropped_step_ids"] for row in rows if row["shard"] is None and row["dropped_by"] is None]
    named = [s for ids in run_level for s in ids]
    assert sorted(named) == sorted(set(named)) and set(named) == set(gui)
    assert len(run_level) >= 2 and held and max(held) < 3


@pytest.mark.parametrize("kind", ["sft", "rl"])
def test_each_dropped_turn_is_named_by_one_record_of_its_line(bundled, tmp_path, kind):
    """SFT records overlap (each holds its history) and RL keeps one record a trajectory: either way a
    dropped turn is named once, by a record of its own line."""
    manifest = _export(bundled, tmp_path / kind, kind, drop_no_change=True, skip_retry_cycles=True)
    rows = _query(bundled, "SELECT step_ids, dropped_step_ids FROM export_rows WHERE export_id = ?",
                  [manifest["export_id"]])
    named = [s for row in rows for s in row["dropped_step_ids"]]
    assert named and len(named) == len(set(named))
    dropped = manifest["recipe"]["turns_dropped"]
    assert len(named) == dropped["no_change"] + dropped["retry_cycle"]


def test_the_records_of_a_line_name_its_dropped_turns_between_and_after_them():
    applied = recipes.Applied(None, original=[0, 2, 3, 6, 8], own_from=2,
                              dropped=[(1, "a"), (4, "b"), (5, "c"), (7, "d"), (9, "e")])
    # CPT windows ending at kept turns 1 and 3 (recorded 2 and 6): "a" is the main line's (before own_from);
    # "d", between the second window and the end, and "e", after the last kept turn, go to the last record
    assert applied.dropped_by_records([1, 3]) == [[], ["b", "c", "d", "e"]]
    assert applied.dropped_by_records([1, 3, 4]) == [[], ["b", "c"], ["d", "e"]]  # SFT: since the previous
    assert applied.dropped_by_records([4]) == [["b", "c", "d", "e"]]
    assert applied.dropped_by_records([]) == []


def test_empty_action_filter():
    assert recipes.is_empty_action({"kind": None}) and recipes.is_empty_action({})
    assert recipes.is_empty_action({"kind": "type", "text": "  "})
    assert recipes.is_empty_action({"kind": "command", "code": ""})
    assert not recipes.is_empty_action({"kind": "tap", "x": 0.5, "y": 0.5})
    assert not recipes.is_empty_action({"kind": "back"})
    assert not recipes.is_empty_action({"kind": "command", "code": "ls"})


# --- CPT loss masking ------------------------------------------------------------------------------------
@pytest.mark.parametrize("words_act,words_obs,category", [
    ("cat notes", "alpha beta gamma delta epsilon zeta eta theta", "retrieval"),
    ("ls src", "ls src main py util py setup cfg readme md license txt", "expansion"),
    ("click the submit button now please", "done", "action"),
    ("write the numbers one two three four five six", "one two three four eight", "transform"),
    ("echo hello world", "hello world", "boilerplate"),
    ("echo hello big world", "echo hello big world", "echo"),
])
def test_turn_categories(words_act, words_obs, category):
    assert recipes.turn_category(words_act, words_obs) == category


@pytest.mark.parametrize("text", ["ls -la /App/SRC_dir\n", "{\"kind\": \"tap\", \"x\": 0.5}", "\t\x0b\x1c \x7f#", ""])
def test_ascii_text_has_the_words_of_the_general_rule(text):
    act, obs = recipes._word_lists(text, text)  # the bytes fast path
    assert [w.decode() for w in act] == [w.decode() for w in obs] == recipes.words(text)


def test_a_turn_mixing_ascii_and_other_text_shares_its_words():
    # an ASCII action beside a non-ASCII observation: both measured as text, so `notes` is shared
    assert recipes.measures("cat notes", "Notes: café") == (0.5, 0.5, 1.0, 2)


def test_keep_decisions_are_seeded_and_follow_the_rate():
    ids = [f"step-{i}" for i in range(4000)]
    kept = [recipes.keeps_loss(i, 0.1) for i in ids]
    assert kept == [recipes.keeps_loss(i, 0.1) for i in ids]  # reruns decide the same
    assert 0.08 < sum(kept) / len(ids) < 0.12
    assert kept != [recipes.keeps_loss(i, 0.1, seed="other") for i in ids]
    assert all(recipes.keeps_loss(i, 1.0) for i in ids[:50]) and not any(recipes.keeps_loss(i, 0.0) for i in ids[:50])


def test_cpt_masked_turns_stay_in_the_context_without_loss(bundled, tmp_path):
    plain = _export(bundled, tmp_path / "plain", "cpt", "text", min_turns=2)
    text_manifest = _export(bundled, tmp_path / "text", "cpt", "text", recipe="agentworld")
    swift_manifest = _export(bundled, tmp_path / "swift", "cpt", "swift", recipe="agentworld")
    texts = {r["id"]: r for r in _records(tmp_path / "text", text_manifest)}
    swifts = {r["id"]: r for r in _records(tmp_path / "swift", swift_manifest)}
    masked = 0
    for record_id, r in texts.items():
        assert len(r["turn_loss"]) == len(r["turn_spans"]) == r["text"].count("### Turn ")
        observations = [m for m in swifts[record_id]["messages"] if m["role"] == "assistant"]
        assert [m["loss"] for m in observations] == r["turn_loss"]  # the same decision in both forms
        for (start, end), message in zip(r["turn_spans"], observations):
            assert r["text"][start:end] == message["content"]  # the span is the turn's observation
        masked += r["turn_loss"].count(False)
    assert masked == sum(text_manifest["recipe"]["turns_masked"].values()) > 0
    # masking removes no text: a recipe export differs from the plain one only by the filters' turns
    rows = _query(bundled, "SELECT masked_step_ids FROM export_rows WHERE export_id = ?", [text_manifest["export_id"]])
    assert sum(len(r["masked_step_ids"]) for r in rows) == masked
    again = _export(bundled, tmp_path / "again", "cpt", "text", recipe="agentworld")
    assert [s["sha256"] for s in again["shards"]] == [s["sha256"] for s in text_manifest["shards"]]
    assert plain["rows"] >= text_manifest["rows"]


def test_keep_rates_option_changes_the_masking(bundled, tmp_path):
    every = _export(bundled, tmp_path / "all", "cpt", "text", recipe="agentworld", keep_rates={
        c: 1.0 for c in recipes.CATEGORIES})
    assert sum(every["recipe"]["turns_masked"].values()) == 0
    none = _export(bundled, tmp_path / "none", "cpt", "text", recipe="agentworld", loss_mask=False)
    assert "turn_loss" not in _records(tmp_path / "none", none)[0]


# --- prompt-template variants ----------------------------------------------------------------------------
def test_prompt_variants_are_disjoint_by_kind_and_rl_keeps_the_reference(bundled, tmp_path):
    rl = _export(bundled, tmp_path / "rl", "rl", recipe="agentworld")
    plain_rl = _export(bundled, tmp_path / "rl-plain", "rl", min_turns=2, drop_undeclared_tools=True,
                       drop_environment_failures=True, drop_empty_actions=True, skip_retry_cycles=True,
                       drop_no_change=True)
    rl_rows, plain_rows = _records(tmp_path / "rl", rl), _records(tmp_path / "rl-plain", plain_rl)
    assert {r["extra_info"]["prompt_variant"] for r in rl_rows} == {"rl"}
    assert [r["prompt"] for r in rl_rows] == [r["prompt"] for r in plain_rows]  # the reference prompt, verbatim
    sft = _export(bundled, tmp_path / "sft", "sft", recipe="agentworld")
    sft_rows = _records(tmp_path / "sft", sft)
    used = {r["prompt_variant"] for r in sft_rows}
    assert used == {"sft-answer", "sft-role"} and sft["recipe"]["prompt_variants"] == {
        v: sum(r["prompt_variant"] == v for r in sft_rows) for v in used}
    for r in sft_rows:
        domain = r["domain"]
        reference = agentworld.system_prompt(domain, None)
        assert r["messages"][0]["content"] != reference and f" {domain} environment" in r["messages"][0]["content"]
    cpt = _export(bundled, tmp_path / "cpt", "cpt", "swift", recipe="agentworld")
    assert {r["prompt_variant"] for r in _records(tmp_path / "cpt", cpt)} == {"cpt"}
    assert set(cpt["recipe"]["prompt_variants"]) == {"cpt"}


def test_users_add_their_own_variants(bundled, tmp_path):
    folder = tmp_path / "variants"
    folder.mkdir()
    (folder / "mine.txt").write_text("MY WRAPPER for {domain}\n\n{system_prompt}")
    manifest = _export(bundled, tmp_path / "sft", "sft", recipe="agentworld", prompt_variants_dir=str(folder))
    rows = _records(tmp_path / "sft", manifest)
    mine = [r for r in rows if r["prompt_variant"] == "mine"]
    assert mine and all(r["messages"][0]["content"].startswith(f"MY WRAPPER for {r['domain']}\n\n") for r in mine)
    (folder / "broken.txt").write_text("no placeholder")
    from pipelines.stages.export import ExportError
    with pytest.raises(ExportError, match="broken"):
        _export(bundled, tmp_path / "bad", "sft", recipe="agentworld", prompt_variants_dir=str(folder))


def test_the_cli_takes_the_recipe(bundled, tmp_path):
    out = tmp_path / "cli"
    assert main(["export", "cpt", "all", "--lake", bundled, "--out", str(out), "--recipe", "agentworld",
                 "--no-drop-no-change", "--keep-rates", "echo=0"]) == 0
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["recipe"]["steps"]["drop_no_change"] is False and manifest["recipe"]["turns_dropped"]["no_change"] == 0
    assert manifest["recipe"]["steps"]["keep_rates"]["echo"] == 0.0


def test_a_trainer_that_cannot_read_the_turn_mask_is_named_with_a_warning(bundled_lake, tmp_path, capsys):
    """CPT `text` with masked turns: TRL trains the whole text, so the manifest and a WARNING say so and name
    the formats that carry the mask; `--format trl` carries it (token ids with a completion mask): no warning."""
    from pipelines import cli

    base = ["--lake", bundled_lake, "--recipe", "agentworld"]
    assert cli.main(["export", "cpt", "all", "--out", str(tmp_path / "text"), *base]) == 0
    manifest = json.loads((tmp_path / "text" / "manifest.json").read_text())
    masked = sum(manifest["recipe"]["turns_masked"].values())
    assert masked > 0
    why = manifest["trainer_configs"]["loss_mask_not_honoured"]["TRL (trainers/trl_sft_config.json)"]
    assert why.startswith(f"{masked:,} masked turns") and "--format trl" in why
    assert f"WARNING TRL (trainers/trl_sft_config.json): {why}" in capsys.readouterr().out
    assert cli.main(["export", "cpt", "all", "--out", str(tmp_path / "trl"), "--format", "trl", *base]) == 0
    trl = json.loads((tmp_path / "trl" / "manifest.json").read_text())
    assert "loss_mask_not_honoured" not in trl["trainer_configs"] and "WARNING" not in capsys.readouterr().out
