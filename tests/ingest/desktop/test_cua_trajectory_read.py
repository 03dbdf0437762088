"""Edge cases of cua-agent trajectory folders, hand-made in the layout its TrajectorySaverCallback writes (the
runs themselves are in test_cua_producer.py): a run cut while running, a damaged artifact, a call whose
screenshot is missing, an artifact the reader does not know, a click before any screenshot."""

from __future__ import annotations

import json
import struct
import zlib
from pathlib import Path

import orjson

from ingest.desktop import cua_trajectory
from tests.ingest import golden


def _png(width: int, height: int) -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    rows = b"".join(b"\x00" + b"\x00" * width for _ in range(height))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))


def _call(call_id: str, action: dict) -> dict:
    return {"id": f"id-{call_id}", "call_id": call_id, "action": action, "pending_safety_checks": [],
            "status": "completed", "type": "computer_call"}


def _run(tmp_path: Path, status: str, artifacts: list[tuple[str, object]]) -> Path:
    run = tmp_path / "2025-06-01_claudesonnet4_101010_ab12"
    run.mkdir()
    (run / "metadata.json").write_text(json.dumps({
        "trajectory_id": run.name, "created_at": "139700000000000000", "status": status,
        "kwargs": {"messages": [{"role": "user", "content": "Open the menu"}], "model": "anthropic/claude-x",
                   "agent_loop": "AnthropicHostedToolsConfig"}}))
    for counter, (name, content) in enumerate(artifacts):
        turn = run / f"turn_{counter:03d}"
        turn.mkdir()
        if isinstance(content, bytes):
            (turn / f"{counter:04d}_{name}.png").write_bytes(content)
        else:
            (turn / f"{counter:04d}_{name}.json").write_text(content if isinstance(content, str) else json.dumps(content))
    return run


def _response(*items: dict) -> dict:
    return {"timestamp": "139700000100000000", "model": "anthropic/claude-x", "response": {"output": list(items)}}


def test_a_run_cut_while_running_is_not_terminated_and_its_damage_is_named(tmp_path):
    run = _run(tmp_path, "running", [
        ("agent_response", _response(_call("c1", {"type": "screenshot"}))),
        ("screenshot_after", _png(800, 600)),
        ("computer_call_result", {"item": _call("c1", {"type": "screenshot"}), "result": []}),
        ("agent_response", '{"timestamp": "1397', ),  # cut mid-write
        ("agent_response", _response(_call("c2", {"type": "click", "button": "left", "x": 400, "y": 300}))),
        ("computer_call_result", {"item": _call("c2", {"type": "click", "x": 400, "y": 300}), "result": []}),
        ("trace_dump", {"anything": 1}),
    ])
    (run / "turn_000" / "notes.txt").write_text("a person's note")
    records = golden.read_records(cua_trajectory, run)
    rejected = [r for r in records if not hasattr(r, "steps")]
    (episode,) = [r for r in records if hasattr(r, "steps")]
    assert [r.location for r in rejected] == ["turn_003/0003_agent_response.json"]
    assert not episode.terminated and episode.outcome == "unknown"
    assert [s.action.kind for s in episode.steps] == ["wait", "click"]
    click = episode.steps[1].action
    assert (click.x, click.y) == (0.5, 0.5)
    assert orjson.loads(click.raw)["point"]["space"] == "screenshot"
    # the click's result came back without a screenshot: said, not invented
    assert (episode.final_observation.kind, episode.final_observation.screenshot) == ("screen", None)
    assert episode.env["results_without_screenshot"] == 1
    assert any("trace_dump" in w["reason"] for w in episode.env["ingest_warnings"])
    assert any("turn_000/notes.txt" in w["reason"] for w in episode.env["ingest_warnings"])


def test_a_click_before_any_screenshot_keeps_its_pixels_without_a_fraction(tmp_path):
    run = _run(tmp_path, "completed", [
        ("agent_response", _response(_call("c1", {"type": "click", "button": "left", "x": 10, "y": 20}))),
        ("computer_call_result", {"item": _call("c1", {"type": "click", "x": 10, "y": 20}), "result": []}),
    ])
    (episode,) = golden.read_records(cua_trajectory, run)
    click = episode.steps[0].action
    assert (click.x, click.y) == (None, None)
    assert json.loads(click.element) == {"x_px": 10, "y_px": 20}
    assert episode.terminated


def test_a_run_whose_metadata_was_cut_is_read_from_its_turns(tmp_path):
    user = {"role": "user", "content": "Open the menu"}
    run = _run(tmp_path, "completed", [
        ("agent_response", {**_response(_call("c1", {"type": "screenshot"})), "kwargs": {"messages": [user]}}),
        ("screenshot_after", _png(640, 480)),
        ("computer_call_result", {"item": _call("c1", {"type": "screenshot"}), "result": []}),
    ])
    metadata = run / "metadata.json"
    metadata.write_bytes(metadata.read_bytes()[:40])  # killed while it rewrote the file
    records = golden.read_records(cua_trajectory, run)
    (row,) = [r for r in records if not hasattr(r, "steps")]
    (episode,) = [r for r in records if hasattr(r, "steps")]
    assert row.location == "metadata.json" and "read from its turns" in row.reason
    assert episode.task == "Open the menu" and not episode.terminated
    assert [s.action.kind for s in episode.steps] == ["wait"]
    assert (episode.final_observation.width, episode.final_observation.height) == (640, 480)


def test_screenshot_dir_copies_go_to_the_run_whose_call_named_them():
    """Two runs sharing one `screenshot_dir`: each copy is a file of the run that made the call it is named by;
    an image no call names, or one inside a turn folder, is nobody's copy."""
    root = Path("/in/trajectories")
    one, two = root / "2025-09-14_run_a", root / "2025-09-14_run_b"
    heads: dict[str, bytes] = {}
    for run, ids in ((one, ("toolu_01A", "toolu_01B")), (two, ("call_9Z",))):
        for n, call_id in enumerate(ids):
            heads[f"{run}/turn_{n:03d}/{n:04d}_computer_call_result.json"] = json.dumps(
                {"item": {"type": "computer_call", "id": "cu", "call_id": call_id}}, indent=2).encode()
    shots = root / "call_screenshots"
    files = sorted([*heads, f"{shots}/toolu_01A.png", f"{shots}/toolu_01B.png", f"{shots}/call_9Z.png",
                    f"{shots}/user_screenshot_1.png", f"{one}/turn_000/0001_screenshot_after.png",
                    f"{one}/turn_001/toolu_01B.png", f"{root}/notes.png"])
    members = cua_trajectory.members([str(one), str(two)], files, lambda p: heads[p])
    assert {run: sorted(p for p, _ in found) for run, found in members.items()} == {
        str(one): [f"{shots}/toolu_01A.png", f"{shots}/toolu_01B.png"], str(two): [f"{shots}/call_9Z.png"]}
    assert all(why == cua_trajectory.COPY_WHY for found in members.values() for _, why in found)


def test_without_images_outside_turn_folders_no_call_result_is_opened():
    files = ["/in/r/metadata.json", "/in/r/turn_000/0000_computer_call_result.json",
             "/in/r/turn_000/0001_screenshot_after.png"]

    def head(path):
        raise AssertionError(f"opened {path}")
    assert cua_trajectory.members(["/in/r"], files, head) == {"/in/r": []}
