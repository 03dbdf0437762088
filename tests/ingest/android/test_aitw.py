"""AITW TFRecords built here with the release's feature names (tf.train.Example, GZIP-compressed)."""

import json
import zlib
from pathlib import Path

from ingest.android import aitw
from ingest.tfrecord import encode_example, frame, masked_crc32c, write_tfrecord

WIDTH, HEIGHT = 4, 2
PIXELS = bytes(range(WIDTH * HEIGHT * 3))  # raw uint8 RGB, as the release stores `image/encoded`


def aitw_step(episode: str, step: int, length: int, action_type: int, touch=(-1.0, -1.0), lift=(-1.0, -1.0),
              typed: str = "") -> bytes:
    return encode_example({
        "android_api_level": [30],
        "current_activity": ["com.google.android.apps.nexuslauncher.NexusLauncherActivity"],
        "device_type": ["pixel_4"],
        "episode_id": [episode],
        "episode_length": [length],
        "goal_info": ["turn off wifi"],
        "image/channels": [3],
        "image/encoded": [PIXELS],
        "image/height": [HEIGHT],
        "image/width": [WIDTH],
        "image/ui_annotations_positions": [0.5, 0.25, 0.5, 0.5, 0.0, 0.0, 0.5, 0.25],
        "image/ui_annotations_text": ["Settings", ""],
        "image/ui_annotations_ui_types": ["TEXT", "ICON_HOME"],
        "results/action_type": [action_type],
        "results/type_action": [typed],
        "results/yx_touch": list(touch),
        "results/yx_lift": list(lift),
        "step_id": [step],
    })


def build(path: Path, corrupt_record: int | None = None) -> Path:
    records = [
        aitw_step("1001", 1, 3, 3, typed="wifi"),
        aitw_step("1001", 0, 3, 4, touch=(0.8, 0.3), lift=(0.81, 0.3)),  # out of order on purpose
        aitw_step("1001", 2, 3, 10),
        aitw_step("2002", 0, 3, 4, touch=(0.8, 0.5), lift=(0.2, 0.5)),
        aitw_step("2002", 1, 3, 5),
        aitw_step("2002", 2, 3, 2),  # not an AITW action id
    ]
    framed = [frame(r) for r in records]
    if corrupt_record is not None:  # flip a payload byte: its data CRC no longer matches
        bad = bytearray(framed[corrupt_record])
        bad[40] ^= 0xFF
        framed[corrupt_record] = bytes(bad)
    path.write_bytes(zlib.compress(b"".join(framed), wbits=31))  # gzip, like the release
    return path


def test_aitw_records_become_episodes_ordered_by_step_id(run, query, tmp_path):
    data = build(tmp_path / "general-00000-of-00321")
    result = run("ingest-android", [data])
    # 6 records = 5 steps + 1 quarantined
    assert result.episodes == 2 and result.steps == 5 and result.quarantined == 1
    eps = {json.loads(e["env"])["episode_id"]: e for e in query("SELECT * FROM episodes")}
    done = eps["1001"]
    assert done["task"] == "turn off wifi" and done["outcome"] == "success" and done["reward"] == 1.0
    assert done["source_format"] == "aitw" and json.loads(done["env"])["device_type"] == "pixel_4"
    steps = query(f"SELECT * FROM steps WHERE episode_id = '{done['episode_id']}' ORDER BY step_index")
    tap, typed, status = (s["action"] for s in steps)
    # (y, x) = (0.8, 0.3) -> x 0.3, y 0.8; lift 0.01 away: a tap
    assert tap["kind"] == "tap" and abs(tap["x"] - 0.3) < 1e-6 and abs(tap["y"] - 0.8) < 1e-6
    assert json.loads(tap["raw"])["results/action_type"] == 4
    assert typed["kind"] == "type" and typed["text"] == "wifi"
    assert status["kind"] == "done" and status["text"] == "task_complete"
    assert steps[-1]["is_terminal"]
    obs = steps[0]["observation"]
    assert obs["width"] == WIDTH and obs["height"] == HEIGHT
    assert obs["text"].splitlines() == ["Activity: com.google.android.apps.nexuslauncher.NexusLauncherActivity",
                                        '[0] TEXT "Settings" @[1,1][3,2]', '[1] ICON_HOME desc="home" @[0,0][1,1]']
    assert json.loads(obs["ui_tree"])[0]["yxhw"] == [0.5, 0.25, 0.5, 0.5]

    cut = eps["2002"]  # its step 2 was quarantined: kept, but truncated rather than terminal
    assert cut["num_steps"] == 2 and cut["outcome"] == "unknown" and "truncated" in json.loads(cut["env"])
    swipe, back = (s["action"] for s in query(
        f"SELECT action FROM steps WHERE episode_id = '{cut['episode_id']}' ORDER BY step_index"))
    assert swipe["kind"] == "swipe" and swipe["direction"] == "up" and abs(swipe["y2"] - 0.2) < 1e-6
    assert back["kind"] == "back"
    row = query("SELECT * FROM quarantine")[0]
    assert row["rule"] == "bad_record" and "results/action_type 2 is not an AITW action" in row["reason"]


def test_screenshots_are_png_blobs(run, query, lake, tmp_path):
    run("ingest-android", [build(tmp_path / "general-00000-of-00321")])
    ref = query("SELECT observation.screenshot AS s FROM steps LIMIT 1")[0]["s"]
    blob = query(f"SELECT * FROM blobs WHERE sha256 = '{ref[7:]}'")[0]
    png = (Path(lake) / blob["uri"]).read_bytes()
    assert blob["media_type"] == "image/png" and png.startswith(b"\x89PNG\r\n\x1a\n")
    assert int.from_bytes(png[16:20], "big") == WIDTH and int.from_bytes(png[20:24], "big") == HEIGHT
    # IDAT holds the raw pixels row by row, each row after a 0 filter byte
    idat = png[png.index(b"IDAT") + 4:png.index(b"IEND") - 8]
    assert zlib.decompress(idat) == b"".join(b"\0" + PIXELS[r * 12:(r + 1) * 12] for r in range(HEIGHT))


def test_bad_crc_quarantines_that_record_with_its_offset_and_the_rest_continues(run, query, tmp_path):
    result = run("ingest-android", [build(tmp_path / "general-00000-of-00321", corrupt_record=1)])
    assert result.steps == 4 and result.quarantined == 2  # the bad CRC and the unknown action
    rows = {r["rule"]: r for r in query("SELECT * FROM quarantine")}
    offset = len(frame(aitw_step("1001", 1, 3, 3, typed="wifi")))
    assert rows["bad_crc"]["record_id"] == f"offset:{offset}"
    assert rows["bad_crc"]["reason"] == (f"general-00000-of-00321: offset {offset} (uncompressed): record data fails "
                                        "its CRC32C")
    # episode 1001 lost its step 0: truncated, not terminal
    ep = [e for e in query("SELECT * FROM episodes") if json.loads(e["env"])["episode_id"] == "1001"][0]
    assert ep["num_steps"] == 2 and ep["outcome"] == "unknown"


def test_units_sniff_tfrecords_by_feature_names():
    aitw_file = write_tfrecord([aitw_step("1", 0, 1, 10)], compress=True)[:4096]
    other = write_tfrecord([encode_example({"screenshot_widths": [1], "goal": ["x"]})])
    unknown = write_tfrecord([encode_example({"blob": [b"\0" * 5000]})])[:4096]
    heads = {"/d/general-0": aitw_file, "/d/ac-0": other, "/d/unknown-0": unknown,
             "/d/android_control-0": unknown, "/d/notes.txt": b"hello world, not a record"}
    assert aitw.units(sorted(heads), heads.__getitem__) == ["/d/general-0", "/d/unknown-0"]


def test_masked_crc_matches_the_tfrecord_reference():
    # CRC32C("123456789") = 0xE3069283 (RFC 3720 check value), masked as TFRecord does
    crc = 0xE3069283
    assert masked_crc32c(b"123456789") == ((((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF)
