"""Content-based detection: every bundled sample, mixed into one input folder, is claimed by the format its
own pipeline reads it with, when `ingest-all` tries every registered format."""

import shutil

from ingest import registry
from pipelines.infra import definition
from pipelines.infra.plan import find_units
from tests.conftest import SAMPLES

# single-file samples whose formats are sniffed from content alone: renamed so the name tells nothing
BY_CONTENT = {
    "swe/sweagent-v1/6e44b9__sweagenttestrepo-1c2844.traj": "sweagent",
    "swe/sweagent-legacy/pydicom__pydicom-1458.traj": "sweagent",
    "swe/sweagent-history-only/function_calling_simple.traj": "sweagent",
    "swe/openhands-events/basic_gui_mode.json": "openhands",
    "swe/openhands-events/basic_interactions.json": "openhands",
    "swe/openhands-events/wrong_initial_state.json": "openhands",
    "mcp/jsonrpc-session.jsonl": "mcp_jsonrpc",
    "mcp/sdk-capture.jsonl": "mcp_jsonrpc",
    "search/search-session.jsonl": "mcp_jsonrpc",
    "agentworld/bench/search_test.jsonl": "agentworldbench",
    "agentworld/bench/terminal_test.jsonl": "agentworldbench",
    "agentworld/released/android_test.jsonl": "agentworldbench",
    "atif/hello-world/trajectory.json": "atif",
}


def _claims(root, formats) -> dict[str, str]:
    units, _ = find_units([str(root)], formats)
    return {u.uri.split("/", 1)[1]: u.format for u in units}


def test_ingest_all_lists_every_registered_format():
    formats = definition.load("ingest-all").formats
    assert formats == list(registry.names()) and len(set(formats)) == len(formats)
    assert formats[:2] == ["atif", "sweagent"]  # the most specific signatures rank first
    assert definition.load("ingest-all").dataset == "all"


def test_renamed_agent_samples_in_one_folder_are_detected_from_content(tmp_path):
    mixed = tmp_path / "mixed"
    mixed.mkdir()
    expected = {}
    for i, (rel, fmt) in enumerate(sorted(BY_CONTENT.items())):
        name = f"sample_{i:02d}.json"  # one extension for all: JSON, JSONL, .traj alike
        shutil.copy(SAMPLES / rel, mixed / name)
        expected[name] = fmt
    assert _claims(mixed, definition.load("ingest-all").formats) == expected


def test_every_bundled_sample_mixed_in_one_folder_goes_to_its_own_pipelines_format(tmp_path):
    """Each pipeline's own reading of its samples is the reference; all samples of all pipelines are then put
    side by side in one input folder (each keeps its own sub-folder, since some formats are folder layouts)."""
    mixed = tmp_path / "mixed"
    mixed.mkdir()
    expected: dict[str, str] = {}
    for name in definition.names():
        defn = definition.load(name)
        if name == "ingest-all":
            continue
        for inp in defn.default_inputs():
            for rel_path, fmt in _claims(inp, defn.formats).items():
                expected[f"{SAMPLES.name}/{inp.split(SAMPLES.name + '/', 1)[1]}/{rel_path}"] = fmt
    expected.update({f"{SAMPLES.name}/{rel}": fmt for rel, fmt in BY_CONTENT.items()})  # AgentWorldBench has no pipeline of its own
    shutil.copytree(SAMPLES, mixed / SAMPLES.name)
    got = _claims(mixed, definition.load("ingest-all").formats)
    got = {f"{SAMPLES.name}/{k}" if not k.startswith(SAMPLES.name) else k: v for k, v in got.items()}
    assert {k: got.get(k) for k in expected} == expected


def test_ingest_all_runs_on_the_bundled_samples(run, query):
    result = run("ingest-all")
    assert result.status == "success"
    formats = {r["source_format"] for r in query("SELECT DISTINCT source_format FROM episodes")}
    assert set(BY_CONTENT.values()) <= formats
    domains = {r["domain"] for r in query("SELECT DISTINCT domain FROM episodes")}
    assert {"swe", "mcp", "search", "terminal"} <= domains


def test_units_are_the_same_when_the_planners_heads_do_not_all_fit(monkeypatch):
    # past HEADS_KEPT the oldest heads are read again: what each format claims must not change
    from pipelines.infra import plan

    formats = definition.load("ingest-all").formats
    expected = plan.find_units([str(SAMPLES)], formats)
    monkeypatch.setattr(plan, "HEADS_KEPT", 2)
    assert plan.find_units([str(SAMPLES)], formats) == expected
