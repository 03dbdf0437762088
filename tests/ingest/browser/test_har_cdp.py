import json

from ingest.browser import cdp, har
from tests.conftest import SAMPLES

HAR = SAMPLES / "browser" / "har"
CDP = SAMPLES / "browser" / "cdp-devtoolslog" / "redirects-from-script.devtoolslog.json"


def test_har_redirect_chain_is_three_navigations_and_the_page_is_the_final_observation(run, query):
    result = run("ingest-browser", [HAR / "har-redirect.har"])
    assert result.status == "success" and result.episodes == 1 and result.steps == 3
    steps = query("SELECT * FROM steps ORDER BY step_index")
    assert [s["action"]["kind"] for s in steps] == ["navigate", "navigate", "navigate"]
    assert [s["action"]["text"] for s in steps] == [
        "https://theverge.com/", "http://www.theverge.com/", "https://www.theverge.com/"]
    assert json.loads(steps[0]["action"]["arguments"])["method"] == "GET"
    assert json.loads(steps[0]["action"]["raw"])["_frameref"] == "frame@3767e074ecde4cb8372abba2f6f9bb4f"
    assert steps[0]["observation"]["kind"] == "none"  # nothing was loaded before the first request
    # the 301 of request 0 is what step 1 observes
    obs = steps[1]["observation"]
    assert obs["kind"] == "web" and obs["url"] == "https://theverge.com/" and obs["title"] == "Microsoft"
    assert obs["text"].startswith("HTTP/2.0 301") and "location: http://www.theverge.com/" in obs["text"]
    final = steps[-1]["final_observation"]
    assert final["url"] == "https://www.theverge.com/" and final["text"].endswith("<h1>hello</h1>")
    assert str(steps[0]["timestamp"]) == "2022-06-16 21:41:23.951000+00:00"
    assert steps[-1]["is_last"] and not steps[-1]["is_terminal"]
    ep = query("SELECT * FROM episodes")[0]
    assert ep["domain"] == "web" and ep["platform"] == "browser" and ep["source_format"] == "har"
    assert ep["task"] is None and json.loads(ep["env"])["recorder_version"] == "1.23.0-next"


def test_har_with_utf8_byte_order_mark_ingests_the_same_steps(run, query, tmp_path):
    # Windows tools (Fiddler, some browser exports) write HAR with a UTF-8 BOM; JSON parsers reject it
    path = tmp_path / "bom.har"
    path.write_bytes(b"\xef\xbb\xbf" + (HAR / "har-redirect.har").read_bytes())
    result = run("ingest-browser", [path])
    assert result.status == "success" and result.episodes == 1 and result.steps == 3
    assert result.quarantined == 0
    steps = query("SELECT * FROM steps ORDER BY step_index")
    assert [s["action"]["text"] for s in steps] == [
        "https://theverge.com/", "http://www.theverge.com/", "https://www.theverge.com/"]
    assert str(steps[0]["timestamp"]) == "2022-06-16 21:41:23.951000+00:00"


def test_har_external_body_is_named_not_invented(run, query):
    run("ingest-browser", [HAR / "har-sha1.har"])
    final = query("SELECT final_observation AS f FROM steps")[0]["f"]
    assert "stored in the external file 'har-sha1-main-response.txt'" in final["text"]
    assert final["title"] == "Hey"


def test_har_large_body_goes_to_the_blob_store(run, query, tmp_path, lake):
    doc = json.loads((HAR / "har-redirect.har").read_text())
    body = "x" * 100_000
    doc["log"]["entries"][-1]["response"]["content"].update(text=body, size=len(body))
    path = tmp_path / "big.json"  # no .har suffix: detected from content
    path.write_text(json.dumps(doc))
    run("ingest-browser", [path])
    final = query("SELECT final_observation AS f FROM steps WHERE is_last")[0]["f"]
    ref = json.loads(final["ui_tree"])["body_blob"]
    assert ref.startswith("sha256:") and ref in final["text"] and body not in final["text"]
    blob = query(f"SELECT * FROM blobs WHERE sha256 = '{ref[7:]}'")[0]
    assert blob["size_bytes"] == 100_000 and blob["media_type"] == "text/html"
    assert "text" not in json.loads(query("SELECT action.raw AS r FROM steps WHERE is_last")[0]["r"])[
        "response"]["content"]


def test_cdp_log_requests_and_redirects_become_steps(run, query):
    result = run("ingest-browser", [CDP])
    assert result.episodes == 1 and result.steps == 4 and result.quarantined == 0
    steps = query("SELECT * FROM steps ORDER BY step_index")
    first = steps[0]["action"]
    assert first["kind"] == "navigate" and first["text"] == "http://localhost:10200/redirects-script.html"
    assert [s["action"]["text"] for s in steps[1:]] == [
        "http://localhost:10200/redirects-script.html?redirect=http%3A%2F%2Flocalhost%3A10503%2Fredirects-script"
        ".html%3Fredirect%3Dhttps%253A%252F%252Fairhorner.com%252F",
        "http://localhost:10503/redirects-script.html?redirect=https%3A%2F%2Fairhorner.com%2F",
        "https://airhorner.com/"]
    assert steps[1]["observation"]["text"].startswith("HTTP/1.1 200 OK")
    # the 302 came back as the redirectResponse of the next requestWillBeSent
    assert steps[2]["observation"]["text"].startswith("HTTP/1.1 302 Found")
    assert steps[-1]["final_observation"]["text"].startswith("HTTP/2.0 200")
    assert str(steps[0]["timestamp"]) == "2019-02-28 17:56:08.301146+00:00"
    env = json.loads(query("SELECT env FROM episodes")[0]["env"])
    assert env["main_frame_url"] == "http://localhost:10200/redirects-script.html"
    assert env["events"]["Page.lifecycleEvent"] == 15


def test_detection_reads_content_not_names():
    heads = {"/in/a.json": CDP.read_bytes()[:4096], "/in/b.txt": (HAR / "har-sha1.har").read_bytes()[:4096],
             "/in/c.json": b'{"log": "not har"}', "/in/d.json": b'[{"method": "tools/call"}]'}
    assert cdp.units(sorted(heads), heads.__getitem__) == ["/in/a.json"]
    assert har.units(sorted(heads), heads.__getitem__) == ["/in/b.txt"]
