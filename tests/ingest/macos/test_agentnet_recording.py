import json

from tests.conftest import SAMPLES

REC = SAMPLES / "macos" / "agentnet-raw-recording"


def test_raw_recording_steps_are_reduced_actions_on_the_recorded_platform(run, query):
    result = run("ingest-macos", [REC])
    assert result.status == "success" and result.episodes == 1 and result.steps == 6 and result.quarantined == 0
    ep = query("SELECT * FROM episodes")[0]
    # the sample sits under samples/macos but was recorded on Windows 10: the recording decides
    assert (ep["platform"], ep["source_format"], ep["domain"]) == ("windows", "agentnet_recording", "os")
    assert ep["task"].startswith("Open the system display settings, adjust the system brightness to 78")
    assert ep["started_at"] is None  # local wall clock of an unknown zone
    assert json.loads(ep["env"])["start_time_local"] == "2024-11-05 18:56:31"
    steps = query("SELECT * FROM steps ORDER BY step_index")
    first = steps[0]["action"]
    assert (first["kind"], first["x"], first["y"]) == ("click", 1328 / 1366, 745 / 768)
    assert json.loads(first["element"]) == {"control_type": "ButtonControl",
                                            "title": "Action Centre, No new notifications (Off)"}
    raw = json.loads(first["raw"])
    assert raw["event_start_idx"] == 70 and raw["description"] == "Single left Click" and "axtree" not in raw
    assert steps[0]["reasoning"] == "Action: Click on Action Centre"
    assert [s["action"]["kind"] for s in steps] == ["click", "right_click", "click", "drag", "click", "scroll"]
    drag = steps[3]["action"]
    assert (drag["x"], drag["y"], drag["x2"], drag["y2"]) == (621 / 1366, 206 / 768, 561 / 1366, 213 / 768)
    assert (steps[5]["action"]["kind"], steps[5]["action"]["direction"]) == ("scroll", "down")
    # the accessibility tree at action time, rendered to text (Windows UIA)
    obs = steps[0]["observation"]
    assert obs["kind"] == "screen" and (obs["width"], obs["height"]) == (1366, 768)
    assert obs["text"].startswith('Window: explorer\n[0] Pane "Taskbar" @[0,728][1366,768]\n  [1] Button "Start"')
    assert json.loads(obs["ui_tree"])["Name"] == "Taskbar"
    assert '"Go to Settings"' in steps[2]["observation"]["text"]  # the pop-up the click targets
    assert steps[-1]["final_observation"]["text"].startswith("Window: ApplicationFrameHost\n")
    # this copy was trimmed before the demonstrator stopped: last, not terminal
    assert steps[-1]["is_last"] and not steps[-1]["is_terminal"]
    assert all(s["timestamp"] is None for s in steps)


def test_stopped_recording_is_terminal_and_garbage_lines_are_quarantined(sample_copy, run, query):
    rec = sample_copy("macos/agentnet-raw-recording")
    meta = json.loads((rec / "metadata.json").read_text())
    meta["stop_time"] = "2024-11-05 18:58:33"
    (rec / "metadata.json").write_text(json.dumps(meta))
    lines = (rec / "reduced_events_complete.jsonl").read_text().splitlines()
    lines[2] = lines[2][:500]  # a cut line
    (rec / "reduced_events_complete.jsonl").write_text("\n".join(lines) + "\n")
    result = run("ingest-macos", [rec])
    assert result.steps == 5 and result.quarantined == 1
    row = query("SELECT * FROM quarantine")[0]
    assert (row["rule"], row["line"], row["location"]) == ("parse_error", 3, "reduced_events_complete.jsonl")
    assert row["reason"].startswith("reduced_events_complete.jsonl line 3: invalid JSON")
    last = query("SELECT is_last, is_terminal FROM steps ORDER BY step_index DESC LIMIT 1")[0]
    assert last == {"is_last": True, "is_terminal": True}


def test_missing_metadata_is_one_quarantine_row(sample_copy, run, query):
    rec = sample_copy("macos/agentnet-raw-recording")
    (rec / "metadata.json").unlink()
    result = run("ingest-macos", [rec])
    assert result.episodes == 0
    # without metadata.json the folder is not a recording; its files are reported as unread, not lost
    assert result.quarantined == 0 and any(i.path.endswith("reduced_events_complete.jsonl") for i in result.ignored)
