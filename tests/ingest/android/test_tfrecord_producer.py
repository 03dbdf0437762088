"""Producer in the loop: TensorFlow's own `tf.io.TFRecordWriter` and `tf.train.Example` write AITW and
AndroidControl records with the releases' feature names and types (GZIP, as the releases are stored; plain
too), and the readers, which never import TensorFlow, give back what was written. TensorFlow also reads what
`ingest.tfrecord` writes. Feature specs: google-research `android_in_the_wild/README.md` and
`visualization_utils.py` (episode_id bytes, image/* int64, raw uint8 `image/encoded`, float positions and
touch points), `android_control/README.md` (episode_id int64, PNG screenshots, JSON actions)."""

import hashlib
import json
import os
from pathlib import Path

import numpy as np
import pytest

from ingest import tfrecord
from tests.ingest.android.test_androidcontrol import TREE
from tests.parts import require_module

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")  # TensorFlow's start-up chatter


@pytest.fixture(scope="module")
def tf():
    return require_module("tensorflow", "pip install tensorflow-cpu")


def _example(tf, features: dict) -> bytes:
    """A tf.train.Example made by TensorFlow: each value list is (kind, values), kind bytes|int64|float."""
    feature = {}
    for name, (kind, values) in features.items():
        if kind == "bytes":
            feature[name] = tf.train.Feature(bytes_list=tf.train.BytesList(
                value=[v.encode() if isinstance(v, str) else v for v in values]))
        elif kind == "int64":
            feature[name] = tf.train.Feature(int64_list=tf.train.Int64List(value=values))
        else:
            feature[name] = tf.train.Feature(float_list=tf.train.FloatList(value=values))
    return tf.train.Example(features=tf.train.Features(feature=feature)).SerializeToString()


def _write(tf, path: Path, records: list[bytes], gzip: bool = True) -> Path:
    with tf.io.TFRecordWriter(str(path), options="GZIP" if gzip else None) as writer:
        for record in records:
            writer.write(record)
    return path


def _pixels(seed: int, height: int = 8, width: int = 6) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 256, (height, width, 3), dtype=np.uint8)


def _aitw_step(tf, episode: str, step: int, length: int, action: int, touch=(-1.0, -1.0), lift=(-1.0, -1.0),
               typed: str = "", pixels: np.ndarray | None = None) -> bytes:
    pixels = _pixels(step) if pixels is None else pixels
    height, width, channels = pixels.shape
    return _example(tf, {
        "android_api_level": ("int64", [31]),
        "current_activity": ("bytes", ["com.android.settings/.Settings"]),
        "device_type": ("bytes", ["pixel_5"]),
        "episode_id": ("bytes", [episode]),
        "episode_length": ("int64", [length]),
        "goal_info": ("bytes", ["turn off wifi"]),
        "image/channels": ("int64", [channels]),
        "image/encoded": ("bytes", [pixels.tobytes()]),  # raw uint8 pixels, as the release stores them
        "image/height": ("int64", [height]),
        "image/width": ("int64", [width]),
        "image/ui_annotations_positions": ("float", [0.25, 0.5, 0.25, 0.5, 0.0, 0.0, 0.125, 0.25]),
        "image/ui_annotations_text": ("bytes", ["Wi‑Fi", ""]),
        "image/ui_annotations_ui_types": ("bytes", ["TEXT", "ICON_HOME"]),
        "results/action_type": ("int64", [action]),
        "results/type_action": ("bytes", [typed]),
        "results/yx_touch": ("float", list(touch)),
        "results/yx_lift": ("float", list(lift)),
        "step_id": ("int64", [step]),
    })


def test_aitw_gzip_tfrecord_written_by_tensorflow(tf, run, query, lake, tmp_path):
    shots = {("16150593985172894737", i): _pixels(10 + i) for i in range(3)}
    records = [
        _aitw_step(tf, "16150593985172894737", 0, 3, 4, touch=(0.3, 0.6), lift=(0.31, 0.6),  # on "Wi‑Fi"
                   pixels=shots["16150593985172894737", 0]),
        _aitw_step(tf, "16150593985172894737", 2, 3, 10, pixels=shots["16150593985172894737", 2]),  # out of order
        _aitw_step(tf, "16150593985172894737", 1, 3, 3, typed="wifi", pixels=shots["16150593985172894737", 1]),
        _aitw_step(tf, "8453234151231231", 0, 5, 4, touch=(0.8, 0.5), lift=(0.2, 0.5)),
        _aitw_step(tf, "8453234151231231", 1, 5, 5),
        _aitw_step(tf, "8453234151231231", 2, 5, 6),
        _aitw_step(tf, "8453234151231231", 3, 5, 7),
        _aitw_step(tf, "8453234151231231", 4, 5, 11),
    ]
    path = _write(tf, tmp_path / "general-00000-of-00321", records)
    assert path.read_bytes()[:2] == b"\x1f\x8b"
    result = run("ingest-android", [path])
    assert result.status == "success" and result.episodes == 2 and result.steps == 8
    assert query("SELECT * FROM quarantine") == []  # ingest and validate kept every record

    eps = {json.loads(e["env"])["episode_id"]: e for e in query("SELECT * FROM episodes")}
    first = eps["16150593985172894737"]
    assert first["source_format"] == "aitw" and first["task"] == "turn off wifi"
    assert first["outcome"] == "success" and first["reward"] == 1.0
    env = json.loads(first["env"])
    assert env["android_api_level"] == 31 and env["device_type"] == "pixel_5" and env["step_ids"] == [0, 1, 2]
    steps = query(f"SELECT * FROM steps WHERE episode_id = '{first['episode_id']}' ORDER BY step_index")
    tap = steps[0]["action"]
    assert [s["action"]["kind"] for s in steps] == ["tap", "type", "done"]
    # FloatList holds float32: the points come back as TensorFlow stored them, (y, x) swapped into x, y
    assert (tap["x"], tap["y"]) == (float(np.float32(0.6)), float(np.float32(0.3)))
    assert steps[1]["action"]["text"] == "wifi" and steps[2]["action"]["text"] == "task_complete"
    obs = steps[0]["observation"]
    assert (obs["width"], obs["height"]) == (6, 8)
    assert "Activity: com.android.settings/.Settings" in obs["text"] and "Wi‑Fi" in obs["text"]
    views = json.loads(obs["ui_tree"])
    assert views[0]["bounds"] == [[3, 2], [6, 4]]  # (y, x, h, w) = (.25, .5, .25, .5) on 6 x 8 pixels
    assert views[1]["content_description"] == "home"  # an icon without text: its type
    # the raw pixels went to the blob store as PNG; TensorFlow's decoder gives the same pixels back
    for i, step in enumerate(steps):
        uri = query(f"SELECT uri FROM blobs WHERE sha256 = '{step['observation']['screenshot'][7:]}'")[0]["uri"]
        decoded = tf.io.decode_png((Path(lake) / uri).read_bytes()).numpy()
        assert np.array_equal(decoded, shots["16150593985172894737", i])

    second = eps["8453234151231231"]
    assert second["outcome"] == "failure" and second["reward"] == 0.0
    kinds = [r["k"] for r in query(f"SELECT action.kind AS k FROM steps WHERE episode_id = "
                                   f"'{second['episode_id']}' ORDER BY step_index")]
    assert kinds == ["swipe", "back", "home", "key", "done"]


def test_androidcontrol_gzip_tfrecord_written_by_tensorflow(tf, run, query, tmp_path):
    screens = [tf.io.encode_png(_pixels(20 + i, 24, 12)).numpy() for i in range(4)]  # PNGs made by TensorFlow
    actions = [{"action_type": "open_app", "app_name": "Settings"},
               {"action_type": "click", "x": 6, "y": 12},
               {"action_type": "type", "x": 3, "y": 6, "text": "wifi"},  # README: click, input, enter
               {"action_type": "scroll", "direction": "down"}]
    record = _example(tf, {
        "episode_id": ("int64", [20220]),
        "goal": ("bytes", ["Turn off Wi-Fi in Settings"]),
        "screenshots": ("bytes", screens),
        "screenshot_widths": ("int64", [12] * 4),
        "screenshot_heights": ("int64", [24] * 4),
        "accessibility_trees": ("bytes", [TREE] * 4),
        "actions": ("bytes", [json.dumps(a) for a in actions[:3]]),
        "step_instructions": ("bytes", ["Open Settings", "Tap Network", "Search for wifi"]),
    })
    path = _write(tf, tmp_path / "android_control-00000-of-00020", [record])
    result = run("ingest-android", [path])
    assert result.status == "success" and result.episodes == 1 and result.steps == 3
    assert query("SELECT * FROM quarantine") == []
    ep = query("SELECT * FROM episodes")[0]
    assert ep["source_format"] == "androidcontrol" and ep["task"] == "Turn off Wi-Fi in Settings"
    env = json.loads(ep["env"])
    assert env["episode_id"] == 20220 and env["step_instructions"][2] == "Search for wifi"
    steps = query("SELECT * FROM steps ORDER BY step_index")
    assert [s["action"]["kind"] for s in steps] == ["open_app", "tap", "type"]
    assert (steps[1]["action"]["x"], steps[1]["action"]["y"]) == (0.5, 0.5)
    typed = steps[2]["action"]
    assert typed["text"] == "wifi" and (typed["x"], typed["y"]) == (0.25, 0.25) and typed["keys"] == ["ENTER"]
    shots = [s["observation"]["screenshot"] for s in steps] + [steps[-1]["final_observation"]["screenshot"]]
    assert shots == ["sha256:" + hashlib.sha256(png).hexdigest() for png in screens[:3]] + [shots[-1]]
    assert steps[0]["observation"]["text"].startswith("Package: com.android.settings")


def test_tfrecord_framing_and_example_parsing_agree_with_tensorflow(tf, tmp_path):
    features = {
        "empty": ("bytes", []),
        "text": ("bytes", ["naïve", b"\x00\xff raw"]),
        "ints": ("int64", [0, 1, -1, 2**40, -(2**63), 2**63 - 1]),
        "floats": ("float", [0.0, -1.5, 3.25, 1e-7]),
    }
    payloads = [_example(tf, features), _example(tf, {"n": ("int64", [7])}),
                _example(tf, {"big": ("bytes", [bytes(range(256)) * 300])})]
    for gzip in (False, True):
        path = _write(tf, tmp_path / f"plain-{gzip}.tfrecord", payloads, gzip=gzip)
        read = [p for _, p in tfrecord.iter_records(path.read_bytes(), path.name)]
        assert read == payloads
        assert tfrecord.sniff(path.read_bytes()[:4096]) is not None
    parsed = tfrecord.parse_example(payloads[0])
    assert parsed["text"] == ["naïve".encode(), b"\x00\xff raw"] and parsed["ints"] == features["ints"][1]
    assert parsed["floats"] == [float(np.float32(v)) for v in features["floats"][1]]
    assert parsed["empty"] == []

    # TensorFlow reads what ingest.tfrecord writes (tests and benchmarks build their corpora with it)
    ours = [tfrecord.encode_example({"episode_id": ["e1"], "step_id": [3], "yx": [0.5, 0.25]})]
    for compress in (False, True):
        path = tmp_path / f"ours-{compress}.tfrecord"
        path.write_bytes(tfrecord.write_tfrecord(ours, compress=compress))
        got = list(tf.data.TFRecordDataset(str(path), compression_type="GZIP" if compress else ""))
        example = tf.train.Example.FromString(got[0].numpy()).features.feature
        assert example["episode_id"].bytes_list.value == [b"e1"] and example["step_id"].int64_list.value == [3]
        assert list(example["yx"].float_list.value) == [0.5, 0.25]

    # a flipped payload byte: TensorFlow refuses the record, the reader reports its CRC and goes on
    path = _write(tf, tmp_path / "corrupt.tfrecord", payloads, gzip=False)
    data = bytearray(path.read_bytes())
    data[12 + 5] ^= 0xFF
    path.write_bytes(bytes(data))
    with pytest.raises(tf.errors.DataLossError):
        list(tf.data.TFRecordDataset(str(path)))
    read = list(tfrecord.iter_records(bytes(data), path.name))
    assert read[0][1].rule == "bad_crc" and [p for _, p in read[1:]] == payloads[1:]
