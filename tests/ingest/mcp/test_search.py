import json

from ingest.search import episode_domain, parse_results
from tests.conftest import SAMPLES


def test_search_session_gets_the_search_domain_and_parsed_results(run, query):
    result = run("ingest-mcp", [SAMPLES / "search"])
    assert result.episodes == 1 and result.steps == 2
    ep = query("SELECT * FROM episodes")[0]
    assert ep["domain"] == "search" and ep["source_format"] == "mcp_jsonrpc" and ep["agent"] == "deep-research-agent"
    assert [t["name"] for t in json.loads(ep["env"])["tools"]] == ["web_search", "web_extractor"]
    steps = query("SELECT * FROM steps ORDER BY step_index")
    assert steps[0]["action"]["tool_name"] == "web_search"
    assert json.loads(steps[0]["action"]["arguments"]) == {"queries": ["parquet file format footer metadata"]}
    obs = steps[1]["observation"]
    assert obs["text"].startswith("[1] https://en.wikipedia.org/wiki/Apache_Parquet\nTitle: Apache Parquet - Wikipedia")
    results = json.loads(obs["ui_tree"])["results"]
    assert [r["index"] for r in results] == [1, 2, 3]
    assert results[1] == {"index": 2, "url": "https://parquet.apache.org/docs/file-format/",
                          "title": "File Format | Parquet",
                          "snippet": "This file and the thrift definition should be read together to understand the "
                                     "format. Metadata is written after the data to allow for single pass writing.",
                          "date": "Mar 11, 2024"}
    assert results[0]["date"] is None  # "Date: N/A"
    # the extractor's Markdown page is no result list
    final = steps[1]["final_observation"]
    assert final["text"].startswith("# File Format") and final["ui_tree"] is None
    assert steps[0]["timestamp"].isoformat() == "2025-05-02T14:00:03+00:00"


def test_parse_results_joins_wrapped_lines_and_ignores_prose():
    text = "[1] https://a.example/x\nTitle: A\nSnippet: first line\ncontinued\nDate: Jan 1, 2024\n\n[2] https://b.example/\nTitle: B\nSnippet: s\nDate: N/A"
    assert parse_results(text) == [
        {"index": 1, "url": "https://a.example/x", "title": "A", "snippet": "first line continued", "date": "Jan 1, 2024"},
        {"index": 2, "url": "https://b.example/", "title": "B", "snippet": "s", "date": None}]
    assert parse_results("see [1] above\nno results here") is None
    assert parse_results("") is None


def test_domain_is_search_when_most_calls_are_search_tools():
    assert episode_domain(["web_search", "web_extractor", "dict_memory"], "mcp") == "search"
    assert episode_domain(["get_weather", "read_file", "web_search"], "mcp") == "mcp"
    assert episode_domain([], "terminal") == "terminal"
