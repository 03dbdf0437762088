"""AndroidControl TFRecords built here with the release's feature names, accessibility forests encoded
with android_env's field numbers."""

import json
import zlib
from pathlib import Path

from ingest import protowire as pw
from ingest.android import androidcontrol
from ingest.png import encode_png
from ingest.tfrecord import encode_example, frame

W, H = 1080, 2400


def node(uid: int, cls: str, bounds, text: str = "", children=(), clickable=False) -> bytes:
    rect = b"".join(pw.field_varint(n, v) for n, v in zip((1, 2, 3, 4), bounds))
    data = pw.field_varint(1, uid) + pw.field_bytes(2, rect) + pw.field_bytes(3, cls.encode())
    data += pw.field_bytes(6, b"com.android.settings") + pw.field_bytes(7, text.encode())
    data += pw.field_varint(16, 1) + pw.field_varint(23, 1)  # enabled, visible to user
    if clickable:
        data += pw.field_varint(14, 1)
    if children:
        data += pw.field_bytes(25, b"".join(pw.varint(c) for c in children))
    return data


def forest(*nodes: bytes) -> bytes:
    tree = b"".join(pw.field_bytes(1, n) for n in nodes)
    window = pw.field_varint(3, 7) + pw.field_bytes(11, tree)
    return pw.field_bytes(1, window)


SCREENS = [encode_png(bytes([i]) * 12, 2, 2, 3) for i in range(3)]  # three distinct tiny PNGs
TREE = forest(node(10, "android.widget.FrameLayout", (0, 0, W, H), children=(11,)),
              node(11, "android.widget.TextView", (40, 300, 1040, 420), text="Network & internet", clickable=True))


def episode(episode_id: int, actions: list[dict], screens=SCREENS) -> bytes:
    return encode_example({
        "episode_id": [episode_id],
        "goal": ["Turn off Wi-Fi in Settings"],
        "screenshots": list(screens),
        "screenshot_widths": [W] * len(screens),
        "screenshot_heights": [H] * len(screens),
        "accessibility_trees": [TREE] * len(screens),
        "actions": [json.dumps(a) for a in actions],
        "step_instructions": [f"step {i}" for i in range(len(actions))],
    })


def build(path: Path) -> Path:
    good = episode(42, [{"action_type": "click", "x": 540, "y": 360},
                        {"action_type": "scroll", "direction": "down"}])
    few = episode(43, [{"action_type": "navigate_back"}])  # 3 screenshots need 2 actions
    more = episode(44, [{"action_type": "open_app", "app_name": "Settings"},
                        {"action_type": "input_text", "text": "wifi"}, {"action_type": "navigate_home"},
                        {"action_type": "long_press", "x": 108, "y": 240}, {"action_type": "wait"}],
                   screens=SCREENS + SCREENS)[:]
    path.write_bytes(zlib.compress(frame(good) + frame(few) + frame(more), wbits=31))
    return path


def test_androidcontrol_episode_steps_and_final_observation(run, query, tmp_path):
    result = run("ingest-android", [build(tmp_path / "android_control-00000-of-00020")])
    assert result.episodes == 2 and result.steps == 7 and result.quarantined == 1
    ep = [e for e in query("SELECT * FROM episodes") if json.loads(e["env"])["episode_id"] == 42][0]
    assert ep["task"] == "Turn off Wi-Fi in Settings" and ep["source_format"] == "androidcontrol"
    assert json.loads(ep["env"])["step_instructions"] == ["step 0", "step 1"] and ep["outcome"] == "unknown"
    steps = query(f"SELECT * FROM steps WHERE episode_id = '{ep['episode_id']}' ORDER BY step_index")
    tap, scroll = steps[0]["action"], steps[1]["action"]
    assert tap["kind"] == "tap" and tap["x"] == 0.5 and tap["y"] == 0.15  # (540, 360) on 1080x2400
    assert json.loads(tap["raw"]) == {"action_type": "click", "x": 540, "y": 360}
    assert scroll["kind"] == "scroll" and scroll["direction"] == "down"
    obs = steps[0]["observation"]
    assert obs["width"] == W and obs["height"] == H
    assert obs["text"] == ('Package: com.android.settings\n'
                           '[1] TextView "Network & internet" {clickable} @[40,300][1040,420]')
    views = json.loads(obs["ui_tree"])
    assert views[0]["children"] == [1] and views[1]["parent"] == 0 and views[1]["window_id"] == 7
    # the third screenshot is the last step's final observation, not a step
    final = steps[-1]["final_observation"]
    shots = [s["observation"]["screenshot"] for s in steps] + [final["screenshot"]]
    assert len(set(shots)) == 3 and all(s.startswith("sha256:") for s in shots)
    assert query("SELECT count(*) AS n FROM blobs WHERE media_type = 'image/png'")[0]["n"] == 3

    kinds = [r["k"] for r in query("SELECT action.kind AS k FROM steps s JOIN episodes e USING (episode_id) "
                                   "WHERE e.env LIKE '%\"episode_id\":44%' ORDER BY step_index")]
    assert kinds == ["open_app", "type", "home", "long_press", "wait"]
    row = query("SELECT * FROM quarantine")[0]
    assert row["rule"] == "bad_record" and "3 screenshots, 3x3 sizes and 1 actions" in row["reason"]


def test_units_claim_android_control_files():
    head = (b"\x1f\x8b" + b"\0" * 20)
    ac = zlib.compress(frame(episode(1, [{"action_type": "wait"}], SCREENS[:2]))[:4096], wbits=31)[:4096]
    heads = {"/d/android_control-00000-of-00020": ac, "/d/broken.gz": head}
    assert androidcontrol.units(sorted(heads), heads.__getitem__) == ["/d/android_control-00000-of-00020"]


def test_readme_type_action_is_a_typed_text_at_a_point_then_enter(run, query, tmp_path):
    """The README's `type`: click at (x, y), input the text, press enter (unlike `input_text`, text only)."""
    path = tmp_path / "android_control-00001-of-00020"
    path.write_bytes(zlib.compress(frame(episode(45, [{"action_type": "type", "x": 270, "y": 600,
                                                        "text": "wifi"}], SCREENS[:2])), wbits=31))
    result = run("ingest-android", [path])
    assert result.episodes == 1 and query("SELECT * FROM quarantine") == []
    action = query("SELECT action FROM steps")[0]["action"]
    assert action["kind"] == "type" and action["text"] == "wifi" and action["keys"] == ["ENTER"]
    assert (action["x"], action["y"]) == (0.25, 0.25)
