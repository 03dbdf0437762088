"""Producers in the loop: Playwright records a trace.zip and a HAR of a short session on a loopback site
(tests/ingest/browser/producers.py); ingesting them gives back what the session did, in order, with its
times, URLs and screenshots. Python package + Debian chromium for library traces; @playwright/test under
Node for test-runner traces (one passing and one failing test)."""

import datetime as dt
import hashlib
import json
import zipfile

import pytest

from pipelines.infra import definition
from pipelines.infra.runner import run_ingest
from tests.ingest.browser import producers
from tests.parts import require

LIBRARY_KINDS = ["code", "navigate", "type", "click", "wait", "hotkey", "click", "wait", "back"]


def _ingest(lake, inputs):
    return run_ingest(definition.load("ingest-browser"), lake, [str(p) for p in inputs], progress=False,
                      log=lambda line: None)


def _episode(query, fmt: str, suffix: str = "") -> tuple[dict, list[dict]]:
    ep = query(f"SELECT * FROM episodes WHERE source_format = '{fmt}' AND source_uri LIKE '%{suffix}'")
    assert len(ep) == 1, ep
    steps = query(f"SELECT * FROM steps WHERE episode_id = '{ep[0]['episode_id']}' ORDER BY step_index")
    return ep[0], steps


def _in_window(stamps, start: dt.datetime, end: dt.datetime):
    """Every timestamp set, in order, and inside the time the producer ran (1 s of slack for rounding)."""
    slack = dt.timedelta(seconds=1)
    assert all(t is not None for t in stamps), stamps
    assert stamps == sorted(stamps)
    assert start - slack <= stamps[0] and stamps[-1] <= end + slack, (start, stamps, end)


@pytest.fixture(scope="module")
def library_run(tmp_path_factory):
    require("Playwright (Python) with chromium", producers.playwright_available(),
            "pip install playwright (Python) and apt-get install chromium")
    out = tmp_path_factory.mktemp("playwright") / "session"
    start = dt.datetime.now(dt.timezone.utc)
    with producers.site() as base:
        trace, har = producers.record_library_trace(base, out)
    end = dt.datetime.now(dt.timezone.utc)
    return {"base": base, "out": out, "trace": trace, "har": har, "start": start, "end": end}


def test_python_library_trace_and_har_ingest_to_the_session_steps(library_run, lake, query):
    run = library_run
    base = run["base"]
    result = _ingest(lake, [run["out"]])
    assert result.status == "success" and result.episodes == 2
    assert query("SELECT * FROM quarantine") == []  # ingest and validate kept both

    ep, steps = _episode(query, "playwright_trace")
    assert [s["action"]["kind"] for s in steps] == LIBRARY_KINDS
    actions = [s["action"] for s in steps]
    assert actions[0]["code"] == "browserContext.newPage({})"
    assert actions[1]["text"] == f"{base}/index.html"
    assert actions[2]["text"] == "Ada" and json.loads(actions[2]["element"]) == {"selector": "#name"}
    assert json.loads(actions[3]["element"]) == {"selector": "#greet"}
    assert 0 < actions[3]["x"] < 1 and 0 < actions[3]["y"] < 1  # the point Playwright clicked, normalized
    assert actions[5]["keys"] == ["Control", "A"]
    assert json.loads(actions[6]["element"]) == {"selector": "text=Next page"}

    # observations: the DOM snapshot before each call, then the page the last call left
    obs = [s["observation"] for s in steps]
    assert obs[0]["kind"] == "none"  # no page before newPage
    assert obs[1]["url"] == "about:blank"
    assert [o["url"] for o in obs[2:6]] == [f"{base}/index.html"] * 4
    assert obs[2]["title"] == "Greeter" and 'button "Greet"' in obs[2]["text"]
    assert "Hi Ada" in obs[5]["text"]  # the fetched greeting, on the page before the key press
    assert obs[8]["url"] == f"{base}/next.html" and obs[8]["title"] == "Next"  # the page go_back left
    final = steps[-1]["final_observation"]
    assert final["url"] == f"{base}/index.html" and final["title"] == "Greeter"
    assert (obs[2]["width"], obs[2]["height"]) == (producers.VIEWPORT["width"], producers.VIEWPORT["height"])

    # v7+ calls carry only monotonic times: wall time = context wallTime + (startTime - monotonicTime)
    _in_window([s["timestamp"] for s in steps], run["start"], run["end"])
    assert ep["started_at"] == steps[0]["timestamp"]

    # screenshots: the screencast JPEGs of the archive, stored once each in the blob store
    with zipfile.ZipFile(run["trace"]) as z:
        frames = {"sha256:" + hashlib.sha256(z.read(n)).hexdigest()
                  for n in z.namelist() if n.startswith(("screencast/", "resources/")) and n.endswith(".jpeg")}
    shots = [o["screenshot"] for o in obs[2:]] + [final["screenshot"]]
    assert all(shots) and set(shots) <= frames
    blob = query(f"SELECT * FROM blobs WHERE sha256 = '{shots[0][7:]}'")[0]
    assert blob["media_type"] == "image/jpeg" and blob["size_bytes"] > 0

    assert ep["task"] == "greet a user" and ep["outcome"] == "unknown" and steps[-1]["is_terminal"]
    env = json.loads(ep["env"])
    assert env["trace_version"] >= 7 and env["browser"] == "chromium" and env["sdk_language"] == "python"
    assert env["viewport"] == producers.VIEWPORT and "test_runner" not in env
    assert {"url": f"{base}/index.html", "status": 200} in env["documents"]


def test_python_har_is_the_session_requests(library_run, lake, query):
    run = library_run
    base = run["base"]
    result = _ingest(lake, [run["har"]])
    assert result.status == "success" and result.episodes == 1
    assert query("SELECT * FROM quarantine") == []
    ep, steps = _episode(query, "har")
    actions = [s["action"] for s in steps]
    assert [(a["kind"], a["text"]) for a in actions[:3]] == [
        ("navigate", f"{base}/index.html"), ("tool_call", None), ("navigate", f"{base}/next.html")]
    assert actions[1]["tool_name"] == "http_request"
    assert json.loads(actions[1]["arguments"])["url"] == f"{base}/api/greet?name=Ada"
    # going back loads the form again (no-store pages are not restored from the back-forward cache)
    assert [(a["kind"], a["text"]) for a in actions[3:]] == [("navigate", f"{base}/index.html")]
    obs = [s["observation"] for s in steps]
    assert obs[0]["kind"] == "none"
    assert obs[1]["url"] == f"{base}/index.html" and obs[1]["title"] == "Greeter"
    assert '{"greeting": "Hi Ada"}' in obs[2]["text"]  # the fetch's response is what the next step observes
    assert obs[3]["url"] == f"{base}/next.html" and "<h1>Second page</h1>" in obs[3]["text"]
    _in_window([s["timestamp"] for s in steps], run["start"], run["end"])
    env = json.loads(ep["env"])
    assert env["recorder"] == "Playwright" and env["browser"] == "chromium" and env["page_title"] == "Greeter"


@pytest.fixture(scope="module")
def runner_run(tmp_path_factory):
    require("the @playwright/test runner (node) with chromium", producers.playwright_test_available(),
            "node, and @playwright/test installed with npm under .venv/node (or PLAYWRIGHT_TEST_NODE_MODULES), "
            "and apt-get install chromium")
    work = tmp_path_factory.mktemp("playwright-test")
    start = dt.datetime.now(dt.timezone.utc)
    with producers.site() as base:
        out, process = producers.record_test_runner_traces(base, work)
    end = dt.datetime.now(dt.timezone.utc)
    assert process.returncode == 1, process.stdout + process.stderr  # the second test fails on purpose
    assert "1 failed" in process.stdout and "1 passed" in process.stdout, process.stdout
    return {"base": base, "out": out, "start": start, "end": end}


def test_test_runner_traces_ingest_with_the_runners_verdict(runner_run, lake, query):
    run = runner_run
    base = run["base"]
    traces = sorted(run["out"].glob("*/trace.zip"))
    assert len(traces) == 2
    with zipfile.ZipFile(traces[0]) as z:
        assert "test.trace" in z.namelist()  # the runner's own chunk beside the browser's
    # the runner's chunk and the API-request chunk (no call) are read, not quarantined
    result = _ingest(lake, [run["out"]])
    assert result.status == "success" and result.episodes == 2
    assert query("SELECT * FROM quarantine") == []  # ingest and validate kept both

    passed, steps = _episode(query, "playwright_trace", "greets-the-user/trace.zip")
    assert passed["task"].endswith("greets the user") and passed["outcome"] == "success"
    assert [s["action"]["kind"] for s in steps] == ["code", "navigate", "type", "click", "code", "click", "code"]
    assert steps[1]["action"]["text"] == "/index.html"  # as the test wrote it (baseURL resolves it)
    assert steps[2]["observation"]["url"] == f"{base}/index.html"
    assert steps[4]["action"]["code"].startswith("frame.expect(")
    assert steps[6]["observation"]["url"] == f"{base}/next.html"
    assert all(s["observation"]["screenshot"] for s in steps[2:])
    _in_window([s["timestamp"] for s in steps], run["start"], run["end"])
    env = json.loads(passed["env"])
    assert env["sdk_language"] == "javascript" and env["test_runner"]["errors"] == []
    assert env["test_runner"]["chunks"] == ["test.trace"] and env["test_runner"]["steps"] > len(steps)

    failed, steps = _episode(query, "playwright_trace", "wrong-greeting/trace.zip")
    assert failed["outcome"] == "failure" and failed["task"].endswith("expects the wrong greeting")
    assert [s["action"]["kind"] for s in steps] == ["code", "navigate", "type", "click", "code"]
    final = steps[-1]["final_observation"]
    assert final["is_error"] and "Error: Expect failed" in final["text"]
    errors = json.loads(failed["env"])["test_runner"]["errors"]
    assert errors and "toHaveText" in errors[0] and "\x1b" not in errors[0]
    _in_window([s["timestamp"] for s in steps], run["start"], run["end"])


def test_a_context_without_a_fixed_viewport_keeps_its_click_points(tmp_path, lake, query):
    """`no_viewport=True` (the page takes the window's size; the trace's context options name no viewport): each
    click's point is normalized by the page's size at that call, so x * width gives back the point Playwright
    recorded in its `input` event."""
    require("Playwright (Python) with chromium", producers.playwright_available(),
            "pip install playwright (Python) and apt-get install chromium")
    with producers.site() as base:
        trace, _ = producers.record_library_trace(base, tmp_path / "session", fixed_viewport=False)
    with zipfile.ZipFile(trace) as z:
        events = [json.loads(line) for name in z.namelist() if name.endswith(".trace")
                  for line in z.read(name).decode().splitlines() if line.strip()]
    options = next(e for e in events if e.get("type") == "context-options")
    assert not (options.get("options") or {}).get("viewport")  # nothing fixed: the old reader had no size
    points = {e["callId"]: e["point"] for e in events if e.get("type") == "input" and e.get("point")}
    _ingest(lake, [trace])
    ep, steps = _episode(query, "playwright_trace")
    clicks = [s for s in steps if s["action"]["kind"] == "click"]
    assert len(clicks) == 2 and len(points) >= 2
    for step, point in zip(clicks, [points[k] for k in sorted(points, key=lambda k: int(k.split("@")[-1]))]):
        width, height = step["observation"]["width"], step["observation"]["height"]
        assert width and height
        assert abs(step["action"]["x"] * width - point["x"]) < 0.01
        assert abs(step["action"]["y"] * height - point["y"]) < 0.01
