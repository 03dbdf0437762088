"""AndroidWorld result files built here in the shape its checkpointer writes: a gzipped pickle of a list of
episode dicts whose `episode_data` holds per-step lists, with the agent's own classes
(`android_world.env.representation_utils.UIElement`, `...json_action.JSONAction`) pickled by reference."""

import datetime as dt
import gzip
import json
import os
import pickle
import sys
import types
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from ingest.android import androidworld
from tests.ingest import golden

W, H = 4, 8  # tiny screenshots; screen_config says 1080x2400 but the arrays are what was captured


def android_world_classes():
    """Stand-ins for AndroidWorld's dataclasses, registered under its module names so pickle refers to them
    exactly as a real result file does."""
    rep = types.ModuleType("android_world.env.representation_utils")
    act = types.ModuleType("android_world.env.json_action")

    @dataclass
    class BoundingBox:
        x_min: float
        x_max: float
        y_min: float
        y_max: float

    @dataclass
    class UIElement:
        text: str | None = None
        content_description: str | None = None
        class_name: str | None = None
        bbox: Any = None
        bbox_pixels: Any = None
        is_clickable: bool | None = None
        is_enabled: bool | None = None
        is_visible: bool | None = None
        package_name: str | None = None
        resource_name: str | None = None

    @dataclass
    class JSONAction:
        action_type: str | None = None
        index: int | None = None
        x: int | None = None
        y: int | None = None
        text: str | None = None
        direction: str | None = None
        goal_status: str | None = None
        app_name: str | None = None

    for cls, mod in ((BoundingBox, rep), (UIElement, rep), (JSONAction, act)):
        cls.__module__, cls.__qualname__ = mod.__name__, cls.__name__
        setattr(mod, cls.__name__, cls)
    return rep, act


@pytest.fixture
def aw(monkeypatch):
    rep, act = android_world_classes()
    for name, mod in (("android_world", types.ModuleType("android_world")),
                      ("android_world.env", types.ModuleType("android_world.env")),
                      ("android_world.env.representation_utils", rep), ("android_world.env.json_action", act)):
        monkeypatch.setitem(sys.modules, name, mod)
    return rep, act


def result_file(path, rep, act, evil=None):
    def element(text, box):
        x1, y1, x2, y2 = box
        return rep.UIElement(text=text, class_name="android.widget.TextView", is_clickable=True, is_enabled=True,
                             is_visible=True, package_name="com.android.settings",
                             bbox_pixels=rep.BoundingBox(x1, x2, y1, y2))

    screens = [np.full((H, W, 3), i, dtype=np.uint8) for i in range(3)]
    elements = [element("Network & internet", (0, 2, 4, 4)), element("Wi-Fi", (0, 4, 2, 6))]
    ok = {
        "goal": "Turn wifi off.", "task_template": "SystemWifiTurnOff", "instance_id": 0, "seed": 42,
        "agent_name": "m3a_gpt4v", "is_successful": 1.0, "run_time": 31.5, "exception_info": None,
        "finish_dtime": dt.datetime(2024, 6, 1, 10, 0, 0), "episode_length": 3,
        "screen_config": {"width": W, "height": H, "orientation": "portrait", "config_name": "default"},
        "episode_data": {
            "raw_screenshot": screens,
            "before_ui_elements": [elements] * 3,
            "action_output": ['Reason: open network settings\nAction: {"action_type": "click", "index": 0}',
                              'Reason: toggle\nAction: {"action_type": "click", "index": 1}',
                              'Reason: done\nAction: {"action_type": "status", "goal_status": "complete"}'],
            "action_output_json": [act.JSONAction(action_type="click", index=0),
                                   act.JSONAction(action_type="click", index=1),
                                   act.JSONAction(action_type="status", goal_status="complete")],
            "action_reason": ["open network settings", "toggle", "done"],
            "summary": ["Opened Network & internet", "Turned Wi-Fi off", None],
            "step_number": [0, 1, 2],
        },
    }
    failed = {"goal": "Send an SMS.", "task_template": "SimpleSmsSend", "instance_id": 1,
              "is_successful": float("nan"), "episode_data": float("nan"), "episode_length": float("nan"),
              "exception_info": "Traceback (most recent call last):\n  ...\nTimeoutError: adb did not answer"}
    episodes = [ok, failed] + ([evil] if evil is not None else [])
    path.write_bytes(gzip.compress(pickle.dumps(episodes), compresslevel=5))
    return path


def test_androidworld_results_become_episodes(run, query, tmp_path, aw):
    result = run("ingest-android", [result_file(tmp_path / "SystemWifiTurnOff.pkl.gz", *aw)])
    assert result.episodes == 1 and result.steps == 3 and result.quarantined == 1  # 2 episodes in
    ep = query("SELECT * FROM episodes")[0]
    assert ep["task"] == "Turn wifi off." and ep["agent"] == "m3a_gpt4v" and ep["outcome"] == "success"
    assert ep["reward"] == 1.0 and ep["started_at"] is None and ep["source_format"] == "androidworld"
    env = json.loads(ep["env"])
    assert env["finish_local_time"] == "2024-06-01T10:00:00" and env["task_template"] == "SystemWifiTurnOff"
    assert env["summaries"][:2] == ["Opened Network & internet", "Turned Wi-Fi off"]
    steps = query("SELECT * FROM steps ORDER BY step_index")
    tap = steps[0]["action"]
    # element 0 spans pixels (0,2)-(4,4) on the 4x8 screenshot: centre (2, 3)
    assert tap["kind"] == "tap" and tap["x"] == 0.5 and tap["y"] == 3 / 8
    assert json.loads(tap["element"])["text"] == "Network & internet"
    assert tap["raw"].startswith("Reason: open network settings\nAction:")
    assert steps[0]["reasoning"] == "open network settings"
    obs = steps[0]["observation"]
    assert obs["width"] == W and obs["height"] == H and obs["screenshot"].startswith("sha256:")
    assert obs["text"].splitlines()[0] == '[0] TextView "Network & internet" {clickable} @[0,2][4,4]'
    assert steps[2]["action"]["kind"] == "done" and steps[2]["action"]["text"] == "complete"
    assert steps[2]["is_terminal"]
    row = query("SELECT * FROM quarantine")[0]
    assert row["rule"] == "failed_episode" and row["record_id"] == "1"
    assert row["reason"] == ("SystemWifiTurnOff.pkl.gz: episode 1 (SimpleSmsSend #1): the run recorded no steps: "
                             "TimeoutError: adb did not answer")


class Exploit:
    def __reduce__(self):
        return (os.system, ("touch /tmp/androidworld-pwned",))


def test_a_result_file_with_a_forbidden_class_is_refused_whole(run, query, tmp_path, aw):
    path = result_file(tmp_path / "Evil.pkl.gz", *aw, evil={"goal": Exploit()})
    result = run("ingest-android", [path])
    assert result.steps == 0 and result.quarantined == 1 and not os.path.exists("/tmp/androidworld-pwned")
    row = query("SELECT * FROM quarantine")[0]
    assert row["rule"] == "forbidden_pickle_class"
    assert row["reason"] == (f"Evil.pkl.gz: pickle needs {os.system.__module__}.system, which is not allowed; "
                             "nothing was loaded")


def test_units_are_gzipped_pickles():
    heads = {"/r/A.pkl.gz": b"\x1f\x8b\x08", "/r/B.pkl.gz": b"not gzip", "/r/C.pkl": b"\x80\x04"}
    assert androidworld.units(sorted(heads), heads.__getitem__) == ["/r/A.pkl.gz"]


# --- agents other than M3A / T3A -----------------------------------------------------------------------------
# Hand-made from AndroidWorld's runner (episode_runner.run_episode + suite_utils._run_task): each step's
# `result.data | {"step_number": n}`, transposed to per-key lists, under the episode keys _run_task writes. The
# agent is one that drives the device through MCP tools and records only its own text per step (real result
# files of such an agent are read in test_androidworld_real.py); AndroidWorld needs an emulator to run.

def _transpose(steps: list[dict]) -> dict[str, list]:  # episode_runner._transpose_lod_to_dol
    out: dict[str, list] = {}
    for step in steps:
        for key, value in step.items():
            out.setdefault(key, []).append(value)
    return out


def mcp_agent_result(path, success: float, outputs: list[str | None]):
    steps = [{"raw_screenshot": np.full((H, W, 3), n, dtype=np.uint8), "agent_output": text,
              "tool_calls": 1 if text else 0, "step_number": n} for n, text in enumerate(outputs)]
    episode = {"goal": "Turn wifi off.", "task_template": "SystemWifiTurnOff", "instance_id": 0, "seed": 7,
               "agent_name": "mcp_agent", "is_successful": success, "run_time": 12.0, "exception_info": None,
               "finish_dtime": dt.datetime(2025, 3, 2, 9, 30), "episode_length": len(steps), "aux_data": None,
               "screen_config": {"width": W, "height": H, "orientation": "portrait", "config_name": "default"},
               "episode_data": _transpose(steps)}
    path.write_bytes(gzip.compress(pickle.dumps([episode])))
    return path


def test_an_agent_that_records_only_its_text_gives_message_steps_and_its_reward(run, query, tmp_path):
    outputs = ["I will open Settings. Tool: open_app(app_name='Settings')",
               "Tapping Network & internet. Tool: tap(x=540, y=700)",
               "Wi-Fi is off now. Task complete."]
    result = run("ingest-android", [mcp_agent_result(tmp_path / "SystemWifiTurnOff.pkl.gz", 1.0, outputs)])
    assert result.episodes == 1 and result.steps == 3 and result.quarantined == 0
    golden.check_counted(Path(__file__).with_name("golden") / "androidworld-mcp-agent.json", query)
    ep = query("SELECT * FROM episodes")[0]
    assert (ep["outcome"], ep["reward"], ep["agent"], ep["task"]) == ("success", 1.0, "mcp_agent", "Turn wifi off.")
    env = json.loads(ep["env"])
    assert [w["rule"] for w in env["ingest_warnings"]] == ["free_text_steps"]
    steps = query("SELECT * FROM steps ORDER BY step_index")
    assert [s["action"]["kind"] for s in steps] == ["message"] * 3
    assert [s["action"]["text"] for s in steps] == outputs
    assert json.loads(steps[1]["action"]["raw"]) == {"agent_output": outputs[1], "tool_calls": 1, "step_number": 1}
    assert all(s["observation"]["screenshot"].startswith("sha256:") for s in steps)
    assert steps[-1]["is_last"] and not steps[-1]["is_terminal"]  # no status action: the end is not recorded


def test_an_episode_with_no_usable_step_keeps_its_outcome_in_a_row(run, query, tmp_path):
    result = run("ingest-android", [mcp_agent_result(tmp_path / "SystemWifiTurnOff.pkl.gz", 0.0, [None, " "])],
                 stages=["ingest"])
    assert result.episodes == 0
    rows = {r["rule"]: r for r in query("SELECT * FROM quarantine")}
    assert json.loads(rows["empty_episode"]["snippet"]) == {
        "outcome": "failure", "reward": 0.0, "task": "Turn wifi off.", "agent": "mcp_agent", "steps_recorded": 2}
