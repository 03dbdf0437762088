"""A file a reader claimed and got no step from is offered to the later readers that claim it; when none reads
it, `ignored_inputs` names who claimed it and why it gave up; `pipelines formats explain` says it per reader."""

import json
import shutil

from pipelines.cli import main
from pipelines.infra import definition
from pipelines.infra.plan import find_units
from tests.conftest import SAMPLES

CHAT = [{"role": "user", "content": "Weather in Paris?"},
        {"role": "assistant", "content": None,
         "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "18C"},
        {"role": "assistant", "content": "18C."}]
BROWSER_USE = {"history": [{"model_output": {"current_state": {"next_goal": "open"},
                                             "action": [{"go_to_url": {"url": "https://example.com"}}]},
                            "result": [{"is_done": True, "success": True, "extracted_content": "opened"}],
                            "state": {"url": "https://example.com", "title": "Example", "interacted_element": [None]}}]}


def _inputs(tmp_path):
    folder = tmp_path / "in"
    folder.mkdir()
    # AgentWorldBench claims it (`prompt` and `turn_idx` on the first line) and finds no sample in it
    (folder / "rollouts.jsonl").write_text("".join(json.dumps({"prompt": "w", "turn_idx": i, "messages": CHAT,
                                                               "reward": 1.0}) + "\n" for i in range(2)))
    # the shape reader claims it (a chat role) and finds no conversation: user turns only
    (folder / "prompts.json").write_text(json.dumps([{"role": "user", "content": "q1"},
                                                     {"role": "user", "content": "q2"}]))
    # a bare `history` key: once taken by the SWE-agent reader and quarantined as an empty episode
    (folder / "browser_use_history.json").write_text(json.dumps(BROWSER_USE))
    (folder / "settings.json").write_text(json.dumps({"theme": "dark"}))  # no reader's evidence
    # the SWE-agent reader claims every `.traj` and finds no step in this one: not its format
    (folder / "saved.traj").write_text(json.dumps({"history": [{"model_output": {"action": []}, "result": []}]}))
    return folder


def test_a_claim_that_gives_nothing_passes_the_file_on_or_says_why_in_ignored_inputs(tmp_path, run, query):
    result = run("ingest-all", [_inputs(tmp_path)], stages=["ingest"])
    assert result.status == "success"
    episodes = query("SELECT source_format, source_uri, outcome, reward FROM episodes ORDER BY source_uri, episode_id")
    assert [(e["source_format"], e["source_uri"], e["outcome"]) for e in episodes] == [
        ("browser_use", "in/browser_use_history.json", "success")] + [("chat_shape", "in/rollouts.jsonl", "success")] * 2
    reasons = {r["path"].rsplit("/", 1)[-1]: r["reason"] for r in query("SELECT path, reason FROM ignored_inputs")}
    assert reasons == {"prompts.json": "chat_shape claimed it and found no episode in it; no format reads it",
                       "settings.json": "no format reads it",
                       "saved.traj": "sweagent claimed it and got no step (empty_episode: saved.traj: no actions "
                                     "in the trajectory); no format reads it"}
    # the empty episode's row stays beside it (it keeps what outcome the reader found)
    assert [(r["rule"], r["source_uri"]) for r in query("SELECT rule, source_uri FROM quarantine")] == [
        ("empty_episode", "in/saved.traj")]
    assert any("agentworldbench claimed it and got no step" in m and "read as chat_shape" in m
               for m in result.messages)


def test_formats_explain_says_for_every_reader_whether_it_claims_the_file(tmp_path, capsys):
    folder = _inputs(tmp_path)
    assert main(["formats", "explain", str(folder / "rollouts.jsonl")]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[1].split()[:2] == ["atif", "no;"] and "ATIF schema version" in out[1]
    assert [line.split()[0] for line in out if "CLAIMS it" in line] == ["agentworldbench"]
    assert any(line.split()[0] == "chat_shape" and "would claim it too" in line for line in out)
    assert out[-1] == "read by chat_shape: 2 episodes, 4 steps, 0 rows quarantined"
    assert main(["formats", "explain", str(folder / "browser_use_history.json")]) == 0
    out = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in out if "CLAIMS it" in line] == ["browser_use"]
    assert any(line.split()[0] == "sweagent" and "no;" in line for line in out)
    assert main(["formats", "explain", str(folder / "settings.json")]) == 0
    out = capsys.readouterr().out.splitlines()
    assert not [line for line in out if "CLAIMS" in line] and "no reader claims it" in out[-1]
    assert main(["formats", "explain", str(SAMPLES / "chat/tau-bench/gpt-4o-airline.json")]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "read by chat_shape: 3 episodes, 14 steps, 0 rows quarantined"


def test_a_unit_no_reader_reads_lists_the_files_beside_it_that_it_would_have_read(tmp_path, run, query):
    """A browser-use history with no step (its reader claims it and gets nothing): its agent folder's screenshot,
    planned with it, is listed unread with it, not dropped from `ignored_inputs` unsaid."""
    folder = tmp_path / "in"
    shots = folder / "browser_use_agent_1_2" / "screenshots"
    shots.mkdir(parents=True)
    (shots / "step_1.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    (folder / "agent_history.json").write_text(json.dumps({"history": [], "note": {"model_output": None}}))
    result = run("ingest-all", [folder], stages=["ingest"])
    assert result.status == "success"
    reasons = {r["path"].split("/in/", 1)[1]: r["reason"] for r in query("SELECT path, reason FROM ignored_inputs")}
    assert reasons["browser_use_agent_1_2/screenshots/step_1.png"] == \
        f"read with {folder / 'agent_history.json'}, which no format read"
    assert reasons["agent_history.json"].startswith("browser_use claimed it and got no step")


def test_formats_explain_names_the_unit_that_takes_a_file_from_a_folder_above(tmp_path, capsys):
    """A file claimed with a unit outside its own folder: a browser-use screenshot in the agent folder beside the
    history (read as its member), a todo file there (a file of its run it does not read, with why), and the files
    of a Harbor trial (held by the trial folder: its trajectory read as part of it, its log listed with why)."""
    folder = tmp_path / "in"
    shots = folder / "browser_use_agent_1_2" / "screenshots"
    shots.mkdir(parents=True)
    (shots / "step_1.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    (folder / "browser_use_agent_1_2" / "todo.md").write_text("- [ ] open\n")
    (folder / "agent_history.json").write_text(json.dumps(BROWSER_USE))
    assert main(["formats", "explain", str(shots / "step_1.png")]) == 0
    out = capsys.readouterr().out.splitlines()
    history = folder / "agent_history.json"
    assert [line.split(None, 1)[1] for line in out if "CLAIMS it" in line] == [
        f"CLAIMS it as a member of {history} (a file its reader reads beside it)"]
    assert out[-1] == f"read with {history}: run the pipeline on it to see what it gives"
    assert main(["formats", "explain", str(folder / "browser_use_agent_1_2" / "todo.md")]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[-1] == (f"not read: browser_use takes it with {history} but does not read it: a file of "
                       "browser-use's agent folder (its todo list, saved results); the reader reads the screenshots "
                       "the history names (a run lists it in ignored_inputs)")

    trial = tmp_path / "runs" / "fix-calc-add__Vq7mR2p"
    shutil.copytree(SAMPLES / "atif" / "harbor-claude-code" / "fix-calc-add__Vq7mR2p", trial)
    (trial / "trial.log").write_text("Starting trial\n")
    assert main(["formats", "explain", str(trial / "agent" / "trajectory.json")]) == 0
    out = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in out if "CLAIMS it" in line] == ["atif"]
    assert out[-1] == f"read as part of the folder {trial}: run the pipeline on it to see what it gives"
    assert main(["formats", "explain", str(trial / "trial.log")]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == (
        f"not read: atif takes it with {trial} but does not read it: Harbor's log of running the trial (the "
        "harness's messages, not the agent's steps) (a run lists it in ignored_inputs)")


def test_formats_explain_gives_a_loops_request_file_to_the_unit_planning_gives_it(tmp_path, capsys):
    """An Agent TARS run saved per loop: in its loop folder alone the loop's own snapshot looks like the run's last,
    but a run over the run's folder (or any above) makes the run's last snapshot the unit and its loops' requests
    its members: explain says what planning does."""
    run = tmp_path / "runs" / "snapshot-tool-calls-basic"
    shutil.copytree(SAMPLES / "chat" / "agent-tars" / "bytedance-UI-TARS-desktop" / "snapshot-tool-calls-basic", run)
    request = run / "loop-1" / "llm-request.jsonl"
    units, _ = find_units([str(tmp_path / "runs")], definition.load("ingest-all").formats)
    [planned] = [u for u in units if str(request) in u.members]
    assert (planned.format, planned.path) == ("agent_tars", str(run / "event-stream.jsonl"))
    assert main(["formats", "explain", str(request)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert [line.split(None, 1)[1] for line in out if "CLAIMS it" in line] == [
        f"CLAIMS it as a member of {planned.path} (a file its reader reads beside it)"]
    assert out[-1] == f"read with {planned.path}: run the pipeline on it to see what it gives"
