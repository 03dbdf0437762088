"""The recipe option `screenshot_states` on a run cua-agent writes at test time: its computer-use loop (0.9.1, on
Xvfb, against the scripted model server) with a plain function tool beside the computer, so the run's states
are screenshots without text except where that tool answered (`window_title`, the visible windows' titles).

The script is the oracle: screenshot, click the entry, type, `window_title` (text), click Save, `window_title`
(text), the final answer. Two records target the tool's text answers; the four screenshot-only states after the
first, second, third and fifth actions appear in their history as the option says.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pipelines.infra import definition
from pipelines.stages.export import export
from pipelines.infra.lake import Lake
from pipelines.infra.options import ExportOptions
from pipelines.infra.runner import run_ingest
from pipelines.infra.runs import open_catalog
from tests.ingest.desktop import test_cua_producer as cua
from tests.scripted_model_server import answer, call
from transforms.export import screenshot_states
from transforms.export.transitions import Trajectory, Turn

RUN = cua.RUNS["anthropic"]
SCRIPT = [call("computer", action="screenshot"),
          call("computer", action="left_click", coordinate=list(RUN["entry"])),
          call("computer", action="type", text="hello world"),
          call("window_title"),
          call("computer", action="left_click", coordinate=list(RUN["save"])),
          call("window_title"),
          answer("Saved the form.")]
TITLE = "trajforge form"  # tests/ingest/desktop/tk_window.py's window
ANSWER = f"<predicted_observation>\n{TITLE}\n</predicted_observation>"  # the os domain's answer form


@pytest.fixture(scope="module")
def lake(tmp_path_factory):
    """(the lake holding the ingested run, its steps in order)."""
    out = tmp_path_factory.mktemp("cua-tool")
    folder, _, _ = cua._produce(out, SCRIPT, RUN["model"], producer_args=("title-tool",))
    lake = str(out / "lake")
    ingest = definition.parse("ingest-cua", 'dataset = "cua"\nformats = ["cua_trajectory"]\n'
                                            f'inputs = ["{folder.parent}"]\nstages = ["ingest"]\n')
    assert run_ingest(ingest, lake, progress=False, log=lambda line: None).status == "success"
    with open_catalog(Lake(lake), read_only=True) as cat:
        steps = cat.con.execute("SELECT step_id, observation.kind AS kind, observation.text AS text, "
                                "observation.screenshot AS shot FROM steps ORDER BY step_index"
                                ).to_arrow_table().to_pylist()
    return lake, steps


def _export(lake: str, out: Path, kind: str = "sft", fmt: str = "agentworld", **options) -> tuple[dict, list]:
    manifest = export(Lake(lake), None, "cua", str(out), ExportOptions(kind=kind, format=fmt, **options),
                      log=lambda line: None)
    rows = [json.loads(line) for shard in manifest["shards"] for line in (out / shard["path"]).read_text().splitlines()]
    return manifest, rows


def _screenshot_only(steps: list[dict]) -> list[str]:
    return [s["shot"] for s in steps if s["kind"] == "screen" and not s["text"] and s["shot"]]


def test_the_run_has_screenshot_only_states_and_text_answers(lake):
    _, steps = lake
    assert len(steps) == 7 and len(_screenshot_only(steps)) == 4
    assert [s["text"] for s in steps if s["kind"] == "tool_result"] == [TITLE, TITLE]


def test_by_default_history_shows_no_output_and_the_option_is_not_recorded(lake, tmp_path):
    manifest, rows = _export(lake[0], tmp_path / "plain")
    assert "screenshot_states" not in manifest["config"] and "recipe" not in manifest
    assert [r["messages"][-1]["content"] for r in rows] == [ANSWER] * 2
    # the click after the tool's text answer acts on the last screen seen: its point in that screen's pixels
    save = cua._executed(RUN["save"], RUN["declared"])
    assert f"pyautogui.click(x={save[0]}, y={save[1]})" in rows[1]["messages"][-4]["content"]
    history = [m["content"] for m in rows[1]["messages"][1:-2] if m["role"] == "assistant"]
    assert history.count("<predicted_observation>\n(no output)\n</predicted_observation>") == 4
    # the same records when the default is named: only the recorded options (and so the export id) differ
    named, named_rows = _export(lake[0], tmp_path / "named", screenshot_states="no-output")
    assert named_rows == rows and named["config"]["screenshot_states"] == "no-output"
    assert named["recipe"]["screenshot_states"] == {"mode": "no-output", "states": 0}


def test_placeholders_name_each_screenshots_blob_and_never_become_targets(lake, tmp_path):
    lake_url, steps = lake
    manifest, rows = _export(lake_url, tmp_path / "placeholder", screenshot_states="placeholder")
    assert [r["messages"][-1]["content"] for r in rows] == [ANSWER] * 2
    text = "\n".join(m["content"] for m in rows[1]["messages"][1:-1])
    shown = [screenshot_states.placeholder(blob) for blob in _screenshot_only(steps)]
    assert all(p in text for p in shown) and "(no output)" not in text
    assert manifest["recipe"]["screenshot_states"] == {"mode": "placeholder", "states": 4}
    assert manifest["recipe"]["steps"]["screenshot_states"] == "placeholder"
    # CPT shows them too, without loss: nothing there for a model to predict
    _, (document,) = _export(lake_url, tmp_path / "cpt", kind="cpt", fmt="swift", screenshot_states="placeholder")
    losses = [(m["content"], m["loss"]) for m in document["messages"] if m["role"] == "assistant"]
    assert [loss for content, loss in losses if "(screenshot only: sha256:" in content] == [False] * 4
    assert [loss for content, loss in losses if TITLE in content] == [True, True]


def test_drop_folds_the_actions_up_to_each_text_state_into_one_turn(lake, tmp_path):
    lake_url, steps = lake
    manifest, rows = _export(lake_url, tmp_path / "drop", screenshot_states="drop")
    assert len(rows) == 2 and manifest["recipe"]["screenshot_states"] == {"mode": "drop", "states": 4}
    first, second = rows
    assert [m["role"] for m in first["messages"]] == ["system", "user", "assistant"]
    action = first["messages"][1]["content"].split("**Action:**\n", 1)[1]
    # screenshot, click, type, then the tool call: one fenced block, in the order the loop ran them
    assert action.startswith("```python\n") and action.count("\n```") == 1 and "window_title" in action
    assert action.index("click") < action.index("hello world") < action.index("window_title")
    assert [m["role"] for m in second["messages"]] == ["system", "user", "assistant", "user", "assistant"]
    assert all("(no output)" not in m["content"] for r in rows for m in r["messages"])
    # every acting step stays in the records' lineage
    with open_catalog(Lake(lake_url), read_only=True) as cat:
        lineage = cat.con.execute('SELECT step_ids FROM export_rows WHERE export_id = ? ORDER BY "row"',
                                  [manifest["export_id"]]).fetchall()
    ids = [s["step_id"] for s in steps]
    assert [row[0] for row in lineage] == [ids[:5], ids[:7]]


def test_an_unknown_mode_is_refused_before_anything_runs(lake, tmp_path):
    with pytest.raises(Exception, match="screenshot_states"):
        _export(lake[0], tmp_path / "bad", screenshot_states="blur")



# --- the modes on hand-made lines: the edges a run rarely shows ------------------------------------------
def _turn(i: int, text: str | None, shot: str | None = None) -> Turn:
    return Turn(f"e:{i}", {"kind": "click", "x": 0.5, "y": 0.5}, "real", text, f"e:{i + 1}", "real",
                screen=(100, 100), screenshot=shot)


def _line(turns: list[Turn], start: int = 0, first_shot: str | None = None) -> Trajectory:
    return Trajectory("e", "main", "os", "task", "unknown", "osworld", {}, None, "e:0", "real", turns, start,
                      first_screenshot=first_shot)


def test_drop_keeps_a_branch_lines_start_on_the_turn_that_holds_it():
    turns = [_turn(0, None, "sha256:a"), _turn(1, "one"), _turn(2, None, "sha256:c"), _turn(3, "two")]
    for start, expected in ((1, 0), (2, 1), (3, 1)):
        folded, n = screenshot_states.apply(_line(turns, start), "drop")
        assert n == 2 and [t.step_ids for t in folded.turns] == [["e:0", "e:1"], ["e:2", "e:3"]]
        assert folded.start == expected, start


def test_drop_leaves_a_last_screenshot_and_a_state_never_recorded_as_they_are():
    turns = [_turn(0, None), _turn(1, "one"), _turn(2, None, "sha256:c")]
    folded, n = screenshot_states.apply(_line(turns), "drop")
    assert n == 0 and folded.turns == turns


def test_placeholder_shows_the_first_state_and_leaves_unrecorded_states_alone():
    turns = [_turn(0, None, "sha256:a"), _turn(1, None), _turn(2, "two")]
    shown, n = screenshot_states.apply(_line(turns, first_shot="sha256:f"), "placeholder")
    assert n == 2 and shown.first_state == "(screenshot only: sha256:f)"
    assert [t.shown for t in shown.turns] == ["(screenshot only: sha256:a)", None, "two"]
    assert [t.observation for t in shown.turns] == [None, None, "two"]  # never a target
    assert [x.t for x in shown.transitions()] == [2]
    same, none = screenshot_states.apply(_line(turns), "no-output")
    assert none == 0 and same.turns == turns
